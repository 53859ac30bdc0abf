// NativeBackend's change events: watching an app, waiting for its events or for quiet (core/settle.h).
#include "backend_js.h"

#include "../core/settle.h"

namespace axsnap {
namespace napi {

Error NativeBackend::AppQueryFromJs(const Napi::Value& app, AppQuery& q) {
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

Error NativeBackend::WatchApp(Backend& b, const AppQuery& q, Clock::time_point deadline, AppInfo& out) {
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

Napi::Object NativeBackend::EventStateToJs(Napi::Env env, const AppEventState& st) {
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

Napi::Value NativeBackend::Watch(const Napi::CallbackInfo& info) {
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

Napi::Value NativeBackend::WaitEvents(const Napi::CallbackInfo& info) {
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

Napi::Value NativeBackend::WaitQuiet(const Napi::CallbackInfo& info) {
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
    } else if (Error e =
                   axsnap::WaitQuiet(b, app, std::chrono::milliseconds(static_cast<int64_t>(quietMs)), cap, *result)) {
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

Napi::Value NativeBackend::Unwatch(const Napi::CallbackInfo& info) {
  const int64_t pid = static_cast<int64_t>(Clamp(info[0], 0, 2147483647.0, 0));
  return Run(info.Env(), [pid](Backend& b) -> Settle {
    b.Unwatch(pid);
    return Done();
  });
}

}  // namespace napi
}  // namespace axsnap
