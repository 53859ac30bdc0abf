// Change events: one AXObserver per watched app, its notifications
// registered on the app element (those cut short asked again later), its
// run loop source on the worker's run loop, dispatched while WaitEvents runs
// that loop, at both ends of every job and every 50 ms of a walk; what
// arrives is counted (windows and menus apart); a web app's web area is
// sampled (a bounded walk below it), since Chromium posts nothing when
// content is added.
//
// Apple: HIServices' AXUIElement.h (AXObserverCreate, AXObserverAddNotification,
// AXObserverRemoveNotification, AXObserverGetRunLoopSource),
// AXNotificationConstants.h; CFRunLoop.h (CFRunLoopRunInMode,
// CFRunLoopAddSource, kCFRunLoopRunHandledSource).

#include <algorithm>
#include <thread>

#include "mac_internal.h"

namespace axsnap {

namespace {

// A pass that drains what is pending handles at most this many notifications.
constexpr int kDrainMax = 4096;

// What Watch registers on the application element. Notifications posted by
// any element of the app reach an observer registered on the app element.
// Apps that do not send one refuse it (kAXErrorNotificationUnsupported);
// that is fine, the others still count.
constexpr const char* kNotifications[] = {
    "AXCreated",
    "AXUIElementDestroyed",
    "AXValueChanged",
    "AXTitleChanged",
    "AXFocusedUIElementChanged",
    "AXFocusedWindowChanged",
    "AXMainWindowChanged",
    "AXWindowCreated",
    "AXWindowMiniaturized",
    "AXWindowDeminiaturized",
    "AXMoved",
    "AXResized",
    "AXMenuOpened",
    "AXMenuClosed",
    "AXMenuItemSelected",
    "AXSheetCreated",
    "AXDrawerCreated",
    "AXApplicationActivated",
    "AXApplicationDeactivated",
    "AXApplicationHidden",
    "AXApplicationShown",
    "AXSelectedChildrenChanged",
    "AXSelectedRowsChanged",
    "AXSelectedTextChanged",
    "AXRowCountChanged",
    "AXRowExpanded",
    "AXRowCollapsed",
    "AXLayoutChanged",
    "AXElementBusyChanged",
    // "Sent at the end of the window move/resize" (AXNotificationConstants.h);
    // AXMoved / AXResized are about any element.
    "AXWindowMoved",
    "AXWindowResized",
    // What web content posts: Chromium posts these and nothing at all when
    // children are added (BrowserAccessibilityManagerMac); WebKit and Firefox
    // post AXLayoutComplete.
    "AXLoadComplete",
    "AXLayoutComplete",
    "AXLiveRegionChanged",
    "AXLiveRegionCreated",
    "AXExpandedChanged",
    "AXInvalidStatusChanged",
};

// Notifications about windows, menus, sheets, popovers and the app's
// visibility: what windowStamp counts (AXUIElementDestroyed too, when the
// element destroyed was known as one of these). AXLoadComplete is a page
// that replaced a window's whole content (a browser tab's title changes with
// it); a live region or an expanded row is not about a window.
bool IsWindowNotification(const std::string& name) {
  return In(name, {"AXWindowCreated", "AXFocusedWindowChanged", "AXMainWindowChanged", "AXWindowMiniaturized",
                   "AXWindowDeminiaturized", "AXWindowMoved", "AXWindowResized", "AXMenuOpened", "AXMenuClosed",
                   "AXSheetCreated", "AXDrawerCreated", "AXApplicationActivated", "AXApplicationDeactivated",
                   "AXApplicationHidden", "AXApplicationShown", "AXLoadComplete"});
}

bool IsSurfaceRole(const std::string& role) {
  return In(role, {"AXWindow", "AXSheet", "AXDrawer", "AXMenu", "AXPopover", "AXDialog", "AXSystemDialog"});
}

constexpr size_t kRecentEvents = 16;
// A notification is counted when a drain dispatches it, and that is the only
// time it gets (an AX callback carries none; review 3, S3). Long jobs (a walk
// of a big or slow app) therefore dispatch what is pending at least this
// often, so a notification's time is off by this much, not by the job's length.
constexpr auto kServiceEvery = std::chrono::milliseconds(50);
constexpr auto kWaitSlice = std::chrono::milliseconds(50);

// Registrations refused for want of time or answer are asked again by a
// later Watch: the first retry at once, then at most this often, each given
// this long (a hung app must not cost every wait a messaging timeout).
constexpr auto kRetryEvery = std::chrono::seconds(2);
constexpr auto kRetryFor = std::chrono::milliseconds(250);

// Web apps: the web area is sampled this often while waiting, each sample
// bounded in time, nodes and depth. Their quiet floor is Linux's for
// Chromium (atspi_events.h: its updates come in batches 160-210 ms apart),
// which also leaves room for several samples in every quiet period.
constexpr auto kWebSampleEvery = std::chrono::milliseconds(100);
constexpr auto kWebSampleFor = std::chrono::milliseconds(60);
// The sample is a breadth-first walk below the web area (review 3, M2: a
// single-page app's changing list sits in landmarks inside a root container,
// deeper than the two levels sampled before). One read per node: its
// AXChildren, which gives its child count and its children's identities.
// At the 1-5 ms an AX read takes (mac_backend.h) the 60 ms bound stops a
// sample after 12-60 nodes; an app that answers faster stops at 256 nodes,
// enough for the landmarks and lists of a page's first screens, and few
// enough that a page of thousands of nodes costs one sample's budget, not a
// walk. Depth 8 holds a results list inside body > root > main > section >
// list, with room for wrappers that Chromium does not prune.
constexpr size_t kWebSampleNodes = 256;
constexpr int kWebSampleDepth = 8;
constexpr auto kWebFindEvery = std::chrono::seconds(1);  // while no web area is found
constexpr double kWebQuietFloorMs = 400;
constexpr const char* kWebAreaChanged = "AXWebAreaChanged (sampled)";

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

float SecondsUntil(Clock::time_point until) {
  const double left = std::chrono::duration<double>(until - Clock::now()).count();
  // Never 0: that would mean "the global timeout" to AX.
  return static_cast<float>(std::max(0.005, left));
}

// The signature of what the web area shows: its busy flag, then for each node
// of the bounded walk (in breadth-first order) its depth, its child count and
// its children's identities. A node that is gone (kAXErrorInvalidUIElement)
// or has no children attribute is an entry too: a node destroyed is a change.
// A read the app did not answer in time ends the sample (marked cut), so one
// slow answer is not a change. nullopt when the area itself is gone or does
// not answer.
std::optional<WebSignature> WebAreaSignature(AXUIElementRef area, Clock::time_point until) {
  WebSignature sig;
  uint64_t h = 1469598103934665603ULL;
  AXUIElementSetMessagingTimeout(area, SecondsUntil(until));
  CFAny busy;
  const AXError busyError = AXUIElementCopyAttributeValue(area, CFSTR("AXElementBusy"), busy.OutParam());
  if (busyError == kAXErrorCannotComplete) {
    sig.cut = true;  // not answered in time: nothing of this sample is compared
    return sig;
  }
  if (busyError == kAXErrorSuccess && busy && CFGetTypeID(busy.get()) == CFBooleanGetTypeID())
    h = Mix(h, CFBooleanGetValue(static_cast<CFBooleanRef>(busy.get())) ? 2 : 1);
  std::deque<std::pair<CFRef<AXUIElementRef>, int>> queue;
  queue.emplace_back(CFRef<AXUIElementRef>::Retain(area), 0);
  while (!queue.empty() && sig.prefix.size() < kWebSampleNodes) {
    if (Clock::now() >= until) {
      sig.cut = true;
      break;
    }
    CFRef<AXUIElementRef> el = std::move(queue.front().first);
    const int depth = queue.front().second;
    queue.pop_front();
    AXUIElementSetMessagingTimeout(el.get(), SecondsUntil(until));
    CFAny children;
    const AXError e = AXUIElementCopyAttributeValue(el.get(), CFSTR("AXChildren"), children.OutParam());
    const bool isArray = e == kAXErrorSuccess && children && CFGetTypeID(children.get()) == CFArrayGetTypeID();
    if (sig.prefix.empty() && !isArray) return std::nullopt;  // the area: gone, replaced or not answering
    if (e == kAXErrorCannotComplete) {
      sig.cut = true;  // not answered in time: what was not read is not compared
      break;
    }
    h = Mix(h, static_cast<uint64_t>(depth));
    if (!isArray) {
      // No children (a leaf), or gone: told apart, so a node destroyed changes the signature.
      h = Mix(h, e == kAXErrorInvalidUIElement ? 0xdeadULL : 1);
      sig.prefix.push_back(h);
      continue;
    }
    const CFArrayRef list = static_cast<CFArrayRef>(children.get());
    const CFIndex n = CFArrayGetCount(list);
    h = Mix(h, static_cast<uint64_t>(n) + 2);
    for (CFIndex i = 0; i < n; i++) {
      CFTypeRef c = CFArrayGetValueAtIndex(list, i);
      if (!IsElement(c)) continue;
      h = Mix(h, CFHash(c));
      // Only as many as the walk can still read are kept.
      if (depth < kWebSampleDepth && sig.prefix.size() + 1 + queue.size() < kWebSampleNodes)
        queue.emplace_back(CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(c)), depth + 1);
    }
    sig.prefix.push_back(h);
  }
  return sig;
}

bool WebSignatureChanged(const WebSignature& before, const WebSignature& now) {
  // Compared over the nodes both samples read: a sample cut short by time is
  // a shorter prefix of the same walk, not a different page.
  const size_t n = std::min(before.prefix.size(), now.prefix.size());
  if (n > 0 && before.prefix[n - 1] != now.prefix[n - 1]) return true;
  // Two walks that both ran to their bounds: one that read more nodes found a larger page.
  return !before.cut && !now.cut && before.prefix.size() != now.prefix.size();
}

}  // namespace

