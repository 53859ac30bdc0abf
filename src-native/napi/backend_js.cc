// NativeBackend's lifetime, its worker and how a call's promise settles; see backend_js.h.
#include "backend_js.h"

#include "convert.h"
#if defined(AXSNAP_LINUX)
#include "../linux/linux_backend.h"
#endif
#if defined(AXSNAP_MAC) || defined(AXSNAP_MAC_FAKE)
#include "../mac/mac_backend.h"
#endif
#if defined(AXSNAP_MAC_FAKE)
#include "world_from_js.h"
#endif

namespace axsnap {
namespace napi {

namespace {

// The queue time of the call being settled on this JS thread: its rejection
// carries it, so a deadline spent waiting behind our own jobs is not blamed
// on the app (lib/session/act/resolve.ts). One per thread: the addon is loaded in
// worker_threads too, each settling its own calls on its own thread.
thread_local double settlingQueuedMs = 0;

}  // namespace

Napi::Error ToJsError(Napi::Env env, const Error& err) {
  Napi::Error e = Napi::Error::New(env, err.message);
  e.Set("nativeCode", ErrorCodeName(err.code));
  if (!err.hint.empty()) e.Set("nativeHint", err.hint);
  if (settlingQueuedMs > 0) e.Set("queuedMs", settlingQueuedMs);
  return e;
}

double Clamp(const Napi::Value& v, double lo, double hi, double fallback) {
  double x = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : fallback;
  if (!(x == x)) x = fallback;  // NaN
  return x < lo ? lo : x > hi ? hi : x;
}

Clock::time_point DeadlineFrom(const Napi::Value& v) {
  const double ms = Clamp(v, 0, 600000, 5000);
  return Clock::now() + std::chrono::microseconds(static_cast<int64_t>(ms * 1000));
}

Napi::Function NativeBackend::Init(Napi::Env env) {
  return DefineClass(env, "NativeBackend",
                     {
                         InstanceMethod<&NativeBackend::Connect>("connect"),
                         InstanceMethod<&NativeBackend::ListApps>("listApps"),
                         InstanceMethod<&NativeBackend::Snapshot>("snapshot"),
                         InstanceMethod<&NativeBackend::ListWindows>("listWindows"),
                         InstanceMethod<&NativeBackend::Launchable>("launchable"),
                         InstanceMethod<&NativeBackend::Launch>("launch"),
                         InstanceMethod<&NativeBackend::DoAction>("doAction"),
                         InstanceMethod<&NativeBackend::Toolkit>("toolkit"),
                         InstanceMethod<&NativeBackend::SetText>("setText"),
                         InstanceMethod<&NativeBackend::SetNumber>("setNumber"),
                         InstanceMethod<&NativeBackend::Focus>("focus"),
                         InstanceMethod<&NativeBackend::Select>("select"),
                         InstanceMethod<&NativeBackend::Pointer>("pointer"),
                         InstanceMethod<&NativeBackend::Keys>("keys"),
                         InstanceMethod<&NativeBackend::TypeText>("typeText"),
                         InstanceMethod<&NativeBackend::RecognizeText>("recognizeText"),
                         InstanceMethod<&NativeBackend::Release>("release"),
                         InstanceMethod<&NativeBackend::HandleStats>("handleStats"),
                         InstanceMethod<&NativeBackend::Close>("close"),
                         InstanceMethod<&NativeBackend::ReadElement>("readElement"),
                         InstanceMethod<&NativeBackend::FocusedElement>("focusedElement"),
                         InstanceMethod<&NativeBackend::ElementAt>("elementAt"),
                         InstanceMethod<&NativeBackend::InsertText>("insertText"),
                         InstanceMethod<&NativeBackend::Permissions>("permissions"),
                         InstanceMethod<&NativeBackend::FakeLog>("fakeLog"),
                         InstanceMethod<&NativeBackend::FakeReplace>("fakeReplace"),
                         InstanceMethod<&NativeBackend::FakeReleased>("fakeReleased"),
                         InstanceMethod<&NativeBackend::Watch>("watch"),
                         InstanceMethod<&NativeBackend::WaitEvents>("waitEvents"),
                         InstanceMethod<&NativeBackend::WaitQuiet>("waitQuiet"),
                         InstanceMethod<&NativeBackend::Unwatch>("unwatch"),
                         InstanceMethod<&NativeBackend::LastCall>("lastCall"),
                         InstanceMethod<&NativeBackend::CallStarted>("callStarted"),
                     });
}

NativeBackend::NativeBackend(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NativeBackend>(info) {
  Napi::Env env = info.Env();
  const std::string kind = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  if (kind == "fake") {
    if (!info[1].IsObject()) throw Napi::TypeError::New(env, "a fake backend needs a script object");
    auto fake = std::make_unique<FakeBackend>(FakeScriptFromJs(info[1].As<Napi::Object>()));
    fake_ = fake.get();
    backend_ = std::move(fake);
#if defined(AXSNAP_LINUX)
  } else if (kind == "linux") {
    backend_ = std::make_unique<LinuxBackend>();
#endif
#if defined(AXSNAP_MAC)
  } else if (kind == "macos") {
    auto mac = std::make_unique<MacBackend>(CreateAppKitSystem());
    mac_ = mac.get();
    backend_ = std::move(mac);
#endif
#if defined(AXSNAP_MAC_FAKE)
  } else if (kind == "mac-fake") {
    if (!info[1].IsObject()) throw Napi::TypeError::New(env, "a mac-fake backend needs a world object");
    InstallFakeWorld(info[1].As<Napi::Object>());
    auto mac = std::make_unique<MacBackend>(CreateFakeMacSystem());
    mac_ = mac.get();
    backend_ = std::move(mac);
    macFake_ = true;
#endif
  } else {
    throw Napi::Error::New(env, "no backend \"" + kind + "\" on this platform");
  }
  tsfn_ = Napi::ThreadSafeFunction::New(env, Napi::Function(), "axsnap", 0, 1);
  // Idle backends must not keep the process alive; pending calls Ref it.
  tsfn_.Unref(env);
  worker_ = std::make_unique<Worker>();
  // Registered after the tsfn, so it runs before the tsfn's own teardown
  // (hooks run in reverse order): at exit, or when a worker_threads Worker
  // ends, the worker thread is stopped while the tsfn is still valid.
  napi_add_env_cleanup_hook(env, &NativeBackend::OnEnvTeardown, this);
  env_ = env;
}

NativeBackend::~NativeBackend() {
  if (!tornDown_) napi_remove_env_cleanup_hook(env_, &NativeBackend::OnEnvTeardown, this);
  Shutdown(/*dropQueued=*/false);
}

void NativeBackend::OnEnvTeardown(void* self) {
  auto* backend = static_cast<NativeBackend*>(self);
  backend->tornDown_ = true;
  // Nobody will await the queued calls any more: drop them rather than run them.
  backend->Shutdown(/*dropQueued=*/true);
}

void NativeBackend::Shutdown(bool dropQueued) {
  if (shutDown_) return;
  shutDown_ = true;
  closed_ = true;
  if (dropQueued) worker_->Cancel();
  // The backend is destroyed on its worker, after the jobs already queued
  // (which still run and settle: the tsfn outlives them): its destructor
  // makes platform calls (macOS: AX observers removed, attributes reset)
  // that belong on that thread, not on the JavaScript thread. Then the
  // thread joins.
  worker_->Post([this] { DestroyBackend(); });
  worker_->Stop();
  backend_.reset();  // only if the worker could not take it (already stopped)
  tsfn_.Release();
}

void NativeBackend::DestroyBackend() {
  if (!backend_) return;
  JobScope scope(*backend_);
  backend_.reset();
}

Napi::Value NativeBackend::Run(Napi::Env env, std::function<Settle(Backend&)> work) {
  auto deferred = Napi::Promise::Deferred::New(env);
  if (closed_) {
    deferred.Reject(Napi::Error::New(env, "the backend is closed").Value());
    return deferred.Promise();
  }
  auto* call = new Call{deferred, nullptr};
  if (pending_++ == 0) tsfn_.Ref(env);
  // The wrapper must outlive its pending calls: their completions run on it.
  Ref();
  Backend* backend = backend_.get();
  Napi::ThreadSafeFunction tsfn = tsfn_;
  const Clock::time_point posted = Clock::now();
  const uint64_t id = ++lastCall_;
  worker_->Post([this, call, backend, work = std::move(work), tsfn, posted, id]() mutable {
    startedCall_.store(id, std::memory_order_relaxed);
    call->queuedMs = std::chrono::duration<double, std::milli>(Clock::now() - posted).count();
    // Nothing thrown on the worker may reach std::terminate: it becomes a rejection.
    try {
      JobScope scope(*backend);
      call->settle = work(*backend);
    } catch (const std::exception& e) {
      call->settle = Fail({ErrorCode::kInternal, std::string("internal error: ") + e.what()});
    } catch (...) {
      call->settle = Fail({ErrorCode::kInternal, "internal error"});
    }
    napi_status status = tsfn.BlockingCall(call, [this](Napi::Env env, Napi::Function, Call* c) {
      // A null env: the tsfn is being torn down with this call still queued; only free it.
      if (static_cast<napi_env>(env) == nullptr) {
        delete c;
        return;
      }
      // While an environment terminates (a worker_threads Worker ending), every JS
      // operation can throw, the rejection included: nothing may escape this callback.
      try {
        Napi::HandleScope scope(env);
        try {
          settlingQueuedMs = c->queuedMs;
          c->settle(env, c->deferred);
          settlingQueuedMs = 0;
        } catch (const Napi::Error& e) {
          c->deferred.Reject(e.Value());
        } catch (...) {
          c->deferred.Reject(Napi::Error::New(env, "internal error").Value());
        }
      } catch (...) {
      }
      settlingQueuedMs = 0;
      delete c;
      try {
        if (--pending_ == 0 && !closed_) tsfn_.Unref(env);
        Unref();
      } catch (...) {
      }
    });
    // The environment is going away: the completion will never run, so free it here.
    if (status != napi_ok) delete call;
  });
  return deferred.Promise();
}

Napi::Value NativeBackend::Rejected(Napi::Env env, const Error& err) {
  auto d = Napi::Promise::Deferred::New(env);
  d.Reject(ToJsError(env, err).Value());
  return d.Promise();
}

Settle NativeBackend::Fail(const Error& err) {
  return [err](Napi::Env env, Napi::Promise::Deferred& d) { d.Reject(ToJsError(env, err).Value()); };
}

Settle NativeBackend::Done() {
  return [](Napi::Env env, Napi::Promise::Deferred& d) { d.Resolve(env.Undefined()); };
}

Napi::Value NativeBackend::Connect(const Napi::CallbackInfo& info) {
  Clock::time_point deadline = DeadlineFrom(info[0]);
  return Run(info.Env(), [deadline](Backend& b) -> Settle {
    if (Error err = b.ConnectWithin(deadline)) return Fail(err);
    return Done();
  });
}

Napi::Value NativeBackend::Release(const Napi::CallbackInfo& info) {
  std::vector<ElementId> ids;
  Napi::Array arr = info[0].As<Napi::Array>();
  for (uint32_t i = 0; i < arr.Length(); i++)
    ids.push_back(static_cast<ElementId>(arr.Get(i).As<Napi::Number>().DoubleValue()));
  return Run(info.Env(), [this, ids](Backend& b) -> Settle {
    ledger_.Release(b, ids);
    return Done();
  });
}

Napi::Value NativeBackend::HandleStats(const Napi::CallbackInfo& info) {
  return Run(info.Env(), [this](Backend& b) -> Settle {
    const double held = static_cast<double>(ledger_.Held());
    const int64_t table = b.HandleTableSize();
    return [held, table](Napi::Env env, Napi::Promise::Deferred& d) {
      Napi::Object o = Napi::Object::New(env);
      o.Set("held", held);
      o.Set("table", table < 0 ? env.Null() : Napi::Number::New(env, static_cast<double>(table)));
      d.Resolve(o);
    };
  });
}

Napi::Value NativeBackend::Close(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (closed_) {
    auto d = Napi::Promise::Deferred::New(env);
    d.Resolve(env.Undefined());
    return d.Promise();
  }
  Napi::Value promise = Run(env, [this](Backend&) -> Settle {
    backend_.reset();
    return [this](Napi::Env e, Napi::Promise::Deferred& d) {
      Shutdown(/*dropQueued=*/false);
      d.Resolve(e.Undefined());
    };
  });
  closed_ = true;
  return promise;
}

Napi::Value NativeBackend::Permissions(const Napi::CallbackInfo& info) {
  const bool prompt = info[0].ToBoolean().Value();
  return Run(info.Env(), [prompt](Backend& b) -> Settle {
    auto status = std::make_shared<PermissionStatus>();
    if (Error err = b.Permissions(*status, prompt)) return Fail(err);
    return [status](Napi::Env env, Napi::Promise::Deferred& d) {
      Napi::Object o = Napi::Object::New(env);
      o.Set("accessibility", status->accessibility);
      o.Set("screenRecording", status->screenRecording);
      if (!status->windowSource.empty()) o.Set("windowSource", status->windowSource);
      if (!status->windowDetail.empty()) o.Set("windowDetail", status->windowDetail);
      if (status->mutter) o.Set("mutter", true);
      d.Resolve(o);
    };
  });
}

Napi::Value NativeBackend::LastCall(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(lastCall_));
}

Napi::Value NativeBackend::CallStarted(const Napi::CallbackInfo& info) {
  const double n = Clamp(info[0], 0, 9007199254740991.0, 0);
  return Napi::Boolean::New(info.Env(), static_cast<double>(startedCall_.load(std::memory_order_relaxed)) >= n);
}

}  // namespace napi
}  // namespace axsnap
