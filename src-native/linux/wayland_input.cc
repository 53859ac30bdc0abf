// The Mutter route (wayland_input.h). Buttons are evdev codes
// (linux/input-event-codes.h: BTN_LEFT 0x110, BTN_RIGHT 0x111, BTN_MIDDLE
// 0x112); keys are X keysyms, which mutter maps onto its keymap and adds
// Shift for itself (NotifyKeyboardKeysym); a wheel step is one discrete
// axis step (NotifyPointerAxisDiscrete: axis 0 vertical, 1 horizontal).
#include "wayland_input.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "pipewire_frame.h"
#include "wayland_frames.h"
#include "x11_display.h"

namespace axsnap {
namespace {

constexpr unsigned kBtnLeft = 0x110, kBtnRight = 0x111, kBtnMiddle = 0x112;
constexpr unsigned long kReturn = 0xff0d, kTab = 0xff09;

Error NothingSent(Error e) {
  if (e.message.find("nothing was sent") == std::string::npos) e.message += ": nothing was sent";
  return e;
}

Error Uncertain(const Error& e) {
  return {ErrorCode::kDeliveryUncertain,
          "GNOME's compositor stopped answering while input was being sent; it may have arrived (" + e.message + ")"};
}

unsigned EvdevButton(int button) { return button == 3 ? kBtnRight : button == 2 ? kBtnMiddle : kBtnLeft; }

// UTF-8 to code points; false when malformed.
bool Decode(const std::string& s, std::vector<uint32_t>& out) {
  out.clear();
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (n < 0 || i + size_t(n) >= s.size() + (n == 0 ? 1 : 0)) return false;  // truncated sequence
    uint32_t cp = n == 0 ? c : c & (0x3f >> n);
    for (int k = 1; k <= n; k++) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 2) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    out.push_back(cp);
    i += n + 1;
  }
  return true;
}

}  // namespace

bool WaylandRoute::Active(Clock::time_point deadline) {
  if (active_) return true;
  const auto now = Clock::now();
  if (checked_ != Clock::time_point{} && now - checked_ < std::chrono::seconds(5)) return false;
  checked_ = now;
  active_ = session_.Available(std::min(deadline, now + std::chrono::milliseconds(500)));
  return active_;
}

std::string WaylandRoute::CaptureMissing() {
  std::string why;
  return PipeWireAvailable(why) ? std::string() : why;
}

Error WaylandRoute::Locate(const MutterTarget& target, Rect& screen, bool& topmost, Clock::time_point deadline,
                           Rect* frame) {
  std::vector<ShellWindow> ws;
  if (Error e = shell_.Windows(ws, deadline)) return e;
  auto it = std::find_if(ws.begin(), ws.end(), [&](const ShellWindow& w) { return w.id == target.shellId; });
  if (it == ws.end()) return {ErrorCode::kElementGone, "GNOME Shell no longer lists the window", "take a new snapshot"};
  screen = target.fromFrame ? it->frame : it->buffer;
  if (frame) *frame = it->frame;
  topmost = true;
  // The window's own open menus (popup surfaces above it) are part of what it shows: they do not cover it.
  for (const ShellWindow& w : ws)
    if (w.stack > it->stack && !w.hidden && !w.minimized && Intersects(w.frame, it->frame) &&
        !MenuOfWindow(ws, w.id, it->id))
      topmost = false;
  return {};
}

