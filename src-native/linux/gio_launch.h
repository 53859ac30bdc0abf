// Starting apps on Linux through their desktop entries (GIO's
// GDesktopAppInfo), as a desktop shell does: the entry's Exec line, its
// field codes filled from the arguments, in the environment the caller
// gives. Name matching happens in JS (lib/session/launch/launch.ts) over the listing.
#pragma once

#include <vector>

#include "../core/types.h"

namespace axsnap {

// Every desktop entry GIO knows (XDG_DATA_DIRS, XDG_DATA_HOME), NoDisplay
// ones included: they are still launchable by id.
Error GioLaunchable(std::vector<LaunchableApp>& out);
// Starts one entry (a desktop id, or the path of a .desktop file) and gives
// the pid GIO spawned; 0 when the entry is D-Bus activated (no process of
// ours to name).
Error GioLaunch(const LaunchRequest& request, int64_t& pid);

}  // namespace axsnap
