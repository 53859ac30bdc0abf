// Window choice with fallbacks: which window of the target app a snapshot
// describes. The chain is the core's, the inputs are the backend's.
//   target app is the focused app: system-wide focused window → focused app's
//   focused window → its first usable window → the app's focused window → its
//   first usable window; otherwise only the last two.
// Before the chain, the surface the user faces wins: an open menu or popup of
// the app (the last listed, i.e. the newest), else a modal dialog or sheet.
// Usable: a window, dialog, sheet, open menu or popup (not a tooltip), not
// minimized, and on screen when the platform can tell.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "types.h"

namespace axsnap {

struct WindowCandidates {
  bool targetIsFocusedApp = false;
  std::optional<WindowInfo> systemFocused;
  std::optional<WindowInfo> focusedAppFocused;
  std::vector<WindowInfo> focusedAppWindows;
  std::optional<WindowInfo> appFocused;
  std::vector<WindowInfo> appWindows;
};

struct WindowChoice {
  WindowInfo window;
  // Which step of the chain chose it, e.g. "app-first-usable"; for notes and tests.
  std::string step;
};

bool IsUsableWindow(const WindowInfo& w);

// "window" | "dialog" | "menu" | "popup" | "sheet": the backend's kind when it
// set one, else from the role (AT-SPI and AX roles both).
std::string WindowKindOf(const WindowInfo& w);
// Fills kind and id where a backend left them empty (id: "e" + the element
// handle, stable while a snapshot holds the window). Keeps the order.
void NormalizeWindows(std::vector<WindowInfo>& windows);

// A window named by the caller (snapshot's `window` option), over the
// listing of Backend::Windows after NormalizeWindows (listWindows' order).
struct WindowSelector {
  enum class By { kNone, kTitle, kIndex, kId } by = By::kNone;
  std::string text;   // title or id
  int64_t index = 0;  // position in the listing
};

// Title: exact, else case-insensitive exact, else a unique case-insensitive
// substring; several → kAmbiguousWindow listing them. Index / id: exact.
// Nothing → kWindowNotFound listing the app's windows.
Error SelectWindow(const std::vector<WindowInfo>& windows, const WindowSelector& selector, WindowInfo& out);

// Returns false when no step yields a usable window (the caller then recovers
// or fails with kWindowNotFound).
bool ChooseWindow(const WindowCandidates& c, WindowChoice& out);

}  // namespace axsnap
