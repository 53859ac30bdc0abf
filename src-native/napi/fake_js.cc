// NativeBackend's calls for the scripted test backends (fake/, and the macOS fake layer's log).
#include "backend_js.h"

#include "convert.h"
#if defined(AXSNAP_MAC_FAKE)
#include "world_from_js.h"
#endif

namespace axsnap {
namespace napi {

Napi::Value NativeBackend::FakeReplace(const Napi::CallbackInfo& info) {
  if (!fake_ || closed_) throw Napi::Error::New(info.Env(), "not a fake backend, or closed");
  auto script = std::make_shared<FakeScript>(FakeScriptFromJs(info[0].As<Napi::Object>()));
  FakeBackend* fake = fake_;
  return Run(info.Env(), [fake, script](Backend&) -> Settle {
    fake->Replace(std::move(*script));
    return Done();
  });
}

Napi::Value NativeBackend::FakeLog(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
#if defined(AXSNAP_MAC_FAKE)
  if (macFake_) {
    std::vector<std::string> log = FakeWorldLog();
    Napi::Array arr = Napi::Array::New(env, log.size());
    for (size_t i = 0; i < log.size(); i++) arr.Set(i, log[i]);
    return arr;
  }
#endif
  if (!fake_ || closed_) return Napi::Array::New(env);
  std::vector<std::string> log = fake_->Log();
  Napi::Array arr = Napi::Array::New(env, log.size());
  for (size_t i = 0; i < log.size(); i++) arr.Set(i, log[i]);
  return arr;
}

Napi::Value NativeBackend::FakeReleased(const Napi::CallbackInfo& info) {
  if (!fake_ || closed_) return Napi::Number::New(info.Env(), 0);
  return Napi::Number::New(info.Env(), static_cast<double>(fake_->ReleasedCount()));
}

}  // namespace napi
}  // namespace axsnap
