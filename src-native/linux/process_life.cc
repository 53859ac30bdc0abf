#include "process_life.h"

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "proc_files.h"

namespace axsnap {
namespace {

constexpr unsigned long kPfExiting = 0x00000004;  // include/linux/sched.h: set as do_exit() begins

bool ReadAll(const std::string& path, std::string& out) { return ReadProcFile(path, out) && !out.empty(); }

// A "SigPnd:"/"ShdPnd:" mask of /proc/<pid>/status (hex, bit n-1 for signal n).
bool KillPending(const std::string& status) {
  for (const char* field : {"\nSigPnd:", "\nShdPnd:"}) {
    const size_t at = status.find(field);
    if (at == std::string::npos) continue;
    const unsigned long long mask = std::strtoull(status.c_str() + at + 8, nullptr, 16);
    if (mask & (1ULL << (SIGKILL - 1))) return true;
  }
  return false;
}

}  // namespace

ProcessLife ProcessLifeOf(int64_t pid) {
  ProcessLife life;
  if (pid <= 0) return life;
  const std::string dir = "/proc/" + std::to_string(pid);
  std::string stat;
  if (!ReadAll(dir + "/stat", stat)) {
    std::string self;
    if (ReadAll("/proc/self/stat", self)) return life;  // /proc is there and the pid is not
    // No /proc to read: the process table is all there is to ask.
    life.running = !(kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
    return life;
  }
  // After the command name (in parentheses, which may hold anything): state (field 3) onwards.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return life;
  std::istringstream fields(stat.substr(close + 1));
  std::vector<std::string> f;
  for (std::string w; fields >> w && f.size() < 20;) f.push_back(w);
  if (f.size() < 20) return life;
  const char state = f[0].empty() ? '?' : f[0][0];
  const unsigned long flags = std::strtoul(f[6].c_str(), nullptr, 10);  // field 9
  life.start = std::strtoull(f[19].c_str(), nullptr, 10);               // field 22
  if (state == 'Z' || state == 'X' || state == 'x' || (flags & kPfExiting)) return life;
  std::string status;
  if (ReadAll(dir + "/status", status) && KillPending(status)) return life;
  life.running = true;
  return life;
}

}  // namespace axsnap
