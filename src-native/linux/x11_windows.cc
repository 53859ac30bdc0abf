// Reading the window tree: the root's size, a window's attributes, place and
// children, the top-level that holds a window, whether a window manager runs,
// the topmost window at a point, and every top-level with its client window
// and pid (Impl::Clients), which the observed-window checks walk.
//
// Xlib: "Window Information Functions" (XQueryTree, XGetWindowAttributes,
// XGetGeometry, XTranslateCoordinates) and XGetTransientForHint,
// https://www.x.org/releases/current/doc/libX11/libX11/libX11.html
// ICCCM (WM_CLASS, WM_TRANSIENT_FOR, reparenting window managers):
//   https://www.x.org/releases/current/doc/xorg-docs/icccm/icccm.html
// EWMH (_NET_WM_PID, _NET_SUPPORTING_WM_CHECK): https://specifications.freedesktop.org/wm-spec/latest/
// X-Resource (the pid of a client without _NET_WM_PID): x11_clients.h.
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include <cstring>
#include <vector>

#include "x11_clients.h"
#include "x11_internal.h"

namespace axsnap {

void X11Display::Impl::RootSize(int& w, int& h) {
  w = DisplayWidth(dpy, screen);
  h = DisplayHeight(dpy, screen);
  Window r = 0;
  int x = 0, y = 0;
  unsigned int gw = 0, gh = 0, border = 0, depthRet = 0;
  // A round trip; the root always exists, so no error trap is needed.
  if (XGetGeometry(dpy, root, &r, &x, &y, &gw, &gh, &border, &depthRet) && gw > 0 && gh > 0) {
    w = static_cast<int>(gw);
    h = static_cast<int>(gh);
  }
}

bool X11Display::Impl::Attributes(Window w, XWindowAttributes& attrs) {
  std::memset(&attrs, 0, sizeof attrs);
  return XGetWindowAttributes(dpy, w, &attrs) != 0;
}

bool X11Display::Impl::RootRect(Window w, const XWindowAttributes& attrs, IRect& r) {
  int rx = 0, ry = 0;
  Window child = 0;
  if (!XTranslateCoordinates(dpy, w, root, 0, 0, &rx, &ry, &child)) return false;
  r = IRect{rx, ry, attrs.width, attrs.height};
  return true;
}

bool X11Display::Impl::Children(Window w, std::vector<Window>& out, Window* parentOut) {
  out.clear();
  Window rootRet = 0, parent = 0;
  Window* kids = nullptr;
  unsigned int n = 0;
  if (!XQueryTree(dpy, w, &rootRet, &parent, &kids, &n)) return false;
  if (kids != nullptr) {
    out.assign(kids, kids + n);
    XFree(kids);
  }
  if (parentOut != nullptr) *parentOut = parent;
  return true;
}

Window X11Display::Impl::TopLevelOf(Window w) {
  std::vector<Window> kids;
  for (int guard = 0; guard < 64 && w != 0; ++guard) {
    Window parent = 0;
    if (!Children(w, kids, &parent)) return 0;
    if (parent == root || parent == 0) return parent == root ? w : 0;
    w = parent;
  }
  return 0;
}

bool X11Display::Impl::HasWindowManager() {
  const Atom check = XInternAtom(dpy, "_NET_SUPPORTING_WM_CHECK", True);
  if (check == None) return false;
  Atom type = None;
  int format = 0;
  unsigned long n = 0, after = 0;
  unsigned char* data = nullptr;
  bool found =
      XGetWindowProperty(dpy, root, check, 0, 1, False, XA_WINDOW, &type, &format, &n, &after, &data) == Success &&
      data != nullptr && type == XA_WINDOW && n >= 1;
  if (data != nullptr) XFree(data);
  return found;
}

Window X11Display::Impl::TopmostAt(int x, int y) {
  std::vector<Window> kids;
  if (!Children(root, kids)) return 0;
  for (size_t i = kids.size(); i-- > 0;) {  // stacking order: bottom to top
    XWindowAttributes a;
    if (!Attributes(kids[i], a) || a.map_state != IsViewable) continue;
    const long w = a.width + 2L * a.border_width, h = a.height + 2L * a.border_width;
    if (x >= a.x && x < a.x + w && y >= a.y && y < a.y + h) return kids[i];
  }
  return 0;
}

std::vector<X11Display::Impl::Client> X11Display::Impl::Clients() {
  std::vector<Client> out;
  std::vector<Window> tops, kids, grandkids;
  Children(root, tops);
  for (Window top : tops) {
    XWindowAttributes a;
    if (!Attributes(top, a)) continue;
    Client c;
    c.top = c.client = top;
    c.viewable = a.map_state == IsViewable;
    c.overrideRedirect = a.override_redirect != 0;
    c.outer = IRect{a.x, a.y, a.width + 2L * a.border_width, a.height + 2L * a.border_width};
    c.pid = Pid(top);
    if (!RootRect(top, a, c.rect)) continue;
    if (c.pid < 0 && c.viewable) FindClientBelow(top, c, kids, grandkids);
    if (c.pid < 0) PidFromServer(top, a, c, kids, grandkids);
    out.push_back(c);
  }
  return out;
}

void X11Display::Impl::FindClientBelow(Window top, Client& c, std::vector<Window>& kids,
                                       std::vector<Window>& grandkids) {
  if (!Children(top, kids)) return;
  for (Window k : kids) {
    if (AdoptIfClient(k, c)) return;
    if (!Children(k, grandkids)) continue;
    for (Window g : grandkids) {
      if (AdoptIfClient(g, c)) return;
    }
  }
}

bool X11Display::Impl::AdoptIfClient(Window w, Client& c) {
  XWindowAttributes a;
  IRect r;
  if (!Attributes(w, a) || a.map_state != IsViewable) return false;
  const long p = Pid(w);
  if (p < 0 || !RootRect(w, a, r)) return false;
  c.client = w;
  c.pid = p;
  c.rect = r;
  return true;
}

void X11Display::Impl::PidFromServer(Window top, const XWindowAttributes& a, Client& c, std::vector<Window>& kids,
                                     std::vector<Window>& grandkids) {
  if (a.override_redirect || HasWmClass(dpy, top)) {
    c.pid = xres.PidOf(dpy, top);
    return;
  }
  if (!c.viewable || !Children(top, kids)) return;
  for (Window k : kids) {
    if (AdoptByClass(k, c)) return;
    if (!Children(k, grandkids)) continue;
    for (Window g : grandkids)
      if (AdoptByClass(g, c)) return;
  }
}

bool X11Display::Impl::AdoptByClass(Window w, Client& c) {
  XWindowAttributes a;
  IRect r;
  if (!Attributes(w, a) || a.map_state != IsViewable || !HasWmClass(dpy, w)) return false;
  const long p = xres.PidOf(dpy, w);
  if (p < 0 || !RootRect(w, a, r)) return false;
  c.client = w;
  c.pid = p;
  c.rect = r;
  return true;
}

Window X11Display::Impl::TransientFor(Window w) {
  Window t = 0;
  return XGetTransientForHint(dpy, w, &t) ? t : 0;
}

}  // namespace axsnap
