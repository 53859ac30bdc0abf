// The Objective-C half of the macOS backend, behind a C++ interface: AppKit
// (running apps, unhide, activate), `open -b`, CoreGraphics display modes (backing scale),
// ScreenCaptureKit / CoreGraphics capture, the Screen Recording preflight and
// probe, and autorelease pools around worker jobs.
// Everything else on macOS (AX, CF, CGWindowList, CGEvent) is C and lives in
// the C++ files beside this one, so the backend's logic builds on Linux
// against a fake CoreFoundation/AX layer; only this interface is swapped.
//
// Real implementation: mac_system_appkit.mm. Test double:
// test/native/macfake/fake_mac_system.{h,cc}.
//
// Apple references: NSRunningApplication, NSWorkspace.runningApplications (not used: see ProcessIds), proc_listallpids,
// CGDisplayCopyDisplayMode (pixel width / point width), SCShareableContent, SCScreenshotManager (14.0),
// CGWindowListCreateImage (before 14), CGPreflightScreenCaptureAccess.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../core/ocr.h"
#include "../core/types.h"
#include "apple.h"
#include "capture_plan.h"
#include "key_layout.h"

namespace axsnap {

struct RunningApp {
  int64_t pid = 0;
  std::string name;        // localizedName
  std::string bundleId;    // bundleIdentifier; empty for bare executables
  std::string bundlePath;  // bundleURL.path; empty when unknown
  bool regular = true;     // activationPolicy == NSApplicationActivationPolicyRegular
  bool accessory = false;  // activationPolicy == NSApplicationActivationPolicyAccessory (menu-bar apps)
  bool hidden = false;     // NSRunningApplication.hidden
  bool active = false;     // NSRunningApplication.active (frontmost)
};

enum class Access { kGranted, kDenied, kUnknown };

// HIServices' private `AXError _AXUIElementGetWindow(AXUIElementRef, CGWindowID*)`:
// the window server's number (kCGWindowNumber, "a unique value within the
// user session", CGWindow.h) of an AX window. In no SDK header; window
// managers declare it themselves (AltTab's
// src/api-wrappers/private-apis/ApplicationServices.HIServices.framework.swift).
using AXGetWindowFn = AXError (*)(AXUIElementRef element, CGWindowID* windowNumber);

class MacSystem {
 public:
  virtual ~MacSystem() = default;

  // Every process id of the system, applications or not (proc_listallpids).
  // The running apps are built from it (MacBackend::RunningAppsNow), not from
  // NSWorkspace.runningApplications: Apple documents that list as changing
  // only while the main run loop runs in a common mode, which Node's never
  // does, so it would stay the list of its first read (issue 35 M6).
  virtual Error ProcessIds(std::vector<int64_t>& out) = 0;
  // The application running as `pid`, asked of the system afresh
  // (+[NSRunningApplication runningApplicationWithProcessIdentifier:]); false
  // when `pid` is no application (a daemon, a command-line tool) or is gone.
  // hidden and active are as AppKit first saw them: decide hidden and
  // frontmost with AX (AXHidden, AXFrontmost), not with these fields.
  virtual bool AppOfProcess(int64_t pid, RunningApp& out) = 0;
  // Whether a process with this pid exists (kill(pid, 0); one we may not signal counts).
  virtual bool ProcessExists(int64_t pid) = 0;
  virtual Error Unhide(int64_t pid) = 0;
  // activateWithOptions: NSApplicationActivateAllWindows.
  virtual Error ActivateAllWindows(int64_t pid) = 0;
  // `/usr/bin/open -b <bundleId>`, spawned without a shell, waited for until `deadline`.
  virtual Error OpenBundle(const std::string& bundleId, std::chrono::steady_clock::time_point deadline) = 0;

