// Pixels: the window server's list of windows on screen, the choice of the
// one to capture (capture_plan.h), one window's pixels through MacSystem
// (ScreenCaptureKit's window filter, retried with the display filter when all
// black), one capture at a time in the process, the backing scale, and text
// from those pixels through Vision.
//
// Apple: CGWindow.h (CGWindowListCopyWindowInfo, kCGWindowNumber,
// kCGWindowOwnerPID, kCGWindowOwnerName, kCGWindowLayer, kCGWindowAlpha, kCGWindowName - absent
// without Screen Recording - kCGWindowBounds, CGRectMakeWithDictionaryRepresentation);
// ScreenCaptureKit (SCContentFilter, SCScreenshotManager) and Vision
// (VNRecognizeTextRequest) behind MacSystem (mac_system_appkit.mm, ocr_vision.mm).

#include <algorithm>

#include "mac_internal.h"

namespace axsnap {

namespace {

constexpr auto kCaptureFloor = std::chrono::milliseconds(1000);

}  // namespace

Error MacBackend::ScreenWindows(std::vector<ScreenWindow>& out, bool everySpace) {
  const CGWindowListOption which = everySpace ? kCGWindowListOptionAll : kCGWindowListOptionOnScreenOnly;
  CFRef<CFArrayRef> list = CFRef<CFArrayRef>::Adopt(
      CGWindowListCopyWindowInfo(which | kCGWindowListExcludeDesktopElements, kCGNullWindowID));
  if (!list) return {ErrorCode::kCaptureFailed, "the window server gave no window list"};
  for (CFIndex i = 0; i < CFArrayGetCount(list.get()); i++) {
    CFTypeRef item = CFArrayGetValueAtIndex(list.get(), i);
    if (!item || CFGetTypeID(item) != CFDictionaryGetTypeID()) continue;
    CFDictionaryRef d = static_cast<CFDictionaryRef>(item);
    ScreenWindow w;
    w.number = static_cast<uint32_t>(CFToNumber(CFDictionaryGetValue(d, kCGWindowNumber)).value_or(0));
    w.pid = static_cast<int64_t>(CFToNumber(CFDictionaryGetValue(d, kCGWindowOwnerPID)).value_or(0));
    w.layer = static_cast<int>(CFToNumber(CFDictionaryGetValue(d, kCGWindowLayer)).value_or(0));
    w.alpha = CFToNumber(CFDictionaryGetValue(d, kCGWindowAlpha)).value_or(1);
    // Without Screen Recording permission the name is absent: it then matches nothing.
    w.title = Str(CFDictionaryGetValue(d, kCGWindowName));
    w.owner = Str(CFDictionaryGetValue(d, kCGWindowOwnerName));
    // kCGWindowIsOnscreen is present only for windows on screen (CGWindow.h).
    if (everySpace) w.onScreen = CFToBool(CFDictionaryGetValue(d, kCGWindowIsOnscreen)).value_or(false);
    CFTypeRef bounds = CFDictionaryGetValue(d, kCGWindowBounds);
    CGRect r{};
    if (!bounds || CFGetTypeID(bounds) != CFDictionaryGetTypeID() ||
        !CGRectMakeWithDictionaryRepresentation(static_cast<CFDictionaryRef>(bounds), &r))
      continue;
    w.bounds = {r.origin.x, r.origin.y, r.size.width, r.size.height};
    out.push_back(std::move(w));
  }
  return {};
}

// Vision comes with macOS: a system layer without it (the fake one) has nothing a user could install.
const char* const kNoVisionHint =
    "Vision is part of macOS 10.15 and later, nothing to install; take the snapshot with ocr: \"auto\" or false "
    "and look at its screenshot";

Error MacBackend::OcrReady(const std::vector<std::string>& languages) {
  if (!ocr_) ocr_ = system_->CreateOcrEngine();
  if (!ocr_) return {ErrorCode::kOcrUnavailable, "this macOS system layer has no OCR engine (Vision)", kNoVisionHint};
  return ocr_->Ready(languages);
}

Error MacBackend::RecognizeText(const WindowInfo&, const OcrImage& image, const OcrOptions& options, OcrResult& out) {
  if (!ocr_) ocr_ = system_->CreateOcrEngine();
  if (!ocr_) return {ErrorCode::kOcrUnavailable, "this macOS system layer has no OCR engine (Vision)", kNoVisionHint};
  return RecognizeImage(*ocr_, image, options, out);
}

Error MacBackend::CaptureTarget(const WindowInfo& window, bool& capturable, std::string& why) {
  std::vector<ScreenWindow> list;
  if (Error err = ScreenWindows(list)) return err;
  capturable =
      ChooseCaptureWindow(list, window.pid, window.title, window.hasFrame ? &window.frame : nullptr, why).has_value();
  return {};
}

double MacBackend::Scale(const WindowInfo& window) { return system_->BackingScale(window.frame); }

Error MacBackend::Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                          Clock::time_point deadline) {
  std::vector<ScreenWindow> list;
  if (Error err = ScreenWindows(list)) return err;
  std::string why;
  std::optional<size_t> i =
      ChooseCaptureWindow(list, window.pid, window.title, window.hasFrame ? &window.frame : nullptr, why);
  if (!i) return {ErrorCode::kCaptureFailed, why};
  const ScreenWindow& w = list[*i];
  // The snapshot's deadline, with a floor: a walk cut by its deadline still
  // gets a screenshot when the window server answers quickly.
  const Clock::time_point bound = std::max(deadline, Clock::now() + kCaptureFloor);
  const double scale = system_->BackingScale(w.bounds);
  // One capture at a time in the process (CaptureGate): ScreenCaptureKit
  // calls cannot be cancelled, so one that timed out is still in flight, and
  // separate backends' captures would otherwise overlap. The pass goes to
  // every request the capture makes; the hold is this call's share.
  Error gateErr;
  CaptureHold hold = CaptureGate::Process().Enter(bound, gateErr);
  if (!hold) return gateErr;
  const std::shared_ptr<CapturePass>& pass = hold.pass();
  if (Error err =
          system_->CaptureWindow(w.number, w.bounds, scale, CaptureFilter::kWindow, pass, rgba, width, height, bound))
    return err;
  // ScreenCaptureKit's window filter gives an all-black image for some
  // GPU-rendered windows; the display filter showing only that window does
  // not. Retried once, with the same pass; a window black both ways is black.
  if (AllBlack(rgba) && Clock::now() < bound) {
    std::vector<uint8_t> again;
    int w2 = 0, h2 = 0;
    if (!system_->CaptureWindow(w.number, w.bounds, scale, CaptureFilter::kDisplay, pass, again, w2, h2, bound) &&
        w2 == width && h2 == height) {
      rgba = std::move(again);
    }
  }
  // Both filters return the window exactly (mac_system.h): its frame's origin
  // and `scale` map the pixels to points.
  captured = w.bounds;
  return {};
}

}  // namespace axsnap
