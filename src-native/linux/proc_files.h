// Reading a process's files under /proc (proc(5)) while that process may exit.
//
// A read of /proc/<pid>/… after the task has gone fails with ESRCH, even on
// a descriptor opened while it lived. std::ifstream turns that failed read
// into a std::ios_failure thrown from basic_filebuf::underflow (libstdc++
// does so whatever the stream's exceptions() mask), which nothing on the
// X thread catches: the host process was terminated. These read with
// read(2) and report a failure as false.
#pragma once

#include <string>

namespace axsnap {

// The whole file at path; false when it cannot be opened or a read fails.
bool ReadProcFile(const std::string& path, std::string& out);

// The rest of an open file, read to its end; false when a read fails (the
// descriptor stays open: the caller owns it).
bool ReadOpenFile(int fd, std::string& out);

}  // namespace axsnap
