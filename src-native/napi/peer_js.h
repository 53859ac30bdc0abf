// peerUid(fd): the uid of the process at the other end of a connected Unix
// socket (core/peer_uid.h), or null when it cannot be read.
//
// Plain N-API (node_api.h), not node-addon-api: it is also the whole of the
// tiny addon axsnap_peer (peer_addon.cc) that the CLI client loads on every
// command it hands to the warm process, which then links nothing but libc
// (the full addon's libraries cost several milliseconds to load).
#pragma once

#include <node_api.h>

namespace axsnap {
namespace napi {

napi_value PeerUidJs(napi_env env, napi_callback_info info);

}  // namespace napi
}  // namespace axsnap
