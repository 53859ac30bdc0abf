// peerUid(fd); see peer_js.h.
#include "peer_js.h"

#include "../core/peer_uid.h"

namespace axsnap {
namespace napi {

napi_value PeerUidJs(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_value out = nullptr;
  int32_t fd = -1;
  uint32_t uid = 0;
  // Anything but a descriptor number, or a descriptor that is no connected Unix socket: null.
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 1 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0 || !PeerUidOf(fd, &uid)) {
    napi_get_null(env, &out);
    return out;
  }
  napi_create_uint32(env, uid, &out);
  return out;
}

}  // namespace napi
}  // namespace axsnap
