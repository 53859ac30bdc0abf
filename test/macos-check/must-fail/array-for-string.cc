// The CF reference types are distinct: an array is not a string.
// expect: cannot convert argument of incomplete type 'CFArrayRef'
#include "apple.h"

CFIndex FirstActionLength(AXUIElementRef element) {
  CFArrayRef names = nullptr;
  if (AXUIElementCopyActionNames(element, &names) != kAXErrorSuccess) return 0;
  CFIndex length = CFStringGetLength(names);
  CFRelease(names);
  return length;
}
