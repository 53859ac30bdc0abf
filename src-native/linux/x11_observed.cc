// The observed window and whether input may reach it: matching the window the
// accessibility layer saw (pid, frame, title; or the X window bound to it
// before) among the top-levels, noticing when its process has exited, and the
// check before every batch of events (PrepareInput): the window found, raised
// when something covers a point, every point on it or on one of its popups,
// and for keys, keyboard focus in it.
//
// ICCCM (WM_TRANSIENT_FOR: a dialog or menu belongs to its window; override-
// redirect popups): https://www.x.org/releases/current/doc/xorg-docs/icccm/icccm.html
// EWMH (_NET_WM_PID, _NET_WM_NAME): https://specifications.freedesktop.org/wm-spec/latest/
// Xlib stacking order (XQueryTree lists bottom to top):
//   https://www.x.org/releases/current/doc/libX11/libX11/libX11.html
// The process's life (zombie, exiting, pid reused): process_life.h.
#include <X11/Xlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "process_life.h"
#include "x11_internal.h"

namespace axsnap {
namespace x11 {

double IntersectionArea(const IRect& a, const Rect& b) {
  const double x0 = std::max<double>(a.x, b.x), y0 = std::max<double>(a.y, b.y);
  const double x1 = std::min<double>(a.x + a.w, b.x + b.w), y1 = std::min<double>(a.y + a.h, b.y + b.h);
  return (x1 > x0 && y1 > y0) ? (x1 - x0) * (y1 - y0) : 0;
}

bool FrameKnown(const Rect& frame) {
  return frame.w > 0 && frame.h > 0 && std::isfinite(frame.x) && std::isfinite(frame.y);
}

// Later candidates are higher in the stacking order: ties go to them.
bool BetterMatch(const Client& c, const Client* best, const Rect& frame) {
  if (best == nullptr) return true;
  if (!FrameKnown(frame))
    return static_cast<double>(c.rect.w) * c.rect.h >= static_cast<double>(best->rect.w) * best->rect.h;
  const double ia = IntersectionArea(c.rect, frame), ib = IntersectionArea(best->rect, frame);
  if (ia != ib) return ia > ib;
  auto sizeDiff = [&](const IRect& r) { return std::fabs(r.w - frame.w) + std::fabs(r.h - frame.h); };
  return sizeDiff(c.rect) <= sizeDiff(best->rect);
}

Error XFindWindow(Impl& d, int64_t pid, const Rect& frame, unsigned long& xid) {
  xid = 0;
  if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "X display not open"};
  d.BeginTrap();
  const std::vector<Client> all = d.Clients();
  d.EndTrap();
  if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "the X display connection was lost"};
  const Client* best = nullptr;
  for (const auto& c : all) {
    if (c.viewable && c.pid == pid && pid > 0 && BetterMatch(c, best, frame)) best = &c;
  }
  // No fallback to another pid's window: input and capture belong to the observed app only.
  if (best != nullptr) xid = best->client;
  return {};
}

}  // namespace x11

namespace {

// The accessibility title and the X title agree when one contains the other
// (toolkits add or drop decorations such as " - Chromium").
bool TitlesAgree(const std::string& xname, const std::string& title) {
  if (title.empty() || xname.empty()) return title.empty();
  return xname.find(title) != std::string::npos || title.find(xname) != std::string::npos;
}

Error ObservedGone(const std::vector<Client>& all, int64_t pid) {
  for (const auto& c : all) {
    if (c.pid == pid) {
      return Error{ErrorCode::kWindowNotFound,
                   "the observed window of pid " + std::to_string(pid) + " is gone (the app has other windows)"};
    }
  }
  return Error{ErrorCode::kAppNotFound, "no window of pid " + std::to_string(pid) + " exists any more"};
}

// The observed window: the one bound to the target before (it must still be
// there, viewable, with the pid), else the pid's viewable window that
// matches the frame and the title. Never a window of another pid.
// The X server drops a dead client's windows only once it notices the closed connection: until then they are
// still listed, viewable, under the dead pid. The process itself says at once that it is dying or dead, though
// kill(pid, 0) still succeeds (process_life.h). `start` is the process's start time when the window was matched
// (0: not yet); it is set to the current one.
Error ObservedProcessGone(int64_t pid, uint64_t& start) {
  const ProcessLife life = ProcessLifeOf(pid);
  const bool reused = start != 0 && life.start != 0 && life.start != start;
  if (!life.running || reused)
    return Error{ErrorCode::kAppNotFound, "the app (pid " + std::to_string(pid) + ") has exited" +
                                              (life.running ? " and its pid is another process's now" : "")};
  start = life.start;
  return {};
}

Error ResolveObserved(Impl& d, const X11Display::Target& t, unsigned long bound, uint64_t& start,
                      const std::vector<Client>& all, Client& out) {
  if (t.pid <= 0) return Error{ErrorCode::kAppNotFound, "the observed window has no pid"};
  if (Error gone = ObservedProcessGone(t.pid, start)) return gone;
  if (bound != 0) {
    for (const auto& c : all) {
      if (c.client == bound && c.pid == t.pid && c.viewable) {
        out = c;
        return {};
      }
    }
    return ObservedGone(all, t.pid);
  }
  const Client* best = nullptr;
  for (const auto& c : all) {
    if (!c.viewable || c.pid != t.pid) continue;
    if (FrameKnown(t.frame) && IntersectionArea(c.rect, t.frame) <= 0) continue;
    if (!TitlesAgree(d.Name(c.client), t.title)) continue;
    if (BetterMatch(c, best, t.frame)) best = &c;
  }
  if (best == nullptr) return ObservedGone(all, t.pid);
  out = *best;
  return {};
}

const Client* TopmostAt(const std::vector<Client>& all, int x, int y) {
  for (size_t i = all.size(); i-- > 0;) {  // stacking order: bottom to top
    const Client& c = all[i];
    if (c.viewable && x >= c.outer.x && x < c.outer.x + c.outer.w && y >= c.outer.y && y < c.outer.y + c.outer.h)
      return &c;
  }
  return nullptr;
}

}  // namespace

