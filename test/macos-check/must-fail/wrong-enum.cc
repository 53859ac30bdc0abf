// Apple's enums have fixed, distinct types: an event type is not an AXValue type.
// expect: no known conversion from 'CGEventType' to 'AXValueType'
#include "apple.h"

bool ReadPoint(AXValueRef value, CGPoint* point) {
  return AXValueGetValue(value, kCGEventMouseMoved, point);
}
