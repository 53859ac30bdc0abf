// Screen-capture rules of the macOS backend that do not need Objective-C, so
// that the real system (mac_system_appkit.mm) and the fake one
// (test/native/macfake/fake_mac_system.cc) share them and the fake-layer tests
// exercise them: how big a ScreenCaptureKit capture is asked for and which
// part of the filter's content it shows (PlanScreenCapture), what an all-black
// capture is (AllBlack), and the process-wide capture gate (CaptureGate).
//
// Header-only: both addons include it without another source file to list.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../core/types.h"

namespace axsnap {

// ScreenCaptureKit's two ways to show one window (SCContentFilter):
//   kWindow   initWithDesktopIndependentWindow: - the window alone, wherever it is;
//   kDisplay  initWithDisplay:includingWindows: - the display, showing only that
//             window, cropped to it with SCStreamConfiguration.sourceRect.
// Some GPU-rendered windows come out black with kWindow (Peekaboo moved to a
// display filter for that reason); kDisplay is the retry.
enum class CaptureFilter { kWindow, kDisplay };

inline const char* CaptureFilterName(CaptureFilter f) { return f == CaptureFilter::kWindow ? "window" : "display"; }

// What SCStreamConfiguration is set to for one capture.
struct ScreenCapturePlan {
  size_t width = 0, height = 0;  // config.width / config.height, in pixels
  bool scalesToFit = true;       // config.scalesToFit
  bool cropped = false;          // config.sourceRect is set (display filter)
  Rect sourceRect;               // in the display's points, top-left origin
};

// `window`: the window's frame in global top-left points. `contentScale`: the
// filter's own pixels per point (SCContentFilter.pointPixelScale, macOS 14+),
// 0 when unknown; `fallbackScale` (the display's) stands in for it then.
// `display`: the frame of the display the display filter shows (global
// points); unused for the window filter.
//
// The capture is asked for at the window's own scale and with scalesToFit YES
// ("only scales down" when NO): a window backed at 1x on a 2x display is
// rendered at 1x, and a 2x-sized canvas with scalesToFit NO leaves it in the
// top-left quarter with the rest empty. The caller redraws the result at the
// size the backend asked for (frame x display scale), so the image is exactly
// the window and its pixels map to points by that scale from the frame's origin.
inline ScreenCapturePlan PlanScreenCapture(CaptureFilter filter, const Rect& window, double contentScale,
                                           double fallbackScale, const Rect& display) {
  ScreenCapturePlan plan;
  double scale = contentScale > 0 && std::isfinite(contentScale) ? contentScale : fallbackScale;
  if (!(scale > 0) || !std::isfinite(scale)) scale = 1;
  plan.width = static_cast<size_t>(std::lround(std::max(1.0, window.w * scale)));
  plan.height = static_cast<size_t>(std::lround(std::max(1.0, window.h * scale)));
  plan.scalesToFit = true;
  if (filter == CaptureFilter::kDisplay) {
    plan.cropped = true;
    plan.sourceRect = Rect{window.x - display.x, window.y - display.y, window.w, window.h};
  }
  return plan;
}

// True when every pixel is black (RGB 0, whatever the alpha): what
// ScreenCaptureKit's window filter hands back for some GPU-rendered windows.
// An empty image is not "black": it is a failure reported elsewhere.
inline bool AllBlack(const std::vector<uint8_t>& rgba) {
  if (rgba.size() < 4) return false;
  for (size_t i = 0; i + 3 < rgba.size(); i += 4)
    if (rgba[i] | rgba[i + 1] | rgba[i + 2]) return false;
  return true;
}

// One screen capture at a time in the whole process, across backends.
// ScreenCaptureKit calls that time out cannot be cancelled: their completion
// handlers still run, arbitrarily late - or never (Peekaboo's capture gate
// notes SCK "can leak continuations" under load). A capture holds the gate
// from Enter() until the caller is done (its CaptureHold ends) and every
// request it asked (CapturePass::Ask) has been answered (Answered, called
// inside the completion handler): the gate follows the answers themselves,
// not the lifetime of the handler blocks, which ScreenCaptureKit may keep.
//
// Enter() waits, bounded by its deadline, while another capture is running.
// While the one outstanding was abandoned (a request timed out) it fails at
// once - waiting for an answer ScreenCaptureKit already failed to give in
// time would only spend the caller's deadline - but only for kAbandonBound:
// after that a new capture takes the gate over, so one call that never
// answers does not disable screenshots for the rest of the process. Answers
// to a capture taken over no longer count.
class CaptureGate;

class CapturePass {
 public:
  CapturePass(CaptureGate* gate, uint64_t generation) : gate_(gate), generation_(generation) {}
  CapturePass(const CapturePass&) = delete;
  CapturePass& operator=(const CapturePass&) = delete;
  // Before each request whose completion handler will call Answered().
  void Ask();
  // Inside that handler, once.
  void Answered();
  // The waiter gave up on an answer still to come.
  void Abandon();

