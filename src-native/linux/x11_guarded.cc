// X11Display's guarded operations, the ones the backend uses: capture of the
// observed window and input to it only. Each posts one job to the X thread
// that runs the observed-window check (x11_observed.cc) right before its first
// event, so a refusal means nothing was sent, and a failure after it is
// reported as delivery uncertain. Text is typed in chunks, each checked, and
// no chunk is started that would likely run past the deadline.
//
// The X calls themselves are in x11_capture.cc, x11_pointer.cc and x11_keys.cc
// (XTEST, MIT-SHM); what the checks rely on (EWMH, ICCCM) in x11_observed.cc.
// PointerEvent. Its default virtual methods leave parameters unused, which the
// hand-built x11_selftest (-Wextra -Werror) would reject.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../core/backend.h"
#pragma GCC diagnostic pop

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "x11_display.h"
#include "x11_internal.h"

namespace axsnap {
namespace {

Error NothingSent(Error e) {
  if (e && e.message.find("nothing was sent") == std::string::npos) e.message += ": nothing was sent";
  return e;
}

constexpr auto kInputGrace = std::chrono::milliseconds(300);  // a healthy server's last batch may run a little over
constexpr auto kCaptureFloor = std::chrono::milliseconds(250);
constexpr auto kCaptureCap = std::chrono::seconds(5);
constexpr size_t kTypeChunk = 24;  // code points per checked batch

}  // namespace

// Runs one guarded batch: `send` calls `check` (identity and on-top checks
// at `points`) right before its first event. Errors before that say nothing
// was sent; any failure after it is kDeliveryUncertain.
Error X11Display::Guarded(const Target& target, Clock::time_point deadline,
                          const std::vector<std::pair<int, int>>& points, const Send& send, bool& sent) {
  sent = false;
  if (Clock::now() >= deadline) return NothingSent(Error{ErrorCode::kTimeout, "the deadline passed"});
  if (Error e = Open(deadline)) return NothingSent(e);
  const auto key = std::make_pair(target.pid, target.element);
  const auto it = bound_.find(key);
  const Binding bound = target.element != 0 && it != bound_.end() ? it->second : Binding{};
  // Written on the X thread before `started`, read here after Run: a finished or abandoned job's last word.
  auto matched = std::make_shared<Binding>();
  auto matchedSet = std::make_shared<std::atomic<bool>>(false);
  std::vector<Point> pts;
  for (const auto& p : points) pts.push_back(Point{p.first, p.second});
  Outcome outcome;
  Error e = Run(
      deadline + kInputGrace,
      [target, bound, matched, matchedSet, pts, send](Impl& d, std::atomic<bool>& started) -> Error {
        return send(d, [&]() -> Error {
          Client observed;
          uint64_t start = bound.start;
          // Key batches come without points (they go where keyboard focus is, not under a point).
          if (Error err = PrepareInput(d, target, bound.xid, start, pts, observed, pts.empty())) return err;
          *matched = Binding{observed.client, start};
          matchedSet->store(true);
          started = true;
          return {};
        });
      },
      outcome);
  sent = outcome.sent;
  if (matchedSet->load() && target.element != 0 && conn_) bound_[key] = *matched;
  if (!e) return {};
  if (!sent) return NothingSent(e);
  if (outcome.timedOut) {
    return Error{ErrorCode::kDeliveryUncertain,
                 "the X server stopped answering while input was being sent; it may have arrived"};
  }
  return Error{ErrorCode::kDeliveryUncertain, "input was being sent when it failed (" + e.message + ")"};
}

Error X11Display::CaptureWindow(const Target& target, Clock::time_point deadline, std::vector<uint8_t>& rgba,
                                int& width, int& height, Rect& captured) {
  rgba.clear();
  width = height = 0;
  captured = Rect{};
  // Bounded by the snapshot's deadline, with a floor so a walk cut by its deadline still gets a screenshot.
  const auto now = Clock::now();
  const auto until = std::clamp(deadline, now + kCaptureFloor, now + kCaptureCap);
  const auto key = std::make_pair(target.pid, target.element);
  const auto it = bound_.find(key);
  const Binding bound = target.element != 0 && it != bound_.end() ? it->second : Binding{};
  struct Shot {
    std::vector<uint8_t> rgba;
    int width = 0, height = 0;
    Rect captured;
    Binding matched;
  };
  auto shot = std::make_shared<Shot>();
  Outcome outcome;
  Error e = Run(
      until,
      [target, bound, shot](Impl& d, std::atomic<bool>&) -> Error {
        // The area is read after raising the window, so what is captured is the window itself. A window that
        // cannot be matched is still captured by its frame (best effort, as the accessibility layer saw it).
        Client observed;
        std::vector<Point> centre;
        if (FrameKnown(target.frame))
          centre.push_back(Point{static_cast<int>(std::floor(target.frame.x + target.frame.w / 2)),
                                 static_cast<int>(std::floor(target.frame.y + target.frame.h / 2))});
        uint64_t start = bound.start;
        if (!PrepareInput(d, target, bound.xid, start, centre, observed, /*keyboard=*/false))
          shot->matched = Binding{observed.client, start};
        if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "the X display connection was lost"};
        return XCaptureRect(d, target.frame, shot->rgba, shot->width, shot->height, shot->captured);
      },
      outcome);
  if (shot->matched.xid != 0 && target.element != 0 && conn_) bound_[key] = shot->matched;
  if (outcome.timedOut) return Error{ErrorCode::kCaptureFailed, "the X server did not answer within the deadline"};
  if (e) return e;
  rgba = std::move(shot->rgba);
  width = shot->width;
  height = shot->height;
  captured = shot->captured;
  return {};
}

