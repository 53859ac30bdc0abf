#include "cf_convert.h"

#include <vector>

namespace axsnap {

std::optional<std::string> CFToString(CFTypeRef v) {
  if (!v) return std::nullopt;
  // A CFURL made relative to a base (web links in Chromium and Safari are)
  // answers CFURLGetString with only its relative part: the absolute URL's
  // string is the whole address.
  CFRef<CFURLRef> absolute;
  if (CFGetTypeID(v) == CFURLGetTypeID()) {
    absolute = CFRef<CFURLRef>::Adopt(CFURLCopyAbsoluteURL(static_cast<CFURLRef>(v)));
    v = CFURLGetString(absolute ? absolute.get() : static_cast<CFURLRef>(v));
  }
  if (!v || CFGetTypeID(v) != CFStringGetTypeID()) return std::nullopt;
  CFStringRef s = static_cast<CFStringRef>(v);
  if (const char* fast = CFStringGetCStringPtr(s, kCFStringEncodingUTF8)) return std::string(fast);
  const CFIndex length = CFStringGetLength(s);
  const CFIndex max = CFStringGetMaximumSizeForEncoding(length, kCFStringEncodingUTF8) + 1;
  std::vector<char> buf(static_cast<size_t>(max));
  if (!CFStringGetCString(s, buf.data(), max, kCFStringEncodingUTF8)) return std::nullopt;
  return std::string(buf.data());
}

std::optional<double> CFToNumber(CFTypeRef v) {
  if (!v || CFGetTypeID(v) != CFNumberGetTypeID()) return std::nullopt;
  double d = 0;
  if (!CFNumberGetValue(static_cast<CFNumberRef>(v), kCFNumberDoubleType, &d)) return std::nullopt;
  return d;
}

std::optional<bool> CFToBool(CFTypeRef v) {
  if (!v) return std::nullopt;
  if (CFGetTypeID(v) == CFBooleanGetTypeID()) return CFBooleanGetValue(static_cast<CFBooleanRef>(v)) != 0;
  if (std::optional<double> n = CFToNumber(v)) return *n != 0;
  return std::nullopt;
}

std::optional<CGPoint> CFToPoint(CFTypeRef v) {
  if (!v || CFGetTypeID(v) != AXValueGetTypeID()) return std::nullopt;
  AXValueRef value = static_cast<AXValueRef>(v);
  CGPoint p{};
  if (AXValueGetType(value) != kAXValueTypeCGPoint || !AXValueGetValue(value, kAXValueTypeCGPoint, &p))
    return std::nullopt;
  return p;
}

std::optional<CGSize> CFToSize(CFTypeRef v) {
  if (!v || CFGetTypeID(v) != AXValueGetTypeID()) return std::nullopt;
  AXValueRef value = static_cast<AXValueRef>(v);
  CGSize s{};
  if (AXValueGetType(value) != kAXValueTypeCGSize || !AXValueGetValue(value, kAXValueTypeCGSize, &s))
    return std::nullopt;
  return s;
}

bool IsElement(CFTypeRef v) { return v && CFGetTypeID(v) == AXUIElementGetTypeID(); }

bool IsAXErrorValue(CFTypeRef v, AXError* err) {
  if (!v || CFGetTypeID(v) != AXValueGetTypeID()) return false;
  AXValueRef value = static_cast<AXValueRef>(v);
  if (AXValueGetType(value) != kAXValueTypeAXError) return false;
  AXError e = kAXErrorFailure;
  AXValueGetValue(value, kAXValueTypeAXError, &e);
  if (err) *err = e;
  return true;
}

CFRef<CFStringRef> MakeCFString(const std::string& utf8) {
  return CFRef<CFStringRef>::Adopt(
      CFStringCreateWithBytes(kCFAllocatorDefault, reinterpret_cast<const UInt8*>(utf8.data()),
                              static_cast<CFIndex>(utf8.size()), kCFStringEncodingUTF8, false));
}

Value CFToValue(CFTypeRef v, std::optional<std::string>& type) {
  if (!v) return std::monostate{};
  const CFTypeID id = CFGetTypeID(v);
  if (id == CFBooleanGetTypeID()) {
    type = "boolean";
    return CFBooleanGetValue(static_cast<CFBooleanRef>(v)) != 0;
  }
  if (id == CFNumberGetTypeID()) {
    if (std::optional<double> n = CFToNumber(v)) {
      type = "number";
      return *n;
    }
    return std::monostate{};
  }
  if (id == CFStringGetTypeID() || id == CFURLGetTypeID()) {
    if (std::optional<std::string> s = CFToString(v)) {
      type = "string";
      return *s;
    }
  }
  // AXValue ranges, attributed strings, elements: not a value the model prints.
  return std::monostate{};
}

ErrorCode FromAXError(AXError err) {
  switch (err) {
    case kAXErrorSuccess: return ErrorCode::kNone;
    case kAXErrorInvalidUIElement: return ErrorCode::kElementGone;
    case kAXErrorCannotComplete: return ErrorCode::kAppUnresponsive;
    case kAXErrorAPIDisabled: return ErrorCode::kPermissionDenied;
    case kAXErrorActionUnsupported: return ErrorCode::kActionNotSupported;
    case kAXErrorAttributeUnsupported: return ErrorCode::kNotSettable;
    case kAXErrorIllegalArgument: return ErrorCode::kInvalidArgument;
    default: return ErrorCode::kActionFailed;
  }
}

const char* AXErrorName(AXError err) {
  switch (err) {
    case kAXErrorSuccess: return "kAXErrorSuccess";
    case kAXErrorFailure: return "kAXErrorFailure";
    case kAXErrorIllegalArgument: return "kAXErrorIllegalArgument";
    case kAXErrorInvalidUIElement: return "kAXErrorInvalidUIElement";
    case kAXErrorInvalidUIElementObserver: return "kAXErrorInvalidUIElementObserver";
    case kAXErrorCannotComplete: return "kAXErrorCannotComplete";
    case kAXErrorAttributeUnsupported: return "kAXErrorAttributeUnsupported";
    case kAXErrorActionUnsupported: return "kAXErrorActionUnsupported";
    case kAXErrorNotificationUnsupported: return "kAXErrorNotificationUnsupported";
    case kAXErrorNotImplemented: return "kAXErrorNotImplemented";
    case kAXErrorNotificationAlreadyRegistered: return "kAXErrorNotificationAlreadyRegistered";
    case kAXErrorNotificationNotRegistered: return "kAXErrorNotificationNotRegistered";
    case kAXErrorAPIDisabled: return "kAXErrorAPIDisabled";
    case kAXErrorNoValue: return "kAXErrorNoValue";
    case kAXErrorParameterizedAttributeUnsupported: return "kAXErrorParameterizedAttributeUnsupported";
    case kAXErrorNotEnoughPrecision: return "kAXErrorNotEnoughPrecision";
  }
  return "AXError(unknown)";
}

Error AXFailure(AXError err, const std::string& what) {
  std::string message = what + " failed: " + AXErrorName(err);
  if (err == kAXErrorAPIDisabled)
    message = what +
              ": this process is not trusted for Accessibility (System Settings > Privacy & Security > "
              "Accessibility)";
  else if (err == kAXErrorCannotComplete)
    message = what + ": the app did not answer in time (" + AXErrorName(err) + ")";
  return {FromAXError(err), message};
}

}  // namespace axsnap
