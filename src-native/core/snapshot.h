// One snapshot, end to end on the worker thread: find the app, choose the
// window, walk it within the deadline, capture and encode its pixels within
// the size budget. Platform-neutral: everything goes through Backend.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backend.h"
#include "png_budget.h"
#include "types.h"

namespace axsnap {

struct AppQuery {
  std::string name;  // matched case-insensitively against name and bundle id
  int64_t pid = 0;   // used when > 0
};

struct SnapshotRequest {
  AppQuery app;
  int64_t maxNodes = 2400;
  int maxDepth = 64;
  Clock::time_point deadline;
  bool screenshot = true;
  bool secureNames = true;  // Backend::SetSecureNameHeuristic for this snapshot
  // Keep the captured pixels unencoded (SnapshotResult::pixels) for a later
  // encode with marks (marks.h), instead of encoding them here.
  bool keepPixels = false;
  BudgetOptions budget;
  // A window named by the caller; it bypasses window choice (By::kNone = choose).
  WindowSelector window;
};

// A capture kept unencoded: RGBA, row stride width*4, with its contract
// before any downscale (pixels per window point, window origin on screen).
struct CapturedPixels {
  std::vector<uint8_t> rgba;
  int width = 0, height = 0;
  double pixelsPerPoint = 1;
  double originX = 0, originY = 0;
  double captureMs = 0;
};

struct SnapshotResult {
  RawSnapshot raw;
  std::optional<Screenshot> screenshot;
  std::vector<ElementId> ids;      // every handle the result holds
  std::vector<ElementId> dropped;  // handles the walk saw and did not keep
  std::string windowStep;          // which step of the window-choice chain chose the window
  std::string route;               // how the window's pixels and synthetic input travel (Backend::Route)
  // With keepPixels: the capture, unencoded, instead of screenshot.
  std::optional<CapturedPixels> pixels;
};

// The app a query names. A pid selects exactly one; a name (trimmed, never
// blank) matches exactly (name or bundle id) or else as a unique prefix; a
// name that matches apps of different pids fails with kAmbiguousApp listing
// "name (pid N)" for each. An app that did not answer the listing fails with
// kAppUnresponsive, never kAppNotFound.
Error FindApp(Backend& backend, const AppQuery& query, Clock::time_point deadline, AppInfo& out);
// Window choice with recovery: the chain of window_choice.h; when it finds no
// usable window, or (with `needCapture`) the window has nothing on screen to
// capture, a backend that recovers runs its steps in order, settles, and the
// choice runs once more. Notes say what recovery did; `seen` gets every
// window handle looked at (the caller releases the ones it does not keep).
Error ChooseAppWindow(Backend& backend, const AppInfo& app, Clock::time_point deadline, bool needCapture,
                      WindowInfo& out, std::string& step, std::vector<std::string>& notes,
                      std::vector<ElementId>& seen);
Error TakeSnapshot(Backend& backend, const SnapshotRequest& request, SnapshotResult& out);
// The app's windows, dialogs, open menus and popups in the backend's order
// (Linux: the app's top-level children), with pid, kind and id filled in.
// Every window holds a handle the caller releases.
Error ListAppWindows(Backend& backend, const AppInfo& app, Clock::time_point deadline, std::vector<WindowInfo>& out);

}  // namespace axsnap
