// The fake world from a JavaScript object: a strict parser (unknown keys,
// wrong types, duplicate ids and dangling references are errors naming the
// path), so a typo in a test fails the test instead of scripting nothing.
// Format: world_from_js.h.

#include "world_from_js.h"

#include <cmath>
#include <initializer_list>
#include <set>
#include <stdexcept>

namespace axsnap {

namespace {

using macfake::FakeApp;
using macfake::FakeCGWindow;
using macfake::FakeElement;
using macfake::FakeFaults;
using macfake::FakeValue;
using macfake::FakeWorld;

// Deep enough for any test tree (the walk stops at 64 by default), shallow
// enough that the recursive parser cannot exhaust the JS thread's stack.
constexpr int kMaxDepth = 2000;

struct AXErrorName {
  const char* name;
  int32_t code;
};
constexpr AXErrorName kAXErrorNames[] = {
    {"kAXErrorSuccess", kAXErrorSuccess},
    {"kAXErrorFailure", kAXErrorFailure},
    {"kAXErrorIllegalArgument", kAXErrorIllegalArgument},
    {"kAXErrorInvalidUIElement", kAXErrorInvalidUIElement},
    {"kAXErrorInvalidUIElementObserver", kAXErrorInvalidUIElementObserver},
    {"kAXErrorCannotComplete", kAXErrorCannotComplete},
    {"kAXErrorAttributeUnsupported", kAXErrorAttributeUnsupported},
    {"kAXErrorActionUnsupported", kAXErrorActionUnsupported},
    {"kAXErrorNotificationUnsupported", kAXErrorNotificationUnsupported},
    {"kAXErrorNotImplemented", kAXErrorNotImplemented},
    {"kAXErrorNotificationAlreadyRegistered", kAXErrorNotificationAlreadyRegistered},
    {"kAXErrorNotificationNotRegistered", kAXErrorNotificationNotRegistered},
    {"kAXErrorAPIDisabled", kAXErrorAPIDisabled},
    {"kAXErrorNoValue", kAXErrorNoValue},
    {"kAXErrorParameterizedAttributeUnsupported", kAXErrorParameterizedAttributeUnsupported},
    {"kAXErrorNotEnoughPrecision", kAXErrorNotEnoughPrecision},
};

class Parser {
 public:
  explicit Parser(Napi::Env env) : env_(env) {}

