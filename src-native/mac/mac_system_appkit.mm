// The real MacSystem (mac_system.h): AppKit for running applications,
// unhiding and activation; `/usr/bin/open -b` for launching; NSScreen for the
// backing scale; ScreenCaptureKit (macOS 14+) or CoreGraphics (12.3-13) for
// one window's pixels; CoreGraphics and a ScreenCaptureKit probe for the
// Screen Recording permission.
//
// Apple documentation: NSRunningApplication, NSWorkspace.runningApplications,
// NSScreen (frame, backingScaleFactor; "Coordinate Systems" in the Cocoa
// Drawing Guide), SCShareableContent, SCContentFilter, SCStreamConfiguration,
// SCScreenshotManager, CGWindowListCreateImage, CGBitmapContextCreate
// ("Supported Pixel Formats" in the Quartz 2D guide),
// CGPreflightScreenCaptureAccess, open(1), posix_spawn(2), environ(7).
//
// Threading: every method runs on the addon's worker thread, never the main
// thread, and Node's main thread never runs an NSRunLoop. Hence an
// @autoreleasepool per call (the worker thread lives for the whole process, so
// its implicit pool would never drain), and completion handlers waited for
// with a bound on a dispatch semaphore instead of a run loop.
//
// Compiled with ARC and blocks.

#include "mac_system.h"

#if defined(__APPLE__) && !defined(AXSNAP_APPLE_DECLS)
#import <AppKit/AppKit.h>
#import <ScreenCaptureKit/ScreenCaptureKit.h>
#else
#include "decls/apple_objc.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#if defined(__APPLE__)
#include <crt_externs.h>
#else
extern char** environ;
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "apple.h"
#include "cf_ref.h"

#if !__has_feature(objc_arc)
#error "mac_system_appkit.mm must be compiled with -fobjc-arc"
#endif

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
    failed_ = error != nil;
    if (error) error_ = Describe(error);
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
  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }

 private:
  std::mutex mu_;
  dispatch_semaphore_t semaphore_;
  bool finished_ = false;
  bool failed_ = false;
  T value_{};
  std::string error_;
};

using ContentResult = Completion<SCShareableContent*>;

std::shared_ptr<ContentResult> RequestShareableContent() {
  auto result = std::make_shared<ContentResult>();
  [SCShareableContent getShareableContentExcludingDesktopWindows:YES
                                             onScreenWindowsOnly:NO
                                               completionHandler:^(SCShareableContent* content, NSError* error) {
                                                 result->Finish(content, error);
                                               }];
  return result;
}

// Global top-left rectangle of a screen. NSScreen frames have their origin at
// the bottom-left of the primary screen with y growing upwards; our Rects (and
// AX, CGWindowList, ScreenCaptureKit) have it at the top-left, y downwards.
Rect TopLeftFrame(NSRect frame, CGFloat primaryHeight) {
  return Rect{frame.origin.x, primaryHeight - (frame.origin.y + frame.size.height), frame.size.width,
              frame.size.height};
}

double OverlapArea(const Rect& a, const Rect& b) {
  double w = std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x);
  double h = std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
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
  auto space = CFRef<CGColorSpaceRef>::Adopt(CGColorSpaceCreateDeviceRGB());
  if (!space) return Fail(ErrorCode::kCaptureFailed, "CGColorSpaceCreateDeviceRGB failed");
  auto context = CFRef<CGContextRef>::Adopt(CGBitmapContextCreate(
      rgba.data(), width, height, 8, width * 4, space.get(), kCGImageAlphaPremultipliedLast | kCGBitmapByteOrder32Big));
  if (!context) return Fail(ErrorCode::kCaptureFailed, "CGBitmapContextCreate failed");
  CGContextDrawImage(context.get(), CGRectMake(0, 0, static_cast<CGFloat>(width), static_cast<CGFloat>(height)),
                     image);
  Unpremultiply(rgba);
  return {};
}

__attribute__((availability(macos, introduced = 14.0)))
Error CaptureWithScreenCaptureKit(uint32_t windowNumber, const Rect& frame, double scale,
                                  CFRef<CGImageRef>& image) {
  auto deadline = Clock::now() + kCaptureBound;

  auto content = RequestShareableContent();
  if (!content->Wait(deadline)) {
    return Fail(ErrorCode::kCaptureFailed, "ScreenCaptureKit did not list the windows within 5 s");
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
    return Fail(ErrorCode::kWindowNotFound,
                "ScreenCaptureKit does not list window " + std::to_string(windowNumber) + " (closed or minimized?)");
  }

  // The size ScreenCaptureKit knows for this window is the one it draws; the
  // caller's frame only stands in when it reports none.
  CGRect bounds = window.frame;
  double w = bounds.size.width > 0 ? bounds.size.width : frame.w;
  double h = bounds.size.height > 0 ? bounds.size.height : frame.h;

  SCContentFilter* filter = [[SCContentFilter alloc] initWithDesktopIndependentWindow:window];
  SCStreamConfiguration* config = [[SCStreamConfiguration alloc] init];
  config.width = static_cast<size_t>(std::lround(std::max(1.0, w * scale)));
  config.height = static_cast<size_t>(std::lround(std::max(1.0, h * scale)));
  config.showsCursor = NO;
  config.ignoreShadowsSingleWindow = YES;
  config.captureResolution = SCCaptureResolutionBest;

  auto shot = std::make_shared<Completion<CFRef<CGImageRef>>>();
  [SCScreenshotManager captureImageWithFilter:filter
                                configuration:config
                            completionHandler:^(CGImageRef captured, NSError* error) {
                              // `captured` is only borrowed for the duration of the handler.
                              shot->Finish(CFRef<CGImageRef>::Adopt(CGImageRetain(captured)), error);
                            }];
  if (!shot->Wait(deadline)) {
    return Fail(ErrorCode::kCaptureFailed, "ScreenCaptureKit did not capture window " +
                                               std::to_string(windowNumber) + " within 5 s");
  }
  if (shot->failed() || !shot->value()) {
    return Fail(ErrorCode::kCaptureFailed, "ScreenCaptureKit could not capture window " +
                                               std::to_string(windowNumber) + ": " + shot->error());
  }
  image = std::move(shot->value());
  return {};
}