namespace mac {

// When this thread last dispatched what its observers had pending.
thread_local Clock::time_point serviced;

void DrainRunLoop() {
  for (int i = 0; i < kDrainMax; i++)
    if (CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, true) != kCFRunLoopRunHandledSource) break;
  serviced = Clock::now();
}

void ServiceObservers() {
  if (Clock::now() - serviced >= kServiceEvery) DrainRunLoop();
}

}  // namespace mac

void MacBackend::OnNotification(AXObserverRef observer, AXUIElementRef element, CFStringRef notification,
                                void* refcon) {
  auto* w = static_cast<Watched*>(refcon);
  if (!w || !w->backend || !notification) return;
  w->backend->Count(*w, element, Str(notification));
}

void MacBackend::Count(Watched& w, AXUIElementRef element, const std::string& name) {
  w.stamp++;
  bool windowish = IsWindowNotification(name);
  // A destroyed window or menu: known only when this backend read it as one
  // (asking the element now would fail: it is gone).
  if (!windowish && name == "AXUIElementDestroyed" && element) {
    const ElementId id = elements_.Find(element);
    const std::string* role = id ? elements_.Role(id) : nullptr;
    windowish = role && IsSurfaceRole(*role);
  }
  if (windowish) w.windowStamp++;
  w.last = Clock::now();
  w.recent.push_back(name);
  while (w.recent.size() > kRecentEvents) w.recent.pop_front();
}