  FakeWorld Parse(Napi::Object js) {
    Keys(js, "world",
         {"trusted", "screenRecording", "scale", "focusedPid", "captureFails", "systemWide", "apps", "installed",
          "windows", "postDelay", "focusMoves", "keyEventFails", "keyboardLayout", "processes", "axGetWindow"});
    CollectIds(js, "world", 0);

    FakeWorld w;
    w.trusted = Bool(js, "trusted", "world", true);
    w.screenRecording = String(js, "screenRecording", "world", "granted");
    if (w.screenRecording != "granted" && w.screenRecording != "denied" && w.screenRecording != "unknown")
      Fail("world.screenRecording", "must be \"granted\", \"denied\" or \"unknown\"");
    w.scale = Number(js, "scale", "world", 2);
    if (!(w.scale > 0)) Fail("world.scale", "must be positive");
    w.focusedPid = Int(js, "focusedPid", "world", 0);
    w.captureFails = Bool(js, "captureFails", "world", false);
    // M5 (third macOS review): the keyboard layout Text Input Sources report (fake_mac_system.cc).
    w.keyboardLayout = String(js, "keyboardLayout", "world", "us");
    if (!macfake::IsFakeKeyboardLayout(w.keyboardLayout))
      Fail("world.keyboardLayout", "must be one of " + macfake::FakeKeyboardLayoutNames());
    // Issue 35 M3: false models a macOS without the private _AXUIElementGetWindow.
    w.axGetWindow = Bool(js, "axGetWindow", "world", true);

    Napi::Array apps = ArrayField(js, "apps", "world");
    for (uint32_t i = 0; i < apps.Length(); ++i) {
      const std::string path = "world.apps[" + std::to_string(i) + "]";
      w.apps.push_back(ParseApp(ObjectAt(apps, i, path), path, w));
    }
    Napi::Array installed = ArrayField(js, "installed", "world");
    for (uint32_t i = 0; i < installed.Length(); ++i) {
      const std::string path = "world.installed[" + std::to_string(i) + "]";
      Napi::Object o = ObjectAt(installed, i, path);
      Keys(o, path, {"bundleId", "name", "executable", "path", "app", "listed"});
      macfake::FakeInstalled entry;
      entry.bundleId = String(o, "bundleId", path, "");
      if (entry.bundleId.empty()) Fail(path + ".bundleId", "required");
      entry.name = String(o, "name", path, "");
      entry.executable = String(o, "executable", path, "");
      entry.path = String(o, "path", path, "");
      entry.listed = Bool(o, "listed", path, true);  // issue 35 M4
      if (Has(o, "app")) {
        entry.app = ParseApp(ObjectField(o, "app", path), path + ".app", w);
        for (const macfake::FakeApp& a : w.apps)
          if (a.pid == entry.app->pid) Fail(path + ".app.pid", "two apps with pid " + std::to_string(a.pid));
      }
      w.installed.push_back(std::move(entry));
    }
    // Issue 35 M6: pids of processes that are no application.
    Napi::Array processes = ArrayField(js, "processes", "world");
    for (uint32_t i = 0; i < processes.Length(); ++i) {
      const std::string path = "world.processes[" + std::to_string(i) + "]";
      Napi::Value v = processes.Get(i);
      if (!v.IsNumber() || v.As<Napi::Number>().Int64Value() <= 0) Fail(path, "must be a positive pid");
      w.processes.push_back(v.As<Napi::Number>().Int64Value());
    }
    Napi::Array windows = ArrayField(js, "windows", "world");
    for (uint32_t i = 0; i < windows.Length(); ++i) {
      const std::string path = "world.windows[" + std::to_string(i) + "]";
      w.windows.push_back(ParseWindow(ObjectAt(windows, i, path), path));
    }
    if (Has(js, "postDelay")) {
      Napi::Object d = ObjectField(js, "postDelay", "world");
      Keys(d, "world.postDelay", {"afterEvents", "ms"});
      macfake::FakePostDelay delay;
      delay.afterEvents = Int(d, "afterEvents", "world.postDelay", 0);
      delay.ms = Int(d, "ms", "world.postDelay", 0);
      if (delay.afterEvents < 0 || delay.ms < 0 || delay.ms > 60000)
        Fail("world.postDelay", "afterEvents must be >= 0 and ms in 0...60000");
      w.postDelay = delay;
    }
    if (Has(js, "focusMoves")) {
      Napi::Object f = ObjectField(js, "focusMoves", "world");
      Keys(f, "world.focusMoves", {"afterEvents", "toPid"});
      macfake::FakeFocusMove move;
      move.afterEvents = Int(f, "afterEvents", "world.focusMoves", 0);
      move.toPid = Int(f, "toPid", "world.focusMoves", 0);
      if (move.afterEvents < 1) Fail("world.focusMoves.afterEvents", "must be at least 1");
      w.focusMoves = move;
    }
    // issue 12 (items 1, 2): key codes whose keyboard events cannot be created.
    if (Has(js, "keyEventFails")) {
      Napi::Array codes = ArrayField(js, "keyEventFails", "world");
      for (uint32_t i = 0; i < codes.Length(); ++i) {
        const std::string path = "world.keyEventFails[" + std::to_string(i) + "]";
        Napi::Value v = codes.Get(i);
        if (!v.IsNumber()) Fail(path, "must be a key code");
        const int64_t code = v.As<Napi::Number>().Int64Value();
        if (code < 0 || code > 0xFFFF) Fail(path, "must be a key code in 0...65535");
        w.keyEventFails.insert(code);
      }
    }
    if (Has(js, "systemWide")) {
      Napi::Object sys = ObjectField(js, "systemWide", "world");
      Keys(sys, "world.systemWide", {"attrs"});
      if (Has(sys, "attrs")) {
        Napi::Object attrs = ObjectField(sys, "attrs", "world.systemWide");
        for (const std::string& name : Names(attrs))
          w.systemWideAttrs[name] = Value(attrs.Get(name), /*pid=*/0, "world.systemWide.attrs." + name, w, 1);
      }
    }
    return w;
  }

