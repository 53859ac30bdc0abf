#include "snapshot.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "walk.h"
#include "window_choice.h"

namespace axsnap {

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

namespace {

std::string Trim(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t a = s.find_first_not_of(ws);
  if (a == std::string::npos) return {};
  return s.substr(a, s.find_last_not_of(ws) - a + 1);
}

std::string Describe(const AppInfo& a) {
  return (a.name.empty() ? std::string("(no name)") : a.name) + " (pid " + std::to_string(a.pid) + ")";
}

Error Unresponsive(const AppInfo& a) {
  return {ErrorCode::kAppUnresponsive, Describe(a) +
                                           " did not answer when asked for its name; it may be busy (a "
                                           "modal dialog, a long computation) or stopped"};
}

// One app of `matches` when they all share a pid; otherwise kAmbiguousApp.
Error PickOne(const std::vector<const AppInfo*>& matches, const std::string& query, AppInfo& out) {
  for (const AppInfo* m : matches)
    if (m->pid != matches.front()->pid) {
      std::string list;
      for (const AppInfo* a : matches) list += (list.empty() ? "" : ", ") + Describe(*a);
      return {ErrorCode::kAmbiguousApp,
              "\"" + query + "\" matches several running apps: " + list + "; pass the pid of the one you mean"};
    }
  out = *matches.front();
  if (!out.responsive) return Unresponsive(out);
  return {};
}

}  // namespace

Error FindApp(Backend& backend, const AppQuery& query, Clock::time_point deadline, AppInfo& out) {
  const std::string name = Trim(query.name);
  if (query.pid <= 0 && name.empty()) return {ErrorCode::kInvalidArgument, "no app name or pid was given"};
  std::vector<AppInfo> apps;
  if (Error err = backend.ListApps(apps, deadline)) return err;
  if (query.pid > 0) {
    for (const AppInfo& a : apps)
      if (a.pid == query.pid) {
        out = a;
        if (!out.responsive) return Unresponsive(out);
        return {};
      }
    if (Error missing = backend.AccessibilityMissing())
      return {missing.code,
              missing.message + "; no app with no accessibility tree has pid " + std::to_string(query.pid) + " either"};
    return {ErrorCode::kAppNotFound, "no accessible app has pid " + std::to_string(query.pid)};
  }
  const std::string want = Lower(name);
  // Exact name or bundle id first, then a unique prefix, so "gtk3" finds "gtk3-widget-factory".
  // An app that did not answer is matched by the name it gave before, if any; a blank name matches nothing.
  std::vector<const AppInfo*> exact, prefix;
  for (const AppInfo& a : apps) {
    const std::string n = Lower(a.name), b = Lower(a.bundleId);
    if ((!n.empty() && n == want) || (!b.empty() && b == want))
      exact.push_back(&a);
    else if (!n.empty() && n.rfind(want, 0) == 0)
      prefix.push_back(&a);
  }
  if (!exact.empty()) return PickOne(exact, name, out);
  if (!prefix.empty()) return PickOne(prefix, name, out);
  std::string names, silent;
  for (const AppInfo& a : apps) {
    if (!a.responsive && a.name.empty())
      silent += (silent.empty() ? "pid " : ", pid ") + std::to_string(a.pid);
    else
      names += (names.empty() ? "" : ", ") + a.name;
  }
  // An app that does not answer cannot say its name: it may be the one asked for.
  if (!silent.empty())
    return {ErrorCode::kAppUnresponsive, "no answering app is named \"" + name + "\", and some apps did not answer (" +
                                             silent +
                                             "): it may be one of them; running: " + (names.empty() ? "none" : names)};
  if (Error missing = backend.AccessibilityMissing())
    return {missing.code, missing.message + "; no app with no accessibility tree is named \"" + name +
                              "\" either (running: " + (names.empty() ? "none" : names) + ")"};
  return {ErrorCode::kAppNotFound,
          "no accessible app named \"" + name + "\"; running: " + (names.empty() ? "none" : names)};
}

Error ListAppWindows(Backend& backend, const AppInfo& app, Clock::time_point deadline, std::vector<WindowInfo>& out) {
  if (Error err = backend.ListedWindows(app, out, deadline)) return err;
  for (WindowInfo& w : out) w.pid = app.pid;
  NormalizeWindows(out);
  return {};
}

Error Backend::GatherWindows(const AppInfo& app, WindowCandidates& c, Clock::time_point deadline) {
  AppInfo focused;
  bool haveFocused = false;
  if (Error err = FocusedApp(focused, haveFocused, deadline)) return err;
  if (Error err = Windows(app, c.appWindows, deadline)) return err;
  for (WindowInfo& w : c.appWindows) w.pid = app.pid;
  for (const WindowInfo& w : c.appWindows)
    if (w.active) c.appFocused = w;
  if (haveFocused && focused.element == app.element) {
    c.targetIsFocusedApp = true;
    c.systemFocused = c.appFocused;
    c.focusedAppFocused = c.appFocused;
    c.focusedAppWindows = c.appWindows;
  }
  return {};
}

namespace {

// One pass of window choice. `problem` is empty when a usable (and, when
// asked, capturable) window was chosen; `any` is a window recovery can work on.
Error ChooseOnce(Backend& backend, const AppInfo& app, Clock::time_point deadline, bool needCapture,
                 WindowChoice& choice, std::string& problem, std::optional<WindowInfo>& any,
                 std::vector<ElementId>& seen) {
  WindowCandidates c;
  if (Error err = backend.GatherWindows(app, c, deadline)) return err;
  NormalizeWindows(c.appWindows);
  NormalizeWindows(c.focusedAppWindows);
  for (auto* w : {&c.systemFocused, &c.focusedAppFocused, &c.appFocused})
    if (*w) {
      std::vector<WindowInfo> one{**w};
      NormalizeWindows(one);
      *w = one.front();
    }
  for (const WindowInfo& w : c.appWindows) seen.push_back(w.element);
  for (const auto* w : {&c.systemFocused, &c.focusedAppFocused, &c.appFocused})
    if (*w) seen.push_back((*w)->element);
  problem.clear();
  if (!c.appWindows.empty()) any = c.appWindows.front();
  if (!ChooseWindow(c, choice)) {
    problem = std::to_string(c.appWindows.size()) + " windows, none usable (on screen and not minimized)";
    return {};
  }
  any = choice.window;
  if (!needCapture) return {};
  bool capturable = false;
  std::string why;
  if (Error err = backend.CaptureTarget(choice.window, capturable, why)) return err;
  if (!capturable) problem = "the window \"" + choice.window.title + "\" cannot be captured: " + why;
  return {};
}

constexpr RecoveryStep kRecoveryOrder[] = {RecoveryStep::kUnhide, RecoveryStep::kActivate,
                                           RecoveryStep::kOpen,   RecoveryStep::kUnminimize,
                                           RecoveryStep::kRaise,  RecoveryStep::kMainAndFocused};
constexpr std::chrono::milliseconds kSettle{700};

}  // namespace

Error ChooseAppWindow(Backend& backend, const AppInfo& app, Clock::time_point deadline, bool needCapture,
                      WindowInfo& out, std::string& step, std::vector<std::string>& notes,
                      std::vector<ElementId>& seen) {
  WindowChoice choice;
  std::string problem;
  std::optional<WindowInfo> any;
  if (Error err = ChooseOnce(backend, app, deadline, needCapture, choice, problem, any, seen)) return err;
  if (!problem.empty() && backend.Recovers()) {
    // Recovery runs every step in order, settles once and chooses once more:
    // apps differ in which step brings their window back.
    std::string done;
    for (RecoveryStep s : kRecoveryOrder) {
      if (Clock::now() >= deadline) break;
      Error err = backend.Recover(s, app, any, deadline);
      if (err && err.code != ErrorCode::kActionNotSupported)
        notes.push_back(std::string("recovery step ") + RecoveryStepName(s) + " failed: " + err.message);
      else if (!err)
        done += (done.empty() ? "" : ", ") + std::string(RecoveryStepName(s));
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    backend.Settle(std::max(std::chrono::milliseconds(0), std::min(kSettle, left / 2)));
    const std::string before = problem;
    if (Error err = ChooseOnce(backend, app, deadline, needCapture, choice, problem, any, seen)) return err;
    const std::string steps = done.empty() ? std::string("no step applied") : done;
    if (problem.empty()) {
      notes.push_back("the window was recovered (" + done + ") after: " + before);
    } else {
      // Asked after the steps and the new listing: what is still out of sight, and what was tried.
      const std::string elsewhere = backend.NoWindowHere(app);
      if (!elsewhere.empty())
        return {ErrorCode::kWindowNotFound,
                app.name + " has no usable window here: " + elsewhere + " (after recovery: " + steps + ")"};
      problem += " (after recovery: " + steps + ")";
    }
  }
  if (!problem.empty()) return {ErrorCode::kWindowNotFound, app.name + " has no usable window: " + problem};
  out = choice.window;
  step = choice.step;
  return {};
}

namespace {

// The menu bar (macOS) beside the window: its items, and the whole of any
// open menu (an item that is selected). Closed menus are not read: every
// menu's items exist in the tree whether open or not, hundreds of them.
void WalkMenuBar(Backend& backend, const AppInfo& app, Clock::time_point deadline, SnapshotResult& out) {
  ElementId bar = 0;
  if (Error err = backend.MenuBar(app, bar, deadline)) {
    out.raw.notes.push_back("the menu bar could not be read: " + err.message);
    return;
  }
  if (bar == 0) return;
  WalkOptions top;
  top.maxDepth = 1;
  top.maxNodes = 200;
  top.probeBeyondDepth = false;
  top.deadline = deadline;
  WalkResult items;
  if (Walk(backend, bar, nullptr, top, items)) {
    out.dropped.push_back(bar);
    return;
  }
  for (RawNode& item : items.root.children) {
    if (!item.attrs.states.selected.value_or(false)) continue;
    WalkOptions open;
    open.maxDepth = 12;
    open.maxNodes = 800;
    open.deadline = deadline;
    WalkResult menu;
    if (Error err = Walk(backend, item.id, nullptr, open, menu)) {
      out.raw.notes.push_back("an open menu could not be read: " + err.message);
      continue;
    }
    if (menu.ended != WalkEnd::kComplete)
      out.raw.notes.push_back(std::string("the open menu was cut (") + WalkEndName(menu.ended) + ")");
    item.children = std::move(menu.root.children);
    // The item itself is already held (it is the first id of its own walk).
    out.ids.insert(out.ids.end(), menu.ids.begin() + 1, menu.ids.end());
    out.dropped.insert(out.dropped.end(), menu.dropped.begin(), menu.dropped.end());
  }
  out.raw.menuBar = std::move(items.root);
  out.ids.insert(out.ids.end(), items.ids.begin(), items.ids.end());
  out.dropped.insert(out.dropped.end(), items.dropped.begin(), items.dropped.end());
}

}  // namespace

Error TakeSnapshot(Backend& backend, const SnapshotRequest& request, SnapshotResult& out) {
  const Clock::time_point t0 = Clock::now();
  backend.SetSecureNameHeuristic(request.secureNames);
  struct Restore {
    Backend& b;
    ~Restore() { b.SetSecureNameHeuristic(true); }
  } restore{backend};
  backend.ResetReadStats();
  SnapshotTimings timings;
  AppInfo app;
  if (Error err = FindApp(backend, request.app, request.deadline, app)) return err;
  timings.appMs = MsSince(t0);
  backend.ExpectWalk(app);
  WindowInfo window;
  std::vector<std::string> notes;
  std::vector<ElementId> seen;
  Error chosen;
  if (request.window.by != WindowSelector::By::kNone) {
    // A window named by the caller: no choice, no recovery.
    std::vector<WindowInfo> windows;
    chosen = ListAppWindows(backend, app, request.deadline, windows);
    for (const WindowInfo& w : windows) seen.push_back(w.element);
    if (!chosen) chosen = SelectWindow(windows, request.window, window);
    if (chosen.code == ErrorCode::kWindowNotFound && request.window.by == WindowSelector::By::kId) {
      const int earlier = backend.WindowByEarlierId(app, windows, request.window.text, request.deadline);
      if (earlier >= 0 && static_cast<size_t>(earlier) < windows.size()) {
        window = windows[static_cast<size_t>(earlier)];
        chosen = {};
      }
    }
    if (chosen.code == ErrorCode::kWindowNotFound) chosen.message = app.name + ": " + chosen.message;
    out.windowStep = "requested";
    if (!chosen && (window.minimized || !window.visible))
      notes.push_back("the requested window is not on screen (" +
                      std::string(window.minimized ? "minimized" : "hidden") + ")");
  } else {
    chosen = ChooseAppWindow(backend, app, request.deadline, request.screenshot, window, out.windowStep, notes, seen);
  }
  // The windows looked at and not chosen hold handles nobody will release.
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  for (ElementId id : seen)
    if (id != 0 && (chosen || id != window.element)) out.dropped.push_back(id);
  if (chosen) return chosen;
  bool contentPending = false;
  backend.PrepareWalk(app, window, request.deadline, notes, contentPending);
  out.route = backend.Route(window, request.deadline);

  const Clock::time_point w0 = Clock::now();
  timings.windowMs = std::chrono::duration<double, std::milli>(w0 - t0).count() - timings.appMs;
  WalkOptions walk;
  walk.maxNodes = request.maxNodes;
  walk.maxDepth = request.maxDepth;
  walk.deadline = request.deadline;
  WalkResult result;
  if (Error err = Walk(backend, window.element, window.hasFrame ? &window.frame : nullptr, walk, result)) {
    // Nothing of this snapshot is kept: every handle it took goes back.
    out.dropped.push_back(window.element);
    out.dropped.insert(out.dropped.end(), result.dropped.begin(), result.dropped.end());
    if (err.code == ErrorCode::kElementGone) {
      // The window went away under the walk: the app exited or closed it. Not a stale reference:
      // the caller named an app, not an element.
      std::vector<AppInfo> apps;
      bool alive = false;
      if (!backend.ListApps(apps, request.deadline))
        for (const AppInfo& a : apps) alive = alive || a.pid == app.pid;
      if (!alive)
        return {ErrorCode::kAppNotFound,
                app.name + " (pid " + std::to_string(app.pid) + ") exited during the snapshot: " + err.message};
      return {ErrorCode::kWindowNotFound,
              "the window \"" + window.title + "\" of " + app.name + " closed during the snapshot: " + err.message};
    }
    return err;
  }

  RawSnapshot& raw = out.raw;
  raw.platform = backend.Platform();
  raw.app = app;
  raw.window = window;
  raw.scale = backend.Scale(window);
  raw.root = std::move(result.root);
  raw.ended = result.ended;
  // A cut the walk saw itself says more; otherwise the tree is known to be still arriving.
  if (contentPending && raw.ended == WalkEnd::kComplete) raw.ended = WalkEnd::kContentPending;
  raw.nodesObserved = result.nodesObserved;
  raw.notes = std::move(notes);
  raw.notes.insert(raw.notes.end(), result.notes.begin(), result.notes.end());
  timings.walkMs = MsSince(w0);
  out.ids = std::move(result.ids);
  // Appended: the unchosen windows are in it already.
  out.dropped.insert(out.dropped.end(), result.dropped.begin(), result.dropped.end());
  const Clock::time_point m0 = Clock::now();
  WalkMenuBar(backend, app, request.deadline, out);
  timings.menuBarMs = MsSince(m0);
  raw.elapsedMs = MsSince(t0);
  raw.timings = timings;
  raw.reads = backend.TakeReadStats();

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
    Error err = backend.Capture(raw.window, rgba, width, height, captured, request.deadline);
    if (err) {
      raw.notes.push_back("no screenshot: " + err.message);
    } else if (request.keepPixels) {
      CapturedPixels kept;
      kept.captureMs = MsSince(c0);
      kept.rgba = std::move(rgba);
      kept.width = width;
      kept.height = height;
      kept.pixelsPerPoint = raw.scale > 0 && std::isfinite(raw.scale) ? raw.scale : 1;
      kept.originX = captured.x;
      kept.originY = captured.y;
      out.pixels = std::move(kept);
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
