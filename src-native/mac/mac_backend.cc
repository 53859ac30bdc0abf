#include "mac_backend.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <thread>

#include "../core/secret_names.h"
#include "cf_convert.h"
#include "cg_input.h"

namespace axsnap {

namespace {

constexpr double kMessagingTimeoutS = 2.0;
constexpr size_t kMaxChildren = 10000;  // per attribute copy; the walk's node limit cuts long before
constexpr auto kChromiumWait = std::chrono::milliseconds(3000);
constexpr auto kChromiumPoll = std::chrono::milliseconds(100);
// Electron implements AXManualAccessibility (older versions answer
// kAXErrorAttributeUnsupported yet apply it): its web content is waited for
// this long before AXEnhancedUserInterface, which has side effects, is tried.
constexpr auto kElectronLook = std::chrono::milliseconds(1500);
// An app that refused one batched read is read one attribute at a time, and
// offered the batch again after this many elements or this long, whichever
// comes first: one refusal (a busy moment, one odd element) is not forever.
constexpr int kBatchRetryReads = 50;
constexpr auto kBatchRetryAfter = std::chrono::seconds(10);
constexpr auto kFrontWait = std::chrono::milliseconds(2000);  // activation is asynchronous (and may switch Spaces)
constexpr auto kFrontPoll = std::chrono::milliseconds(50);
// How far up AXParent a surface's window is looked for (a popover sits a few levels deep).
constexpr int kOwnerDepth = 12;
constexpr auto kCaptureFloor = std::chrono::milliseconds(1000);
constexpr CFIndex kMaxValueChars = 100000;  // UTF-16 units of a text value read; the renderer prints far less

// The attributes of one batched read, in slot order.
enum Slot {
  kRole,
  kSubrole,
  kRoleDescription,
  kTitle,
  kDescription,
  kHelp,
  kIdentifier,
  kURL,
  kPlaceholder,
  kEnabled,
  kFocused,
  kSelected,
  kExpanded,
  kDisclosing,
  kMinimized,
  kModal,
  kRequired,
  kOrientation,
  kPosition,
  kSize,
  kIndex,
  kCharCount,
  kTitleElement,
  kSlotCount
};

CFRef<CFArrayRef> BatchAttributes() {
  const void* names[kSlotCount] = {
      CFSTR("AXRole"),
      CFSTR("AXSubrole"),
      CFSTR("AXRoleDescription"),
      CFSTR("AXTitle"),
      CFSTR("AXDescription"),
      CFSTR("AXHelp"),
      CFSTR("AXIdentifier"),
      CFSTR("AXURL"),
      CFSTR("AXPlaceholderValue"),
      CFSTR("AXEnabled"),
      CFSTR("AXFocused"),
      CFSTR("AXSelected"),
      CFSTR("AXExpanded"),
      CFSTR("AXDisclosing"),
      CFSTR("AXMinimized"),
      CFSTR("AXModal"),
      CFSTR("AXRequired"),
      CFSTR("AXOrientation"),
      CFSTR("AXPosition"),
      CFSTR("AXSize"),
      CFSTR("AXIndex"),
      CFSTR("AXNumberOfCharacters"),
      CFSTR("AXTitleUIElement"),
  };
  return CFRef<CFArrayRef>::Adopt(CFArrayCreate(kCFAllocatorDefault, names, kSlotCount, &kCFTypeArrayCallBacks));
}

bool In(const std::string& role, std::initializer_list<const char*> roles) {
  for (const char* r : roles)
    if (role == r) return true;
  return false;
}

// Roles whose AXValue the model prints (a value read is one more IPC, so only these).
bool HasValue(const std::string& role) {
  return In(role, {"AXStaticText",         "AXTextField",      "AXTextArea",
                   "AXComboBox",           "AXCheckBox",       "AXRadioButton",
                   "AXPopUpButton",        "AXMenuButton",     "AXDisclosureTriangle",
                   "AXScrollBar",          "AXValueIndicator", "AXSplitter",
                   "AXRulerMarker",        "AXHeading",        "AXSlider",
                   "AXIncrementor",        "AXLevelIndicator", "AXProgressIndicator",
                   "AXRelevanceIndicator", "AXDateField",      "AXTimeField",
                   "AXColorWell",          "AXToggle",         "AXSwitch"});
}

// Roles whose AXValue may be settable (AXUIElementIsAttributeSettable is one more IPC).
bool MaySetValue(const std::string& role) {
  return In(role, {"AXTextField", "AXTextArea", "AXComboBox", "AXSlider", "AXScrollBar", "AXValueIndicator",
                   "AXSplitter", "AXRulerMarker", "AXIncrementor", "AXDateField", "AXTimeField", "AXColorWell"});
}

bool IsTextRole(const std::string& role) { return In(role, {"AXTextField", "AXTextArea", "AXComboBox"}); }

std::string Str(CFTypeRef v) { return CFToString(v).value_or(std::string()); }

// Errors that say something about the element or the app, not the attribute:
// the element is gone, the app did not answer, or we may not ask. Any other
// error on an optional attribute means "absent": many apps answer an
// attribute they do not implement with kAXErrorFailure or IllegalArgument.
bool Fatal(AXError e) {
  return e == kAXErrorInvalidUIElement || e == kAXErrorCannotComplete || e == kAXErrorAPIDisabled;
}

// After a perform or a set was sent: apps often answer with an error although
// they acted (an AXPress that opens a modal answers kAXErrorCannotComplete
// when the modal returns; AppKit controls answer kAXErrorFailure after
// pressing). Only errors that prove nothing was done are failures; the rest
// are "delivered, uncertain", which must never lead to a second attempt.
Error AfterDelivery(AXError e, const std::string& what) {
  if (e == kAXErrorSuccess) return {};
  if (e == kAXErrorInvalidUIElement || e == kAXErrorIllegalArgument || e == kAXErrorAPIDisabled)
    return AXFailure(e, what);
  return {ErrorCode::kDeliveryUncertain, what + " was sent; the app answered " + AXErrorName(e)};
}

// The attributes `names` of one element: one batched call; a failed slot (an
// AXValue wrapping an AXError) is left null with its error. A batch the app
// refuses as a whole with a non-fatal error (apps that do not implement it)
// is read one attribute at a time. `values` and `singles` own what `slots`
// points to.
struct Attributes {
  std::vector<CFTypeRef> slots;
  std::vector<AXError> errors;
  CFRef<CFArrayRef> values;
  std::vector<CFAny> singles;
  bool batchRefused = false;  // the app refused the batched call: skip it next time
};

Error ReadAttributes(AXUIElementRef el, CFArrayRef names, bool tryBatch, Attributes& a) {
  const CFIndex n = CFArrayGetCount(names);
  a.slots.assign(static_cast<size_t>(n), nullptr);
  a.errors.assign(static_cast<size_t>(n), kAXErrorSuccess);
  const AXError e =
      tryBatch ? AXUIElementCopyMultipleAttributeValues(el, names, 0, a.values.OutParam()) : kAXErrorNotImplemented;
  if (e == kAXErrorSuccess && a.values && CFArrayGetCount(a.values.get()) == n) {
    for (CFIndex i = 0; i < n; i++) {
      CFTypeRef v = CFArrayGetValueAtIndex(a.values.get(), i);
      if (!IsAXErrorValue(v, &a.errors[i])) a.slots[i] = v;
    }
    return {};
  }
  if (e != kAXErrorSuccess && Fatal(e)) return AXFailure(e, "reading an element");
  a.batchRefused = tryBatch;
  a.singles.resize(static_cast<size_t>(n));
  for (CFIndex i = 0; i < n; i++) {
    CFStringRef name = static_cast<CFStringRef>(CFArrayGetValueAtIndex(names, i));
    a.errors[i] = AXUIElementCopyAttributeValue(el, name, a.singles[i].OutParam());
    if (a.errors[i] == kAXErrorSuccess)
      a.slots[i] = a.singles[i].get();
    else if (Fatal(a.errors[i]))
      return AXFailure(a.errors[i], "reading an element");
  }
  return {};
}

Clock::time_point Sooner(Clock::time_point a, Clock::time_point b) { return a < b ? a : b; }

bool PathExists(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

// A pass that drains what is pending handles at most this many notifications.
constexpr int kDrainMax = 4096;

// Dispatches what the observers' ports hold (on the calling thread's run
// loop, where Watch put their sources), bounded. A run loop without sources
// returns at once.
void DrainRunLoop() {
  for (int i = 0; i < kDrainMax; i++)
    if (CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, true) != kCFRunLoopRunHandledSource) break;
}

// The web engine an app carries. Chromium and Electron apps carry theirs as
// a framework in the bundle; so do apps built on the Chromium Embedded
// Framework (Spotify), and NW.js apps. A few CEF apps keep the framework
// elsewhere (Steam's lives in a bundle under Application Support): those are
// known by bundle id.
enum class WebEngine { kNone, kChromium, kElectron };

WebEngine EngineOf(const std::string& bundlePath, const std::string& bundleId) {
  static const char* kElectronFrameworks[] = {"Electron Framework", "nwjs Framework"};
  static const char* kChromiumFrameworks[] = {
      "Chromium Embedded Framework", "Chromium Framework", "Google Chrome Framework", "Microsoft Edge Framework",
      "Brave Browser Framework",     "Vivaldi Framework",  "Opera Framework",         "Arc Framework"};
  static const char* kCefBundleIds[] = {"com.spotify.client", "com.valvesoftware.steam"};
  if (!bundlePath.empty()) {
    for (const char* f : kElectronFrameworks)
      if (PathExists(bundlePath + "/Contents/Frameworks/" + f + ".framework")) return WebEngine::kElectron;
    for (const char* f : kChromiumFrameworks)
      if (PathExists(bundlePath + "/Contents/Frameworks/" + f + ".framework")) return WebEngine::kChromium;
  }
  for (const char* id : kCefBundleIds)
    if (bundleId == id) return WebEngine::kChromium;
  return WebEngine::kNone;
}

}  // namespace

// ---------------------------------------------------------------- ElementTable

ElementId ElementTable::Intern(AXUIElementRef element) {
  if (!element) return 0;
  const CFHashCode hash = CFHash(element);
  auto range = byHash_.equal_range(hash);
  for (auto it = range.first; it != range.second; ++it) {
    auto e = entries_.find(it->second);
    if (e != entries_.end() && CFEqual(e->second.ref.get(), element)) {
      // Whoever interned it now holds the handle, or releases it again.
      e->second.released = false;
      return it->second;
    }
  }
  const ElementId id = next_++;
  Entry entry;
  entry.ref = CFRef<AXUIElementRef>::Retain(element);
  entry.hash = hash;
  entries_.emplace(id, std::move(entry));
  byHash_.emplace(hash, id);
  return id;
}

ElementId ElementTable::Find(AXUIElementRef element) const {
  if (!element) return 0;
  auto range = byHash_.equal_range(CFHash(element));
  for (auto it = range.first; it != range.second; ++it) {
    auto e = entries_.find(it->second);
    if (e != entries_.end() && CFEqual(e->second.ref.get(), element)) return it->second;
  }
  return 0;
}

AXUIElementRef ElementTable::Get(ElementId id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.ref.get();
}

void ElementTable::Remember(ElementId id, const std::string& role, const std::string& subrole, bool secure) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  it->second.role = role;
  it->second.subrole = subrole;
  it->second.secure = secure;
}

const std::string* ElementTable::Role(ElementId id) const {
  auto it = entries_.find(id);
  return it == entries_.end() || it->second.role.empty() ? nullptr : &it->second.role;
}

bool ElementTable::IsSecure(ElementId id) const {
  auto it = entries_.find(id);
  return it != entries_.end() && (it->second.secure || it->second.subrole == "AXSecureTextField");
}

void ElementTable::Release(ElementId id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (it->second.pins > 0) {
    it->second.released = true;
    return;
  }
  Erase(it);
}

void ElementTable::Pin(ElementId id) {
  auto it = entries_.find(id);
  if (it != entries_.end()) it->second.pins++;
}

void ElementTable::Unpin(ElementId id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.pins == 0) return;
  if (--it->second.pins == 0 && it->second.released) Erase(it);
}

void ElementTable::Erase(std::unordered_map<ElementId, Entry>::iterator it) {
  const ElementId id = it->first;
  auto range = byHash_.equal_range(it->second.hash);
  for (auto h = range.first; h != range.second; ++h)
    if (h->second == id) {
      byHash_.erase(h);
      break;
    }
  entries_.erase(it);
}

// ---------------------------------------------------------------- MacBackend

MacBackend::MacBackend(std::unique_ptr<MacSystem> system) : system_(std::move(system)) {}

MacBackend::~MacBackend() {
  // Observers go first: their callbacks point at this backend.
  while (!watched_.empty()) Unwatch(watched_.begin()->first);
  // AXEnhancedUserInterface changes how the app animates and places its
  // windows: it is turned off again when this backend goes away.
  for (int64_t pid : enhanced_)
    if (AXUIElementRef app = AppElement(pid)) {
      AXUIElementSetMessagingTimeout(app, 0.5f);
      AXUIElementSetAttributeValue(app, CFSTR("AXEnhancedUserInterface"), kCFBooleanFalse);
    }
}

// One autorelease pool per worker job: the worker thread lives as long as the
// backend and has no pool of its own, so whatever AppKit, ScreenCaptureKit or
// CoreFoundation autoreleases inside a job would pile up until the thread
// ends. The pop holds the system by shared_ptr: the closing job destroys this
// backend before its pool is popped.
//
// The observers' notifications are dispatched at both ends of the job too
// (review 2, N10): otherwise they would wait in the observer's port for the
// next WaitEvents, however long the agent paused, and be counted as if they
// had just happened. The end step needs no backend: a backend the job
// destroyed removed its observers' sources, so that drain finds nothing.
std::function<void()> MacBackend::BeginJob() {
  std::shared_ptr<MacSystem> system = system_;
  void* pool = system->PushAutoreleasePool();
  DrainRunLoop();
  return [system, pool] {
    DrainRunLoop();
    system->PopAutoreleasePool(pool);
  };
}

Error MacBackend::Trusted() const {
  if (AXIsProcessTrusted()) return {};
  return {ErrorCode::kPermissionDenied,
          "this process is not trusted for Accessibility: turn on the app that runs it in System Settings > Privacy & "
          "Security > Accessibility"};
}

// Trust is checked by every ListApps (so a grant made later takes effect), not
// here: permissions() must work on a backend of a process that is not trusted.
Error MacBackend::Connect() {
  SystemWide();
  return {};
}

