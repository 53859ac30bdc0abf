// The N-API surface of axsnap: one class, NativeBackend, whose methods return
// promises. Each method copies its arguments into plain C++ values on the
// JavaScript thread (the baton), runs on the backend's worker thread without
// touching Napi::, and settles its promise back on the JavaScript thread
// through a thread-safe function. Typed in lib/native.ts; never exported as
// the public API.
#include <napi.h>

#include <atomic>
#include <memory>

#include "../core/handles.h"
#include "../core/settle.h"
#include "../core/snapshot.h"
#include "../core/walk.h"
#include "../core/worker.h"
#include "../fake/fake_backend.h"
#include "convert.h"
#include "marks_js.h"
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

using Settle = std::function<void(Napi::Env, Napi::Promise::Deferred&)>;

// The longest a waitEvents job keeps the worker once another job is queued.
constexpr std::chrono::milliseconds kWaitTurn{10};

struct Call {
  Napi::Promise::Deferred deferred;
  Settle settle;
  // How long the job waited in the worker's queue before it started.
  double queuedMs = 0;
};

// The queue time of the call being settled on this JS thread: its rejection
// carries it, so a deadline spent waiting behind our own jobs is not blamed
// on the app (lib/act/resolve.ts). One per thread: the addon is loaded in
// worker_threads too, each settling its own calls on its own thread.
thread_local double settlingQueuedMs = 0;

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

// Live reads for one job's scope, off again however the job ends (a throw included).
class LiveReads {
 public:
  explicit LiveReads(Backend& b) : b_(b) { b_.SetLiveReads(true); }
  ~LiveReads() { b_.SetLiveReads(false); }
  LiveReads(const LiveReads&) = delete;
  LiveReads& operator=(const LiveReads&) = delete;

 private:
  Backend& b_;
};

// Whatever the backend wants around each worker job (Backend::BeginJob:
// macOS pushes an autorelease pool), ended when the job ends, thrown or not.
class JobScope {
 public:
  explicit JobScope(Backend& b) : end_(b.BeginJob()) {}
  ~JobScope() {
    if (end_) end_();
  }
  JobScope(const JobScope&) = delete;
  JobScope& operator=(const JobScope&) = delete;

 private:
  std::function<void()> end_;
};

