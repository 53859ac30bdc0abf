// The Linux backend: AT-SPI2 over D-Bus for the tree and semantic actions
// (AtspiBackend), X11 for the window's pixels and synthetic input
// (X11Display). Both are driven from the backend's worker thread; X11Display
// runs the X calls on a thread of its own so that a silent X server costs a
// call its deadline, never the worker.
#pragma once

#include <memory>

#include "../core/ocr.h"
#include "atspi_backend.h"
#include "x11_display.h"

namespace axsnap {

class LinuxBackend : public AtspiBackend {
 public:
  const char* Platform() const override { return "linux"; }
  double Scale(const WindowInfo&) override { return 1.0; }
  Error Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                Clock::time_point deadline) override;
  Error Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) override;
  Error Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) override;
  Error TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline, size_t& typed) override;
  // The AT-SPI windows; an untitled frame or dialog takes its X title.
  Error Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) override;
  // Desktop entries, through GIO (gio_launch.h).
  Error Launchable(std::vector<LaunchableApp>& out, Clock::time_point deadline) override;
  Error Launch(const LaunchRequest& request, int64_t& pid, Clock::time_point deadline) override;
  // Tesseract (ocr_tesseract.h), loaded on first use and kept.
  Error RecognizeText(const WindowInfo& window, const OcrImage& image, const OcrOptions& options,
                      OcrResult& out) override;

 private:
  X11Display x11_;
  std::unique_ptr<OcrEngine> ocr_;
};

}  // namespace axsnap
