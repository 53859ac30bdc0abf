// Declarations of the Apple C APIs that the macOS backend uses, for building
// without Apple's SDK: the Linux compile check, the darwin-target compile check
// (scripts/check-macos.mjs) and the fake CoreFoundation/AX layer that the
// backend's tests link against (test/native/macfake/). On a Mac the real SDK
// headers are used instead (see ../apple.h).
//
// Written for this project; it is not a copy of Apple's headers. It declares
// only what the backend uses. Names, signatures, enum values, ownership and
// availability follow Apple's documentation pages for:
//   CoreFoundation  CFBase, CFString, CFArray, CFDictionary, CFNumber, CFURL,
//                   CFRunLoop, CFDate (CFTimeInterval)
//   HIServices      AXUIElement.h (elements, observers), AXValue.h, AXError.h, AXValueConstants
//   CoreGraphics    CGGeometry.h, CGWindow.h, CGEvent.h, CGEventTypes.h,
//                   CGEventSource.h, CGRemoteOperation.h, CGImage.h,
//                   CGBitmapContext.h, CGColorSpace.h, CGContext.h,
//                   CGError.h, CGDirectDisplay.h
//   Keyboard layouts CFData.h, HIToolbox TextInputSources.h and Events.h,
//                   CarbonCore UnicodeUtilities.h
// The types match Apple's 64-bit ABI (LP64): CFIndex is long, Boolean is
// unsigned char, CGFloat is double, enums have Apple's fixed underlying types.
//
// Ownership follows Core Foundation's naming rules and is spelled out on
// every function that hands out a reference:
//   "Create rule: +1"  the caller owns the result and must release it;
//   "Get rule: +0"     the result is borrowed from its container.
// Out-parameters of Copy functions carry +1 results as well.
//
// Availability: the oldest macOS we support is 12.3 (ScreenCaptureKit). APIs
// newer than that carry AXSNAP_API_AVAILABLE(macos(x)), which is clang's
// availability attribute on every target; when compiling for
// -target <arch>-apple-macos12.3 an unguarded use of a newer API is a
// -Wunguarded-availability diagnostic (an error under -Werror). On non-Apple
// targets clang ignores macOS availability.
#ifndef AXSNAP_MAC_DECLS_APPLE_C_H_
#define AXSNAP_MAC_DECLS_APPLE_C_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>  // pid_t

// ---------------------------------------------------------------------------
// Macros of our own (Apple spells these CF_ENUM, API_AVAILABLE, ...).

// AXSNAP_API_AVAILABLE(macos(10.15))
// Availability is clang's; GCC (the fake-CF test build) compiles without it.
#if defined(__clang__)
#define AXSNAP_AVAILABILITY_macos(v) __attribute__((availability(macos, introduced = v)))
// AXSNAP_API_OBSOLETED("why", 10.5, 14.0, 15.0): introduced, deprecated, obsoleted.
#define AXSNAP_API_OBSOLETED(msg, intro, depr, obs) \
  __attribute__((availability(macos, introduced = intro, deprecated = depr, obsoleted = obs, message = msg)))
// AXSNAP_API_DEPRECATED("why", 10.6, 14.0): introduced, deprecated. A use is
// diagnosed only once the deployment target reaches the deprecating version.
#define AXSNAP_API_DEPRECATED(msg, intro, depr) \
  __attribute__((availability(macos, introduced = intro, deprecated = depr, message = msg)))
#else
#define AXSNAP_AVAILABILITY_macos(v)
#define AXSNAP_API_OBSOLETED(msg, intro, depr, obs)
#define AXSNAP_API_DEPRECATED(msg, intro, depr)
#endif
#define AXSNAP_API_AVAILABLE(platform_version) AXSNAP_AVAILABILITY_##platform_version

// Lets Objective-C ARC bridge these CF types to the toll-free Foundation class
// (`(__bridge NSString*)cfString`). Ignored outside Objective-C.
#if defined(__has_attribute)
#if __has_attribute(objc_bridge)
#define AXSNAP_CF_BRIDGED_TYPE(T) __attribute__((objc_bridge(T)))
#endif
#endif
#ifndef AXSNAP_CF_BRIDGED_TYPE
#define AXSNAP_CF_BRIDGED_TYPE(T)
#endif

// For the static analyser: a function or out-parameter that hands out +1.
#if defined(__clang__)
#define AXSNAP_CF_RETURNS_RETAINED __attribute__((cf_returns_retained))
#else
#define AXSNAP_CF_RETURNS_RETAINED
#endif

// An enum with a fixed underlying type, like CF_ENUM: `AXSNAP_CF_ENUM(int32_t, AXError) { ... };`
// An option set, like CF_OPTIONS: the name is the integer type, the bits are constants of it.
// (__has_feature nested, not in one #if with defined(): GCC 12 cannot parse it.)
#if defined(__cplusplus)
#define AXSNAP_FIXED_ENUM 1
#elif defined(__has_feature)
#if __has_feature(objc_fixed_enum)
#define AXSNAP_FIXED_ENUM 1
#endif
#endif
#if defined(AXSNAP_FIXED_ENUM)
#define AXSNAP_CF_ENUM(type, name) \
  enum name : type;                \
  typedef enum name name;          \
  enum name : type
#define AXSNAP_CF_OPTIONS(type, name) \
  typedef type name;                  \
  enum : name
#else
#define AXSNAP_CF_ENUM(type, name) \
  typedef type name;               \
  enum
#define AXSNAP_CF_OPTIONS(type, name) \
  typedef type name;                  \
  enum
#endif