Error X11Display::Pointer(const Target& target, const PointerEvent& ev, Clock::time_point deadline) {
  int px = 0, py = 0, qx = 0, qy = 0;
  if (!ToPixel(ev.x, px) || !ToPixel(ev.y, py))
    return Error{ErrorCode::kInvalidArgument, "pointer point is not finite: nothing was sent"};
  std::vector<std::pair<int, int>> points{{px, py}};
  if (ev.kind == PointerEvent::Kind::kDrag) {
    if (!ToPixel(ev.toX, qx) || !ToPixel(ev.toY, qy))
      return Error{ErrorCode::kInvalidArgument, "drag end is not finite: nothing was sent"};
    points.emplace_back(qx, qy);  // both ends must be on the observed window (or its popup) before the press
  }
  bool sent = false;
  return Guarded(
      target, deadline, points,
      [ev](Impl& d, const std::function<Error()>& check) -> Error {
        if (Error e = check()) return e;
        switch (ev.kind) {
          case PointerEvent::Kind::kClick: return XClick(d, ev.x, ev.y, ev.button, ev.count);
          case PointerEvent::Kind::kWheel: return XWheel(d, ev.x, ev.y, ev.dx, ev.dy);
          case PointerEvent::Kind::kDrag: return XDrag(d, ev.x, ev.y, ev.toX, ev.toY, ev.button);
          case PointerEvent::Kind::kMove: return XMove(d, ev.x, ev.y);
        }
        return {};
      },
      sent);
}

Error X11Display::SendKeys(const Target& target, const std::string& combo, Clock::time_point deadline) {
  bool sent = false;
  return Guarded(
      target, deadline, {},
      [combo](Impl& d, const std::function<Error()>& check) -> Error { return XKeys(d, combo, check); }, sent);
}

Error X11Display::TypeText(const Target& target, const std::string& utf8, Clock::time_point deadline, size_t& typed) {
  typed = 0;
  std::vector<uint32_t> cps;
  if (!DecodeUtf8(utf8, cps)) return Error{ErrorCode::kInvalidArgument, "text is not valid UTF-8: nothing was sent"};
  std::vector<KeySym> all;
  if (Error e = ToKeysyms(cps, all)) return NothingSent(e);  // refuse the whole text before typing any of it
  const size_t total = cps.size();
  auto progress = [&]() { return std::to_string(typed) + " of " + std::to_string(total) + " characters typed"; };
  std::chrono::milliseconds lastChunk{0};
  size_t i = 0;
  while (i < total) {
    size_t j = std::min(total, i + kTypeChunk);
    if (cps[j - 1] == '\r' && j < total && cps[j] == '\n') ++j;  // keep CRLF (one Return) in one chunk
    // Do not start a chunk that would likely run past the deadline.
    if (Clock::now() + lastChunk >= deadline) {
      if (typed == 0)
        return Error{ErrorCode::kTimeout, "the deadline passed before typing: " + progress() + ", nothing was sent"};
      return Error{ErrorCode::kDeliveryUncertain, "typing stopped at the deadline: " + progress()};
    }
    std::vector<KeySym> chunk;
    if (Error e = ToKeysyms(
            std::vector<uint32_t>(cps.begin() + static_cast<long>(i), cps.begin() + static_cast<long>(j)), chunk))
      return e;
    const auto t0 = Clock::now();
    bool sent = false;
    Error e = Guarded(
        target, deadline, {},
        [chunk](Impl& d, const std::function<Error()>& check) -> Error {
          if (Error err = check()) return err;
          return XTypeSyms(d, chunk);
        },
        sent);
    if (e) {
      if (typed == 0 && !sent) return e;  // says nothing was sent
      const std::string pending = sent ? " (the next " + std::to_string(j - i) + " may have been partly sent)" : "";
      return Error{ErrorCode::kDeliveryUncertain, "typing stopped: " + progress() + pending + ": " + e.message};
    }
    lastChunk = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
    typed += j - i;
    i = j;
  }
  return {};
}

}  // namespace axsnap
