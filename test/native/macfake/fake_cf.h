// A test double of the Apple C APIs the macOS backend calls (CoreFoundation,
// HIServices AX, CoreGraphics windows/events/permissions), for running the
// backend's C++ on Linux. It implements, with C linkage, what
// src-native/mac/decls/apple_c.h declares, over a scripted "world" (apps,
// element trees, the CG window list, faults) that a test installs, and it
// records what the backend did (actions, sets, events, prompts) in a log.
//
// Built with -DAXSNAP_APPLE_DECLS so apple.h takes the project's declaration
// header even where an SDK might exist. Not implemented (used only by the
// Objective-C capture fallback): CGWindowListCreateImage, CGImage*,
// CGColorSpace*, CGBitmapContextCreate, CGContext*.
//
// Divergences from Apple
// ----------------------
// Stricter (a bug in the caller aborts here with a message on stderr, where
// Apple would crash later, corrupt memory or silently misbehave):
//  - Every CF entry point checks its CF arguments against a registry of live
//    objects. NULL where Apple requires an object (CFRetain, CFRelease,
//    CFGetTypeID, CFEqual, CFHash, the CFString/CFArray/... getters), a freed
//    object, an over-release, or a pointer that was never a CF object aborts.
//    Freed objects are kept in a quarantine (the last 65536) so their
//    addresses are not reused at once and a use-after-free is named as such.
//  - A CF object of the wrong type where a specific type is expected
//    (CFStringGetLength on an array, AX calls on a non-AXUIElement) aborts.
//  - Only kCFStringEncodingUTF8 is accepted (the only encoding apple_c.h
//    declares); CFArrayCreate/CFDictionaryCreate accept only
//    &kCFTypeArrayCallBacks / &kCFTypeDictionary{Key,Value}CallBacks;
//    allocators must be kCFAllocatorDefault (NULL). Anything else aborts.
//  - An index or range outside an array or string (CFArrayGetValueAtIndex,
//    CFStringGetBytes, CFStringGetCharacters) aborts, where Apple raises.
//  - CFStringGetCStringPtr always returns NULL, so the slow path
//    (CFStringGetCString) is always exercised.
//  - AXUIElementSetMessagingTimeout on an element applies to that reference
//    only; references copied from it (children, windows) do not inherit it.
//    Apple documents the timeout as per element and does not say whether
//    copies inherit; set the global one on the system-wide element, or set it
//    on each reference, to be right either way.
//  - AXUIElementCopyAttributeValues: index > count is kAXErrorIllegalArgument
//    (Apple documents "outside the array's range"); index == count gives an
//    empty array.
//  - CGEventKeyboardSetUnicodeString keeps only the first 20 UTF-16 units
//    (what the receiving app uses); the log shows the truncated text.
// Looser or simplified:
//  - CFHash of arrays and dictionaries is their count; of events and event
//    sources it is the address, and CFEqual of them is identity.
//  - No CFNull, attributed strings or text markers; of the parameterized
//    attributes only AXStringForRange (over a string AXValue).
//  - isExternalRepresentation: CFStringCreateWithBytes skips a UTF-8 byte
//    order mark; CFStringGetBytes never writes one.
//  - AXUIElementCreateApplication for a pid with no app returns an element
//    whose calls fail with kAXErrorCannotComplete (what Apple returns for a
//    process that is not running).
//  - A destroyed element (dieAfterReads) makes the whole
//    AXUIElementCopyMultipleAttributeValues call fail with
//    kAXErrorInvalidUIElement rather than filling every slot.
//  - A missing (unsupported) attribute in a batch slot is an AXValue wrapping
//    kAXErrorNoValue, as Apple does in practice (undocumented); read singly it
//    is kAXErrorAttributeUnsupported. A present attribute with no value is
//    kAXErrorNoValue both ways.
//  - AXUIElementGetPid and AXUIElementSetMessagingTimeout are local (no IPC on
//    Apple either): they ignore hangs, faults and the trusted flag.
//    AXUIElementGetPid on the system-wide element is kAXErrorIllegalArgument.
//  - When the world is untrusted every AX IPC returns kAXErrorAPIDisabled and
//    CGEventPost drops the event (logged as "dropped event ...").
//  - The prompt of AXIsProcessTrustedWithOptions is logged only when the
//    world is untrusted (Apple shows it only then).
//  - CGWindowListCopyWindowInfo: kCGWindowName is present only when Screen
//    Recording is "granted" (as on macOS 10.15+); kCGWindowIsOnscreen only for
//    on-screen windows; kCGWindowListExcludeDesktopElements drops layers < 0.
//    Only the keys apple_c.h declares are filled.
//  - CGEventCreateKeyboardEvent gives the key's own flags as a Mac is
//    reported to (Karabiner EventViewer, rustdesk #2770, Hammerspoon #3101):
//    arrows SecondaryFn|NumericPad, Home/End/Page Up/Page Down/forward
//    Delete/Help and F1-F20 SecondaryFn, keypad keys NumericPad; modifier key
//    events are keyDown/keyUp with the modifier's key code (a Mac reports
//    them as flagsChanged).
//  - CGEventCreateMouseEvent: the click state defaults to 1 for button
//    down/up events, 0 otherwise (set kCGMouseEventClickState to change it).
//  - CFURLCreateWithString rejects only empty strings and strings holding
//    spaces, control characters or <>"{}|\^`; it does no RFC 3986 parsing.
//    A base URL is kept as given; CFURLGetString answers the relative part
//    and CFURLCopyAbsoluteURL resolves it simply (a scheme: as is; "//":
//    the base's scheme; "/": the base's scheme and host; else the base up to
//    its last "/"), with no "." / ".." or query handling.
//  - Setting a value of another kind than the attribute holds (a string on a
//    number) is kAXErrorIllegalArgument; Apple leaves that to each app.
//  - The app element's AXHidden and AXFrontmost are derived from the world
//    unless scripted, and setting them unhides / activates the app (an app
//    scripted with recoverOn ignores them until its step); activation lands at
//    once unless the app has activationDelayMs.
//  - AXUIElementCopyElementAtPosition on the system-wide element finds the app
//    through the CG window list (frontmost on-screen window under the point),
//    then its deepest element by AXPosition/AXSize; Apple asks the window
//    server and the app.
//  - AXSelectedText set on an element whose AXValue is a string replaces the
//    AXSelectedTextRange (absent: the end) in AXValue, puts the range after
//    the inserted text and updates AXNumberOfCharacters when the element has
//    one; AXSelectedTextRange is set only within the value (else
//    kAXErrorIllegalArgument). Apple leaves both to each app; AppKit text
//    fields and views behave this way.
//  - AXObserver: notifications come from the world's script (an app's
//    `notifications`, timed from AXObserverCreate) or PostNotification, not
//    from changes made to the world; one notification is one source firing.
//    AXObserverCreate does not check the pid; AXObserverAddNotification on an
//    element of another pid than the observer's is kAXErrorIllegalArgument,
//    on the system-wide element kAXErrorNotificationUnsupported (as
//    documented). Registrations are kept per (element, name); a
//    notification reaches a registration on the posting element or on its
//    app element. Registration and removal are AX calls (hangs, faults,
//    trust apply); delivery is not.
//  - CFRunLoop: one run loop per thread, immortal; only sources of
//    AXObservers exist. CFRunLoopRunInMode returns kCFRunLoopRunFinished at
//    once when the mode has no source, else runs until `seconds` pass
//    (kCFRunLoopRunTimedOut) or, with returnAfterSourceHandled, after one
//    notification (kCFRunLoopRunHandledSource). Releasing an observer
//    removes its source from every run loop (Apple documents this).
//  - Keyboard layouts (M5, FakeMacSystem::KeyboardLayout, which stands in for
//    Text Input Sources + UCKeyTranslate): six layouts modelled on the main
//    key block (codes 0-50), the keypad and a few control keys only; no
//    option or control tables, no ISO/JIS keyboard types; the ⌘ table is the
//    plain one except on "Dvorak - QWERTY ⌘" (and Cyrillic on the modelled
//    Russian, whatever Apple's is). Off the process's main thread Apple
//    asserts (a crash); the fake answers "unknown" and logs it.
//  - Issue 35: an app's `reopenWindows` (closed but kept, or on another
//    Space) enter AXWindows exactly when its reopen event (open -b) comes;
//    on a Mac that depends on the app, and a window on another Space comes
//    when activation switches Space. The process table is the world's apps
//    plus `processes`; NSRunningApplication answers for every world app at
//    once (a Mac knows an app only after it checked in with Launch
//    Services), never for a `processes` pid. Launch Services knows every
//    installed entry by bundle id, without case; the folder scan lists those
//    not marked `listed: false`.
//  - _AXUIElementGetWindow (private, undocumented; FakeAXUIElementGetWindow)
//    answers only for AXWindow elements, and kAXErrorFailure for every other
//    element: what it answers on a Mac for sheets, popovers, menus or an
//    element inside a window is not known here, so the backend checks what it
//    gets (a number another window of the listing already has is not taken).
// Scripted faults beyond Apple's own behaviour, for tests: performError and
// setError (the action or set happens, then the call answers an error, as
// AppKit does after a press that opened a modal), batchError (the batched
// read refused as a whole; batchErrorTimes: only the first N times),
// logReads (reads of chosen attributes are logged; the name
// "AXUIElementCopyMultipleAttributeValues" logs each batched read as
// "batch <id>"), chromium.setError (the tree switch answers an error yet
// applies),
// postDelay (slow event posting) and focusMoves (focus taken mid-input),
// and FakeAXCalls() counts every call that would be an IPC on macOS.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "../../../src-native/mac/apple.h"

