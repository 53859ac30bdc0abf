// The macOS backend: the accessibility tree through the AX C API
// (HIServices/AXUIElement.h), windows on screen through CGWindowList, input
// through CGEvent, and the Objective-C parts (AppKit, ScreenCaptureKit)
// behind MacSystem. Plain C++ over C APIs, so the same source builds on Linux
// against the fake CoreFoundation/AX layer in test/native/macfake.
//
// Every AX call is a synchronous IPC to the target app (1–5 ms, 6 s default
// timeout). Each app element gets AXUIElementSetMessagingTimeout (2 s, less
// when the deadline is nearer); attributes come in one
// AXUIElementCopyMultipleAttributeValues per element; the first app that
// times out in a batch fails the rest of that app's batch at once.
//
// The methods are defined by job in mac_*.cc; mac_internal.h lists the files
// and what they share.
#pragma once

#include <deque>
#include <memory>
#include <set>
#include <unordered_map>

#include "../core/backend.h"
#include "../core/capture_choice.h"
#include "apple.h"
#include "cf_ref.h"
#include "mac_system.h"

namespace axsnap {

// Interned AX elements. AX hands out a new AXUIElementRef for every copy of
// the same element, so identity is CFEqual, found through CFHash.
//
// A listed window or surface is pinned: its entry outlives the release of its
// handle, so the next listing finds the same element (CFEqual) under the
// same handle, and a window without a window-server number keeps its id
// ("e<handle>") while the window exists (review 2, N6-N8). An entry whose
// handle was released while pinned goes when its last pin does. A window's
// number ("w<number>", the id every process shares: review 3, M3) is kept
// with its entry once found.
class ElementTable {
 public:
  // Returns the id of `element`, adding it (retained) when new.
  ElementId Intern(AXUIElementRef element);
  // The id of `element` when it is in the table, else 0 (never adds).
  ElementId Find(AXUIElementRef element) const;
  AXUIElementRef Get(ElementId id) const;
  // `secure`: the read found a positive sign of a secure text field (not only its subrole).
  void Remember(ElementId id, const std::string& role, const std::string& subrole, bool secure = false);
  const std::string* Role(ElementId id) const;
  bool IsSecure(ElementId id) const;
  // Forgets the element, unless it is pinned: then it goes at its last Unpin,
  // unless it is interned again before that.
  void Release(ElementId id);
  void Pin(ElementId id);
  void Unpin(ElementId id);
  // The window server's number of a window element, 0 while unknown.
  CGWindowID WindowNumber(ElementId id) const;
  void SetWindowNumber(ElementId id, CGWindowID number);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    CFRef<AXUIElementRef> ref;
    CFHashCode hash = 0;
    std::string role, subrole;
    bool secure = false;
    int pins = 0;
    bool released = false;  // released while pinned, not interned since
    CGWindowID windowNumber = 0;
  };
  void Erase(std::unordered_map<ElementId, Entry>::iterator it);
  std::unordered_map<ElementId, Entry> entries_;
  std::unordered_multimap<CFHashCode, ElementId> byHash_;
  ElementId next_ = 1;
};

// A bounded sample of a web area's subtree (mac_events.cc): prefix[i]
// hashes the first i+1 nodes of a breadth-first walk; `cut` when time or an
// unanswered read ended it before its bounds of nodes and depth did.
struct WebSignature {
  std::vector<uint64_t> prefix;
  bool cut = false;
};

class MacBackend : public Backend {
 public:
  explicit MacBackend(std::unique_ptr<MacSystem> system);
  ~MacBackend() override;
  std::function<void()> BeginJob() override;

