// Recovery, one step at a time, for a window that cannot be seen: unhide
// the app, activate it, reopen it when AX shows no window of it here (also
// when the window server lists windows of it that AX does not: on another
// Space, or ordered out), unminimize, raise, make main and focused; and what
// to say when none comes back (NoWindowHere).
//
// Apple: AXAttributeConstants.h (kAXHiddenAttribute, kAXFrontmostAttribute,
// kAXWindowsAttribute, kAXMinimizedAttribute, kAXMainAttribute,
// kAXFocusedAttribute), AXActionConstants.h (kAXRaiseAction); CGWindow.h
// (CGWindowListCopyWindowInfo with kCGWindowListOptionAll, kCGWindowLayer,
// kCGWindowIsOnscreen, kCGWindowBounds); NSRunningApplication unhide and
// activate, and the reopen event of `open -b`, behind MacSystem.

#include "mac_internal.h"

namespace axsnap {

int MacBackend::WindowsElsewhere(int64_t pid) {
  // Every window of every Space (kCGWindowListOptionAll), not only those on screen.
  CFRef<CFArrayRef> list =
      CFRef<CFArrayRef>::Adopt(CGWindowListCopyWindowInfo(kCGWindowListOptionAll, kCGNullWindowID));
  if (!list) return 0;
  int count = 0;
  for (CFIndex i = 0; i < CFArrayGetCount(list.get()); i++) {
    CFTypeRef item = CFArrayGetValueAtIndex(list.get(), i);
    if (!item || CFGetTypeID(item) != CFDictionaryGetTypeID()) continue;
    CFDictionaryRef d = static_cast<CFDictionaryRef>(item);
    if (CFToNumber(CFDictionaryGetValue(d, kCGWindowOwnerPID)).value_or(0) != static_cast<double>(pid)) continue;
    // Ordinary windows only (layer 0): not menus, status items or panels above them.
    if (CFToNumber(CFDictionaryGetValue(d, kCGWindowLayer)).value_or(-1) != 0) continue;
    if (CFToBool(CFDictionaryGetValue(d, kCGWindowIsOnscreen)).value_or(false)) continue;
    // A window the size of a placeholder (apps keep tiny off-screen helper windows) is none.
    CFTypeRef bounds = CFDictionaryGetValue(d, kCGWindowBounds);
    CGRect r{};
    if (!bounds || CFGetTypeID(bounds) != CFDictionaryGetTypeID() ||
        !CGRectMakeWithDictionaryRepresentation(static_cast<CFDictionaryRef>(bounds), &r) || r.size.width < 40 ||
        r.size.height < 40)
      continue;
    count++;
  }
  return count;
}

std::string MacBackend::NoWindowHere(const AppInfo& app) {
  // Only for an app AX shows no window of here: one whose window is here but unusable (minimized, not
  // capturable) is told by window choice's own problem.
  AXUIElementRef appEl = AppElement(app.pid);
  CFAny list;
  if (!appEl || CopyAttribute(appEl, CFSTR("AXWindows"), list) || !list ||
      CFGetTypeID(list.get()) != CFArrayGetTypeID() || CFArrayGetCount(static_cast<CFArrayRef>(list.get())) > 0)
    return {};
  const int elsewhere = WindowsElsewhere(app.pid);
  if (elsewhere == 0) return {};
  const bool one = elsewhere == 1;
  return "the window is on another Space or hidden: the window server lists " + std::to_string(elsewhere) + " window" +
         (one ? "" : "s") + " of " + NameOf(app.pid) + (one ? " that is" : " that are") +
         " not on screen, and AX lists none here (on another Space, or ordered out: closed but kept, or hidden by "
         "the app)" +
         (app.bundleId.empty() ? ", and the app has no bundle id to send a reopen event to (open -b)"
                               : ", not even after a reopen event (open -b " + app.bundleId + ") and activation") +
         ". Switch to that Space, or move the window to this one (Mission Control), then try again; a window the app "
         "keeps closed comes back from the app's own menus (File > New, the Window menu)";
}

Error MacBackend::Recover(RecoveryStep step, const AppInfo& app, const std::optional<WindowInfo>& window,
                          Clock::time_point deadline) {
  AXUIElementRef appEl = AppElement(app.pid);
  if (!appEl) return {ErrorCode::kAppNotFound, "cannot reach pid " + std::to_string(app.pid)};
  SetTimeoutFor(appEl, deadline);
  // The app's windows, read again each step: `open` or an unhide may have
  // changed them. `known` says whether the list could be read at all.
  auto windows = [&](bool* known = nullptr) {
    std::vector<CFRef<AXUIElementRef>> out;
    CFAny list;
    const bool read =
        !CopyAttribute(appEl, CFSTR("AXWindows"), list) && list && CFGetTypeID(list.get()) == CFArrayGetTypeID();
    if (known) *known = read;
    if (!read) return out;
    for (CFIndex i = 0; i < CFArrayGetCount(static_cast<CFArrayRef>(list.get())); i++) {
      CFTypeRef w = CFArrayGetValueAtIndex(static_cast<CFArrayRef>(list.get()), i);
      if (!IsElement(w)) continue;
      out.push_back(CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(w)));
      SetTimeoutFor(out.back().get(), deadline);
    }
    return out;
  };
  auto minimized = [&](AXUIElementRef w) {
    CFAny v;
    return !CopyAttribute(w, CFSTR("AXMinimized"), v) && CFToBool(v.get()).value_or(false);
  };
  // The window to work on: the one chosen, else the app's first.
  auto target = [&]() -> CFRef<AXUIElementRef> {
    if (window)
      if (AXUIElementRef el = elements_.Get(window->element)) {
        SetTimeoutFor(el, deadline);
        return CFRef<AXUIElementRef>::Retain(el);
      }
    std::vector<CFRef<AXUIElementRef>> all = windows();
    return all.empty() ? CFRef<AXUIElementRef>() : all.front();
  };
  auto set = [&](AXUIElementRef el, CFStringRef attr, CFTypeRef value) -> Error {
    const AXError e = AXUIElementSetAttributeValue(el, attr, value);
    return e == kAXErrorSuccess ? Error{} : AXFailure(e, "setting " + Str(attr));
  };
  switch (step) {
    case RecoveryStep::kUnhide: {
      // AX first: NSRunningApplication's view of hidden is stale without a main run loop.
      CFAny hidden;
      if (!CopyAttribute(appEl, CFSTR("AXHidden"), hidden) && CFToBool(hidden.get()).value_or(false))
        set(appEl, CFSTR("AXHidden"), kCFBooleanFalse);
      return system_->Unhide(app.pid);
    }
    case RecoveryStep::kActivate:
      set(appEl, CFSTR("AXFrontmost"), kCFBooleanTrue);
      return system_->ActivateAllWindows(app.pid);
    case RecoveryStep::kOpen:
      // A reopen event makes many apps create a window or show an Open panel:
      // only for an app that has no window here at all.
      if (app.bundleId.empty()) return {ErrorCode::kActionNotSupported, "no bundle id"};
      {
        bool known = false;
        // Only when the app is known to have no window: an unanswered list is not an empty one.
        if (!windows(&known).empty() || !known)
          return {ErrorCode::kActionNotSupported, "the app has windows, or did not say"};
      }
      // Also when the window server lists windows of it that are not on
      // screen (WindowsElsewhere): AXWindows lists only the windows of the
      // current Space, and the public list cannot tell a window on another
      // Space from one the app ordered out (closed but kept). The reopen event
      // suits both: AppKit passes hasVisibleWindows YES for a window on
      // another Space, so the app is activated (and macOS switches to that
      // Space) instead of making a new window, and an app that keeps its
      // closed window shows it again (or opens a new document). What is still
      // not here afterwards is said by NoWindowHere.
      return system_->OpenBundle(app.bundleId, Sooner(deadline, Clock::now() + std::chrono::seconds(3)));
    case RecoveryStep::kUnminimize: {
      CFRef<AXUIElementRef> w;
      if (window)
        if (AXUIElementRef el = elements_.Get(window->element); el && minimized(el))
          w = CFRef<AXUIElementRef>::Retain(el);
      if (!w)
        for (CFRef<AXUIElementRef>& candidate : windows())
          if (minimized(candidate.get())) {
            w = candidate;
            break;
          }
      if (!w) return {ErrorCode::kActionNotSupported, "no minimized window"};
      return set(w.get(), CFSTR("AXMinimized"), kCFBooleanFalse);
    }
    case RecoveryStep::kRaise: {
      CFRef<AXUIElementRef> w = target();
      if (!w) return {ErrorCode::kActionNotSupported, "no window"};
      const AXError e = AXUIElementPerformAction(w.get(), CFSTR("AXRaise"));
      return e == kAXErrorSuccess ? Error{} : AXFailure(e, "AXRaise");
    }
    case RecoveryStep::kMainAndFocused: {
      CFRef<AXUIElementRef> w = target();
      if (!w) return {ErrorCode::kActionNotSupported, "no window"};
      if (Error err = set(w.get(), CFSTR("AXMain"), kCFBooleanTrue)) return err;
      return set(w.get(), CFSTR("AXFocused"), kCFBooleanTrue);
    }
  }
  return {ErrorCode::kActionNotSupported, "unknown step"};
}

}  // namespace axsnap