Error WaylandRoute::Capture(const MutterTarget& target, std::vector<uint8_t>& rgba, int& width, int& height,
                            Rect& captured, Clock::time_point deadline) {
  rgba.clear();
  width = height = 0;
  const std::string missing = CaptureMissing();
  if (!missing.empty()) return {ErrorCode::kCaptureFailed, missing};
  Rect screen, frame;
  bool topmost = true;
  if (Error e = Locate(target, screen, topmost, deadline, &frame))
    return {e.code == ErrorCode::kTimeout ? e.code : ErrorCode::kCaptureFailed,
            "cannot find the window in GNOME Shell: " + e.message};
  // The monitor shows what is on top: bring the window up first (best effort, as on X11).
  if (!topmost && !shell_.Activate(target.shellId, deadline)) Locate(target, screen, topmost, deadline, &frame);
  if (screen.w <= 0 || screen.h <= 0) return {ErrorCode::kCaptureFailed, "the window has no size yet"};
  if (Error e = session_.Ensure(deadline))
    return {e.code == ErrorCode::kTimeout ? e.code : ErrorCode::kCaptureFailed, e.message};
  std::vector<uint8_t> full;
  int fw = 0, fh = 0;
  Rect crop;
  if (Error e = GrabPipeWireFrame(session_.NodeId(), deadline, full, fw, fh, crop)) return e;
  // Stream pixel (0,0) is the screen point monitor origin + the stream's crop offset.
  const Rect& mon = session_.Monitor();
  const double ox = mon.x + crop.x, oy = mon.y + crop.y;
  const double wx = screen.x - ox, wy = screen.y - oy;
  const int x0 = std::max(0, int(std::floor(wx))), y0 = std::max(0, int(std::floor(wy)));
  const int x1 = std::min(fw, int(std::ceil(wx + screen.w))), y1 = std::min(fh, int(std::ceil(wy + screen.h)));
  if (x1 <= x0 || y1 <= y0) return {ErrorCode::kCaptureFailed, "the window is entirely off the monitor"};
  width = x1 - x0;
  height = y1 - y0;
  rgba.resize(size_t(width) * height * 4);
  for (int y = 0; y < height; y++)
    std::copy_n(full.data() + (size_t(y0 + y) * fw + x0) * 4, size_t(width) * 4, rgba.data() + size_t(y) * width * 4);
  captured = Rect{ox + x0, oy + y0, double(width), double(height)};
  ClearOutsideFrame(rgba.data(), width, height, captured, frame);
  return {};
}

Error WaylandRoute::PointOnWindow(const MutterTarget& target, double sx, double sy, Clock::time_point deadline) {
  ShellInputState st;
  if (Error e = shell_.InputState(sx, sy, st, deadline)) return e;
  if (st.modal > 0)
    return {ErrorCode::kInputFailed, "a GNOME Shell dialog holds the input (modal): nothing was sent",
            "dismiss the shell's dialog (pressKey Escape) and try again"};
  if (st.shellUi)
    return {ErrorCode::kInputFailed,
            "GNOME Shell's own UI (its top bar, a notification) covers that point on screen: nothing was sent",
            "move the window clear of the top bar (it lies partly under it) or act on an element elsewhere"};
  // An open menu of the window (its own popup surface, above it, up the transient chain) takes the press as
  // the window's: the hit test before a pixel click asked that menu what is there (LinuxBackend::MenuAtPoint),
  // or, for Chromium's <select> popup, whose options are in the page's tree, the option's own frame
  // (lib/session/act/pixels.ts). As on X11 (x11_observed.cc MayReceive: the observed window or one of its popups).
  if (st.atPoint != 0 && st.atPoint != target.shellId) {
    std::vector<ShellWindow> windows;
    if (Error e = shell_.Windows(windows, deadline)) return e;
    if (MenuOfWindow(windows, st.atPoint, target.shellId)) return {};
  }
  if (st.atPoint != target.shellId)
    return {ErrorCode::kInputFailed,
            st.atPoint == 0 ? "no window is at that point on screen: nothing was sent"
                            : "another window covers that point: nothing was sent",
            "take a new snapshot: the window may have moved or been covered"};
  return {};
}