AXUIElementRef MacBackend::SystemWide() {
  if (!systemWide_) {
    systemWide_ = CFRef<AXUIElementRef>::Adopt(AXUIElementCreateSystemWide());
    // The system-wide element's timeout is the global one: every reference
    // without its own uses it. Set once, never shortened by a deadline.
    AXUIElementSetMessagingTimeout(systemWide_.get(), static_cast<float>(kMessagingTimeoutS));
  }
  return systemWide_.get();
}

void MacBackend::SetTimeoutFor(AXUIElementRef element, Clock::time_point deadline) {
  const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
  // Never longer than the snapshot has left; never zero, which on an element
  // means "use the current global timeout" (2 s here), not "no time".
  const float seconds = static_cast<float>(std::max(0.05, std::min(kMessagingTimeoutS, left)));
  AXUIElementSetMessagingTimeout(element, seconds);
}

AXUIElementRef MacBackend::AppElement(int64_t pid) {
  auto it = apps_.find(pid);
  if (it != apps_.end()) return it->second.get();
  CFRef<AXUIElementRef> app = CFRef<AXUIElementRef>::Adopt(AXUIElementCreateApplication(static_cast<pid_t>(pid)));
  if (!app) return nullptr;
  AXUIElementSetMessagingTimeout(app.get(), static_cast<float>(kMessagingTimeoutS));
  AXUIElementRef raw = app.get();
  apps_.emplace(pid, std::move(app));
  return raw;
}

Error MacBackend::CopyAttribute(AXUIElementRef element, CFStringRef attribute, CFAny& out) {
  const AXError e = AXUIElementCopyAttributeValue(element, attribute, out.OutParam());
  if (e == kAXErrorSuccess) return {};
  out.reset();
  // Missing is not an error for a reader: the caller sees an empty value.
  if (!Fatal(e)) return {};
  return AXFailure(e, "reading " + Str(attribute));
}

Error MacBackend::ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) {
  if (Error err = Trusted()) return err;
  std::vector<RunningApp> running;
  if (Error err = system_->RunningApps(running)) return err;
  running_.clear();
  // State of processes that are gone goes too: a pid can be reused by another app.
  std::set<int64_t> alive;
  for (const RunningApp& r : running) alive.insert(r.pid);
  auto prune = [&](auto& map) {
    for (auto it = map.begin(); it != map.end();) it = alive.count(it->first) ? std::next(it) : map.erase(it);
  };
  // A watched app that quit: its observer goes (the pid may come back as another app).
  std::vector<int64_t> gone;
  for (const auto& w : watched_)
    if (!alive.count(w.first)) gone.push_back(w.first);
  for (int64_t pid : gone) Unwatch(pid);
  // Its windows' pins go too: their elements are dead.
  gone.clear();
  for (const auto& p : pins_)
    if (!alive.count(p.first)) gone.push_back(p.first);
  for (int64_t pid : gone) UnpinApp(pid);
  prune(apps_);
  prune(manualAccessibility_);
  prune(noBatch_);
  for (std::set<int64_t>* set : {&chromiumReady_, &enhanced_})
    for (auto it = set->begin(); it != set->end();) it = alive.count(*it) ? std::next(it) : set->erase(it);
  // Apps with a Dock icon first: a name shared with a helper process finds the app people mean.
  std::stable_sort(running.begin(), running.end(),
                   [](const RunningApp& a, const RunningApp& b) { return a.regular && !b.regular; });
  for (const RunningApp& r : running) {
    AppInfo info;
    info.name = r.name;
    info.bundleId = r.bundleId;
    info.pid = r.pid;
    info.element = elements_.Intern(AppElement(r.pid));
    out.push_back(info);
    running_[r.pid] = r;
  }
  return {};
}

Error MacBackend::FocusedApp(AppInfo& out, bool& found, Clock::time_point deadline) {
  found = false;
  CFAny app;
  if (Error err = CopyAttribute(SystemWide(), CFSTR("AXFocusedApplication"), app)) return err;
  if (!IsElement(app.get())) return {};
  pid_t pid = 0;
  if (AXUIElementGetPid(static_cast<AXUIElementRef>(app.get()), &pid) != kAXErrorSuccess) return {};
  out.pid = pid;
  out.element = elements_.Intern(AppElement(pid));
  auto it = running_.find(pid);
  if (it != running_.end()) {
    out.name = it->second.name;
    out.bundleId = it->second.bundleId;
  }
  found = true;
  return {};
}

Error MacBackend::WindowInfoOf(AXUIElementRef window, int64_t pid, WindowInfo& out, std::string* subrole) {
  static const int kN = 8;
  const void* names[kN] = {CFSTR("AXRole"),     CFSTR("AXSubrole"), CFSTR("AXTitle"), CFSTR("AXMinimized"),
                           CFSTR("AXPosition"), CFSTR("AXSize"),    CFSTR("AXMain"),  CFSTR("AXFocused")};
  CFRef<CFArrayRef> attrs =
      CFRef<CFArrayRef>::Adopt(CFArrayCreate(kCFAllocatorDefault, names, kN, &kCFTypeArrayCallBacks));
  Attributes read;
  if (Error err = ReadAttributes(window, attrs.get(), /*tryBatch=*/true, read)) {
    if (err.code == ErrorCode::kElementGone) return {ErrorCode::kElementGone, "the window closed"};
    return err;
  }
  if (Fatal(read.errors[0])) return AXFailure(read.errors[0], "reading a window");
  auto slot = [&](int i) -> CFTypeRef { return read.slots[static_cast<size_t>(i)]; };
  out.element = elements_.Intern(window);
  out.pid = pid;
  out.role = Str(slot(0));
  out.title = Str(slot(2));
  out.minimized = CFToBool(slot(3)).value_or(false);
  std::optional<CGPoint> pos = CFToPoint(slot(4));
  std::optional<CGSize> size = CFToSize(slot(5));
  if (pos && size) {
    out.frame = {pos->x, pos->y, size->width, size->height};
    out.hasFrame = true;
  }
  out.active = CFToBool(slot(6)).value_or(false) || CFToBool(slot(7)).value_or(false);
  // A window whose role could not be read is not taken for a window.
  if (out.role.empty()) out.role = "AXUnknown";
  elements_.Remember(out.element, out.role, Str(slot(1)));
  if (subrole) *subrole = Str(slot(1));
  return {};
}

Error MacBackend::AppWindows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline,
                             std::vector<std::string>* subroles) {
  AXUIElementRef appEl = AppElement(app.pid);
  if (!appEl) return {ErrorCode::kAppNotFound, "cannot reach pid " + std::to_string(app.pid)};
  SetTimeoutFor(appEl, deadline);
  // A hidden app's windows are in AXWindows but nowhere on screen. Asked of
  // AX: NSRunningApplication.hidden is stale without a main run loop.
  CFAny hidden;
  if (Error err = CopyAttribute(appEl, CFSTR("AXHidden"), hidden)) return err;
  const bool appHidden = CFToBool(hidden.get()).value_or(false);
  CFAny windows;
  if (Error err = CopyAttribute(appEl, CFSTR("AXWindows"), windows)) return err;
  // No list (an app without windows answers an empty one) says nothing of the
  // windows pinned: they keep their pins until a list leaves them out.
  if (!windows || CFGetTypeID(windows.get()) != CFArrayGetTypeID()) return {};
  CFArrayRef list = static_cast<CFArrayRef>(windows.get());
  std::set<ElementId> found;
  for (CFIndex i = 0; i < CFArrayGetCount(list); i++) {
    CFTypeRef w = CFArrayGetValueAtIndex(list, i);
    if (!IsElement(w)) continue;
    SetTimeoutFor(static_cast<AXUIElementRef>(w), deadline);
    WindowInfo info;
    std::string subrole;
    Error err = WindowInfoOf(static_cast<AXUIElementRef>(w), app.pid, info, &subrole);
    if (err.code == ErrorCode::kElementGone) continue;  // closed between the list and the read
    if (err) return err;
    // A window of no size is a placeholder some apps keep, not a window to show.
    info.visible = !appHidden && !(info.hasFrame && (info.frame.w < 1 || info.frame.h < 1));
    found.insert(info.element);
    out.push_back(std::move(info));
    if (subroles) subroles->push_back(std::move(subrole));
  }
  // The whole AXWindows list was read: a window it no longer holds has closed.
  Repin(pins_[app.pid].windows, found, /*complete=*/true);
  return {};
}

void MacBackend::Repin(std::set<ElementId>& pinned, const std::set<ElementId>& found, bool complete) {
  for (ElementId id : found)
    if (pinned.insert(id).second) elements_.Pin(id);
  if (!complete) return;
  for (auto it = pinned.begin(); it != pinned.end();) {
    if (found.count(*it)) {
      ++it;
      continue;
    }
    elements_.Unpin(*it);
    it = pinned.erase(it);
  }
}

void MacBackend::UnpinApp(int64_t pid) {
  auto it = pins_.find(pid);
  if (it == pins_.end()) return;
  Repin(it->second.windows, {}, /*complete=*/true);
  Repin(it->second.surfaces, {}, /*complete=*/true);
  pins_.erase(it);
}

// Every surface an agent may face: the app's windows, with dialogs, system
// dialogs and floating windows named by their subrole, then the sheets and
// popovers inside them and the open menus. Only AppWindows feeds window
// choice: a listed sheet or menu is never chosen as the main window.
Error MacBackend::Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  const size_t first = out.size();
  std::vector<std::string> subroles;
  if (Error err = AppWindows(app, out, deadline, &subroles)) return err;
  for (size_t i = 0; i < subroles.size() && first + i < out.size(); i++) {
    WindowInfo& w = out[first + i];
    if (w.role == "AXWindow" &&
        In(subroles[i], {"AXDialog", "AXSystemDialog", "AXFloatingWindow", "AXSystemFloatingWindow"}))
      w.role = subroles[i];
  }
  Surfaces(app, out, deadline);
  return {};
}

namespace {

// The title a surface is listed under: its own, else its parent's and its role.
std::string SurfaceTitle(const std::string& own, const std::string& parent, const std::string& role) {
  if (!own.empty()) return own;
  return parent.empty() ? role : parent + " / " + role;
}

}  // namespace

void MacBackend::Surfaces(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  AXUIElementRef appEl = AppElement(app.pid);
  if (!appEl) return;
  std::set<ElementId> listed, surfaces;
  for (const WindowInfo& w : out) listed.insert(w.element);
  // Best effort: a surface that cannot be read (closed meanwhile, an app that
  // stopped answering) is left out; the windows are already listed.
  auto roleOf = [&](AXUIElementRef el) {
    CFAny role;
    return CopyAttribute(el, CFSTR("AXRole"), role) ? std::string() : Str(role.get());
  };
  auto add = [&](AXUIElementRef el, const std::string& parentTitle, bool parentVisible) {
    SetTimeoutFor(el, deadline);
    WindowInfo info;
    if (WindowInfoOf(el, app.pid, info)) return;
    if (!listed.insert(info.element).second) return;
    surfaces.insert(info.element);
    info.title = SurfaceTitle(info.title, parentTitle, info.role);
    info.visible = parentVisible && !(info.hasFrame && (info.frame.w < 1 || info.frame.h < 1));
    out.push_back(std::move(info));
  };
  // The elements of an array attribute of `el` (up to 256).
  auto elementsOf = [&](AXUIElementRef el, CFStringRef attr) {
    std::vector<CFRef<AXUIElementRef>> found;
    CFAny list;
    if (Clock::now() >= deadline || CopyAttribute(el, attr, list) || !list ||
        CFGetTypeID(list.get()) != CFArrayGetTypeID())
      return found;
    CFArrayRef items = static_cast<CFArrayRef>(list.get());
    for (CFIndex i = 0; i < std::min<CFIndex>(CFArrayGetCount(items), 256); i++) {
      CFTypeRef item = CFArrayGetValueAtIndex(items, i);
      if (IsElement(item)) found.push_back(CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(item)));
    }
    return found;
  };

  // Sheets and popovers: children of the windows listed.
  const size_t windows = out.size();
  for (size_t i = 0; i < windows && Clock::now() < deadline; i++) {
    if (out[i].minimized) continue;
    AXUIElementRef w = elements_.Get(out[i].element);
    if (!w) continue;
    const std::string parentTitle = out[i].title;
    const bool parentVisible = out[i].visible;
    for (CFRef<AXUIElementRef>& child : elementsOf(w, CFSTR("AXChildren"))) {
      if (Clock::now() >= deadline) break;
      SetTimeoutFor(child.get(), deadline);
      const std::string role = roleOf(child.get());
      if (role == "AXSheet" || role == "AXPopover") add(child.get(), parentTitle, parentVisible);
    }
  }

  // Menus: a context menu or popover is a child of the application element
  // while it is open; a menu bar menu is open when its item is selected; a
  // pop-up button's menu holds the focus while it is open.
  const bool appVisible = std::any_of(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(windows),
                                      [](const WindowInfo& w) { return w.visible; }) ||
                          windows == 0;
  SetTimeoutFor(appEl, deadline);
  for (CFRef<AXUIElementRef>& child : elementsOf(appEl, CFSTR("AXChildren"))) {
    if (Clock::now() >= deadline) break;
    SetTimeoutFor(child.get(), deadline);
    const std::string role = roleOf(child.get());
    if (role == "AXMenu" || role == "AXPopover") add(child.get(), app.name, appVisible);
  }
  CFAny bar;
  if (Clock::now() < deadline && !CopyAttribute(appEl, CFSTR("AXMenuBar"), bar) && IsElement(bar.get())) {
    AXUIElementRef barEl = static_cast<AXUIElementRef>(bar.get());
    SetTimeoutFor(barEl, deadline);
    for (CFRef<AXUIElementRef>& item : elementsOf(barEl, CFSTR("AXChildren"))) {
      if (Clock::now() >= deadline) break;
      SetTimeoutFor(item.get(), deadline);
      CFAny selected;
      if (CopyAttribute(item.get(), CFSTR("AXSelected"), selected) || !CFToBool(selected.get()).value_or(false))
        continue;
      CFAny title;
      CopyAttribute(item.get(), CFSTR("AXTitle"), title);
      for (CFRef<AXUIElementRef>& menu : elementsOf(item.get(), CFSTR("AXChildren"))) {
        SetTimeoutFor(menu.get(), deadline);
        if (roleOf(menu.get()) == "AXMenu") add(menu.get(), Str(title.get()), true);
      }
    }
  }
  CFAny focused;
  if (Clock::now() < deadline && !CopyAttribute(appEl, CFSTR("AXFocusedUIElement"), focused) &&
      IsElement(focused.get())) {
    CFRef<AXUIElementRef> el = CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(focused.get()));
    // Up from a focused menu item to its menu, a few levels at most.
    for (int depth = 0; depth < 4 && el && Clock::now() < deadline; depth++) {
      SetTimeoutFor(el.get(), deadline);
      const std::string role = roleOf(el.get());
      if (role == "AXMenu") {
        add(el.get(), app.name, true);
        break;
      }
      if (role != "AXMenuItem") break;
      CFAny parent;
      if (CopyAttribute(el.get(), CFSTR("AXParent"), parent) || !IsElement(parent.get())) break;
      el = CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(parent.get()));
    }
  }
  // Pinned as the windows are; a pass the deadline cut short unpins nothing
  // it may not have got to.
  Repin(pins_[app.pid].surfaces, surfaces, Clock::now() < deadline);
}

