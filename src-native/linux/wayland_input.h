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
// route's screen-space calls.
//
// A user's own GNOME session refuses Eval, so no window has a known place
// there. Such a window is still reached while it has keyboard focus (the
// *Focused calls): mutter's RecordWindow without a window-id records the
// focused window, its stream's space is that window's buffer (client-side
// shadow included) wherever it is on screen, and NotifyPointerMotionAbsolute
// on that stream takes points in it. When the AT-SPI window is that buffer
// (its size is the stream's crop size: GTK3, Chromium), AT-SPI window
// coordinates are stream coordinates; a toolkit that measures from the frame
// inside the shadow (GTK4) has an offset only the compositor knows, so it is
// refused. Which window has focus is mutter's word: the stream of the focused
// window shows a surface of exactly the AT-SPI window's size. AT-SPI alone
// cannot say: GTK3 on Wayland marks neither its window ACTIVE nor its focus
// widget FOCUSED even while it takes the keys (seen on gnome-shell 43); its
// ACTIVE state is taken as a second word for keys only (a toolkit that sets
// it, as GTK4 and Chromium do, with a surface larger than its frame). Two
// windows of the same size cannot be told apart this way, and whether
// another window or a shell dialog is over a point cannot be checked: both
// are said in the snapshot's note.
//
// Guards, as on X11: before pointer input, every point must be on the
// observed window (the topmost shown window there, and no shell modal grab);
// before keys, the window must have keyboard focus (it is activated once if
// not). Otherwise nothing is sent. A compositor that stops answering after
// an event left makes kDeliveryUncertain.
#pragma once

#include <functional>
#include <memory>
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

// A window whose place on screen is unknown, reached only while it has keyboard focus (see above).
struct FocusedWindow {
  double width = 0, height = 0;  // the AT-SPI window's own size: its coordinate space starts at (0,0)
  // The toolkit's own word, read now: AT-SPI marks the window ACTIVE (false when it cannot be read).
  std::function<bool(Clock::time_point)> toolkitActive;
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

  // The same for a window with no known place, through a stream of the focused window. `captured` and the
  // points are in the window's own (AT-SPI window) coordinates.
  Error CaptureFocused(const FocusedWindow& window, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                       Clock::time_point deadline);
  Error PointerFocused(const FocusedWindow& window, const PointerEvent& ev, Clock::time_point deadline);
  Error KeysFocused(const FocusedWindow& window, const std::string& combo, Clock::time_point deadline);
  Error TypeTextFocused(const FocusedWindow& window, const std::string& text, Clock::time_point deadline,
                        size_t& typed);

  MutterSession& Session() { return session_; }

 private:
  // The window's screen rect now (its frame or buffer rect, as placed) and whether another window covers it.
  Error Locate(const MutterTarget& target, Rect& screen, bool& topmost, Clock::time_point deadline,
               Rect* frame = nullptr);
  Error PointOnWindow(const MutterTarget& target, double sx, double sy, Clock::time_point deadline);
  Error KeyFocus(const MutterTarget& target, Clock::time_point deadline);
  Error SendSyms(MutterSession& via, const std::vector<std::pair<unsigned long, bool>>& events,
                 Clock::time_point deadline, bool& sent);
  using FocusCheck = std::function<Error(Clock::time_point)>;
  // Keys through `via` (made first if need be), after `focus` says yes.
  Error KeysWith(MutterSession& via, const FocusCheck& focus, const std::string& combo, Clock::time_point deadline);
  Error TypeTextWith(MutterSession& via, const FocusCheck& focus, const std::string& text, Clock::time_point deadline,
                     size_t& typed);
  // A fresh stream of the focused window (window_) and one frame of it: `frame` (RGBA, fw x fh), `crop` (the
  // focused window's buffer in the stream, clipped). Fails (`code`, nothing sent) unless that buffer is the
  // AT-SPI window (same size, at the stream's corner); `forKeys` also accepts a window whose toolkit says it
  // is active (its coordinates do not matter for keys), and, without PipeWire, that word alone.
  Error OpenFocused(const FocusedWindow& window, ErrorCode code, bool forKeys, std::vector<uint8_t>& frame, int& fw,
                    int& fh, Rect& crop, Clock::time_point deadline);
  // Keys' check for a window with no known place: it has keyboard focus (OpenFocused with forKeys); `via` is
  // the session to type through (the new window session, or the monitor one without PipeWire).
  Error FocusedForKeys(const FocusedWindow& window, MutterSession*& via, Clock::time_point deadline);
  // Sends `ev` (points in stream space) on `session`'s stream.
  Error SendPointer(MutterSession& session, const PointerEvent& ev, double dx, double dy, Clock::time_point deadline);

  GnomeShell& shell_;
  MutterSession session_;
  // Made for each focused-window call: mutter binds a window stream to the window that had focus when it was
  // made. The one before is stopped only when the next is made (`retired_` goes then): a session stopped right
  // after its last event lost it (mutter removed the virtual device before GTK had the release; seen on 43).
  // The screen-sharing indicator stays on meanwhile.
  std::unique_ptr<MutterSession> window_, retired_;
  bool active_ = false;
  Clock::time_point checked_{};  // when a no was last found
};

}  // namespace axsnap
