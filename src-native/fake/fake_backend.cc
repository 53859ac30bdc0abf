#include "fake_backend.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace axsnap {

Error FakeBackend::Connect() {
  if (script_.noBus) return {ErrorCode::kNoAccessibilityBus, "fake: no accessibility bus"};
  return {};
}

void FakeBackend::Record(std::string entry) {
  std::lock_guard<std::mutex> lock(logMutex_);
  log_.push_back(std::move(entry));
}

std::vector<std::string> FakeBackend::Log() {
  std::lock_guard<std::mutex> lock(logMutex_);
  return log_;
}

size_t FakeBackend::ReleasedCount() {
  std::lock_guard<std::mutex> lock(logMutex_);
  return released_.size();
}

FakeElement* FakeBackend::Find(ElementId id) {
  if (id == 0 || id > script_.elements.size()) return nullptr;
  return &script_.elements[id - 1];
}

Error FakeBackend::Touch(FakeElement& e, Clock::time_point deadline) {
  e.reads++;
  const bool anyHeld = std::any_of(script_.apps.begin(), script_.apps.end(), [](const FakeApp& a) { return a.held; });
  if (anyHeld && Held(PidOf(static_cast<size_t>(&e - script_.elements.data()))))
    return {ErrorCode::kAppUnresponsive, "fake: the app did not answer"};
  if (e.fault.failRead == "unresponsive") return {ErrorCode::kAppUnresponsive, "fake: the app did not answer"};
  if (!e.fault.failRead.empty()) return {ErrorCode::kInternal, "fake: the read failed"};
  if (e.fault.dieAfterReads >= 0 && e.reads > e.fault.dieAfterReads)
    return {ErrorCode::kElementGone, "fake: the element is gone"};
  if (e.fault.hangMs > 0) {
    // A hung app: block until it answers or the caller's deadline passes, whichever is first.
    const Clock::time_point until = Clock::now() + std::chrono::milliseconds(e.fault.hangMs);
    std::this_thread::sleep_until(std::min(until, deadline));
    if (Clock::now() >= deadline) return {ErrorCode::kAppUnresponsive, "fake: the app did not answer"};
  }
  return {};
}

Error FakeBackend::ListApps(std::vector<AppInfo>& out, Clock::time_point) {
  out.clear();
  for (size_t i = 0; i < script_.apps.size(); i++) {
    AppInfo info = script_.apps[i].info;
    info.element = script_.elements.size() + i + 1;
    if (script_.apps[i].held) info.responsive = false;
    out.push_back(info);
  }
  return {};
}

Error FakeBackend::FocusedApp(AppInfo& out, bool& found, Clock::time_point) {
  found = false;
  for (size_t i = 0; i < script_.apps.size(); i++) {
    if (!script_.apps[i].focused) continue;
    out = script_.apps[i].info;
    out.element = script_.elements.size() + i + 1;
    found = true;
  }
  return {};
}

Error FakeBackend::Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point) {
  out.clear();
  const size_t index = app.element - script_.elements.size() - 1;
  if (index >= script_.apps.size()) return {ErrorCode::kAppNotFound, "fake: no such app"};
  for (const FakeWindow& w : script_.apps[index].windows) {
    WindowInfo info = w.info;
    info.element = w.root + 1;
    info.pid = app.pid;
    out.push_back(info);
  }
  return {};
}

FakeElement* FakeBackend::ReadOne(ElementId id, Clock::time_point deadline, Error& err) {
  if (Clock::now() >= deadline) {
    err = {ErrorCode::kTimeout, "fake: deadline"};
    return nullptr;
  }
  FakeElement* e = Find(id);
  if (!e) {
    err = {ErrorCode::kElementGone, "fake: unknown element"};
    return nullptr;
  }
  err = Touch(*e, deadline);
  return err ? nullptr : e;
}