Error WaylandRoute::Pointer(const MutterTarget& target, const PointerEvent& ev, Clock::time_point deadline) {
  if (!std::isfinite(ev.x) || !std::isfinite(ev.y) || !std::isfinite(ev.toX) || !std::isfinite(ev.toY))
    return {ErrorCode::kInvalidArgument, "pointer point is not finite: nothing was sent"};
  if (Error e = PointOnWindow(target, ev.x, ev.y, deadline)) return NothingSent(e);
  if (ev.kind == PointerEvent::Kind::kDrag)
    if (Error e = PointOnWindow(target, ev.toX, ev.toY, deadline)) return NothingSent(e);
  if (Error e = session_.Ensure(deadline)) return NothingSent(e);
  // Absolute motion is in the monitor stream's space, which starts at the monitor's screen origin.
  const Rect& mon = session_.Monitor();
  return SendPointer(session_, ev, -mon.x, -mon.y, deadline);
}

Error WaylandRoute::SendPointer(MutterSession& session, const PointerEvent& ev, double dx, double dy,
                                Clock::time_point deadline) {
  const double sx = ev.x, sy = ev.y, tx = ev.toX, ty = ev.toY;
  const std::string stream = session.StreamPath();
  bool sent = false, anySent = false;
  auto notify = [&](const char* method, GVariant* args) -> Error {
    Error e = session.Notify(method, args, deadline, sent);
    anySent = anySent || sent;
    return e;
  };
  auto move = [&](double x, double y) {
    return notify("NotifyPointerMotionAbsolute", g_variant_new("(sdd)", stream.c_str(), x + dx, y + dy));
  };
  const unsigned button = EvdevButton(ev.button);
  Error e;
  switch (ev.kind) {
    case PointerEvent::Kind::kMove: e = move(sx, sy); break;
    case PointerEvent::Kind::kClick:
      e = move(sx, sy);
      for (int i = 0; !e && i < std::max(1, ev.count); i++) {
        e = notify("NotifyPointerButton", g_variant_new("(ib)", int(button), TRUE));
        if (!e) e = notify("NotifyPointerButton", g_variant_new("(ib)", int(button), FALSE));
      }
      break;
    case PointerEvent::Kind::kWheel: {
      e = move(sx, sy);
      const int vy = std::clamp(int(std::lround(ev.dy)), -200, 200);
      const int vx = std::clamp(int(std::lround(ev.dx)), -200, 200);
      if (!e && vy != 0) e = notify("NotifyPointerAxisDiscrete", g_variant_new("(ui)", 0u, vy));
      if (!e && vx != 0) e = notify("NotifyPointerAxisDiscrete", g_variant_new("(ui)", 1u, vx));
      break;
    }
    case PointerEvent::Kind::kDrag: {
      e = move(sx, sy);
      if (!e) e = notify("NotifyPointerButton", g_variant_new("(ib)", int(button), TRUE));
      // Steps, so toolkits see a drag rather than a jump.
      constexpr int kSteps = 8;
      for (int i = 1; !e && i <= kSteps; i++) e = move(sx + (tx - sx) * i / kSteps, sy + (ty - sy) * i / kSteps);
      if (!e || anySent) {
        Error up = notify("NotifyPointerButton", g_variant_new("(ib)", int(button), FALSE));
        if (!e) e = up;
      }
      break;
    }
  }
  if (!e) return {};
  if (!anySent) return NothingSent(e);
  return Uncertain(e);
}

Error WaylandRoute::KeyFocus(const MutterTarget& target, Clock::time_point deadline) {
  ShellInputState st;
  if (Error e = shell_.InputState(NAN, NAN, st, deadline)) return e;
  if (st.modal > 0)
    return {ErrorCode::kInputFailed, "a GNOME Shell dialog holds the input (modal)",
            "dismiss the shell's dialog and try again"};
  if (st.focused == target.shellId) return {};
  // Activate waits until the shell reports the window focused and on top.
  if (Error e = shell_.Activate(target.shellId, deadline)) {
    if (e.code == ErrorCode::kTimeout || e.code == ErrorCode::kElementGone) return e;
    return {ErrorCode::kInputFailed, "the window does not have keyboard focus and could not be given it: " + e.message,
            "click into the window first, or use setValue"};
  }
  return {};
}

