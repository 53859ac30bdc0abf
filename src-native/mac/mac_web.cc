// Web engines: which apps carry one (Chromium, Electron, CEF and NW.js
// frameworks in the bundle), getting a Chromium app to build its
// accessibility tree before a walk (AXManualAccessibility, else
// AXEnhancedUserInterface, then waiting a bounded time for the web content),
// and the bounded search for a window's AXWebArea.
//
// Apple: AXUIElementSetAttributeValue (HIServices' AXUIElement.h),
// AXRoleConstants.h (AXWebArea, a WebKit role); the bundle layout of
// "Bundle Programming Guide" (Contents/Frameworks). Chromium: "Accessibility on
// macOS" (docs/accessibility/os/mac.md: AXManualAccessibility,
// AXEnhancedUserInterface), whose attributes no Apple header names.

#include <sys/stat.h>

#include <algorithm>
#include <deque>
#include <thread>

#include "mac_internal.h"

namespace axsnap {

namespace {

constexpr auto kChromiumWait = std::chrono::milliseconds(3000);
constexpr auto kChromiumPoll = std::chrono::milliseconds(100);
// Electron implements AXManualAccessibility (older versions answer
// kAXErrorAttributeUnsupported yet apply it): its web content is waited for
// this long before AXEnhancedUserInterface, which has side effects, is tried.
constexpr auto kElectronLook = std::chrono::milliseconds(1500);

bool PathExists(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

constexpr int kWebAreaSearchNodes = 400;

}  // namespace

namespace mac {

WebEngine EngineOf(const std::string& bundlePath, const std::string& bundleId) {
  static const char* kElectronFrameworks[] = {"Electron Framework", "nwjs Framework"};
  static const char* kChromiumFrameworks[] = {
      "Chromium Embedded Framework", "Chromium Framework", "Google Chrome Framework", "Microsoft Edge Framework",
      "Brave Browser Framework",     "Vivaldi Framework",  "Opera Framework",         "Arc Framework"};
  static const char* kCefBundleIds[] = {"com.spotify.client", "com.valvesoftware.steam"};
  if (!bundlePath.empty()) {
    for (const char* f : kElectronFrameworks)
      if (PathExists(bundlePath + "/Contents/Frameworks/" + f + ".framework")) return WebEngine::kElectron;
    for (const char* f : kChromiumFrameworks)
      if (PathExists(bundlePath + "/Contents/Frameworks/" + f + ".framework")) return WebEngine::kChromium;
  }
  for (const char* id : kCefBundleIds)
    if (bundleId == id) return WebEngine::kChromium;
  return WebEngine::kNone;
}

bool FindWebArea(AXUIElementRef root, Clock::time_point until, bool& filled, CFRef<AXUIElementRef>* area) {
  filled = false;
  std::deque<std::pair<CFRef<AXUIElementRef>, int>> queue;
  queue.emplace_back(CFRef<AXUIElementRef>::Retain(root), 0);
  bool found = false;
  int visited = 0;
  while (!queue.empty() && visited++ < kWebAreaSearchNodes && Clock::now() < until) {
    CFRef<AXUIElementRef> el = std::move(queue.front().first);
    const int depth = queue.front().second;
    queue.pop_front();
    const double left = std::chrono::duration<double>(until - Clock::now()).count();
    AXUIElementSetMessagingTimeout(el.get(), static_cast<float>(std::max(0.05, std::min(kMessagingTimeoutS, left))));
    CFAny role, children;
    if (AXUIElementCopyAttributeValue(el.get(), CFSTR("AXRole"), role.OutParam()) != kAXErrorSuccess) role.reset();
    const std::string r = Str(role.get());
    if (r == "AXButton" || r == "AXStaticText" || r == "AXImage" || r == "AXTextField" || r == "AXMenuButton" ||
        r == "AXPopUpButton" || r == "AXRadioButton" || r == "AXCheckBox")
      continue;  // leaves of the browser's own UI
    if (AXUIElementCopyAttributeValue(el.get(), CFSTR("AXChildren"), children.OutParam()) != kAXErrorSuccess)
      children.reset();
    const bool isArray = children && CFGetTypeID(children.get()) == CFArrayGetTypeID();
    const CFIndex n = isArray ? CFArrayGetCount(static_cast<CFArrayRef>(children.get())) : 0;
    if (r == "AXWebArea") {
      found = true;
      if (area) *area = CFRef<AXUIElementRef>::Retain(el.get());
      if (n > 0) {
        filled = true;
        return true;
      }
      continue;
    }
    if (depth >= 16) continue;
    for (CFIndex i = 0; i < n; i++) {
      CFTypeRef c = CFArrayGetValueAtIndex(static_cast<CFArrayRef>(children.get()), i);
      if (IsElement(c)) queue.emplace_back(CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(c)), depth + 1);
    }
  }
  return found;
}

}  // namespace mac

void MacBackend::PrepareWalk(const AppInfo& app, const WindowInfo& window, Clock::time_point deadline,
                             std::vector<std::string>& notes, bool& contentPending) {
  if (chromiumReady_.count(app.pid)) return;
  AXUIElementRef appEl = AppElement(app.pid);
  AXUIElementRef windowEl = elements_.Get(window.element);
  if (!appEl || !windowEl) return;
  SetTimeoutFor(appEl, deadline);
  auto running = running_.find(app.pid);
  const WebEngine engine =
      running != running_.end() ? EngineOf(running->second.bundlePath, running->second.bundleId) : WebEngine::kNone;
  const bool chromiumBundle = engine != WebEngine::kNone;
  // Half of what is left at most: the walk itself needs the rest.
  const Clock::time_point t0 = Clock::now();
  const Clock::time_point until = Sooner(t0 + kChromiumWait, t0 + (deadline - t0) / 2);
  bool filled = false;
  bool polled = false;  // the content was not there at the first look
  // Polls, bounded by `by`, until a web area with content is there.
  auto waitForContent = [&](Clock::time_point by) {
    for (;;) {
      if (FindWebArea(windowEl, by, filled) && filled) return true;
      if (Clock::now() + kChromiumPoll >= by) return false;
      polled = true;
      std::this_thread::sleep_for(kChromiumPoll);
    }
  };
  // Chromium reported dropping actions on web content sent while its tree
  // is being built: said whenever the content came only after a request.
  auto switched = [&](const char* attribute) {
    notes.push_back(std::string("the app's web content was just exposed (") + attribute +
                    "); Chromium may drop actions on web content sent right after the switch: if one has no "
                    "visible effect, take a new snapshot before repeating it");
  };

  auto asked = manualAccessibility_.find(app.pid);
  // An app that refused the request and carries no Chromium engine is a native app: nothing to wait for.
  if (asked != manualAccessibility_.end() && !asked->second && !chromiumBundle) return;
  const bool firstAsk = asked == manualAccessibility_.end();
  const char* attribute = "AXManualAccessibility";
  if (firstAsk) {
    // Chromium builds its accessibility tree only for a client that asks.
    AXError e = AXUIElementSetAttributeValue(appEl, CFSTR("AXManualAccessibility"), kCFBooleanTrue);
    if (e != kAXErrorSuccess && chromiumBundle) {
      // Electron implements AXManualAccessibility, older versions answering
      // kAXErrorAttributeUnsupported yet applying it: its content is given a
      // while before the attribute with side effects. Other Chromium apps get one look.
      const bool there = engine == WebEngine::kElectron ? waitForContent(Sooner(until, t0 + kElectronLook))
                                                        : FindWebArea(windowEl, until, filled) && filled;
      if (there) {
        manualAccessibility_[app.pid] = true;
        chromiumReady_.insert(app.pid);
        if (polled) switched(attribute);
        return;
      }
      attribute = "AXEnhancedUserInterface";
      // Already on means another assistive app (VoiceOver) turned it on: it
      // stays on when this backend closes - on macOS 12-13 Chrome leaves its
      // complete accessibility mode at a false whoever else still needs it.
      CFAny before;
      const bool wasOn = AXUIElementCopyAttributeValue(appEl, CFSTR("AXEnhancedUserInterface"), before.OutParam()) ==
                             kAXErrorSuccess &&
                         CFToBool(before.get()).value_or(false);
      const AXError enhanced = AXUIElementSetAttributeValue(appEl, CFSTR("AXEnhancedUserInterface"), kCFBooleanTrue);
      // Chrome answers this set with an error even when it takes effect (full
      // accessibility mode comes about 2 s later): the attempt is recorded
      // whatever the answer, so the attribute is turned off again when the
      // backend closes, and the content is waited for below.
      if (!wasOn) enhanced_.insert(app.pid);
      notes.push_back(std::string("AXManualAccessibility was refused (") + AXErrorName(e) +
                      "); AXEnhancedUserInterface was set instead" +
                      (enhanced == kAXErrorSuccess ? std::string()
                                                   : std::string(" (it answered ") + AXErrorName(enhanced) +
                                                         ", as Chromium does even when it switches)") +
                      " (window managers may animate or misplace this app's windows while it is on)");
      e = kAXErrorSuccess;
    }
    manualAccessibility_[app.pid] = e == kAXErrorSuccess;
    if (e != kAXErrorSuccess) return;  // not a Chromium bundle: a native app
  }

  const bool webArea = FindWebArea(windowEl, until, filled);
  if (filled) {
    chromiumReady_.insert(app.pid);
    return;
  }
  // Wait when a web area is there but empty, or right after asking a known
  // Chromium bundle (its tree is being built). Anything else: nothing to wait for.
  if (!webArea && !(firstAsk && chromiumBundle)) return;
  if (waitForContent(until)) {
    chromiumReady_.insert(app.pid);
    if (firstAsk) switched(attribute);
    return;
  }
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  notes.push_back("the app's web content had not appeared in the accessibility tree after " + std::to_string(waited) +
                  " ms; the tree is incomplete");
  contentPending = true;
}

}  // namespace axsnap
