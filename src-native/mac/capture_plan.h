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
// handlers still run, arbitrarily late. A capture holds a CapturePass from
// before its first request until its last completion handler has run (each
// handler keeps a copy of the shared_ptr), so a capture abandoned in flight
// keeps the gate closed until ScreenCaptureKit answers it.
//
// Enter() waits, bounded by its deadline, while another capture is running;
// it fails at once when the one outstanding was abandoned (timed out), since
// waiting for ScreenCaptureKit to answer a call it already failed to answer
// in time would only spend the caller's deadline.
class CaptureGate;

class CapturePass {
 public:
  explicit CapturePass(CaptureGate* gate) : gate_(gate) {}
  ~CapturePass();
  CapturePass(const CapturePass&) = delete;
  CapturePass& operator=(const CapturePass&) = delete;
  // The waiter gave up on an answer still to come.
  void Abandon();

 private:
  CaptureGate* gate_;
};

class CaptureGate {
 public:
  using Clock = std::chrono::steady_clock;

  static CaptureGate& Process() {
    static CaptureGate* gate = new CaptureGate;  // never destroyed: handlers may run at exit
    return *gate;
  }

  std::shared_ptr<CapturePass> Enter(Clock::time_point deadline, Error& err) {
    std::unique_lock<std::mutex> lock(mu_);
    if (busy_ && abandoned_) {
      err = Abandoned();
      return nullptr;
    }
    cv_.wait_until(lock, deadline, [this] { return !busy_ || abandoned_; });
    if (busy_) {
      err = abandoned_ ? Abandoned()
                       : Error{ErrorCode::kCaptureFailed,
                               "another screen capture of this process was still running when the deadline came"};
      return nullptr;
    }
    busy_ = true;
    abandoned_ = false;
    return std::make_shared<CapturePass>(this);
  }

  // For tests and diagnostics: a capture holds the gate.
  bool Busy() {
    std::lock_guard<std::mutex> lock(mu_);
    return busy_;
  }

 private:
  friend class CapturePass;

  Error Abandoned() const {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - abandonedAt_).count();
    return {ErrorCode::kCaptureFailed,
            "a previous screen capture is still outstanding: ScreenCaptureKit has not answered a request given up " +
                std::to_string(ms) +
                " ms ago, and no new capture starts before it does (retry later; if it never answers, restart the "
                "process)"};
  }

  void Leave() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
      abandoned_ = false;
    }
    cv_.notify_all();
  }

  void MarkAbandoned() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      abandoned_ = true;
      abandonedAt_ = Clock::now();
    }
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool busy_ = false;
  bool abandoned_ = false;
  Clock::time_point abandonedAt_{};
};

inline CapturePass::~CapturePass() { gate_->Leave(); }
inline void CapturePass::Abandon() { gate_->MarkAbandoned(); }

}  // namespace axsnap
