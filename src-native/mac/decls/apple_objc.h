// Objective-C declarations of the Foundation, AppKit and ScreenCaptureKit API
// that mac_system_appkit.mm uses, for compiling it without Apple's SDK (see
// scripts/check-macos.mjs). On a Mac the SDK's frameworks are used instead.
//
// Written for this project; it is not a copy of Apple's headers and declares
// only what the backend uses. Selectors, property types and availability
// follow Apple's documentation pages for NSString, NSArray, NSMutableArray,
// NSDictionary, NSMutableDictionary, NSURL, NSError, NSFileManager, NSBundle,
// NSRunningApplication, NSWorkspace, NSWorkspaceOpenConfiguration, NSApplication.ActivationOptions,
// SCShareableContent, SCWindow, SCContentFilter, SCStreamConfiguration,
// SCScreenshotManager and SCStreamError (SCError.h), and for libdispatch's
// dispatch_semaphore and dispatch_time.
//
// Where the root class and libdispatch come from:
//   - darwin targets (-target <arch>-apple-macos12.3): the macOS libc headers
//     of the compile check provide Apple's own <objc/NSObject.h> (objc4) and
//     <dispatch/dispatch.h>, so ARC works against the real root class and
//     dispatch objects are Objective-C objects exactly as on a Mac.
//   - elsewhere (-fobjc-runtime=gnustep-2.0, syntax only): a minimal root
//     NSObject and the dispatch subset are declared here, with dispatch
//     objects as Objective-C objects as well (OS_OBJECT_USE_OBJC), so that ARC
//     manages them in the same way and the source is the same on both.
//
// Availability uses the macros of apple_c.h: with a 12.3 deployment target an
// unguarded use of a macOS 14 API (SCScreenshotManager, ignoreShadowsSingleWindow,
// captureResolution, activateFromApplication:options:) is a
// -Wunguarded-availability error. Deprecations are declared as in the SDK, so
// that they are diagnosed once the deployment target reaches them.
#ifndef AXSNAP_MAC_DECLS_APPLE_OBJC_H_
#define AXSNAP_MAC_DECLS_APPLE_OBJC_H_

#include "apple_c.h"

#ifdef __OBJC__

#if defined(__APPLE__)

#include <dispatch/dispatch.h>
#include <objc/NSObject.h>

#else  // !__APPLE__: our own root class and libdispatch subset

#include <stdint.h>

typedef signed char BOOL;
#define YES ((BOOL)1)
#define NO ((BOOL)0)
#if defined(__cplusplus)
#define nil nullptr
#else
#define nil ((id)0)
#endif
typedef long NSInteger;
typedef unsigned long NSUInteger;

#pragma clang assume_nonnull begin

__attribute__((objc_root_class))
@interface NSObject {
  Class isa;
}
+ (instancetype)alloc;
+ (instancetype)new;
+ (Class)class;
- (instancetype)init;
- (Class)class;
- (BOOL)isKindOfClass:(Class)aClass;
- (BOOL)isEqual:(nullable id)object;
- (NSUInteger)hash;
@end

// dispatch objects are Objective-C objects, retained and released by ARC.
@protocol OS_dispatch_object
@end
@protocol OS_dispatch_semaphore <OS_dispatch_object>
@end
typedef NSObject<OS_dispatch_semaphore>* dispatch_semaphore_t;

typedef uint64_t dispatch_time_t;
#define DISPATCH_TIME_NOW (0ull)
#define DISPATCH_TIME_FOREVER (~0ull)
#define NSEC_PER_SEC 1000000000ull
#define NSEC_PER_MSEC 1000000ull

#ifdef __cplusplus
extern "C" {
#endif
// +1, managed by ARC.
extern dispatch_semaphore_t dispatch_semaphore_create(intptr_t value) __attribute__((ns_returns_retained));
// Non-zero when `timeout` passed first.
extern intptr_t dispatch_semaphore_wait(dispatch_semaphore_t dsema, dispatch_time_t timeout);
extern intptr_t dispatch_semaphore_signal(dispatch_semaphore_t dsema);
extern dispatch_time_t dispatch_time(dispatch_time_t when, int64_t delta);
#ifdef __cplusplus
}  // extern "C"
#endif