 private:
  [[noreturn]] void Fail(const std::string& path, const std::string& what) {
    throw Napi::TypeError::New(env_, "fake world: " + path + ": " + what);
  }

  static bool Has(Napi::Object o, const char* key) { return o.Has(key) && !o.Get(key).IsUndefined(); }

  std::vector<std::string> Names(Napi::Object o) {
    std::vector<std::string> out;
    Napi::Array names = o.GetPropertyNames();
    for (uint32_t i = 0; i < names.Length(); ++i) out.push_back(names.Get(i).ToString().Utf8Value());
    return out;
  }

  void Keys(Napi::Object o, const std::string& path, std::initializer_list<const char*> allowed) {
    for (const std::string& name : Names(o)) {
      bool ok = false;
      for (const char* a : allowed) ok = ok || name == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        Fail(path + "." + name, "unknown key (expected one of: " + list + ")");
      }
    }
  }

  bool Bool(Napi::Object o, const char* key, const std::string& path, bool fallback) {
    if (!Has(o, key)) return fallback;
    Napi::Value v = o.Get(key);
    if (!v.IsBoolean()) Fail(path + "." + key, "must be a boolean");
    return v.As<Napi::Boolean>().Value();
  }

  double Number(Napi::Object o, const char* key, const std::string& path, double fallback) {
    if (!Has(o, key)) return fallback;
    Napi::Value v = o.Get(key);
    if (!v.IsNumber() || !std::isfinite(v.As<Napi::Number>().DoubleValue()))
      Fail(path + "." + key, "must be a finite number");
    return v.As<Napi::Number>().DoubleValue();
  }

  int64_t Int(Napi::Object o, const char* key, const std::string& path, int64_t fallback) {
    if (!Has(o, key)) return fallback;
    const double d = Number(o, key, path, 0);
    if (d != std::floor(d) || std::fabs(d) > 9007199254740991.0) Fail(path + "." + key, "must be an integer");
    return static_cast<int64_t>(d);
  }

  std::string String(Napi::Object o, const char* key, const std::string& path, const std::string& fallback) {
    if (!Has(o, key)) return fallback;
    Napi::Value v = o.Get(key);
    if (!v.IsString()) Fail(path + "." + key, "must be a string");
    return v.As<Napi::String>().Utf8Value();
  }

  std::vector<std::string> Strings(Napi::Object o, const char* key, const std::string& path) {
    std::vector<std::string> out;
    Napi::Array a = ArrayField(o, key, path);
    for (uint32_t i = 0; i < a.Length(); ++i) {
      Napi::Value v = a.Get(i);
      if (!v.IsString()) Fail(path + "." + key + "[" + std::to_string(i) + "]", "must be a string");
      out.push_back(v.As<Napi::String>().Utf8Value());
    }
    return out;
  }

  Napi::Array ArrayField(Napi::Object o, const char* key, const std::string& path) {
    if (!Has(o, key)) return Napi::Array::New(env_);
    Napi::Value v = o.Get(key);
    if (!v.IsArray()) Fail(path + "." + key, "must be an array");
    return v.As<Napi::Array>();
  }

  Napi::Object ObjectField(Napi::Object o, const char* key, const std::string& path) {
    Napi::Value v = o.Get(key);
    if (!v.IsObject() || v.IsArray()) Fail(path + "." + key, "must be an object");
    return v.As<Napi::Object>();
  }

  Napi::Object ObjectAt(Napi::Array a, uint32_t i, const std::string& path) {
    Napi::Value v = a.Get(i);
    if (!v.IsObject() || v.IsArray()) Fail(path, "must be an object");
    return v.As<Napi::Object>();
  }

  int32_t AXErrorCode(Napi::Value v, const std::string& path) {
    if (v.IsNumber()) {
      const double d = v.As<Napi::Number>().DoubleValue();
      if (d == std::floor(d) && d >= INT32_MIN && d <= INT32_MAX) return static_cast<int32_t>(d);
    } else if (v.IsString()) {
      const std::string name = v.As<Napi::String>().Utf8Value();
      for (const AXErrorName& e : kAXErrorNames)
        if (name == e.name) return e.code;
    }
    Fail(path, "must be an AXError code (-25212) or name (\"kAXErrorNoValue\")");
  }