Error FakeBackend::ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out,
                             std::vector<Error>& errs, Clock::time_point deadline) {
  out.assign(ids.size(), NodeAttributes{});
  errs.assign(ids.size(), Error{});
  for (size_t i = 0; i < ids.size(); i++) {
    FakeElement* e = ReadOne(ids[i], deadline, errs[i]);
    if (!e) continue;
    if (e->fault.earlyDeadline == "read") {
      errs[i] = {ErrorCode::kTimeout, "fake: the deadline passed before the app answered"};
      continue;
    }
    out[i] = e->attrs;
    // A failed attribute is absent from the read, the way AXSwift's policy treats a failed slot.
    const std::string& bad = e->fault.failAttribute;
    if (bad == "title")
      out[i].title.reset();
    else if (bad == "description")
      out[i].description.reset();
    else if (bad == "value")
      out[i].value = std::monostate{};
    else if (bad == "frame")
      out[i].frame.reset();
    else if (bad == "actions")
      out[i].actions.clear();
    else if (bad == "role")
      out[i].role = "unknown";
  }
  return {};
}

Error FakeBackend::ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out,
                                std::vector<Error>& errs, Clock::time_point deadline) {
  out.assign(ids.size(), ChildList{});
  errs.assign(ids.size(), Error{});
  for (size_t i = 0; i < ids.size(); i++) {
    FakeElement* e = ReadOne(ids[i], deadline, errs[i]);
    if (!e) continue;
    if (e->fault.earlyDeadline == "children") {
      errs[i] = {ErrorCode::kTimeout, "fake: the deadline passed before the children were read"};
      continue;
    }
    if (e->fault.childrenError) {
      errs[i] = {ErrorCode::kActionFailed, "fake: reading children failed"};
      continue;
    }
    // A window being rebuilt shows only its first child (galculator showed its menu bar alone).
    const size_t shown = HalfBuilt(ids[i] - 1) ? std::min<size_t>(1, e->children.size()) : e->children.size();
    if (script_.countLongLists && shown >= kLongChildList) {
      out[i].unlisted = static_cast<int64_t>(shown);
      continue;
    }
    for (size_t k = 0; k < shown; k++) {
      out[i].ids.push_back(e->children[k] + 1);
      out[i].via.push_back(k < e->via.size() ? e->via[k] : std::string());
    }
  }
  return {};
}

Error FakeBackend::ChildrenAt(ElementId parent, const std::vector<int64_t>& indices, std::vector<ElementId>& out,
                              std::vector<Error>& errs, Clock::time_point deadline) {
  out.assign(indices.size(), 0);
  errs.assign(indices.size(), Error{});
  Error err;
  FakeElement* e = ReadOne(parent, deadline, err);
  if (!e) return err;
  for (size_t i = 0; i < indices.size(); i++) {
    if (indices[i] < 0 || static_cast<size_t>(indices[i]) >= e->children.size())
      errs[i] = {ErrorCode::kElementGone, "fake: no child at that index"};
    else
      out[i] = e->children[static_cast<size_t>(indices[i])] + 1;
  }
  return {};
}

Error FakeBackend::Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height,
                           Rect& captured, Clock::time_point) {
  if (!window.hasFrame || window.frame.w <= 0 || window.frame.h <= 0)
    return {ErrorCode::kCaptureFailed, "fake: the window has no frame"};
  width = static_cast<int>(std::lround(window.frame.w * script_.scale));
  height = static_cast<int>(std::lround(window.frame.h * script_.scale));
  rgba.resize(static_cast<size_t>(width) * height * 4);
  // A deterministic pattern with edges, so PNG sizes behave like a real UI.
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++) {
      uint8_t* p = &rgba[(static_cast<size_t>(y) * width + x) * 4];
      p[0] = static_cast<uint8_t>((x / 16) * 37);
      p[1] = static_cast<uint8_t>((y / 16) * 53);
      p[2] = static_cast<uint8_t>(((x ^ y) & 0x20) ? 200 : 40);
      p[3] = 255;
    }
  captured = window.frame;
  return {};
}

namespace {

bool Holds(const Rect& r, double x, double y) { return x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h; }

}  // namespace

Error FakeBackend::OcrReady(const std::vector<std::string>&) {
  // The fake answers in RecognizeText, whose log counts every request (ocrUnavailable included).
  return {};
}