Error MacBackend::Register(Watched& w, const std::vector<std::string>& names, Clock::time_point deadline,
                           AXError& unanswered) {
  unanswered = kAXErrorSuccess;
  // Each registration is a message to the app.
  SetTimeoutFor(w.app.get(), deadline);
  for (const std::string& name : names) {
    if (Clock::now() >= deadline || unanswered != kAXErrorSuccess) {
      // Not asked: no time left, or the app just did not answer (the rest would fail the same way).
      if (unanswered == kAXErrorSuccess) w.refused.push_back(name + ": the deadline passed");
      w.retry.push_back(name);
      continue;
    }
    CFRef<CFStringRef> n = MakeCFString(name);
    const AXError e = AXObserverAddNotification(w.observer.get(), w.app.get(), n.get(), &w);
    if (e == kAXErrorSuccess || e == kAXErrorNotificationAlreadyRegistered) {
      w.added.push_back(name);
      continue;
    }
    w.refused.push_back(name + ": " + AXErrorName(e));
    if (e == kAXErrorAPIDisabled) return AXFailure(e, "registering for notifications");
    if (e == kAXErrorCannotComplete || e == kAXErrorInvalidUIElement) {
      unanswered = e;
      if (e == kAXErrorCannotComplete) w.retry.push_back(name);
    }
  }
  // An app that is gone (kAXErrorInvalidUIElement) will not answer a retry either.
  if (unanswered == kAXErrorInvalidUIElement) w.retry.clear();
  return {};
}