  // Pass 1: the explicit ids, so automatic ones can avoid them.
  void CollectIds(Napi::Value v, const std::string& path, int depth) {
    if (depth > kMaxDepth) Fail(path, "nested deeper than " + std::to_string(kMaxDepth));
    Napi::HandleScope scope(env_);
    if (v.IsArray()) {
      Napi::Array a = v.As<Napi::Array>();
      for (uint32_t i = 0; i < a.Length(); ++i) CollectIds(a.Get(i), path + "[" + std::to_string(i) + "]", depth + 1);
      return;
    }
    if (!v.IsObject()) return;
    Napi::Object o = v.As<Napi::Object>();
    if (Has(o, "attrs") && Has(o, "id")) {
      const int64_t id = Int(o, "id", path, 0);
      if (id < 1) Fail(path + ".id", "must be a positive integer");
      if (!explicitIds_.insert(id).second) Fail(path + ".id", "element id " + std::to_string(id) + " is used twice");
    }
    for (const char* key : {"apps", "root", "systemWide", "attrs", "hiddenChildren", "reopenWindows"})
      if (Has(o, key)) {
        Napi::Value child = o.Get(key);
        if (child.IsArray() || key == std::string("apps") || key == std::string("hiddenChildren")) {
          CollectIds(child, path + "." + key, depth + 1);
        } else if (child.IsObject()) {
          if (key == std::string("attrs")) {
            Napi::Object attrs = child.As<Napi::Object>();
            for (const std::string& name : Names(attrs))
              CollectIds(attrs.Get(name), path + ".attrs." + name, depth + 1);
          } else {
            CollectIds(child, path + "." + key, depth + 1);
          }
        }
      }
  }

  int64_t NextId() {
    while (explicitIds_.count(nextId_)) ++nextId_;
    return nextId_++;
  }

  FakeFaults Faults(Napi::Object o, const std::string& path) {
    Keys(o, path,
         {"dieAfterReads", "failAttribute", "cannotComplete", "failBatchSlots", "logReads", "performError", "setError",
          "batchError", "batchErrorTimes", "selectionLagReads"});
    FakeFaults f;
    f.dieAfterReads = static_cast<int>(Int(o, "dieAfterReads", path, -1));
    f.cannotComplete = Bool(o, "cannotComplete", path, false);
    if (Has(o, "failAttribute")) {
      Napi::Object fa = ObjectField(o, "failAttribute", path);
      for (const std::string& name : Names(fa))
        f.failAttribute[name] = AXErrorCode(fa.Get(name), path + ".failAttribute." + name);
    }
    for (const std::string& name : Strings(o, "failBatchSlots", path)) f.failBatchSlots.insert(name);
    for (const std::string& name : Strings(o, "logReads", path)) f.logReads.insert(name);
    if (Has(o, "performError")) f.performError = AXErrorCode(o.Get("performError"), path + ".performError");
    if (Has(o, "setError")) f.setError = AXErrorCode(o.Get("setError"), path + ".setError");
    if (Has(o, "batchError")) f.batchError = AXErrorCode(o.Get("batchError"), path + ".batchError");
    f.batchErrorTimes = static_cast<int>(Int(o, "batchErrorTimes", path, 0));      // issue 12 item 10
    f.selectionLagReads = static_cast<int>(Int(o, "selectionLagReads", path, 0));  // issue 21 N12
    return f;
  }

