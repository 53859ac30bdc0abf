#include "linux_backend.h"

namespace axsnap {

Error LinuxBackend::Display() {
  if (x11_.IsOpen()) return {};
  return x11_.Open();
}

Error LinuxBackend::Front(const WindowInfo& window) {
  if (Error err = Display()) return err;
  unsigned long xid = 0;
  if (Error err = x11_.FindWindow(window.pid, window.frame, xid)) return err;
  if (xid == 0) return {ErrorCode::kInputFailed, "no X window found for the app's window"};
  return x11_.RaiseAndVerify(xid, window.frame);
}

Error LinuxBackend::Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height,
                            Rect& captured, Clock::time_point) {
  if (!window.hasFrame || window.frame.w <= 0 || window.frame.h <= 0)
    return {ErrorCode::kCaptureFailed, "the window has no on-screen frame"};
  // The screen area is read after raising the window, so what is captured is the window itself.
  if (Error err = Front(window)) {
    if (err.code != ErrorCode::kInputFailed) return err;
  }
  return x11_.CaptureRect(window.frame, rgba, width, height, captured);
}

// Synthetic input changes the UI behind the bulk cache's back: drop it after sending.
Error LinuxBackend::Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) {
  if (Error err = Front(window)) return err;
  Error err;
  switch (ev.kind) {
    case PointerEvent::Kind::kClick: err = x11_.Click(ev.x, ev.y, ev.button, ev.count); break;
    case PointerEvent::Kind::kWheel: err = x11_.Wheel(ev.x, ev.y, ev.dx, ev.dy); break;
    case PointerEvent::Kind::kDrag: err = x11_.Drag(ev.x, ev.y, ev.toX, ev.toY, ev.button); break;
    case PointerEvent::Kind::kMove: err = x11_.Move(ev.x, ev.y); break;
  }
  InvalidateBulkCache();
  return err;
}

Error LinuxBackend::Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) {
  if (Error err = Front(window)) return err;
  Error err = x11_.Keys(combo);
  InvalidateBulkCache();
  return err;
}

Error LinuxBackend::TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline,
                             size_t& typed) {
  typed = 0;
  if (Error err = Front(window)) return err;
  Error err = x11_.Type(text);
  if (!err)
    for (unsigned char c : text) typed += (c & 0xc0) != 0x80;
  InvalidateBulkCache();
  return err;
}

}  // namespace axsnap
