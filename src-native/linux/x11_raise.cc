// Raising a window and giving it keyboard focus: asking the window manager to
// activate it (or raising it directly without one), waiting a bounded while
// until it is on top at a point, and moving X keyboard focus into the observed
// window so key events reach it and no other app.
//
// EWMH _NET_ACTIVE_WINDOW (a client message to the root, source 2: pager/tool)
// and _NET_SUPPORTING_WM_CHECK: https://specifications.freedesktop.org/wm-spec/latest/
// ICCCM input focus ("Input Focus", 4.1.7):
//   https://www.x.org/releases/current/doc/xorg-docs/icccm/icccm.html
// Xlib: XRaiseWindow, XSendEvent, XSetInputFocus, XGetInputFocus,
//   https://www.x.org/releases/current/doc/libX11/libX11/libX11.html
#include <X11/Xlib.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "x11_internal.h"

namespace axsnap {
namespace x11 {

namespace {

// Asks the window manager to activate `client` (it may ignore a plain
// XRaiseWindow on its frame's client), then raises `top`, its frame or itself.
void RaiseWindow(Impl& d, Window client, Window top, bool wm) {
  if (wm) {
    XEvent ev;
    std::memset(&ev, 0, sizeof ev);
    ev.xclient.type = ClientMessage;
    ev.xclient.window = client;
    ev.xclient.message_type = XInternAtom(d.dpy, "_NET_ACTIVE_WINDOW", False);
    ev.xclient.format = 32;
    ev.xclient.data.l[0] = 2;  // source: pager/tool
    ev.xclient.data.l[1] = CurrentTime;
    XSendEvent(d.dpy, d.root, False, SubstructureRedirectMask | SubstructureNotifyMask, &ev);
  }
  XRaiseWindow(d.dpy, top);
  XSync(d.dpy, False);
}

}  // namespace

Error XRaiseAndVerify(Impl& d, unsigned long xid, const Rect& frame) {
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "X display not open"};
  if (xid == 0 || xid == d.root) return Error{ErrorCode::kInputFailed, "no X window to raise"};

  d.BeginTrap();
  const Window top = d.TopLevelOf(xid);
  XWindowAttributes a;
  const bool haveAttrs = top != 0 && d.Attributes(xid, a);
  if (d.EndTrap() != 0 || top == 0 || !haveAttrs) {
    return Error{ErrorCode::kInputFailed, "X window " + Hex(xid) + " is gone: " + d.LastErrorText()};
  }
  if (a.map_state != IsViewable) {
    return Error{ErrorCode::kInputFailed, "X window " + Hex(xid) + " is not viewable (minimized or hidden)"};
  }
  IRect own;
  {
    d.BeginTrap();
    const bool ok = d.RootRect(xid, a, own);
    d.EndTrap();
    if (!ok) return Error{ErrorCode::kInputFailed, "X window " + Hex(xid) + " is gone"};
  }
  double cx = own.x + own.w / 2.0, cy = own.y + own.h / 2.0;
  if (frame.w > 0 && frame.h > 0 && std::isfinite(frame.x) && std::isfinite(frame.y)) {
    cx = frame.x + frame.w / 2;
    cy = frame.y + frame.h / 2;
  }
  const int px = static_cast<int>(std::floor(cx)), py = static_cast<int>(std::floor(cy));

  const bool wm = d.HasWindowManager();
  // The client window for the window manager's request, its frame (top) for the X stacking.
  auto raise = [&]() { RaiseWindow(d, xid, top, wm); };

  d.BeginTrap();
  // Already on top (the common case between snapshots): no raise, no waiting.
  Window hit = d.TopmostAt(px, py);
  if (hit != top) {
    raise();
    const auto t0 = Clock::now();
    for (int attempt = 0;; ++attempt) {
      hit = d.TopmostAt(px, py);
      if (hit == top) break;
      if (MsSince(t0) > 200) break;
      SleepMs(10);
      if (attempt % 3 == 2) raise();
    }
  }
  if (hit == top && !wm) {
    // Without a window manager nobody assigns keyboard focus: give it to the
    // window so Keys/Type reach it. Failure (e.g. a race with unmapping) is not fatal.
    XSetInputFocus(d.dpy, xid, RevertToPointerRoot, CurrentTime);
  }
  d.EndTrap();
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  if (hit != top) {
    return Error{ErrorCode::kInputFailed, "X window " + Hex(xid) + " is not on top at (" + std::to_string(px) + ", " +
                                              std::to_string(py) + ")" +
                                              (hit != 0 ? ": covered by " + Hex(hit) : ": point is outside it")};
  }
  return {};
}

void RequestRaise(Impl& d, const Client& w, bool wm) { RaiseWindow(d, w.client, w.top, wm); }

}  // namespace x11

namespace {

// Whether X keyboard focus is in the observed window or one of its popups
// (a menu holding focus keeps it); `why` names where it is otherwise.
bool FocusIsObserved(Impl& d, const Client& observed, const std::vector<Client>& all, std::string& why) {
  Window focus = 0;
  int revert = 0;
  XGetInputFocus(d.dpy, &focus, &revert);
  if (focus == None || focus == PointerRoot) {
    why = "no window";
    return false;
  }
  const Window top = d.TopLevelOf(focus);
  for (const auto& c : all)
    if (c.top == top) return MayReceive(d, observed, &c, why);
  why = "window " + Hex(top) + ", which belongs to no listed app";
  return false;
}

}  // namespace

namespace x11 {

// Key events go to the window with X keyboard focus, not to the one under a
// point. Without a window manager nobody assigns that focus: give it to the
// observed window. With one, ask it to activate the window (bounded) and
// refuse when focus stays elsewhere: keys must never reach another app.
bool FocusObserved(Impl& d, const Client& observed, const std::vector<Client>& all, bool wm, std::string& why) {
  if (FocusIsObserved(d, observed, all, why)) return true;
  if (!wm) {
    XSetInputFocus(d.dpy, observed.client, RevertToPointerRoot, CurrentTime);
    XSync(d.dpy, False);
    return FocusIsObserved(d, observed, all, why);
  }
  RequestRaise(d, observed, wm);
  const auto t0 = Clock::now();
  while (MsSince(t0) <= 200) {
    SleepMs(10);
    if (FocusIsObserved(d, observed, all, why)) return true;
  }
  return false;
}

}  // namespace x11
}  // namespace axsnap