  // An inline element: adds it (and its subtree) to the world, returns its id.
  int64_t Element(Napi::Object o, int64_t pid, const std::string& path, FakeWorld& w, int depth) {
    if (depth > kMaxDepth) Fail(path, "nested deeper than " + std::to_string(kMaxDepth));
    if (pid == 0) Fail(path, "inline elements must belong to an app (use { ref: id } here)");
    Napi::HandleScope scope(env_);
    Keys(o, path, {"id", "attrs", "settable", "actions", "faults", "hiddenChildren", "cgWindow", "growEveryMs"});
    FakeElement el;
    el.id = Has(o, "id") ? Int(o, "id", path, 0) : NextId();
    el.pid = pid;
    // Reserve the id before the children take theirs.
    w.elements[el.id].id = el.id;
    if (Has(o, "attrs")) {
      Napi::Object attrs = ObjectField(o, "attrs", path);
      for (const std::string& name : Names(attrs))
        el.attrs[name] = Value(attrs.Get(name), pid, path + ".attrs." + name, w, depth + 1);
    }
    for (const std::string& s : Strings(o, "settable", path)) el.settable.insert(s);
    el.actions = Strings(o, "actions", path);
    if (Has(o, "faults")) el.faults = Faults(ObjectField(o, "faults", path), path + ".faults");
    Napi::Array hidden = ArrayField(o, "hiddenChildren", path);
    for (uint32_t i = 0; i < hidden.Length(); ++i) {
      const std::string p = path + ".hiddenChildren[" + std::to_string(i) + "]";
      FakeValue v = Value(hidden.Get(i), pid, p, w, depth + 1);
      if (v.kind != FakeValue::Kind::kElement) Fail(p, "must be an element or { ref }");
      el.hiddenChildren.push_back(std::move(v));
    }
    el.growEveryMs = static_cast<int>(Int(o, "growEveryMs", path, 0));
    if (Has(o, "cgWindow")) {
      const int64_t n = Int(o, "cgWindow", path, 0);
      if (n < 0 || n > UINT32_MAX) Fail(path + ".cgWindow", "must be a window number");
      el.cgWindow = static_cast<uint32_t>(n);
    }
    const int64_t id = el.id;
    w.elements[id] = std::move(el);
    return id;
  }

  FakeValue Value(Napi::Value v, int64_t pid, const std::string& path, FakeWorld& w, int depth) {
    if (depth > kMaxDepth) Fail(path, "nested deeper than " + std::to_string(kMaxDepth));
    if (v.IsUndefined()) Fail(path, "undefined (use null for an attribute that has no value)");
    if (v.IsNull()) return FakeValue::NoValue();
    if (v.IsString()) return FakeValue::String(v.As<Napi::String>().Utf8Value());
    if (v.IsBoolean()) return FakeValue::Bool(v.As<Napi::Boolean>().Value());
    if (v.IsNumber()) {
      const double d = v.As<Napi::Number>().DoubleValue();
      if (!std::isfinite(d)) Fail(path, "must be finite");
      if (d == std::floor(d) && std::fabs(d) <= 9007199254740991.0) return FakeValue::Int(static_cast<int64_t>(d));
      return FakeValue::Double(d);
    }
    if (v.IsArray()) {
      Napi::Array a = v.As<Napi::Array>();
      std::vector<FakeValue> items;
      for (uint32_t i = 0; i < a.Length(); ++i) {
        const std::string p = path + "[" + std::to_string(i) + "]";
        FakeValue item = Value(a.Get(i), pid, p, w, depth + 1);
        if (item.kind == FakeValue::Kind::kNoValue) Fail(p, "null cannot be an array item");
        items.push_back(std::move(item));
      }
      return FakeValue::Array(std::move(items));
    }
    if (!v.IsObject()) Fail(path, "unsupported value");
    Napi::Object o = v.As<Napi::Object>();
    if (Has(o, "attrs")) return FakeValue::Element(Element(o, pid, path, w, depth));
    std::set<std::string> keys;
    for (const std::string& k : Names(o)) keys.insert(k);
    auto is = [&](std::initializer_list<const char*> want) {
      return keys == std::set<std::string>(want.begin(), want.end());
    };
    auto num = [&](const char* k) { return Number(o, k, path, 0); };
    if (is({"ref"})) {
      const int64_t id = Int(o, "ref", path, 0);
      refs_.emplace_back(id, path);
      return FakeValue::Element(id);
    }
    if (is({"error"})) return FakeValue::Error(AXErrorCode(o.Get("error"), path + ".error"));
    if (is({"url"})) return FakeValue::Url(String(o, "url", path, ""));
    // Issue 12 item 10: a URL relative to a base.
    if (is({"url", "base"})) return FakeValue::UrlWithBase(String(o, "url", path, ""), String(o, "base", path, ""));
    if (is({"double"})) return FakeValue::Double(num("double"));
    if (is({"x", "y", "w", "h"})) return FakeValue::RectValue(num("x"), num("y"), num("w"), num("h"));
    if (is({"x", "y"})) return FakeValue::Point(num("x"), num("y"));
    if (is({"w", "h"})) return FakeValue::Size(num("w"), num("h"));
    if (is({"location", "length"})) return FakeValue::Range(Int(o, "location", path, 0), Int(o, "length", path, 0));
    Fail(path,
         "an object value must be an element (with attrs) or one of {ref}, {error}, {url}, {double}, "
         "{x,y}, {w,h}, {x,y,w,h}, {location,length}");
  }

