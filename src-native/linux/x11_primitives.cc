// X11Display's unguarded primitives: one X-thread job each, with no check of
// which window the input reaches (x11_selftest uses them), plus the client
// list and the screen's size, which the backend asks for.
//
// The X calls are in x11_observed.cc (FindWindow), x11_raise.cc, x11_capture.cc,
// x11_pointer.cc, x11_keys.cc and x11_clients.cc (EWMH _NET_CLIENT_LIST, ICCCM,
// X-Resource); the root's size is XGetGeometry (x11_windows.cc).
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "x11_clients.h"
#include "x11_display.h"
#include "x11_internal.h"

namespace axsnap {

Error X11Display::Simple(Clock::time_point deadline, const std::function<Error(Impl&)>& op) {
  Outcome outcome;
  return Run(
      deadline, [op](Impl& d, std::atomic<bool>&) { return op(d); }, outcome);
}

Error X11Display::FindWindow(int64_t pid, const Rect& frame, unsigned long& xid, Clock::time_point deadline) {
  xid = 0;
  auto out = std::make_shared<unsigned long>(0);
  Error e = Simple(deadline, [pid, frame, out](Impl& d) { return XFindWindow(d, pid, frame, *out); });
  xid = *out;
  return e;
}

Error X11Display::WindowTitle(int64_t pid, const Rect& frame, std::string& title, Clock::time_point deadline) {
  title.clear();
  auto out = std::make_shared<std::string>();
  Error e = Simple(deadline, [pid, frame, out](Impl& d) {
    if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "X display not open"};
    d.BeginTrap();
    const std::vector<Client> all = d.Clients();
    const Client* best = nullptr;
    for (const auto& c : all) {
      if (!c.viewable || c.pid != pid || pid <= 0) continue;
      if (FrameKnown(frame) && IntersectionArea(c.rect, frame) <= 0) continue;
      if (BetterMatch(c, best, frame)) best = &c;
    }
    if (best != nullptr) *out = d.Name(best->client);
    d.EndTrap();
    return Error{};
  });
  title = *out;
  return e;
}

Error X11Display::ListClients(std::vector<X11Client>& out, Clock::time_point deadline) {
  out.clear();
  auto list = std::make_shared<std::vector<X11Client>>();
  Error e = Simple(deadline, [list](Impl& d) {
    if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "X display not open"};
    d.BeginTrap();
    *list = ListX11Clients(d.dpy, d.root, d.xres);
    d.EndTrap();
    if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "the X display connection was lost"};
    return Error{};
  });
  if (!e) out = std::move(*list);
  return e;
}

Error X11Display::RaiseAndVerify(unsigned long xid, const Rect& frame, Clock::time_point deadline) {
  return Simple(deadline, [xid, frame](Impl& d) { return XRaiseAndVerify(d, xid, frame); });
}

Error X11Display::CaptureRect(const Rect& r, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                              Clock::time_point deadline) {
  struct Shot {
    std::vector<uint8_t> rgba;
    int width = 0, height = 0;
    Rect captured;
  };
  auto shot = std::make_shared<Shot>();
  Error e = Simple(deadline, [r, shot](Impl& d) {
    return XCaptureRect(d, r, shot->rgba, shot->width, shot->height, shot->captured);
  });
  rgba = std::move(shot->rgba);
  width = shot->width;
  height = shot->height;
  captured = shot->captured;
  return e;
}

Error X11Display::Click(double x, double y, int button, int count, Clock::time_point deadline) {
  return Simple(deadline, [=](Impl& d) { return XClick(d, x, y, button, count); });
}

Error X11Display::Wheel(double x, double y, double dx, double dy, Clock::time_point deadline) {
  return Simple(deadline, [=](Impl& d) { return XWheel(d, x, y, dx, dy); });
}

Error X11Display::Drag(double x, double y, double toX, double toY, int button, Clock::time_point deadline) {
  return Simple(deadline, [=](Impl& d) { return XDrag(d, x, y, toX, toY, button); });
}

Error X11Display::Move(double x, double y, Clock::time_point deadline) {
  return Simple(deadline, [=](Impl& d) { return XMove(d, x, y); });
}

Error X11Display::Keys(const std::string& combo, Clock::time_point deadline) {
  return Simple(deadline, [combo](Impl& d) { return XKeys(d, combo); });
}

Error X11Display::Type(const std::string& utf8, Clock::time_point deadline) {
  return Simple(deadline, [utf8](Impl& d) { return XType(d, utf8); });
}

int X11Display::ScreenWidth() {
  auto w = std::make_shared<int>(0);
  Simple(DefaultDeadline(), [w](Impl& d) {
    int h = 0;
    d.RootSize(*w, h);
    return Error{};
  });
  return *w;
}

int X11Display::ScreenHeight() {
  auto h = std::make_shared<int>(0);
  Simple(DefaultDeadline(), [h](Impl& d) {
    int w = 0;
    d.RootSize(w, *h);
    return Error{};
  });
  return *h;
}

}  // namespace axsnap
