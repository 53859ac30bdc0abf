// Window choice with fallbacks: which window of the target app a snapshot
// describes. The chain is the core's, the inputs are the backend's.
//   target app is the focused app: system-wide focused window → focused app's
//   focused window → its first usable window → the app's focused window → its
//   first usable window; otherwise only the last two.
// Usable: a window (not a menu or tooltip), not minimized, and on screen when
// the platform can tell.
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

// Returns false when no step yields a usable window (the caller then recovers
// or fails with kWindowNotFound).
bool ChooseWindow(const WindowCandidates& c, WindowChoice& out);

}  // namespace axsnap
