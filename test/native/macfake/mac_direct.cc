// Test-only entry points of axsnap_macfake that reach MacBackend methods the
// N-API layer does not expose (yet): change events (Watch / WaitEvents /
// Unwatch) and the listing of windows and surfaces (Windows). One backend at a
// time, living on its own Worker thread as in the addon: every call is a job
// on that thread and the JavaScript thread waits for it, so the observer's run
// loop source is on the worker's run loop and WaitEvents runs that loop.
//
//   macDirectOpen(world)                 installs the world, makes the backend
//   macDirectClose()                     destroys it (on its thread), joins the thread
//   fakeWorldReplace(world)              installs another world under the same backend
//   macDirectWatch(pid, ms)              -> { code, message, added: [...], refused: [...] }
//   macDirectWait(pid, since, ms)        -> { code, message, watching, stamp, windowStamp,
//                                             msSinceLast, recent, waitedMs }
//   macDirectUnwatch(pid)
//   macDirectWindows(pid, ms)            -> { code, message, windows: [{ element, title, role,
//                                             frame, minimized, visible, active }] }
//   fakeNotify(pid, name, element?)      posts a notification now (fake_cf.h PostNotification)
//   fakeObservers()                      live AXObservers
//   fakeWorldLog()                       the fake world's log (world_from_js.h formats)
//   fakeAppQueries()                     AppOfProcess calls so far (issue 35 M6)
#include <algorithm>
#include <chrono>
#include <future>
#include <memory>

#include "../../../src-native/core/worker.h"
#include "../../../src-native/mac/mac_backend.h"
#include "fake_cf.h"
#include "fake_mac_system.h"
#include "world_from_js.h"

