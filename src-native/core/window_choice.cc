#include "window_choice.h"

namespace axsnap {

bool IsUsableWindow(const WindowInfo& w) {
  if (w.minimized || !w.visible) return false;
  if (w.role.empty()) return true;
  return w.role == "AXWindow" || w.role == "frame" || w.role == "window" || w.role == "dialog" || w.role == "alert" ||
         w.role == "file chooser";
}

namespace {

bool FirstUsable(const std::vector<WindowInfo>& windows, WindowInfo& out) {
  for (const WindowInfo& w : windows) {
    if (IsUsableWindow(w)) {
      out = w;
      return true;
    }
  }
  return false;
}

bool Take(const std::optional<WindowInfo>& w, const char* step, WindowChoice& out) {
  if (!w || !IsUsableWindow(*w)) return false;
  out.window = *w;
  out.step = step;
  return true;
}

}  // namespace

bool ChooseWindow(const WindowCandidates& c, WindowChoice& out) {
  if (c.targetIsFocusedApp) {
    if (Take(c.systemFocused, "system-focused", out)) return true;
    if (Take(c.focusedAppFocused, "focused-app-focused", out)) return true;
    if (FirstUsable(c.focusedAppWindows, out.window)) {
      out.step = "focused-app-first-usable";
      return true;
    }
  }
  if (Take(c.appFocused, "app-focused", out)) return true;
  if (FirstUsable(c.appWindows, out.window)) {
    out.step = "app-first-usable";
    return true;
  }
  return false;
}

}  // namespace axsnap
