// The real MacSystem (mac_system.h): AppKit and the window server's window
// list for running applications, AppKit for unhiding and activation;
// `/usr/bin/open -b` for launching; CoreGraphics display modes for the backing
// scale; ScreenCaptureKit (macOS 14+) or CoreGraphics (12.3-13) for one
// window's pixels; CoreGraphics and the window list for the Screen Recording
// permission (silently), and a ScreenCaptureKit probe that may prompt.
//
// Apple documentation: NSRunningApplication (its overview on when properties
// change), NSWorkspace.runningApplications, NSRunningApplication
// activate(options:) / activate(from:options:) and "Passing control from one
// app to another with cooperative activation" (macOS 14), CGWindowListCopyWindowInfo,
// CGGetActiveDisplayList, CGDisplayBounds, CGDisplayCopyDisplayMode,
// SCShareableContent, SCContentFilter, SCStreamConfiguration,
// SCScreenshotManager, SCStreamError, CGWindowListCreateImage,
// CGBitmapContextCreate ("Supported Pixel Formats" in the Quartz 2D guide),
// CGColorSpaceCreateWithName, CGPreflightScreenCaptureAccess, open(1),
// posix_spawn(2) and posix_spawnattr_setflags(3) (POSIX_SPAWN_CLOEXEC_DEFAULT),
// environ(7), proc_listallpids (libproc.h), NSWorkspace
// URLForApplicationWithBundleIdentifier:, NSFileManager fileExistsAtPath:isDirectory:.
//
// Threading: every method runs on the addon's worker thread, never the main
// thread, and Node's main thread never runs an NSRunLoop. Hence an
// @autoreleasepool per call (the worker thread lives for the whole process, so
// its implicit pool would never drain), and completion handlers waited for
// with a bound on a dispatch semaphore instead of a run loop. It also means
// that whatever AppKit refreshes from the main run loop is frozen here:
// NSWorkspace.runningApplications, NSRunningApplication.hidden/active/terminated
// and the NSScreen list. We read the process table (proc_listallpids) and the
// window server (CoreGraphics) instead, and resolve pids to fresh
// NSRunningApplication objects (runningApplicationWithProcessIdentifier:).
//
// Compiled with ARC and blocks.

#include "mac_system.h"
#include "ocr_vision.h"

#if defined(__APPLE__) && !defined(AXSNAP_APPLE_DECLS)
#import <AppKit/AppKit.h>
#import <ScreenCaptureKit/ScreenCaptureKit.h>
#else
#include "decls/apple_objc.h"
#endif

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#if defined(__APPLE__)
#include <crt_externs.h>
#include <libproc.h>
#else
extern char** environ;
// libproc.h (macOS 10.7): the Linux syntax check has no such header.
extern "C" int proc_listallpids(void* buffer, int buffersize);
#endif

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <type_traits>
#include <utility>

#include "apple.h"
#include "cf_convert.h"
#include "cf_ref.h"

#if !__has_feature(objc_arc)
#error "mac_system_appkit.mm must be compiled with -fobjc-arc"
#endif

// The runtime functions @autoreleasepool compiles to, exported by libobjc
// (Apple's and GNUstep's) but declared in no public Apple header: a pool that
// spans a whole worker job, pushed and popped from C++ (MacSystem).
extern "C" void* objc_autoreleasePoolPush(void);
extern "C" void objc_autoreleasePoolPop(void* pool);

namespace axsnap {
namespace {

using Clock = std::chrono::steady_clock;

// ScreenCaptureKit calls are bounded by this, per the interface (5 s).
constexpr auto kCaptureBound = std::chrono::seconds(5);
// The permission probe answers in milliseconds when it answers at all.
constexpr auto kProbeBound = std::chrono::seconds(2);
// A bitmap larger than this is a bug upstream, not a window.
constexpr size_t kMaxPixels = size_t{16384} * 16384;

std::string ToStd(NSString* s) {
  const char* utf8 = s ? s.UTF8String : nullptr;
  return utf8 ? std::string(utf8) : std::string();
}

// An NSError is never dropped: its text travels in the Error we return.
std::string Describe(NSError* error) {
  if (!error) return "unknown error";
  return ToStd(error.localizedDescription) + " (" + ToStd(error.domain) + " " + std::to_string(error.code) + ")";
}

Error Fail(ErrorCode code, std::string message) { return Error{code, std::move(message)}; }

// What a ScreenCaptureKit call that did not answer in time may be waiting for (review 3, M7): macOS 15 asks,
// about monthly, whether an app that captures without the system picker may go on doing so. Whether the
// capture waits for that alert is unverified; the advice holds either way.
std::string UnansweredCaptureNote() {
  if (@available(macOS 15.0, *))
    return " (if macOS is asking whether this app may keep capturing the screen, answer it, then try again; "
           "see docs/macos.md, Troubleshooting)";
  return "";
}

char** Environment() {
#if defined(__APPLE__)
  // A loadable bundle (our .node) cannot link against `environ` (environ(7)).
  return *_NSGetEnviron();
#else
  return environ;
#endif
}

// The result of an Objective-C completion handler, shared by the handler and
// the waiting thread. The handler keeps the state alive, so when it fires after
// the waiter gave up (ScreenCaptureKit may answer arbitrarily late) it writes
// to live memory that nobody reads any more, and what it delivered is released
// with the state.
template <typename T>
class Completion {
 public:
  Completion() : semaphore_(dispatch_semaphore_create(0)) {}

