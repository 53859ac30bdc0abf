#include "convert.h"

#include <map>
#include <utility>

namespace axsnap {

namespace {

void SetOpt(Napi::Object& o, const char* key, const std::optional<std::string>& v) {
  if (v) o.Set(key, *v);
}

void SetOptBool(Napi::Object& o, const char* key, const std::optional<bool>& v) {
  if (v) o.Set(key, *v);
}

std::optional<std::string> OptString(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsString()) return v.As<Napi::String>().Utf8Value();
  return std::nullopt;
}

std::optional<bool> OptBool(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsBoolean()) return v.As<Napi::Boolean>().Value();
  return std::nullopt;
}

std::optional<double> OptNumber(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (v.IsNumber()) return v.As<Napi::Number>().DoubleValue();
  return std::nullopt;
}

std::optional<Rect> OptRect(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (!v.IsObject()) return std::nullopt;
  Napi::Object r = v.As<Napi::Object>();
  return Rect{OptNumber(r, "x").value_or(0), OptNumber(r, "y").value_or(0), OptNumber(r, "w").value_or(0),
              OptNumber(r, "h").value_or(0)};
}

// The boolean states, by their name in lib/model/model.ts: one table for both directions.
constexpr std::pair<const char*, std::optional<bool> States::*> kStateFields[] = {
    {"enabled", &States::enabled},     {"focused", &States::focused},       {"focusable", &States::focusable},
    {"selected", &States::selected},   {"selectable", &States::selectable}, {"expanded", &States::expanded},
    {"minimized", &States::minimized}, {"secure", &States::secure},         {"required", &States::required},
    {"invalid", &States::invalid},     {"readonly", &States::readonly},     {"multiline", &States::multiline},
    {"editable", &States::editable},   {"modal", &States::modal},           {"visible", &States::visible},
};

Napi::Object StatesToJs(Napi::Env env, const States& s) {
  Napi::Object o = Napi::Object::New(env);
  for (const auto& [name, field] : kStateFields) SetOptBool(o, name, s.*field);
  if (s.checked) {
    if (*s.checked == 2)
      o.Set("checked", "mixed");
    else
      o.Set("checked", *s.checked != 0);
  }
  return o;
}

States StatesFromJs(const Napi::Object& o) {
  States s;
  for (const auto& [name, field] : kStateFields) s.*field = OptBool(o, name);
  Napi::Value c = o.Get("checked");
  if (c.IsBoolean())
    s.checked = c.As<Napi::Boolean>().Value() ? 1 : 0;
  else if (c.IsString() && c.As<Napi::String>().Utf8Value() == "mixed")
    s.checked = 2;
  return s;
}

}  // namespace

Napi::Object RectToJs(Napi::Env env, const Rect& r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("x", r.x);
  o.Set("y", r.y);
  o.Set("w", r.w);
  o.Set("h", r.h);
  return o;
}

Napi::Object NodeToJs(Napi::Env env, const RawNode& node) {
  const NodeAttributes& a = node.attrs;
  Napi::Object o = Napi::Object::New(env);
  o.Set("role", a.role);
  SetOpt(o, "subrole", a.subrole);
  SetOpt(o, "roleDescription", a.roleDescription);
  SetOpt(o, "title", a.title);
  SetOpt(o, "description", a.description);
  SetOpt(o, "help", a.help);
  if (const auto* s = std::get_if<std::string>(&a.value))
    o.Set("value", *s);
  else if (const auto* d = std::get_if<double>(&a.value))
    o.Set("value", *d);
  else if (const auto* b = std::get_if<bool>(&a.value))
    o.Set("value", *b);
  SetOpt(o, "valueType", a.valueType);
  SetOpt(o, "valueText", a.valueText);
  if (a.settable) o.Set("settable", true);
  SetOpt(o, "identifier", a.identifier);
  SetOpt(o, "url", a.url);
  SetOpt(o, "placeholder", a.placeholder);
  SetOpt(o, "selectedText", a.selectedText);
  if (a.charCount) o.Set("charCount", static_cast<double>(*a.charCount));
  SetOpt(o, "orientation", a.orientation);
  o.Set("states", StatesToJs(env, a.states));
  if (!a.actions.empty()) {
    Napi::Array actions = Napi::Array::New(env, a.actions.size());
    for (size_t i = 0; i < a.actions.size(); i++) actions.Set(i, a.actions[i]);
    o.Set("actions", actions);
  }
  if (a.frame) o.Set("frame", RectToJs(env, *a.frame));
  SetOpt(o, "via", node.via);
  if (a.rowIndex) o.Set("rowIndex", static_cast<double>(*a.rowIndex));
  if (a.rowCount) o.Set("rowCount", static_cast<double>(*a.rowCount));
  if (!a.labelledBy.empty()) {
    Napi::Array labels = Napi::Array::New(env, a.labelledBy.size());
    for (size_t i = 0; i < a.labelledBy.size(); i++) labels.Set(i, static_cast<double>(a.labelledBy[i]));
    o.Set("labelledBy", labels);
  }
  if (node.id != 0) o.Set("handle", static_cast<double>(node.id));
  if (!node.children.empty()) {
    Napi::Array children = Napi::Array::New(env, node.children.size());
    for (size_t i = 0; i < node.children.size(); i++) children.Set(i, NodeToJs(env, node.children[i]));
    o.Set("children", children);
  }
  return o;
}