Error MacBackend::GatherWindows(const AppInfo& app, WindowCandidates& c, Clock::time_point deadline) {
  // Windows only: sheets, menus and popovers are never the window a snapshot
  // chooses by itself (and listing them costs IPCs every snapshot).
  if (Error err = AppWindows(app, c.appWindows, deadline)) return err;
  // One window of the app as a candidate; a window that closed meanwhile is none.
  auto asWindow = [&](AXUIElementRef w, std::optional<WindowInfo>& out) -> Error {
    SetTimeoutFor(w, deadline);
    WindowInfo info;
    Error err = WindowInfoOf(w, app.pid, info);
    if (err.code == ErrorCode::kElementGone) return {};
    if (err) return err;
    // Hidden or not is the app's, as the window list has it.
    for (const WindowInfo& listed : c.appWindows)
      if (listed.element == info.element) info.visible = listed.visible;
    out = info;
    return {};
  };
  // The window an attribute of `el` names (AXFocusedWindow, AXWindow).
  auto windowAttr = [&](AXUIElementRef el, CFStringRef attr, std::optional<WindowInfo>& out) -> Error {
    CFAny w;
    if (Error err = CopyAttribute(el, attr, w)) return err;
    if (!IsElement(w.get())) return {};
    return asWindow(static_cast<AXUIElementRef>(w.get()), out);
  };
  if (Error err = windowAttr(AppElement(app.pid), CFSTR("AXFocusedWindow"), c.appFocused)) return err;

  AppInfo focused;
  bool haveFocused = false;
  if (Error err = FocusedApp(focused, haveFocused, deadline)) return err;
  c.targetIsFocusedApp = haveFocused && focused.pid == app.pid;
  if (!c.targetIsFocusedApp) return {};
  c.focusedAppFocused = c.appFocused;
  c.focusedAppWindows = c.appWindows;
  // The system-wide focused element's window: what has keyboard focus right now.
  CFAny element;
  if (Error err = CopyAttribute(SystemWide(), CFSTR("AXFocusedUIElement"), element)) return err;
  if (IsElement(element.get())) {
    AXUIElementRef el = static_cast<AXUIElementRef>(element.get());
    SetTimeoutFor(el, deadline);
    pid_t pid = 0;
    if (AXUIElementGetPid(el, &pid) == kAXErrorSuccess && pid == app.pid) {
      CFAny role;
      if (Error err = CopyAttribute(el, CFSTR("AXRole"), role)) return err;
      if (Str(role.get()) == "AXWindow") {
        // Focus on a window that cannot be read is no input: the chain goes on without it.
        asWindow(el, c.systemFocused);
      } else if (Error err = windowAttr(el, CFSTR("AXWindow"), c.systemFocused)) {
        return err;
      }
    }
  }
  return {};
}

Error MacBackend::ReadOne(ElementId id, AXUIElementRef el, int64_t pid, NodeAttributes& a, Clock::time_point deadline) {
  // One batched read; a failed slot holds an AXValue wrapping an AXError,
  // not the value. A batch the app refuses as a whole (kAXErrorFailure and
  // the like, from apps that do not implement it) is read one attribute at a
  // time instead.
  Attributes read;
  // An app that refused a batched read is read one attribute at a time for a
  // while (~22 calls per element, instead of a wasted batch call before
  // them), then offered the batch again (kBatchRetryReads, kBatchRetryAfter).
  bool tryBatch = true;
  auto refused = noBatch_.find(pid);
  if (refused != noBatch_.end())
    tryBatch = ++refused->second.skipped > kBatchRetryReads || Clock::now() - refused->second.since >= kBatchRetryAfter;
  if (Error err = ReadAttributes(el, batch_.get(), tryBatch, read)) return err;
  if (read.batchRefused)
    noBatch_[pid] = NoBatch{Clock::now(), 0};
  else if (tryBatch)
    noBatch_.erase(pid);
  const std::vector<AXError>& errors = read.errors;
  if (Fatal(errors[kRole])) return AXFailure(errors[kRole], "reading an element");
  auto slot = [&](int i) -> CFTypeRef { return read.slots[static_cast<size_t>(i)]; };

  a.role = Str(slot(kRole));
  if (a.role.empty()) a.role = "AXUnknown";
  // Empty strings are kept as read: an empty AXRoleDescription is how an
  // element asks not to be announced by role, and the renderer honours it.
  auto opt = [&](int i) -> std::optional<std::string> { return CFToString(slot(i)); };
  a.subrole = opt(kSubrole);
  a.roleDescription = opt(kRoleDescription);
  a.title = opt(kTitle);
  a.description = opt(kDescription);
  a.help = opt(kHelp);
  a.identifier = opt(kIdentifier);
  a.url = opt(kURL);
  a.placeholder = opt(kPlaceholder);
  a.orientation = opt(kOrientation);
  if (a.orientation) {
    // AXVerticalOrientation → vertical, as the model spells it.
    if (*a.orientation == "AXVerticalOrientation")
      a.orientation = "vertical";
    else if (*a.orientation == "AXHorizontalOrientation")
      a.orientation = "horizontal";
    else
      a.orientation.reset();
  }
  if (std::optional<bool> b = CFToBool(slot(kEnabled)); b && !*b) a.states.enabled = false;
  if (std::optional<bool> b = CFToBool(slot(kFocused)); b && *b) a.states.focused = true;
  if (std::optional<bool> b = CFToBool(slot(kSelected)); b && *b) a.states.selected = true;
  if (std::optional<bool> b = CFToBool(slot(kExpanded)))
    a.states.expanded = *b;
  else if (std::optional<bool> d = CFToBool(slot(kDisclosing)); d && a.role == "AXRow")
    a.states.expanded = *d;
  if (std::optional<bool> b = CFToBool(slot(kMinimized)); b && *b) a.states.minimized = true;
  if (std::optional<bool> b = CFToBool(slot(kModal)); b && *b) a.states.modal = true;
  if (std::optional<bool> b = CFToBool(slot(kRequired)); b && *b) a.states.required = true;
  std::optional<CGPoint> pos = CFToPoint(slot(kPosition));
  std::optional<CGSize> size = CFToSize(slot(kSize));
  if (pos && size) a.frame = Rect{pos->x, pos->y, size->width, size->height};
  if (std::optional<double> n = CFToNumber(slot(kIndex)); n && a.role == "AXRow") a.rowIndex = static_cast<int64_t>(*n);
  if (std::optional<double> n = CFToNumber(slot(kCharCount))) a.charCount = static_cast<int64_t>(*n);
  // A control with no title or description of its own is named by the static
  // text its AXTitleUIElement points at (a form's label), as VoiceOver does:
  // the label's text becomes the title, its handle `labelledBy`, so the
  // renderer need not print the label again. In the batch; one more read only
  // for such a control.
  if (IsElement(slot(kTitleElement)) && (!a.title || a.title->empty()) && (!a.description || a.description->empty())) {
    AXUIElementRef label = static_cast<AXUIElementRef>(const_cast<void*>(slot(kTitleElement)));
    SetTimeoutFor(label, deadline);
    // A label that cannot be read leaves the name empty: never the control's error.
    for (CFStringRef attr : {CFSTR("AXValue"), CFSTR("AXTitle")}) {
      CFAny text;
      if (AXUIElementCopyAttributeValue(label, attr, text.OutParam()) != kAXErrorSuccess) continue;
      std::optional<std::string> s = CFToString(text.get());
      if (!s || s->find_first_not_of(" \t\n") == std::string::npos) continue;
      a.title = *s;
      a.labelledBy.push_back(elements_.Intern(label));
      break;
    }
  }

  // Secure text fields. A positive sign makes a field secure: the subrole
  // AXSecureTextField, the role description "secure text field", or (below)
  // a value read the app refuses. A subrole answered with kAXErrorFailure or
  // kAXErrorIllegalArgument is one the app does not implement (many apps
  // answer unimplemented attributes so): absent, no sign either way. A
  // subrole that could not be read for another reason (a slot the app did
  // not answer) proves nothing: that field is kept secure, to be safe.
  const AXError subroleError = slot(kSubrole) ? kAXErrorSuccess : errors[kSubrole];
  const bool textField = a.role == "AXTextField" || a.role == "AXComboBox";
  const bool subroleUnimplemented = subroleError == kAXErrorFailure || subroleError == kAXErrorIllegalArgument;
  const bool subroleUnknown = subroleError != kAXErrorSuccess && subroleError != kAXErrorNoValue &&
                              subroleError != kAXErrorAttributeUnsupported && !subroleUnimplemented;
  bool secure = (a.subrole && *a.subrole == "AXSecureTextField") ||
                (textField && a.roleDescription && *a.roleDescription == "secure text field") ||
                (textField && subroleUnknown);
  // A text entry named like a password - its title (the AXTitleUIElement
  // label's text included), description or placeholder - is secure too
  // unless the snapshot turned the name rule off, as on Linux: apps that draw
  // their own password fields often forget the subrole, and the renderer
  // hiding the value is too late, its plaintext would already be in the result.
  if (!secure && secureNames_ && (textField || a.role == "AXTextArea")) {
    for (const std::optional<std::string>* name : {&a.title, &a.description, &a.placeholder})
      if (*name && NameSaysPassword(**name)) secure = true;
  }
  // Without a subrole, the value read is what tells: a field that refuses it is taken for a secure one.
  const bool valueTells = textField && !secure && subroleUnimplemented;
  if (live_) liveRead_.insert(id);

  // A secure field's value is never read: only its length (AXNumberOfCharacters above).
  if (!secure && HasValue(a.role)) {
    CFAny value;
    if (IsTextRole(a.role) && a.charCount && *a.charCount > kMaxValueChars) {
      // A long document: its head, not megabytes over IPC every snapshot.
      const CFRange head = CFRangeMake(0, kMaxValueChars);
      CFRef<AXValueRef> range = CFRef<AXValueRef>::Adopt(AXValueCreate(kAXValueTypeCFRange, &head));
      const AXError e =
          AXUIElementCopyParameterizedAttributeValue(el, CFSTR("AXStringForRange"), range.get(), value.OutParam());
      if (e != kAXErrorSuccess) {
        if (Fatal(e)) return AXFailure(e, "reading a text range");
        value.reset();
      }
    }
    if (!value) {
      const AXError ve = AXUIElementCopyAttributeValue(el, CFSTR("AXValue"), value.OutParam());
      if (ve != kAXErrorSuccess) {
        value.reset();
        if (Fatal(ve)) return AXFailure(ve, "reading AXValue");
        // A text field with no readable subrole whose value is refused: secure.
        if (valueTells && ve != kAXErrorNoValue) secure = true;
      }
    }
    if (!secure) a.value = CFToValue(value.get(), a.valueType);
    if (!secure && IsTextRole(a.role)) {
      CFAny selected;
      if (Error err = CopyAttribute(el, CFSTR("AXSelectedText"), selected)) return err;
      if (std::optional<std::string> s = CFToString(selected.get()); s && !s->empty()) a.selectedText = s;
    }
  }
  // Marked secure: the safety rules then refuse to set or type into it.
  if (secure) a.states.secure = true;
  elements_.Remember(id, a.role, a.subrole.value_or(""), secure);
  if (MaySetValue(a.role)) {
    Boolean settable = false;
    if (AXUIElementIsAttributeSettable(el, CFSTR("AXValue"), &settable) == kAXErrorSuccess) a.settable = settable;
    // A settable text field with no value yet is still a string field.
    if (a.settable && !a.valueType && (IsTextRole(a.role) || secure)) a.valueType = "string";
  }
  if (a.role == "AXRow") {
    Boolean settable = false;
    if (AXUIElementIsAttributeSettable(el, CFSTR("AXSelected"), &settable) == kAXErrorSuccess && settable)
      a.states.selectable = true;
  }
  CFRef<CFArrayRef> actions;
  const AXError ae = AXUIElementCopyActionNames(el, actions.OutParam());
  if (ae == kAXErrorSuccess && actions) {
    for (CFIndex i = 0; i < CFArrayGetCount(actions.get()); i++)
      if (std::optional<std::string> s = CFToString(CFArrayGetValueAtIndex(actions.get(), i))) a.actions.push_back(*s);
  } else if (Fatal(ae)) {
    return AXFailure(ae, "reading actions");
  }
  return {};
}

namespace {

// The loop both batched reads share: unknown ids, the deadline, and an app
// that stopped answering, which costs one timeout per batch, not one per
// element. `read(i, element)` does the reading.
template <typename Read>
Error EachElement(const ElementTable& table, const std::vector<ElementId>& ids, std::vector<Error>& errs,
                  Clock::time_point deadline, Read read) {
  errs.assign(ids.size(), Error{});
  std::set<int64_t> silent;
  for (size_t i = 0; i < ids.size(); i++) {
    AXUIElementRef el = table.Get(ids[i]);
    if (!el) {
      errs[i] = {ErrorCode::kElementGone, "unknown element"};
      continue;
    }
    if (Clock::now() >= deadline) {
      errs[i] = {ErrorCode::kTimeout, "the deadline passed"};
      continue;
    }
    pid_t pid = 0;
    AXUIElementGetPid(el, &pid);
    if (silent.count(pid)) {
      errs[i] = {ErrorCode::kAppUnresponsive, "the app stopped answering"};
      continue;
    }
    errs[i] = read(i, el, pid);
    if (errs[i].code == ErrorCode::kAppUnresponsive) silent.insert(pid);
    // No permission: nothing else will read either.
    if (errs[i].code == ErrorCode::kPermissionDenied) return errs[i];
  }
  return {};
}

}  // namespace

Error MacBackend::ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out,
                            std::vector<Error>& errs, Clock::time_point deadline) {
  if (!batch_) batch_ = BatchAttributes();
  out.assign(ids.size(), NodeAttributes{});
  return EachElement(elements_, ids, errs, deadline, [&](size_t i, AXUIElementRef el, pid_t pid) {
    SetTimeoutFor(el, deadline);
    return ReadOne(ids[i], el, pid, out[i], deadline);
  });
}

