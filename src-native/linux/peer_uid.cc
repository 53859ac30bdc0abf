// The peer's uid on Linux: SO_PEERCRED (unix(7)), the credentials the kernel
// recorded when the peer connected or called listen().
#include "../core/peer_uid.h"

#include <sys/socket.h>

namespace axsnap {

bool PeerUidOf(int fd, uint32_t* uid) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) return false;
  *uid = cred.uid;
  return true;
}

}  // namespace axsnap