#if defined(__cplusplus)
#define AXSNAP_INLINE inline
#else
#define AXSNAP_INLINE static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------
// MacTypes

typedef unsigned char Boolean;
typedef unsigned char UInt8;
typedef unsigned short UInt16;
typedef unsigned int UInt32;
typedef signed int SInt32;
typedef UInt16 UniChar;
typedef unsigned long UniCharCount;

// ---------------------------------------------------------------------------
// CoreFoundation: CFBase

typedef const void* CFTypeRef;
typedef unsigned long CFTypeID;
typedef signed long CFIndex;
typedef unsigned long CFHashCode;

typedef struct {
  CFIndex location;
  CFIndex length;
} CFRange;

AXSNAP_INLINE CFRange CFRangeMake(CFIndex location, CFIndex length) {
  CFRange range;
  range.location = location;
  range.length = length;
  return range;
}

typedef const struct __CFAllocator* CFAllocatorRef;
typedef const struct AXSNAP_CF_BRIDGED_TYPE(NSString) __CFString* CFStringRef;
typedef const struct AXSNAP_CF_BRIDGED_TYPE(NSArray) __CFArray* CFArrayRef;
typedef const struct AXSNAP_CF_BRIDGED_TYPE(NSDictionary) __CFDictionary* CFDictionaryRef;
typedef const struct AXSNAP_CF_BRIDGED_TYPE(NSNumber) __CFNumber* CFNumberRef;
typedef const struct AXSNAP_CF_BRIDGED_TYPE(NSNumber) __CFBoolean* CFBooleanRef;
typedef const struct AXSNAP_CF_BRIDGED_TYPE(NSURL) __CFURL* CFURLRef;

// NULL means the same allocator.
extern const CFAllocatorRef kCFAllocatorDefault;

// Returns `cf` with one more reference (+1). `cf` must not be NULL.
extern CFTypeRef CFRetain(CFTypeRef cf);
// `cf` must not be NULL.
extern void CFRelease(CFTypeRef cf);
extern CFTypeID CFGetTypeID(CFTypeRef cf);
extern Boolean CFEqual(CFTypeRef cf1, CFTypeRef cf2);
extern CFHashCode CFHash(CFTypeRef cf);

// ---------------------------------------------------------------------------
// CoreFoundation: CFString

typedef UInt32 CFStringEncoding;
AXSNAP_CF_ENUM(CFStringEncoding, CFStringBuiltInEncodings){
    kCFStringEncodingUTF8 = 0x08000100,
};

extern CFTypeID CFStringGetTypeID(void);

// Create rule: +1. NULL when the bytes are not valid in `encoding`.
extern CFStringRef CFStringCreateWithBytes(CFAllocatorRef alloc, const UInt8* bytes, CFIndex numBytes,
                                           CFStringEncoding encoding,
                                           Boolean isExternalRepresentation) AXSNAP_CF_RETURNS_RETAINED;
// Create rule: +1.
extern CFStringRef CFStringCreateWithCString(CFAllocatorRef alloc, const char* cStr,
                                             CFStringEncoding encoding) AXSNAP_CF_RETURNS_RETAINED;
// Create rule: +1.
extern CFStringRef CFStringCreateWithCharacters(CFAllocatorRef alloc, const UniChar* chars,
                                                CFIndex numChars) AXSNAP_CF_RETURNS_RETAINED;

// Length in UTF-16 code units.
extern CFIndex CFStringGetLength(CFStringRef theString);
extern CFIndex CFStringGetMaximumSizeForEncoding(CFIndex length, CFStringEncoding encoding);
// Copies into `buffer` with a terminating NUL; false when it does not fit.
extern Boolean CFStringGetCString(CFStringRef theString, char* buffer, CFIndex bufferSize, CFStringEncoding encoding);
// Get rule: +0, an interior pointer that may be NULL (then use CFStringGetCString).
extern const char* CFStringGetCStringPtr(CFStringRef theString, CFStringEncoding encoding);
// Returns the number of characters converted; `usedBufLen` receives the bytes written.
extern CFIndex CFStringGetBytes(CFStringRef theString, CFRange range, CFStringEncoding encoding, UInt8 lossByte,
                                Boolean isExternalRepresentation, UInt8* buffer, CFIndex maxBufLen,
                                CFIndex* usedBufLen);
extern void CFStringGetCharacters(CFStringRef theString, CFRange range, UniChar* buffer);

// CFSTR("literal"): a constant string that is never freed; releasing it is
// allowed and does nothing. Get rule: +0.
extern CFStringRef __CFStringMakeConstantString(const char* cStr);
#define CFSTR(cStr) __CFStringMakeConstantString("" cStr "")

// ---------------------------------------------------------------------------
// CoreFoundation: CFArray

typedef const void* (*CFArrayRetainCallBack)(CFAllocatorRef allocator, const void* value);
typedef void (*CFArrayReleaseCallBack)(CFAllocatorRef allocator, const void* value);
typedef CFStringRef (*CFArrayCopyDescriptionCallBack)(const void* value);
typedef Boolean (*CFArrayEqualCallBack)(const void* value1, const void* value2);
typedef struct {
  CFIndex version;
  CFArrayRetainCallBack retain;
  CFArrayReleaseCallBack release;
  CFArrayCopyDescriptionCallBack copyDescription;
  CFArrayEqualCallBack equal;
} CFArrayCallBacks;

// Retains values added, releases them with the array.
extern const CFArrayCallBacks kCFTypeArrayCallBacks;

extern CFTypeID CFArrayGetTypeID(void);
// Create rule: +1.
extern CFArrayRef CFArrayCreate(CFAllocatorRef allocator, const void** values, CFIndex numValues,
                                const CFArrayCallBacks* callBacks) AXSNAP_CF_RETURNS_RETAINED;