Error WaylandRoute::SendSyms(MutterSession& via, const std::vector<std::pair<unsigned long, bool>>& events,
                             Clock::time_point deadline, bool& anySent) {
  anySent = false;
  for (const auto& [sym, down] : events) {
    bool sent = false;
    Error e =
        via.Notify("NotifyKeyboardKeysym", g_variant_new("(ub)", unsigned(sym), down ? TRUE : FALSE), deadline, sent);
    anySent = anySent || sent;
    if (e) return e;
  }
  return {};
}

Error WaylandRoute::Keys(const MutterTarget& target, const std::string& combo, Clock::time_point deadline) {
  return KeysWith(
      session_, [&](Clock::time_point d) { return KeyFocus(target, d); }, combo, deadline);
}

Error WaylandRoute::KeysWith(MutterSession& via, const FocusCheck& focus, const std::string& combo,
                             Clock::time_point deadline) {
  KeyCombo parsed;
  if (Error e = ParseKeyCombo(combo, parsed)) return NothingSent(e);
  if (Error e = via.Ensure(deadline)) return NothingSent(e);
  if (Error e = focus(deadline)) return NothingSent(e);
  std::vector<std::pair<unsigned long, bool>> events;
  for (unsigned long m : parsed.mods) events.emplace_back(m, true);
  events.emplace_back(parsed.key, true);
  events.emplace_back(parsed.key, false);
  for (size_t i = parsed.mods.size(); i-- > 0;) events.emplace_back(parsed.mods[i], false);
  bool sent = false;
  Error e = SendSyms(via, events, deadline, sent);
  if (!e) return {};
  // A modifier left down would change every later key: release them, best effort.
  if (sent) {
    const auto grace = Clock::now() + std::chrono::milliseconds(200);
    for (unsigned long m : parsed.mods) {
      bool s = false;
      via.Notify("NotifyKeyboardKeysym", g_variant_new("(ub)", unsigned(m), FALSE), grace, s);
    }
    return Uncertain(e);
  }
  return NothingSent(e);
}

Error WaylandRoute::TypeText(const MutterTarget& target, const std::string& text, Clock::time_point deadline,
                             size_t& typed) {
  return TypeTextWith(
      session_, [&](Clock::time_point d) { return KeyFocus(target, d); }, text, deadline, typed);
}