namespace axsnap {
namespace macfake {

// A value an attribute holds in the world. Element references are by id.
struct FakeValue {
  enum class Kind {
    kNoValue,
    kString,
    kInt,
    kDouble,
    kBool,
    kPoint,
    kSize,
    kRect,
    kRange,
    kUrl,
    kElement,
    kArray,
    kError
  };
  Kind kind = Kind::kNoValue;
  std::string text;                   // kString, kUrl
  int64_t integer = 0;                // kInt, kElement (id), kError (AXError code)
  double number = 0;                  // kDouble
  bool flag = false;                  // kBool
  double x = 0, y = 0, w = 0, h = 0;  // kPoint (x,y), kSize (w,h), kRect; kRange: x=location, w=length
  std::vector<FakeValue> items;       // kArray
  std::string base;                   // kUrl (issue 12 item 10): the base URL `text` is relative to ("": none)

  static FakeValue NoValue() { return {}; }
  static FakeValue String(std::string s);
  static FakeValue Int(int64_t i);
  static FakeValue Double(double d);
  static FakeValue Bool(bool b);
  static FakeValue Point(double x, double y);
  static FakeValue Size(double w, double h);
  static FakeValue RectValue(double x, double y, double w, double h);
  static FakeValue Range(int64_t location, int64_t length);
  static FakeValue Url(std::string s);
  static FakeValue UrlWithBase(std::string relative, std::string base);  // issue 12 item 10
  static FakeValue Element(int64_t id);
  static FakeValue Array(std::vector<FakeValue> items);
  static FakeValue Error(int32_t code);
};

// Faults scripted on one element, or on an app (then they apply to every
// element of the app, the app element included).
struct FakeFaults {
  // After this many reading calls (CopyAttributeValue(s), GetAttributeValueCount,
  // a whole CopyMultipleAttributeValues batch: one each), every call on the
  // element returns kAXErrorInvalidUIElement. -1: never.
  int dieAfterReads = -1;
  std::map<std::string, int32_t> failAttribute;  // name -> AXError, single and batched reads
  bool cannotComplete = false;                   // every call: kAXErrorCannotComplete
  std::set<std::string> failBatchSlots;          // in a batch: AXError(kAXErrorCannotComplete) slot; singly fine
  std::set<std::string> logReads;                // each read of these attributes logs "read <id> <name>"
  int32_t performError = 0;                      // actions are performed, then answered with this AXError
  int32_t setError = 0;                          // sets are applied, then answered with this AXError
  int32_t batchError = 0;                        // CopyMultipleAttributeValues refused as a whole with this AXError
  // Issue 12 item 10: only the first N batched reads (of the element) are refused; 0: every one.
  int batchErrorTimes = 0;
  int batchRefused = 0;  // state: batched reads refused so far
  // Issue 21 N12: a set of AXSelectedTextRange is answered at once but shows
  // in reads only after this many reads of it (Chromium applies a selection
  // in the renderer, later); -1: never (the selection never moves).
  int selectionLagReads = 0;
  std::optional<FakeValue> pendingSelection;  // state: the range set, not showing yet
  int selectionLagLeft = 0;                   // state: reads until it shows
};

struct FakeElement {
  int64_t id = 0;
  int64_t pid = 0;  // the owning app
  std::map<std::string, FakeValue> attrs;
  std::set<std::string> settable;
  std::vector<std::string> actions;
  FakeFaults faults;
  // Children that appear in AXChildren (after the scripted ones) once a
  // Chromium app has been asked for its tree and revealAfterMs has passed.
  std::vector<FakeValue> hiddenChildren;
  // The CG window this AX window is; when absent, the CG window of the same
  // pid whose number is this element's id (the test worlds' convention), else
  // the first of the same pid whose name equals AXTitle.
  std::optional<uint32_t> cgWindow;
  // N3 (second macOS review): web content that keeps changing and posts no
  // notification. > 0: one more of hiddenChildren appears in AXChildren every
  // growEveryMs after the world was installed, whether or not a Chromium tree was asked for.
  int growEveryMs = 0;
  std::chrono::steady_clock::time_point installedAt;  // state: set by InstallWorld
  int reads = 0;                                      // state: attribute reads so far
};

struct FakeChromium {
  int revealAfterMs = 0;
  std::string attribute = "AXManualAccessibility";  // or "AXEnhancedUserInterface"
  // Issue 12 item 3: the switch's set is applied, then answered with this
  // AXError (Chrome answers AXEnhancedUserInterface so and switches anyway).
  int32_t setError = 0;
};

// A notification the app posts, at a time after an observer of it was
// created (AXObserverCreate). Delivered to observers that registered `name`
// on the element or on the app element, while their run loop source runs.
struct FakeNotification {
  int64_t atMs = 0;
  std::string name;
  int64_t element = 0;  // the element that posts it; 0: the app element
};

struct FakeApp {
  int64_t pid = 0;
  std::string name, bundleId, bundlePath;
  bool hidden = false, active = false, regular = true;
  int hungMs = 0;             // every AX call on the app blocks this long (bounded by the messaging timeout)
  int activationDelayMs = 0;  // activation takes effect this long after it is asked for
  std::optional<FakeChromium> chromium;
  // "" (steps have their natural effects), "unhide", "activate", "open",
  // "unminimize", "raise", "main" (the one step that brings the windows back;
  // the others change nothing) or "never".
  std::string recoverOn;
  FakeFaults faults;
  std::vector<FakeNotification> notifications;
  // AXObserverAddNotification answers kAXErrorNotificationUnsupported for these.
  std::set<std::string> refuseNotifications;
  // N11 (second macOS review): AXObserverAddNotification answers kAXErrorCannotComplete for these (a busy app).
  std::set<std::string> busyNotifications;
  // Issue 35 (N1 residue): windows AX does not list here (AppKit lists only
  // ordered-in windows of the current Space: one closed but kept, or on
  // another Space), absent from the app's AXWindows and AXChildren until its
  // reopen event (open -b, Step::kOpen) orders them in: a kept window shown
  // again, or activation switching to that Space. The first becomes main.
  std::vector<int64_t> reopenWindows;
  int64_t rootId = 0;  // the app element
  // State.
  int reads = 0;
  bool recovered = false;
  std::optional<std::chrono::steady_clock::time_point> revealRequestedAt;
};

struct FakeCGWindow {
  uint32_t number = 0;
  int64_t pid = 0;
  int layer = 0;
  double x = 0, y = 0, w = 0, h = 0;  // global top-left points
  std::string name, ownerName;
  bool onScreen = true;
  double alpha = 1;
  bool captureFails = false;  // FakeMacSystem::CaptureWindow fails for it
  // issue 12 items 4, 5, 9 (capture): ScreenCaptureKit as FakeMacSystem models it.
  bool blackWithWindowFilter = false;  // the window filter gives an all-black image (GPU-rendered window)
  double backingScale = 0;             // the window's own pixels per point; 0: its display's (world.scale)
  bool captureHangs = false;           // ScreenCaptureKit never answers a capture of it
  // N16: ScreenCaptureKit answers, but keeps the finished completion handler
  // (and what it captured) alive until FakeCompleteCaptures.
  bool handlerKept = false;
};

// CGEventPost made slow: the first `afterEvents` events go at once, each later
// one blocks `ms` before it is posted (a window server under load).
struct FakePostDelay {
  int64_t afterEvents = 0;
  int64_t ms = 0;
};

// Another app takes the focus once `afterEvents` events were posted (the user
// switched apps while the backend was typing).
struct FakeFocusMove {
  int64_t afterEvents = 1;
  int64_t toPid = 0;
};

// An application bundle the fake system has installed (MacSystem::InstalledApps),
// and, when given, the app that runs once it is opened (OpenApplication moves it
// into FakeWorld::apps). An entry without an app fails to open.
struct FakeInstalled {
  std::string bundleId, name, executable, path;
  // Issue 35 (M4): false for a bundle Launch Services knows (by bundle id)
  // outside the folders MacSystem::InstalledApps reads (/System/Library/CoreServices, deeper folders).
  bool listed = true;
  std::optional<FakeApp> app;
};

struct FakeWorld {
  bool trusted = true;
  std::string screenRecording = "granted";  // "granted" | "denied" | "unknown"
  double scale = 2;
  int64_t focusedPid = 0;  // 0: no focused app
  // An activation asked for and not landed yet (activationDelayMs): pid, when.
  std::optional<std::pair<int64_t, std::chrono::steady_clock::time_point>> pendingFocus;
  bool captureFails = false;
  std::vector<FakeApp> apps;
  // Issue 35 M6: processes that are no application (daemons, tools, an app's
  // process Launch Services no longer lists): in proc_listallpids and
  // kill(pid, 0), never in NSRunningApplication. An app's pid here too is allowed.
  std::vector<int64_t> processes;
  std::vector<FakeInstalled> installed;
  std::map<int64_t, FakeElement> elements;
  std::vector<FakeCGWindow> windows;  // front to back
  // Extra attributes of the system-wide element. AXRole, AXFocusedApplication
  // (the app of focusedPid) and AXFocusedUIElement (that app's) are derived
  // unless given here.
  std::map<std::string, FakeValue> systemWideAttrs;
  std::optional<FakePostDelay> postDelay;
  std::optional<FakeFocusMove> focusMoves;
  // Issue 12 (items 1, 2): CGEventCreateKeyboardEvent returns NULL for these
  // virtual key codes (an event that cannot be made, midway through a combo
  // or a text).
  std::set<int64_t> keyEventFails;
  // M5 (third macOS review): the current keyboard layout, as FakeMacSystem::KeyboardLayout
  // reports it (fake_mac_system.cc lists the names; "none": the input source has no layout data).
  std::string keyboardLayout = "us";
  int64_t eventsPosted = 0;  // state: CGEventPost calls while this world was installed
  // Issue 35 M3: whether the system has the private _AXUIElementGetWindow
  // (FakeMacSystem::AXGetWindow answers FakeAXUIElementGetWindow, else null).
  bool axGetWindow = true;