#pragma clang assume_nonnull end

#endif  // __APPLE__

#define AXSNAP_RETURNS_INNER_POINTER __attribute__((objc_returns_inner_pointer))

#pragma clang assume_nonnull begin

// ---------------------------------------------------------------------------
// Foundation

typedef struct {
  unsigned long state;
  id __unsafe_unretained _Nullable* _Nullable itemsPtr;
  unsigned long* _Nullable mutationsPtr;
  unsigned long extra[5];
} NSFastEnumerationState;

@protocol NSFastEnumeration
- (NSUInteger)countByEnumeratingWithState:(NSFastEnumerationState*)state
                                  objects:(id __unsafe_unretained _Nullable[_Nonnull])buffer
                                    count:(NSUInteger)len;
@end

@interface NSString : NSObject
- (BOOL)isEqualToString:(NSString*)aString;
// Borrowed from the string: valid while the string lives.
@property(nullable, readonly) const char* UTF8String AXSNAP_RETURNS_INNER_POINTER;
// nil when the bytes are not UTF-8.
+ (nullable instancetype)stringWithUTF8String:(const char*)nullTerminatedCString;
// Path helpers (NSString(NSStringPathExtensions)), for launchApp's bundle listing.
@property(readonly, copy) NSString* pathExtension;
@property(readonly, copy) NSString* lastPathComponent;
@property(readonly, copy) NSString* stringByDeletingPathExtension;
- (NSString*)stringByAppendingPathComponent:(NSString*)str;
// issue 35 M4: hidden entries (".DS_Store", ".Trash") are skipped in the sub-folder scan.
- (BOOL)hasPrefix:(NSString*)str;
@end

@interface NSArray<__covariant ObjectType> : NSObject <NSFastEnumeration>
@property(readonly) NSUInteger count;
- (ObjectType)objectAtIndex:(NSUInteger)index;
- (ObjectType)objectAtIndexedSubscript:(NSUInteger)idx;
// issue 12 item 4: a one-window list for SCContentFilter.
+ (instancetype)arrayWithObject:(ObjectType)anObject;
+ (instancetype)array;
@end

@interface NSMutableArray<ObjectType> : NSArray <ObjectType>
- (void)addObject:(ObjectType)anObject;
@end

@interface NSDictionary<__covariant KeyType, __covariant ObjectType> : NSObject
+ (instancetype)dictionary;
@end

@interface NSMutableDictionary<KeyType, ObjectType> : NSDictionary <KeyType, ObjectType>
- (void)setObject:(ObjectType)anObject forKey:(KeyType)aKey;
@end

@interface NSURL : NSObject
@property(nullable, readonly, copy) NSString* path;
+ (NSURL*)fileURLWithPath:(NSString*)path isDirectory:(BOOL)isDir;
@end

@class NSError;

@interface NSFileManager : NSObject
@property(class, readonly, strong) NSFileManager* defaultManager;
// nil (and *error set when given) when the folder cannot be read.
- (nullable NSArray<NSString*>*)contentsOfDirectoryAtPath:(NSString*)path error:(NSError* _Nullable* _Nullable)error;
// issue 35 M4: YES when something is at the path; *isDirectory says whether it is a folder (symbolic links followed).
- (BOOL)fileExistsAtPath:(NSString*)path isDirectory:(nullable BOOL*)isDirectory;
@end

@interface NSBundle : NSObject
// nil when nothing bundle-like is at the path.
+ (nullable instancetype)bundleWithPath:(NSString*)path;
@property(nullable, readonly, copy) NSString* bundleIdentifier;
@property(nullable, readonly, copy) NSString* executablePath;
// Localized where the bundle localizes the key (CFBundleDisplayName, CFBundleName).
- (nullable id)objectForInfoDictionaryKey:(NSString*)key;
@end

