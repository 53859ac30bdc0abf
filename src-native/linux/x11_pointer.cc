// Synthetic pointer input with XTest at screen points: click (with a count),
// wheel steps, drag (press, moves, release) and plain moves. Where the events
// land is checked before they are sent (x11_observed.cc), not here.
//
// XTEST: XTestFakeMotionEvent, XTestFakeButtonEvent,
//   https://www.x.org/releases/current/doc/libXtst/xtestlib.html
// Wheel buttons 4/5 (vertical) and 6/7 (horizontal): the X server's convention
//   for scroll events on core pointers (XInput 2.1, "Smooth scrolling"):
//   https://www.x.org/releases/current/doc/inputproto/XI2proto.txt
#include <X11/Xlib.h>
#include <X11/extensions/XTest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "x11_internal.h"

namespace axsnap {

void X11Display::Impl::Motion(int x, int y) { XTestFakeMotionEvent(dpy, screen, x, y, CurrentTime); }

void X11Display::Impl::Button(int b, bool down) {
  XTestFakeButtonEvent(dpy, static_cast<unsigned>(b), down ? True : False, CurrentTime);
}

namespace x11 {

bool ToPixel(double v, int& out) {
  if (!std::isfinite(v) || v < -1e6 || v > 1e6) return false;
  out = static_cast<int>(std::lround(v));
  return true;
}

Error InputReady(const X11Display::Impl& d) {
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "X display not open"};
  if (!d.hasXTest)
    return Error{ErrorCode::kInputFailed, "the X server has no XTEST extension: synthetic input is unavailable"};
  return {};
}

Error XClick(Impl& d, double x, double y, int button, int count) {
  if (Error e = InputReady(d)) return e;
  int px = 0, py = 0;
  if (!ToPixel(x, px) || !ToPixel(y, py)) return Error{ErrorCode::kInvalidArgument, "click point is not finite"};
  if (button < 1 || button > 9) return Error{ErrorCode::kInvalidArgument, "button must be 1..9"};
  count = std::clamp(count, 1, 10);
  d.BeginTrap();
  d.Motion(px, py);
  XSync(d.dpy, False);
  for (int i = 0; i < count; ++i) {
    if (i > 0) SleepMs(40);  // well inside double-click time (GTK: 400 ms)
    d.Button(button, true);
    d.Button(button, false);
    XFlush(d.dpy);
  }
  if (d.EndTrap() != 0) return Error{ErrorCode::kInputFailed, "click failed: " + d.LastErrorText()};
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  return {};
}

Error XWheel(Impl& d, double x, double y, double dx, double dy) {
  if (Error e = InputReady(d)) return e;
  int px = 0, py = 0;
  if (!ToPixel(x, px) || !ToPixel(y, py)) return Error{ErrorCode::kInvalidArgument, "wheel point is not finite"};
  if (!std::isfinite(dx) || !std::isfinite(dy)) return Error{ErrorCode::kInvalidArgument, "wheel steps are not finite"};
  // Positive dy scrolls down (button 5), positive dx right (button 7).
  const long sy = std::clamp<long>(std::lround(dy), -200, 200);
  const long sx = std::clamp<long>(std::lround(dx), -200, 200);
  d.BeginTrap();
  d.Motion(px, py);
  for (long i = 0; i < std::labs(sy); ++i) {
    d.Button(sy > 0 ? 5 : 4, true);
    d.Button(sy > 0 ? 5 : 4, false);
  }
  for (long i = 0; i < std::labs(sx); ++i) {
    d.Button(sx > 0 ? 7 : 6, true);
    d.Button(sx > 0 ? 7 : 6, false);
  }
  if (d.EndTrap() != 0) return Error{ErrorCode::kInputFailed, "wheel failed: " + d.LastErrorText()};
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  return {};
}

Error XDrag(Impl& d, double x, double y, double toX, double toY, int button) {
  if (Error e = InputReady(d)) return e;
  int px = 0, py = 0, qx = 0, qy = 0;
  if (!ToPixel(x, px) || !ToPixel(y, py) || !ToPixel(toX, qx) || !ToPixel(toY, qy)) {
    return Error{ErrorCode::kInvalidArgument, "drag points are not finite"};
  }
  if (button < 1 || button > 9) return Error{ErrorCode::kInvalidArgument, "button must be 1..9"};
  constexpr int kSteps = 10;
  d.BeginTrap();
  d.Motion(px, py);
  XSync(d.dpy, False);
  d.Button(button, true);
  XSync(d.dpy, False);
  SleepMs(20);
  for (int i = 1; i <= kSteps; ++i) {
    d.Motion(px + static_cast<int>(std::lround((qx - px) * static_cast<double>(i) / kSteps)),
             py + static_cast<int>(std::lround((qy - py) * static_cast<double>(i) / kSteps)));
    XFlush(d.dpy);
    SleepMs(10);
  }
  d.Motion(qx, qy);
  XSync(d.dpy, False);
  SleepMs(20);
  d.Button(button, false);
  if (d.EndTrap() != 0) return Error{ErrorCode::kInputFailed, "drag failed: " + d.LastErrorText()};
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  return {};
}

Error XMove(Impl& d, double x, double y) {
  if (Error e = InputReady(d)) return e;
  int px = 0, py = 0;
  if (!ToPixel(x, px) || !ToPixel(y, py)) return Error{ErrorCode::kInvalidArgument, "move point is not finite"};
  d.BeginTrap();
  d.Motion(px, py);
  if (d.EndTrap() != 0) return Error{ErrorCode::kInputFailed, "move failed: " + d.LastErrorText()};
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  return {};
}

}  // namespace x11
}  // namespace axsnap
