// Who is at the other end of a connected Unix-domain socket: the CLI's warm
// process and its clients (lib/doors/cli/daemon.ts, lib/doors/cli/daemon-client.ts) serve
// and trust only a process of their own user, whatever the socket's path
// looked like when it was checked. One implementation per platform:
// linux/peer_uid.cc (SO_PEERCRED), mac/peer_uid.cc (getpeereid).
#pragma once

#include <cstdint>

namespace axsnap {

// The effective uid of the peer of the connected Unix socket fd (the one it
// had when it connected or listened); false when fd is not one or the kernel
// does not say.
bool PeerUidOf(int fd, uint32_t* uid);

}  // namespace axsnap