Error MacBackend::ChildrenOf(ElementId id, AXUIElementRef el, ChildList& out) {
  // The role decides where children are read from. It was remembered by the
  // read of this element; during live reads only a read made while live
  // counts, anything older is asked again.
  std::string role;
  const std::string* cached = elements_.Role(id);
  if (cached && (!live_ || liveRead_.count(id))) {
    role = *cached;
  } else if (live_) {
    CFAny r;
    if (Error err = CopyAttribute(el, CFSTR("AXRole"), r)) return err;
    role = Str(r.get());
  }

  // Elements are interned only once the whole list was read, so a failure
  // part way leaves the table as it was (other snapshots may hold those ids).
  std::vector<CFRef<AXUIElementRef>> found;
  std::vector<std::string> via;
  auto intern = [&]() {
    for (size_t i = 0; i < found.size(); i++) {
      out.ids.push_back(elements_.Intern(found[i].get()));
      out.via.push_back(via[i]);
    }
  };
  // Copies up to kMaxChildren elements of an array attribute; false when unsupported.
  auto copy = [&](CFStringRef attr, const char* source, bool& supported) -> Error {
    supported = false;
    CFIndex count = 0;
    AXError e = AXUIElementGetAttributeValueCount(el, attr, &count);
    // A source the element does not answer for is skipped: the next one is tried.
    if (e != kAXErrorSuccess) return Fatal(e) ? AXFailure(e, "counting " + Str(attr)) : Error{};
    if (count <= 0) {
      supported = true;
      return {};
    }
    CFRef<CFArrayRef> items;
    e = AXUIElementCopyAttributeValues(el, attr, 0, std::min<CFIndex>(count, kMaxChildren), items.OutParam());
    if (e != kAXErrorSuccess) return Fatal(e) ? AXFailure(e, "reading " + Str(attr)) : Error{};
    supported = true;
    for (CFIndex i = 0; items && i < CFArrayGetCount(items.get()); i++) {
      CFTypeRef item = CFArrayGetValueAtIndex(items.get(), i);
      if (!IsElement(item)) continue;
      found.push_back(CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(item)));
      via.push_back(source);
    }
    return {};
  };
  auto total = [&](CFStringRef attr) {
    CFIndex count = 0;
    if (AXUIElementGetAttributeValueCount(el, attr, &count) == kAXErrorSuccess) out.total = count;
  };

  bool supported = false;
  if (role == "AXTable" || role == "AXOutline") {
    // Only the rows on screen: a table's AXRows can hold 100,000 elements.
    if (Error err = copy(CFSTR("AXVisibleRows"), "visibleRows", supported)) return err;
    if (supported) {
      total(CFSTR("AXRows"));
      intern();
      return {};
    }
    if (Error err = copy(CFSTR("AXRows"), "rows", supported)) return err;
    if (supported) {
      intern();
      return {};
    }
  } else if (role == "AXList") {
    if (Error err = copy(CFSTR("AXVisibleChildren"), "visibleChildren", supported)) return err;
    if (supported) {
      total(CFSTR("AXChildren"));
      intern();
      return {};
    }
  }
  if (role == "AXBrowser" || role == "AXList" || role.empty()) {
    if (Error err = copy(CFSTR("AXChildren"), "", supported)) return err;
  } else {
    // Elements that are not lists: one call for the whole array, not a count
    // and a ranged copy (the walk's node limit cuts a long one anyway).
    CFAny items;
    const AXError e = AXUIElementCopyAttributeValue(el, CFSTR("AXChildren"), items.OutParam());
    if (e != kAXErrorSuccess && Fatal(e)) return AXFailure(e, "reading AXChildren");
    if (e == kAXErrorSuccess && items && CFGetTypeID(items.get()) == CFArrayGetTypeID()) {
      CFArrayRef list = static_cast<CFArrayRef>(items.get());
      const CFIndex n = std::min<CFIndex>(CFArrayGetCount(list), kMaxChildren);
      for (CFIndex i = 0; i < n; i++) {
        CFTypeRef item = CFArrayGetValueAtIndex(list, i);
        if (!IsElement(item)) continue;
        found.push_back(CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(item)));
        via.push_back("");
      }
    }
  }
  // Some scroll areas expose their document only as AXContents.
  if (found.empty() && role == "AXScrollArea") {
    if (Error err = copy(CFSTR("AXContents"), "contents", supported)) return err;
  }
  intern();
  return {};
}

Error MacBackend::ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out, std::vector<Error>& errs,
                               Clock::time_point deadline) {
  out.assign(ids.size(), ChildList{});
  return EachElement(elements_, ids, errs, deadline, [&](size_t i, AXUIElementRef el, pid_t) {
    SetTimeoutFor(el, deadline);
    return ChildrenOf(ids[i], el, out[i]);
  });
}

Error MacBackend::ScreenWindows(std::vector<ScreenWindow>& out) {
  CFRef<CFArrayRef> list = CFRef<CFArrayRef>::Adopt(CGWindowListCopyWindowInfo(
      kCGWindowListOptionOnScreenOnly | kCGWindowListExcludeDesktopElements, kCGNullWindowID));
  if (!list) return {ErrorCode::kCaptureFailed, "the window server gave no window list"};
  for (CFIndex i = 0; i < CFArrayGetCount(list.get()); i++) {
    CFTypeRef item = CFArrayGetValueAtIndex(list.get(), i);
    if (!item || CFGetTypeID(item) != CFDictionaryGetTypeID()) continue;
    CFDictionaryRef d = static_cast<CFDictionaryRef>(item);
    ScreenWindow w;
    w.number = static_cast<uint32_t>(CFToNumber(CFDictionaryGetValue(d, kCGWindowNumber)).value_or(0));
    w.pid = static_cast<int64_t>(CFToNumber(CFDictionaryGetValue(d, kCGWindowOwnerPID)).value_or(0));
    w.layer = static_cast<int>(CFToNumber(CFDictionaryGetValue(d, kCGWindowLayer)).value_or(0));
    w.alpha = CFToNumber(CFDictionaryGetValue(d, kCGWindowAlpha)).value_or(1);
    // Without Screen Recording permission the name is absent: it then matches nothing.
    w.title = Str(CFDictionaryGetValue(d, kCGWindowName));
    CFTypeRef bounds = CFDictionaryGetValue(d, kCGWindowBounds);
    CGRect r{};
    if (!bounds || CFGetTypeID(bounds) != CFDictionaryGetTypeID() ||
        !CGRectMakeWithDictionaryRepresentation(static_cast<CFDictionaryRef>(bounds), &r))
      continue;
    w.bounds = {r.origin.x, r.origin.y, r.size.width, r.size.height};
    out.push_back(std::move(w));
  }
  return {};
}

int MacBackend::WindowsElsewhere(int64_t pid) {
  // Every window of every Space (kCGWindowListOptionAll), not only those on screen.
  CFRef<CFArrayRef> list =
      CFRef<CFArrayRef>::Adopt(CGWindowListCopyWindowInfo(kCGWindowListOptionAll, kCGNullWindowID));
  if (!list) return 0;
  int count = 0;
  for (CFIndex i = 0; i < CFArrayGetCount(list.get()); i++) {
    CFTypeRef item = CFArrayGetValueAtIndex(list.get(), i);
    if (!item || CFGetTypeID(item) != CFDictionaryGetTypeID()) continue;
    CFDictionaryRef d = static_cast<CFDictionaryRef>(item);
    if (CFToNumber(CFDictionaryGetValue(d, kCGWindowOwnerPID)).value_or(0) != static_cast<double>(pid)) continue;
    // Ordinary windows only (layer 0): not menus, status items or panels above them.
    if (CFToNumber(CFDictionaryGetValue(d, kCGWindowLayer)).value_or(-1) != 0) continue;
    if (CFToBool(CFDictionaryGetValue(d, kCGWindowIsOnscreen)).value_or(false)) continue;
    // A window the size of a placeholder (apps keep tiny off-screen helper windows) is none.
    CFTypeRef bounds = CFDictionaryGetValue(d, kCGWindowBounds);
    CGRect r{};
    if (!bounds || CFGetTypeID(bounds) != CFDictionaryGetTypeID() ||
        !CGRectMakeWithDictionaryRepresentation(static_cast<CFDictionaryRef>(bounds), &r) || r.size.width < 40 ||
        r.size.height < 40)
      continue;
    count++;
  }
  return count;
}

// Vision comes with macOS: a system layer without it (the fake one) has nothing a user could install.
const char* const kNoVisionHint =
    "Vision is part of macOS 10.15 and later, nothing to install; take the snapshot with ocr: \"auto\" or false "
    "and look at its screenshot";

Error MacBackend::OcrReady(const std::vector<std::string>& languages) {
  if (!ocr_) ocr_ = system_->CreateOcrEngine();
  if (!ocr_) return {ErrorCode::kOcrUnavailable, "this macOS system layer has no OCR engine (Vision)", kNoVisionHint};
  return ocr_->Ready(languages);
}

Error MacBackend::RecognizeText(const WindowInfo&, const OcrImage& image, const OcrOptions& options, OcrResult& out) {
  if (!ocr_) ocr_ = system_->CreateOcrEngine();
  if (!ocr_) return {ErrorCode::kOcrUnavailable, "this macOS system layer has no OCR engine (Vision)", kNoVisionHint};
  return RecognizeImage(*ocr_, image, options, out);
}

Error MacBackend::CaptureTarget(const WindowInfo& window, bool& capturable, std::string& why) {
  std::vector<ScreenWindow> list;
  if (Error err = ScreenWindows(list)) return err;
  capturable =
      ChooseCaptureWindow(list, window.pid, window.title, window.hasFrame ? &window.frame : nullptr, why).has_value();
  return {};
}

double MacBackend::Scale(const WindowInfo& window) { return system_->BackingScale(window.frame); }

Error MacBackend::Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                          Clock::time_point deadline) {
  std::vector<ScreenWindow> list;
  if (Error err = ScreenWindows(list)) return err;
  std::string why;
  std::optional<size_t> i =
      ChooseCaptureWindow(list, window.pid, window.title, window.hasFrame ? &window.frame : nullptr, why);
  if (!i) return {ErrorCode::kCaptureFailed, why};
  const ScreenWindow& w = list[*i];
  // The snapshot's deadline, with a floor: a walk cut by its deadline still
  // gets a screenshot when the window server answers quickly.
  const Clock::time_point bound = std::max(deadline, Clock::now() + kCaptureFloor);
  const double scale = system_->BackingScale(w.bounds);
  // One capture at a time in the process (CaptureGate): ScreenCaptureKit
  // calls cannot be cancelled, so one that timed out is still in flight, and
  // separate backends' captures would otherwise overlap. The pass goes to
  // every request the capture makes; the hold is this call's share.
  Error gateErr;
  CaptureHold hold = CaptureGate::Process().Enter(bound, gateErr);
  if (!hold) return gateErr;
  const std::shared_ptr<CapturePass>& pass = hold.pass();
  if (Error err =
          system_->CaptureWindow(w.number, w.bounds, scale, CaptureFilter::kWindow, pass, rgba, width, height, bound))
    return err;
  // ScreenCaptureKit's window filter gives an all-black image for some
  // GPU-rendered windows; the display filter showing only that window does
  // not. Retried once, with the same pass; a window black both ways is black.
  if (AllBlack(rgba) && Clock::now() < bound) {
    std::vector<uint8_t> again;
    int w2 = 0, h2 = 0;
    if (!system_->CaptureWindow(w.number, w.bounds, scale, CaptureFilter::kDisplay, pass, again, w2, h2, bound) &&
        w2 == width && h2 == height) {
      rgba = std::move(again);
    }
  }
  // Both filters return the window exactly (mac_system.h): its frame's origin
  // and `scale` map the pixels to points.
  captured = w.bounds;
  return {};
}

