// The tiny addon axsnap_peer: peerUid alone (peer_js.h), for the CLI client,
// which loads it on every command it hands to the warm process. A target of
// its own in binding.gyp, built as build/Release/axsnap_peer.so (and shipped
// as prebuilds/<platform>-<arch>/axsnap_peer.so): not a .node file, because
// node-gyp-build loads the first .node file it lists there as the addon.
#include <node_api.h>

#include "peer_js.h"

NAPI_MODULE_INIT() {
  napi_value fn = nullptr;
  if (napi_create_function(env, "peerUid", NAPI_AUTO_LENGTH, axsnap::napi::PeerUidJs, nullptr, &fn) == napi_ok)
    napi_set_named_property(env, exports, "peerUid", fn);
  return exports;
}