  // From the handler, on any queue. Only the first call counts.
  void Finish(T value, NSError* error) {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    finished_ = true;
    value_ = std::move(value);
    error_ = error;
    dispatch_semaphore_signal(semaphore_);
  }

  // False when `deadline` passed first; a later Finish is then ignored.
  bool Wait(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - Clock::now()).count();
    dispatch_semaphore_wait(semaphore_, dispatch_time(DISPATCH_TIME_NOW, std::max<int64_t>(left, 0)));
    std::lock_guard<std::mutex> lock(mu_);
    // Checked under the lock rather than trusting the wait's result: the
    // handler may have finished between the timeout and here.
    if (finished_) return true;
    finished_ = true;
    return false;
  }

  // Valid after Wait returned true.
  T& value() { return value_; }
  bool failed() const { return error_ != nil; }
  // The handler's NSError (nil when it succeeded), for callers that tell its
  // codes apart; error() is its text for messages.
  NSError* nsError() const { return error_; }
  std::string error() const { return Describe(error_); }

 private:
  std::mutex mu_;
  dispatch_semaphore_t semaphore_;
  bool finished_ = false;
  T value_{};
  NSError* error_ = nil;
};

using ContentResult = Completion<SCShareableContent*>;

// `pass` (CaptureGate, may be null for the permission probe) counts the
// request until its completion handler has run: the process-wide capture gate
// stays closed until ScreenCaptureKit has answered, even when the waiter gave
// up, and no longer than that whatever SCK does with the finished block.
__attribute__((availability(macos, introduced = 12.3))) std::shared_ptr<ContentResult> RequestShareableContent(
    std::shared_ptr<CapturePass> pass = nullptr) {
  auto result = std::make_shared<ContentResult>();
  if (pass) pass->Ask();
  // On-screen windows only: that is what a capture can show (a minimized
  // window or one on another Space has no current pixels), and the listing is
  // cheaper.
  [SCShareableContent getShareableContentExcludingDesktopWindows:YES
                                             onScreenWindowsOnly:YES
                                               completionHandler:^(SCShareableContent* content, NSError* error) {
                                                 result->Finish(content, error);
                                                 if (pass) pass->Answered();
                                               }];
  return result;
}

// The one ScreenCaptureKit error that is about the permission: Screen
// Recording is not granted to this process. Everything else (a broken
// connection to the capture service, a timeout inside it, ...) says nothing
// about the grant.
__attribute__((availability(macos, introduced = 12.3))) bool IsUserDeclined(NSError* error) {
  return error && [error.domain isEqualToString:SCStreamErrorDomain] && error.code == SCStreamErrorUserDeclined;
}

double OverlapArea(const Rect& a, const Rect& b) {
  double w = std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x);
  double h = std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

// One entry of the window server's list (CGWindowListCopyWindowInfo). The
// owner pid and the layer are there without any permission; the window's name
// only with Screen Recording.
struct ListedWindow {
  pid_t pid = 0;
  int layer = 0;
  double alpha = 1;
  bool named = false;  // a non-empty kCGWindowName
};

// Layer 0 (kCGNormalWindowLevel) holds applications' ordinary windows; the
// menu bar, the Dock, the desktop and overlays live on other layers.
constexpr int kNormalLayer = 0;

// Front to back. Empty when there is no window server session to ask.
std::vector<ListedWindow> ListWindows(CGWindowListOption option) {
  std::vector<ListedWindow> out;
  auto list = CFRef<CFArrayRef>::Adopt(CGWindowListCopyWindowInfo(option, kCGNullWindowID));
  if (!list) return out;
  CFIndex count = CFArrayGetCount(list.get());
  out.reserve(static_cast<size_t>(std::max<CFIndex>(count, 0)));
  for (CFIndex i = 0; i < count; ++i) {
    CFTypeRef item = CFArrayGetValueAtIndex(list.get(), i);
    if (!item || CFGetTypeID(item) != CFDictionaryGetTypeID()) continue;
    auto dict = static_cast<CFDictionaryRef>(item);
    ListedWindow w;
    w.pid = static_cast<pid_t>(CFToNumber(CFDictionaryGetValue(dict, kCGWindowOwnerPID)).value_or(0));
    w.layer = static_cast<int>(CFToNumber(CFDictionaryGetValue(dict, kCGWindowLayer)).value_or(0));
    w.alpha = CFToNumber(CFDictionaryGetValue(dict, kCGWindowAlpha)).value_or(1);
    auto name = CFToString(CFDictionaryGetValue(dict, kCGWindowName));
    w.named = name && !name->empty();
    if (w.pid > 0) out.push_back(w);
  }
  return out;
}

// True when this process can read the name of a window that another process
// owns. The window server hands out those names only to a process that holds
// the Screen Recording grant (its own or its responsible parent's), so this
// answers without a prompt, and also for a child process for which
// CGPreflightScreenCaptureAccess answers no. False proves nothing: no other
// window may have a name right now.
bool OtherWindowNamesVisible() {
  const pid_t self = getpid();
  for (const ListedWindow& w : ListWindows(kCGWindowListOptionOnScreenOnly | kCGWindowListExcludeDesktopElements)) {
    if (w.pid != self && w.layer == kNormalLayer && w.named) return true;
  }
  return false;
}

// A guess at the active application: the owner of the frontmost visible
// ordinary window. NSWorkspace.frontmostApplication would be the answer, but it
// is refreshed from the main run loop like the rest of NSWorkspace. Wrong for
// an active app without windows, which only costs the caller a fallback.
NSRunningApplication* GuessActiveApplication() {
  const pid_t self = getpid();
  for (const ListedWindow& w : ListWindows(kCGWindowListOptionOnScreenOnly | kCGWindowListExcludeDesktopElements)) {
    if (w.pid == self || w.layer != kNormalLayer || !(w.alpha > 0)) continue;
    NSRunningApplication* app = [NSRunningApplication runningApplicationWithProcessIdentifier:w.pid];
    return app && !app.terminated ? app : nil;
  }
  return nil;
}

// Whether `pid` names a live process (one we may not signal counts).
bool ProcessExists(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

// One application bundle as launchApp lists it: bundle id, display name
// (CFBundleDisplayName, else CFBundleName, else the file name), executable,
// path. False when `path` is no bundle with an id.
bool ReadBundle(NSString* path, LaunchableApp& app) {
  NSBundle* bundle = [NSBundle bundleWithPath:path];
  if (!bundle || !bundle.bundleIdentifier) return false;
  app.id = ToStd(bundle.bundleIdentifier);
  app.path = ToStd(path);
  app.executable = ToStd(bundle.executablePath.lastPathComponent);
  auto info = [bundle](NSString* key) {
    id value = [bundle objectForInfoDictionaryKey:key];
    return [value isKindOfClass:[NSString class]] ? ToStd((NSString*)value) : std::string();
  };
  app.name = info(@"CFBundleDisplayName");
  if (app.name.empty()) app.name = info(@"CFBundleName");
  if (app.name.empty()) app.name = ToStd(path.lastPathComponent.stringByDeletingPathExtension);
  return true;
}

// RAII for a display mode (Create rule: +1, released with CGDisplayModeRelease).
struct DisplayModeRelease {
  void operator()(CGDisplayModeRef mode) const { CGDisplayModeRelease(mode); }
};
using DisplayMode = std::unique_ptr<std::remove_pointer_t<CGDisplayModeRef>, DisplayModeRelease>;

// Pixels per point of a display's current mode: 2 on a Retina mode (also a
// scaled "looks like" one, whose backing store is twice its points), 1
// otherwise. 0 when the display has no mode (it went away).
double DisplayScale(CGDirectDisplayID display) {
  DisplayMode mode(CGDisplayCopyDisplayMode(display));
  if (!mode) return 0;
  size_t points = CGDisplayModeGetWidth(mode.get());
  size_t pixels = CGDisplayModeGetPixelWidth(mode.get());
  return points > 0 && pixels > 0 ? static_cast<double>(pixels) / static_cast<double>(points) : 0;
}

// CGBitmapContext draws 8-bit RGBA only with premultiplied alpha; the PNG
// encoder wants straight alpha. Only the translucent pixels (rounded window
// corners, shadows) change.
void Unpremultiply(std::vector<uint8_t>& rgba) {
  for (size_t i = 0; i + 3 < rgba.size(); i += 4) {
    unsigned a = rgba[i + 3];
    if (a == 0 || a == 255) continue;
    for (size_t c = 0; c < 3; ++c) rgba[i + c] = static_cast<uint8_t>(std::min(255u, (rgba[i + c] * 255u + a / 2) / a));
  }
}

// Draws `image` into an RGBA buffer of `width` x `height` pixels, scaling if
// the image's own size differs.
Error ImageToRgba(CGImageRef image, size_t width, size_t height, std::vector<uint8_t>& rgba) {
  if (width == 0 || height == 0 || width > kMaxPixels / height) {
    return Fail(ErrorCode::kCaptureFailed,
                "cannot capture a window of " + std::to_string(width) + "x" + std::to_string(height) + " pixels");
  }
  rgba.assign(width * height * 4, 0);
  // sRGB, the colour space a PNG without colour tags is read in. DeviceRGB
  // would hand over the display's own values uncorrected: the same window
  // would come out in different colours on different displays.
  auto space = CFRef<CGColorSpaceRef>::Adopt(CGColorSpaceCreateWithName(kCGColorSpaceSRGB));
  if (!space) return Fail(ErrorCode::kCaptureFailed, "CGColorSpaceCreateWithName(kCGColorSpaceSRGB) failed");
  auto context = CFRef<CGContextRef>::Adopt(CGBitmapContextCreate(
      rgba.data(), width, height, 8, width * 4, space.get(), kCGImageAlphaPremultipliedLast | kCGBitmapByteOrder32Big));
  if (!context) return Fail(ErrorCode::kCaptureFailed, "CGBitmapContextCreate failed");
  CGContextDrawImage(context.get(), CGRectMake(0, 0, static_cast<CGFloat>(width), static_cast<CGFloat>(height)), image);
  Unpremultiply(rgba);
  return {};
}

// The display holding most of `frame` (global points), for a display-based filter.
__attribute__((availability(macos, introduced = 12.3))) SCDisplay* DisplayOf(SCShareableContent* content,
                                                                             const Rect& frame) {
  SCDisplay* best = nil;
  double bestArea = 0;
  for (SCDisplay* display in content.displays) {
    CGRect b = display.frame;
    double area = OverlapArea(frame, Rect{b.origin.x, b.origin.y, b.size.width, b.size.height});
    if (area > bestArea) {
      bestArea = area;
      best = display;
    }
  }
  return best;
}

// One capture with `kind` (capture_plan.h):
//   kWindow   initWithDesktopIndependentWindow: - the window alone;
//   kDisplay  initWithDisplay:includingWindows:@[window] - the display showing
//             only that window, cropped to the window with sourceRect (the
//             retry for GPU-rendered windows the window filter gives black).
// Either way the output is the window's frame: sized from the filter's own
// pixels per point (pointPixelScale: the window's backing scale, which may be
// lower than its display's) with scalesToFit YES, so the window fills the
// image; the caller redraws it at frame x scale. `pass` goes into every
// completion handler and is abandoned when one is given up on.
__attribute__((availability(macos, introduced = 14.0))) Error CaptureWithScreenCaptureKit(
    uint32_t windowNumber, const Rect& frame, double scale, CaptureFilter kind,
    const std::shared_ptr<CapturePass>& pass, Clock::time_point until, CFRef<CGImageRef>& image) {
  // The caller's deadline, and never more than 5 s.
  const auto deadline = std::min(until, Clock::now() + kCaptureBound);

  auto content = RequestShareableContent(pass);
  if (!content->Wait(deadline)) {
    if (pass) pass->Abandon();
    return Fail(ErrorCode::kCaptureFailed,
                "ScreenCaptureKit did not list the windows in time" + UnansweredCaptureNote());
  }
  if (IsUserDeclined(content->nsError())) {
    return Fail(ErrorCode::kPermissionDenied,
                "Screen Recording is not granted to this process (System Settings > Privacy & Security > "
                "Screen Recording): " +
                    content->error());
  }
  if (content->failed() || !content->value()) {
    return Fail(ErrorCode::kCaptureFailed,
                "ScreenCaptureKit could not list the windows (is Screen Recording granted?): " + content->error());
  }

  SCWindow* window = nil;
  for (SCWindow* candidate in content->value().windows) {
    if (candidate.windowID == windowNumber) {
      window = candidate;
      break;
    }
  }
  if (!window) {
    return Fail(ErrorCode::kWindowNotFound, "ScreenCaptureKit does not list window " + std::to_string(windowNumber) +
                                                " on screen (closed, minimized, hidden or on another Space?)");
  }

  // The frame ScreenCaptureKit knows for this window is the one it draws; the
  // caller's frame only stands in when it reports none.
  CGRect bounds = window.frame;
  Rect shown = frame;
  if (bounds.size.width > 0 && bounds.size.height > 0) {
    shown = Rect{bounds.origin.x, bounds.origin.y, bounds.size.width, bounds.size.height};
  }

  SCContentFilter* filter = nil;
  Rect displayFrame;
  if (kind == CaptureFilter::kDisplay) {
    SCDisplay* display = DisplayOf(content->value(), shown);
    if (!display) {
      return Fail(ErrorCode::kCaptureFailed,
                  "window " + std::to_string(windowNumber) + " is on no display ScreenCaptureKit lists");
    }
    CGRect d = display.frame;
    displayFrame = Rect{d.origin.x, d.origin.y, d.size.width, d.size.height};
    filter = [[SCContentFilter alloc] initWithDisplay:display includingWindows:[NSArray arrayWithObject:window]];
  } else {
    filter = [[SCContentFilter alloc] initWithDesktopIndependentWindow:window];
  }

  // The window's own pixels per point; the display's when unknown.
  double contentScale = 0;
  if (@available(macOS 14.0, *)) contentScale = filter.pointPixelScale;
  const ScreenCapturePlan plan = PlanScreenCapture(kind, shown, contentScale, scale, displayFrame);

  SCStreamConfiguration* config = [[SCStreamConfiguration alloc] init];
  config.width = plan.width;
  config.height = plan.height;
  config.scalesToFit = plan.scalesToFit ? YES : NO;
  if (plan.cropped) {
    config.sourceRect = CGRectMake(plan.sourceRect.x, plan.sourceRect.y, plan.sourceRect.w, plan.sourceRect.h);
  }
  config.showsCursor = NO;
  config.ignoreShadowsSingleWindow = YES;
  config.captureResolution = SCCaptureResolutionBest;

  auto shot = std::make_shared<Completion<CFRef<CGImageRef>>>();
  std::shared_ptr<CapturePass> held = pass;
  if (held) held->Ask();
  [SCScreenshotManager captureImageWithFilter:filter
                                configuration:config
                            completionHandler:^(CGImageRef captured, NSError* error) {
                              // `captured` is only borrowed for the duration of the handler.
                              shot->Finish(CFRef<CGImageRef>::Adopt(CGImageRetain(captured)), error);
                              if (held) held->Answered();  // the capture gate may open
                            }];
  if (!shot->Wait(deadline)) {
    if (pass) pass->Abandon();
    return Fail(ErrorCode::kCaptureFailed, "ScreenCaptureKit did not capture window " + std::to_string(windowNumber) +
                                               " in time" + UnansweredCaptureNote());
  }
  if (IsUserDeclined(shot->nsError())) {
    return Fail(ErrorCode::kPermissionDenied,
                "Screen Recording is not granted to this process (System Settings > Privacy & Security > "
                "Screen Recording): " +
                    shot->error());
  }
  if (shot->failed() || !shot->value()) {
    return Fail(ErrorCode::kCaptureFailed, "ScreenCaptureKit could not capture window " + std::to_string(windowNumber) +
                                               " (" + CaptureFilterName(kind) + " filter): " + shot->error());
  }
  image = std::move(shot->value());
  return {};
}

Error CaptureWithCoreGraphics(uint32_t windowNumber, CFRef<CGImageRef>& image) {
  // Without the grant CGWindowListCreateImage does not fail: it returns the
  // desktop picture or a redacted window, which would pass for a screenshot.
  // The preflight alone would refuse a child of the process that holds the
  // grant (a terminal), which captures fine; readable window names prove the
  // grant for it.
  if (!CGPreflightScreenCaptureAccess() && !OtherWindowNamesVisible()) {
    return Fail(ErrorCode::kPermissionDenied,
                "Screen Recording is not granted to this process (System Settings > Privacy & Security > "
                "Screen Recording); without it macOS returns blank or redacted window images");
  }
  image = CFRef<CGImageRef>::Adopt(
      CGWindowListCreateImage(CGRectNull, kCGWindowListOptionIncludingWindow, windowNumber,
                              kCGWindowImageBoundsIgnoreFraming | kCGWindowImageBestResolution));
  if (!image || CGImageGetWidth(image.get()) == 0 || CGImageGetHeight(image.get()) == 0) {
    return Fail(ErrorCode::kCaptureFailed, "CGWindowListCreateImage returned no image for window " +
                                               std::to_string(windowNumber) +
                                               " (closed, minimized, or Screen Recording not granted)");
  }
  return {};
}

class AppKitSystem final : public MacSystem {
 public:
  std::unique_ptr<OcrEngine> CreateOcrEngine() override { return CreateVisionEngine(); }

  // proc_listallpids answers how many pids it wrote (bytes / sizeof(pid_t));
  // the table can grow between the sizing call and the reading one, so the
  // buffer has room to spare and is grown when the answer fills it.
  Error ProcessIds(std::vector<int64_t>& out) override {
    out.clear();
    int count = proc_listallpids(nullptr, 0);
    if (count <= 0) return Fail(ErrorCode::kInternal, std::string("proc_listallpids: ") + std::strerror(errno));
    for (int attempt = 0; attempt < 4; ++attempt) {
      std::vector<pid_t> pids(static_cast<size_t>(count) + 64);
      const int bytes = static_cast<int>(std::min<size_t>(pids.size() * sizeof(pid_t), INT_MAX));
      const int got = proc_listallpids(pids.data(), bytes);
      if (got < 0) return Fail(ErrorCode::kInternal, std::string("proc_listallpids: ") + std::strerror(errno));
      if (static_cast<size_t>(got) < pids.size()) {
        for (int i = 0; i < got; ++i)
          if (pids[static_cast<size_t>(i)] > 0) out.push_back(pids[static_cast<size_t>(i)]);
        return {};
      }
      count = got * 2;
    }
    return Fail(ErrorCode::kInternal, "proc_listallpids: the process table kept growing");
  }

  // hidden and active are filled in as AppKit reports them, but they are
  // frozen at the object's first read in this process (see the top of the
  // file): callers read AXHidden / AXFrontmost for decisions.
  bool AppOfProcess(int64_t pid, RunningApp& out) override {
    @autoreleasepool {
      if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return false;
      // Asks Launch Services about this pid now, unlike NSWorkspace's list.
      NSRunningApplication* app =
          [NSRunningApplication runningApplicationWithProcessIdentifier:static_cast<pid_t>(pid)];
      if (!app || app.terminated) return false;
      out.pid = pid;
      out.name = ToStd(app.localizedName);
      out.bundleId = ToStd(app.bundleIdentifier);
      out.bundlePath = ToStd(app.bundleURL.path);
      out.regular = app.activationPolicy == NSApplicationActivationPolicyRegular;
      out.accessory = app.activationPolicy == NSApplicationActivationPolicyAccessory;
      out.hidden = app.hidden;
      out.active = app.active;
      return true;
    }
  }

  bool ProcessExists(int64_t pid) override {
    return pid > 0 && pid <= std::numeric_limits<pid_t>::max() && axsnap::ProcessExists(static_cast<pid_t>(pid));
  }

  Error Unhide(int64_t pid) override {
    @autoreleasepool {
      NSRunningApplication* app = nil;
      if (Error err = Find(pid, app)) return err;
      // Always asked: `hidden` may be stale, and unhiding a visible app is
      // harmless. -unhide answering NO is not an error by itself, since it may
      // answer NO for an app that is not hidden; the caller checks AXHidden.
      // Only an app that quit meanwhile is reported.
      if (![app unhide] && !ProcessExists(static_cast<pid_t>(pid))) {
        return Fail(ErrorCode::kAppNotFound, "the application with pid " + std::to_string(pid) + " quit");
      }
      return {};
    }
  }

  // Asks for activation; the caller checks that the app became frontmost.
  Error ActivateAllWindows(int64_t pid) override {
    @autoreleasepool {
      NSRunningApplication* app = nil;
      if (Error err = Find(pid, app)) return err;
      if (@available(macOS 14.0, *)) {
        // Cooperative activation: activation is a request that the system
        // grants when it comes from the active app (or one it yielded to).
        // This process is never active, so activating from
        // NSRunningApplication.currentApplication is refused by design, and
        // the ignoring-other-apps option no longer has an effect. Asking in
        // the context of the app that is active now hands activation over
        // from it; the plain request stays as the fallback.
        NSRunningApplication* active = GuessActiveApplication();
        if (active && active.processIdentifier != app.processIdentifier &&
            [app activateFromApplication:active options:NSApplicationActivateAllWindows]) {
          return {};
        }
        if ([app activateWithOptions:NSApplicationActivateAllWindows]) return {};
        return Fail(ErrorCode::kActionFailed,
                    "macOS declined to activate the application with pid " + std::to_string(pid) +
                        " (since macOS 14 activation is a request that the system may refuse)");
      } else {
        // Before 14 the default only activates when no app is active, which
        // is never the case while the user works: ignoring other apps is what
        // makes the request happen.
        if ([app activateWithOptions:NSApplicationActivateAllWindows | NSApplicationActivateIgnoringOtherApps]) {
          return {};
        }
        return Fail(ErrorCode::kActionFailed, "could not activate the application with pid " + std::to_string(pid) +
                                                  " (it quit, or it is not an application that can be activated)");
      }
    }
  }

  // The standard folders, then one level of folders inside each: suites
  // keep their apps in a folder of their own ("/Applications/Adobe Photoshop
  // 2025/", "/Applications/Setapp/", "~/Applications/Chrome Apps.localized/").
  // Deeper bundles, and those elsewhere (/System/Library/CoreServices), are
  // found by bundle id through Launch Services (AppForBundleId).
  Error InstalledApps(std::vector<LaunchableApp>& out) override {
    @autoreleasepool {
      out.clear();
      std::set<std::string> seen;
      std::vector<std::string> folders = {"/Applications", "/Applications/Utilities", "/System/Applications",
                                          "/System/Applications/Utilities"};
      if (const char* home = std::getenv("HOME")) folders.push_back(std::string(home) + "/Applications");
      NSFileManager* fm = NSFileManager.defaultManager;
      std::set<std::string> scanned;
      // The .app bundles directly in `dir`; its other folders when `inner` is given.
      auto scan = [&](NSString* dir, std::vector<NSString*>* inner) {
        if (!dir || !scanned.insert(ToStd(dir)).second) return;
        NSArray<NSString*>* names = [fm contentsOfDirectoryAtPath:dir error:nil];
        for (NSString* entry in names) {
          NSString* path = [dir stringByAppendingPathComponent:entry];
          if (![entry.pathExtension isEqualToString:@"app"]) {
            BOOL isDir = NO;
            if (inner && ![entry hasPrefix:@"."] && [fm fileExistsAtPath:path isDirectory:&isDir] && isDir)
              inner->push_back(path);
            continue;
          }
          LaunchableApp app;
          // The first folder that has a bundle id wins, as Launch Services prefers /Applications.
          if (!ReadBundle(path, app) || !seen.insert(app.id).second) continue;
          out.push_back(std::move(app));
        }
      };
      std::vector<NSString*> inner;
      for (const std::string& folder : folders) scan([NSString stringWithUTF8String:folder.c_str()], &inner);
      for (NSString* dir : inner) scan(dir, nullptr);
      return {};
    }
  }

  Error AppForBundleId(const std::string& bundleId, LaunchableApp& out, bool& found) override {
    @autoreleasepool {
      found = false;
      NSString* id = [NSString stringWithUTF8String:bundleId.c_str()];
      if (!id) return Fail(ErrorCode::kInvalidArgument, "the bundle id is not UTF-8");
      NSURL* url = [NSWorkspace.sharedWorkspace URLForApplicationWithBundleIdentifier:id];
      found = url && url.path && ReadBundle(url.path, out);
      return {};
    }
  }

  Error OpenApplication(const LaunchRequest& request, int64_t& pid, Clock::time_point deadline) override {
    @autoreleasepool {
      pid = 0;
      NSString* id = [NSString stringWithUTF8String:request.id.c_str()];
      if (!id) return Fail(ErrorCode::kInvalidArgument, "the app id is not UTF-8");
      NSURL* url = request.id.rfind('/', 0) == 0
                       ? [NSURL fileURLWithPath:id isDirectory:YES]
                       : [NSWorkspace.sharedWorkspace URLForApplicationWithBundleIdentifier:id];
      if (!url) return Fail(ErrorCode::kAppNotFound, "Launch Services knows no application " + request.id);
      NSWorkspaceOpenConfiguration* config = [NSWorkspaceOpenConfiguration configuration];
      config.activates = YES;
      NSMutableArray<NSString*>* args = [NSMutableArray array];
      for (const std::string& a : request.args) {
        NSString* arg = [NSString stringWithUTF8String:a.c_str()];
        if (!arg) return Fail(ErrorCode::kInvalidArgument, "a launch argument is not UTF-8");
        [args addObject:arg];
      }
      config.arguments = args;
      if (request.envGiven) {
        NSMutableDictionary<NSString*, NSString*>* env = [NSMutableDictionary dictionary];
        for (const auto& [k, v] : request.env) {
          NSString* key = [NSString stringWithUTF8String:k.c_str()];
          NSString* value = [NSString stringWithUTF8String:v.c_str()];
          if (key && value) [env setObject:value forKey:key];
        }
        config.environment = env;
      }
      auto result = std::make_shared<Completion<pid_t>>();
      [NSWorkspace.sharedWorkspace openApplicationAtURL:url
                                          configuration:config
                                      completionHandler:^(NSRunningApplication* app, NSError* error) {
                                        result->Finish(app ? app.processIdentifier : 0, error);
                                      }];
      if (!result->Wait(deadline))
        return Fail(ErrorCode::kTimeout,
                    "NSWorkspace did not say by the deadline whether " + request.id + " started; it may still start");
      if (result->failed())
        return Fail(ErrorCode::kActionFailed, "could not open " + request.id + ": " + result->error());
      pid = result->value();
      return {};
    }
  }

  Error OpenBundle(const std::string& bundleId, Clock::time_point deadline) override {
    // No shell: the bundle id is one argv entry whatever it contains.
    const char* argv[] = {"/usr/bin/open", "-b", bundleId.c_str(), nullptr};

    if (Clock::now() >= deadline) {
      return Fail(ErrorCode::kTimeout, "no time left to run `open -b " + bundleId + "`");
    }

    posix_spawn_file_actions_t actions;
    if (int rc = posix_spawn_file_actions_init(&actions)) {
      return Fail(ErrorCode::kInternal, std::string("posix_spawn_file_actions_init: ") + std::strerror(rc));
    }
    posix_spawnattr_t attr;
    if (int rc = posix_spawnattr_init(&attr)) {
      posix_spawn_file_actions_destroy(&actions);
      return Fail(ErrorCode::kInternal, std::string("posix_spawnattr_init: ") + std::strerror(rc));
    }
    // `open` must not write into our stdout: it may be an agent's protocol channel.
    int rc = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
#if defined(__APPLE__)
    // Nor inherit any other descriptor of the host (sockets, pipes, files
    // opened without O_CLOEXEC): with this Apple extension only the three
    // opened above reach the child.
    if (rc == 0) rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_CLOEXEC_DEFAULT);
#endif
    pid_t child = 0;
    if (rc == 0) {
      rc = posix_spawn(&child, argv[0], &actions, &attr, const_cast<char* const*>(argv), Environment());
    }
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      return Fail(ErrorCode::kInternal, std::string("could not run /usr/bin/open: ") + std::strerror(rc));
    }

    int status = 0;
    for (;;) {
      pid_t done = waitpid(child, &status, WNOHANG);
      if (done == child) break;
      if (done < 0 && errno != EINTR) {
        return Fail(ErrorCode::kInternal, std::string("waitpid(/usr/bin/open): ") + std::strerror(errno));
      }
      if (Clock::now() >= deadline) {
        kill(child, SIGKILL);
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
        return Fail(ErrorCode::kTimeout, "`open -b " + bundleId + "` did not finish before the deadline");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
    if (WIFEXITED(status)) {
      return Fail(ErrorCode::kAppNotFound, "`open -b " + bundleId + "` failed (exit status " +
                                               std::to_string(WEXITSTATUS(status)) +
                                               "): no application with that bundle identifier?");
    }
    return Fail(ErrorCode::kInternal, "`open -b " + bundleId + "` was ended by a signal");
  }

  // CoreGraphics rather than NSScreen: NSScreen is main-thread AppKit whose
  // list is refreshed from the main run loop, so on this worker it would
  // neither be safe nor notice displays attached later. CGDisplayBounds is in
  // the same global top-left points as `frame`.
  double BackingScale(const Rect& frame) override {
    CGDirectDisplayID best = CGMainDisplayID();
    uint32_t count = 0;
    if (CGGetActiveDisplayList(0, nullptr, &count) == kCGErrorSuccess && count > 0) {
      std::vector<CGDirectDisplayID> displays(count);
      if (CGGetActiveDisplayList(count, displays.data(), &count) != kCGErrorSuccess) count = 0;
      double bestArea = 0;
      for (uint32_t i = 0; i < count && i < displays.size(); ++i) {
        CGRect b = CGDisplayBounds(displays[i]);
        double area = OverlapArea(frame, Rect{b.origin.x, b.origin.y, b.size.width, b.size.height});
        if (area > bestArea) {
          bestArea = area;
          best = displays[i];
        }
      }
    }
    // A frame on no display (off screen, or its display just went away) gets
    // the main display's scale.
    double scale = DisplayScale(best);
    if (!(scale > 0)) scale = DisplayScale(CGMainDisplayID());
    return scale > 0 && std::isfinite(scale) ? scale : 1.0;
  }

  Error CaptureWindow(uint32_t windowNumber, const Rect& frame, double scale, CaptureFilter filter,
                      const std::shared_ptr<CapturePass>& pass, std::vector<uint8_t>& rgba, int& width, int& height,
                      Clock::time_point deadline) override {
    @autoreleasepool {
      if (!(scale > 0) || !std::isfinite(scale)) scale = 1.0;
      CFRef<CGImageRef> image;
      Error err;
      if (@available(macOS 14.0, *)) {
        err = CaptureWithScreenCaptureKit(windowNumber, frame, scale, filter, pass, deadline, image);
      } else {
        err = CaptureWithCoreGraphics(windowNumber, image);
      }
      if (err) return err;

      // The requested scale wins over whatever resolution the capture chose:
      // the image is redrawn at frame x scale, so its pixels map to points
      // from the frame's origin whichever filter and backing scale produced it.
      size_t w = CGImageGetWidth(image.get());
      size_t h = CGImageGetHeight(image.get());
      if (frame.w > 0 && frame.h > 0) {
        w = static_cast<size_t>(std::max(1L, std::lround(frame.w * scale)));
        h = static_cast<size_t>(std::max(1L, std::lround(frame.h * scale)));
      }
      if (w > static_cast<size_t>(std::numeric_limits<int>::max()) ||
          h > static_cast<size_t>(std::numeric_limits<int>::max())) {
        return Fail(ErrorCode::kCaptureFailed, "the captured image is too large");
      }
      if (Error e = ImageToRgba(image.get(), w, h, rgba)) return e;
      width = static_cast<int>(w);
      height = static_cast<int>(h);
      return {};
    }
  }

  // Silent: never shows a prompt (MacSystem).
  Access ScreenRecordingPreflight() override {
    if (CGPreflightScreenCaptureAccess()) return Access::kGranted;
    // The preflight answers "no" for a child of the process that holds the
    // grant (a terminal, an editor). Readable names of other processes'
    // windows prove the grant without a prompt.
    if (OtherWindowNamesVisible()) return Access::kGranted;
    return Access::kDenied;
  }

  // ScreenCaptureKit asks the right question, but when the user has never
  // been asked, this listing itself makes macOS show the Screen Recording
  // prompt: only on the prompting path (requestPermissions).
  Access ScreenRecordingProbe() override {
    if (ScreenRecordingPreflight() == Access::kGranted) return Access::kGranted;
    if (@available(macOS 12.3, *)) {
      @autoreleasepool {
        auto probe = RequestShareableContent();
        if (!probe->Wait(Clock::now() + kProbeBound)) return Access::kUnknown;
        if (probe->failed()) {
          if (IsUserDeclined(probe->nsError())) return Access::kDenied;
          // Any other failure says nothing about the grant: kUnknown. Access
          // has no room for the NSError's text (probe->error()), so it goes no
          // further than here; a capture that fails the same way reports it
          // in its Error.
          return Access::kUnknown;
        }
        return probe->value() ? Access::kGranted : Access::kUnknown;
      }
    }
    return Access::kDenied;
  }

  void RequestScreenRecording() override { CGRequestScreenCaptureAccess(); }

  // Text Input Sources and UCKeyTranslate (key_layout_tis.cc), on the main thread only.
  void KeyboardLayout(KeyLayout& out) override { ReadCurrentKeyLayout(out); }

  void Sleep(std::chrono::milliseconds ms) override { std::this_thread::sleep_for(ms); }

  // RTLD_DEFAULT searches every image loaded in the process, HIServices (which
  // the addon links through ApplicationServices) included. Looked up once.
  AXGetWindowFn AXGetWindow() override {
    static AXGetWindowFn fn = reinterpret_cast<AXGetWindowFn>(dlsym(RTLD_DEFAULT, "_AXUIElementGetWindow"));
    return fn;
  }

  // One pool per worker job (MacBackend::BeginJob), around the per-call
  // @autoreleasepool blocks: it also drains what the C++ side's CF and AX
  // calls autorelease.
  void* PushAutoreleasePool() override { return objc_autoreleasePoolPush(); }
  void PopAutoreleasePool(void* pool) override {
    if (pool) objc_autoreleasePoolPop(pool);
  }

 private:
  static Error Find(int64_t pid, NSRunningApplication* __strong& app) {
    if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) {
      return Fail(ErrorCode::kAppNotFound, "no application with pid " + std::to_string(pid));
    }
    // Asks the system directly, unlike NSWorkspace's cached list.
    app = [NSRunningApplication runningApplicationWithProcessIdentifier:static_cast<pid_t>(pid)];
    if (!app || app.terminated) {
      return Fail(ErrorCode::kAppNotFound, "no running application with pid " + std::to_string(pid));
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<MacSystem> CreateAppKitSystem() {
  // Connects this process to the window server before anything else needs it:
  // SCContentFilter's initWithDesktopIndependentWindow: aborts the process
  // (CGS_REQUIRE_INIT) in a process that never called a CoreGraphics display
  // function, and a Node process may well not have.
  (void)CGMainDisplayID();
  return std::make_unique<AppKitSystem>();
}

}  // namespace axsnap
