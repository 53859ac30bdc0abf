// A scripted MacSystem (src-native/mac/mac_system.h) over the fake world of
// fake_cf.h: running apps come from the world's apps, the recovery steps
// (unhide, activate, open -b) change the world the way the app is scripted to
// react (FakeApp::recoverOn), capture returns a deterministic gradient, and
// everything it is asked to do is logged:
//   system unhide <pid>
//   system activate <pid>
//   system open -b <bundleId>
//   system open application <bundleId or path> args=[a,b] env=K1,K2   (NSWorkspace openApplicationAtURL:)
//   system capture <windowNumber> <width>x<height>      (or "... -> failed: <why>")
//   system capture <windowNumber> <width>x<height> (display filter)
//                                                        a capture with ScreenCaptureKit's display filter
//   system request screen recording
//   system sleep <ms>                                    (never actually sleeps)
#pragma once

#include <cstdint>
#include <memory>

#include "../../../src-native/mac/mac_system.h"

namespace axsnap {

class FakeMacSystem : public MacSystem {
 public:
  Error RunningApps(std::vector<RunningApp>& out) override;
  Error Unhide(int64_t pid) override;
  Error ActivateAllWindows(int64_t pid) override;
  Error OpenBundle(const std::string& bundleId, std::chrono::steady_clock::time_point deadline) override;
  Error InstalledApps(std::vector<LaunchableApp>& out) override;
  Error OpenApplication(const LaunchRequest& request, int64_t& pid,
                        std::chrono::steady_clock::time_point deadline) override;
  double BackingScale(const Rect& frame) override;
  Error CaptureWindow(uint32_t windowNumber, const Rect& frame, double scale, CaptureFilter filter,
                      const std::shared_ptr<CapturePass>& pass, std::vector<uint8_t>& rgba, int& width, int& height,
                      std::chrono::steady_clock::time_point deadline) override;
  Access ScreenRecordingPreflight() override;
  Access ScreenRecordingProbe() override;
  void RequestScreenRecording() override;
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

}  // namespace axsnap
