// Where a native Wayland window is on screen, from GNOME Shell: the seam
// between the Mutter route (wayland_input.h) and the compositor's window
// module (issue 36's branch h36-shell), which will answer the same questions
// for listWindows, frames and stacking. Until that is merged, these ask
// org.gnome.Shell.Eval directly (gnome-shell --unsafe-mode: the agent's
// desktop); without unsafe mode they answer kActionNotSupported and the
// Mutter route refuses rather than guess a place.
//
// AT-SPI on Wayland gives window-relative extents: GTK3 and Chromium
// relative to the window's buffer (which includes the client-side shadow),
// GTK4 relative to its frame. `origin` is whichever of the two has the size
// the accessibility layer reports for the window.
#pragma once

#include <cstdint>
#include <string>

#include "mutter_session.h"

namespace axsnap {

struct CompositorWindow {
  uint64_t id = 0;  // MetaWindow id (RecordWindow's window-id)
  Rect frame, buffer;
  double originX = 0, originY = 0;  // the screen point of the window's AT-SPI (0,0)
  bool focused = false;
  bool topmost = false;  // nothing of another window is stacked above it
  int modal = 0;         // the shell's modal grabs (a shell dialog takes all input while > 0)
};

// The window of `pid` with `title` (any title when empty) whose buffer or frame has the accessibility
// layer's size `w`x`h` (any when 0); the topmost one when several match. kWindowNotFound when none.
Error FindCompositorWindow(MutterSession& s, int64_t pid, const std::string& title, double w, double h,
                           CompositorWindow& out, Clock::time_point deadline);
// The id of the topmost shown window whose frame holds the screen point (0: none), and the shell's modal count.
Error CompositorWindowAt(MutterSession& s, double x, double y, uint64_t& id, int& modal, Clock::time_point deadline);
// Raises and focuses the window (MetaWindow.activate).
Error ActivateCompositorWindow(MutterSession& s, uint64_t id, Clock::time_point deadline);

}  // namespace axsnap