Error FakeBackend::RecognizeText(const WindowInfo& window, const OcrImage&, const OcrOptions& options, OcrResult& out) {
  const FakeWindow* found = nullptr;
  for (const FakeApp& app : script_.apps)
    if (app.info.pid == window.pid)
      for (const FakeWindow& w : app.windows)
        if (w.root + 1 == window.element) found = &w;
  if (found && !found->readable && !script_.ocrUnavailable) {
    out.engine = "fake";
    out.lines.clear();
    return {};
  }
  Record("ocr " + std::to_string(window.pid) + " regions=" + std::to_string(options.regions.size()) +
         " blanks=" + std::to_string(options.blanks.size()) + (options.singleLine ? " singleLine" : ""));
  if (script_.ocrUnavailable)
    return {ErrorCode::kOcrUnavailable, "fake: no OCR engine",
            "install Tesseract: apt-get install tesseract-ocr tesseract-ocr-eng (tesseract-ocr-chi-sim for Chinese)"};
  if (!found) return {ErrorCode::kWindowNotFound, "fake: the observed window is gone"};
  if (found->captureFails) return {ErrorCode::kCaptureFailed, "fake: the window could not be captured"};
  out.engine = "fake";
  out.lines.clear();
  for (const OcrLine& line : found->ocr) {
    const double cx = line.frame.x + line.frame.w / 2, cy = line.frame.y + line.frame.h / 2;
    const bool inRegion = options.regions.empty() || std::any_of(options.regions.begin(), options.regions.end(),
                                                                 [&](const Rect& r) { return Holds(r, cx, cy); });
    const bool blanked =
        std::any_of(options.blanks.begin(), options.blanks.end(), [&](const Rect& r) { return Holds(r, cx, cy); });
    if (inRegion && !blanked && line.confidence >= kOcrMinConfidence) out.lines.push_back(line);
  }
  std::stable_sort(out.lines.begin(), out.lines.end(), [](const OcrLine& a, const OcrLine& b) {
    return a.frame.y != b.frame.y ? a.frame.y < b.frame.y : a.frame.x < b.frame.x;
  });
  out.ocrMs = 0;
  return {};
}

Error FakeBackend::DoAction(ElementId id, const std::string& name, Clock::time_point deadline) {
  FakeElement* e = Find(id);
  if (!e) return {ErrorCode::kElementGone, "fake: unknown element"};
  if (Error err = Touch(*e, deadline)) return err;
  if (std::find(e->attrs.actions.begin(), e->attrs.actions.end(), name) == e->attrs.actions.end())
    return {ErrorCode::kActionNotSupported, "fake: the element has no action " + name};
  Record("action " + std::to_string(id) + " " + name);
  Effect(*e, "object:state-changed");
  if (e->fault.holdsApp) {
    const int64_t pid = PidOf(static_cast<size_t>(e - script_.elements.data()));
    for (FakeApp& a : script_.apps)
      if (a.info.pid == pid) a.held = true;
  }
  return AfterSend(*e, deadline);
}

bool FakeBackend::Held(int64_t pid) const {
  for (const FakeApp& a : script_.apps)
    if (a.info.pid == pid && a.held) return true;
  return false;
}

void FakeBackend::Release(int64_t pid, bool input) {
  if (!input) return;
  for (FakeApp& a : script_.apps)
    if (a.info.pid == pid && a.held) {
      a.held = false;
      Record("released " + std::to_string(pid));
    }
}

Error FakeBackend::Toolkit(ElementId id, std::string& name, std::string& version, Clock::time_point deadline) {
  FakeElement* e = Find(id);
  if (!e) return {ErrorCode::kElementGone, "fake: unknown element"};
  if (Error err = Touch(*e, deadline)) return err;
  const int64_t pid = PidOf(static_cast<size_t>(e - script_.elements.data()));
  for (const FakeApp& a : script_.apps)
    if (a.info.pid == pid && !a.toolkit.empty()) {
      name = a.toolkit;
      version = a.toolkitVersion;
      return {};
    }
  return {ErrorCode::kActionNotSupported, "fake: the app names no toolkit"};
}

Error FakeBackend::SetText(ElementId id, const std::string& text, Clock::time_point deadline) {
  FakeElement* e = Find(id);
  if (!e) return {ErrorCode::kElementGone, "fake: unknown element"};
  if (Error err = Touch(*e, deadline)) return err;
  if (!e->attrs.settable) return {ErrorCode::kNotSettable, "fake: not settable"};
  if (!e->fault.ignoreSet) e->attrs.value = text;
  Record("setText " + std::to_string(id) + " " + text);
  if (!e->fault.ignoreSet) Effect(*e, "object:text-changed:insert");
  return AfterSend(*e, deadline);
}