extern CFIndex CFArrayGetCount(CFArrayRef theArray);
// Get rule: +0.
extern const void* CFArrayGetValueAtIndex(CFArrayRef theArray, CFIndex idx);

// ---------------------------------------------------------------------------
// CoreFoundation: CFDictionary

typedef const void* (*CFDictionaryRetainCallBack)(CFAllocatorRef allocator, const void* value);
typedef void (*CFDictionaryReleaseCallBack)(CFAllocatorRef allocator, const void* value);
typedef CFStringRef (*CFDictionaryCopyDescriptionCallBack)(const void* value);
typedef Boolean (*CFDictionaryEqualCallBack)(const void* value1, const void* value2);
typedef CFHashCode (*CFDictionaryHashCallBack)(const void* value);
typedef struct {
  CFIndex version;
  CFDictionaryRetainCallBack retain;
  CFDictionaryReleaseCallBack release;
  CFDictionaryCopyDescriptionCallBack copyDescription;
  CFDictionaryEqualCallBack equal;
  CFDictionaryHashCallBack hash;
} CFDictionaryKeyCallBacks;
typedef struct {
  CFIndex version;
  CFDictionaryRetainCallBack retain;
  CFDictionaryReleaseCallBack release;
  CFDictionaryCopyDescriptionCallBack copyDescription;
  CFDictionaryEqualCallBack equal;
} CFDictionaryValueCallBacks;

extern const CFDictionaryKeyCallBacks kCFTypeDictionaryKeyCallBacks;
extern const CFDictionaryValueCallBacks kCFTypeDictionaryValueCallBacks;

extern CFTypeID CFDictionaryGetTypeID(void);
// Create rule: +1.
extern CFDictionaryRef CFDictionaryCreate(CFAllocatorRef allocator, const void** keys, const void** values,
                                          CFIndex numValues, const CFDictionaryKeyCallBacks* keyCallBacks,
                                          const CFDictionaryValueCallBacks* valueCallBacks) AXSNAP_CF_RETURNS_RETAINED;
// Get rule: +0. NULL when absent.
extern const void* CFDictionaryGetValue(CFDictionaryRef theDict, const void* key);
// Get rule: +0 in `*value`.
extern Boolean CFDictionaryGetValueIfPresent(CFDictionaryRef theDict, const void* key, const void** value);

// ---------------------------------------------------------------------------
// CoreFoundation: CFNumber, CFBoolean

AXSNAP_CF_ENUM(CFIndex, CFNumberType){
    kCFNumberSInt8Type = 1,   kCFNumberSInt16Type = 2,   kCFNumberSInt32Type = 3,     kCFNumberSInt64Type = 4,
    kCFNumberFloat32Type = 5, kCFNumberFloat64Type = 6,  kCFNumberCharType = 7,       kCFNumberShortType = 8,
    kCFNumberIntType = 9,     kCFNumberLongType = 10,    kCFNumberLongLongType = 11,  kCFNumberFloatType = 12,
    kCFNumberDoubleType = 13, kCFNumberCFIndexType = 14, kCFNumberNSIntegerType = 15, kCFNumberCGFloatType = 16,
    kCFNumberMaxType = 16,
};

extern CFTypeID CFNumberGetTypeID(void);
// Create rule: +1.
extern CFNumberRef CFNumberCreate(CFAllocatorRef allocator, CFNumberType theType,
                                  const void* valuePtr) AXSNAP_CF_RETURNS_RETAINED;
// false when the conversion to `theType` was lossy (the value is still written).
extern Boolean CFNumberGetValue(CFNumberRef number, CFNumberType theType, void* valuePtr);

extern const CFBooleanRef kCFBooleanTrue;
extern const CFBooleanRef kCFBooleanFalse;
extern CFTypeID CFBooleanGetTypeID(void);
extern Boolean CFBooleanGetValue(CFBooleanRef boolean);

// ---------------------------------------------------------------------------
// CoreFoundation: CFURL

extern CFTypeID CFURLGetTypeID(void);
// Get rule: +0.
extern CFStringRef CFURLGetString(CFURLRef anURL);
// Create rule: +1. NULL when `URLString` is not a valid URL.
extern CFURLRef CFURLCreateWithString(CFAllocatorRef allocator, CFStringRef URLString,
                                      CFURLRef baseURL) AXSNAP_CF_RETURNS_RETAINED;
// Copy rule: +1. The URL resolved against its base (itself when it has none);
// CFURLGetString of a URL with a base is only its relative part.
extern CFURLRef CFURLCopyAbsoluteURL(CFURLRef relativeURL) AXSNAP_CF_RETURNS_RETAINED;

// ---------------------------------------------------------------------------
// CoreFoundation: CFRunLoop (and CFTimeInterval from CFDate.h)

typedef double CFTimeInterval;  // seconds
// CFRunLoop.h: `typedef CFStringRef CFRunLoopMode CF_EXTENSIBLE_STRING_ENUM;`
typedef CFStringRef CFRunLoopMode;
typedef struct AXSNAP_CF_BRIDGED_TYPE(id) __CFRunLoop* CFRunLoopRef;
typedef struct AXSNAP_CF_BRIDGED_TYPE(id) __CFRunLoopSource* CFRunLoopSourceRef;

// Why CFRunLoopRunInMode returned.
AXSNAP_CF_ENUM(SInt32, CFRunLoopRunResult){
    kCFRunLoopRunFinished = 1,       // the mode has no sources or timers
    kCFRunLoopRunStopped = 2,        // CFRunLoopStop
    kCFRunLoopRunTimedOut = 3,       // `seconds` passed
    kCFRunLoopRunHandledSource = 4,  // one source was handled (returnAfterSourceHandled)
};