Error MacBackend::Recover(RecoveryStep step, const AppInfo& app, const std::optional<WindowInfo>& window,
                          Clock::time_point deadline) {
  AXUIElementRef appEl = AppElement(app.pid);
  if (!appEl) return {ErrorCode::kAppNotFound, "cannot reach pid " + std::to_string(app.pid)};
  SetTimeoutFor(appEl, deadline);
  // The app's windows, read again each step: `open` or an unhide may have
  // changed them. `known` says whether the list could be read at all.
  auto windows = [&](bool* known = nullptr) {
    std::vector<CFRef<AXUIElementRef>> out;
    CFAny list;
    const bool read =
        !CopyAttribute(appEl, CFSTR("AXWindows"), list) && list && CFGetTypeID(list.get()) == CFArrayGetTypeID();
    if (known) *known = read;
    if (!read) return out;
    for (CFIndex i = 0; i < CFArrayGetCount(static_cast<CFArrayRef>(list.get())); i++) {
      CFTypeRef w = CFArrayGetValueAtIndex(static_cast<CFArrayRef>(list.get()), i);
      if (!IsElement(w)) continue;
      out.push_back(CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(w)));
      SetTimeoutFor(out.back().get(), deadline);
    }
    return out;
  };
  auto minimized = [&](AXUIElementRef w) {
    CFAny v;
    return !CopyAttribute(w, CFSTR("AXMinimized"), v) && CFToBool(v.get()).value_or(false);
  };
  // The window to work on: the one chosen, else the app's first.
  auto target = [&]() -> CFRef<AXUIElementRef> {
    if (window)
      if (AXUIElementRef el = elements_.Get(window->element)) {
        SetTimeoutFor(el, deadline);
        return CFRef<AXUIElementRef>::Retain(el);
      }
    std::vector<CFRef<AXUIElementRef>> all = windows();
    return all.empty() ? CFRef<AXUIElementRef>() : all.front();
  };
  auto set = [&](AXUIElementRef el, CFStringRef attr, CFTypeRef value) -> Error {
    const AXError e = AXUIElementSetAttributeValue(el, attr, value);
    return e == kAXErrorSuccess ? Error{} : AXFailure(e, "setting " + Str(attr));
  };
  switch (step) {
    case RecoveryStep::kUnhide: {
      // AX first: NSRunningApplication's view of hidden is stale without a main run loop.
      CFAny hidden;
      if (!CopyAttribute(appEl, CFSTR("AXHidden"), hidden) && CFToBool(hidden.get()).value_or(false))
        set(appEl, CFSTR("AXHidden"), kCFBooleanFalse);
      return system_->Unhide(app.pid);
    }
    case RecoveryStep::kActivate:
      set(appEl, CFSTR("AXFrontmost"), kCFBooleanTrue);
      return system_->ActivateAllWindows(app.pid);
    case RecoveryStep::kOpen:
      // A reopen event makes many apps create a window or show an Open panel:
      // only for an app that has no window at all.
      if (app.bundleId.empty()) return {ErrorCode::kActionNotSupported, "no bundle id"};
      {
        bool known = false;
        // Only when the app is known to have no window: an unanswered list is not an empty one.
        if (!windows(&known).empty() || !known)
          return {ErrorCode::kActionNotSupported, "the app has windows, or did not say"};
      }
      // AXWindows lists only the windows of the current Space: an app whose
      // windows are all on another Space (or full screen in one) looks
      // windowless, and reopening it would make a new window. The window
      // server's list covers every Space - and also the windows an app
      // ordered out (closed but kept, hidden): the public list tells the two
      // apart by nothing (no Space number), so the app is not reopened on a
      // guess, and the agent is told both and how to force the reopen.
      if (int elsewhere = WindowsElsewhere(app.pid))
        return {ErrorCode::kWindowNotFound,
                "the window is on another Space or hidden: the window server lists " + std::to_string(elsewhere) +
                    " window" + (elsewhere == 1 ? "" : "s") + " of " + NameOf(app.pid) +
                    (elsewhere == 1 ? " that is" : " that are") +
                    " not on screen, and AX lists none here (on another Space, or ordered out: closed but "
                    "kept, or hidden by the app); it was not reopened (on another Space that would make a new "
                    "window). Switch to that Space, or move the window to this one (Mission Control), then try "
                    "again; if the app only hid its window, launch(\"" +
                    app.bundleId + "\") sends it a reopen event"};
      return system_->OpenBundle(app.bundleId, Sooner(deadline, Clock::now() + std::chrono::seconds(3)));
    case RecoveryStep::kUnminimize: {
      CFRef<AXUIElementRef> w;
      if (window)
        if (AXUIElementRef el = elements_.Get(window->element); el && minimized(el))
          w = CFRef<AXUIElementRef>::Retain(el);
      if (!w)
        for (CFRef<AXUIElementRef>& candidate : windows())
          if (minimized(candidate.get())) {
            w = candidate;
            break;
          }
      if (!w) return {ErrorCode::kActionNotSupported, "no minimized window"};
      return set(w.get(), CFSTR("AXMinimized"), kCFBooleanFalse);
    }
    case RecoveryStep::kRaise: {
      CFRef<AXUIElementRef> w = target();
      if (!w) return {ErrorCode::kActionNotSupported, "no window"};
      const AXError e = AXUIElementPerformAction(w.get(), CFSTR("AXRaise"));
      return e == kAXErrorSuccess ? Error{} : AXFailure(e, "AXRaise");
    }
    case RecoveryStep::kMainAndFocused: {
      CFRef<AXUIElementRef> w = target();
      if (!w) return {ErrorCode::kActionNotSupported, "no window"};
      if (Error err = set(w.get(), CFSTR("AXMain"), kCFBooleanTrue)) return err;
      return set(w.get(), CFSTR("AXFocused"), kCFBooleanTrue);
    }
  }
  return {ErrorCode::kActionNotSupported, "unknown step"};
}

void MacBackend::Settle(std::chrono::milliseconds ms) { system_->Sleep(ms); }

namespace {

constexpr int kWebAreaSearchNodes = 400;

// Bounded breadth-first search for an AXWebArea below `root`, stopping at
// `until`; `filled` tells whether it has children yet. Containers are searched
// before leaves, so Chrome's toolbar buttons do not use up the budget.
// `area`, when given, gets the web area found.
bool FindWebArea(AXUIElementRef root, Clock::time_point until, bool& filled, CFRef<AXUIElementRef>* area = nullptr) {
  filled = false;
  std::deque<std::pair<CFRef<AXUIElementRef>, int>> queue;
  queue.emplace_back(CFRef<AXUIElementRef>::Retain(root), 0);
  bool found = false;
  int visited = 0;
  while (!queue.empty() && visited++ < kWebAreaSearchNodes && Clock::now() < until) {
    CFRef<AXUIElementRef> el = std::move(queue.front().first);
    const int depth = queue.front().second;
    queue.pop_front();
    const double left = std::chrono::duration<double>(until - Clock::now()).count();
    AXUIElementSetMessagingTimeout(el.get(), static_cast<float>(std::max(0.05, std::min(kMessagingTimeoutS, left))));
    CFAny role, children;
    if (AXUIElementCopyAttributeValue(el.get(), CFSTR("AXRole"), role.OutParam()) != kAXErrorSuccess) role.reset();
    const std::string r = Str(role.get());
    if (r == "AXButton" || r == "AXStaticText" || r == "AXImage" || r == "AXTextField" || r == "AXMenuButton" ||
        r == "AXPopUpButton" || r == "AXRadioButton" || r == "AXCheckBox")
      continue;  // leaves of the browser's own UI
    if (AXUIElementCopyAttributeValue(el.get(), CFSTR("AXChildren"), children.OutParam()) != kAXErrorSuccess)
      children.reset();
    const bool isArray = children && CFGetTypeID(children.get()) == CFArrayGetTypeID();
    const CFIndex n = isArray ? CFArrayGetCount(static_cast<CFArrayRef>(children.get())) : 0;
    if (r == "AXWebArea") {
      found = true;
      if (area) *area = CFRef<AXUIElementRef>::Retain(el.get());
      if (n > 0) {
        filled = true;
        return true;
      }
      continue;
    }
    if (depth >= 16) continue;
    for (CFIndex i = 0; i < n; i++) {
      CFTypeRef c = CFArrayGetValueAtIndex(static_cast<CFArrayRef>(children.get()), i);
      if (IsElement(c)) queue.emplace_back(CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(c)), depth + 1);
    }
  }
  return found;
}

}  // namespace

void MacBackend::PrepareWalk(const AppInfo& app, const WindowInfo& window, Clock::time_point deadline,
                             std::vector<std::string>& notes, bool& contentPending) {
  if (chromiumReady_.count(app.pid)) return;
  AXUIElementRef appEl = AppElement(app.pid);
  AXUIElementRef windowEl = elements_.Get(window.element);
  if (!appEl || !windowEl) return;
  SetTimeoutFor(appEl, deadline);
  auto running = running_.find(app.pid);
  const WebEngine engine =
      running != running_.end() ? EngineOf(running->second.bundlePath, running->second.bundleId) : WebEngine::kNone;
  const bool chromiumBundle = engine != WebEngine::kNone;
  // Half of what is left at most: the walk itself needs the rest.
  const Clock::time_point t0 = Clock::now();
  const Clock::time_point until = Sooner(t0 + kChromiumWait, t0 + (deadline - t0) / 2);
  bool filled = false;
  bool polled = false;  // the content was not there at the first look
  // Polls, bounded by `by`, until a web area with content is there.
  auto waitForContent = [&](Clock::time_point by) {
    for (;;) {
      if (FindWebArea(windowEl, by, filled) && filled) return true;
      if (Clock::now() + kChromiumPoll >= by) return false;
      polled = true;
      std::this_thread::sleep_for(kChromiumPoll);
    }
  };
  // Chromium reported dropping actions on web content sent while its tree
  // is being built: said whenever the content came only after a request.
  auto switched = [&](const char* attribute) {
    notes.push_back(std::string("the app's web content was just exposed (") + attribute +
                    "); Chromium may drop actions on web content sent right after the switch: if one has no "
                    "visible effect, take a new snapshot before repeating it");
  };

  auto asked = manualAccessibility_.find(app.pid);
  // An app that refused the request and carries no Chromium engine is a native app: nothing to wait for.
  if (asked != manualAccessibility_.end() && !asked->second && !chromiumBundle) return;
  const bool firstAsk = asked == manualAccessibility_.end();
  const char* attribute = "AXManualAccessibility";
  if (firstAsk) {
    // Chromium builds its accessibility tree only for a client that asks.
    AXError e = AXUIElementSetAttributeValue(appEl, CFSTR("AXManualAccessibility"), kCFBooleanTrue);
    if (e != kAXErrorSuccess && chromiumBundle) {
      // Electron implements AXManualAccessibility, older versions answering
      // kAXErrorAttributeUnsupported yet applying it: its content is given a
      // while before the attribute with side effects. Other Chromium apps get one look.
      const bool there = engine == WebEngine::kElectron ? waitForContent(Sooner(until, t0 + kElectronLook))
                                                        : FindWebArea(windowEl, until, filled) && filled;
      if (there) {
        manualAccessibility_[app.pid] = true;
        chromiumReady_.insert(app.pid);
        if (polled) switched(attribute);
        return;
      }
      attribute = "AXEnhancedUserInterface";
      // Already on means another assistive app (VoiceOver) turned it on: it
      // stays on when this backend closes - on macOS 12-13 Chrome leaves its
      // complete accessibility mode at a false whoever else still needs it.
      CFAny before;
      const bool wasOn = AXUIElementCopyAttributeValue(appEl, CFSTR("AXEnhancedUserInterface"), before.OutParam()) ==
                             kAXErrorSuccess &&
                         CFToBool(before.get()).value_or(false);
      const AXError enhanced = AXUIElementSetAttributeValue(appEl, CFSTR("AXEnhancedUserInterface"), kCFBooleanTrue);
      // Chrome answers this set with an error even when it takes effect (full
      // accessibility mode comes about 2 s later): the attempt is recorded
      // whatever the answer, so the attribute is turned off again when the
      // backend closes, and the content is waited for below.
      if (!wasOn) enhanced_.insert(app.pid);
      notes.push_back(std::string("AXManualAccessibility was refused (") + AXErrorName(e) +
                      "); AXEnhancedUserInterface was set instead" +
                      (enhanced == kAXErrorSuccess ? std::string()
                                                   : std::string(" (it answered ") + AXErrorName(enhanced) +
                                                         ", as Chromium does even when it switches)") +
                      " (window managers may animate or misplace this app's windows while it is on)");
      e = kAXErrorSuccess;
    }
    manualAccessibility_[app.pid] = e == kAXErrorSuccess;
    if (e != kAXErrorSuccess) return;  // not a Chromium bundle: a native app
  }

  const bool webArea = FindWebArea(windowEl, until, filled);
  if (filled) {
    chromiumReady_.insert(app.pid);
    return;
  }
  // Wait when a web area is there but empty, or right after asking a known
  // Chromium bundle (its tree is being built). Anything else: nothing to wait for.
  if (!webArea && !(firstAsk && chromiumBundle)) return;
  if (waitForContent(until)) {
    chromiumReady_.insert(app.pid);
    if (firstAsk) switched(attribute);
    return;
  }
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  notes.push_back("the app's web content had not appeared in the accessibility tree after " + std::to_string(waited) +
                  " ms; the tree is incomplete");
  contentPending = true;
}

Error MacBackend::Launchable(std::vector<LaunchableApp>& out, Clock::time_point) { return system_->InstalledApps(out); }

Error MacBackend::Launch(const LaunchRequest& request, int64_t& pid, Clock::time_point deadline) {
  return system_->OpenApplication(request, pid, deadline);
}

Error MacBackend::Permissions(PermissionStatus& out, bool prompt) {
  const void* keys[] = {kAXTrustedCheckOptionPrompt};
  const void* values[] = {prompt ? kCFBooleanTrue : kCFBooleanFalse};
  CFRef<CFDictionaryRef> options = CFRef<CFDictionaryRef>::Adopt(CFDictionaryCreate(
      kCFAllocatorDefault, keys, values, 1, &kCFTypeDictionaryKeyCallBacks, &kCFTypeDictionaryValueCallBacks));
  out.accessibility = AXIsProcessTrustedWithOptions(options.get()) ? "granted" : "denied";
  // Without `prompt`, silent: the preflight only. The ScreenCaptureKit probe
  // may itself show the Screen Recording prompt, so it runs only when
  // prompting is allowed (README, macOS: which call may prompt).
  Access screen = system_->ScreenRecordingPreflight();
  if (screen != Access::kGranted && prompt) {
    screen = system_->ScreenRecordingProbe();
    if (screen != Access::kGranted) {
      system_->RequestScreenRecording();
      screen = system_->ScreenRecordingPreflight();
    }
  }
  out.screenRecording = screen == Access::kGranted ? "granted" : screen == Access::kDenied ? "denied" : "unknown";
  return {};
}

Error MacBackend::MenuBar(const AppInfo& app, ElementId& out, Clock::time_point deadline) {
  out = 0;
  AXUIElementRef appEl = AppElement(app.pid);
  if (!appEl) return {};
  SetTimeoutFor(appEl, deadline);
  CFAny bar;
  if (Error err = CopyAttribute(appEl, CFSTR("AXMenuBar"), bar)) return err;
  if (IsElement(bar.get())) out = elements_.Intern(static_cast<AXUIElementRef>(bar.get()));
  return {};
}

// ---------------------------------------------------------------- actions

Error MacBackend::DoAction(ElementId id, const std::string& name, Clock::time_point deadline) {
  AXUIElementRef el = elements_.Get(id);
  if (!el) return {ErrorCode::kElementGone, "unknown element"};
  SetTimeoutFor(el, deadline);
  // Only an action the element does not list is "not supported": an app may
  // answer kAXErrorActionUnsupported after performing one it does list.
  CFRef<CFArrayRef> names;
  const AXError ne = AXUIElementCopyActionNames(el, names.OutParam());
  if (ne != kAXErrorSuccess && Fatal(ne)) return AXFailure(ne, "reading actions");
  if (ne == kAXErrorSuccess && names) {
    bool listed = false;
    std::string all;
    for (CFIndex i = 0; i < CFArrayGetCount(names.get()); i++) {
      const std::string n = Str(CFArrayGetValueAtIndex(names.get(), i));
      listed = listed || n == name;
      all += (all.empty() ? "" : ", ") + n;
    }
    if (!listed)
      return {ErrorCode::kActionNotSupported,
              "the element has no action " + name + " (it has: " + (all.empty() ? "none" : all) + ")"};
  }
  CFRef<CFStringRef> action = MakeCFString(name);
  return AfterDelivery(AXUIElementPerformAction(el, action.get()), "action " + name);
}

Error MacBackend::SetValue(ElementId id, CFTypeRef value, Clock::time_point deadline) {
  AXUIElementRef el = elements_.Get(id);
  if (!el) return {ErrorCode::kElementGone, "unknown element"};
  SetTimeoutFor(el, deadline);
  Boolean settable = false;
  const AXError se = AXUIElementIsAttributeSettable(el, CFSTR("AXValue"), &settable);
  if (se != kAXErrorSuccess && Fatal(se)) return AXFailure(se, "checking the value");
  if (se != kAXErrorSuccess || !settable) return {ErrorCode::kNotSettable, "the element's value cannot be set"};
  return AfterDelivery(AXUIElementSetAttributeValue(el, CFSTR("AXValue"), value), "setting the value");
}

