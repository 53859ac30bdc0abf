// NativeBackend's reads: apps, launching, windows, snapshots, live reads of elements, text from pixels.
#include "backend_js.h"

#include "convert.h"
#include "marks_js.h"

namespace axsnap {
namespace napi {

Napi::Value NativeBackend::ListApps(const Napi::CallbackInfo& info) {
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

Napi::Value NativeBackend::Launchable(const Napi::CallbackInfo& info) {
  Clock::time_point deadline = DeadlineFrom(info[0]);
  // launchable(ms, id): the one app the launcher knows by that id, listed or not (Backend::LaunchableById).
  const bool byId = info.Length() > 1 && info[1].IsString();
  const std::string id = byId ? info[1].As<Napi::String>().Utf8Value() : std::string();
  return Run(info.Env(), [deadline, byId, id](Backend& b) -> Settle {
    auto apps = std::make_shared<std::vector<LaunchableApp>>();
    if (Error err = byId ? b.LaunchableById(id, *apps, deadline) : b.Launchable(*apps, deadline)) return Fail(err);
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

Napi::Value NativeBackend::Launch(const Napi::CallbackInfo& info) {
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

Napi::Value NativeBackend::Snapshot(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) return Rejected(env, {ErrorCode::kInvalidArgument, "snapshot needs a request object"});
  Napi::Object o = info[0].As<Napi::Object>();
  SnapshotRequest req;
  Napi::Value app = o.Get("app");
  if (app.IsNumber()) {
    // Checked before the cast: a double beyond int64 is undefined behaviour, and pids are positive int32s.
    const double pid = app.As<Napi::Number>().DoubleValue();
    if (!(pid >= 1 && pid <= 2147483647.0) || pid != static_cast<double>(static_cast<int64_t>(pid)))
      return Rejected(env, {ErrorCode::kInvalidArgument,
                            "app pid must be an integer between 1 and 2147483647, got " + app.ToString().Utf8Value()});
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

Error NativeBackend::WindowSelectorFrom(const Napi::Value& v, WindowSelector& out) {
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

Napi::Value NativeBackend::ListWindows(const Napi::CallbackInfo& info) {
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

Napi::Value NativeBackend::RecognizeText(const Napi::CallbackInfo& info) {
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

Napi::Value NativeBackend::ReadElement(const Napi::CallbackInfo& info) {
  ElementId id = static_cast<ElementId>(Clamp(info[0], 0, 9007199254740991.0, 0));
  WalkOptions options;
  options.maxDepth = static_cast<int>(Clamp(info[1], 0, 16, 4));
  options.maxNodes = 400;
  options.deadline = DeadlineFrom(info[2]);
  return Run(info.Env(), [this, id, options](Backend& b) -> Settle { return LiveRead(b, id, options); });
}

Settle NativeBackend::LiveRead(Backend& b, ElementId id, const WalkOptions& options) {
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

Napi::Value NativeBackend::FocusedElement(const Napi::CallbackInfo& info) {
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

Napi::Value NativeBackend::ElementAt(const Napi::CallbackInfo& info) {
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

}  // namespace napi
}  // namespace axsnap