extern const CFRunLoopMode kCFRunLoopDefaultMode;

// Get rule: +0. The calling thread's run loop (created on first use).
extern CFRunLoopRef CFRunLoopGetCurrent(void);
// Runs the calling thread's run loop in `mode` for at most `seconds` (0: one
// pass); with `returnAfterSourceHandled`, returns after one source fired.
extern CFRunLoopRunResult CFRunLoopRunInMode(CFRunLoopMode mode, CFTimeInterval seconds,
                                             Boolean returnAfterSourceHandled);
// The run loop retains `source` while it is added; adding it twice does nothing.
extern void CFRunLoopAddSource(CFRunLoopRef rl, CFRunLoopSourceRef source, CFRunLoopMode mode);
extern void CFRunLoopRemoveSource(CFRunLoopRef rl, CFRunLoopSourceRef source, CFRunLoopMode mode);

// ---------------------------------------------------------------------------
// CoreGraphics: CGGeometry

typedef double CGFloat;  // 64-bit
typedef struct {
  CGFloat x;
  CGFloat y;
} CGPoint;
typedef struct {
  CGFloat width;
  CGFloat height;
} CGSize;
typedef struct {
  CGPoint origin;
  CGSize size;
} CGRect;

AXSNAP_INLINE CGPoint CGPointMake(CGFloat x, CGFloat y) {
  CGPoint p;
  p.x = x;
  p.y = y;
  return p;
}
AXSNAP_INLINE CGSize CGSizeMake(CGFloat width, CGFloat height) {
  CGSize s;
  s.width = width;
  s.height = height;
  return s;
}
AXSNAP_INLINE CGRect CGRectMake(CGFloat x, CGFloat y, CGFloat width, CGFloat height) {
  CGRect r;
  r.origin.x = x;
  r.origin.y = y;
  r.size.width = width;
  r.size.height = height;
  return r;
}

// The null rectangle (infinite origin); for CGWindowListCreateImage it means
// "the window's own bounds".
extern const CGRect CGRectNull;

// Reads a {X, Y, Width, Height} dictionary such as kCGWindowBounds.
extern bool CGRectMakeWithDictionaryRepresentation(CFDictionaryRef dict, CGRect* rect);

// ---------------------------------------------------------------------------
// HIServices: AXError.h

AXSNAP_CF_ENUM(int32_t, AXError){
    kAXErrorSuccess = 0,
    kAXErrorFailure = -25200,
    kAXErrorIllegalArgument = -25201,
    kAXErrorInvalidUIElement = -25202,
    kAXErrorInvalidUIElementObserver = -25203,
    kAXErrorCannotComplete = -25204,
    kAXErrorAttributeUnsupported = -25205,
    kAXErrorActionUnsupported = -25206,
    kAXErrorNotificationUnsupported = -25207,
    kAXErrorNotImplemented = -25208,
    kAXErrorNotificationAlreadyRegistered = -25209,
    kAXErrorNotificationNotRegistered = -25210,
    kAXErrorAPIDisabled = -25211,
    kAXErrorNoValue = -25212,
    kAXErrorParameterizedAttributeUnsupported = -25213,
    kAXErrorNotEnoughPrecision = -25214,
};

// ---------------------------------------------------------------------------
// HIServices: AXValue.h

typedef const struct AXSNAP_CF_BRIDGED_TYPE(id) __AXValue* AXValueRef;

AXSNAP_CF_ENUM(UInt32, AXValueType){
    kAXValueTypeCGPoint = 1, kAXValueTypeCGSize = 2,  kAXValueTypeCGRect = 3,
    kAXValueTypeCFRange = 4, kAXValueTypeAXError = 5, kAXValueTypeIllegal = 0,
};
// The names before macOS 10.11, declared as Apple's AXValue.h declares them:
// plain UInt32 constants, not enum members, so in C++ they do not convert to
// AXValueType (AXValueCreate(kAXValueCGPointType, ...) does not compile on a
// Mac). Use the kAXValueType* names.
static const UInt32 kAXValueCGPointType = kAXValueTypeCGPoint;
static const UInt32 kAXValueCGSizeType = kAXValueTypeCGSize;
static const UInt32 kAXValueCGRectType = kAXValueTypeCGRect;
static const UInt32 kAXValueCFRangeType = kAXValueTypeCFRange;
static const UInt32 kAXValueAXErrorType = kAXValueTypeAXError;
static const UInt32 kAXValueIllegalType = kAXValueTypeIllegal;

extern CFTypeID AXValueGetTypeID(void);
// Create rule: +1. `valuePtr` points at a CGPoint, CGSize, CGRect, CFRange or AXError.
extern AXValueRef AXValueCreate(AXValueType theType, const void* valuePtr) AXSNAP_CF_RETURNS_RETAINED;
extern AXValueType AXValueGetType(AXValueRef value);
// false when `value` does not hold `theType`.
extern Boolean AXValueGetValue(AXValueRef value, AXValueType theType, void* valuePtr);

// ---------------------------------------------------------------------------
// HIServices: AXUIElement.h

typedef const struct AXSNAP_CF_BRIDGED_TYPE(id) __AXUIElement* AXUIElementRef;

AXSNAP_CF_OPTIONS(UInt32, AXCopyMultipleAttributeOptions){
    kAXCopyMultipleAttributeOptionStopOnError = 0x1,
};

extern CFTypeID AXUIElementGetTypeID(void);