Napi::Object AppToJs(Napi::Env env, const AppInfo& app) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", app.name);
  if (!app.bundleId.empty()) o.Set("bundleId", app.bundleId);
  o.Set("pid", static_cast<double>(app.pid));
  if (!app.responsive) o.Set("responsive", false);
  if (app.noTree) o.Set("noTree", true);
  return o;
}

Napi::Object WindowToJs(Napi::Env env, const WindowInfo& w) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("element", static_cast<double>(w.element));
  o.Set("pid", static_cast<double>(w.pid));
  o.Set("title", w.title);
  o.Set("frame", RectToJs(env, w.frame));
  o.Set("role", w.role);
  o.Set("id", w.id);
  o.Set("kind", w.kind);
  o.Set("active", w.active);
  o.Set("minimized", w.minimized);
  o.Set("visible", w.visible);
  o.Set("modal", w.modal);
  o.Set("inParent", w.inParent);
  if (w.positionUnknown) o.Set("positionUnknown", true);
  if (w.stacking >= 0) o.Set("stacking", w.stacking);
  return o;
}

WindowInfo WindowFromJs(const Napi::Object& o) {
  WindowInfo w;
  w.element = static_cast<ElementId>(OptNumber(o, "element").value_or(0));
  w.pid = static_cast<int64_t>(OptNumber(o, "pid").value_or(0));
  w.title = OptString(o, "title").value_or("");
  if (auto f = OptRect(o, "frame")) {
    w.frame = *f;
    w.hasFrame = true;
  }
  w.role = OptString(o, "role").value_or("");
  return w;
}

Napi::Object SnapshotToJs(Napi::Env env, const SnapshotResult& r) {
  const RawSnapshot& raw = r.raw;
  Napi::Object snap = Napi::Object::New(env);
  snap.Set("version", 1);
  snap.Set("platform", raw.platform);
  snap.Set("app", AppToJs(env, raw.app));
  Napi::Object window = Napi::Object::New(env);
  window.Set("title", raw.window.title);
  window.Set("frame", RectToJs(env, raw.window.frame));
  window.Set("scale", raw.scale);
  if (!raw.window.kind.empty()) window.Set("kind", raw.window.kind);
  if (!raw.window.role.empty()) window.Set("role", raw.window.role);
  if (!raw.window.id.empty()) window.Set("id", raw.window.id);
  if (raw.window.modal) window.Set("modal", true);
  if (raw.window.positionUnknown) window.Set("positionUnknown", true);
  snap.Set("window", window);
  snap.Set("root", NodeToJs(env, raw.root));
  if (raw.menuBar) snap.Set("menuBar", NodeToJs(env, *raw.menuBar));
  Napi::Object walk = Napi::Object::New(env);
  walk.Set("ended", WalkEndName(raw.ended));
  walk.Set("nodesObserved", static_cast<double>(raw.nodesObserved));
  walk.Set("elapsedMs", raw.elapsedMs);
  Napi::Object timings = Napi::Object::New(env);
  timings.Set("appMs", raw.timings.appMs);
  timings.Set("windowMs", raw.timings.windowMs);
  timings.Set("walkMs", raw.timings.walkMs);
  if (raw.timings.menuBarMs > 0.05) timings.Set("menuBarMs", raw.timings.menuBarMs);
  walk.Set("timings", timings);
  if (!raw.reads.empty()) {
    Napi::Array reads = Napi::Array::New(env, raw.reads.size());
    for (size_t i = 0; i < raw.reads.size(); i++) {
      Napi::Object r = Napi::Object::New(env);
      r.Set("kind", raw.reads[i].kind);
      r.Set("calls", static_cast<double>(raw.reads[i].calls));
      r.Set("ms", raw.reads[i].ms);
      reads.Set(i, r);
    }
    walk.Set("reads", reads);
  }
  if (!raw.notes.empty()) {
    Napi::Array notes = Napi::Array::New(env, raw.notes.size());
    for (size_t i = 0; i < raw.notes.size(); i++) notes.Set(i, raw.notes[i]);
    walk.Set("notes", notes);
  }
  snap.Set("walk", walk);

  Napi::Object out = Napi::Object::New(env);
  out.Set("raw", snap);
  out.Set("window", WindowToJs(env, raw.window));
  out.Set("windowStep", r.windowStep);
  if (!r.route.empty()) out.Set("route", r.route);
  Napi::Array ids = Napi::Array::New(env, r.ids.size());
  for (size_t i = 0; i < r.ids.size(); i++) ids.Set(i, static_cast<double>(r.ids[i]));
  out.Set("handles", ids);
  if (r.screenshot) {
    const Screenshot& s = *r.screenshot;
    Napi::Object shot = Napi::Object::New(env);
    shot.Set("png", Napi::Buffer<uint8_t>::Copy(env, s.png.data(), s.png.size()));
    shot.Set("pixelWidth", s.pixelWidth);
    shot.Set("pixelHeight", s.pixelHeight);
    shot.Set("scale", s.scale);
    Napi::Object origin = Napi::Object::New(env);
    origin.Set("x", s.originX);
    origin.Set("y", s.originY);
    shot.Set("windowOrigin", origin);
    shot.Set("encodes", s.encodes);
    shot.Set("captureMs", s.captureMs);
    shot.Set("encodeMs", s.encodeMs);
    out.Set("screenshot", shot);
  }
  return out;
}