  FakeApp ParseApp(Napi::Object o, const std::string& path, FakeWorld& w) {
    Keys(o, path,
         {"pid", "name", "bundleId", "bundlePath", "hidden", "active", "regular", "hungMs", "chromium", "recoverOn",
          "faults", "root", "activationDelayMs", "notifications", "refuseNotifications", "busyNotifications",
          "reopenWindows"});
    if (!Has(o, "pid")) Fail(path + ".pid", "required");
    FakeApp app;
    app.pid = Int(o, "pid", path, 0);
    if (app.pid <= 0) Fail(path + ".pid", "must be a positive integer");
    if (w.App(app.pid)) Fail(path + ".pid", "two apps with pid " + std::to_string(app.pid));
    app.name = String(o, "name", path, "");
    app.bundleId = String(o, "bundleId", path, "");
    app.bundlePath = String(o, "bundlePath", path, "");
    app.hidden = Bool(o, "hidden", path, false);
    app.active = Bool(o, "active", path, false);
    app.regular = Bool(o, "regular", path, true);
    app.hungMs = static_cast<int>(Int(o, "hungMs", path, 0));
    if (app.hungMs < 0) Fail(path + ".hungMs", "must not be negative");
    app.activationDelayMs = static_cast<int>(Int(o, "activationDelayMs", path, 0));
    if (app.activationDelayMs < 0) Fail(path + ".activationDelayMs", "must not be negative");
    if (Has(o, "chromium")) {
      const std::string p = path + ".chromium";
      Napi::Object c = ObjectField(o, "chromium", path);
      Keys(c, p, {"revealAfterMs", "attribute", "setError"});
      macfake::FakeChromium chromium;
      chromium.revealAfterMs = static_cast<int>(Int(c, "revealAfterMs", p, 0));
      chromium.attribute = String(c, "attribute", p, "AXManualAccessibility");
      if (Has(c, "setError")) chromium.setError = AXErrorCode(c.Get("setError"), p + ".setError");  // issue 12 item 3
      if (chromium.attribute != "AXManualAccessibility" && chromium.attribute != "AXEnhancedUserInterface")
        Fail(p + ".attribute", "must be \"AXManualAccessibility\" or \"AXEnhancedUserInterface\"");
      app.chromium = chromium;
    }
    app.recoverOn = String(o, "recoverOn", path, "");
    static const std::set<std::string> kSteps = {"",           "unhide", "activate", "open",
                                                 "unminimize", "raise",  "main",     "never"};
    if (!kSteps.count(app.recoverOn))
      Fail(path + ".recoverOn", "must be one of unhide, activate, open, unminimize, raise, main, never");
    if (Has(o, "faults")) app.faults = Faults(ObjectField(o, "faults", path), path + ".faults");
    for (const std::string& name : Strings(o, "refuseNotifications", path)) app.refuseNotifications.insert(name);
    for (const std::string& name : Strings(o, "busyNotifications", path)) app.busyNotifications.insert(name);
    Napi::Array notes = ArrayField(o, "notifications", path);
    for (uint32_t i = 0; i < notes.Length(); ++i) {
      const std::string p = path + ".notifications[" + std::to_string(i) + "]";
      Napi::Object n = ObjectAt(notes, i, p);
      Keys(n, p, {"atMs", "name", "element"});
      macfake::FakeNotification note;
      note.atMs = Int(n, "atMs", p, 0);
      if (note.atMs < 0) Fail(p + ".atMs", "must not be negative");
      note.name = String(n, "name", p, "");
      if (note.name.empty()) Fail(p + ".name", "required");
      note.element = Int(n, "element", p, 0);
      app.notifications.push_back(std::move(note));
    }
    if (Has(o, "root")) {
      app.rootId = Element(ObjectField(o, "root", path), app.pid, path + ".root", w, 1);
    } else {
      app.rootId = NextId();
      FakeElement root;
      root.id = app.rootId;
      root.pid = app.pid;
      w.elements[root.id] = std::move(root);
    }
    // Issue 35 (N1 residue): windows the reopen event orders in (fake_cf.h FakeApp::reopenWindows).
    Napi::Array kept = ArrayField(o, "reopenWindows", path);
    for (uint32_t i = 0; i < kept.Length(); ++i) {
      const std::string p = path + ".reopenWindows[" + std::to_string(i) + "]";
      FakeValue v = Value(kept.Get(i), app.pid, p, w, 1);
      if (v.kind != FakeValue::Kind::kElement) Fail(p, "must be an element");
      app.reopenWindows.push_back(v.integer);
    }
    return app;
  }