// Create rule: +1.
extern AXUIElementRef AXUIElementCreateApplication(pid_t pid) AXSNAP_CF_RETURNS_RETAINED;
// Create rule: +1.
extern AXUIElementRef AXUIElementCreateSystemWide(void) AXSNAP_CF_RETURNS_RETAINED;

// Copy: +1 in `*value` on kAXErrorSuccess.
extern AXError AXUIElementCopyAttributeValue(AXUIElementRef element, CFStringRef attribute,
                                             CFTypeRef* AXSNAP_CF_RETURNS_RETAINED value);
extern AXError AXUIElementGetAttributeValueCount(AXUIElementRef element, CFStringRef attribute, CFIndex* count);
// Copy: +1 in `*result`: a parameterized attribute (e.g. AXStringForRange with
// an AXValueRef of kAXValueTypeCFRange) for `parameter`.
extern AXError AXUIElementCopyParameterizedAttributeValue(AXUIElementRef element, CFStringRef parameterizedAttribute,
                                                          CFTypeRef parameter,
                                                          CFTypeRef* AXSNAP_CF_RETURNS_RETAINED result);
// Copy: +1 in `*values`: up to `maxValues` items of an array attribute from `index`.
extern AXError AXUIElementCopyAttributeValues(AXUIElementRef element, CFStringRef attribute, CFIndex index,
                                              CFIndex maxValues, CFArrayRef* AXSNAP_CF_RETURNS_RETAINED values);
// Copy: +1 in `*values`, one slot per attribute, in order. Without
// kAXCopyMultipleAttributeOptionStopOnError a slot whose read failed holds an
// AXValueRef of kAXValueTypeAXError instead of the value.
extern AXError AXUIElementCopyMultipleAttributeValues(AXUIElementRef element, CFArrayRef attributes,
                                                      AXCopyMultipleAttributeOptions options,
                                                      CFArrayRef* AXSNAP_CF_RETURNS_RETAINED values);
extern AXError AXUIElementIsAttributeSettable(AXUIElementRef element, CFStringRef attribute, Boolean* settable);
extern AXError AXUIElementSetAttributeValue(AXUIElementRef element, CFStringRef attribute, CFTypeRef value);
// Copy: +1 in `*names`.
extern AXError AXUIElementCopyActionNames(AXUIElementRef element, CFArrayRef* AXSNAP_CF_RETURNS_RETAINED names);
extern AXError AXUIElementPerformAction(AXUIElementRef element, CFStringRef action);
extern AXError AXUIElementGetPid(AXUIElementRef element, pid_t* pid);
// On the system-wide element: the process's global timeout, which every
// reference without its own uses; 0 there resets it to the default (about 6 s).
// On any other element: that reference only (not other references equal to
// it); 0 there means "use the current global timeout". Negative is
// kAXErrorIllegalArgument.
extern AXError AXUIElementSetMessagingTimeout(AXUIElementRef element, float timeoutInSeconds);
// Copy: +1 in `*element`. `x`, `y` in global top-left points.
extern AXError AXUIElementCopyElementAtPosition(AXUIElementRef application, float x, float y,
                                                AXUIElementRef* AXSNAP_CF_RETURNS_RETAINED element);

extern Boolean AXIsProcessTrusted(void);
// `options` may hold kAXTrustedCheckOptionPrompt = kCFBooleanTrue to show the
// system prompt when not trusted.
extern Boolean AXIsProcessTrustedWithOptions(CFDictionaryRef options);
// Declared without `const` in Apple's AXUIElement.h.
extern CFStringRef kAXTrustedCheckOptionPrompt;

// AXUIElement.h, the notification API. An observer receives the
// notifications registered on elements of one process; its run loop source
// must be added to a run loop, and the callback runs on that run loop's
// thread while it runs. Releasing the observer removes its source from the
// run loop.
typedef struct AXSNAP_CF_BRIDGED_TYPE(id) __AXObserver* AXObserverRef;
typedef void (*AXObserverCallback)(AXObserverRef observer, AXUIElementRef element, CFStringRef notification,
                                   void* refcon);

extern CFTypeID AXObserverGetTypeID(void);
// Create rule: +1 in `*outObserver` on kAXErrorSuccess.
extern AXError AXObserverCreate(pid_t application, AXObserverCallback callback,
                                AXObserverRef* AXSNAP_CF_RETURNS_RETAINED outObserver);
// kAXErrorNotificationUnsupported when the element (or the system-wide
// element) does not send it; kAXErrorNotificationAlreadyRegistered;
// kAXErrorCannotComplete when messaging the app failed.
extern AXError AXObserverAddNotification(AXObserverRef observer, AXUIElementRef element, CFStringRef notification,
                                         void* refcon);
extern AXError AXObserverRemoveNotification(AXObserverRef observer, AXUIElementRef element, CFStringRef notification);
// Get rule: +0.
extern CFRunLoopSourceRef AXObserverGetRunLoopSource(AXObserverRef observer);

// ---------------------------------------------------------------------------
// CoreGraphics: CGWindow.h

typedef uint32_t CGWindowID;
#define kCGNullWindowID ((CGWindowID)0)

AXSNAP_CF_OPTIONS(uint32_t, CGWindowListOption){
    kCGWindowListOptionAll = 0,
    kCGWindowListOptionOnScreenOnly = (1 << 0),
    kCGWindowListOptionOnScreenAboveWindow = (1 << 1),
    kCGWindowListOptionOnScreenBelowWindow = (1 << 2),
    kCGWindowListOptionIncludingWindow = (1 << 3),
    kCGWindowListExcludeDesktopElements = (1 << 4),
};