  FakeApp* App(int64_t pid);
  FakeElement* Element(int64_t id);
};

// M5: the keyboard layouts the fake knows (fake_mac_system.cc), and their names for an error message.
bool IsFakeKeyboardLayout(const std::string& name);
std::string FakeKeyboardLayoutNames();

// issue 12 item 9 (threads): AX calls made on one marked thread (the
// JavaScript thread, marked by the test) since it was marked.
void MarkThread();
int64_t AXCallsOnMarkedThread();

// Replaces the world (checks references, fills the app elements' defaults:
// AXRole AXApplication, AXTitle = name) and clears the log. Throws
// std::invalid_argument on a dangling reference, a duplicate pid or an app
// whose root is missing.
void InstallWorld(FakeWorld world);
void ClearWorld();
// Runs `fn` with the world locked; `world` is null when none is installed.
void WithWorld(const std::function<void(FakeWorld* world)>& fn);

// Recovery steps shared by the AX side (unminimize, raise, main) and
// FakeMacSystem (unhide, activate, open). Call with the world locked.
// `windowId` is the AX window element for the window steps, 0 otherwise.
// Returns false when the app ignored the step (recoverOn names another step).
enum class Step { kUnhide, kActivate, kOpen, kUnminimize, kRaise, kMain };
bool ApplyStep(FakeWorld& world, FakeApp& app, Step step, int64_t windowId);
// The CG window an AX window element is (see FakeElement::cgWindow), or null.
FakeCGWindow* CGWindowOf(FakeWorld& world, const FakeElement& window);

// Issue 35 M3: HIServices' private _AXUIElementGetWindow over the world (the
// MacSystem seam hands it to the backend, as dlsym does on a Mac). An AX call
// (counted; trust, hangs and faults apply, a gone element is
// kAXErrorInvalidUIElement). An AXWindow element answers its CG window's
// number (CGWindowOf); any other element, or a window the window server does
// not list, answers kAXErrorFailure.
AXError FakeAXUIElementGetWindow(AXUIElementRef element, CGWindowID* number);

// Posts `name` from element `element` (0: the app element) of app `pid` now,
// to every observer of that pid; delivered when its run loop next runs.
void PostNotification(int64_t pid, const std::string& name, int64_t element);
// Live AXObservers (their sources are CF objects too, counted in LiveObjects).
int64_t LiveObservers();

void AppendLog(std::string line);
std::vector<std::string> Log();
void ClearLog();

// Live CF objects, immortal ones (CFSTR strings, booleans, the kCGWindow*
// and kAXTrustedCheckOptionPrompt keys) excluded.
int64_t LiveObjects();
// "3 live CF objects: CFString \"AXRole\", AXUIElement pid 100 id 3, ..." (the first 20).
std::string LiveObjectsSummary();

}  // namespace macfake

// The names the test addon calls (see world_from_js.h for the rest).
int64_t FakeCFLiveObjects();
std::string FakeCFLiveObjectsSummary();
// AX calls that reach an app (each one an IPC on macOS), since the process started.
int64_t FakeAXCalls();
std::vector<std::string> FakeWorldLog();
void ClearFakeWorld();
void ClearFakeWorldLog();

}  // namespace axsnap
