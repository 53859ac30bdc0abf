// The addon's module: what it exports (the NativeBackend class of
// backend_js.h, the marked-screenshot encoder, and per platform its name and
// test hooks), with node-addon-api's Addon class.
#include <napi.h>

#include "backend_js.h"
#include "marks_js.h"
#if defined(AXSNAP_PEER_UID)
#include "peer_js.h"
#endif
#if defined(AXSNAP_LINUX)
#include "../linux/linux_backend.h"
#endif
#if defined(AXSNAP_MAC) || defined(AXSNAP_MAC_FAKE)
#include "../mac/mac_backend.h"
#endif
#if defined(AXSNAP_MAC_FAKE)
// The test-only build (test/native/macfake): the macOS backend over a fake
// CoreFoundation/AX layer and a scripted MacSystem.
#include "world_from_js.h"
#endif

namespace axsnap {
namespace {

using napi::NativeBackend;

class Addon : public Napi::Addon<Addon> {
 public:
  Addon(Napi::Env env, Napi::Object exports) {
    DefineAddon(exports, {InstanceValue("NativeBackend", NativeBackend::Init(env), napi_enumerable)});
    exports.Set("encodeMarked", Napi::Function::New(env, EncodeMarked, "encodeMarked"));
#if defined(AXSNAP_PEER_UID)
    // Also the whole of the tiny addon axsnap_peer (peer_addon.cc); here for a process that has this one loaded.
    napi_value peer_uid = nullptr;
    NAPI_THROW_IF_FAILED_VOID(
        env, napi_create_function(env, "peerUid", NAPI_AUTO_LENGTH, napi::PeerUidJs, nullptr, &peer_uid));
    exports.Set("peerUid", Napi::Value(env, peer_uid));
#endif
#if defined(AXSNAP_MAC_FAKE)
    // Live fake CF objects: every test of the macOS backend ends at zero.
    exports.Set("fakeCFLive", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                  return Napi::Number::New(info.Env(), static_cast<double>(FakeCFLiveObjects()));
                }));
    exports.Set("fakeAXCalls", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                  return Napi::Number::New(info.Env(), static_cast<double>(FakeAXCalls()));
                }));
    exports.Set("fakeWorldClear", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                  ClearFakeWorld();
                  return info.Env().Undefined();
                }));
    RegisterMacDirect(env, exports);
    RegisterVisionRules(env, exports);
#endif
#if defined(AXSNAP_LINUX)
    exports.Set("platformBackend", "linux");
    // The X keysym a key name resolves to (case-insensitive), for tests and error messages; null when none.
    exports.Set("keysymName", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                  if (info.Length() < 1 || !info[0].IsString()) return info.Env().Null();
                  const std::string x = KeysymNameOf(info[0].As<Napi::String>().Utf8Value());
                  if (x.empty()) return info.Env().Null();
                  return Napi::String::New(info.Env(), x);
                }));
#elif defined(AXSNAP_MAC)
    exports.Set("platformBackend", "macos");
#else
    exports.Set("platformBackend", env.Null());
#endif
  }
};

}  // namespace
}  // namespace axsnap

using AxsnapAddon = axsnap::Addon;
NODE_API_ADDON(AxsnapAddon)
