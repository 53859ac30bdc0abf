// Synthetic input: before any event, the app still runs and the observed
// window still exists; the app and its window are brought in front and
// verified (the key window is the window, its sheet, or the window holding the
// surface); the point is not covered by another app or another window; then
// the pointer, key or text events go out through cg_input.cc, the front
// checked again before each chunk of text.
//
// Apple: CGEvent.h (posted at kCGHIDEventTap, in cg_input.cc); HIServices'
// AXUIElement.h (AXUIElementCopyElementAtPosition on the system-wide element),
// AXAttributeConstants.h (kAXFocusedWindowAttribute, kAXFrontmostAttribute,
// kAXMainAttribute, kAXWindowAttribute, kAXParentAttribute),
// AXActionConstants.h (kAXRaiseAction); CGWindow.h (the on-screen list, front
// to back); NSRunningApplication activation behind MacSystem.

#include <unistd.h>

#include <algorithm>
#include <thread>

#include "cg_input.h"
#include "mac_internal.h"

namespace axsnap {

namespace {

constexpr auto kFrontWait = std::chrono::milliseconds(2000);  // activation is asynchronous (and may switch Spaces)
constexpr auto kFrontPoll = std::chrono::milliseconds(50);
// How far up AXParent a surface's window is looked for (a popover sits a few levels deep).
constexpr int kOwnerDepth = 12;
// Window levels (CGWindowLevel.h): applications' windows sit from kCGNormalWindowLevel (0) through floating,
// modal panel and utility windows (3, 8, 19), below kCGDockWindowLevel (20); the Dock, the menu bar (24) and
// its status items (25) are in front of every app at all times, so they say nothing of which app is.
constexpr int kDockLayer = 20;
// An app in front with no Dock icon (review 3, M7): often a system alert rather than the user's app.
const char* const kBackgroundFrontHint =
    "an app without a Dock icon is in front: often a system alert or a permission question (on macOS 15 and "
    "later, the recurring Screen Recording question about bypassing the private window picker; see "
    "docs/macos.md, Troubleshooting). Answer it (or ask the user to), then take a new snapshot and try again";

}  // namespace

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

MacBackend::AppLabel MacBackend::LabelOf(int64_t pid, const std::string& owner) {
  NameOf(pid);  // refreshes running_ when it does not know the pid
  auto it = running_.find(pid);
  const RunningApp* app = it != running_.end() ? &it->second : nullptr;
  AppLabel out;
  out.background = app && !app->regular;
  out.name = app && !app->name.empty() ? app->name : !owner.empty() ? owner : "a process";
  out.details = "(";
  if (app && !app->bundleId.empty()) out.details += app->bundleId + ", ";
  out.details += "pid " + std::to_string(pid);
  if (out.background) out.details += ", no Dock icon";
  out.details += ")";
  return out;
}

MacBackend::InFront MacBackend::WhoIsInFront(const FrontState& state, int64_t target) {
  InFront out;
  AppLabel label;
  // Where keys go: the app AX names focused.
  if (state.found) {
    label = LabelOf(state.focused.pid, "");
    out.subject = label.name + " " + label.details;
    out.text = out.subject + " is in front";
  } else {
    // AX names none (a process AX does not serve): the window server's frontmost application window, if it is
    // another app's. One of the target's own in front says nothing of who has the focus.
    std::vector<ScreenWindow> list;
    const ScreenWindow* front = nullptr;
    if (ScreenWindows(list).code == ErrorCode::kNone)
      for (const ScreenWindow& w : list)
        if (w.layer >= 0 && w.layer < kDockLayer && w.alpha > 0) {
          front = &w;
          break;
        }
    if (front && front->pid != target) {
      label = LabelOf(front->pid, front->owner);
      out.text = "AX names no app in front; the frontmost application window is " + label.name + "'s " + label.details;
    } else {
      out.text = "AX names no app in front and the window server shows no other app's window in front";
    }
  }
  if (label.background) out.hint = kBackgroundFrontHint;
  return out;
}

Error MacBackend::InputTarget(const WindowInfo& window, Clock::time_point deadline) {
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed before any input; nothing was sent"};
  auto known = running_.find(window.pid);
  const std::string app = known != running_.end() && !known->second.name.empty()
                              ? known->second.name + " (pid " + std::to_string(window.pid) + ")"
                              : "the app with pid " + std::to_string(window.pid);
  // Asked afresh: the list of the last snapshot may hold an app that quit.
  if (!system_->ProcessExists(window.pid))
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
  if (state.appInFront) {
    const std::string what = "the window \"" + window.title + "\" did not become the app's key window";
    if (cutByDeadline) return {ErrorCode::kTimeout, what + " before the deadline; nothing was sent"};
    return {ErrorCode::kInputFailed, what + "; nothing was sent"};
  }
  const InFront front = WhoIsInFront(state, window.pid);
  const std::string what = "the app could not be brought to the front" + activation + "; " + front.text;
  if (cutByDeadline) return {ErrorCode::kTimeout, what + " before the deadline; nothing was sent", front.hint};
  return {ErrorCode::kInputFailed, what + ", so nothing was sent", front.hint};
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

KeyLayout MacBackend::ReadKeyLayout() const {
  KeyLayout layout;
  system_->KeyboardLayout(layout);
  return layout;
}

Error MacBackend::Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) {
  return KeysWithLayout(window, combo, deadline, ReadKeyLayout());
}

Error MacBackend::KeysWithLayout(const WindowInfo& window, const std::string& combo, Clock::time_point deadline,
                                 const KeyLayout& layout) {
  // Refused before the window is raised: a key the layout cannot give changes nothing.
  if (Error err = CheckKeys(combo, layout)) return err;
  if (Error err = InputTarget(window, deadline)) return err;
  if (Error err = Front(window, deadline)) return err;
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed before the keys; nothing was sent"};
  return PostKeys(combo, layout);
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
    const InFront front = WhoIsInFront(state, window.pid);
    if (front.subject.empty())
      return {ErrorCode::kInputFailed, "the app left the front (" + front.text + ")", front.hint};
    return {ErrorCode::kInputFailed, front.subject + " came to the front", front.hint};
  });
  if (!err) return {};
  if (typed == 0) {
    if (err.code == ErrorCode::kInvalidArgument) return err;
    if (err.code == ErrorCode::kTimeout)
      return {ErrorCode::kTimeout, "the deadline passed before any text was typed; nothing was sent"};
    return {err.code, err.message + "; nothing was sent", err.hint};
  }
  // Some text went: the app has it, whatever follows.
  return {ErrorCode::kDeliveryUncertain,
          "typed " + std::to_string(typed) + " of " + std::to_string(total) + " characters, then " + err.message +
              "; the rest was not sent",
          err.hint};
}

}  // namespace axsnap