Error WaylandRoute::TypeTextWith(MutterSession& via, const FocusCheck& focus, const std::string& text,
                                 Clock::time_point deadline, size_t& typed) {
  typed = 0;
  std::vector<uint32_t> cps;
  if (!Decode(text, cps)) return {ErrorCode::kInvalidArgument, "text is not valid UTF-8: nothing was sent"};
  std::vector<unsigned long> syms;
  for (size_t i = 0; i < cps.size(); i++) {
    const uint32_t cp = cps[i];
    if (cp == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') continue;  // CRLF is one Return
    if (cp >= 0x20 && cp <= 0x7e) {
      syms.push_back(cp);
    } else if (cp == '\n' || cp == '\r') {
      syms.push_back(kReturn);
    } else if (cp == '\t') {
      syms.push_back(kTab);
    } else {
      char buf[16];
      std::snprintf(buf, sizeof buf, "U+%04X", cp);
      return {ErrorCode::kInputFailed,
              std::string("GNOME's compositor types only what its keyboard layout has: character ") + buf + " (at " +
                  std::to_string(i) + ") would be dropped: nothing was sent",
              "set the field's text with setValue, which does not go through the keyboard"};
    }
  }
  if (Error e = via.Ensure(deadline)) return NothingSent(e);
  if (Error e = focus(deadline)) return NothingSent(e);
  for (unsigned long sym : syms) {
    bool sent = false;
    Error e = SendSyms(via, {{sym, true}, {sym, false}}, deadline, sent);
    if (e) {
      if (typed == 0 && !sent) return NothingSent(e);
      return {ErrorCode::kDeliveryUncertain, "typing stopped: " + std::to_string(typed) + " of " +
                                                 std::to_string(syms.size()) + " characters typed: " + e.message};
    }
    typed++;
  }
  return {};
}

// --- Windows with no known place: the focused window's own stream ---

Error WaylandRoute::OpenFocused(const FocusedWindow& window, ErrorCode code, bool forKeys, std::vector<uint8_t>& frame,
                                int& fw, int& fh, Rect& crop, Clock::time_point deadline) {
  frame.clear();
  fw = fh = 0;
  auto as = [&](Error e) {
    if (e.code != ErrorCode::kTimeout && e.code != ErrorCode::kElementGone) e.code = code;
    return e;
  };
  const char* kHint =
      "bring the window to the front (click it, or switch to it with Alt+Tab), then take a new snapshot; or run the "
      "app on the agent's Wayland desktop (axsnap desktop start NAME --wayland), where any window can be raised";
  const std::string missing = CaptureMissing();
  if (!missing.empty()) {
    if (forKeys && window.toolkitActive(deadline)) return {};
    return {code, "which window has keyboard focus cannot be checked: " + missing,
            "install PipeWire (libpipewire-0.3), or act through the accessibility tree (click by index, setValue)"};
  }
  retired_ = std::move(window_);
  window_ = std::make_unique<MutterSession>(MutterSession::Source::kFocusedWindow);
  if (Error e = window_->Ensure(deadline)) return as(e);
  if (Error e = GrabPipeWireFrame(window_->NodeId(), deadline, frame, fw, fh, crop)) return as(e);
  // The stream holds the focused window's buffer from its corner (the crop), cut at the stream's size. It is
  // this window when the AT-SPI window is that buffer (its size, up to the cut).
  const double ew = std::min(window.width, double(fw)), eh = std::min(window.height, double(fh));
  if (std::fabs(ew - crop.w) < 0.5 && std::fabs(eh - crop.h) < 0.5 && crop.x == 0 && crop.y == 0) return {};
  if (forKeys && window.toolkitActive(deadline)) return {};
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "the focused window's surface is %.0fx%.0f but this window's accessible frame is %.0fx%.0f", crop.w,
                crop.h, window.width, window.height);
  return {code,
          std::string(buf) +
              ": either another window has keyboard focus (GNOME's compositor records and takes input for the "
              "focused window only, and nothing here can raise another while GNOME Shell refuses Eval), or this "
              "window's coordinates start inside its surface (a toolkit that measures from its frame within its "
              "client-side shadow, as GTK4 does), where only GNOME Shell knows the offset",
          kHint};
}

Error WaylandRoute::CaptureFocused(const FocusedWindow& window, std::vector<uint8_t>& rgba, int& width, int& height,
                                   Rect& captured, Clock::time_point deadline) {
  rgba.clear();
  width = height = 0;
  std::vector<uint8_t> full;
  int fw = 0, fh = 0;
  Rect crop;
  Error e = OpenFocused(window, ErrorCode::kCaptureFailed, false, full, fw, fh, crop, deadline);
  if (window_) window_->Drop(false);
  if (e) return e;
  const int x0 = std::max(0, int(crop.x)), y0 = std::max(0, int(crop.y));
  width = std::min(fw - x0, int(std::lround(crop.w)));
  height = std::min(fh - y0, int(std::lround(crop.h)));
  if (width <= 0 || height <= 0) return {ErrorCode::kCaptureFailed, "the window's stream showed nothing"};
  rgba.resize(size_t(width) * height * 4);
  for (int y = 0; y < height; y++)
    std::copy_n(full.data() + (size_t(y0 + y) * fw + x0) * 4, size_t(width) * 4, rgba.data() + size_t(y) * width * 4);
  // In the window's own coordinates: the buffer's corner is the AT-SPI window's (0,0).
  captured = Rect{0, 0, double(width), double(height)};
  return {};
}

