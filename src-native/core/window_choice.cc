#include "window_choice.h"

#include <algorithm>
#include <cctype>

namespace axsnap {

std::string WindowKindOf(const WindowInfo& w) {
  if (!w.kind.empty()) return w.kind;
  const std::string& r = w.role;
  if (r == "dialog" || r == "alert" || r == "file chooser" || r == "color chooser" || r == "font chooser" ||
      r == "AXDialog")
    return "dialog";
  if (r == "AXSheet") return "sheet";
  if (r == "menu" || r == "popup menu" || r == "AXMenu") return "menu";
  // AT-SPI "window": a toplevel without decorations (GTK's popups, Chromium's select lists).
  if (r == "window" || r == "AXPopover") return "popup";
  return "window";  // "frame", "AXWindow", unknown
}

void NormalizeWindows(std::vector<WindowInfo>& windows) {
  for (WindowInfo& w : windows) {
    w.kind = WindowKindOf(w);
    if (w.id.empty()) w.id = "e" + std::to_string(w.element);
  }
}

bool IsUsableWindow(const WindowInfo& w) {
  if (w.minimized || !w.visible) return false;
  if (w.role.empty()) return true;
  return w.role == "AXWindow" || w.role == "frame" || w.role == "window" || w.role == "dialog" || w.role == "alert" ||
         w.role == "file chooser" || w.role == "AXSheet" || w.role == "AXDialog" || w.role == "AXPopover" ||
         w.role == "AXMenu" || w.role == "menu";
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

bool OnScreen(const WindowInfo& w) { return IsUsableWindow(w) && (!w.hasFrame || (w.frame.w > 0 && w.frame.h > 0)); }

// The surface the user faces: the newest open menu or popup, else the newest
// modal dialog or sheet.
bool Facing(const std::vector<WindowInfo>& windows, WindowChoice& out) {
  for (auto it = windows.rbegin(); it != windows.rend(); ++it) {
    const std::string kind = WindowKindOf(*it);
    if ((kind == "menu" || kind == "popup") && !it->inParent && OnScreen(*it)) {
      out.window = *it;
      out.step = "open-" + kind;
      return true;
    }
  }
  for (auto it = windows.rbegin(); it != windows.rend(); ++it) {
    const std::string kind = WindowKindOf(*it);
    if ((kind == "sheet" || (kind == "dialog" && it->modal)) && OnScreen(*it)) {
      out.window = *it;
      out.step = kind == "sheet" ? "sheet" : "modal-dialog";
      return true;
    }
  }
  return false;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string Describe(const std::vector<const WindowInfo*>& list, const std::vector<WindowInfo>& all) {
  std::string s;
  for (const WindowInfo* w : list) {
    const size_t index = static_cast<size_t>(w - all.data());
    s += (s.empty() ? "" : "; ") + std::string("index ") + std::to_string(index) + " \"" + w->title + "\" (" +
         WindowKindOf(*w) + ", id " + w->id + ")";
  }
  return s;
}

Error NotFound(const std::string& what, const std::vector<WindowInfo>& all) {
  std::vector<const WindowInfo*> list;
  for (const WindowInfo& w : all) list.push_back(&w);
  return {ErrorCode::kWindowNotFound,
          "no window " + what + "; the app's windows: " + (list.empty() ? std::string("none") : Describe(list, all))};
}

}  // namespace

bool ChooseWindow(const WindowCandidates& c, WindowChoice& out) {
  if (Facing(c.appWindows, out)) return true;
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

Error SelectWindow(const std::vector<WindowInfo>& windows, const WindowSelector& selector, WindowInfo& out) {
  switch (selector.by) {
    case WindowSelector::By::kNone: return {ErrorCode::kInvalidArgument, "no window was named"};
    case WindowSelector::By::kIndex:
      if (selector.index < 0 || static_cast<size_t>(selector.index) >= windows.size())
        return NotFound("at index " + std::to_string(selector.index), windows);
      out = windows[static_cast<size_t>(selector.index)];
      return {};
    case WindowSelector::By::kId:
      for (const WindowInfo& w : windows)
        if (w.id == selector.text) {
          out = w;
          return {};
        }
      return NotFound("with id \"" + selector.text + "\" (it may have closed)", windows);
    case WindowSelector::By::kTitle: break;
  }
  const std::string want = Lower(selector.text);
  std::vector<const WindowInfo*> exact, folded, within;
  for (const WindowInfo& w : windows) {
    if (w.title == selector.text) exact.push_back(&w);
    const std::string t = Lower(w.title);
    if (t == want) folded.push_back(&w);
    if (!want.empty() && t.find(want) != std::string::npos) within.push_back(&w);
  }
  for (const auto* matches : {&exact, &folded, &within}) {
    if (matches->empty()) continue;
    if (matches->size() == 1) {
      out = *matches->front();
      return {};
    }
    return {ErrorCode::kAmbiguousWindow, "the title \"" + selector.text + "\" matches " +
                                             std::to_string(matches->size()) +
                                             " windows: " + Describe(*matches, windows) + "; pass its index or id"};
  }
  return NotFound("titled \"" + selector.text + "\"", windows);
}

}  // namespace axsnap