@interface NSError : NSObject
@property(readonly, copy) NSString* domain;
@property(readonly) NSInteger code;
@property(readonly, copy) NSString* localizedDescription;
@end

// ---------------------------------------------------------------------------
// AppKit

typedef NSUInteger NSApplicationActivationOptions;
enum : NSApplicationActivationOptions {
  NSApplicationActivateAllWindows = 1 << 0,
  // Has no effect from macOS 14 on (cooperative activation); before 14 it is
  // what lets activation happen while another app is active.
  NSApplicationActivateIgnoringOtherApps AXSNAP_API_DEPRECATED(
      "ignoringOtherApps is deprecated in macOS 14 and will have no effect.", 10.6, 14.0) = 1 << 1,
};

typedef NSInteger NSApplicationActivationPolicy;
enum : NSApplicationActivationPolicy {
  NSApplicationActivationPolicyRegular = 0,
  NSApplicationActivationPolicyAccessory = 1,
  NSApplicationActivationPolicyProhibited = 2,
};

@interface NSRunningApplication : NSObject
// nil when no such process is running (or it is not an application).
+ (nullable instancetype)runningApplicationWithProcessIdentifier:(pid_t)pid;
@property(readonly) pid_t processIdentifier;
@property(nullable, readonly, copy) NSString* localizedName;
@property(nullable, readonly, copy) NSString* bundleIdentifier;
@property(nullable, readonly, copy) NSURL* bundleURL;
@property(readonly) NSApplicationActivationPolicy activationPolicy;
// hidden, active and terminated change only when the main run loop turns in a
// common mode; in a process that never runs it they keep their first value.
@property(readonly, getter=isHidden) BOOL hidden;
@property(readonly, getter=isActive) BOOL active;
@property(readonly, getter=isTerminated) BOOL terminated;
// NO when the request could not be sent; the change itself happens later.
- (BOOL)unhide;
// From macOS 14 on a request that the system may decline (cooperative activation).
- (BOOL)activateWithOptions:(NSApplicationActivationOptions)options;
// Activation requested in the activation context of `application`: YES when the
// system allows it, which it does when `application` is the active app (or was
// yielded to by it).
- (BOOL)activateFromApplication:(NSRunningApplication*)application
                        options:(NSApplicationActivationOptions)options AXSNAP_API_AVAILABLE(macos(14.0));
@end

// macOS 10.15: how NSWorkspace opens an application.
@interface NSWorkspaceOpenConfiguration : NSObject
+ (instancetype)configuration;
@property(copy) NSArray<NSString*>* arguments;
@property(copy) NSDictionary<NSString*, NSString*>* environment;
@property BOOL activates;
@end

@interface NSWorkspace : NSObject
@property(class, readonly, strong) NSWorkspace* sharedWorkspace;
// Refreshed only when the main run loop runs (see NSRunningApplication).
@property(readonly, copy) NSArray<NSRunningApplication*>* runningApplications;
// nil when Launch Services knows no app with that bundle id.
- (nullable NSURL*)URLForApplicationWithBundleIdentifier:(NSString*)bundleIdentifier;
// macOS 10.15. The handler runs on a concurrent queue, once, with the app or an error.
- (void)openApplicationAtURL:(NSURL*)applicationURL
               configuration:(NSWorkspaceOpenConfiguration*)configuration
           completionHandler:
               (void (^_Nullable)(NSRunningApplication* _Nullable app, NSError* _Nullable error))completionHandler;
@end

// ---------------------------------------------------------------------------
// ScreenCaptureKit (macOS 12.3)

typedef UInt32 OSType;

