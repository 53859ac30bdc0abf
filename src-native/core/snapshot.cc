#include "snapshot.h"

#include <algorithm>
#include <cctype>

#include "walk.h"
#include "window_choice.h"

namespace axsnap {

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

Error FindApp(Backend& backend, const AppQuery& query, Clock::time_point deadline, AppInfo& out) {
  std::vector<AppInfo> apps;
  if (Error err = backend.ListApps(apps, deadline)) return err;
  if (query.pid > 0) {
    for (const AppInfo& a : apps)
      if (a.pid == query.pid) {
        out = a;
        return {};
      }
    return {ErrorCode::kAppNotFound, "no accessible app has pid " + std::to_string(query.pid)};
  }
  const std::string want = Lower(query.name);
  // Exact name or bundle id first, then a unique prefix, so "gtk3" finds "gtk3-widget-factory".
  for (const AppInfo& a : apps)
    if (Lower(a.name) == want || Lower(a.bundleId) == want) {
      out = a;
      return {};
    }
  const AppInfo* match = nullptr;
  int matches = 0;
  for (const AppInfo& a : apps)
    if (Lower(a.name).rfind(want, 0) == 0) {
      match = &a;
      matches++;
    }
  if (matches == 1) {
    out = *match;
    return {};
  }
  std::string names;
  for (const AppInfo& a : apps) names += (names.empty() ? "" : ", ") + a.name;
  return {ErrorCode::kAppNotFound,
          "no accessible app named \"" + query.name + "\"" + (matches > 1 ? " (several start with it)" : "") +
              "; running: " + (names.empty() ? "none" : names)};
}

Error ChooseAppWindow(Backend& backend, const AppInfo& app, Clock::time_point deadline, WindowInfo& out,
                      std::string& step) {
  WindowCandidates c;
  AppInfo focused;
  bool haveFocused = false;
  if (Error err = backend.FocusedApp(focused, haveFocused, deadline)) return err;
  if (Error err = backend.Windows(app, c.appWindows, deadline)) return err;
  for (WindowInfo& w : c.appWindows) w.pid = app.pid;
  for (const WindowInfo& w : c.appWindows)
    if (w.active) c.appFocused = w;
  if (haveFocused && focused.element == app.element) {
    c.targetIsFocusedApp = true;
    c.systemFocused = c.appFocused;
    c.focusedAppFocused = c.appFocused;
    c.focusedAppWindows = c.appWindows;
  }
  WindowChoice choice;
  if (!ChooseWindow(c, choice)) {
    return {ErrorCode::kWindowNotFound, app.name + " has no usable window (" + std::to_string(c.appWindows.size()) +
                                            " windows, none on screen and not minimized)"};
  }
  out = choice.window;
  step = choice.step;
  return {};
}

Error TakeSnapshot(Backend& backend, const SnapshotRequest& request, SnapshotResult& out) {
  const Clock::time_point t0 = Clock::now();
  AppInfo app;
  if (Error err = FindApp(backend, request.app, request.deadline, app)) return err;
  WindowInfo window;
  if (Error err = ChooseAppWindow(backend, app, request.deadline, window, out.windowStep)) return err;

  WalkOptions walk;
  walk.maxNodes = request.maxNodes;
  walk.maxDepth = request.maxDepth;
  walk.deadline = request.deadline;
  WalkResult result;
  if (Error err = Walk(backend, window.element, window.hasFrame ? &window.frame : nullptr, walk, result)) return err;

  RawSnapshot& raw = out.raw;
  raw.platform = backend.Platform();
  raw.app = app;
  raw.window = window;
  raw.scale = backend.Scale(window);
  raw.root = std::move(result.root);
  raw.ended = result.ended;
  raw.nodesObserved = result.nodesObserved;
  raw.notes = std::move(result.notes);
  raw.elapsedMs = MsSince(t0);
  out.ids = std::move(result.ids);
  out.dropped = std::move(result.dropped);
  // The window element is the root; its frame may be fresher than the window list's.
  if (raw.root.attrs.frame && !window.hasFrame) {
    raw.window.frame = *raw.root.attrs.frame;
    raw.window.hasFrame = true;
  }

  if (request.screenshot) {
    const Clock::time_point c0 = Clock::now();
    std::vector<uint8_t> rgba;
    int width = 0, height = 0;
    Rect captured;
    Error err = backend.Capture(raw.window, rgba, width, height, captured);
    if (err) {
      raw.notes.push_back("no screenshot: " + err.message);
    } else {
      Screenshot shot;
      const double captureMs = MsSince(c0);
      err = EncodeWithinBudget(rgba.data(), width, height, raw.scale, request.budget, shot);
      if (err) {
        raw.notes.push_back("no screenshot: " + err.message);
      } else {
        shot.captureMs = captureMs;
        shot.originX = captured.x;
        shot.originY = captured.y;
        out.screenshot = std::move(shot);
      }
    }
  }
  return {};
}

}  // namespace axsnap
