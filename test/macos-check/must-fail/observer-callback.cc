// An AXObserverCallback takes the observer first: a callback written without it
// (the element first) would read its arguments shifted by one.
// expect: to 'AXObserverCallback'
#include "apple.h"

static void OnNotification(AXUIElementRef element, CFStringRef notification, void* refcon) {}

AXError Observe(pid_t pid, AXObserverRef* out) { return AXObserverCreate(pid, OnNotification, out); }
