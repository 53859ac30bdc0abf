// A scripted MacSystem (src-native/mac/mac_system.h) over the fake world of
// fake_cf.h: running apps come from the world's apps, the recovery steps
// (unhide, activate, open -b) change the world the way the app is scripted to
// react (FakeApp::recoverOn), capture returns a deterministic gradient, and
// everything it is asked to do is logged:
//   system unhide <pid>
//   system activate <pid>
//   system open -b <bundleId>
//   system capture <windowNumber> <width>x<height>      (or "... -> failed: <why>")
//   system request screen recording
//   system sleep <ms>                                    (never actually sleeps)
#pragma once

#include <memory>

#include "../../../src-native/mac/mac_system.h"

namespace axsnap {

class FakeMacSystem : public MacSystem {
 public:
  Error RunningApps(std::vector<RunningApp>& out) override;
  Error Unhide(int64_t pid) override;
  Error ActivateAllWindows(int64_t pid) override;
  Error OpenBundle(const std::string& bundleId, std::chrono::steady_clock::time_point deadline) override;
  double BackingScale(const Rect& frame) override;
  Error CaptureWindow(uint32_t windowNumber, const Rect& frame, double scale, std::vector<uint8_t>& rgba, int& width,
                      int& height, std::chrono::steady_clock::time_point deadline) override;
  Access ScreenRecordingAccess() override;
  void RequestScreenRecording() override;
  void Sleep(std::chrono::milliseconds ms) override;
};

std::unique_ptr<MacSystem> CreateFakeMacSystem();

}  // namespace axsnap