Error MacBackend::SetText(ElementId id, const std::string& text, Clock::time_point deadline) {
  CFRef<CFStringRef> value = MakeCFString(text);
  return SetValue(id, value.get(), deadline);
}

Error MacBackend::SetNumber(ElementId id, double number, Clock::time_point deadline) {
  CFRef<CFNumberRef> value =
      CFRef<CFNumberRef>::Adopt(CFNumberCreate(kCFAllocatorDefault, kCFNumberDoubleType, &number));
  return SetValue(id, value.get(), deadline);
}

Error MacBackend::Focus(ElementId id, Clock::time_point deadline) {
  AXUIElementRef el = elements_.Get(id);
  if (!el) return {ErrorCode::kElementGone, "unknown element"};
  SetTimeoutFor(el, deadline);
  return AfterDelivery(AXUIElementSetAttributeValue(el, CFSTR("AXFocused"), kCFBooleanTrue), "focusing");
}

Error MacBackend::Select(ElementId id, Clock::time_point deadline) {
  AXUIElementRef row = elements_.Get(id);
  if (!row) return {ErrorCode::kElementGone, "unknown element"};
  SetTimeoutFor(row, deadline);
  // The containing list takes the selection: AXSelectedRows on tables and
  // outlines, AXSelectedChildren on lists. A few levels up at most.
  CFRef<AXUIElementRef> el = CFRef<AXUIElementRef>::Retain(row);
  for (int up = 0; up < 4; up++) {
    CFAny parent;
    if (Error err = CopyAttribute(el.get(), CFSTR("AXParent"), parent)) return err;
    if (!IsElement(parent.get())) break;
    el = CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(parent.get()));
    SetTimeoutFor(el.get(), deadline);
    CFAny role;
    if (Error err = CopyAttribute(el.get(), CFSTR("AXRole"), role)) return err;
    const std::string r = Str(role.get());
    if (r != "AXTable" && r != "AXOutline" && r != "AXList") continue;
    CFStringRef attr = r == "AXList" ? CFSTR("AXSelectedChildren") : CFSTR("AXSelectedRows");
    Boolean settable = false;
    if (AXUIElementIsAttributeSettable(el.get(), attr, &settable) != kAXErrorSuccess || !settable) break;
    const void* items[] = {row};
    CFRef<CFArrayRef> selection =
        CFRef<CFArrayRef>::Adopt(CFArrayCreate(kCFAllocatorDefault, items, 1, &kCFTypeArrayCallBacks));
    return AfterDelivery(AXUIElementSetAttributeValue(el.get(), attr, selection.get()), "selecting the row");
  }
  // Lists that do not take a selection array often still take AXSelected on the row.
  Boolean settable = false;
  if (AXUIElementIsAttributeSettable(row, CFSTR("AXSelected"), &settable) != kAXErrorSuccess || !settable)
    return {ErrorCode::kActionNotSupported, "neither the list nor the row takes a selection"};
  return AfterDelivery(AXUIElementSetAttributeValue(row, CFSTR("AXSelected"), kCFBooleanTrue), "selecting the row");
}

std::string MacBackend::NameOf(int64_t pid) {
  if (running_.find(pid) == running_.end()) {
    std::vector<RunningApp> running;
    if (!system_->RunningApps(running))
      for (const RunningApp& r : running) running_[r.pid] = r;
  }
  auto it = running_.find(pid);
  return (it != running_.end() && !it->second.name.empty() ? it->second.name : std::string("another app")) + " (pid " +
         std::to_string(pid) + ")";
}

// Whether `w` is the target window, or a sheet or dialog attached to it
// (AppKit makes a sheet the key window; its AXParent is the window).
bool MacBackend::IsWindowOrChild(AXUIElementRef w, ElementId target) {
  AXUIElementRef t = elements_.Get(target);
  if (!t || !w) return false;
  if (CFEqual(w, t)) return true;
  CFAny parent;
  if (!CopyAttribute(w, CFSTR("AXParent"), parent) && IsElement(parent.get()) && CFEqual(parent.get(), t)) return true;
  // A surface (sheet, popover, menu) inside `w`: the window that holds it is
  // the key window when input reaches it (review 2, N5).
  CFRef<AXUIElementRef> owner = OwnerWindow(target);
  return owner && CFEqual(owner.get(), w);
}

bool MacBackend::IsMenuOrPopover(const WindowInfo& window) const {
  const std::string* known = elements_.Role(window.element);
  const std::string& role = known ? *known : window.role;
  return role == "AXMenu" || role == "AXPopover";
}

CFRef<AXUIElementRef> MacBackend::OwnerWindow(ElementId target) {
  const std::string* role = elements_.Role(target);
  AXUIElementRef t = elements_.Get(target);
  if (!t || (role && *role == "AXWindow")) return {};
  // Up the AXParent chain to the first AXWindow: a popover sits in its
  // window, a sheet on it; a context menu's chain ends at the application.
  CFRef<AXUIElementRef> el = CFRef<AXUIElementRef>::Retain(t);
  for (int depth = 0; depth < kOwnerDepth; depth++) {
    CFAny parent;
    if (CopyAttribute(el.get(), CFSTR("AXParent"), parent) || !IsElement(parent.get())) return {};
    el = CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(parent.get()));
    CFAny r;
    if (CopyAttribute(el.get(), CFSTR("AXRole"), r)) return {};
    const std::string parentRole = Str(r.get());
    if (parentRole == "AXWindow") return el;
    if (parentRole == "AXApplication") return {};
  }
  return {};
}

Error MacBackend::CheckFront(const WindowInfo& window, Clock::time_point deadline, FrontState& out) {
  out = FrontState{};
  Error err = FocusedApp(out.focused, out.found, deadline);
  if (err.code == ErrorCode::kPermissionDenied) return err;
  out.appInFront = !err && out.found && out.focused.pid == window.pid;
  if (!out.appInFront) return {};
  if (!elements_.Get(window.element)) {
    out.ready = true;  // no window to hold it to: the app is enough
    return {};
  }
  // Keys go to the app's key window: it must be this one, its sheet, or the
  // window that holds this surface.
  AXUIElementRef appEl = AppElement(window.pid);
  CFAny key;
  const bool haveKey = appEl && !CopyAttribute(appEl, CFSTR("AXFocusedWindow"), key) && IsElement(key.get());
  out.ready = haveKey && IsWindowOrChild(static_cast<AXUIElementRef>(key.get()), window.element);
  // An open menu of the app itself (a context menu, a menu bar menu) is never
  // a key window and sits in none: while it tracks, the app's input goes to
  // it, whichever window is key.
  if (!out.ready && IsMenuOrPopover(window) && !OwnerWindow(window.element)) out.ready = true;
  return {};
}

Error MacBackend::InputTarget(const WindowInfo& window, Clock::time_point deadline) {
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed before any input; nothing was sent"};
  auto known = running_.find(window.pid);
  const std::string app = known != running_.end() && !known->second.name.empty()
                              ? known->second.name + " (pid " + std::to_string(window.pid) + ")"
                              : "the app with pid " + std::to_string(window.pid);
  // Asked afresh: the list of the last snapshot may hold an app that quit.
  std::vector<RunningApp> running;
  if (!system_->RunningApps(running) &&
      std::none_of(running.begin(), running.end(), [&](const RunningApp& r) { return r.pid == window.pid; }))
    return {ErrorCode::kAppNotFound, app + " is no longer running; nothing was sent"};
  AXUIElementRef w = elements_.Get(window.element);
  if (!w) return {};  // no window handle: the app is checked, not a window
  SetTimeoutFor(w, deadline);
  CFAny role;
  // Only an element the app says is gone is a closed window; an app that
  // does not answer is Front's to report.
  if (AXUIElementCopyAttributeValue(w, CFSTR("AXRole"), role.OutParam()) == kAXErrorInvalidUIElement)
    return {ErrorCode::kWindowNotFound,
            "the window \"" + window.title + "\" of " + app + " was closed; nothing was sent"};
  return {};
}

Error MacBackend::Front(const WindowInfo& window, Clock::time_point deadline) {
  // Synthetic input goes to whatever is in front, which is often the agent's
  // own terminal: bring the app and its window forward, then verify both
  // before sending anything.
  const Clock::time_point start = Clock::now();
  if (start >= deadline) return {ErrorCode::kTimeout, "the deadline passed before any input; nothing was sent"};
  const bool cutByDeadline = deadline < start + kFrontWait;
  const Clock::time_point until = Sooner(start + kFrontWait, deadline);
  AXUIElementRef appEl = AppElement(window.pid);
  if (!appEl) return {ErrorCode::kInputFailed, "cannot reach pid " + std::to_string(window.pid) + "; nothing was sent"};
  SetTimeoutFor(appEl, until);
  FrontState state;
  if (Error err = CheckFront(window, until, state)) return err;
  // Already ready: no raise and no AXMain, two IPCs saved, and an open popover
  // or menu of the window is not disturbed.
  if (state.ready) return {};
  std::string activation;
  if (!state.appInFront) {
    // The app's own switch; AppKit activation is only a request on macOS 14+.
    AXUIElementSetAttributeValue(appEl, CFSTR("AXFrontmost"), kCFBooleanTrue);
    if (Error err = system_->ActivateAllWindows(window.pid)) activation = " (" + err.message + ")";
  }
  // A menu or popover is no window to raise or make main: its window is.
  CFRef<AXUIElementRef> raised;
  if (IsMenuOrPopover(window))
    raised = OwnerWindow(window.element);
  else if (AXUIElementRef target = elements_.Get(window.element))
    raised = CFRef<AXUIElementRef>::Retain(target);
  if (raised) {
    SetTimeoutFor(raised.get(), until);
    AXUIElementPerformAction(raised.get(), CFSTR("AXRaise"));
    AXUIElementSetAttributeValue(raised.get(), CFSTR("AXMain"), kCFBooleanTrue);
  }
  // Activation lands asynchronously; a busy app may not answer every poll.
  for (;;) {
    if (Error err = CheckFront(window, until, state)) return err;
    if (state.ready) return {};
    if (Clock::now() >= until) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(kFrontPoll, until - Clock::now()));
  }
  const std::string what =
      state.appInFront ? "the window \"" + window.title + "\" did not become the app's key window"
                       : "the app could not be brought to the front" + activation + "; " +
                             (state.found ? NameOf(state.focused.pid) : std::string("another app")) + " is in front";
  if (cutByDeadline) return {ErrorCode::kTimeout, what + " before the deadline; nothing was sent"};
  if (state.appInFront) return {ErrorCode::kInputFailed, what + "; nothing was sent"};
  return {ErrorCode::kInputFailed, what + ", so nothing was sent"};
}

Error MacBackend::Covered(const WindowInfo& window, double x, double y) {
  const std::string where =
      "the point (" + std::to_string(static_cast<int>(x)) + ", " + std::to_string(static_cast<int>(y)) + ")";
  // A hit test over a window of this very process asks the process itself
  // over AX, off its main thread: hosts that serve AX on their main thread
  // only (Electron, NW.js) can crash. The window server says whose window is
  // frontmost there; over our own, no hit test is made.
  const int64_t self = static_cast<int64_t>(getpid());
  std::vector<ScreenWindow> front;
  if (ScreenWindows(front).code == ErrorCode::kNone)
    for (const ScreenWindow& s : front) {
      if (s.layer < 0 || s.alpha <= 0) continue;
      if (x < s.bounds.x || y < s.bounds.y || x >= s.bounds.x + s.bounds.w || y >= s.bounds.y + s.bounds.h) continue;
      if (s.pid != self) break;
      if (window.pid == self)
        return {ErrorCode::kInputFailed,
                where + " is over a window of the process axsnap runs in (pid " + std::to_string(self) +
                    "); it cannot check what is under the point there (an accessibility hit test on its own "
                    "windows off the main thread can crash Electron and NW.js hosts), so nothing was sent. Act on "
                    "the element (click by index uses its AXPress) or drive this app from another process"};
      return {ErrorCode::kInputFailed, where + " is covered by a window of the process axsnap runs in (pid " +
                                           std::to_string(self) + "); nothing was sent"};
    }
  CFRef<AXUIElementRef> hit;
  const AXError e =
      AXUIElementCopyElementAtPosition(SystemWide(), static_cast<float>(x), static_cast<float>(y), hit.OutParam());
  pid_t pid = 0;
  if (e == kAXErrorSuccess && hit && AXUIElementGetPid(hit.get(), &pid) == kAXErrorSuccess) {
    CFAny w;
    const bool knowsWindow =
        window.element != 0 && !CopyAttribute(hit.get(), CFSTR("AXWindow"), w) && IsElement(w.get());
    // Part of the window or its sheet, even when a helper process draws it
    // (sandboxed apps' open and save panels run in another process).
    if (knowsWindow && IsWindowOrChild(static_cast<AXUIElementRef>(w.get()), window.element)) return {};
    if (pid != window.pid)
      return {ErrorCode::kInputFailed, where + " is covered by " + NameOf(pid) + "; nothing was sent"};
    // Another window of the same app on top gets the click just as well.
    if (knowsWindow)
      return {ErrorCode::kInputFailed, where + " is covered by another window of the app; nothing was sent"};
    return {};
  }
  // No answer from AX (a hung app on top answers nothing): the window server
  // says whose window is frontmost there.
  std::vector<ScreenWindow> list;
  if (ScreenWindows(list).code == ErrorCode::kNone)
    for (const ScreenWindow& s : list) {
      if (s.layer < 0 || s.alpha <= 0) continue;
      if (x < s.bounds.x || y < s.bounds.y || x >= s.bounds.x + s.bounds.w || y >= s.bounds.y + s.bounds.h) continue;
      if (s.pid == window.pid) return {};
      return {ErrorCode::kInputFailed, where + " is covered by " + NameOf(s.pid) + "; nothing was sent"};
    }
  return {ErrorCode::kInputFailed, where + " is not over the app's window; nothing was sent"};
}

Error MacBackend::Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) {
  if (Error err = InputTarget(window, deadline)) return err;
  if (Error err = Front(window, deadline)) return err;
  if (Error err = Covered(window, ev.x, ev.y)) return err;
  // A drag ends over the app too, or it drops into another one.
  if (ev.kind == PointerEvent::Kind::kDrag)
    if (Error err = Covered(window, ev.toX, ev.toY)) return err;
  return PostPointer(ev);
}