AXSNAP_CF_OPTIONS(uint32_t, CGWindowImageOption){
    kCGWindowImageDefault = 0,
    kCGWindowImageBoundsIgnoreFraming = (1 << 0),
    kCGWindowImageShouldBeOpaque = (1 << 1),
    kCGWindowImageOnlyShadows = (1 << 2),
    kCGWindowImageBestResolution = (1 << 3),
    kCGWindowImageNominalResolution = (1 << 4),
};

// Create rule: +1. An array of window dictionaries, front to back.
extern CFArrayRef CGWindowListCopyWindowInfo(CGWindowListOption option,
                                             CGWindowID relativeToWindow) AXSNAP_CF_RETURNS_RETAINED;

// Keys of a window dictionary. Values: CFNumber (int) for the number, owner
// PID and layer; a bounds dictionary (CGRectMakeWithDictionaryRepresentation,
// global top-left points); CFString for the names, present only with Screen
// Recording access; CFNumber (float) alpha; CFBoolean, present only when on screen.
extern const CFStringRef kCGWindowNumber;
extern const CFStringRef kCGWindowOwnerPID;
extern const CFStringRef kCGWindowLayer;
extern const CFStringRef kCGWindowBounds;
extern const CFStringRef kCGWindowName;
extern const CFStringRef kCGWindowOwnerName;
extern const CFStringRef kCGWindowAlpha;
extern const CFStringRef kCGWindowIsOnscreen;

// ---------------------------------------------------------------------------
// CoreGraphics: CGImage, CGColorSpace, CGContext, CGBitmapContext
// (used by the capture fallback before macOS 14)

typedef struct AXSNAP_CF_BRIDGED_TYPE(id) CGImage* CGImageRef;
typedef struct AXSNAP_CF_BRIDGED_TYPE(id) CGColorSpace* CGColorSpaceRef;
typedef struct AXSNAP_CF_BRIDGED_TYPE(id) CGContext* CGContextRef;

AXSNAP_CF_ENUM(uint32_t, CGImageAlphaInfo){
    kCGImageAlphaNone = 0,
    kCGImageAlphaPremultipliedLast = 1,
    kCGImageAlphaPremultipliedFirst = 2,
    kCGImageAlphaLast = 3,
    kCGImageAlphaFirst = 4,
    kCGImageAlphaNoneSkipLast = 5,
    kCGImageAlphaNoneSkipFirst = 6,
    kCGImageAlphaOnly = 7,
};

AXSNAP_CF_OPTIONS(uint32_t, CGBitmapInfo){
    kCGBitmapAlphaInfoMask = 0x1F,          kCGBitmapByteOrderMask = 0x7000,
    kCGBitmapByteOrderDefault = (0 << 12),  kCGBitmapByteOrder16Little = (1 << 12),
    kCGBitmapByteOrder32Little = (2 << 12), kCGBitmapByteOrder16Big = (3 << 12),
    kCGBitmapByteOrder32Big = (4 << 12),
};

// Create rule: +1. NULL when the window is gone or Screen Recording is not
// granted (then it may also return an image of the desktop only).
extern CGImageRef CGWindowListCreateImage(CGRect screenBounds, CGWindowListOption listOption, CGWindowID windowID,
                                          CGWindowImageOption imageOption) AXSNAP_CF_RETURNS_RETAINED
    AXSNAP_API_OBSOLETED("Use ScreenCaptureKit instead.", 10.5, 14.0, 15.0);

// Returns `image` with one more reference (+1). NULL-safe.
extern CGImageRef CGImageRetain(CGImageRef image);
extern size_t CGImageGetWidth(CGImageRef image);
extern size_t CGImageGetHeight(CGImageRef image);
// NULL-safe.
extern void CGImageRelease(CGImageRef image);

// Create rule: +1.
extern CGColorSpaceRef CGColorSpaceCreateDeviceRGB(void) AXSNAP_CF_RETURNS_RETAINED;
// Create rule: +1. NULL when `name` is not a known colour space name.
extern CGColorSpaceRef CGColorSpaceCreateWithName(CFStringRef name) AXSNAP_CF_RETURNS_RETAINED
    AXSNAP_API_AVAILABLE(macos(10.2));
// The IEC 61966-2-1 sRGB colour space, for CGColorSpaceCreateWithName.
extern const CFStringRef kCGColorSpaceSRGB AXSNAP_API_AVAILABLE(macos(10.5));
// NULL-safe.
extern void CGColorSpaceRelease(CGColorSpaceRef space);

// Create rule: +1. `bitmapInfo` combines a CGImageAlphaInfo and a byte order.
extern CGContextRef CGBitmapContextCreate(void* data, size_t width, size_t height, size_t bitsPerComponent,
                                          size_t bytesPerRow, CGColorSpaceRef space,
                                          uint32_t bitmapInfo) AXSNAP_CF_RETURNS_RETAINED;
extern void CGContextDrawImage(CGContextRef c, CGRect rect, CGImageRef image);
// Create rule: +1. A copy of the context's pixels (copy-on-write: the buffer may change after). For OCR.
extern CGImageRef CGBitmapContextCreateImage(CGContextRef context) AXSNAP_CF_RETURNS_RETAINED;
// Create rule: +1. The part of `image` within `rect` (pixels, top-left origin). NULL when they do not meet.
extern CGImageRef CGImageCreateWithImageInRect(CGImageRef image, CGRect rect) AXSNAP_CF_RETURNS_RETAINED;
// NULL-safe.
extern void CGContextRelease(CGContextRef c);

