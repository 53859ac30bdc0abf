// Settling: wait until an app has been quiet (no change event) for a short
// period, or a cap passes. Built on Backend::Watch / WaitEvents, so it is the
// same on every platform; a backend without events answers "unsupported" at
// once and the caller falls back to whatever it did before.
#pragma once

#include <chrono>
#include <string>

#include "backend.h"

namespace axsnap {

struct SettleResult {
  std::string settled;        // "quiet" | "cap" | "unsupported"
  double ms = 0;              // time spent in WaitQuiet
  uint64_t events = 0;        // change events seen while waiting
  uint64_t windowEvents = 0;  // of which about windows, menus, popups, dialogs
  double quietMs = 0;         // the quiet period applied: the one asked, or the app's floor when longer
};

// Quiet = no event for `quiet` (or the app's AppEventState::quietFloorMs
// when longer: an app that batches its changes), measured from the last
// event seen during the wait, or from the start when none arrives (so a
// quiet app costs `quiet`).
// Never returns after `cap` by more than one dispatch. Errors: those of
// Watch (app gone, bus gone) and WaitEvents (the bus closed mid-wait).
Error WaitQuiet(Backend& backend, const AppInfo& app, std::chrono::milliseconds quiet, Clock::time_point cap,
                SettleResult& out);

}  // namespace axsnap