  // Application bundles in the standard folders (/Applications and its
  // Utilities, /System/Applications and its Utilities, ~/Applications) and
  // one level of folders inside them (Adobe's "/Applications/Adobe Photoshop
  // 2025/", Setapp's, ~/Applications/Chrome Apps.localized), each read
  // through NSBundle: bundle id, display name, executable, path.
  virtual Error InstalledApps(std::vector<LaunchableApp>& out) = 0;
  // The bundle Launch Services finds for a bundle id wherever it is
  // (URLForApplicationWithBundleIdentifier:), read as InstalledApps reads
  // one; `found` false when it knows none.
  virtual Error AppForBundleId(const std::string& bundleId, LaunchableApp& out, bool& found) = 0;
  // NSWorkspace openApplicationAtURL:configuration:completionHandler: for a
  // bundle id (URLForApplicationWithBundleIdentifier:) or an .app path
  // (request.id starting with "/"), with the request's arguments and
  // environment, activating the app. Waits for the completion handler until
  // `deadline` (kTimeout after: the app may still start); `pid` is the
  // NSRunningApplication's. An app already running is activated, not started
  // again, and its pid given.
  virtual Error OpenApplication(const LaunchRequest& request, int64_t& pid,
                                std::chrono::steady_clock::time_point deadline) = 0;

  // Pixels per point of the screen holding most of `frame` (global top-left points).
  virtual double BackingScale(const Rect& frame) = 0;
  // One window's pixels as RGBA rows (stride = width * 4), exactly the window
  // `frame` (global top-left points) at `scale` pixels per point: pixel (0, 0)
  // is the frame's top-left corner, whatever `filter` and the window's own
  // backing scale. Without cursor or shadow: ScreenCaptureKit on macOS 14+
  // with `filter` (PlanScreenCapture sizes it), CoreGraphics before (`filter`
  // unused). Bounded by `deadline` and by 5 s. kCaptureFailed with the reason
  // otherwise. `pass` (CaptureGate) is asked for every request the capture
  // makes, answered inside its completion handler, and abandoned when one is
  // given up on.
  virtual Error CaptureWindow(uint32_t windowNumber, const Rect& frame, double scale, CaptureFilter filter,
                              const std::shared_ptr<CapturePass>& pass, std::vector<uint8_t>& rgba, int& width,
                              int& height, std::chrono::steady_clock::time_point deadline) = 0;

  // Screen Recording, silently: CGPreflightScreenCaptureAccess, confirmed by
  // readable names of other processes' windows (the preflight answers no in
  // a child of the process that holds the grant). Never shows a prompt.
  virtual Access ScreenRecordingPreflight() = 0;
  // The ScreenCaptureKit probe (SCShareableContent): asks the right question,
  // but when the user has never been asked, the listing itself makes macOS
  // show the Screen Recording prompt. Only where prompting is allowed.
  virtual Access ScreenRecordingProbe() = 0;
  // CGRequestScreenCaptureAccess: shows the system prompt once per process.
  virtual void RequestScreenRecording() = 0;

  // M5: the current keyboard layout as UCKeyTranslate gives it for key codes
  // 0-127 (key_layout.h), read on the calling thread. Text Input Sources want
  // the main thread (recent macOS asserts the main dispatch queue inside
  // TSMGetInputSourceProperty), so the backend calls this on the JavaScript
  // thread, which in Node's main isolate is the process's main thread; on any
  // other thread the layout is unknown (out.known false, out.why says so).
  virtual void KeyboardLayout(KeyLayout& out) = 0;

  // Autorelease pool around one worker job (objc_autoreleasePoolPush/Pop):
  // the worker thread lives as long as the backend and never drains an
  // implicit pool. Pop gets what Push returned, on the same thread.
  virtual void* PushAutoreleasePool() = 0;
  virtual void PopAutoreleasePool(void* pool) = 0;

  // The OCR engine (Vision, ocr_vision.h), made when recognizeText first needs it; nullptr where there is
  // none (the fake layer: its build leaves Vision out), which recognizeText answers with kOcrUnavailable.
  virtual std::unique_ptr<OcrEngine> CreateOcrEngine() { return nullptr; }

  // _AXUIElementGetWindow, looked up at run time and never linked (a private
  // symbol may go in any macOS release, and the addon must still load then):
  // nullptr when this system has none, and the backend matches the window
  // server's list by frame instead.
  virtual AXGetWindowFn AXGetWindow() = 0;

  // Lets the app settle after recovery steps. The test double records it instead.
  virtual void Sleep(std::chrono::milliseconds ms) = 0;
};

// mac_system_appkit.mm. Only on macOS.
std::unique_ptr<MacSystem> CreateAppKitSystem();

}  // namespace axsnap