// ---------------------------------------------------------------------------
// CoreGraphics: CGEventTypes.h, CGEvent.h, CGEventSource.h
// CGEventRef and CGEventSourceRef are CF types: release them with CFRelease.

typedef struct AXSNAP_CF_BRIDGED_TYPE(id) __CGEvent* CGEventRef;
typedef struct AXSNAP_CF_BRIDGED_TYPE(id) __CGEventSource* CGEventSourceRef;

typedef uint16_t CGKeyCode;

AXSNAP_CF_ENUM(int32_t, CGEventSourceStateID){
    kCGEventSourceStatePrivate = -1,
    kCGEventSourceStateCombinedSessionState = 0,
    kCGEventSourceStateHIDSystemState = 1,
};

AXSNAP_CF_ENUM(uint32_t, CGEventType){
    kCGEventNull = 0,
    kCGEventLeftMouseDown = 1,
    kCGEventLeftMouseUp = 2,
    kCGEventRightMouseDown = 3,
    kCGEventRightMouseUp = 4,
    kCGEventMouseMoved = 5,
    kCGEventLeftMouseDragged = 6,
    kCGEventRightMouseDragged = 7,
    kCGEventKeyDown = 10,
    kCGEventKeyUp = 11,
    kCGEventFlagsChanged = 12,
    kCGEventScrollWheel = 22,
    kCGEventTabletPointer = 23,
    kCGEventTabletProximity = 24,
    kCGEventOtherMouseDown = 25,
    kCGEventOtherMouseUp = 26,
    kCGEventOtherMouseDragged = 27,
};

AXSNAP_CF_ENUM(uint32_t, CGMouseButton){
    kCGMouseButtonLeft = 0,
    kCGMouseButtonRight = 1,
    kCGMouseButtonCenter = 2,
};

// The NX_*MASK device-independent modifier bits.
AXSNAP_CF_OPTIONS(uint64_t, CGEventFlags){
    kCGEventFlagMaskAlphaShift = 0x00010000,   kCGEventFlagMaskShift = 0x00020000,
    kCGEventFlagMaskControl = 0x00040000,      kCGEventFlagMaskAlternate = 0x00080000,
    kCGEventFlagMaskCommand = 0x00100000,      kCGEventFlagMaskNumericPad = 0x00200000,
    kCGEventFlagMaskHelp = 0x00400000,         kCGEventFlagMaskSecondaryFn = 0x00800000,
    kCGEventFlagMaskNonCoalesced = 0x00000100,
};

AXSNAP_CF_ENUM(uint32_t, CGEventField){
    kCGMouseEventNumber = 0,
    kCGMouseEventClickState = 1,
};

AXSNAP_CF_ENUM(uint32_t, CGScrollEventUnit){
    kCGScrollEventUnitPixel = 0,
    kCGScrollEventUnitLine = 1,
};

AXSNAP_CF_ENUM(uint32_t, CGEventTapLocation){
    kCGHIDEventTap = 0,
    kCGSessionEventTap = 1,
    kCGAnnotatedSessionEventTap = 2,
};

// Create rule: +1 (CFRelease).
extern CGEventSourceRef CGEventSourceCreate(CGEventSourceStateID stateID) AXSNAP_CF_RETURNS_RETAINED;
// Create rule: +1 (CFRelease). `mouseCursorPosition` in global top-left points.
extern CGEventRef CGEventCreateMouseEvent(CGEventSourceRef source, CGEventType mouseType, CGPoint mouseCursorPosition,
                                          CGMouseButton mouseButton) AXSNAP_CF_RETURNS_RETAINED;
// Create rule: +1 (CFRelease).
extern CGEventRef CGEventCreateKeyboardEvent(CGEventSourceRef source, CGKeyCode virtualKey,
                                             bool keyDown) AXSNAP_CF_RETURNS_RETAINED;
// Create rule: +1 (CFRelease). The non-variadic form of CGEventCreateScrollWheelEvent.
extern CGEventRef CGEventCreateScrollWheelEvent2(CGEventSourceRef source, CGScrollEventUnit units, uint32_t wheelCount,
                                                 int32_t wheel1, int32_t wheel2,
                                                 int32_t wheel3) AXSNAP_CF_RETURNS_RETAINED
    AXSNAP_API_AVAILABLE(macos(10.13));
// Only the first 20 UTF-16 code units are used by the receiving app.
extern void CGEventKeyboardSetUnicodeString(CGEventRef event, UniCharCount stringLength, const UniChar* unicodeString);
// The event's flags: a keyboard event is made with the key's own (arrows carry
// SecondaryFn and NumericPad); CGEventSetFlags replaces them all.
extern CGEventFlags CGEventGetFlags(CGEventRef event);
extern void CGEventSetFlags(CGEventRef event, CGEventFlags flags);
// Where the event happens, in global top-left points.
extern void CGEventSetLocation(CGEventRef event, CGPoint location);
extern void CGEventSetIntegerValueField(CGEventRef event, CGEventField field, int64_t value);
// Needs the Accessibility permission; without it the event is dropped silently.
extern void CGEventPost(CGEventTapLocation tap, CGEventRef event);

// ---------------------------------------------------------------------------
// CoreGraphics: CGError.h, CGDirectDisplay.h (displays and their modes)

AXSNAP_CF_ENUM(int32_t, CGError){
    kCGErrorSuccess = 0,
    kCGErrorFailure = 1000,
    kCGErrorIllegalArgument = 1001,
    kCGErrorInvalidConnection = 1002,
    kCGErrorRangeCheck = 1007,
    kCGErrorNoneAvailable = 1011,
};