Error FakeBackend::SetNumber(ElementId id, double value, Clock::time_point deadline) {
  FakeElement* e = Find(id);
  if (!e) return {ErrorCode::kElementGone, "fake: unknown element"};
  if (Error err = Touch(*e, deadline)) return err;
  if (!e->attrs.settable) return {ErrorCode::kNotSettable, "fake: not settable"};
  e->attrs.value = value;
  Record("setNumber " + std::to_string(id) + " " + std::to_string(value));
  Effect(*e, "object:property-change:accessible-value");
  return {};
}

Error FakeBackend::Focus(ElementId id, Clock::time_point deadline) {
  FakeElement* e = Find(id);
  if (!e) return {ErrorCode::kElementGone, "fake: unknown element"};
  if (Error err = Touch(*e, deadline)) return err;
  Record("focus " + std::to_string(id));
  if (e->fault.refuseFocus) return {};
  for (FakeElement& other : script_.elements)
    if (other.attrs.states.focused.value_or(false)) other.attrs.states.focused = false;
  e->attrs.states.focused = true;
  Effect(*e, "object:state-changed:focused");
  return {};
}

Error FakeBackend::Select(ElementId id, Clock::time_point deadline) {
  FakeElement* e = Find(id);
  if (!e) return {ErrorCode::kElementGone, "fake: unknown element"};
  if (Error err = Touch(*e, deadline)) return err;
  if (!e->attrs.states.selectable.value_or(false)) return {ErrorCode::kActionNotSupported, "fake: not selectable"};
  Record("select " + std::to_string(id));
  Effect(*e, "object:selection-changed");
  return {};
}

Error FakeBackend::InputWindow(const WindowInfo& window) {
  for (const FakeApp& app : script_.apps) {
    if (app.info.pid != window.pid) continue;
    for (const FakeWindow& w : app.windows)
      if (w.root + 1 == window.element && w.info.title == window.title) return {};
    return {ErrorCode::kWindowNotFound, "fake: the observed window is gone; nothing was sent"};
  }
  return {ErrorCode::kAppNotFound, "fake: the observed app is gone; nothing was sent"};
}

Error FakeBackend::AfterSend(const FakeElement& e, Clock::time_point deadline) {
  if (e.fault.actionHangMs <= 0) return {};
  const Clock::time_point until = Clock::now() + std::chrono::milliseconds(e.fault.actionHangMs);
  std::this_thread::sleep_until(std::min(until, deadline));
  if (Clock::now() >= deadline) return {ErrorCode::kAppUnresponsive, "fake: the app did not answer"};
  return {};
}

Error FakeBackend::Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) {
  if (Error err = InputWindow(window)) return err;
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "fake: deadline"};
  static const char* kinds[] = {"click", "wheel", "drag", "move"};
  Release(window.pid, ev.kind != PointerEvent::Kind::kMove);
  Record(std::string("pointer ") + kinds[static_cast<int>(ev.kind)] + " " + std::to_string(std::lround(ev.x)) + "," +
         std::to_string(std::lround(ev.y)) + " button=" + std::to_string(ev.button) +
         " count=" + std::to_string(ev.count));
  Emit(window.pid, "object:state-changed");
  return {};
}

Error FakeBackend::Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) {
  if (Error err = InputWindow(window)) return err;
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "fake: deadline"};
  Release(window.pid, true);
  Record("keys " + combo);
  Emit(window.pid, "object:state-changed");
  return {};
}

Error FakeBackend::TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline,
                            size_t& typed) {
  typed = 0;
  if (Error err = InputWindow(window)) return err;
  // One character at a time, like the real backends' chunks: the log holds what was typed before the deadline.
  std::string sent;
  for (size_t i = 0; i < text.size();) {
    if (Clock::now() >= deadline) {
      if (!sent.empty()) Record("type " + sent);
      return {ErrorCode::kTimeout, "fake: the deadline passed while typing"};
    }
    size_t len = 1;
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0xf0)
      len = 4;
    else if (c >= 0xe0)
      len = 3;
    else if (c >= 0xc0)
      len = 2;
    sent += text.substr(i, len);
    i += len;
    typed++;
    if (script_.typeMsPerChar > 0) std::this_thread::sleep_for(std::chrono::milliseconds(script_.typeMsPerChar));
  }
  Record("type " + sent);
  Emit(window.pid, "object:text-changed:insert");
  return {};
}

