// Apps: the running apps (from MacSystem, apps with a Dock icon first, and
// the state of those that quit pruned), the focused app, an app's name for
// messages, its menu bar, and the installed bundles and launching one.
//
// Apple: kAXFocusedApplicationAttribute on the system-wide element,
// AXUIElementGetPid and kAXMenuBarAttribute (HIServices' AXUIElement.h,
// AXAttributeConstants.h); NSWorkspace.runningApplications and
// NSRunningApplication (activationPolicy, bundleURL) behind MacSystem.

#include <algorithm>

#include "mac_internal.h"

namespace axsnap {

Error MacBackend::ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) {
  if (Error err = Trusted()) return err;
  std::vector<RunningApp> running;
  if (Error err = system_->RunningApps(running)) return err;
  running_.clear();
  // State of processes that are gone goes too: a pid can be reused by another app.
  std::set<int64_t> alive;
  for (const RunningApp& r : running) alive.insert(r.pid);
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
    std::vector<RunningApp> running;
    if (!system_->RunningApps(running))
      for (const RunningApp& r : running) running_[r.pid] = r;
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

Error MacBackend::Launch(const LaunchRequest& request, int64_t& pid, Clock::time_point deadline) {
  return system_->OpenApplication(request, pid, deadline);
}

}  // namespace axsnap