typedef uint32_t CGDirectDisplayID;
// A CF type; CGDisplayModeRelease is CFRelease that also accepts NULL.
typedef struct AXSNAP_CF_BRIDGED_TYPE(id) CGDisplayMode* CGDisplayModeRef;

// The display with the menu bar: its top-left corner is the origin of the
// global display space. Also connects the process to the window server, which
// some CoreGraphics and ScreenCaptureKit calls expect to have happened.
extern CGDirectDisplayID CGMainDisplayID(void);
// Up to `maxDisplays` active displays into `activeDisplays`, their number into
// `*displayCount`. With `activeDisplays` NULL only the number is returned.
extern CGError CGGetActiveDisplayList(uint32_t maxDisplays, CGDirectDisplayID* activeDisplays, uint32_t* displayCount);
// Global display space: top-left origin, y downwards, points.
extern CGRect CGDisplayBounds(CGDirectDisplayID display);
// Create rule: +1 (CGDisplayModeRelease). NULL when the display is invalid.
extern CGDisplayModeRef CGDisplayCopyDisplayMode(CGDirectDisplayID display) AXSNAP_CF_RETURNS_RETAINED
    AXSNAP_API_AVAILABLE(macos(10.6));
// Width in points.
extern size_t CGDisplayModeGetWidth(CGDisplayModeRef mode) AXSNAP_API_AVAILABLE(macos(10.6));
// Width in pixels of the backing store (twice the points on a Retina mode).
extern size_t CGDisplayModeGetPixelWidth(CGDisplayModeRef mode) AXSNAP_API_AVAILABLE(macos(10.8));
// NULL-safe.
extern void CGDisplayModeRelease(CGDisplayModeRef mode) AXSNAP_API_AVAILABLE(macos(10.6));

// ---------------------------------------------------------------------------
// CoreGraphics: CGWindow.h / CGRemoteOperation.h, Screen Recording permission

// Does not prompt. Unreliable for a child of the process that holds the grant.
extern bool CGPreflightScreenCaptureAccess(void) AXSNAP_API_AVAILABLE(macos(10.15));
// Prompts at most once per process; the grant takes effect after a restart.
extern bool CGRequestScreenCaptureAccess(void) AXSNAP_API_AVAILABLE(macos(10.15));

// ---------------------------------------------------------------------------
// Keyboard layouts (M5): CFData.h; HIToolbox TextInputSources.h and Events.h
// (Carbon.framework); CarbonCore UnicodeUtilities.h and MacTypes.h.

typedef const struct AXSNAP_CF_BRIDGED_TYPE(NSData) __CFData* CFDataRef;
extern CFIndex CFDataGetLength(CFDataRef theData);
// Get rule: the bytes belong to the data object.
extern const UInt8* CFDataGetBytePtr(CFDataRef theData);

typedef SInt32 OSStatus;
typedef UInt32 OptionBits;
enum { noErr = 0 };

typedef struct AXSNAP_CF_BRIDGED_TYPE(id) __TISInputSource* TISInputSourceRef;
// TISGetInputSourceProperty keys. The layout data is a CFDataRef holding a
// UCKeyboardLayout ('uchr'); NULL for input sources without one.
extern const CFStringRef kTISPropertyUnicodeKeyLayoutData AXSNAP_API_AVAILABLE(macos(10.5));
extern const CFStringRef kTISPropertyInputSourceID AXSNAP_API_AVAILABLE(macos(10.5));
// Create rule: +1. The keyboard layout in use; for an input method or mode,
// the layout it types through.
extern TISInputSourceRef TISCopyCurrentKeyboardLayoutInputSource(void) AXSNAP_CF_RETURNS_RETAINED
    AXSNAP_API_AVAILABLE(macos(10.5));
// Create rule: +1. The most recently used ASCII-capable keyboard layout.
extern TISInputSourceRef TISCopyCurrentASCIICapableKeyboardLayoutInputSource(void) AXSNAP_CF_RETURNS_RETAINED
    AXSNAP_API_AVAILABLE(macos(10.5));
// Get rule: +0, owned by the input source; NULL when it has no such property.
extern void* TISGetInputSourceProperty(TISInputSourceRef inputSource, CFStringRef propertyKey)
    AXSNAP_API_AVAILABLE(macos(10.5));
// Events.h: the type of the keyboard used last (UCKeyTranslate's keyboardType).
extern UInt8 LMGetKbdType(void);
// Events.h EventModifiers bits; UCKeyTranslate takes them shifted right by 8.
enum { cmdKey = 1 << 8, shiftKey = 1 << 9 };

// UnicodeUtilities.h. Opaque here: only pointers to the layout data are passed.
typedef struct UCKeyboardLayout UCKeyboardLayout;
enum { kUCKeyActionDown = 0, kUCKeyActionUp = 1, kUCKeyActionAutoKey = 2, kUCKeyActionDisplay = 3 };
extern OSStatus UCKeyTranslate(const UCKeyboardLayout* keyLayoutPtr, UInt16 virtualKeyCode, UInt16 keyAction,
                               UInt32 modifierKeyState, UInt32 keyboardType, OptionBits keyTranslateOptions,
                               UInt32* deadKeyState, UniCharCount maxStringLength, UniCharCount* actualStringLength,
                               UniChar unicodeString[]) AXSNAP_API_AVAILABLE(macos(10.2));

// <pthread.h> on Darwin: nonzero on the process's main thread. Declared here
// for the Linux syntax check only; Apple's libc headers declare it on Darwin.
#if !defined(__APPLE__)
extern int pthread_main_np(void);
#endif

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // AXSNAP_MAC_DECLS_APPLE_C_H_