NodeAttributes AttributesFromJs(const Napi::Object& o) {
  NodeAttributes a;
  a.role = OptString(o, "role").value_or("unknown");
  a.subrole = OptString(o, "subrole");
  a.roleDescription = OptString(o, "roleDescription");
  a.title = OptString(o, "title");
  a.description = OptString(o, "description");
  a.help = OptString(o, "help");
  Napi::Value v = o.Get("value");
  if (v.IsString())
    a.value = v.As<Napi::String>().Utf8Value();
  else if (v.IsNumber())
    a.value = v.As<Napi::Number>().DoubleValue();
  else if (v.IsBoolean())
    a.value = v.As<Napi::Boolean>().Value();
  a.valueType = OptString(o, "valueType");
  a.valueText = OptString(o, "valueText");
  a.settable = OptBool(o, "settable").value_or(false);
  a.identifier = OptString(o, "identifier");
  a.url = OptString(o, "url");
  a.placeholder = OptString(o, "placeholder");
  a.selectedText = OptString(o, "selectedText");
  if (auto n = OptNumber(o, "charCount")) a.charCount = static_cast<int64_t>(*n);
  a.orientation = OptString(o, "orientation");
  Napi::Value states = o.Get("states");
  if (states.IsObject()) a.states = StatesFromJs(states.As<Napi::Object>());
  Napi::Value actions = o.Get("actions");
  if (actions.IsArray()) {
    Napi::Array arr = actions.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); i++) {
      Napi::Value name = arr.Get(i);
      if (name.IsString()) a.actions.push_back(name.As<Napi::String>().Utf8Value());
    }
  }
  a.frame = OptRect(o, "frame");
  if (auto n = OptNumber(o, "rowIndex")) a.rowIndex = static_cast<int64_t>(*n);
  if (auto n = OptNumber(o, "rowCount")) a.rowCount = static_cast<int64_t>(*n);
  return a;
}