 private:
  CaptureGate* gate_;
  uint64_t generation_;
};

// The caller's share of a capture: the gate stays closed while it lives.
class CaptureHold {
 public:
  CaptureHold() = default;
  explicit CaptureHold(std::shared_ptr<CapturePass> pass) : pass_(std::move(pass)) {}
  CaptureHold(CaptureHold&& other) noexcept = default;
  CaptureHold& operator=(CaptureHold&&) = delete;
  CaptureHold(const CaptureHold&) = delete;
  CaptureHold& operator=(const CaptureHold&) = delete;
  ~CaptureHold() {
    if (pass_) pass_->Answered();
  }
  explicit operator bool() const { return pass_ != nullptr; }
  // For every request of this capture (MacSystem::CaptureWindow).
  const std::shared_ptr<CapturePass>& pass() const { return pass_; }

 private:
  std::shared_ptr<CapturePass> pass_;
};

class CaptureGate {
 public:
  using Clock = std::chrono::steady_clock;
  // How long an abandoned capture keeps others out: well past one call's 5 s
  // bound, so a late answer still gets its chance, and short enough that a
  // long-running process recovers on its own.
  static constexpr Clock::duration kAbandonBound = std::chrono::seconds(20);

  static CaptureGate& Process() {
    static CaptureGate* gate = new CaptureGate;  // never destroyed: handlers may run at exit
    return *gate;
  }

  CaptureHold Enter(Clock::time_point deadline, Error& err) {
    std::unique_lock<std::mutex> lock(mu_);
    if (busy_ && abandoned_ && !Expired()) {
      err = Abandoned();
      return {};
    }
    cv_.wait_until(lock, deadline, [this] { return !busy_ || abandoned_; });
    if (busy_ && !(abandoned_ && Expired())) {
      err = abandoned_ ? Abandoned()
                       : Error{ErrorCode::kCaptureFailed,
                               "another screen capture of this process was still running when the deadline came"};
      return {};
    }
    busy_ = true;
    abandoned_ = false;
    outstanding_ = 1;  // the caller's hold
    return CaptureHold(std::make_shared<CapturePass>(this, ++generation_));
  }

  // For tests and diagnostics: a capture holds the gate.
  bool Busy() {
    std::lock_guard<std::mutex> lock(mu_);
    return busy_;
  }
  // For tests: as if the outstanding capture had been given up `earlier` ago.
  void AgeAbandonment(Clock::duration earlier) {
    std::lock_guard<std::mutex> lock(mu_);
    abandonedAt_ -= earlier;
  }

 private:
  friend class CapturePass;

  bool Expired() const { return Clock::now() - abandonedAt_ >= kAbandonBound; }

  Error Abandoned() const {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    const auto ago = duration_cast<milliseconds>(Clock::now() - abandonedAt_).count();
    const auto left = duration_cast<milliseconds>(kAbandonBound).count() - ago;
    return {ErrorCode::kCaptureFailed,
            "a previous screen capture is still outstanding: ScreenCaptureKit has not answered a request given up " +
                std::to_string(ago) + " ms ago; a new capture starts when it answers or at the latest in " +
                std::to_string(std::max<int64_t>(0, left)) + " ms (retry then)"};
  }

  void Ask(uint64_t generation) {
    std::lock_guard<std::mutex> lock(mu_);
    if (busy_ && generation == generation_) ++outstanding_;
  }

  void Answered(uint64_t generation) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!busy_ || generation != generation_ || outstanding_ == 0) return;
      if (--outstanding_ > 0) return;
      busy_ = false;
      abandoned_ = false;
    }
    cv_.notify_all();
  }

  void MarkAbandoned(uint64_t generation) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!busy_ || generation != generation_) return;
      abandoned_ = true;
      abandonedAt_ = Clock::now();
    }
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool busy_ = false;
  bool abandoned_ = false;
  uint64_t generation_ = 0;
  int64_t outstanding_ = 0;  // the caller's hold plus the requests not answered yet
  Clock::time_point abandonedAt_{};
};

inline void CapturePass::Ask() { gate_->Ask(generation_); }
inline void CapturePass::Answered() { gate_->Answered(generation_); }
inline void CapturePass::Abandon() { gate_->MarkAbandoned(generation_); }

}  // namespace axsnap
