// Reads of a process's /proc files made after it exited, through the
// readers the addon uses (see src-native/linux/proc_files.h). Run by
// test/native/proc-files.test.ts; exit status 0 when every check passes.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "../../../src-native/linux/proc_files.h"
#include "../../../src-native/linux/process_life.h"
#include "../../../src-native/linux/x11_clients.h"

namespace {

int failures = 0;

void Check(bool ok, const char* what) {
  std::printf("%s %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) ++failures;
}

pid_t Child() {
  const pid_t pid = fork();
  if (pid == 0) {
    pause();
    _exit(0);
  }
  return pid;
}

void Reap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace

int main() {
  const pid_t child = Child();
  const std::string dir = "/proc/" + std::to_string(child) + "/";
  std::string text;
  Check(axsnap::ReadProcFile(dir + "cmdline", text) && !text.empty(), "a live process's cmdline reads");
  Check(axsnap::ProcessLifeOf(child).running, "a live process is running");
  Check(!axsnap::ProgramName(child).empty(), "a live process has a program name");

  // Opened while the process lived, read after it has gone: the read fails with ESRCH.
  const int cmdline = open((dir + "cmdline").c_str(), O_RDONLY);
  const int stat = open((dir + "stat").c_str(), O_RDONLY);
  Check(cmdline >= 0 && stat >= 0, "the files open while the process lives");
  Reap(child);
  Check(!axsnap::ReadOpenFile(cmdline, text) && text.empty(), "cmdline of an exited process: false, nothing read");
  Check(!axsnap::ReadOpenFile(stat, text) && text.empty(), "stat of an exited process: false, nothing read");
  close(cmdline);
  close(stat);

  Check(!axsnap::ReadProcFile(dir + "cmdline", text), "a gone pid's file does not open");
  Check(!axsnap::ProcessLifeOf(child).running, "a gone pid is not running");
  Check(axsnap::ProgramName(child).empty(), "a gone pid has no program name");
  Check(!axsnap::ReadProcFile("/nonexistent/axsnap", text), "a missing file is false");

  std::printf(failures == 0 ? "all checks passed\n" : "%d checks failed\n", failures);
  return failures == 0 ? 0 : 1;
}