  FakeCGWindow ParseWindow(Napi::Object o, const std::string& path) {
    Keys(o, path,
         {"number", "pid", "layer", "bounds", "name", "ownerName", "onScreen", "alpha", "captureFails",
          "blackWithWindowFilter", "backingScale", "captureHangs", "handlerKept"});
    if (!Has(o, "number")) Fail(path + ".number", "required");
    if (!Has(o, "pid")) Fail(path + ".pid", "required");
    FakeCGWindow cg;
    const int64_t n = Int(o, "number", path, 0);
    if (n <= 0 || n > UINT32_MAX) Fail(path + ".number", "must be a positive window number");
    cg.number = static_cast<uint32_t>(n);
    cg.pid = Int(o, "pid", path, 0);
    cg.layer = static_cast<int>(Int(o, "layer", path, 0));
    if (Has(o, "bounds")) {
      const std::string p = path + ".bounds";
      Napi::Object b = ObjectField(o, "bounds", path);
      Keys(b, p, {"x", "y", "w", "h"});
      cg.x = Number(b, "x", p, 0), cg.y = Number(b, "y", p, 0);
      cg.w = Number(b, "w", p, 0), cg.h = Number(b, "h", p, 0);
    }
    cg.name = String(o, "name", path, "");
    cg.ownerName = String(o, "ownerName", path, "");
    cg.onScreen = Bool(o, "onScreen", path, true);
    cg.alpha = Number(o, "alpha", path, 1);
    cg.captureFails = Bool(o, "captureFails", path, false);
    // issue 12 items 4, 5, 9 (capture)
    cg.blackWithWindowFilter = Bool(o, "blackWithWindowFilter", path, false);
    cg.backingScale = Number(o, "backingScale", path, 0);
    if (cg.backingScale < 0 || !(cg.backingScale == cg.backingScale)) Fail(path + ".backingScale", "must be >= 0");
    cg.captureHangs = Bool(o, "captureHangs", path, false);
    cg.handlerKept = Bool(o, "handlerKept", path, false);
    return cg;
  }

 public:
  // References are checked after everything is parsed: they may point forward.
  void CheckRefs(const FakeWorld& w) {
    for (const auto& r : refs_)
      if (!w.elements.count(r.first))
        Fail(r.second, "{ ref: " + std::to_string(r.first) + " }: no element has that id");
    // A CG window whose pid has no app is allowed: a helper process, the Dock.
  }

 private:
  Napi::Env env_;
  std::set<int64_t> explicitIds_;
  int64_t nextId_ = 1;
  std::vector<std::pair<int64_t, std::string>> refs_;
};

}  // namespace

macfake::FakeWorld FakeWorldFromJs(Napi::Object world) {
  Parser parser(world.Env());
  FakeWorld w = parser.Parse(world);
  parser.CheckRefs(w);
  return w;
}

void InstallFakeWorld(Napi::Object world) {
  FakeWorld w = FakeWorldFromJs(world);
  try {
    macfake::InstallWorld(std::move(w));
  } catch (const std::invalid_argument& e) {
    throw Napi::TypeError::New(world.Env(), std::string("fake world: ") + e.what());
  }
}

}  // namespace axsnap
