// AXUIElementCopyAttributeValue hands out a CFTypeRef of any type; reading it
// straight into a CFStringRef skips the CFGetTypeID check.
// expect: no known conversion from 'CFStringRef *'
#include "apple.h"

CFIndex RoleLength(AXUIElementRef element) {
  CFStringRef role = nullptr;
  if (AXUIElementCopyAttributeValue(element, CFSTR("AXRole"), &role) != kAXErrorSuccess) return 0;
  CFIndex length = CFStringGetLength(role);
  CFRelease(role);
  return length;
}