namespace axsnap {
namespace {

struct Direct {
  std::unique_ptr<Worker> worker;
  std::unique_ptr<MacBackend> backend;
};

Direct& TheDirect() {
  static Direct* d = new Direct;
  return *d;
}

// Runs `job` on the backend's thread and waits for it.
template <typename Job>
void OnWorker(Napi::Env env, Job job) {
  Direct& d = TheDirect();
  if (!d.worker || !d.backend) throw Napi::Error::New(env, "macDirectOpen first");
  std::promise<void> done;
  d.worker->Post([&]() {
    job(*d.backend);
    done.set_value();
  });
  done.get_future().wait();
}

Clock::time_point After(const Napi::Value& v) {
  const double ms = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : 1000;
  return Clock::now() + std::chrono::microseconds(static_cast<int64_t>(ms * 1000));
}

void PutError(Napi::Object o, const Error& err) {
  o.Set("code", ErrorCodeName(err.code));
  o.Set("message", err.message);
}

Napi::Array Strings(Napi::Env env, const std::vector<std::string>& list) {
  Napi::Array a = Napi::Array::New(env, list.size());
  for (size_t i = 0; i < list.size(); i++) a.Set(static_cast<uint32_t>(i), list[i]);
  return a;
}

void Close() {
  Direct& d = TheDirect();
  if (!d.worker) return;
  // The backend goes on its own thread: its destructor removes the observers.
  d.worker->Post([&d]() { d.backend.reset(); });
  d.worker->Stop();
  d.worker.reset();
}

}  // namespace

void RegisterMacDirect(Napi::Env env, Napi::Object exports) {
  exports.Set("macDirectOpen", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                if (!info[0].IsObject()) throw Napi::TypeError::New(info.Env(), "a world object");
                Close();
                InstallFakeWorld(info[0].As<Napi::Object>());
                Direct& d = TheDirect();
                d.worker = std::make_unique<Worker>();
                d.backend = std::make_unique<MacBackend>(CreateFakeMacSystem());
                return info.Env().Undefined();
              }));
  exports.Set("fakeWorldReplace", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                if (!info[0].IsObject()) throw Napi::TypeError::New(info.Env(), "a world object");
                InstallFakeWorld(info[0].As<Napi::Object>());
                return info.Env().Undefined();
              }));
  exports.Set("macDirectClose", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                Close();
                return info.Env().Undefined();
              }));
  exports.Set("macDirectWatch", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                AppInfo app;
                app.pid = info[0].As<Napi::Number>().Int64Value();
                const Clock::time_point deadline = After(info[1]);
                Error err;
                std::vector<std::string> added, refused;
                OnWorker(info.Env(), [&](MacBackend& b) {
                  err = b.Watch(app, deadline);
                  b.WatchedNotifications(app.pid, added, refused);
                });
                Napi::Object o = Napi::Object::New(info.Env());
                PutError(o, err);
                o.Set("added", Strings(info.Env(), added));
                o.Set("refused", Strings(info.Env(), refused));
                return o;
              }));
  exports.Set("macDirectWait", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                const int64_t pid = info[0].As<Napi::Number>().Int64Value();
                const uint64_t since = static_cast<uint64_t>(info[1].As<Napi::Number>().Int64Value());
                const Clock::time_point t0 = Clock::now();
                const Clock::time_point until = After(info[2]);
                Error err;
                AppEventState state;
                OnWorker(info.Env(), [&](MacBackend& b) { err = b.WaitEvents(pid, since, until, state); });
                Napi::Object o = Napi::Object::New(info.Env());
                PutError(o, err);
                o.Set("watching", state.watching);
                o.Set("stamp", static_cast<double>(state.stamp));
                o.Set("windowStamp", static_cast<double>(state.windowStamp));
                o.Set("msSinceLast", state.msSinceLast);
                o.Set("recent", Strings(info.Env(), state.recent));
                o.Set("waitedMs", std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
                return o;
              }));
  exports.Set("macDirectUnwatch", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                const int64_t pid = info[0].As<Napi::Number>().Int64Value();
                OnWorker(info.Env(), [&](MacBackend& b) { b.Unwatch(pid); });
                return info.Env().Undefined();
              }));
  exports.Set("macDirectWindows", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                AppInfo app;
                app.pid = info[0].As<Napi::Number>().Int64Value();
                const Clock::time_point deadline = After(info[1]);
                Error err;
                std::vector<WindowInfo> windows;
                OnWorker(info.Env(), [&](MacBackend& b) {
                  std::vector<AppInfo> apps;
                  b.ListApps(apps, deadline);
                  for (const AppInfo& a : apps)
                    if (a.pid == app.pid) app = a;
                  err = b.Windows(app, windows, deadline);
                });
                Napi::Env e = info.Env();
                Napi::Object o = Napi::Object::New(e);
                PutError(o, err);
                Napi::Array list = Napi::Array::New(e, windows.size());
                for (size_t i = 0; i < windows.size(); i++) {
                  const WindowInfo& w = windows[i];
                  Napi::Object x = Napi::Object::New(e);
                  x.Set("element", static_cast<double>(w.element));
                  x.Set("title", w.title);
                  x.Set("role", w.role);
                  if (w.hasFrame) {
                    Napi::Object f = Napi::Object::New(e);
                    f.Set("x", w.frame.x);
                    f.Set("y", w.frame.y);
                    f.Set("w", w.frame.w);
                    f.Set("h", w.frame.h);
                    x.Set("frame", f);
                  }
                  x.Set("minimized", w.minimized);
                  x.Set("visible", w.visible);
                  x.Set("active", w.active);
                  list.Set(static_cast<uint32_t>(i), x);
                }
                o.Set("windows", list);
                return o;
              }));
  exports.Set("fakeNotify", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                const int64_t pid = info[0].As<Napi::Number>().Int64Value();
                const std::string name = info[1].As<Napi::String>().Utf8Value();
                const int64_t element = info[2].IsNumber() ? info[2].As<Napi::Number>().Int64Value() : 0;
                macfake::PostNotification(pid, name, element);
                return info.Env().Undefined();
              }));
  exports.Set("fakeWorldLog", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                return Strings(info.Env(), FakeWorldLog());
              }));
  exports.Set("fakeObservers", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                return Napi::Number::New(info.Env(), static_cast<double>(macfake::LiveObservers()));
              }));

  // ---- issue 12 items 4, 5, 9, 11 (capture, threads, permissions)
  exports.Set("fakeCaptureComplete", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                if (info.Length() > 0 && info[0].IsNumber())
                  FakeCompleteCaptures(static_cast<size_t>(std::max(0.0, info[0].As<Napi::Number>().DoubleValue())));
                else
                  FakeCompleteCaptures();
                return info.Env().Undefined();
              }));
  exports.Set("fakeCaptureGateAge", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                CaptureGate::Process().AgeAbandonment(
                    std::chrono::milliseconds(static_cast<int64_t>(info[0].As<Napi::Number>().DoubleValue())));
                return info.Env().Undefined();
              }));
  exports.Set("fakeCaptureGateBusy", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                return Napi::Boolean::New(info.Env(), CaptureGate::Process().Busy());
              }));
  exports.Set("fakePoolCounts", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                const FakePoolCounts c = FakeAutoreleasePools();
                Napi::Object o = Napi::Object::New(info.Env());
                o.Set("pushes", static_cast<double>(c.pushes));
                o.Set("pops", static_cast<double>(c.pops));
                o.Set("maxDepth", static_cast<double>(c.maxDepth));
                o.Set("wrongThread", static_cast<double>(c.wrongThread));
                return o;
              }));
  exports.Set("fakeScreenRecordingProbes", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                return Napi::Number::New(info.Env(), static_cast<double>(FakeScreenRecordingProbes()));
              }));
  exports.Set("fakeAppQueries", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                return Napi::Number::New(info.Env(), static_cast<double>(FakeAppQueries()));
              }));
  exports.Set("fakeMarkThread", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                macfake::MarkThread();
                return info.Env().Undefined();
              }));
  exports.Set("fakeAXCallsOnMarkedThread", Napi::Function::New(env, [](const Napi::CallbackInfo& info) -> Napi::Value {
                return Napi::Number::New(info.Env(), static_cast<double>(macfake::AXCallsOnMarkedThread()));
              }));
}

}  // namespace axsnap
