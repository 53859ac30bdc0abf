// A scripted MacSystem (src-native/mac/mac_system.h) over the fake world of
// fake_cf.h: the process table is the world's apps and its `processes` (no
// application: AppOfProcess answers false for those), the recovery steps
// (unhide, activate, open -b) change the world the way the app is scripted to
// react (FakeApp::recoverOn), capture returns a deterministic gradient, and
// everything it is asked to do is logged:
//   system unhide <pid>
//   system activate <pid>
//   system open -b <bundleId>
//   system open application <bundleId or path> args=[a,b] env=K1,K2   (NSWorkspace openApplicationAtURL:)
//   system launch services <bundleId>                   (URLForApplicationWithBundleIdentifier:, issue 35 M4)
//   system capture <windowNumber> <width>x<height>      (or "... -> failed: <why>")
//   system capture <windowNumber> <width>x<height> (display filter)
//                                                        a capture with ScreenCaptureKit's display filter
//   system request screen recording
//   system sleep <ms>                                    (never actually sleeps)
//   system keyboard layout off the main thread           (KeyboardLayout asked off the main thread)
#pragma once

#include <cstdint>
#include <memory>

#include "../../../src-native/mac/mac_system.h"

namespace axsnap {

class FakeMacSystem : public MacSystem {
 public:
  Error ProcessIds(std::vector<int64_t>& out) override;
  bool AppOfProcess(int64_t pid, RunningApp& out) override;
  bool ProcessExists(int64_t pid) override;
  Error Unhide(int64_t pid) override;
  Error ActivateAllWindows(int64_t pid) override;
  Error OpenBundle(const std::string& bundleId, std::chrono::steady_clock::time_point deadline) override;
  Error InstalledApps(std::vector<LaunchableApp>& out) override;
  Error AppForBundleId(const std::string& bundleId, LaunchableApp& out, bool& found) override;
  Error OpenApplication(const LaunchRequest& request, int64_t& pid,
                        std::chrono::steady_clock::time_point deadline) override;
  double BackingScale(const Rect& frame) override;
  Error CaptureWindow(uint32_t windowNumber, const Rect& frame, double scale, CaptureFilter filter,
                      const std::shared_ptr<CapturePass>& pass, std::vector<uint8_t>& rgba, int& width, int& height,
                      std::chrono::steady_clock::time_point deadline) override;
  Access ScreenRecordingPreflight() override;
  Access ScreenRecordingProbe() override;
  void RequestScreenRecording() override;
  // M5: the world's keyboardLayout (fake_mac_system.cc models what UCKeyTranslate gives on each);
  // "none": no layout data. Off the process's main thread: unknown, logged (Apple asserts there).
  void KeyboardLayout(KeyLayout& out) override;
  void* PushAutoreleasePool() override;
  void PopAutoreleasePool(void* pool) override;
  // FakeAXUIElementGetWindow, or null when the world says the system lacks it (axGetWindow: false).
  AXGetWindowFn AXGetWindow() override;
  void Sleep(std::chrono::milliseconds ms) override;
};

std::unique_ptr<MacSystem> CreateFakeMacSystem();

// issue 12 items 4, 5, 9, 11 (capture, threads, permissions): test hooks.
struct FakePoolCounts {
  int64_t pushes = 0, pops = 0, maxDepth = 0, wrongThread = 0;
};
FakePoolCounts FakeAutoreleasePools();
// Runs the completion handlers of the captures that never completed, the
// `oldest` ones first, and drops the handlers ScreenCaptureKit kept.
void FakeCompleteCaptures(size_t oldest = SIZE_MAX);
int64_t FakeScreenRecordingProbes();
// Issue 35 M6: AppOfProcess calls since the process started (the cost of listing apps).
int64_t FakeAppQueries();

}  // namespace axsnap
