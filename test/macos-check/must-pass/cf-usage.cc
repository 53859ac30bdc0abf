// The C patterns of the backend, written correctly: typed reads after a
// CFGetTypeID check, CFRef ownership, CF containers, CGEvent.
#include "apple.h"
#include "cf_ref.h"

using axsnap::CFAny;
using axsnap::CFRef;

CFIndex RoleLength(AXUIElementRef element) {
  CFAny role;
  if (AXUIElementCopyAttributeValue(element, CFSTR("AXRole"), role.OutParam()) != kAXErrorSuccess) return 0;
  if (!role || CFGetTypeID(role.get()) != CFStringGetTypeID()) return 0;
  return CFStringGetLength(static_cast<CFStringRef>(role.get()));
}

CFRef<CFArrayRef> Attributes() {
  const void* names[] = {CFSTR("AXRole"), CFSTR("AXTitle")};
  return CFRef<CFArrayRef>::Adopt(CFArrayCreate(kCFAllocatorDefault, names, 2, &kCFTypeArrayCallBacks));
}

bool PromptForTrust() {
  const void* keys[] = {kAXTrustedCheckOptionPrompt};
  const void* values[] = {kCFBooleanTrue};
  auto options = CFRef<CFDictionaryRef>::Adopt(CFDictionaryCreate(
      kCFAllocatorDefault, keys, values, 1, &kCFTypeDictionaryKeyCallBacks, &kCFTypeDictionaryValueCallBacks));
  return AXIsProcessTrustedWithOptions(options.get());
}

void Click(CGPoint at) {
  auto source = CFRef<CGEventSourceRef>::Adopt(CGEventSourceCreate(kCGEventSourceStateHIDSystemState));
  auto down = CFRef<CGEventRef>::Adopt(CGEventCreateMouseEvent(source.get(), kCGEventLeftMouseDown, at, kCGMouseButtonLeft));
  CGEventSetIntegerValueField(down.get(), kCGMouseEventClickState, 1);
  CGEventSetFlags(down.get(), kCGEventFlagMaskCommand | kCGEventFlagMaskShift);
  CGEventPost(kCGHIDEventTap, down.get());
  auto scroll = CFRef<CGEventRef>::Adopt(CGEventCreateScrollWheelEvent2(source.get(), kCGScrollEventUnitLine, 1, -3, 0, 0));
  CGEventPost(kCGSessionEventTap, scroll.get());
}

// An observer of one app, its source on this thread's run loop, run in slices.
static void OnNotification(AXObserverRef observer, AXUIElementRef element, CFStringRef notification, void* refcon) {
  ++*static_cast<int*>(refcon);
}

int Observe(pid_t pid, AXUIElementRef app) {
  static int count = 0;
  CFRef<AXObserverRef> observer;
  if (AXObserverCreate(pid, OnNotification, observer.OutParam()) != kAXErrorSuccess) return -1;
  if (AXObserverAddNotification(observer.get(), app, CFSTR("AXValueChanged"), &count) != kAXErrorSuccess) return -1;
  CFRunLoopRef loop = CFRunLoopGetCurrent();
  CFRunLoopSourceRef source = AXObserverGetRunLoopSource(observer.get());
  CFRunLoopAddSource(loop, source, kCFRunLoopDefaultMode);
  const CFRunLoopRunResult result = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.05, true);
  AXObserverRemoveNotification(observer.get(), app, CFSTR("AXValueChanged"));
  CFRunLoopRemoveSource(loop, source, kCFRunLoopDefaultMode);
  return result == kCFRunLoopRunHandledSource ? count : 0;
}

// AXValue types by their kAXValueType* names; the legacy UInt32 constants
// still compare with what AXValueGetType returns (as on a Mac).
bool IsPoint(AXValueRef value, CGPoint* point) {
  return AXValueGetType(value) == kAXValueCGPointType && AXValueGetValue(value, kAXValueTypeCGPoint, point);
}
