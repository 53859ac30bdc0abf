// The Mutter route on GNOME Wayland: screenshots and input for native
// Wayland apps, which X11 never sees. Pixels come from the session's monitor
// stream over PipeWire (pipewire_frame.h), cropped to the window; pointer
// and keys go through RemoteDesktop.Session's Notify* calls
// (mutter_session.h); where the window is comes from the shell
// (shell_windows.h).
//
// Coordinates: on Wayland AT-SPI gives window-relative points, and the
// backend hands this route the window's frame and points in that same space.
// The route adds the window's screen origin, so captures, hit tests and
// clicks agree with each other and with the accessibility tree.
//
// Guards, as on X11: before pointer input, every point must be on the
// observed window (the topmost shown window there, and no shell modal grab);
// before keys, the window must have keyboard focus (it is activated once if
// not). Otherwise nothing is sent. A compositor that stops answering after
// an event left makes kDeliveryUncertain.
#pragma once

#include <string>
#include <vector>

#include "../core/backend.h"
#include "mutter_session.h"

namespace axsnap {

class WaylandRoute {
 public:
  // A GNOME Wayland session with Mutter's remote desktop (bounded). A yes is remembered (a compositor that
  // restarts is handled by the session); a no is asked again after a few seconds, as the compositor may
  // still be starting.
  bool Active(Clock::time_point deadline);
  // What is missing for screenshots (PipeWire), or empty.
  std::string CaptureMissing();

  Error Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                Clock::time_point deadline);
  Error Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline);
  Error Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline);
  // Characters with no key in the compositor's keymap type nothing through Mutter (it logs "No keycode
  // found"): the text is refused before any key when it has one (only ASCII printable, newline, tab go).
  Error TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline, size_t& typed);

  MutterSession& Session() { return session_; }

 private:
  Error Locate(const WindowInfo& window, struct CompositorWindow& out, Clock::time_point deadline);
  Error PointOnWindow(const struct CompositorWindow& w, double sx, double sy, Clock::time_point deadline);
  Error KeyFocus(const WindowInfo& window, Clock::time_point deadline);
  Error SendSyms(const std::vector<std::pair<unsigned long, bool>>& events, Clock::time_point deadline, bool& sent);

  MutterSession session_;
  bool active_ = false;
  Clock::time_point checked_{};  // when a no was last found
};

}  // namespace axsnap
