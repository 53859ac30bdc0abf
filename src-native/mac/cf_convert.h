// Reading CoreFoundation values into plain C++ values, with AXSwift's policy:
// a value of the wrong type is "absent", never coerced; an AXValue wrapping an
// AXError (what a failed slot of AXUIElementCopyMultipleAttributeValues holds)
// is recognised by its type and reported as that error, never used as a value.
// Apple: CFString, CFNumber, CFBoolean, AXValue (HIServices/AXValue.h).
#pragma once

#include <optional>
#include <string>

#include "../core/types.h"
#include "apple.h"
#include "cf_ref.h"

namespace axsnap {

std::optional<std::string> CFToString(CFTypeRef v);  // CFString, or CFURL as its absolute string
std::optional<double> CFToNumber(CFTypeRef v);       // CFNumber
std::optional<bool> CFToBool(CFTypeRef v);           // CFBoolean, or CFNumber 0/1
std::optional<CGPoint> CFToPoint(CFTypeRef v);       // AXValue kAXValueTypeCGPoint
std::optional<CGSize> CFToSize(CFTypeRef v);         // AXValue kAXValueTypeCGSize
bool IsElement(CFTypeRef v);                         // AXUIElement
// True when `v` is an AXValue wrapping an AXError; `err` receives it.
bool IsAXErrorValue(CFTypeRef v, AXError* err);

CFRef<CFStringRef> MakeCFString(const std::string& utf8);

// A typed element value: string, number or boolean, with its model type name.
Value CFToValue(CFTypeRef v, std::optional<std::string>& type);

// AX errors as the core's codes. kAXErrorNoValue and kAXErrorAttributeUnsupported
// mean "absent" to callers that read attributes; they are mapped anyway for
// the action paths, where they are real failures.
ErrorCode FromAXError(AXError err);
const char* AXErrorName(AXError err);
Error AXFailure(AXError err, const std::string& what);

}  // namespace axsnap
