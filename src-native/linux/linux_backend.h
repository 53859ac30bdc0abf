// The Linux backend: AT-SPI2 over D-Bus for the tree and semantic actions
// (AtspiBackend), X11 for the window's pixels and synthetic input
// (X11Display). Both live on the backend's worker thread.
#pragma once

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

 private:
  // Opens the display on first use, so a snapshot without X (no screenshot) still works.
  Error Display();
  // Raises the app's window and checks it is on top: with no window manager,
  // XTest input goes to whatever window is topmost at the point.
  Error Front(const WindowInfo& window);
  X11Display x11_;
};

}  // namespace axsnap