class NativeBackend : public Napi::ObjectWrap<NativeBackend> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "NativeBackend",
                       {
                           InstanceMethod<&NativeBackend::Connect>("connect"),
                           InstanceMethod<&NativeBackend::ListApps>("listApps"),
                           InstanceMethod<&NativeBackend::Snapshot>("snapshot"),
                           InstanceMethod<&NativeBackend::ListWindows>("listWindows"),
                           InstanceMethod<&NativeBackend::Launchable>("launchable"),
                           InstanceMethod<&NativeBackend::Launch>("launch"),
                           InstanceMethod<&NativeBackend::DoAction>("doAction"),
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

  NativeBackend(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NativeBackend>(info) {
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
      backend_ = std::make_unique<MacBackend>(CreateAppKitSystem());
#endif
#if defined(AXSNAP_MAC_FAKE)
    } else if (kind == "mac-fake") {
      if (!info[1].IsObject()) throw Napi::TypeError::New(env, "a mac-fake backend needs a world object");
      InstallFakeWorld(info[1].As<Napi::Object>());
      backend_ = std::make_unique<MacBackend>(CreateFakeMacSystem());
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

  ~NativeBackend() override {
    if (!tornDown_) napi_remove_env_cleanup_hook(env_, &NativeBackend::OnEnvTeardown, this);
    Shutdown(/*dropQueued=*/false);
  }

 private:
  static void OnEnvTeardown(void* self) {
    auto* backend = static_cast<NativeBackend*>(self);
    backend->tornDown_ = true;
    // Nobody will await the queued calls any more: drop them rather than run them.
    backend->Shutdown(/*dropQueued=*/true);
  }

  void Shutdown(bool dropQueued) {
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

  // On the worker: the backend's destruction is a job like the others (in
  // close() it is part of the closing job).
  void DestroyBackend() {
    if (!backend_) return;
    JobScope scope(*backend_);
    backend_.reset();
  }

  // Posts `work` to the worker; `work` returns the settle step run on the JS thread.
  Napi::Value Run(Napi::Env env, std::function<Settle(Backend&)> work) {
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

  // A promise already rejected: arguments refused before anything reaches the worker.
  static Napi::Value Rejected(Napi::Env env, const Error& err) {
    auto d = Napi::Promise::Deferred::New(env);
    d.Reject(ToJsError(env, err).Value());
    return d.Promise();
  }

  static Settle Fail(const Error& err) {
    return [err](Napi::Env env, Napi::Promise::Deferred& d) { d.Reject(ToJsError(env, err).Value()); };
  }

  static Settle Done() {
    return [](Napi::Env env, Napi::Promise::Deferred& d) { d.Resolve(env.Undefined()); };
  }

  // connect(deadlineMs?): connecting (and finding the accessibility bus) is bounded by the deadline.
  Napi::Value Connect(const Napi::CallbackInfo& info) {
    Clock::time_point deadline = DeadlineFrom(info[0]);
    return Run(info.Env(), [deadline](Backend& b) -> Settle {
      if (Error err = b.ConnectWithin(deadline)) return Fail(err);
      return Done();
    });
  }

  Napi::Value ListApps(const Napi::CallbackInfo& info) {
    Clock::time_point deadline = DeadlineFrom(info[0]);
    return Run(info.Env(), [deadline](Backend& b) -> Settle {
      auto apps = std::make_shared<std::vector<AppInfo>>();
      if (Error err = b.ListApps(*apps, deadline)) return Fail(err);
      return [apps](Napi::Env env, Napi::Promise::Deferred& d) {
        Napi::Array arr = Napi::Array::New(env, apps->size());
        for (size_t i = 0; i < apps->size(); i++) arr.Set(i, AppToJs(env, (*apps)[i]));
        d.Resolve(arr);
      };
    });
  }

  // launchable(deadlineMs): what the system can start, [{ id, name, executable, path, hidden }].
  Napi::Value Launchable(const Napi::CallbackInfo& info) {
    Clock::time_point deadline = DeadlineFrom(info[0]);
    return Run(info.Env(), [deadline](Backend& b) -> Settle {
      auto apps = std::make_shared<std::vector<LaunchableApp>>();
      if (Error err = b.Launchable(*apps, deadline)) return Fail(err);
      return [apps](Napi::Env env, Napi::Promise::Deferred& d) {
        Napi::Array arr = Napi::Array::New(env, apps->size());
        for (size_t i = 0; i < apps->size(); i++) {
          const LaunchableApp& a = (*apps)[i];
          Napi::Object o = Napi::Object::New(env);
          o.Set("id", a.id);
          o.Set("name", a.name);
          o.Set("executable", a.executable);
          o.Set("path", a.path);
          o.Set("hidden", a.hidden);
          arr.Set(i, o);
        }
        d.Resolve(arr);
      };
    });
  }

  // launch({ id, args?, env?, deadlineMs }): starts one launchable() id or path; resolves { pid } (0: unknown).
  Napi::Value Launch(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject()) return Rejected(env, {ErrorCode::kInvalidArgument, "launch needs a request object"});
    Napi::Object o = info[0].As<Napi::Object>();
    LaunchRequest req;
    if (!o.Get("id").IsString() || o.Get("id").As<Napi::String>().Utf8Value().empty())
      return Rejected(env, {ErrorCode::kInvalidArgument, "launch needs an id"});
    req.id = o.Get("id").As<Napi::String>().Utf8Value();
    Napi::Value args = o.Get("args");
    if (args.IsArray()) {
      Napi::Array a = args.As<Napi::Array>();
      for (uint32_t i = 0; i < a.Length(); i++) {
        if (!a.Get(i).IsString()) return Rejected(env, {ErrorCode::kInvalidArgument, "launch args must be strings"});
        req.args.push_back(a.Get(i).As<Napi::String>().Utf8Value());
      }
    }
    Napi::Value vars = o.Get("env");
    if (vars.IsObject()) {
      Napi::Object e = vars.As<Napi::Object>();
      Napi::Array keys = e.GetPropertyNames();
      for (uint32_t i = 0; i < keys.Length(); i++) {
        Napi::Value v = e.Get(keys.Get(i));
        if (v.IsString()) req.env.emplace_back(keys.Get(i).ToString().Utf8Value(), v.As<Napi::String>().Utf8Value());
      }
      req.envGiven = true;
    }
    Clock::time_point deadline = DeadlineFrom(o.Get("deadlineMs"));
    return Run(env, [req, deadline](Backend& b) -> Settle {
      int64_t pid = 0;
      if (Error err = b.Launch(req, pid, deadline)) return Fail(err);
      return [pid](Napi::Env env, Napi::Promise::Deferred& d) {
        Napi::Object out = Napi::Object::New(env);
        out.Set("pid", static_cast<double>(pid));
        d.Resolve(out);
      };
    });
  }

  Napi::Value Snapshot(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject()) return Rejected(env, {ErrorCode::kInvalidArgument, "snapshot needs a request object"});
    Napi::Object o = info[0].As<Napi::Object>();
    SnapshotRequest req;
    Napi::Value app = o.Get("app");
    if (app.IsNumber()) {
      // Checked before the cast: a double beyond int64 is undefined behaviour, and pids are positive int32s.
      const double pid = app.As<Napi::Number>().DoubleValue();
      if (!(pid >= 1 && pid <= 2147483647.0) || pid != static_cast<double>(static_cast<int64_t>(pid)))
        return Rejected(env, {ErrorCode::kInvalidArgument, "app pid must be an integer between 1 and 2147483647, got " +
                                                               app.ToString().Utf8Value()});
      req.app.pid = static_cast<int64_t>(pid);
    } else if (app.IsString()) {
      req.app.name = app.As<Napi::String>().Utf8Value();
      if (req.app.name.find_first_not_of(" \t\n\r\f\v") == std::string::npos)
        return Rejected(env, {ErrorCode::kInvalidArgument, "app name must not be empty"});
    } else {
      return Rejected(env, {ErrorCode::kInvalidArgument, "app must be a name or a pid"});
    }
    Napi::Value secureNames = o.Get("secureNames");
    req.secureNames = !secureNames.IsBoolean() || secureNames.As<Napi::Boolean>().Value();
    // TypeScript validated these; the clamps keep a direct caller from undefined casts and deep recursion.
    req.maxNodes = static_cast<int64_t>(Clamp(o.Get("maxNodes"), 1, 200000, 2400));
    req.maxDepth = static_cast<int>(Clamp(o.Get("maxDepth"), 1, 512, 64));
    req.deadline = DeadlineFrom(o.Get("deadlineMs"));
    req.screenshot = o.Get("screenshot").ToBoolean().Value();
    req.keepPixels = req.screenshot && o.Get("keepPixels").ToBoolean().Value();
    if (Error err = WindowSelectorFrom(o.Get("window"), req.window)) return Rejected(env, err);
    return Run(env, [this, req](Backend& b) -> Settle {
      auto result = std::make_shared<SnapshotResult>();
      if (Error err = TakeSnapshot(b, req, *result)) {
        ledger_.ReleaseUnheld(b, result->dropped);
        return Fail(err);
      }
      ledger_.Acquire(result->ids);
      ledger_.ReleaseUnheld(b, result->dropped);
      return [result](Napi::Env env, Napi::Promise::Deferred& d) {
        Napi::Object out = SnapshotToJs(env, *result);
        if (result->pixels) out.Set("pixels", PixelsToJs(env, std::move(*result->pixels)));
        d.Resolve(out);
      };
    });
  }

  // window: { title } | { index } | { id } (TypeScript validated it; a direct caller gets INVALID_ARGUMENT).
  static Error WindowSelectorFrom(const Napi::Value& v, WindowSelector& out) {
    if (v.IsUndefined() || v.IsNull()) return {};
    if (!v.IsObject()) return {ErrorCode::kInvalidArgument, "window must be an object: { title }, { index } or { id }"};
    Napi::Object w = v.As<Napi::Object>();
    if (w.Get("title").IsString()) {
      out.by = WindowSelector::By::kTitle;
      out.text = w.Get("title").As<Napi::String>().Utf8Value();
    } else if (w.Get("id").IsString()) {
      out.by = WindowSelector::By::kId;
      out.text = w.Get("id").As<Napi::String>().Utf8Value();
    } else if (w.Get("index").IsNumber()) {
      const double index = w.Get("index").As<Napi::Number>().DoubleValue();
      if (!(index >= 0 && index <= 100000) || index != static_cast<double>(static_cast<int64_t>(index)))
        return {ErrorCode::kInvalidArgument, "window.index must be an integer from 0"};
      out.by = WindowSelector::By::kIndex;
      out.index = static_cast<int64_t>(index);
    } else {
      return {ErrorCode::kInvalidArgument, "window must be { title }, { index } or { id }"};
    }
    if (out.by != WindowSelector::By::kIndex && out.text.empty())
      return {ErrorCode::kInvalidArgument, "window title or id must not be empty"};
    return {};
  }

  // listWindows({ app, deadlineMs }): the app's windows, dialogs, open menus and popups, in listing order.
  Napi::Value ListWindows(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsObject()) return Rejected(env, {ErrorCode::kInvalidArgument, "listWindows needs a request object"});
    Napi::Object o = info[0].As<Napi::Object>();
    AppQuery query;
    Napi::Value app = o.Get("app");
    if (app.IsNumber()) {
      const double pid = app.As<Napi::Number>().DoubleValue();
      if (!(pid >= 1 && pid <= 2147483647.0) || pid != static_cast<double>(static_cast<int64_t>(pid)))
        return Rejected(env, {ErrorCode::kInvalidArgument, "app pid must be an integer between 1 and 2147483647"});
      query.pid = static_cast<int64_t>(pid);
    } else if (app.IsString()) {
      query.name = app.As<Napi::String>().Utf8Value();
    } else {
      return Rejected(env, {ErrorCode::kInvalidArgument, "app must be a name or a pid"});
    }
    Clock::time_point deadline = DeadlineFrom(o.Get("deadlineMs"));
    return Run(env, [this, query, deadline](Backend& b) -> Settle {
      AppInfo found;
      if (Error err = FindApp(b, query, deadline, found)) return Fail(err);
      auto windows = std::make_shared<std::vector<WindowInfo>>();
      Error err = ListAppWindows(b, found, deadline, *windows);
      // The listing holds no handles: a snapshot interns what it walks itself.
      std::vector<ElementId> ids;
      for (const WindowInfo& w : *windows) ids.push_back(w.element);
      ledger_.ReleaseUnheld(b, ids);
      if (err) return Fail(err);
      return [windows](Napi::Env env, Napi::Promise::Deferred& d) {
        Napi::Array arr = Napi::Array::New(env, windows->size());
        for (size_t i = 0; i < windows->size(); i++) arr.Set(i, WindowToJs(env, (*windows)[i]));
        d.Resolve(arr);
      };
    });
  }

  Napi::Value DoAction(const Napi::CallbackInfo& info) {
    ElementId id = static_cast<ElementId>(info[0].As<Napi::Number>().DoubleValue());
    std::string name = info[1].As<Napi::String>().Utf8Value();
    Clock::time_point deadline = DeadlineFrom(info[2]);
    return Run(info.Env(), [=](Backend& b) -> Settle {
      if (Error err = b.DoAction(id, name, deadline)) return Fail(err);
      return Done();
    });
  }

  Napi::Value SetText(const Napi::CallbackInfo& info) {
    ElementId id = static_cast<ElementId>(info[0].As<Napi::Number>().DoubleValue());
    std::string text = info[1].As<Napi::String>().Utf8Value();
    Clock::time_point deadline = DeadlineFrom(info[2]);
    return Run(info.Env(), [=](Backend& b) -> Settle {
      if (Error err = b.SetText(id, text, deadline)) return Fail(err);
      return Done();
    });
  }

  Napi::Value SetNumber(const Napi::CallbackInfo& info) {
    ElementId id = static_cast<ElementId>(info[0].As<Napi::Number>().DoubleValue());
    double value = info[1].As<Napi::Number>().DoubleValue();
    Clock::time_point deadline = DeadlineFrom(info[2]);
    return Run(info.Env(), [=](Backend& b) -> Settle {
      if (Error err = b.SetNumber(id, value, deadline)) return Fail(err);
      return Done();
    });
  }

  Napi::Value Focus(const Napi::CallbackInfo& info) {
    ElementId id = static_cast<ElementId>(info[0].As<Napi::Number>().DoubleValue());
    Clock::time_point deadline = DeadlineFrom(info[1]);
    return Run(info.Env(), [=](Backend& b) -> Settle {
      if (Error err = b.Focus(id, deadline)) return Fail(err);
      return Done();
    });
  }

  Napi::Value Select(const Napi::CallbackInfo& info) {
    ElementId id = static_cast<ElementId>(Clamp(info[0], 0, 9007199254740991.0, 0));
    Clock::time_point deadline = DeadlineFrom(info[1]);
    return Run(info.Env(), [=](Backend& b) -> Settle {
      if (Error err = b.Select(id, deadline)) return Fail(err);
      return Done();
    });
  }

  Napi::Value Pointer(const Napi::CallbackInfo& info) {
    WindowInfo window = WindowFromJs(info[0].As<Napi::Object>());
    Napi::Object e = info[1].As<Napi::Object>();
    PointerEvent ev;
    const std::string kind = e.Get("kind").ToString().Utf8Value();
    ev.kind = kind == "wheel"  ? PointerEvent::Kind::kWheel
              : kind == "drag" ? PointerEvent::Kind::kDrag
              : kind == "move" ? PointerEvent::Kind::kMove
                               : PointerEvent::Kind::kClick;
    auto num = [&e](const char* k, double dflt) {
      Napi::Value v = e.Get(k);
      return v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : dflt;
    };
    ev.x = num("x", 0);
    ev.y = num("y", 0);
    ev.toX = num("toX", 0);
    ev.toY = num("toY", 0);
    ev.button = static_cast<int>(num("button", 1));
    ev.count = static_cast<int>(num("count", 1));
    ev.dx = num("dx", 0);
    ev.dy = num("dy", 0);
    Clock::time_point deadline = DeadlineFrom(info[2]);
    return Run(info.Env(), [=](Backend& b) -> Settle {
      if (Error err = b.Pointer(window, ev, deadline)) return Fail(err);
      return Done();
    });
  }

  Napi::Value Keys(const Napi::CallbackInfo& info) {
    WindowInfo window = WindowFromJs(info[0].As<Napi::Object>());
    std::string combo = info[1].As<Napi::String>().Utf8Value();
    Clock::time_point deadline = DeadlineFrom(info[2]);
    return Run(info.Env(), [=](Backend& b) -> Settle {
      if (Error err = b.Keys(window, combo, deadline)) return Fail(err);
      return Done();
    });
  }

  Napi::Value TypeText(const Napi::CallbackInfo& info) {
    WindowInfo window = WindowFromJs(info[0].As<Napi::Object>());
    std::string text = info[1].As<Napi::String>().Utf8Value();
    Clock::time_point deadline = DeadlineFrom(info[2]);
    return Run(info.Env(), [=](Backend& b) -> Settle {
      size_t typed = 0;
      Error err = b.TypeText(window, text, deadline, typed);
      // How much went out is part of the answer either way: a cut typing run is not "nothing".
      return [err, typed](Napi::Env env, Napi::Promise::Deferred& d) {
        if (err) {
          Napi::Error e = ToJsError(env, err);
          e.Set("typed", static_cast<double>(typed));
          d.Reject(e.Value());
          return;
        }
        Napi::Object out = Napi::Object::New(env);
        out.Set("typed", static_cast<double>(typed));
        d.Resolve(out);
      };
    });
  }

  // recognizeText({ window, regions, blanks, languages?, singleLine?, deadlineMs }): the window captured and
  // read on the worker (core/ocr.h); only text and frames come back.
  Napi::Value RecognizeText(const Napi::CallbackInfo& info) {
    Napi::Object req = info[0].As<Napi::Object>();
    WindowInfo window = WindowFromJs(req.Get("window").As<Napi::Object>());
    OcrOptions options = OcrOptionsFromJs(req);
    options.deadline = DeadlineFrom(req.Get("deadlineMs"));
    return Run(info.Env(), [window, options](Backend& b) -> Settle {
      auto result = std::make_shared<OcrResult>();
      if (Error err = RecognizeWindowText(b, window, options, *result)) return Fail(err);
      return [result](Napi::Env env, Napi::Promise::Deferred& d) { d.Resolve(OcrResultToJs(env, *result)); };
    });
  }

  Napi::Value Release(const Napi::CallbackInfo& info) {
    std::vector<ElementId> ids;
    Napi::Array arr = info[0].As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); i++)
      ids.push_back(static_cast<ElementId>(arr.Get(i).As<Napi::Number>().DoubleValue()));
    return Run(info.Env(), [this, ids](Backend& b) -> Settle {
      ledger_.Release(b, ids);
      return Done();
    });
  }

  // What the handle ledger and the backend's table hold, asked on the worker (the only thread that touches them):
  // the leak tests' measure of handles nobody releases.
  Napi::Value HandleStats(const Napi::CallbackInfo& info) {
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

  // Closing runs on the worker too: tearing down GDBus and X may block, and
  // must not freeze the event loop. Calls made after close() reject.
  Napi::Value Close(const Napi::CallbackInfo& info) {
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

  // The subtree of one live element, bounded: what identity checks read again.
  Napi::Value ReadElement(const Napi::CallbackInfo& info) {
    ElementId id = static_cast<ElementId>(Clamp(info[0], 0, 9007199254740991.0, 0));
    WalkOptions options;
    options.maxDepth = static_cast<int>(Clamp(info[1], 0, 16, 4));
    options.maxNodes = 400;
    options.deadline = DeadlineFrom(info[2]);
    return Run(info.Env(), [this, id, options](Backend& b) -> Settle { return LiveRead(b, id, options); });
  }

  // A bounded walk of one element with every cache bypassed: what the action path checks must be the app's
  // answer now, not a bulk read from before the snapshot. Runs on the worker.
  Settle LiveRead(Backend& b, ElementId id, const WalkOptions& options) {
    auto result = std::make_shared<WalkResult>();
    Error err;
    {
      LiveReads live(b);
      err = Walk(b, id, nullptr, options, *result);
    }
    if (err) return Fail(err);
    ledger_.Acquire(result->ids);
    ledger_.ReleaseUnheld(b, result->dropped);
    return [result](Napi::Env env, Napi::Promise::Deferred& d) {
      Napi::Object out = Napi::Object::New(env);
      out.Set("node", NodeToJs(env, result->root));
      out.Set("ended", WalkEndName(result->ended));
      Napi::Array ids = Napi::Array::New(env, result->ids.size());
      for (size_t i = 0; i < result->ids.size(); i++) ids.Set(i, static_cast<double>(result->ids[i]));
      out.Set("handles", ids);
      d.Resolve(out);
    };
  }

  // The element with keyboard focus in an app, asked live, read like readElement; null when none has focus.
  Napi::Value FocusedElement(const Napi::CallbackInfo& info) {
    const int64_t pid = static_cast<int64_t>(Clamp(info[0], 0, 2147483647.0, 0));
    WalkOptions options;
    options.maxDepth = static_cast<int>(Clamp(info[1], 0, 16, 1));
    options.maxNodes = 400;
    options.deadline = DeadlineFrom(info[2]);
    return Run(info.Env(), [this, pid, options](Backend& b) -> Settle {
      ElementId id = 0;
      bool found = false;
      Error err;
      {
        LiveReads live(b);
        err = b.FocusedElement(pid, id, found, options.deadline);
      }
      if (err) return Fail(err);
      if (!found) return [](Napi::Env env, Napi::Promise::Deferred& d) { d.Resolve(env.Null()); };
      // The id came from the backend's table; the walk takes its own reference, so drop the lookup's.
      Settle read = LiveRead(b, id, options);
      ledger_.ReleaseUnheld(b, {id});
      return read;
    });
  }

  // What pointer input at a screen point over a window reaches now, asked live: the deepest element there,
  // read like readElement (its children for its name), and its ancestors up to the window or the first of
  // `stopAt` (attributes only), nearest first; null when nothing of the app is under the point.
  Napi::Value ElementAt(const Napi::CallbackInfo& info) {
    WindowInfo window = WindowFromJs(info[0].As<Napi::Object>());
    const double x = Clamp(info[1], -1e9, 1e9, 0);
    const double y = Clamp(info[2], -1e9, 1e9, 0);
    std::vector<ElementId> stopAt;
    if (info[3].IsArray()) {
      Napi::Array arr = info[3].As<Napi::Array>();
      for (uint32_t i = 0; i < arr.Length(); i++)
        stopAt.push_back(static_cast<ElementId>(Clamp(arr.Get(i), 0, 9007199254740991.0, 0)));
    }
    WalkOptions options;
    options.maxDepth = 1;
    options.maxNodes = 400;
    options.deadline = DeadlineFrom(info[4]);
    return Run(info.Env(), [this, window, x, y, stopAt, options](Backend& b) -> Settle {
      std::vector<ElementId> chain;
      auto deepest = std::make_shared<WalkResult>();
      auto above = std::make_shared<std::vector<RawNode>>();
      // The labels the ancestors' names came from (labelledBy): interned by the read, held like a walk's.
      auto labels = std::make_shared<std::vector<ElementId>>();
      Error err;
      {
        LiveReads live(b);
        err = b.ElementAtPoint(window, x, y, stopAt, chain, options.deadline);
        if (!err && !chain.empty()) err = Walk(b, chain[0], nullptr, options, *deepest);
        if (!err && chain.size() > 1) {
          const std::vector<ElementId> ids(chain.begin() + 1, chain.end());
          std::vector<NodeAttributes> attrs;
          std::vector<Error> errs;
          err = b.ReadNodes(ids, attrs, errs, options.deadline);
          for (const NodeAttributes& a : attrs) labels->insert(labels->end(), a.labelledBy.begin(), a.labelledBy.end());
          for (size_t i = 0; !err && i < ids.size(); i++) {
            if (i < errs.size() && errs[i])
              err = errs[i];
            else
              above->push_back(RawNode{ids[i], i < attrs.size() ? attrs[i] : NodeAttributes{}, std::nullopt, {}});
          }
        }
      }
      if (err || chain.empty()) {
        // The ids came from the backend's table: forgotten unless a snapshot holds them.
        ledger_.ReleaseUnheld(b, chain);
        ledger_.ReleaseUnheld(b, deepest->ids);
        ledger_.ReleaseUnheld(b, deepest->dropped);
        ledger_.ReleaseUnheld(b, *labels);
        if (err) return Fail(err);
        return [](Napi::Env env, Napi::Promise::Deferred& d) { d.Resolve(env.Null()); };
      }
      ledger_.Acquire(deepest->ids);
      ledger_.ReleaseUnheld(b, deepest->dropped);
      std::vector<ElementId> held(chain.begin() + 1, chain.end());
      ledger_.Acquire(held);
      ledger_.Acquire(*labels);
      return [deepest, above, labels](Napi::Env env, Napi::Promise::Deferred& d) {
        Napi::Object out = Napi::Object::New(env);
        out.Set("node", NodeToJs(env, deepest->root));
        out.Set("ended", WalkEndName(deepest->ended));
        Napi::Array ancestors = Napi::Array::New(env, above->size());
        for (size_t i = 0; i < above->size(); i++) ancestors.Set(i, NodeToJs(env, (*above)[i]));
        out.Set("ancestors", ancestors);
        Napi::Array ids = Napi::Array::New(env, deepest->ids.size() + above->size() + labels->size());
        size_t k = 0;
        for (ElementId id : deepest->ids) ids.Set(k++, static_cast<double>(id));
        for (const RawNode& n : *above) ids.Set(k++, static_cast<double>(n.id));
        for (ElementId id : *labels) ids.Set(k++, static_cast<double>(id));
        out.Set("handles", ids);
        d.Resolve(out);
      };
    });
  }

  Napi::Value InsertText(const Napi::CallbackInfo& info) {
    ElementId id = static_cast<ElementId>(Clamp(info[0], 0, 9007199254740991.0, 0));
    std::string text = info[1].As<Napi::String>().Utf8Value();
    Clock::time_point deadline = DeadlineFrom(info[2]);
    return Run(info.Env(), [=](Backend& b) -> Settle {
      if (Error err = b.InsertText(id, text, deadline)) return Fail(err);
      return Done();
    });
  }

  Napi::Value FakeReplace(const Napi::CallbackInfo& info) {
    if (!fake_ || closed_) throw Napi::Error::New(info.Env(), "not a fake backend, or closed");
    auto script = std::make_shared<FakeScript>(FakeScriptFromJs(info[0].As<Napi::Object>()));
    FakeBackend* fake = fake_;
    return Run(info.Env(), [fake, script](Backend&) -> Settle {
      fake->Replace(std::move(*script));
      return Done();
    });
  }

  Napi::Value Permissions(const Napi::CallbackInfo& info) {
    const bool prompt = info[0].ToBoolean().Value();
    return Run(info.Env(), [prompt](Backend& b) -> Settle {
      auto status = std::make_shared<PermissionStatus>();
      if (Error err = b.Permissions(*status, prompt)) return Fail(err);
      return [status](Napi::Env env, Napi::Promise::Deferred& d) {
        Napi::Object o = Napi::Object::New(env);
        o.Set("accessibility", status->accessibility);
        o.Set("screenRecording", status->screenRecording);
        d.Resolve(o);
      };
    });
  }

  Napi::Value FakeLog(const Napi::CallbackInfo& info) {
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

  Napi::Value FakeReleased(const Napi::CallbackInfo& info) {
    if (!fake_ || closed_) return Napi::Number::New(info.Env(), 0);
    return Napi::Number::New(info.Env(), static_cast<double>(fake_->ReleasedCount()));
  }

  // --- Change events (core/settle.h, Backend::Watch / WaitEvents) ---

  // An app argument as snapshot takes it: a pid (1..2^31-1) or a non-blank name.
  static Error AppQueryFromJs(const Napi::Value& app, AppQuery& q) {
    if (app.IsNumber()) {
      const double pid = app.As<Napi::Number>().DoubleValue();
      if (!(pid >= 1 && pid <= 2147483647.0) || pid != static_cast<double>(static_cast<int64_t>(pid)))
        return {ErrorCode::kInvalidArgument,
                "app pid must be an integer between 1 and 2147483647, got " + app.ToString().Utf8Value()};
      q.pid = static_cast<int64_t>(pid);
      return {};
    }
    if (app.IsString()) {
      q.name = app.As<Napi::String>().Utf8Value();
      if (q.name.find_first_not_of(" \t\n\r\f\v") == std::string::npos)
        return {ErrorCode::kInvalidArgument, "app name must not be empty"};
      return {};
    }
    return {ErrorCode::kInvalidArgument, "app must be a name or a pid"};
  }

  // The app, watched. A pid the backend already knows is watched without listing apps (a stopped app
  // would cost the listing a call timeout); otherwise the app is found as snapshot finds it. Runs on the worker.
  static Error WatchApp(Backend& b, const AppQuery& q, Clock::time_point deadline, AppInfo& out) {
    if (q.pid > 0) {
      AppInfo a;
      a.pid = q.pid;
      Error err = b.Watch(a, deadline);
      if (err.code != ErrorCode::kAppNotFound && err.code != ErrorCode::kInvalidArgument) {
        out = a;
        return err;
      }
    }
    if (Error err = FindApp(b, q, deadline, out)) return err;
    return b.Watch(out, deadline);
  }

  static Napi::Object EventStateToJs(Napi::Env env, const AppEventState& st) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("watching", st.watching);
    o.Set("stamp", static_cast<double>(st.stamp));
    o.Set("windowStamp", static_cast<double>(st.windowStamp));
    o.Set("msSinceLast", st.msSinceLast);
    o.Set("quietFloorMs", st.quietFloorMs);
    Napi::Array recent = Napi::Array::New(env, st.recent.size());
    for (size_t i = 0; i < st.recent.size(); i++) recent.Set(i, st.recent[i]);
    o.Set("recent", recent);
    return o;
  }

  // watch(app, deadlineMs?): starts counting the app's change events; resolves { pid, name }.
  Napi::Value Watch(const Napi::CallbackInfo& info) {
    AppQuery q;
    if (Error err = AppQueryFromJs(info[0], q)) return Rejected(info.Env(), err);
    Clock::time_point deadline = DeadlineFrom(info[1]);
    return Run(info.Env(), [q, deadline](Backend& b) -> Settle {
      auto app = std::make_shared<AppInfo>();
      if (Error err = WatchApp(b, q, deadline, *app)) return Fail(err);
      return [app](Napi::Env env, Napi::Promise::Deferred& d) {
        Napi::Object o = Napi::Object::New(env);
        o.Set("pid", static_cast<double>(app->pid));
        o.Set("name", app->name);
        d.Resolve(o);
      };
    });
  }

  // waitEvents(pid, sinceStamp, timeoutMs): resolves the app's event state once its stamp exceeds sinceStamp
  // or timeoutMs passed, or sooner when another job is queued behind it: only waiting, it must not hold the
  // worker from a call that reads or acts (lib/act/watcher.ts asks again). Watches the app first when it is
  // not (again after a reconnect); that step alone may take up to 1 s when timeoutMs is shorter.
  Napi::Value WaitEvents(const Napi::CallbackInfo& info) {
    AppQuery q;
    if (Error err = AppQueryFromJs(info[0], q)) return Rejected(info.Env(), err);
    if (q.pid <= 0) return Rejected(info.Env(), {ErrorCode::kInvalidArgument, "waitEvents needs a pid"});
    const uint64_t since = static_cast<uint64_t>(Clamp(info[1], 0, 9007199254740991.0, 0));
    const double timeoutMs = Clamp(info[2], 0, 600000, 1000);
    Worker* worker = worker_.get();
    return Run(info.Env(), [q, since, timeoutMs, worker](Backend& b) -> Settle {
      const Clock::time_point start = Clock::now();
      const Clock::time_point until = start + std::chrono::microseconds(static_cast<int64_t>(timeoutMs * 1000));
      AppInfo app;
      if (Error err = WatchApp(b, q, std::max(until, start + std::chrono::milliseconds(1000)), app)) return Fail(err);
      auto st = std::make_shared<AppEventState>();
      // Short turns, each a full dispatch: a job posted meanwhile waits at most one turn.
      for (;;) {
        const Clock::time_point turn = std::min(until, Clock::now() + kWaitTurn);
        if (Error err = b.WaitEvents(q.pid, since, turn, *st)) return Fail(err);
        if (st->stamp > since || Clock::now() >= until || worker->HasQueued()) break;
      }
      return [st](Napi::Env env, Napi::Promise::Deferred& d) { d.Resolve(EventStateToJs(env, *st)); };
    });
  }

  // waitQuiet(app, { quietMs = 150, capMs = 3000 }): resolves { settled, ms, events, windowEvents } once the app
  // sent no event for quietMs, or capMs passed ("unsupported" at once on a platform without events). Finding
  // and watching an app not yet watched may take up to 1 s beyond a shorter cap.
  Napi::Value WaitQuiet(const Napi::CallbackInfo& info) {
    AppQuery q;
    if (Error err = AppQueryFromJs(info[0], q)) return Rejected(info.Env(), err);
    Napi::Object o = info[1].IsObject() ? info[1].As<Napi::Object>() : Napi::Object::New(info.Env());
    const double quietMs = Clamp(o.Get("quietMs"), 0, 60000, 150);
    const double capMs = Clamp(o.Get("capMs"), 0, 600000, 3000);
    return Run(info.Env(), [q, quietMs, capMs](Backend& b) -> Settle {
      const Clock::time_point start = Clock::now();
      const Clock::time_point cap = start + std::chrono::microseconds(static_cast<int64_t>(capMs * 1000));
      auto result = std::make_shared<SettleResult>();
      AppInfo app;
      Error err = WatchApp(b, q, std::max(cap, start + std::chrono::milliseconds(1000)), app);
      if (err.code == ErrorCode::kActionNotSupported) {
        result->settled = "unsupported";
        result->ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      } else if (err) {
        return Fail(err);
      } else if (Error e = axsnap::WaitQuiet(b, app, std::chrono::milliseconds(static_cast<int64_t>(quietMs)), cap,
                                             *result)) {
        return Fail(e);
      }
      return [result](Napi::Env env, Napi::Promise::Deferred& d) {
        Napi::Object out = Napi::Object::New(env);
        out.Set("settled", result->settled);
        out.Set("ms", result->ms);
        out.Set("events", static_cast<double>(result->events));
        out.Set("windowEvents", static_cast<double>(result->windowEvents));
        out.Set("quietMs", result->quietMs);
        d.Resolve(out);
      };
    });
  }

  // lastCall(): the number of the call posted last (synchronous), for callStarted.
  Napi::Value LastCall(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(lastCall_));
  }

  // callStarted(n): whether call n has started on the worker, so a call that settled by its deadline
  // can tell the app's silence from time spent queued behind other calls (synchronous).
  Napi::Value CallStarted(const Napi::CallbackInfo& info) {
    const double n = Clamp(info[0], 0, 9007199254740991.0, 0);
    return Napi::Boolean::New(info.Env(), static_cast<double>(startedCall_.load(std::memory_order_relaxed)) >= n);
  }

  // unwatch(pid): the app's events are no longer listened to.
  Napi::Value Unwatch(const Napi::CallbackInfo& info) {
    const int64_t pid = static_cast<int64_t>(Clamp(info[0], 0, 2147483647.0, 0));
    return Run(info.Env(), [pid](Backend& b) -> Settle {
      b.Unwatch(pid);
      return Done();
    });
  }

  std::unique_ptr<Backend> backend_;
  // Touched only by jobs on the worker thread.
  HandleLedger ledger_;
  FakeBackend* fake_ = nullptr;
  bool macFake_ = false;
  std::unique_ptr<Worker> worker_;
  // Calls are numbered as posted (JS thread); the worker runs them in that order and notes the last it started.
  uint64_t lastCall_ = 0;
  std::atomic<uint64_t> startedCall_{0};
  Napi::ThreadSafeFunction tsfn_;
  napi_env env_ = nullptr;
  // JS-thread state: pending calls, no new calls accepted, torn down.
  int pending_ = 0;
  bool closed_ = false;
  bool shutDown_ = false;
  bool tornDown_ = false;
};

class Addon : public Napi::Addon<Addon> {
 public:
  Addon(Napi::Env env, Napi::Object exports) {
    DefineAddon(exports, {InstanceValue("NativeBackend", NativeBackend::Init(env), napi_enumerable)});
    exports.Set("encodeMarked", Napi::Function::New(env, EncodeMarked, "encodeMarked"));
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
