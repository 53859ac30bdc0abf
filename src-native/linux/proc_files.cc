// Non-throwing /proc reads; see proc_files.h for why.
#include "proc_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace axsnap {

bool ReadOpenFile(int fd, std::string& out) {
  out.clear();
  char chunk[4096];
  for (;;) {
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n > 0) {
      out.append(chunk, static_cast<size_t>(n));
    } else if (n == 0) {
      return true;
    } else if (errno != EINTR) {
      out.clear();
      return false;
    }
  }
}

bool ReadProcFile(const std::string& path, std::string& out) {
  out.clear();
  int fd;
  do fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return false;
  const bool ok = ReadOpenFile(fd, out);
  close(fd);
  return ok;
}

}  // namespace axsnap