namespace {

// Depth-first, with an explicit stack: a script can be as deep as a test wants.
// A node `{ "ref": "k" }` stands for the element declared with `"key": "k"`
// elsewhere in the script: that is how a script builds a cycle.
size_t AddTree(FakeScript& script, const Napi::Object& rootNode, std::map<std::string, size_t>& keys,
               std::vector<std::pair<size_t, std::string>>& refs) {
  struct Item {
    Napi::Object node;
    size_t parent;
    std::string via;
  };
  std::vector<Item> stack{{rootNode, SIZE_MAX, ""}};
  size_t rootIndex = script.elements.size();
  while (!stack.empty()) {
    Item item = stack.back();
    stack.pop_back();
    if (auto ref = OptString(item.node, "ref")) {
      if (item.parent != SIZE_MAX) refs.push_back({item.parent, *ref});
      continue;
    }
    const size_t index = script.elements.size();
    if (auto key = OptString(item.node, "key")) keys[*key] = index;
    FakeElement e;
    e.attrs = AttributesFromJs(item.node);
    Napi::Value fault = item.node.Get("fault");
    if (fault.IsObject()) {
      Napi::Object f = fault.As<Napi::Object>();
      e.fault.failAttribute = OptString(f, "failAttribute").value_or("");
      e.fault.dieAfterReads = static_cast<int>(OptNumber(f, "dieAfterReads").value_or(-1));
      e.fault.hangMs = static_cast<int>(OptNumber(f, "hangMs").value_or(0));
      e.fault.childrenError = OptBool(f, "childrenError").value_or(false);
      e.fault.earlyDeadline = OptString(f, "earlyDeadline").value_or("");
      e.fault.actionHangMs = static_cast<int>(OptNumber(f, "actionHangMs").value_or(0));
      e.fault.holdsApp = OptBool(f, "holdsApp").value_or(false);
      e.fault.refuseFocus = OptBool(f, "refuseFocus").value_or(false);
      e.fault.ignoreSet = OptBool(f, "ignoreSet").value_or(false);
      e.fault.failRead = OptString(f, "failRead").value_or("");
      // Bounded: a script is test input, but a huge count must not make the fake schedule forever.
      auto bounded = [](std::optional<double> v, double hi) {
        const double x = v.value_or(0);
        return static_cast<int>(x >= 0 && x <= hi ? x : (x > hi ? hi : 0));
      };
      e.fault.rebuildAfterMs = bounded(OptNumber(f, "rebuildAfterMs"), 60000);
      Napi::Value churn = f.Get("churnAfterAction");
      if (churn.IsObject()) {
        Napi::Object c = churn.As<Napi::Object>();
        e.fault.churnEvents = bounded(OptNumber(c, "events"), 10000);
        e.fault.churnIntervalMs = bounded(OptNumber(c, "intervalMs"), 60000);
      }
    }
    script.elements.push_back(std::move(e));
    if (item.parent != SIZE_MAX) {
      script.elements[item.parent].children.push_back(index);
      script.elements[item.parent].via.push_back(item.via);
    }
    Napi::Value children = item.node.Get("children");
    if (children.IsArray()) {
      Napi::Array arr = children.As<Napi::Array>();
      for (uint32_t i = arr.Length(); i-- > 0;) {
        Napi::Value c = arr.Get(i);
        if (!c.IsObject()) throw Napi::TypeError::New(item.node.Env(), "fake script: a child is not an object");
        Napi::Object child = c.As<Napi::Object>();
        stack.push_back({child, index, OptString(child, "via").value_or("")});
      }
    }
  }
  return rootIndex;
}

}  // namespace

OcrOptions OcrOptionsFromJs(const Napi::Object& o) {
  OcrOptions options;
  auto rects = [&o](const char* key, std::vector<Rect>& out) {
    Napi::Value v = o.Get(key);
    if (!v.IsArray()) return;
    Napi::Array arr = v.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); i++) {
      Napi::Value r = arr.Get(i);
      if (!r.IsObject()) continue;
      Napi::Object ro = r.As<Napi::Object>();
      out.push_back({OptNumber(ro, "x").value_or(0), OptNumber(ro, "y").value_or(0), OptNumber(ro, "w").value_or(0),
                     OptNumber(ro, "h").value_or(0)});
    }
  };
  rects("regions", options.regions);
  rects("blanks", options.blanks);
  Napi::Value langs = o.Get("languages");
  if (langs.IsArray()) {
    Napi::Array arr = langs.As<Napi::Array>();
    for (uint32_t i = 0; i < arr.Length(); i++)
      if (arr.Get(i).IsString()) options.languages.push_back(arr.Get(i).As<Napi::String>().Utf8Value());
  }
  options.singleLine = OptBool(o, "singleLine").value_or(false);
  options.inkOnly = OptBool(o, "inkOnly").value_or(false);
  return options;
}

Napi::Object OcrResultToJs(Napi::Env env, const OcrResult& result) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("engine", result.engine);
  Napi::Array lines = Napi::Array::New(env, result.lines.size());
  for (size_t i = 0; i < result.lines.size(); i++) {
    Napi::Object l = Napi::Object::New(env);
    l.Set("text", result.lines[i].text);
    l.Set("frame", RectToJs(env, result.lines[i].frame));
    l.Set("confidence", result.lines[i].confidence);
    if (!result.lines[i].ink.empty()) l.Set("ink", result.lines[i].ink);
    if (!result.lines[i].words.empty()) {
      Napi::Array words = Napi::Array::New(env, result.lines[i].words.size());
      for (size_t k = 0; k < result.lines[i].words.size(); k++) {
        Napi::Object w = Napi::Object::New(env);
        w.Set("text", result.lines[i].words[k].text);
        w.Set("confidence", result.lines[i].words[k].confidence);
        words.Set(k, w);
      }
      l.Set("words", words);
    }
    lines.Set(i, l);
  }
  o.Set("lines", lines);
  o.Set("captureMs", result.captureMs);
  o.Set("ocrMs", result.ocrMs);
  return o;
}

