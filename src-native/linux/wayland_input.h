// The Mutter route on GNOME Wayland: screenshots and input for native
// Wayland apps, which X11 never sees. Pixels come from the session's monitor
// stream over PipeWire (pipewire_frame.h), cropped to the window; pointer
// and keys go through RemoteDesktop.Session's Notify* calls
// (mutter_session.h); where the window is, what is on top and what has focus
// come from GNOME Shell (gnome_shell.h), the backend's one way to ask it.
//
// Coordinates are SCREEN coordinates, as on X11: the backend places each
// window it lists through the shell (linux_backend.cc PlaceWaylandWindows)
// and moves its elements' frames into screen space, so the points given here
// are screen points and `captured` is the screenshot's place on the screen.
// The monitor stream's own space starts at the monitor's origin (the
// stream's Parameters). A window whose place is unknown (the shell does not
// list it, or refuses Eval on a user's own session) never reaches this
// route: the backend refuses its capture and pointer and key input.
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
#include "gnome_shell.h"
#include "mutter_session.h"

namespace axsnap {

// The shell's window behind an AT-SPI window, as the backend placed it when listing it.
struct MutterTarget {
  uint64_t shellId = 0;    // MetaWindow id
  bool fromFrame = false;  // the AT-SPI window is the frame rect (GTK4), else the buffer rect
};

class WaylandRoute {
 public:
  explicit WaylandRoute(GnomeShell& shell) : shell_(shell) {}

  // A GNOME Wayland session with Mutter's remote desktop (bounded). A yes is remembered (a compositor that
  // restarts is handled by the session); a no is asked again after a few seconds, as the compositor may
  // still be starting.
  bool Active(Clock::time_point deadline);
  // What is missing for screenshots (PipeWire), or empty.
  std::string CaptureMissing();

  // The window's screen rect (fresh from the shell) out of one monitor frame; `captured` is that rect
  // clipped to the monitor, in screen space.
  Error Capture(const MutterTarget& target, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                Clock::time_point deadline);
  // `ev`'s points are screen points.
  Error Pointer(const MutterTarget& target, const PointerEvent& ev, Clock::time_point deadline);
  Error Keys(const MutterTarget& target, const std::string& combo, Clock::time_point deadline);
  // Characters with no key in the compositor's keymap type nothing through Mutter (it logs "No keycode
  // found"): the text is refused before any key when it has one (only ASCII printable, newline, tab go).
  Error TypeText(const MutterTarget& target, const std::string& text, Clock::time_point deadline, size_t& typed);

  MutterSession& Session() { return session_; }

 private:
  // The window's screen rect now (its frame or buffer rect, as placed) and whether another window covers it.
  Error Locate(const MutterTarget& target, Rect& screen, bool& topmost, Clock::time_point deadline,
               Rect* frame = nullptr);
  Error PointOnWindow(const MutterTarget& target, double sx, double sy, Clock::time_point deadline);
  Error KeyFocus(const MutterTarget& target, Clock::time_point deadline);
  Error SendSyms(const std::vector<std::pair<unsigned long, bool>>& events, Clock::time_point deadline, bool& sent);

  GnomeShell& shell_;
  MutterSession session_;
  bool active_ = false;
  Clock::time_point checked_{};  // when a no was last found
};

}  // namespace axsnap
