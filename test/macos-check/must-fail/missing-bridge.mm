// ARC: an Objective-C pointer becomes a CF reference only through a bridged
// cast that says who owns it (__bridge, __bridge_retained, CFBridgingRetain).
// expect: requires a bridged cast
#include "decls/apple_objc.h"

CFIndex Length(NSString* text) {
  CFStringRef cf = (CFStringRef)text;
  return CFStringGetLength(cf);
}
