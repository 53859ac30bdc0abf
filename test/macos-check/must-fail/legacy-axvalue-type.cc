// The pre-10.11 names kAXValueCGPointType etc. are `static const UInt32` in
// Apple's AXValue.h, not members of the AXValueType enum: C++ does not convert
// a UInt32 to the enum implicitly, so passing one where an AXValueType is
// expected compiles only against a header that made them enum members.
// expect: no known conversion from 'const UInt32' (aka 'const unsigned int') to 'AXValueType'
#include "apple.h"

AXValueRef MakePoint(CGPoint point) { return AXValueCreate(kAXValueCGPointType, &point); }
