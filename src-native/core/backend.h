// The backend interface: the primitive operations every platform provides.
// The core (walk.h, window_choice.h) owns the policies built on top of them.
//
// Threading: a backend is used from exactly one native thread (the worker in
// worker.h), never the JavaScript thread. AT-SPI over D-Bus, Xlib and the AX
// API are all confined to that thread.
//
// Platform differences:
// - Linux (linux/atspi_backend): elements are AT-SPI objects (bus name +
//   path) reached over the accessibility bus with GDBus; reads are pipelined,
//   so ReadNodes/ReadChildren on many elements cost about one round trip.
// - macOS (mac/mac_backend): one AXUIElementCopyMultipleAttributeValues per
//   element; the batch is a loop. Window choice has real focus inputs,
//   recovery steps exist, and the captured window is a CoreGraphics window
//   chosen apart from the AX window (capture_choice.h).
// - fake (fake/): a scripted tree with injected faults, for tests of the core.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "ocr.h"
#include "types.h"
#include "window_choice.h"

namespace axsnap {

using Clock = std::chrono::steady_clock;

// Children of one element, and where they came from.
struct ChildList {
  std::vector<ElementId> ids;
  std::vector<std::string> via;  // parallel to ids; empty string = "children"
  // Parallel to ids when not empty: the row of the whole list a child is in
  // (or a cell of), -1 for none; the walk sets it as the child's rowIndex.
  // For lists whose rows were read from a window (total set) and whose
  // children cannot say their row themselves (GTK3 tree views' cells).
  std::vector<int64_t> rowIndex;
  std::optional<int64_t> total;  // when only some rows were read
  // When children were left out: each listed child's index among all of the
  // parent's children (parallel to ids). Empty when ids are all of them.
  std::vector<int64_t> positions;
  // Children the backend knew to be hidden without reading them (Linux: the
  // bulk cache's states) and did not list: they would not print.
  int64_t hiddenLeftOut = 0;
  // Of a list, the children that are not rows (a header, a caption), by index
  // among all of the parent's children (sorted), hidden ones included: from a
  // backend that knows every child's role without reading it (Linux: the bulk
  // cache). "(showing A-B of M items)" counts rows, not children; the walk
  // adds the ones it reads itself.
  std::vector<int64_t> nonRows;
  // A long list only counted, not listed (ids empty): the walk asks for the
  // children it keeps by index (Backend::ChildrenAt).
  std::optional<int64_t> unlisted;
};

// A parent with at least this many children is a long list: the walk keeps
// only its children on screen (walk.cc), and a backend may count such a list
// instead of listing it (ChildList::unlisted).
constexpr size_t kLongChildList = 256;

struct PointerEvent {
  enum class Kind { kClick, kWheel, kDrag, kMove } kind = Kind::kClick;
  double x = 0, y = 0;      // screen points
  double toX = 0, toY = 0;  // drag end
  int button = 1;           // 1 left, 2 middle, 3 right
  int count = 1;            // clicks
  double dx = 0, dy = 0;    // wheel steps
};

// The steps that bring back a window an app hides, in the order the core
// runs them (snapshot.cc). A backend performs the ones its platform has.
enum class RecoveryStep { kUnhide, kActivate, kOpen, kUnminimize, kRaise, kMainAndFocused };
const char* RecoveryStepName(RecoveryStep step);

// "granted" | "denied" | "unknown" | "not_required" per permission.
struct PermissionStatus {
  std::string accessibility = "not_required";
  std::string screenRecording = "not_required";
  // Linux: where window frames, stacking and focus come from ("x11",
  // "gnome-shell", "unknown") and why, in a sentence; empty elsewhere.
  std::string windowSource;
  std::string windowDetail;
  // Linux Wayland: GNOME's compositor offers Mutter's ScreenCast and RemoteDesktop on the session bus.
  bool mutter = false;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Called on the worker thread before each job (the addon's calls and the
  // backend's own destruction); what it returns runs after the job on the
  // same thread, and must not need the backend: the closing job destroys it.
  // macOS: one autorelease pool per job.
  virtual std::function<void()> BeginJob() { return {}; }
  virtual const char* Platform() const = 0;

  // Connect to the platform's accessibility service. Fails with
  // kNoAccessibilityBus (Linux) or a permission error, never aborts.
  virtual Error Connect() = 0;
  // Connect, bounded by `deadline`: a session bus that accepts the socket but
  // never answers fails the call by then (Linux). Default: Connect().
  virtual Error ConnectWithin(Clock::time_point deadline) { return Connect(); }

  virtual Error ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) = 0;
  // Set while the last ListApps listed apps without the accessibility service
  // (Linux: X11 apps with no tree, no registry or bus): its error. An app
  // asked for by name or pid and not among them gets this error, not
  // kAppNotFound: it may be one the absent service would have listed.
  virtual Error AccessibilityMissing() const { return {}; }
  // The app that has keyboard focus, if the platform can tell.
  virtual Error FocusedApp(AppInfo& out, bool& found, Clock::time_point deadline) = 0;
  virtual Error Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) = 0;
  // What listWindows lists (and a snapshot's `window` selector picks from):
  // Windows() plus surfaces a backend finds only by searching, such as a menu
  // bar's open menu that lives inside its window (Linux; WindowInfo::inParent).
  // Never needed by window choice, which keeps the parent for those anyway.
  virtual Error ListedWindows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
    return Windows(app, out, deadline);
  }

  // Batched reads. out[i] belongs to ids[i]; errs[i] is set for an element
  // that failed (gone, unresponsive) without failing the batch. The whole
  // call returns an error only when nothing could be read (bus gone, deadline).
  virtual Error ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out, std::vector<Error>& errs,
                          Clock::time_point deadline) = 0;
  virtual Error ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out, std::vector<Error>& errs,
                             Clock::time_point deadline) = 0;
  // Just the frames of these elements (out[i] empty when one has none or could
  // not be read), for the walk's search of a long list: a hidden element's
  // frame included, which ReadNodes may leave out. Default: ReadNodes.
  virtual Error ReadFrames(const std::vector<ElementId>& ids, std::vector<std::optional<Rect>>& out,
                           Clock::time_point deadline) {
    std::vector<NodeAttributes> attrs;
    std::vector<Error> errs;
    out.assign(ids.size(), std::nullopt);
    if (Error err = ReadNodes(ids, attrs, errs, deadline)) return err;
    for (size_t i = 0; i < ids.size() && i < attrs.size(); i++)
      if (!(i < errs.size() && errs[i])) out[i] = attrs[i].frame;
    return {};
  }
  // The children of `parent` at `indices` (out[i] for indices[i]; errs[i] set
  // for one that could not be read). Only for a list ReadChildren returned as
  // unlisted; a backend that never does need not implement it.
  virtual Error ChildrenAt(ElementId parent, const std::vector<int64_t>& indices, std::vector<ElementId>& out,
                           std::vector<Error>& errs, Clock::time_point deadline) {
    return {ErrorCode::kActionNotSupported, "this backend lists children whole"};
  }

  // Screen scale (pixels per point) for a window.
  virtual double Scale(const WindowInfo& window) = 0;

  // Capture the window's pixels as RGBA rows (stride = width*4), clipped to the
  // screen. Bounded by `deadline` where the platform can wait (macOS); X11's
  // shared-memory copy is local and does not wait.
  virtual Error Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                        Clock::time_point deadline) = 0;

  // Where a backend has no engine at all: nothing to install, the window is read without its pixels' text.
  static constexpr const char* kNoOcrHint =
      "take the snapshot with ocr: \"auto\" or false (no text is read from its pixels) and look at its screenshot";
  // Text read off `image`, a capture of `window` (core/ocr.h RecognizeWindowText
  // captures it; a snapshot may pass the pixels it already has): lines in
  // window-relative points. Runs the platform's engine (Linux: Tesseract,
  // loaded at run time; macOS: Vision); kOcrUnavailable where there is none.
  virtual Error RecognizeText(const WindowInfo& window, const OcrImage& image, const OcrOptions& options,
                              OcrResult& out) {
    return {ErrorCode::kOcrUnavailable, "this platform has no OCR engine", kNoOcrHint};
  }
  // Whether RecognizeText can read `languages` here, loading the engine if it must (before a capture).
  virtual Error OcrReady(const std::vector<std::string>& languages) {
    return {ErrorCode::kOcrUnavailable, "this platform has no OCR engine", kNoOcrHint};
  }

  // The toolkit of the app that owns the element (Linux: AT-SPI Application.ToolkitName and .Version, "GTK"
  // "3.24.38"), for what its actions do: GTK 3 runs an action inside the accessibility call that asked
  // for it. kActionNotSupported where the platform does not say.
  virtual Error Toolkit(ElementId id, std::string& name, std::string& version, Clock::time_point deadline) {
    return {ErrorCode::kActionNotSupported, "this platform does not name its apps' toolkits"};
  }

  // Actions.
  virtual Error DoAction(ElementId id, const std::string& name, Clock::time_point deadline) = 0;
  virtual Error SetText(ElementId id, const std::string& text, Clock::time_point deadline) = 0;
  virtual Error SetNumber(ElementId id, double value, Clock::time_point deadline) = 0;
  virtual Error Focus(ElementId id, Clock::time_point deadline) = 0;
  // Selects a row (or a row-less table's cell) in its list: AT-SPI Selection,
  // AXSelectedRows on macOS. kActionNotSupported where the list cannot.
  virtual Error Select(ElementId id, Clock::time_point deadline) = 0;
  // Synthetic input at screen points. `window` is raised and verified on top
  // first, and every event goes only to a window owned by window.pid that is
  // the observed window (or its dialog, menu or popup); otherwise nothing is
  // sent (kWindowNotFound / kAppNotFound). Bounded by `deadline`: a display
  // that stops answering fails the call (kTimeout), it never hangs the worker.
  virtual Error Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) = 0;
  virtual Error Keys(const WindowInfo& window, const std::string& combo,
                     Clock::time_point deadline) = 0;  // "ctrl+shift+t"
  // Types UTF-8 text in chunks, checking the deadline (and the window) between
  // them; `typed` is the number of characters (code points) sent, also on error.
  virtual Error TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline,
                         size_t& typed) = 0;

  // Counting of reads by kind, for where a snapshot's time goes (the bench):
  // reset when a snapshot starts, taken when it ends. Default: none counted.
  virtual void ResetReadStats() {}
  virtual std::vector<ReadStat> TakeReadStats() { return {}; }

  // Forget handles (a snapshot was released).
  virtual void Release(const std::vector<ElementId>& ids) = 0;
  // How many handles the backend's table holds (what Release frees): a handle
  // no snapshot carries shows here and nowhere else. -1 for a backend without
  // a table (the fake's ids are its script's).
  virtual int64_t HandleTableSize() const { return -1; }

  // --- Live reads for the action path ---

  // The element that has keyboard focus in the app `pid`, asked of the app
  // now (never a cache). found = false when the app reports no focus.
  virtual Error FocusedElement(int64_t pid, ElementId& out, bool& found, Clock::time_point deadline) {
    found = false;
    return {ErrorCode::kActionNotSupported, "this platform cannot read the focused element"};
  }
  // What pointer input at the screen point (x, y) over `window` reaches,
  // asked of the app now (never a cache): chain[0] is the deepest element
  // under the point, then its ancestors up to the window (bounded; the window
  // last when reached), or up to the first of `stopAt` (elements the caller
  // already knows, such as a snapshot's printed ones: each level climbed
  // costs the app a round trip). Empty when nothing of the app is there.
  // Input at pixels is judged by this, not by a snapshot's frames: the UI may
  // have moved since (Linux: Component.GetAccessibleAtPoint; macOS:
  // AXUIElementCopyElementAtPosition).
  virtual Error ElementAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                               std::vector<ElementId>& chain, Clock::time_point deadline) {
    chain.clear();
    return {ErrorCode::kActionNotSupported, "this platform cannot tell what is under a point"};
  }
  // Inserts `text` at the end of an editable text element's content without
  // rewriting what is there (AT-SPI EditableText.InsertText; macOS: the
  // selected-text range at the end, then AXSelectedText). kActionNotSupported
  // where the element has no such interface.
  virtual Error InsertText(ElementId id, const std::string& text, Clock::time_point deadline) {
    return {ErrorCode::kActionNotSupported, "the element cannot insert text"};
  }
  // While on, reads skip every cache and ask the app (identity checks before
  // acting). The worker turns it on for readElement and focusedElement jobs.
  virtual void SetLiveReads(bool live) {}
  // Whether a text field named like a password ("Password", "PIN", "密码")
  // is treated as secure (value never read). On by default; the snapshot
  // request's `secureNames` turns it off for one snapshot.
  virtual void SetSecureNameHeuristic(bool on) {}

  // --- Change events (settling, waits, what opened) ---
  //
  // A backend that can listen to the platform's change events for an app
  // (AT-SPI signals on the accessibility bus; an AXObserver on macOS) counts
  // them per pid. Events are only gathered while the worker runs a job, so
  // WaitEvents dispatches the platform's queue (GMainContext / CFRunLoop) on
  // the worker thread until something new arrives or `until` passes.

  // Starts listening to `app`'s change events (idempotent; cheap when already
  // watching). kActionNotSupported where the platform has no events.
  virtual Error Watch(const AppInfo& app, Clock::time_point deadline) {
    return {ErrorCode::kActionNotSupported, "this platform reports no change events"};
  }
  // Dispatches pending events, then waits until the app's stamp exceeds
  // `sinceStamp` or `until` passes, whichever is first; fills `out` either way.
  // Not an error when nothing arrived (out.stamp == sinceStamp).
  virtual Error WaitEvents(int64_t pid, uint64_t sinceStamp, Clock::time_point until, AppEventState& out) {
    return {ErrorCode::kActionNotSupported, "this platform reports no change events"};
  }
  // Stops listening to an app (its events cost nothing afterwards).
  virtual void Unwatch(int64_t pid) {}

  // --- Starting apps (launchApp) ---

  // What the system can start: desktop entries (Linux, GIO), application
  // bundles (macOS, NSWorkspace). Reads no accessibility state.
  virtual Error Launchable(std::vector<LaunchableApp>& out, Clock::time_point deadline) {
    return {ErrorCode::kActionNotSupported, "this platform cannot list the apps it could start"};
  }
  // The app the system's launcher knows by `id` though Launchable() does not
  // list it (macOS: Launch Services by bundle id, for bundles outside the
  // folders listed); `out` empty when it knows none.
  virtual Error LaunchableById(const std::string& id, std::vector<LaunchableApp>& out, Clock::time_point deadline) {
    return {ErrorCode::kActionNotSupported, "this platform finds launchable apps only by listing them"};
  }
  // Starts the app `request.id` names (one Launchable() id or path) and
  // gives the pid of the process started (0 when the platform started it
  // through another process and could not tell). Does not wait for windows.
  virtual Error Launch(const LaunchRequest& request, int64_t& pid, Clock::time_point deadline) {
    return {ErrorCode::kActionNotSupported, "this platform cannot start apps"};
  }

  // --- Hooks with defaults; macOS overrides them. ---

  // The inputs of window choice. The default (Linux, fake) derives them from
  // FocusedApp and Windows, the active window standing in for the focused one.
  virtual Error GatherWindows(const AppInfo& app, WindowCandidates& out, Clock::time_point deadline);
  // Whether the window has an on-screen counterpart the platform can capture.
  // `why` says what is missing. Default: every window can be captured.
  virtual Error CaptureTarget(const WindowInfo& window, bool& capturable, std::string& why) {
    capturable = true;
    return {};
  }
  // Recovery steps; kActionNotSupported for a step the platform lacks.
  virtual bool Recovers() const { return false; }
  virtual Error Recover(RecoveryStep step, const AppInfo& app, const std::optional<WindowInfo>& window,
                        Clock::time_point deadline) {
    return {ErrorCode::kActionNotSupported, "no recovery on this platform"};
  }
  // After every recovery step ran and still no window is usable: why, when
  // the platform can tell more than "none" (macOS: the window server lists
  // windows of the app that AX does not show here). Empty: nothing to add.
  virtual std::string NoWindowHere(const AppInfo& app) { return {}; }
  // A window id none of `windows` carries, that may still name one of them:
  // an id the platform gave the window earlier under another name (Linux: an
  // X window listed by its xid before its app joined the accessibility bus).
  // Its index in `windows`, or -1.
  virtual int WindowByEarlierId(const AppInfo& app, const std::vector<WindowInfo>& windows, const std::string& id,
                                Clock::time_point deadline) {
    return -1;
  }
  // How this window's screenshot and synthetic input travel, named for the
  // action results that used it ("x11", "gnome-mutter", "quartz"); empty when
  // the platform has one way only.
  virtual std::string Route(const WindowInfo& window, Clock::time_point deadline) { return {}; }
  // Waits for the app to settle after recovery (bounded by the caller).
  virtual void Settle(std::chrono::milliseconds ms) {}
  // Runs before window choice when a snapshot will walk one of the app's
  // windows: a backend may start reads the walk begins with, so that they
  // overlap window choice (the AT-SPI backend's direct connection and bulk
  // read). Nothing it does may change what the snapshot finds.
  virtual void ExpectWalk(const AppInfo& app) {}
  // Runs after window choice, before the walk: e.g. asks Chromium to build its
  // tree. Sets `contentPending` (with a note) when the tree is known incomplete.
  virtual void PrepareWalk(const AppInfo& app, const WindowInfo& window, Clock::time_point deadline,
                           std::vector<std::string>& notes, bool& contentPending) {}
  // Permission status; `prompt` asks the system to show its prompts.
  virtual Error Permissions(PermissionStatus& out, bool prompt) { return {}; }
  // The app's menu bar element (macOS), walked beside the window; 0 = none.
  virtual Error MenuBar(const AppInfo& app, ElementId& out, Clock::time_point deadline) {
    out = 0;
    return {};
  }
};

}  // namespace axsnap