Error MacBackend::Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) {
  if (Error err = CheckKeys(combo)) return err;
  if (Error err = InputTarget(window, deadline)) return err;
  if (Error err = Front(window, deadline)) return err;
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed before the keys; nothing was sent"};
  return PostKeys(combo);
}

Error MacBackend::TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline,
                           size_t& typed) {
  typed = 0;
  if (Error err = InputTarget(window, deadline)) return err;
  if (Error err = Front(window, deadline)) return err;
  size_t total = 0;
  for (unsigned char c : text) total += (c & 0xc0) != 0x80;
  // Before each chunk: the deadline, and (after the first, which Front has
  // just verified) that the app and its window are still in front, so no
  // chunk goes to an app that took the focus meanwhile.
  bool first = true;
  Error err = PostText(text, typed, [&]() -> Error {
    if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed"};
    if (first) {
      first = false;
      return {};
    }
    FrontState state;
    if (Error e = CheckFront(window, deadline, state)) return e;
    if (state.ready) return {};
    if (state.appInFront)
      return {ErrorCode::kInputFailed, "the window \"" + window.title + "\" stopped being the app's key window"};
    return {ErrorCode::kInputFailed,
            (state.found ? NameOf(state.focused.pid) : std::string("another app")) + " came to the front"};
  });
  if (!err) return {};
  if (typed == 0) {
    if (err.code == ErrorCode::kInvalidArgument) return err;
    if (err.code == ErrorCode::kTimeout)
      return {ErrorCode::kTimeout, "the deadline passed before any text was typed; nothing was sent"};
    return {err.code, err.message + "; nothing was sent"};
  }
  // Some text went: the app has it, whatever follows.
  return {ErrorCode::kDeliveryUncertain, "typed " + std::to_string(typed) + " of " + std::to_string(total) +
                                             " characters, then " + err.message + "; the rest was not sent"};
}

void MacBackend::Release(const std::vector<ElementId>& ids) {
  for (ElementId id : ids) {
    elements_.Release(id);
    liveRead_.erase(id);
  }
}

// ---------------------------------------------------------------- live reads for the action path

// Every read of this backend asks the app (the element table keeps
// references, not values); the one remembered value is the role ChildrenOf
// chooses its source by, which while live is served only from a read made
// while live.
void MacBackend::SetLiveReads(bool live) {
  live_ = live;
  liveRead_.clear();
}

Error MacBackend::FocusedElement(int64_t pid, ElementId& out, bool& found, Clock::time_point deadline) {
  out = 0;
  found = false;
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed"};
  AXUIElementRef appEl = AppElement(pid);
  if (!appEl) return {ErrorCode::kAppNotFound, "cannot reach pid " + std::to_string(pid)};
  SetTimeoutFor(appEl, deadline);
  CFAny focused;
  const AXError e = AXUIElementCopyAttributeValue(appEl, CFSTR("AXFocusedUIElement"), focused.OutParam());
  // No value: nothing in the app has keyboard focus.
  if (e == kAXErrorNoValue) return {};
  // Anything else that is not an element proves nothing about focus: an error, never "no focus".
  if (e == kAXErrorAttributeUnsupported)
    return {ErrorCode::kActionNotSupported, "the app does not report its focused element"};
  if (e == kAXErrorCannotComplete) {
    // AX answers a process that is not running as it answers one that hangs.
    std::vector<RunningApp> running;
    if (!system_->RunningApps(running) &&
        std::none_of(running.begin(), running.end(), [&](const RunningApp& r) { return r.pid == pid; }))
      return {ErrorCode::kAppNotFound, "no running app has pid " + std::to_string(pid)};
  }
  if (e != kAXErrorSuccess) return AXFailure(e, "reading the focused element");
  if (!IsElement(focused.get())) return {ErrorCode::kActionFailed, "the app's focused element is not an element"};
  out = elements_.Intern(static_cast<AXUIElementRef>(focused.get()));
  found = out != 0;
  return {};
}

Error MacBackend::ElementAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                                 std::vector<ElementId>& chain, Clock::time_point deadline) {
  chain.clear();
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed"};
  // A hit test over this very process's windows asks the process itself over AX, off its main thread: hosts
  // that serve AX on their main thread only (Electron, NW.js) can crash (the same rule as Covered).
  if (window.pid == static_cast<int64_t>(getpid()))
    return {ErrorCode::kInputFailed,
            "the window belongs to the process axsnap runs in (pid " + std::to_string(window.pid) +
                "); what is under a point there cannot be checked, so nothing was sent. Act on the element by "
                "index, or drive this app from another process"};
  AXUIElementRef appEl = AppElement(window.pid);
  if (!appEl) return {ErrorCode::kAppNotFound, "cannot reach pid " + std::to_string(window.pid)};
  SetTimeoutFor(appEl, deadline);
  CFRef<AXUIElementRef> hit;
  const AXError e =
      AXUIElementCopyElementAtPosition(appEl, static_cast<float>(x), static_cast<float>(y), hit.OutParam());
  // Nothing of the app under the point.
  if (e == kAXErrorNoValue) return {};
  if (e != kAXErrorSuccess) return AXFailure(e, "asking what is under the point");
  if (!hit) return {};
  AXUIElementRef win = elements_.Get(window.element);
  CFRef<AXUIElementRef> at = std::move(hit);
  // Each element of the climb is a new AXUIElement: its calls get what the deadline leaves, never the 2 s
  // global timeout, and the climb stops once the deadline passed (the caller has answered by then).
  for (int depth = 0; depth < 64 && at; ++depth) {
    const ElementId id = elements_.Intern(at.get());
    if (std::find(chain.begin(), chain.end(), id) != chain.end()) break;
    chain.push_back(id);
    if ((win && CFEqual(at.get(), win)) || std::find(stopAt.begin(), stopAt.end(), id) != stopAt.end()) break;
    if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed while climbing from the point"};
    SetTimeoutFor(at.get(), deadline);
    CFAny parent;
    if (Error err = CopyAttribute(at.get(), CFSTR("AXParent"), parent)) return err;
    if (!IsElement(parent.get())) break;
    if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed while climbing from the point"};
    // The application element is above every window: the climb ends below it.
    CFAny role;
    auto pe = static_cast<AXUIElementRef>(parent.get());
    SetTimeoutFor(pe, deadline);
    if (!CopyAttribute(pe, CFSTR("AXRole"), role) && Str(role.get()) == "AXApplication") break;
    at = CFRef<AXUIElementRef>::Retain(pe);
  }
  return {};
}

Error MacBackend::InsertText(ElementId id, const std::string& text, Clock::time_point deadline) {
  AXUIElementRef el = elements_.Get(id);
  if (!el) return {ErrorCode::kElementGone, "unknown element"};
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed; nothing was sent"};
  SetTimeoutFor(el, deadline);
  // Never into a secure field, asked live (a subrole that cannot be read may be one).
  if (elements_.IsSecure(id)) return {ErrorCode::kNotSettable, "a secure text field: nothing is inserted into it"};
  CFAny subrole;
  const AXError se = AXUIElementCopyAttributeValue(el, CFSTR("AXSubrole"), subrole.OutParam());
  if (se == kAXErrorSuccess && Str(subrole.get()) == "AXSecureTextField")
    return {ErrorCode::kNotSettable, "a secure text field: nothing is inserted into it"};
  if (se == kAXErrorFailure || se == kAXErrorIllegalArgument) {
    // A subrole the app does not implement: no sign either way. The role
    // description and a value read decide, as when the element was read.
    CFAny description, value;
    const AXError de = AXUIElementCopyAttributeValue(el, CFSTR("AXRoleDescription"), description.OutParam());
    if (Fatal(de)) return AXFailure(de, "reading the role description");
    if (de == kAXErrorSuccess && Str(description.get()) == "secure text field")
      return {ErrorCode::kNotSettable, "a secure text field: nothing is inserted into it"};
    const AXError ve = AXUIElementCopyAttributeValue(el, CFSTR("AXValue"), value.OutParam());
    if (Fatal(ve)) return AXFailure(ve, "reading the value");
    if (ve != kAXErrorSuccess && ve != kAXErrorNoValue)
      return {ErrorCode::kNotSettable,
              "the element's subrole cannot be read and its value is refused (it may be a secure field)"};
  } else if (se != kAXErrorSuccess && se != kAXErrorNoValue && se != kAXErrorAttributeUnsupported) {
    if (Fatal(se)) return AXFailure(se, "reading the subrole");
    return {ErrorCode::kNotSettable, "the element's subrole could not be read (it may be a secure field)"};
  }
  // The caret goes to the end, then the text goes in at the caret: the value
  // itself is never written back (it may not have been read whole).
  for (CFStringRef attr : {CFSTR("AXSelectedTextRange"), CFSTR("AXSelectedText")}) {
    Boolean settable = false;
    const AXError e = AXUIElementIsAttributeSettable(el, attr, &settable);
    if (e != kAXErrorSuccess && Fatal(e)) return AXFailure(e, "checking " + Str(attr));
    if (e != kAXErrorSuccess || !settable)
      return {ErrorCode::kNotSettable, "the element's " + Str(attr) + " cannot be set, so text cannot be inserted"};
  }
  CFAny count;
  const AXError ce = AXUIElementCopyAttributeValue(el, CFSTR("AXNumberOfCharacters"), count.OutParam());
  if (ce != kAXErrorSuccess && Fatal(ce)) return AXFailure(ce, "reading the text length");
  const std::optional<double> length = ce == kAXErrorSuccess ? CFToNumber(count.get()) : std::nullopt;
  if (!length || *length < 0)
    return {ErrorCode::kActionNotSupported, "the element does not report its text length (AXNumberOfCharacters)"};
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed; nothing was sent"};
  const CFRange end = CFRangeMake(static_cast<CFIndex>(*length), 0);
  CFRef<AXValueRef> range = CFRef<AXValueRef>::Adopt(AXValueCreate(kAXValueTypeCFRange, &end));
  if (!range) return {ErrorCode::kActionFailed, "could not make the text range"};
  // From here on the app has been asked to change something.
  if (Error err = AfterDelivery(AXUIElementSetAttributeValue(el, CFSTR("AXSelectedTextRange"), range.get()),
                                "moving the caret"))
    return err.code == ErrorCode::kDeliveryUncertain ? Error{err.code, err.message + "; the text was not inserted"}
                                                     : err;
  // A selection the app did not put where asked would be replaced: the text
  // goes in only when the caret is at the end, with nothing selected. Apps
  // may apply a selection later than they answer the set (Chromium sends it
  // to the renderer and reads back the browser's copy), so the read-back is
  // polled, briefly. A caret that never arrives means only the selection
  // moved: the text was not inserted, and typing with key events may go on.
  constexpr int kCaretPolls = 8;
  constexpr auto kCaretPoll = std::chrono::milliseconds(25);
  auto caretAtEnd = [&] {
    CFAny now;
    CFRange at{};
    return AXUIElementCopyAttributeValue(el, CFSTR("AXSelectedTextRange"), now.OutParam()) == kAXErrorSuccess && now &&
           CFGetTypeID(now.get()) == AXValueGetTypeID() &&
           AXValueGetValue(static_cast<AXValueRef>(now.get()), kAXValueTypeCFRange, &at) &&
           at.location == end.location && at.length == 0;
  };
  bool arrived = caretAtEnd();
  for (int i = 0; !arrived && i < kCaretPolls && Clock::now() + kCaretPoll < deadline; ++i) {
    system_->Sleep(kCaretPoll);
    arrived = caretAtEnd();
  }
  if (!arrived)
    return {ErrorCode::kActionFailed,
            "the caret did not arrive at the end of the text (the app answered the move but its selection is "
            "elsewhere); only the selection may have moved, the text was not inserted"};
  CFRef<CFStringRef> value = MakeCFString(text);
  return AfterDelivery(AXUIElementSetAttributeValue(el, CFSTR("AXSelectedText"), value.get()), "inserting the text");
}

// ---------------------------------------------------------------- change events

