// Apps: the running apps (the process table, each pid asked whether it is an
// app, apps with a Dock icon first; the state of processes that ended pruned), the focused app, an app's name for
// messages, its menu bar, and the installed bundles and launching one.
//
// Apple: kAXFocusedApplicationAttribute on the system-wide element,
// AXUIElementGetPid and kAXMenuBarAttribute (HIServices' AXUIElement.h,
// AXAttributeConstants.h); proc_listallpids and NSRunningApplication
// (runningApplicationWithProcessIdentifier:, activationPolicy, bundleURL)
// behind MacSystem.

#include <algorithm>

#include "mac_internal.h"

namespace axsnap {

namespace {

// A "no application" answer for a pid seen after the first listing is asked
// again for this long: a process is in the table before it checks in with
// Launch Services as an app (NSApplication's start), and one spawned by path
// would otherwise stay unseen.
constexpr auto kCheckInGrace = std::chrono::seconds(3);
// Every "no application" answer is asked again after this (a tool can turn
// itself into an app: TransformProcessType), so a full pass over the process
// table happens at most this often.
constexpr auto kNotAppRecheck = std::chrono::seconds(30);

// What the running-app list keeps: what NSWorkspace.runningApplications
// would list (an app Launch Services knows: a bundle, or a Dock or menu-bar
// app), not helper processes without either.
bool KeptAsApp(const RunningApp& r) { return !r.bundleId.empty() || r.regular || r.accessory; }

}  // namespace

Error MacBackend::RunningAppsNow(std::vector<RunningApp>& out, std::set<int64_t>* alive) {
  out.clear();
  std::vector<int64_t> pids;
  if (Error err = system_->ProcessIds(pids)) return err;
  const Clock::time_point now = Clock::now();
  const bool first = !listedOnce_;
  listedOnce_ = true;
  std::set<int64_t> present(pids.begin(), pids.end());
  // Answers about processes that are gone go: their pids may come back as anything.
  for (auto it = notApps_.begin(); it != notApps_.end();)
    it = present.count(it->first) ? std::next(it) : notApps_.erase(it);
  for (int64_t pid : pids) {
    if (pid <= 0) continue;
    auto known = notApps_.find(pid);
    if (known != notApps_.end() && now - known->second.firstSeen >= kCheckInGrace &&
        now - known->second.asked < kNotAppRecheck)
      continue;
    RunningApp r;
    if (system_->AppOfProcess(pid, r) && KeptAsApp(r)) {
      notApps_.erase(pid);
      r.pid = pid;
      out.push_back(std::move(r));
      continue;
    }
    // Processes of the first listing ran before this backend: past their check-in.
    const Clock::time_point seen = known != notApps_.end() ? known->second.firstSeen
                                   : first                 ? now - kCheckInGrace
                                                           : now;
    notApps_[pid] = NotApp{seen, now};
  }
  if (alive) *alive = std::move(present);
  return {};
}

Error MacBackend::ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) {
  if (Error err = Trusted()) return err;
  std::vector<RunningApp> running;
  std::set<int64_t> alive;
  if (Error err = RunningAppsNow(running, &alive)) return err;
  // A pid now held by another app than before was reused: its state is the old app's.
  for (const RunningApp& r : running) {
    auto before = running_.find(r.pid);
    if (before != running_.end() && (before->second.bundleId != r.bundleId || before->second.name != r.name))
      alive.erase(r.pid);
  }
  running_.clear();
  // State goes with the process, not with its place in the list (issue 35
  // M6): an app with no window, or one Launch Services stopped listing, keeps
  // its observer, pins and Chromium records (AXEnhancedUserInterface is
  // turned off at close only for the apps recorded here) while it runs.
  auto prune = [&](auto& map) {
    for (auto it = map.begin(); it != map.end();) it = alive.count(it->first) ? std::next(it) : map.erase(it);
  };
  // A watched app that quit: its observer goes (the pid may come back as another app).
  std::vector<int64_t> gone;
  for (const auto& w : watched_)
    if (!alive.count(w.first)) gone.push_back(w.first);
  for (int64_t pid : gone) Unwatch(pid);
  // Its windows' pins go too: their elements are dead.
  gone.clear();
  for (const auto& p : pins_)
    if (!alive.count(p.first)) gone.push_back(p.first);
  for (int64_t pid : gone) UnpinApp(pid);
  prune(apps_);
  prune(manualAccessibility_);
  prune(noBatch_);
  for (std::set<int64_t>* set : {&chromiumReady_, &enhanced_})
    for (auto it = set->begin(); it != set->end();) it = alive.count(*it) ? std::next(it) : set->erase(it);
  // Apps with a Dock icon first: a name shared with a helper process finds the app people mean.
  std::stable_sort(running.begin(), running.end(),
                   [](const RunningApp& a, const RunningApp& b) { return a.regular && !b.regular; });
  for (const RunningApp& r : running) {
    AppInfo info;
    info.name = r.name;
    info.bundleId = r.bundleId;
    info.pid = r.pid;
    info.element = elements_.Intern(AppElement(r.pid));
    out.push_back(info);
    running_[r.pid] = r;
  }
  return {};
}

Error MacBackend::FocusedApp(AppInfo& out, bool& found, Clock::time_point deadline) {
  found = false;
  CFAny app;
  if (Error err = CopyAttribute(SystemWide(), CFSTR("AXFocusedApplication"), app)) return err;
  if (!IsElement(app.get())) return {};
  pid_t pid = 0;
  if (AXUIElementGetPid(static_cast<AXUIElementRef>(app.get()), &pid) != kAXErrorSuccess) return {};
  out.pid = pid;
  out.element = elements_.Intern(AppElement(pid));
  auto it = running_.find(pid);
  if (it != running_.end()) {
    out.name = it->second.name;
    out.bundleId = it->second.bundleId;
  }
  found = true;
  return {};
}

std::string MacBackend::NameOf(int64_t pid) {
  if (running_.find(pid) == running_.end()) {
    RunningApp r;
    if (system_->AppOfProcess(pid, r)) {
      r.pid = pid;
      running_[pid] = r;
    }
  }
  auto it = running_.find(pid);
  return (it != running_.end() && !it->second.name.empty() ? it->second.name : std::string("another app")) + " (pid " +
         std::to_string(pid) + ")";
}

Error MacBackend::MenuBar(const AppInfo& app, ElementId& out, Clock::time_point deadline) {
  out = 0;
  AXUIElementRef appEl = AppElement(app.pid);
  if (!appEl) return {};
  SetTimeoutFor(appEl, deadline);
  CFAny bar;
  if (Error err = CopyAttribute(appEl, CFSTR("AXMenuBar"), bar)) return err;
  if (IsElement(bar.get())) out = elements_.Intern(static_cast<AXUIElementRef>(bar.get()));
  return {};
}

Error MacBackend::Launchable(std::vector<LaunchableApp>& out, Clock::time_point) { return system_->InstalledApps(out); }

Error MacBackend::LaunchableById(const std::string& id, std::vector<LaunchableApp>& out, Clock::time_point) {
  out.clear();
  LaunchableApp app;
  bool found = false;
  if (Error err = system_->AppForBundleId(id, app, found)) return err;
  if (found) out.push_back(std::move(app));
  return {};
}

Error MacBackend::Launch(const LaunchRequest& request, int64_t& pid, Clock::time_point deadline) {
  return system_->OpenApplication(request, pid, deadline);
}

}  // namespace axsnap