Error CaptureWithCoreGraphics(uint32_t windowNumber, CFRef<CGImageRef>& image) {
  image = CFRef<CGImageRef>::Adopt(CGWindowListCreateImage(
      CGRectNull, kCGWindowListOptionIncludingWindow, windowNumber,
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
  Error RunningApps(std::vector<RunningApp>& out) override {
    @autoreleasepool {
      out.clear();
      // NSWorkspace refreshes this list from notifications on the main run
      // loop; in a process whose main thread never runs one it can lag behind
      // launches and quits, so callers confirm a pid before relying on it.
      NSArray<NSRunningApplication*>* apps = NSWorkspace.sharedWorkspace.runningApplications;
      out.reserve(apps.count);
      for (NSRunningApplication* app in apps) {
        if (app.terminated) continue;
        RunningApp entry;
        entry.pid = app.processIdentifier;
        entry.name = ToStd(app.localizedName);
        entry.bundleId = ToStd(app.bundleIdentifier);
        entry.bundlePath = ToStd(app.bundleURL.path);
        entry.regular = app.activationPolicy == NSApplicationActivationPolicyRegular;
        entry.hidden = app.hidden;
        entry.active = app.active;
        out.push_back(std::move(entry));
      }
      return {};
    }
  }

  Error Unhide(int64_t pid) override {
    @autoreleasepool {
      NSRunningApplication* app = nil;
      if (Error err = Find(pid, app)) return err;
      // -unhide answers NO for an app that is not hidden; that is success here.
      if (!app.hidden) return {};
      if (![app unhide]) {
        return Fail(ErrorCode::kActionFailed, "could not unhide the application with pid " + std::to_string(pid));
      }
      return {};
    }
  }

  Error ActivateAllWindows(int64_t pid) override {
    @autoreleasepool {
      NSRunningApplication* app = nil;
      if (Error err = Find(pid, app)) return err;
      if (![app activateWithOptions:NSApplicationActivateAllWindows]) {
        return Fail(ErrorCode::kActionFailed, "could not activate the application with pid " + std::to_string(pid));
      }
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
    // `open` must not write into our stdout: it may be an agent's protocol channel.
    int rc = posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t child = 0;
    if (rc == 0) {
      rc = posix_spawn(&child, argv[0], &actions, nullptr, const_cast<char* const*>(argv), Environment());
    }
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

  // AppKit documents NSScreen for the main thread, but Node's main thread never
  // services AppKit, so there is no main thread to hop to; reading the
  // screen list and its properties from the worker is what remains.
  double BackingScale(const Rect& frame) override {
    @autoreleasepool {
      NSArray<NSScreen*>* screens = NSScreen.screens;
      if (screens.count == 0) return 1.0;
      CGFloat primaryHeight = screens[0].frame.size.height;
      NSScreen* best = screens[0];
      double bestArea = 0;
      for (NSScreen* screen in screens) {
        double area = OverlapArea(frame, TopLeftFrame(screen.frame, primaryHeight));
        if (area > bestArea) {
          bestArea = area;
          best = screen;
        }
      }
      double scale = best.backingScaleFactor;
      return scale > 0 ? scale : 1.0;
    }
  }

  Error CaptureWindow(uint32_t windowNumber, const Rect& frame, double scale, std::vector<uint8_t>& rgba, int& width,
                      int& height) override {
    @autoreleasepool {
      if (!(scale > 0) || !std::isfinite(scale)) scale = 1.0;
      CFRef<CGImageRef> image;
      Error err;
      if (@available(macOS 14.0, *)) {
        err = CaptureWithScreenCaptureKit(windowNumber, frame, scale, image);
      } else {
        err = CaptureWithCoreGraphics(windowNumber, image);
      }
      if (err) return err;

      // The requested scale wins over whatever resolution the capture chose.
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

  Access ScreenRecordingAccess() override {
    if (CGPreflightScreenCaptureAccess()) return Access::kGranted;
    // The preflight answers "no" for a child of the process that holds the
    // grant (a terminal, an editor); ScreenCaptureKit asks the right question.
    // When the user has never been asked, this listing itself makes macOS
    // show the Screen Recording prompt.
    if (@available(macOS 12.3, *)) {
      @autoreleasepool {
        auto probe = RequestShareableContent();
        if (!probe->Wait(Clock::now() + kProbeBound)) return Access::kUnknown;
        if (probe->failed()) return Access::kDenied;
        return probe->value() ? Access::kGranted : Access::kUnknown;
      }
    }
    return Access::kDenied;
  }

  void RequestScreenRecording() override { CGRequestScreenCaptureAccess(); }

  void Sleep(std::chrono::milliseconds ms) override { std::this_thread::sleep_for(ms); }

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

std::unique_ptr<MacSystem> CreateAppKitSystem() { return std::make_unique<AppKitSystem>(); }

}  // namespace axsnap