Error FakeBackend::FocusedElement(int64_t pid, ElementId& out, bool& found, Clock::time_point deadline) {
  found = false;
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "fake: deadline"};
  const FakeApp* app = nullptr;
  for (const FakeApp& a : script_.apps)
    if (a.info.pid == pid) app = &a;
  if (!app) return {ErrorCode::kAppNotFound, "fake: no such app"};
  if (app->held) return {ErrorCode::kAppUnresponsive, "fake: the app did not answer"};
  // Focus lives in the app's windows: search each window's tree for the focused element.
  for (const FakeWindow& w : app->windows) {
    std::vector<size_t> stack{w.root};
    while (!stack.empty()) {
      const size_t i = stack.back();
      stack.pop_back();
      if (i >= script_.elements.size()) continue;
      FakeElement& e = script_.elements[i];
      if (e.attrs.states.focused.value_or(false)) {
        if (Error err = Touch(e, deadline)) return err;
        out = i + 1;
        found = true;
        return {};
      }
      for (size_t c : e.children) stack.push_back(c);
    }
  }
  return {};
}

Error FakeBackend::ElementAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                                  std::vector<ElementId>& chain, Clock::time_point deadline) {
  chain.clear();
  if (Error err = InputWindow(window)) return err;
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "fake: deadline"};
  auto holds = [x, y](const FakeElement& e) {
    if (!e.attrs.frame || e.attrs.states.visible == false) return false;
    const Rect& f = *e.attrs.frame;
    return f.w > 0 && f.h > 0 && x >= f.x && y >= f.y && x < f.x + f.w && y < f.y + f.h;
  };
  std::vector<size_t> path{window.element - 1};
  if (path[0] >= script_.elements.size() || !holds(script_.elements[path[0]])) return {};
  for (;;) {
    FakeElement& at = script_.elements[path.back()];
    if (Error err = Touch(at, deadline)) return err;
    std::optional<size_t> next;
    for (size_t c : at.children)
      if (c < script_.elements.size() && holds(script_.elements[c]) &&
          std::find(path.begin(), path.end(), c) == path.end())
        next = c;
    if (!next) break;
    path.push_back(*next);
  }
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    chain.push_back(*it + 1);
    if (std::find(stopAt.begin(), stopAt.end(), *it + 1) != stopAt.end()) break;
  }
  return {};
}

Error FakeBackend::InsertText(ElementId id, const std::string& text, Clock::time_point deadline) {
  FakeElement* e = Find(id);
  if (!e) return {ErrorCode::kElementGone, "fake: unknown element"};
  if (Error err = Touch(*e, deadline)) return err;
  if (!e->attrs.settable || e->attrs.states.editable == false) return {ErrorCode::kNotSettable, "fake: not editable"};
  std::string* old = std::get_if<std::string>(&e->attrs.value);
  e->attrs.value = (old ? *old : std::string()) + text;
  Record("insert " + std::to_string(id) + " " + text);
  Effect(*e, "object:text-changed:insert");
  return AfterSend(*e, deadline);
}

void FakeBackend::Release(const std::vector<ElementId>& ids) {
  std::lock_guard<std::mutex> lock(logMutex_);
  released_.insert(released_.end(), ids.begin(), ids.end());
}

// ---------------------------------------------------------------------------
// Change events.

void FakeBackend::Replace(FakeScript script) {
  auto titles = [](const FakeApp& a) {
    std::vector<std::string> t;
    for (const FakeWindow& w : a.windows) t.push_back(w.info.title);
    return t;
  };
  std::map<int64_t, std::vector<std::string>> before;
  for (const FakeApp& a : script_.apps) before[a.info.pid] = titles(a);
  script_ = std::move(script);
  for (const FakeApp& a : script_.apps) {
    auto it = before.find(a.info.pid);
    const bool windows = it == before.end() || it->second != titles(a);
    Emit(a.info.pid, windows ? "window:create" : "object:children-changed", windows);
  }
}

void FakeBackend::Emit(int64_t pid, const std::string& kind, bool window) {
  if (pid <= 0) return;
  Events& ev = events_[pid];
  ev.stamp++;
  if (window) ev.windowStamp++;
  ev.any = true;
  ev.last = Clock::now();
  ev.recent.push_back(kind);
  while (ev.recent.size() > 16) ev.recent.pop_front();
}

void FakeBackend::Schedule(int64_t pid, Clock::time_point at, const std::string& kind, bool window) {
  if (pid <= 0) return;
  events_[pid].pending.emplace(at, std::make_pair(kind, window));
}