Error WaylandRoute::PointerFocused(const FocusedWindow& window, const PointerEvent& ev, Clock::time_point deadline) {
  if (!std::isfinite(ev.x) || !std::isfinite(ev.y) || !std::isfinite(ev.toX) || !std::isfinite(ev.toY))
    return {ErrorCode::kInvalidArgument, "pointer point is not finite: nothing was sent"};
  auto inside = [&](double x, double y) { return x >= 0 && y >= 0 && x < window.width && y < window.height; };
  if (!inside(ev.x, ev.y) || (ev.kind == PointerEvent::Kind::kDrag && !inside(ev.toX, ev.toY)))
    return {ErrorCode::kInputFailed,
            "the point is outside the window: a window with no known place on screen takes points in its own "
            "coordinates only: nothing was sent",
            "take a new snapshot and use its frames (they are relative to the window)"};
  std::vector<uint8_t> frame;
  int fw = 0, fh = 0;
  Rect crop;
  if (Error e = OpenFocused(window, ErrorCode::kInputFailed, false, frame, fw, fh, crop, deadline)) {
    if (window_) window_->Drop(false);
    return NothingSent(e);
  }
  // Points must also fall on what the stream shows of the window (a window wider than the monitor is cut).
  auto shown = [&](double x, double y) { return x < crop.w && y < crop.h; };
  if (!shown(ev.x, ev.y) || (ev.kind == PointerEvent::Kind::kDrag && !shown(ev.toX, ev.toY))) {
    if (window_) window_->Drop(false);
    return {ErrorCode::kInputFailed,
            "the point is on a part of the window beyond the monitor's size, which its stream does not show: nothing "
            "was sent",
            "make the window smaller or act through the accessibility tree"};
  }
  // The stream stays bound to the window it was made for, whatever has focus by now: the points land on it.
  // A fresh session's first motion to where the pointer already is (the previous call's point: a hover before a
  // click) changed nothing for mutter, and the press went to no surface (seen on 43): a step beside it first.
  {
    bool sent = false;
    const double nx = ev.x >= 1 ? ev.x - 1 : ev.x + 1;
    if (Error e = window_->Notify("NotifyPointerMotionAbsolute",
                                  g_variant_new("(sdd)", window_->StreamPath().c_str(), nx, ev.y), deadline, sent))
      return sent ? Uncertain(e) : NothingSent(e);
  }
  // Stream space is the buffer's, as are the points (crop at the buffer's corner: window point = buffer point).
  // The session is left open until the next call (which makes a new one): stopped right after the events,
  // mutter removed its virtual pointer before GTK had the release, and the click did nothing (seen on 43).
  return SendPointer(*window_, ev, 0, 0, deadline);
}

Error WaylandRoute::FocusedForKeys(const FocusedWindow& window, MutterSession*& via, Clock::time_point deadline) {
  std::vector<uint8_t> frame;
  int fw = 0, fh = 0;
  Rect crop;
  via = &session_;
  if (Error e = OpenFocused(window, ErrorCode::kInputFailed, true, frame, fw, fh, crop, deadline)) {
    if (window_) window_->Drop(false);
    return e;
  }
  // The keys go through the session just made (not stopped: see retired_); without PipeWire there is none.
  if (window_ && !window_->StreamPath().empty()) {
    via = window_.get();
    via->TapShift(deadline);
  }
  return {};
}

Error WaylandRoute::KeysFocused(const FocusedWindow& window, const std::string& combo, Clock::time_point deadline) {
  MutterSession* via = nullptr;
  if (Error e = FocusedForKeys(window, via, deadline)) return NothingSent(e);
  return KeysWith(
      *via, [](Clock::time_point) { return Error{}; }, combo, deadline);
}

Error WaylandRoute::TypeTextFocused(const FocusedWindow& window, const std::string& text, Clock::time_point deadline,
                                    size_t& typed) {
  typed = 0;
  MutterSession* via = nullptr;
  if (Error e = FocusedForKeys(window, via, deadline)) return NothingSent(e);
  return TypeTextWith(
      *via, [](Clock::time_point) { return Error{}; }, text, deadline, typed);
}

}  // namespace axsnap