namespace x11 {

// Whether input at a point covered by `hit` goes to the observed app's
// observed window: the window itself, its transient (dialog, menu) or an
// override-redirect popup of the same pid. `why` names the intruder.
bool MayReceive(Impl& d, const Client& observed, const Client* hit, std::string& why) {
  if (hit == nullptr) {
    why = "no window";
    return false;
  }
  if (hit->top == observed.top) return true;
  if (hit->pid != observed.pid) {
    why = "window " + Hex(hit->top) + " of " + (hit->pid > 0 ? "pid " + std::to_string(hit->pid) : "an unknown app");
    return false;
  }
  if (hit->overrideRedirect) return true;
  Window w = hit->client;
  for (int depth = 0; depth < 4 && w != 0; ++depth) {
    w = d.TransientFor(w);
    if (w != 0 && (w == observed.client || w == observed.top)) return true;
  }
  why = "window " + Hex(hit->top) + " of the same app, which is neither the observed window nor its dialog or popup";
  return false;
}

}  // namespace x11

namespace {

// The first point where input would reach a window other than the observed
// one (or its popups); -1 when every point is fine.
int FirstRefusedPoint(Impl& d, const Client& observed, const std::vector<Client>& all, const std::vector<Point>& pts,
                      std::string& why) {
  for (size_t i = 0; i < pts.size(); ++i) {
    if (!MayReceive(d, observed, TopmostAt(all, pts[i].x, pts[i].y), why)) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

namespace x11 {

// The check before every batch of events: the observed window is found (by
// identity, never another pid's), raised if something covers one of the
// points, and every point is then on it or on one of its popups. On any
// failure nothing has been sent.
Error PrepareInput(Impl& d, const X11Display::Target& t, unsigned long bound, uint64_t& start, std::vector<Point> pts,
                   Client& observed, bool keyboard) {
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  d.BeginTrap();
  std::vector<Client> all = d.Clients();
  Error err = ResolveObserved(d, t, bound, start, all, observed);
  if (err) {
    d.EndTrap();
    return err;
  }
  if (pts.empty()) {
    pts.push_back(Point{static_cast<int>(observed.rect.x + observed.rect.w / 2),
                        static_cast<int>(observed.rect.y + observed.rect.h / 2)});
  }
  const bool wm = d.HasWindowManager();
  std::string why;
  int refused = FirstRefusedPoint(d, observed, all, pts, why);
  if (refused >= 0) {
    RequestRaise(d, observed, wm);
    const auto t0 = Clock::now();
    for (int attempt = 0; refused >= 0 && MsSince(t0) <= 200; ++attempt) {
      SleepMs(10);
      if (attempt % 3 == 2) RequestRaise(d, observed, wm);
      all = d.Clients();
      if ((err = ResolveObserved(d, t, observed.client, start, all, observed))) break;
      refused = FirstRefusedPoint(d, observed, all, pts, why);
    }
  }
  std::string focusWhy;
  const bool focusOk = err || refused >= 0 || !keyboard || FocusObserved(d, observed, all, wm, focusWhy);
  d.EndTrap();
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  if (err) return err;
  if (refused >= 0) {
    return Error{ErrorCode::kInputFailed, "the observed window " + Hex(observed.client) + " is not on top at (" +
                                              std::to_string(pts[refused].x) + ", " + std::to_string(pts[refused].y) +
                                              "): " + why + " is there"};
  }
  if (!focusOk)
    return Error{ErrorCode::kInputFailed, "keyboard focus is not in the observed window " + Hex(observed.client) +
                                              " but in " + focusWhy + "; nothing was sent"};
  // Raising and focusing can take a while: the app may have been killed since it was first asked.
  return ObservedProcessGone(t.pid, start);
}

}  // namespace x11
}  // namespace axsnap
