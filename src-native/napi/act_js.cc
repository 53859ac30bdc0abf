// NativeBackend's actions and input: named actions, values, focus, selection, pointer, keys, text.
#include "backend_js.h"

#include "convert.h"
#if defined(AXSNAP_MAC) || defined(AXSNAP_MAC_FAKE)
#include "../mac/mac_backend.h"
#endif

namespace axsnap {
namespace napi {

Napi::Value NativeBackend::DoAction(const Napi::CallbackInfo& info) {
  ElementId id = static_cast<ElementId>(info[0].As<Napi::Number>().DoubleValue());
  std::string name = info[1].As<Napi::String>().Utf8Value();
  Clock::time_point deadline = DeadlineFrom(info[2]);
  return Run(info.Env(), [=](Backend& b) -> Settle {
    if (Error err = b.DoAction(id, name, deadline)) return Fail(err);
    return Done();
  });
}

Napi::Value NativeBackend::Toolkit(const Napi::CallbackInfo& info) {
  ElementId id = static_cast<ElementId>(info[0].As<Napi::Number>().DoubleValue());
  Clock::time_point deadline = DeadlineFrom(info[1]);
  return Run(info.Env(), [=](Backend& b) -> Settle {
    std::string name, version;
    if (Error err = b.Toolkit(id, name, version, deadline)) return Fail(err);
    return [name, version](Napi::Env env, Napi::Promise::Deferred& d) {
      Napi::Object o = Napi::Object::New(env);
      o.Set("name", name);
      o.Set("version", version);
      d.Resolve(o);
    };
  });
}

Napi::Value NativeBackend::SetText(const Napi::CallbackInfo& info) {
  ElementId id = static_cast<ElementId>(info[0].As<Napi::Number>().DoubleValue());
  std::string text = info[1].As<Napi::String>().Utf8Value();
  Clock::time_point deadline = DeadlineFrom(info[2]);
  return Run(info.Env(), [=](Backend& b) -> Settle {
    if (Error err = b.SetText(id, text, deadline)) return Fail(err);
    return Done();
  });
}

Napi::Value NativeBackend::SetNumber(const Napi::CallbackInfo& info) {
  ElementId id = static_cast<ElementId>(info[0].As<Napi::Number>().DoubleValue());
  double value = info[1].As<Napi::Number>().DoubleValue();
  Clock::time_point deadline = DeadlineFrom(info[2]);
  return Run(info.Env(), [=](Backend& b) -> Settle {
    if (Error err = b.SetNumber(id, value, deadline)) return Fail(err);
    return Done();
  });
}

Napi::Value NativeBackend::Focus(const Napi::CallbackInfo& info) {
  ElementId id = static_cast<ElementId>(info[0].As<Napi::Number>().DoubleValue());
  Clock::time_point deadline = DeadlineFrom(info[1]);
  return Run(info.Env(), [=](Backend& b) -> Settle {
    if (Error err = b.Focus(id, deadline)) return Fail(err);
    return Done();
  });
}

Napi::Value NativeBackend::Select(const Napi::CallbackInfo& info) {
  ElementId id = static_cast<ElementId>(Clamp(info[0], 0, 9007199254740991.0, 0));
  Clock::time_point deadline = DeadlineFrom(info[1]);
  return Run(info.Env(), [=](Backend& b) -> Settle {
    if (Error err = b.Select(id, deadline)) return Fail(err);
    return Done();
  });
}

Napi::Value NativeBackend::Pointer(const Napi::CallbackInfo& info) {
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

Napi::Value NativeBackend::Keys(const Napi::CallbackInfo& info) {
  WindowInfo window = WindowFromJs(info[0].As<Napi::Object>());
  std::string combo = info[1].As<Napi::String>().Utf8Value();
  Clock::time_point deadline = DeadlineFrom(info[2]);
#if defined(AXSNAP_MAC) || defined(AXSNAP_MAC_FAKE)
  // macOS: the keyboard layout is read here, on the JavaScript thread, and goes
  // with the job. Text Input Sources assert the main dispatch queue, which the
  // worker is not; in Node's main isolate this thread is the process's main
  // thread (MacSystem::KeyboardLayout refuses any other).
  if (mac_ && !closed_) {
    MacBackend* mac = mac_;
    KeyLayout layout = mac->ReadKeyLayout();
    return Run(info.Env(), [=](Backend&) -> Settle {
      if (Error err = mac->KeysWithLayout(window, combo, deadline, layout)) return Fail(err);
      return Done();
    });
  }
#endif
  return Run(info.Env(), [=](Backend& b) -> Settle {
    if (Error err = b.Keys(window, combo, deadline)) return Fail(err);
    return Done();
  });
}

Napi::Value NativeBackend::TypeText(const Napi::CallbackInfo& info) {
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

Napi::Value NativeBackend::InsertText(const Napi::CallbackInfo& info) {
  ElementId id = static_cast<ElementId>(Clamp(info[0], 0, 9007199254740991.0, 0));
  std::string text = info[1].As<Napi::String>().Utf8Value();
  Clock::time_point deadline = DeadlineFrom(info[2]);
  return Run(info.Env(), [=](Backend& b) -> Settle {
    if (Error err = b.InsertText(id, text, deadline)) return Fail(err);
    return Done();
  });
}

}  // namespace napi
}  // namespace axsnap
