// The peer's uid on macOS: getpeereid(3) (LOCAL_PEERCRED underneath), the
// effective uid the peer had when it connected or called listen().
#include "../core/peer_uid.h"

#include <sys/types.h>
#include <unistd.h>

#if !defined(__APPLE__)
// The Linux syntax check of the macOS sources (scripts/check-macos.mjs) reads
// glibc's <unistd.h>, which has no getpeereid: macOS's declaration of it.
extern "C" int getpeereid(int fd, uid_t* euid, gid_t* egid);
#endif

namespace axsnap {

bool PeerUidOf(int fd, uint32_t* uid) {
  uid_t euid = 0;
  gid_t egid = 0;
  if (getpeereid(fd, &euid, &egid) != 0) return false;
  *uid = static_cast<uint32_t>(euid);
  return true;
}

}  // namespace axsnap
