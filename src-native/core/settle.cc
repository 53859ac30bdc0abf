#include "settle.h"

#include <algorithm>

namespace axsnap {

namespace {
double MsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::chrono::milliseconds FloorOf(const AppEventState& st) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::max(0.0, std::min(st.quietFloorMs, 60000.0))));
}
}  // namespace

Error WaitQuiet(Backend& backend, const AppInfo& app, std::chrono::milliseconds quiet, Clock::time_point cap,
                SettleResult& out) {
  const Clock::time_point start = Clock::now();
  out = SettleResult{};
  // Watch is bounded by the cap too, but a cap already past still gets a short
  // chance to subscribe: a wait of 0 ms must still say whether events exist.
  const Clock::time_point watchDeadline = std::max(cap, start + std::chrono::milliseconds(200));
  if (Error err = backend.Watch(app, watchDeadline)) {
    if (err.code != ErrorCode::kActionNotSupported) return err;
    out.settled = "unsupported";
    out.ms = MsBetween(start, Clock::now());
    return {};
  }
  // The baseline: what was pending before the wait is dispatched now and counts
  // as seen (its time is when it arrived, as the backend reports it).
  AppEventState st;
  if (Error err = backend.WaitEvents(app.pid, 0, start, st)) return err;
  const uint64_t base = st.stamp, windowBase = st.windowStamp;
  quiet = std::max(quiet, FloorOf(st));
  out.quietMs = static_cast<double>(quiet.count());
  uint64_t stamp = st.stamp;
  Clock::time_point last = start;
  for (;;) {
    const Clock::time_point now = Clock::now();
    if (now - last >= quiet) {
      out.settled = "quiet";
      break;
    }
    if (now >= cap) {
      out.settled = "cap";
      break;
    }
    const Clock::time_point until = std::min(last + quiet, cap);
    if (Error err = backend.WaitEvents(app.pid, stamp, until, st)) {
      out.ms = MsBetween(start, Clock::now());
      out.events = st.stamp >= base ? st.stamp - base : 0;
      return err;
    }
    quiet = std::max(quiet, FloorOf(st));
    out.quietMs = static_cast<double>(quiet.count());
    if (st.stamp > stamp) {
      stamp = st.stamp;
      // When the newest event arrived (msSinceLast is measured by the backend at return).
      const auto ago = std::chrono::microseconds(static_cast<int64_t>(std::max(0.0, st.msSinceLast) * 1000));
      last = std::max(last, Clock::now() - ago);
    }
  }
  out.ms = MsBetween(start, Clock::now());
  out.events = st.stamp - base;
  out.windowEvents = st.windowStamp - windowBase;
  return {};
}

}  // namespace axsnap