void FakeBackend::Deliver(Events& ev, Clock::time_point now) {
  while (!ev.pending.empty() && ev.pending.begin()->first <= now) {
    auto it = ev.pending.begin();
    ev.stamp++;
    if (it->second.second) ev.windowStamp++;
    ev.any = true;
    ev.last = it->first;  // when it happened, not when it was noticed
    ev.recent.push_back(it->second.first);
    while (ev.recent.size() > 16) ev.recent.pop_front();
    ev.pending.erase(it);
  }
}

int64_t FakeBackend::PidOf(size_t index) const {
  for (const FakeApp& a : script_.apps)
    for (const FakeWindow& w : a.windows) {
      std::vector<size_t> stack{w.root};
      std::vector<bool> seen(script_.elements.size(), false);
      while (!stack.empty()) {
        const size_t i = stack.back();
        stack.pop_back();
        if (i >= script_.elements.size() || seen[i]) continue;
        if (i == index) return a.info.pid;
        seen[i] = true;
        for (size_t c : script_.elements[i].children) stack.push_back(c);
      }
    }
  return 0;
}

void FakeBackend::Effect(const FakeElement& e, const std::string& kind) {
  const size_t index = static_cast<size_t>(&e - script_.elements.data());
  const int64_t pid = PidOf(index);
  if (pid <= 0) return;
  Emit(pid, kind);
  const Clock::time_point now = Clock::now();
  for (int k = 1; k <= e.fault.churnEvents; k++)
    Schedule(pid, now + std::chrono::milliseconds(static_cast<int64_t>(k) * std::max(0, e.fault.churnIntervalMs)),
             "object:property-change:accessible-name");
  if (e.fault.rebuildAfterMs > 0) {
    const Clock::time_point done = now + std::chrono::milliseconds(e.fault.rebuildAfterMs);
    Emit(pid, "object:children-changed:remove", true);
    events_[pid].rebuildUntil = done;
    Schedule(pid, done, "object:children-changed:add", true);
  }
}

bool FakeBackend::HalfBuilt(size_t index) {
  const Clock::time_point now = Clock::now();
  for (const FakeApp& a : script_.apps) {
    auto it = events_.find(a.info.pid);
    if (it == events_.end() || it->second.rebuildUntil <= now) continue;
    for (const FakeWindow& w : a.windows)
      if (w.root == index) return true;
  }
  return false;
}

Error FakeBackend::Watch(const AppInfo& app, Clock::time_point deadline) {
  if (script_.noEvents) return {ErrorCode::kActionNotSupported, "fake: this desktop reports no change events"};
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "fake: deadline"};
  for (const FakeApp& a : script_.apps)
    if (a.info.pid == app.pid) {
      events_[app.pid].watching = true;
      return {};
    }
  return {ErrorCode::kAppNotFound, "fake: no app with pid " + std::to_string(app.pid)};
}

Error FakeBackend::WaitEvents(int64_t pid, uint64_t sinceStamp, Clock::time_point until, AppEventState& out) {
  if (script_.noEvents) return {ErrorCode::kActionNotSupported, "fake: this desktop reports no change events"};
  auto it = events_.find(pid);
  if (it == events_.end() || !it->second.watching)
    return {ErrorCode::kInvalidArgument, "fake: not watching pid " + std::to_string(pid) + " (call watch first)"};
  Events& ev = it->second;
  for (;;) {
    const Clock::time_point now = Clock::now();
    Deliver(ev, now);
    if (ev.stamp > sinceStamp || now >= until) break;
    Clock::time_point wake = until;
    if (!ev.pending.empty()) wake = std::min(wake, ev.pending.begin()->first);
    std::this_thread::sleep_until(wake);
  }
  out.watching = true;
  out.stamp = ev.stamp;
  out.windowStamp = ev.windowStamp;
  out.msSinceLast = ev.any ? std::chrono::duration<double, std::milli>(Clock::now() - ev.last).count() : -1;
  out.recent.assign(ev.recent.begin(), ev.recent.end());
  for (const FakeApp& a : script_.apps)
    if (a.info.pid == pid) out.quietFloorMs = a.quietFloorMs;
  return {};
}

void FakeBackend::Unwatch(int64_t pid) {
  auto it = events_.find(pid);
  if (it != events_.end()) it->second.watching = false;
}

}  // namespace axsnap