FakeScript FakeScriptFromJs(const Napi::Object& o) {
  FakeScript script;
  std::map<std::string, size_t> keys;
  std::vector<std::pair<size_t, std::string>> refs;
  script.scale = OptNumber(o, "scale").value_or(1);
  script.noBus = OptBool(o, "noBus").value_or(false);
  script.typeMsPerChar = static_cast<int>(OptNumber(o, "typeMsPerChar").value_or(0));
  script.noEvents = OptBool(o, "noEvents").value_or(false);
  script.countLongLists = OptBool(o, "countLongLists").value_or(false);
  script.ocrUnavailable = OptBool(o, "ocrUnavailable").value_or(false);
  Napi::Value apps = o.Get("apps");
  if (!apps.IsArray()) return script;
  Napi::Array arr = apps.As<Napi::Array>();
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Napi::Object a = arr.Get(i).As<Napi::Object>();
    FakeApp app;
    app.info.name = OptString(a, "name").value_or("");
    app.info.bundleId = OptString(a, "bundleId").value_or(app.info.name);
    app.info.pid = static_cast<int64_t>(OptNumber(a, "pid").value_or(0));
    app.focused = OptBool(a, "focused").value_or(false);
    app.info.responsive = OptBool(a, "responsive").value_or(true);
    app.quietFloorMs = std::max(0.0, std::min(OptNumber(a, "quietFloorMs").value_or(0), 60000.0));
    if (a.Get("toolkit").IsObject()) {
      Napi::Object tk = a.Get("toolkit").As<Napi::Object>();
      app.toolkit = OptString(tk, "name").value_or("");
      app.toolkitVersion = OptString(tk, "version").value_or("");
    }
    Napi::Value windows = a.Get("windows");
    if (windows.IsArray()) {
      Napi::Array ws = windows.As<Napi::Array>();
      for (uint32_t k = 0; k < ws.Length(); k++) {
        Napi::Object w = ws.Get(k).As<Napi::Object>();
        FakeWindow fw;
        fw.info.title = OptString(w, "title").value_or("");
        if (auto f = OptRect(w, "frame")) {
          fw.info.frame = *f;
          fw.info.hasFrame = true;
        }
        fw.info.role = OptString(w, "role").value_or("frame");
        fw.info.active = OptBool(w, "focused").value_or(false);
        fw.info.minimized = OptBool(w, "minimized").value_or(false);
        fw.info.visible = OptBool(w, "visible").value_or(true);
        fw.info.modal = OptBool(w, "modal").value_or(false);
        fw.info.id = OptString(w, "id").value_or("");
        fw.info.kind = OptString(w, "kind").value_or("");
        fw.info.inParent = OptBool(w, "inParent").value_or(false);
        fw.captureFails = OptBool(w, "captureFails").value_or(false);
        Napi::Value ocr = w.Get("ocr");
        if (ocr.IsArray()) {
          fw.readable = true;
          Napi::Array lines = ocr.As<Napi::Array>();
          for (uint32_t n = 0; n < lines.Length(); n++) {
            if (!lines.Get(n).IsObject())
              throw Napi::TypeError::New(o.Env(), "fake script: an ocr line is not an object");
            Napi::Object line = lines.Get(n).As<Napi::Object>();
            fw.ocr.push_back({OptString(line, "text").value_or(""),
                              OptRect(line, "frame").value_or(Rect{}),
                              OptNumber(line, "confidence").value_or(1),
                              OptString(line, "ink").value_or(""),
                              {}});
          }
        }
        Napi::Value root = w.Get("root");
        Napi::Object rootObj = root.IsObject() ? root.As<Napi::Object>() : Napi::Object::New(o.Env());
        if (!root.IsObject()) rootObj.Set("role", fw.info.role);
        fw.root = AddTree(script, rootObj, keys, refs);
        app.windows.push_back(fw);
      }
    }
    script.apps.push_back(std::move(app));
  }
  for (const auto& [parent, key] : refs) {
    auto it = keys.find(key);
    if (it == keys.end()) throw Napi::TypeError::New(o.Env(), "fake script: unknown ref \"" + key + "\"");
    script.elements[parent].children.push_back(it->second);
    script.elements[parent].via.push_back("");
  }
  return script;
}

}  // namespace axsnap
