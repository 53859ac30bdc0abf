// Whether the process behind a pid can still be the app that input is meant
// for. kill(pid, 0) is not enough: it succeeds for a killed process while the
// kernel tears it down and, after that, until its parent collects its exit
// status (a zombie). Meanwhile the X server keeps listing its windows,
// viewable and under its pid, until it notices the closed connection (longer
// when another process shares that connection); input sent then lands in
// whatever window gets the focus next.
//
// From /proc/<pid>/stat and /proc/<pid>/status (proc(5)): gone when the pid
// is not there, is a zombie or dead (state Z, X), is exiting (PF_EXITING in
// the flags), or has SIGKILL pending. The start time (field 22) tells one
// process from a later one that was given the same pid.
#pragma once

#include <cstdint>

namespace axsnap {

struct ProcessLife {
  bool running = false;
  uint64_t start = 0;  // clock ticks after boot; 0 when unknown
};

ProcessLife ProcessLifeOf(int64_t pid);

}  // namespace axsnap