// SCError.h: the domain of ScreenCaptureKit's NSErrors, and the codes we read.
extern NSString* const SCStreamErrorDomain AXSNAP_API_AVAILABLE(macos(12.3));
typedef NSInteger SCStreamErrorCode;
enum : SCStreamErrorCode {
  // Screen Recording is not granted to this process.
  SCStreamErrorUserDeclined = -3801,
};

AXSNAP_API_AVAILABLE(macos(12.3))
@interface SCWindow : NSObject
@property(readonly) CGWindowID windowID;
// Top-left origin, global points.
@property(readonly) CGRect frame;
@property(nullable, readonly) NSString* title;
@property(readonly, getter=isOnScreen) BOOL onScreen;
@end

// issue 12 item 4: the display a display-based filter shows.
AXSNAP_API_AVAILABLE(macos(12.3))
@interface SCDisplay : NSObject
@property(readonly) CGDirectDisplayID displayID;
@property(readonly) NSInteger width;
@property(readonly) NSInteger height;
// Top-left origin, global points.
@property(readonly) CGRect frame;
@end

AXSNAP_API_AVAILABLE(macos(12.3))
@interface SCShareableContent : NSObject
// The handler runs on an arbitrary queue. Fails with an NSError when Screen
// Recording is not granted.
+ (void)getShareableContentExcludingDesktopWindows:(BOOL)excludeDesktopWindows
                               onScreenWindowsOnly:(BOOL)onScreenWindowsOnly
                                 completionHandler:(void (^)(SCShareableContent* _Nullable shareableContent,
                                                             NSError* _Nullable error))completionHandler;
@property(readonly) NSArray<SCWindow*>* windows;
@property(readonly) NSArray<SCDisplay*>* displays;
@end

AXSNAP_API_AVAILABLE(macos(12.3))
@interface SCContentFilter : NSObject
// Only this window, wherever it is, whatever covers it.
- (instancetype)initWithDesktopIndependentWindow:(SCWindow*)window;
// issue 12 items 4, 5: the display, showing only `includedWindows`.
- (instancetype)initWithDisplay:(SCDisplay*)display includingWindows:(NSArray<SCWindow*>*)includedWindows;
// Pixels per point of the filter's content (a window's own backing scale).
@property(readonly) float pointPixelScale AXSNAP_API_AVAILABLE(macos(14.0));
// The content's size and place, in screen points.
@property(readonly) CGRect contentRect AXSNAP_API_AVAILABLE(macos(14.0));
@end

typedef NSInteger SCCaptureResolutionType;
enum : SCCaptureResolutionType {
  SCCaptureResolutionAutomatic = 0,
  SCCaptureResolutionBest = 1,
  SCCaptureResolutionNominal = 2,
};

AXSNAP_API_AVAILABLE(macos(12.3))
@interface SCStreamConfiguration : NSObject
// Output size in pixels.
@property(nonatomic, assign) size_t width;
@property(nonatomic, assign) size_t height;
@property(nonatomic, assign) BOOL showsCursor;
// issue 12 items 4, 5: NO only scales down (a smaller content stays small in
// the output); YES scales the content to the output size.
@property(nonatomic, assign) BOOL scalesToFit;
// The part of the display to capture, in the display's points (display filters).
@property(nonatomic, assign) CGRect sourceRect;
// A CoreVideo pixel format ('BGRA' by default).
@property(nonatomic, assign) OSType pixelFormat;
@property(nonatomic, assign) BOOL ignoreShadowsSingleWindow AXSNAP_API_AVAILABLE(macos(14.0));
@property(nonatomic, assign) SCCaptureResolutionType captureResolution AXSNAP_API_AVAILABLE(macos(14.0));
@end

AXSNAP_API_AVAILABLE(macos(14.0))
@interface SCScreenshotManager : NSObject
// The image is borrowed (+0) for the duration of the handler; retain it to keep it.
+ (void)captureImageWithFilter:(SCContentFilter*)contentFilter
                 configuration:(SCStreamConfiguration*)config
             completionHandler:
                 (nullable void (^)(CGImageRef _Nullable sampleBuffer, NSError* _Nullable error))completionHandler;