  const char* Platform() const override { return "macos"; }
  Error Connect() override;
  Error ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) override;
  Error FocusedApp(AppInfo& out, bool& found, Clock::time_point deadline) override;
  Error Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) override;
  Error ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out, std::vector<Error>& errs,
                  Clock::time_point deadline) override;
  Error ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out, std::vector<Error>& errs,
                     Clock::time_point deadline) override;
  double Scale(const WindowInfo& window) override;
  Error Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                Clock::time_point deadline) override;
  Error DoAction(ElementId id, const std::string& name, Clock::time_point deadline) override;
  Error SetText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  Error SetNumber(ElementId id, double value, Clock::time_point deadline) override;
  Error Focus(ElementId id, Clock::time_point deadline) override;
  Error Select(ElementId id, Clock::time_point deadline) override;
  Error Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) override;
  // Character keys go through the keyboard layout read on the worker thread,
  // which a Mac answers only on the main thread (ReadKeyLayout): elsewhere they
  // are refused. The N-API layer reads the layout on the JavaScript thread and
  // calls KeysWithLayout.
  Error Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) override;
  // M5: the current keyboard layout (MacSystem::KeyboardLayout), read on the
  // calling thread. The one MacBackend method called on the JavaScript thread,
  // beside a running job: it touches only the system, never this backend's state.
  KeyLayout ReadKeyLayout() const;
  Error KeysWithLayout(const WindowInfo& window, const std::string& combo, Clock::time_point deadline,
                       const KeyLayout& layout);
  Error TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline, size_t& typed) override;
  void Release(const std::vector<ElementId>& ids) override;
  int64_t HandleTableSize() const override { return static_cast<int64_t>(elements_.size()); }

  Error FocusedElement(int64_t pid, ElementId& out, bool& found, Clock::time_point deadline) override;
  // AXUIElementCopyElementAtPosition on the window's app (the deepest element
  // of that app there), then AXParent up to the window.
  Error ElementAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                       std::vector<ElementId>& chain, Clock::time_point deadline) override;
  Error InsertText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  void SetLiveReads(bool live) override;
  void SetSecureNameHeuristic(bool on) override { secureNames_ = on; }

  Error GatherWindows(const AppInfo& app, WindowCandidates& out, Clock::time_point deadline) override;
  // Vision over the capture (MacSystem::CreateOcrEngine); kOcrUnavailable where the system has none.
  Error OcrReady(const std::vector<std::string>& languages) override;
  Error RecognizeText(const WindowInfo& window, const OcrImage& image, const OcrOptions& options,
                      OcrResult& out) override;
  Error CaptureTarget(const WindowInfo& window, bool& capturable, std::string& why) override;
  bool Recovers() const override { return true; }
  Error Recover(RecoveryStep step, const AppInfo& app, const std::optional<WindowInfo>& window,
                Clock::time_point deadline) override;
  std::string NoWindowHere(const AppInfo& app) override;
  std::string Route(const WindowInfo& window, Clock::time_point deadline) override { return "quartz"; }
  void Settle(std::chrono::milliseconds ms) override;
  void PrepareWalk(const AppInfo& app, const WindowInfo& window, Clock::time_point deadline,
                   std::vector<std::string>& notes, bool& contentPending) override;
  Error Permissions(PermissionStatus& out, bool prompt) override;
  // Through MacSystem (NSWorkspace): bundles in the standard folders, and opening one.
  Error Launchable(std::vector<LaunchableApp>& out, Clock::time_point deadline) override;
  Error LaunchableById(const std::string& id, std::vector<LaunchableApp>& out, Clock::time_point deadline) override;
  Error Launch(const LaunchRequest& request, int64_t& pid, Clock::time_point deadline) override;
  Error MenuBar(const AppInfo& app, ElementId& out, Clock::time_point deadline) override;

  // Change events: one AXObserver per watched pid, its run loop source on the
  // run loop of the thread that called Watch (the worker), dispatched while
  // WaitEvents runs that run loop and at the start and end of every job
  // (BeginJob), so nothing waits in the observer's port longer than the
  // agent's pause between calls.
  Error Watch(const AppInfo& app, Clock::time_point deadline) override;
  Error WaitEvents(int64_t pid, uint64_t sinceStamp, Clock::time_point until, AppEventState& out) override;
  void Unwatch(int64_t pid) override;
  // The notifications registered for a watched pid, and those the app
  // refused ("AXMenuOpened: kAXErrorNotificationUnsupported"). For tests and notes.
  bool WatchedNotifications(int64_t pid, std::vector<std::string>& added, std::vector<std::string>& refused) const;

 private:
  // One watched app. Owned through a unique_ptr: its address is the refcon
  // the observer's callback gets, so it must not move.
  struct Watched {
    MacBackend* backend = nullptr;
    int64_t pid = 0;
    CFRef<AXObserverRef> observer;
    CFRef<AXUIElementRef> app;       // the element the notifications were added on
    CFRef<CFRunLoopRef> runLoop;     // where the observer's source was added
    std::vector<std::string> added;  // notification names registered
    std::vector<std::string> refused;
    // Names not registered for want of time or of an answer (the deadline,
    // kAXErrorCannotComplete, or never tried after it): a later Watch asks
    // again, from `retryAfter` on.
    std::vector<std::string> retry;
    Clock::time_point retryAfter;
    uint64_t stamp = 0, windowStamp = 0;
    std::optional<Clock::time_point> last;
    std::deque<std::string> recent;
    // Chromium and Electron post nothing when web content is added, so their
    // silence alone proves nothing: the web area is sampled while waiting and
    // a change of its signature counts as an event (WebAreaChanged).
    bool web = false, engineChecked = false;
    CFRef<AXUIElementRef> webArea;
    std::optional<WebSignature> webSignature;
    Clock::time_point nextWebSample;
  };
  static void OnNotification(AXObserverRef observer, AXUIElementRef element, CFStringRef notification, void* refcon);
  void Count(Watched& w, AXUIElementRef element, const std::string& name);
  // Registers `names` on the app element until `deadline`; what is not
  // registered for want of time or answer goes to w.retry. Fails only for a
  // missing permission.
  Error Register(Watched& w, const std::vector<std::string>& names, Clock::time_point deadline, AXError& unanswered);
  // Whether `pid` runs a web engine (a Chromium or Electron bundle, or an app
  // that accepted AXManualAccessibility).
  bool IsWebApp(Watched& w);
  // Samples the web area of a web app's focused window, at most every
  // kWebSampleEvery; counts an event when its signature changed.
  void SampleWebArea(Watched& w);
  // Windows() without the other surfaces: what window choice looks at.
  // `subroles`, when given, gets each window's AXSubrole (parallel to the windows added).
  // `elsewhere`, when given, gets the windows kept although AXWindows left them out
  // (KeepElsewhere), not visible.
  Error AppWindows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline,
                   std::vector<std::string>* subroles = nullptr, std::vector<WindowInfo>* elsewhere = nullptr);
  // AXWindows lists the current Space's windows only (review 3, M1): a pinned
  // window it leaves out keeps its pin while it is alive - its element
  // answers, and the window server still lists its number when it has one -
  // for the kKeptElsewhere most recently listed; the rest are unpinned.
  // Returns what stays pinned of the absent ones; `listed`, when given, gets
  // them read afresh (interned: the caller releases them).
  std::set<ElementId> KeepElsewhere(const AppInfo& app, const std::set<ElementId>& found, Clock::time_point deadline,
                                    std::vector<WindowInfo>* listed);
  // Gives each window of `list` without an id the window server's number as
  // its id ("w<number>"): the element table's, else _AXUIElementGetWindow's,
  // else the one window of the app at its frame (MatchWindowNumber). A number
  // an earlier entry has is not given twice (an entry of the same element
  // gets its id); no number: the id stays empty (the core's "e<handle>").
  void NumberWindows(int64_t pid, const std::vector<WindowInfo*>& list);
  // Sheets, popovers and open menus of the app, appended to `out` (which holds its windows).
  void Surfaces(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline);
  // Pins what a listing of `pid` found in `pinned` (its windows or its
  // surfaces); a complete listing also unpins what it no longer found.
  void Repin(std::set<ElementId>& pinned, const std::set<ElementId>& found, bool complete);
  void UnpinApp(int64_t pid);

  // The app element for `pid`, created once, with its messaging timeout set.
  AXUIElementRef AppElement(int64_t pid);
  // The system-wide element, made once with the global messaging timeout.
  AXUIElementRef SystemWide();
  void SetTimeoutFor(AXUIElementRef element, Clock::time_point deadline);
  Error ReadOne(ElementId id, AXUIElementRef element, int64_t pid, NodeAttributes& out, Clock::time_point deadline);
  Error ChildrenOf(ElementId id, AXUIElementRef element, ChildList& out);
  Error WindowInfoOf(AXUIElementRef window, int64_t pid, WindowInfo& out, std::string* subrole = nullptr);
  Error CopyAttribute(AXUIElementRef element, CFStringRef attribute, CFAny& out);
  Error SetValue(ElementId id, CFTypeRef value, Clock::time_point deadline);
  // kInputFailed when another app's element is under the point.
  Error Covered(const WindowInfo& window, double x, double y);
  // "Name (pid N)" for messages.
  std::string NameOf(int64_t pid);
  // Whether `w` (a key window) is the target, its sheet, or the window that
  // holds the target surface.
  bool IsWindowOrChild(AXUIElementRef w, ElementId target);
  // The AXWindow a surface (popover, sheet, menu of a window) sits in; none
  // for a window, or for a menu of the app itself.
  CFRef<AXUIElementRef> OwnerWindow(ElementId target);
  bool IsMenuOrPopover(const WindowInfo& window) const;
  // The window server's windows, front to back: those on screen, or with
  // `everySpace` every window of the session (every Space, and ordered-out
  // windows), with onScreen set.
  Error ScreenWindows(std::vector<ScreenWindow>& out, bool everySpace = false);
  // Ordinary windows (layer 0, not tiny) of `pid` that the window server
  // lists and does not show: windows on another Space (or ordered out).
  int WindowsElsewhere(int64_t pid);
  // The running apps from the process table (issue 35 M6), each pid asked
  // afresh unless it was known as no app (notApps_); `alive` gets every pid.
  Error RunningAppsNow(std::vector<RunningApp>& out, std::set<int64_t>* alive = nullptr);
  // Before any input: the app still runs (kAppNotFound) and the observed
  // window still exists (kWindowNotFound); nothing is sent otherwise.
  Error InputTarget(const WindowInfo& window, Clock::time_point deadline);
  // Brings the app and its window forward and verifies both, bounded by 2 s
  // and by `deadline` (kTimeout when the deadline is what stopped it).
  Error Front(const WindowInfo& window, Clock::time_point deadline);
  // Whether input would reach the window now: the app is the focused app and
  // its key window is the window (or its sheet). One check, no activation.
  struct FrontState {
    bool found = false;       // some app has the focus
    AppInfo focused;          // that app
    bool appInFront = false;  // it is the window's app
    bool ready = false;       // and the window is its key window
  };
  Error CheckFront(const WindowInfo& window, Clock::time_point deadline, FrontState& out);
  // Who is in front when input is refused (review 3, M7): `text` names it ("X (bundle id, pid N) is in
  // front"), `subject` is that app alone (empty when AX names none), `hint` set when it has no Dock icon.
  struct InFront {
    std::string text, subject, hint;
  };
  InFront WhoIsInFront(const FrontState& state, int64_t target);
  // An app for such messages: its name (`owner`, the window server's name for it, when no app list has it)
  // and "(bundle id, pid N[, no Dock icon])".
  struct AppLabel {
    std::string name, details;
    bool background = false;  // no Dock icon (activationPolicy not regular)
  };
  AppLabel LabelOf(int64_t pid, const std::string& owner);
  Error Trusted() const;

  // Shared with the end-of-job step BeginJob returns, which may run after
  // this backend is gone (the closing job).
  std::shared_ptr<MacSystem> system_;
  std::unique_ptr<OcrEngine> ocr_;  // from system_->CreateOcrEngine(), on first use
  ElementTable elements_;
  CFRef<CFArrayRef> batch_;                          // the attribute names of one batched read
  std::unordered_map<int64_t, RunningApp> running_;  // from the last ListApps
  // Issue 35 M6: pids the system said are no application, and when: asked
  // again only as RunningAppsNow's rules say, so a listing asks about new
  // processes and apps, not every daemon each time.
  struct NotApp {
    Clock::time_point firstSeen, asked;
  };
  std::unordered_map<int64_t, NotApp> notApps_;
  bool listedOnce_ = false;
  std::unordered_map<int64_t, CFRef<AXUIElementRef>> apps_;
  // The windows and the surfaces each app was last listed with, pinned in elements_.
  struct Pins {
    std::set<ElementId> windows, surfaces;
    // When each pinned window was last in AXWindows (a count of the app's listings).
    std::unordered_map<ElementId, uint64_t> lastListed;
    uint64_t listings = 0;
  };
  std::unordered_map<int64_t, Pins> pins_;
  CFRef<AXUIElementRef> systemWide_;
  // Apps asked to expose a Chromium tree (and whether they accepted), and
  // those that have shown one.
  std::unordered_map<int64_t, bool> manualAccessibility_;
  std::set<int64_t> chromiumReady_;
  // Apps we set AXEnhancedUserInterface on, whatever they answered (Chrome
  // answers an error and switches anyway), and that did not read it as on
  // before: it is reset when the backend closes.
  std::set<int64_t> enhanced_;
  // Apps that refused a batched read: since when, and how many elements were
  // read singly since. The batch is offered again after a while (ReadOne).
  struct NoBatch {
    Clock::time_point since;
    int skipped = 0;
  };
  std::unordered_map<int64_t, NoBatch> noBatch_;
  // Live reads (SetLiveReads): the one cache of attribute reads, the role the
  // element table remembers for ChildrenOf, serves only roles read while on.
  bool live_ = false;
  bool secureNames_ = true;  // SetSecureNameHeuristic
  std::set<ElementId> liveRead_;
  std::unordered_map<int64_t, std::unique_ptr<Watched>> watched_;
};

}  // namespace axsnap
