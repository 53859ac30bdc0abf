#include "linux_backend.h"

#include "gio_launch.h"
#include "ocr_tesseract.h"

#include <algorithm>
#include <chrono>

namespace axsnap {
namespace {

// What the X layer needs to find the observed window again (and refuse any other).
X11Display::Target TargetOf(const WindowInfo& window) {
  X11Display::Target t;
  t.pid = window.pid;
  if (window.hasFrame) t.frame = window.frame;
  // A menu bar's open menu is listed under its item's name; its X popup has no title.
  t.title = window.inParent ? std::string() : window.title;
  t.element = window.element;
  return t;
}

}  // namespace

Error LinuxBackend::Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height,
                            Rect& captured, Clock::time_point deadline) {
  if (!window.hasFrame || window.frame.w <= 0 || window.frame.h <= 0)
    return {ErrorCode::kCaptureFailed, "the window has no on-screen frame"};
  return x11_.CaptureWindow(TargetOf(window), deadline, rgba, width, height, captured);
}

// Synthetic input changes the UI behind the bulk cache's back: drop it after sending.
Error LinuxBackend::Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) {
  Error err = x11_.Pointer(TargetOf(window), ev, deadline);
  InvalidateBulkCache();
  return err;
}

Error LinuxBackend::Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) {
  Error err = x11_.SendKeys(TargetOf(window), combo, deadline);
  InvalidateBulkCache();
  return err;
}

Error LinuxBackend::TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline,
                             size_t& typed) {
  Error err = x11_.TypeText(TargetOf(window), text, deadline, typed);
  InvalidateBulkCache();
  return err;
}

Error LinuxBackend::Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  if (Error err = AtspiBackend::Windows(app, out, deadline)) return err;
  for (WindowInfo& w : out) {
    // A toolkit that leaves the frame's accessible name empty (gtk3-widget-factory) still titles its X window.
    if (!w.title.empty() || w.inParent || !w.hasFrame || w.frame.w <= 0 || w.frame.h <= 0) continue;
    if (w.role != "frame" && w.role != "dialog" && w.role != "window") continue;
    if (!w.kind.empty() && w.kind != "window" && w.kind != "dialog") continue;
    const auto until = std::min(deadline, Clock::now() + std::chrono::milliseconds(300));
    std::string title;
    // The window's pid is set by the caller; the app's is the one to match.
    if (!x11_.WindowTitle(w.pid > 0 ? w.pid : app.pid, w.frame, title, until) && !title.empty()) w.title = title;
  }
  return {};
}

Error LinuxBackend::Launchable(std::vector<LaunchableApp>& out, Clock::time_point) { return GioLaunchable(out); }

Error LinuxBackend::Launch(const LaunchRequest& request, int64_t& pid, Clock::time_point) {
  return GioLaunch(request, pid);
}

Error LinuxBackend::RecognizeText(const WindowInfo&, const OcrImage& image, const OcrOptions& options, OcrResult& out) {
  if (!ocr_) ocr_ = CreateTesseractEngine();
  return RecognizeImage(*ocr_, image, options, out);
}

}  // namespace axsnap
