// Recovery, one step at a time, for a window that cannot be seen: unhide
// the app, activate it, reopen it when it has no window at all (unless the
// window server lists windows of it that AX does not: on another Space, or
// ordered out), unminimize, raise, make main and focused.
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
      // only for an app that has no window at all.
      if (app.bundleId.empty()) return {ErrorCode::kActionNotSupported, "no bundle id"};
      {
        bool known = false;
        // Only when the app is known to have no window: an unanswered list is not an empty one.
        if (!windows(&known).empty() || !known)
          return {ErrorCode::kActionNotSupported, "the app has windows, or did not say"};
      }
      // AXWindows lists only the windows of the current Space: an app whose
      // windows are all on another Space (or full screen in one) looks
      // windowless, and reopening it would make a new window. The window
      // server's list covers every Space - and also the windows an app
      // ordered out (closed but kept, hidden): the public list tells the two
      // apart by nothing (no Space number), so the app is not reopened on a
      // guess, and the agent is told both and how to force the reopen.
      if (int elsewhere = WindowsElsewhere(app.pid))
        return {ErrorCode::kWindowNotFound,
                "the window is on another Space or hidden: the window server lists " + std::to_string(elsewhere) +
                    " window" + (elsewhere == 1 ? "" : "s") + " of " + NameOf(app.pid) +
                    (elsewhere == 1 ? " that is" : " that are") +
                    " not on screen, and AX lists none here (on another Space, or ordered out: closed but "
                    "kept, or hidden by the app); it was not reopened (on another Space that would make a new "
                    "window). Switch to that Space, or move the window to this one (Mission Control), then try "
                    "again; if the app only hid its window, launch(\"" +
                    app.bundleId + "\") sends it a reopen event"};
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