Error MacBackend::Watch(const AppInfo& app, Clock::time_point deadline) {
  auto found = watched_.find(app.pid);
  if (found != watched_.end()) {
    Watched& w = *found->second;
    if (w.retry.empty() || Clock::now() < w.retryAfter) return {};
    // A registration cut short (the deadline, a busy app): asked again,
    // briefly; the names it still cannot register wait for a later Watch.
    std::vector<std::string> names;
    names.swap(w.retry);
    w.refused.erase(std::remove_if(w.refused.begin(), w.refused.end(),
                                   [&](const std::string& r) {
                                     return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
                                       return r.compare(0, n.size() + 1, n + ":") == 0;
                                     });
                                   }),
                    w.refused.end());
    AXError unanswered = kAXErrorSuccess;
    Error err = Register(w, names, std::min(deadline, Clock::now() + kRetryFor), unanswered);
    AXUIElementSetMessagingTimeout(w.app.get(), static_cast<float>(kMessagingTimeoutS));
    w.retryAfter = Clock::now() + kRetryEvery;
    return err;
  }
  if (Error err = Trusted()) return err;
  if (app.pid <= 0 || app.pid > 0x7fffffff) return {ErrorCode::kInvalidArgument, "no app has that pid"};
  AXUIElementRef appEl = AppElement(app.pid);
  if (!appEl) return {ErrorCode::kAppNotFound, "cannot reach pid " + std::to_string(app.pid)};
  auto w = std::make_unique<Watched>();
  w->backend = this;
  w->pid = app.pid;
  AXError e = AXObserverCreate(static_cast<pid_t>(app.pid), &MacBackend::OnNotification, w->observer.OutParam());
  if (e != kAXErrorSuccess || !w->observer) {
    w->observer.reset();
    return AXFailure(e == kAXErrorSuccess ? kAXErrorFailure : e, "creating an AXObserver");
  }
  w->app = CFRef<AXUIElementRef>::Retain(appEl);
  AXError unanswered = kAXErrorSuccess;
  if (Error err = Register(*w, std::vector<std::string>(std::begin(kNotifications), std::end(kNotifications)), deadline,
                           unanswered))
    return err;
  if (w->added.empty()) {
    // The observer is released with `w`; nothing was registered.
    if (unanswered != kAXErrorSuccess) {
      // AX answers a process that is not running as it answers one that hangs.
      if (!system_->ProcessExists(app.pid))
        return {ErrorCode::kAppNotFound, "no running app has pid " + std::to_string(app.pid)};
      return AXFailure(unanswered, "registering for notifications");
    }
    if (Clock::now() >= deadline)
      return {ErrorCode::kTimeout, "the deadline passed before any notification was registered"};
    return {ErrorCode::kActionNotSupported, NameOf(app.pid) + " accepts none of the notifications asked for"};
  }
  // The first retry of what was cut short comes with the next Watch.
  w->retryAfter = Clock::now();
  // The callback runs on this thread (the worker), while WaitEvents or a job boundary runs its run loop.
  w->runLoop = CFRef<CFRunLoopRef>::Retain(CFRunLoopGetCurrent());
  CFRunLoopAddSource(w->runLoop.get(), AXObserverGetRunLoopSource(w->observer.get()), kCFRunLoopDefaultMode);
  watched_.emplace(app.pid, std::move(w));
  return {};
}

bool MacBackend::IsWebApp(Watched& w) {
  if (w.web) return true;
  auto asked = manualAccessibility_.find(w.pid);
  if ((asked != manualAccessibility_.end() && asked->second) || chromiumReady_.count(w.pid)) return w.web = true;
  if (w.engineChecked) return false;
  w.engineChecked = true;
  auto running = running_.find(w.pid);
  if (running == running_.end()) {
    RunningApp r;
    return system_->AppOfProcess(w.pid, r) && (w.web = EngineOf(r.bundlePath, r.bundleId) != WebEngine::kNone);
  }
  return w.web = EngineOf(running->second.bundlePath, running->second.bundleId) != WebEngine::kNone;
}