namespace {

// What Watch registers on the application element. Notifications posted by
// any element of the app reach an observer registered on the app element.
// Apps that do not send one refuse it (kAXErrorNotificationUnsupported);
// that is fine, the others still count.
constexpr const char* kNotifications[] = {
    "AXCreated",
    "AXUIElementDestroyed",
    "AXValueChanged",
    "AXTitleChanged",
    "AXFocusedUIElementChanged",
    "AXFocusedWindowChanged",
    "AXMainWindowChanged",
    "AXWindowCreated",
    "AXWindowMiniaturized",
    "AXWindowDeminiaturized",
    "AXMoved",
    "AXResized",
    "AXMenuOpened",
    "AXMenuClosed",
    "AXMenuItemSelected",
    "AXSheetCreated",
    "AXDrawerCreated",
    "AXApplicationActivated",
    "AXApplicationDeactivated",
    "AXApplicationHidden",
    "AXApplicationShown",
    "AXSelectedChildrenChanged",
    "AXSelectedRowsChanged",
    "AXSelectedTextChanged",
    "AXRowCountChanged",
    "AXRowExpanded",
    "AXRowCollapsed",
    "AXLayoutChanged",
    "AXElementBusyChanged",
    // "Sent at the end of the window move/resize" (AXNotificationConstants.h);
    // AXMoved / AXResized are about any element.
    "AXWindowMoved",
    "AXWindowResized",
    // What web content posts: Chromium posts these and nothing at all when
    // children are added (BrowserAccessibilityManagerMac); WebKit and Firefox
    // post AXLayoutComplete.
    "AXLoadComplete",
    "AXLayoutComplete",
    "AXLiveRegionChanged",
    "AXLiveRegionCreated",
    "AXExpandedChanged",
    "AXInvalidStatusChanged",
};

// Notifications about windows, menus, sheets, popovers and the app's
// visibility: what windowStamp counts (AXUIElementDestroyed too, when the
// element destroyed was known as one of these). AXLoadComplete is a page
// that replaced a window's whole content (a browser tab's title changes with
// it); a live region or an expanded row is not about a window.
bool IsWindowNotification(const std::string& name) {
  return In(name, {"AXWindowCreated", "AXFocusedWindowChanged", "AXMainWindowChanged", "AXWindowMiniaturized",
                   "AXWindowDeminiaturized", "AXWindowMoved", "AXWindowResized", "AXMenuOpened", "AXMenuClosed",
                   "AXSheetCreated", "AXDrawerCreated", "AXApplicationActivated", "AXApplicationDeactivated",
                   "AXApplicationHidden", "AXApplicationShown", "AXLoadComplete"});
}

bool IsSurfaceRole(const std::string& role) {
  return In(role, {"AXWindow", "AXSheet", "AXDrawer", "AXMenu", "AXPopover", "AXDialog", "AXSystemDialog"});
}

constexpr size_t kRecentEvents = 16;
constexpr auto kWaitSlice = std::chrono::milliseconds(50);

// Registrations refused for want of time or answer are asked again by a
// later Watch: the first retry at once, then at most this often, each given
// this long (a hung app must not cost every wait a messaging timeout).
constexpr auto kRetryEvery = std::chrono::seconds(2);
constexpr auto kRetryFor = std::chrono::milliseconds(250);

// Web apps: the web area is sampled this often while waiting, each sample
// bounded in time and in children read. Their quiet floor is Linux's for
// Chromium (atspi_events.h: its updates come in batches 160-210 ms apart),
// which also leaves room for several samples in every quiet period.
constexpr auto kWebSampleEvery = std::chrono::milliseconds(100);
constexpr auto kWebSampleFor = std::chrono::milliseconds(60);
constexpr CFIndex kWebSampleChildren = 32;
constexpr auto kWebFindEvery = std::chrono::seconds(1);  // while no web area is found
constexpr double kWebQuietFloorMs = 400;
constexpr const char* kWebAreaChanged = "AXWebAreaChanged (sampled)";

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

// What changes when web content is added or replaced: the web area's busy
// flag, its children, and how many children each of its first children has.
// nullopt when the area is gone (a page replaced it) or does not answer.
std::optional<uint64_t> WebAreaSignature(AXUIElementRef area, Clock::time_point until) {
  AXUIElementSetMessagingTimeout(area, static_cast<float>(std::chrono::duration<double>(kWebSampleFor).count()));
  CFAny children, busy;
  if (AXUIElementCopyAttributeValue(area, CFSTR("AXChildren"), children.OutParam()) != kAXErrorSuccess || !children ||
      CFGetTypeID(children.get()) != CFArrayGetTypeID())
    return std::nullopt;
  uint64_t h = 1469598103934665603ULL;
  if (AXUIElementCopyAttributeValue(area, CFSTR("AXElementBusy"), busy.OutParam()) == kAXErrorSuccess && busy &&
      CFGetTypeID(busy.get()) == CFBooleanGetTypeID())
    h = Mix(h, CFBooleanGetValue(static_cast<CFBooleanRef>(busy.get())) ? 2 : 1);
  const CFArrayRef list = static_cast<CFArrayRef>(children.get());
  const CFIndex n = CFArrayGetCount(list);
  h = Mix(h, static_cast<uint64_t>(n));
  for (CFIndex i = 0; i < n && i < kWebSampleChildren && Clock::now() < until; i++) {
    CFTypeRef c = CFArrayGetValueAtIndex(list, i);
    if (!IsElement(c)) continue;
    h = Mix(h, CFHash(c));
    AXUIElementSetMessagingTimeout(static_cast<AXUIElementRef>(c),
                                   static_cast<float>(std::chrono::duration<double>(kWebSampleFor).count()));
    CFIndex count = -1;
    if (AXUIElementGetAttributeValueCount(static_cast<AXUIElementRef>(c), CFSTR("AXChildren"), &count) !=
        kAXErrorSuccess)
      count = -1;
    h = Mix(h, static_cast<uint64_t>(count + 1));
  }
  return h;
}

}  // namespace

void MacBackend::OnNotification(AXObserverRef observer, AXUIElementRef element, CFStringRef notification,
                                void* refcon) {
  auto* w = static_cast<Watched*>(refcon);
  if (!w || !w->backend || !notification) return;
  w->backend->Count(*w, element, Str(notification));
}

void MacBackend::Count(Watched& w, AXUIElementRef element, const std::string& name) {
  w.stamp++;
  bool windowish = IsWindowNotification(name);
  // A destroyed window or menu: known only when this backend read it as one
  // (asking the element now would fail: it is gone).
  if (!windowish && name == "AXUIElementDestroyed" && element) {
    const ElementId id = elements_.Find(element);
    const std::string* role = id ? elements_.Role(id) : nullptr;
    windowish = role && IsSurfaceRole(*role);
  }
  if (windowish) w.windowStamp++;
  w.last = Clock::now();
  w.recent.push_back(name);
  while (w.recent.size() > kRecentEvents) w.recent.pop_front();
}

Error MacBackend::Register(Watched& w, const std::vector<std::string>& names, Clock::time_point deadline,
                           AXError& unanswered) {
  unanswered = kAXErrorSuccess;
  // Each registration is a message to the app.
  SetTimeoutFor(w.app.get(), deadline);
  for (const std::string& name : names) {
    if (Clock::now() >= deadline || unanswered != kAXErrorSuccess) {
      // Not asked: no time left, or the app just did not answer (the rest would fail the same way).
      if (unanswered == kAXErrorSuccess) w.refused.push_back(name + ": the deadline passed");
      w.retry.push_back(name);
      continue;
    }
    CFRef<CFStringRef> n = MakeCFString(name);
    const AXError e = AXObserverAddNotification(w.observer.get(), w.app.get(), n.get(), &w);
    if (e == kAXErrorSuccess || e == kAXErrorNotificationAlreadyRegistered) {
      w.added.push_back(name);
      continue;
    }
    w.refused.push_back(name + ": " + AXErrorName(e));
    if (e == kAXErrorAPIDisabled) return AXFailure(e, "registering for notifications");
    if (e == kAXErrorCannotComplete || e == kAXErrorInvalidUIElement) {
      unanswered = e;
      if (e == kAXErrorCannotComplete) w.retry.push_back(name);
    }
  }
  // An app that is gone (kAXErrorInvalidUIElement) will not answer a retry either.
  if (unanswered == kAXErrorInvalidUIElement) w.retry.clear();
  return {};
}

Error MacBackend::Watch(const AppInfo& app, Clock::time_point deadline) {
  auto found = watched_.find(app.pid);
  if (found != watched_.end()) {
    Watched& w = *found->second;
    if (w.retry.empty() || Clock::now() < w.retryAfter) return {};
    // A registration cut short (the deadline, a busy app): asked again,
    // briefly; the names it still cannot register wait for a later Watch.
    std::vector<std::string> names;
    names.swap(w.retry);
    w.refused.erase(std::remove_if(w.refused.begin(), w.refused.end(),
                                   [&](const std::string& r) {
                                     return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
                                       return r.compare(0, n.size() + 1, n + ":") == 0;
                                     });
                                   }),
                    w.refused.end());
    AXError unanswered = kAXErrorSuccess;
    Error err = Register(w, names, std::min(deadline, Clock::now() + kRetryFor), unanswered);
    AXUIElementSetMessagingTimeout(w.app.get(), static_cast<float>(kMessagingTimeoutS));
    w.retryAfter = Clock::now() + kRetryEvery;
    return err;
  }
  if (Error err = Trusted()) return err;
  if (app.pid <= 0 || app.pid > 0x7fffffff) return {ErrorCode::kInvalidArgument, "no app has that pid"};
  AXUIElementRef appEl = AppElement(app.pid);
  if (!appEl) return {ErrorCode::kAppNotFound, "cannot reach pid " + std::to_string(app.pid)};
  auto w = std::make_unique<Watched>();
  w->backend = this;
  w->pid = app.pid;
  AXError e = AXObserverCreate(static_cast<pid_t>(app.pid), &MacBackend::OnNotification, w->observer.OutParam());
  if (e != kAXErrorSuccess || !w->observer) {
    w->observer.reset();
    return AXFailure(e == kAXErrorSuccess ? kAXErrorFailure : e, "creating an AXObserver");
  }
  w->app = CFRef<AXUIElementRef>::Retain(appEl);
  AXError unanswered = kAXErrorSuccess;
  if (Error err = Register(*w, std::vector<std::string>(std::begin(kNotifications), std::end(kNotifications)), deadline,
                           unanswered))
    return err;
  if (w->added.empty()) {
    // The observer is released with `w`; nothing was registered.
    if (unanswered != kAXErrorSuccess) {
      // AX answers a process that is not running as it answers one that hangs.
      std::vector<RunningApp> running;
      if (!system_->RunningApps(running) &&
          std::none_of(running.begin(), running.end(), [&](const RunningApp& r) { return r.pid == app.pid; }))
        return {ErrorCode::kAppNotFound, "no running app has pid " + std::to_string(app.pid)};
      return AXFailure(unanswered, "registering for notifications");
    }
    if (Clock::now() >= deadline)
      return {ErrorCode::kTimeout, "the deadline passed before any notification was registered"};
    return {ErrorCode::kActionNotSupported, NameOf(app.pid) + " accepts none of the notifications asked for"};
  }
  // The first retry of what was cut short comes with the next Watch.
  w->retryAfter = Clock::now();
  // The callback runs on this thread (the worker), while WaitEvents or a job boundary runs its run loop.
  w->runLoop = CFRef<CFRunLoopRef>::Retain(CFRunLoopGetCurrent());
  CFRunLoopAddSource(w->runLoop.get(), AXObserverGetRunLoopSource(w->observer.get()), kCFRunLoopDefaultMode);
  watched_.emplace(app.pid, std::move(w));
  return {};
}

bool MacBackend::IsWebApp(Watched& w) {
  if (w.web) return true;
  auto asked = manualAccessibility_.find(w.pid);
  if ((asked != manualAccessibility_.end() && asked->second) || chromiumReady_.count(w.pid)) return w.web = true;
  if (w.engineChecked) return false;
  w.engineChecked = true;
  auto running = running_.find(w.pid);
  if (running == running_.end()) {
    std::vector<RunningApp> apps;
    if (system_->RunningApps(apps)) return false;
    for (const RunningApp& r : apps)
      if (r.pid == w.pid) return w.web = EngineOf(r.bundlePath, r.bundleId) != WebEngine::kNone;
    return false;
  }
  return w.web = EngineOf(running->second.bundlePath, running->second.bundleId) != WebEngine::kNone;
}

void MacBackend::SampleWebArea(Watched& w) {
  if (!IsWebApp(w)) return;
  const Clock::time_point now = Clock::now();
  if (now < w.nextWebSample) return;
  w.nextWebSample = now + kWebSampleEvery;
  const Clock::time_point by = now + kWebSampleFor;
  if (!w.webArea) {
    CFAny window;
    SetTimeoutFor(w.app.get(), by);
    for (CFStringRef attr : {CFSTR("AXFocusedWindow"), CFSTR("AXMainWindow")}) {
      if (AXUIElementCopyAttributeValue(w.app.get(), attr, window.OutParam()) != kAXErrorSuccess) window.reset();
      if (window && IsElement(window.get())) break;
      window.reset();
    }
    AXUIElementSetMessagingTimeout(w.app.get(), static_cast<float>(kMessagingTimeoutS));
    bool filled = false;
    if (!window || !FindWebArea(static_cast<AXUIElementRef>(window.get()), by, filled, &w.webArea)) {
      // No web area (yet; a window of the app's own UI): nothing to compare, and the search is not cheap.
      w.webArea.reset();
      w.nextWebSample = now + kWebFindEvery;
      return;
    }
  }
  const std::optional<uint64_t> signature = WebAreaSignature(w.webArea.get(), by);
  if (!signature) {
    // The area went (a new page): the next sample finds the new one and compares it with this one's last.
    w.webArea.reset();
    return;
  }
  if (w.webSignature && *w.webSignature != *signature) Count(w, nullptr, kWebAreaChanged);
  w.webSignature = signature;
}

Error MacBackend::WaitEvents(int64_t pid, uint64_t sinceStamp, Clock::time_point until, AppEventState& out) {
  out = AppEventState{};
  auto it = watched_.find(pid);
  if (it == watched_.end())
    return {ErrorCode::kInvalidArgument, "the app with pid " + std::to_string(pid) + " is not watched"};
  Watched* w = it->second.get();
  // What is pending first (notifications queue while nobody runs the loop),
  // then slices until something new arrives or `until` passes. A web app's
  // web area is sampled on the way, and once more at the end, so a wait
  // that overran its slices still compared the content before returning.
  DrainRunLoop();
  SampleWebArea(*w);
  while (w->stamp <= sinceStamp) {
    const Clock::time_point now = Clock::now();
    if (now >= until) {
      SampleWebArea(*w);
      break;
    }
    const auto slice = std::min<Clock::duration>(kWaitSlice, until - now);
    const double seconds = std::chrono::duration<double>(slice).count();
    // A run loop with no source in the mode returns at once: wait the slice instead.
    if (CFRunLoopRunInMode(kCFRunLoopDefaultMode, seconds, true) == kCFRunLoopRunFinished)
      std::this_thread::sleep_for(slice);
    SampleWebArea(*w);
  }
  out.watching = true;
  if (w->web) out.quietFloorMs = kWebQuietFloorMs;
  out.stamp = w->stamp;
  out.windowStamp = w->windowStamp;
  if (w->last) out.msSinceLast = std::chrono::duration<double, std::milli>(Clock::now() - *w->last).count();
  out.recent.assign(w->recent.begin(), w->recent.end());
  return {};
}

void MacBackend::Unwatch(int64_t pid) {
  auto it = watched_.find(pid);
  if (it == watched_.end()) return;
  std::unique_ptr<Watched> w = std::move(it->second);
  watched_.erase(it);
  // Unregistering is a message per notification: short, and given up at the
  // first one that is not answered (releasing the observer ends them anyway).
  AXUIElementSetMessagingTimeout(w->app.get(), 0.25f);
  for (const std::string& name : w->added) {
    CFRef<CFStringRef> n = MakeCFString(name);
    const AXError e = AXObserverRemoveNotification(w->observer.get(), w->app.get(), n.get());
    if (e == kAXErrorCannotComplete || e == kAXErrorInvalidUIElement || e == kAXErrorAPIDisabled) break;
  }
  // Back to the backend's own timeout for this app element.
  AXUIElementSetMessagingTimeout(w->app.get(), static_cast<float>(kMessagingTimeoutS));
  if (w->runLoop)
    CFRunLoopRemoveSource(w->runLoop.get(), AXObserverGetRunLoopSource(w->observer.get()), kCFRunLoopDefaultMode);
  w->backend = nullptr;
  // `w` goes here: the observer, the app element and the run loop are released.
}

bool MacBackend::WatchedNotifications(int64_t pid, std::vector<std::string>& added,
                                      std::vector<std::string>& refused) const {
  auto it = watched_.find(pid);
  if (it == watched_.end()) return false;
  added = it->second->added;
  refused = it->second->refused;
  return true;
}

}  // namespace axsnap