@end

// ---------------------------------------------------------------------------
// Vision (OCR, issue 20): VNRecognizeTextRequest over a CGImage. Apple's pages
// developer.apple.com/documentation/vision/vnrecognizetextrequest (and its
// minimumTextHeight, supportedRecognitionLanguages()), .../vnimagerequesthandler,
// .../vnrecognizedtextobservation.

typedef float VNConfidence;

typedef NSInteger VNRequestTextRecognitionLevel;
enum : VNRequestTextRecognitionLevel {
  VNRequestTextRecognitionLevelAccurate = 0,
  VNRequestTextRecognitionLevelFast = 1,
};

AXSNAP_API_AVAILABLE(macos(10.13))
@interface VNObservation : NSObject
@property(readonly, nonatomic, assign) VNConfidence confidence;
@end

AXSNAP_API_AVAILABLE(macos(10.13))
@interface VNDetectedObjectObservation : VNObservation
// Normalised to the image (0..1), origin at the bottom left.
@property(readonly, nonatomic, assign) CGRect boundingBox;
@end

AXSNAP_API_AVAILABLE(macos(10.13))
@interface VNRectangleObservation : VNDetectedObjectObservation
@end

AXSNAP_API_AVAILABLE(macos(10.15))
@interface VNRecognizedText : NSObject
@property(readonly, nonatomic, copy) NSString* string;
@property(readonly, nonatomic, assign) VNConfidence confidence;
@end

AXSNAP_API_AVAILABLE(macos(10.15))
@interface VNRecognizedTextObservation : VNRectangleObservation
// At most `maxCandidateCount` (10) readings, best first.
- (NSArray<VNRecognizedText*>*)topCandidates:(NSUInteger)maxCandidateCount;
@end

AXSNAP_API_AVAILABLE(macos(10.13))
@interface VNRequest : NSObject
// Filled by -[VNImageRequestHandler performRequests:error:] before it returns.
@property(readonly, nonatomic, copy, nullable) NSArray<VNObservation*>* results;
@end

AXSNAP_API_AVAILABLE(macos(10.13))
@interface VNImageBasedRequest : VNRequest
@end

AXSNAP_API_AVAILABLE(macos(10.15))
@interface VNRecognizeTextRequest : VNImageBasedRequest
@property(readwrite, nonatomic, assign) VNRequestTextRecognitionLevel recognitionLevel;
@property(readwrite, nonatomic, assign) BOOL usesLanguageCorrection;
// BCP 47 codes in priority order ("en-US", "zh-Hans").
@property(readwrite, nonatomic, copy) NSArray<NSString*>* recognitionLanguages;
@property(readwrite, nonatomic, assign) BOOL automaticallyDetectsLanguage AXSNAP_API_AVAILABLE(macos(13.0));
// Relative to the image's height; text smaller than it is ignored. Apple's page gives the default as 1/32.
@property(readwrite, nonatomic, assign) float minimumTextHeight;
// The BCP 47 codes this request reads, for its revision and recognitionLevel (macOS 12; the class method
// +supportedRecognitionLanguagesForTextRecognitionLevel:revision:error: before, deprecated in 12.0).
- (nullable NSArray<NSString*>*)supportedRecognitionLanguagesAndReturnError:(NSError**)error
    AXSNAP_API_AVAILABLE(macos(12.0));
@end

AXSNAP_API_AVAILABLE(macos(10.13))
@interface VNImageRequestHandler : NSObject
- (instancetype)initWithCGImage:(CGImageRef)image options:(NSDictionary*)options;
// Synchronous: the requests' results are set when it returns.
- (BOOL)performRequests:(NSArray<VNRequest*>*)requests error:(NSError* _Nullable* _Nullable)error;
@end

#pragma clang assume_nonnull end

#endif  // __OBJC__

#endif  // AXSNAP_MAC_DECLS_APPLE_OBJC_H_