void MacBackend::SampleWebArea(Watched& w) {
  if (!IsWebApp(w)) return;
  const Clock::time_point now = Clock::now();
  if (now < w.nextWebSample) return;
  w.nextWebSample = now + kWebSampleEvery;
  const Clock::time_point by = now + kWebSampleFor;
  if (!w.webArea) {
    CFAny window;
    SetTimeoutFor(w.app.get(), by);
    for (CFStringRef attr : {CFSTR("AXFocusedWindow"), CFSTR("AXMainWindow")}) {
      if (AXUIElementCopyAttributeValue(w.app.get(), attr, window.OutParam()) != kAXErrorSuccess) window.reset();
      if (window && IsElement(window.get())) break;
      window.reset();
    }
    AXUIElementSetMessagingTimeout(w.app.get(), static_cast<float>(kMessagingTimeoutS));
    bool filled = false;
    if (!window || !FindWebArea(static_cast<AXUIElementRef>(window.get()), by, filled, &w.webArea)) {
      // No web area (yet; a window of the app's own UI): nothing to compare, and the search is not cheap.
      w.webArea.reset();
      w.nextWebSample = now + kWebFindEvery;
      return;
    }
  }
  std::optional<WebSignature> signature = WebAreaSignature(w.webArea.get(), by);
  if (!signature) {
    // The area went (a new page): the next sample finds the new one and compares it with this one's last.
    w.webArea.reset();
    return;
  }
  if (w.webSignature && WebSignatureChanged(*w.webSignature, *signature)) {
    Count(w, nullptr, kWebAreaChanged);
  } else if (w.webSignature && signature->cut && signature->prefix.size() < w.webSignature->prefix.size()) {
    // A shorter sample that agrees with the last one: the last one stays the
    // reference, so what only it read is still compared with the next sample.
    return;
  }
  w.webSignature = std::move(signature);
}

Error MacBackend::WaitEvents(int64_t pid, uint64_t sinceStamp, Clock::time_point until, AppEventState& out) {
  out = AppEventState{};
  auto it = watched_.find(pid);
  if (it == watched_.end())
    return {ErrorCode::kInvalidArgument, "the app with pid " + std::to_string(pid) + " is not watched"};
  Watched* w = it->second.get();
  // What is pending first (notifications queue while nobody runs the loop),
  // then slices until something new arrives or `until` passes. A web app's
  // web area is sampled on the way, and once more at the end, so a wait
  // that overran its slices still compared the content before returning.
  DrainRunLoop();
  SampleWebArea(*w);
  while (w->stamp <= sinceStamp) {
    const Clock::time_point now = Clock::now();
    if (now >= until) {
      SampleWebArea(*w);
      break;
    }
    const auto slice = std::min<Clock::duration>(kWaitSlice, until - now);
    const double seconds = std::chrono::duration<double>(slice).count();
    // A run loop with no source in the mode returns at once: wait the slice instead.
    if (CFRunLoopRunInMode(kCFRunLoopDefaultMode, seconds, true) == kCFRunLoopRunFinished)
      std::this_thread::sleep_for(slice);
    SampleWebArea(*w);
  }
  out.watching = true;
  if (w->web) out.quietFloorMs = kWebQuietFloorMs;
  out.stamp = w->stamp;
  out.windowStamp = w->windowStamp;
  if (w->last) out.msSinceLast = std::chrono::duration<double, std::milli>(Clock::now() - *w->last).count();
  out.recent.assign(w->recent.begin(), w->recent.end());
  return {};
}

void MacBackend::Unwatch(int64_t pid) {
  auto it = watched_.find(pid);
  if (it == watched_.end()) return;
  std::unique_ptr<Watched> w = std::move(it->second);
  watched_.erase(it);
  // Unregistering is a message per notification: short, and given up at the
  // first one that is not answered (releasing the observer ends them anyway).
  AXUIElementSetMessagingTimeout(w->app.get(), 0.25f);
  for (const std::string& name : w->added) {
    CFRef<CFStringRef> n = MakeCFString(name);
    const AXError e = AXObserverRemoveNotification(w->observer.get(), w->app.get(), n.get());
    if (e == kAXErrorCannotComplete || e == kAXErrorInvalidUIElement || e == kAXErrorAPIDisabled) break;
  }
  // Back to the backend's own timeout for this app element.
  AXUIElementSetMessagingTimeout(w->app.get(), static_cast<float>(kMessagingTimeoutS));
  if (w->runLoop)
    CFRunLoopRemoveSource(w->runLoop.get(), AXObserverGetRunLoopSource(w->observer.get()), kCFRunLoopDefaultMode);
  w->backend = nullptr;
  // `w` goes here: the observer, the app element and the run loop are released.
}

bool MacBackend::WatchedNotifications(int64_t pid, std::vector<std::string>& added,
                                      std::vector<std::string>& refused) const {
  auto it = watched_.find(pid);
  if (it == watched_.end()) return false;
  added = it->second->added;
  refused = it->second->refused;
  return true;
}

}  // namespace axsnap
