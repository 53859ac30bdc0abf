// The fake backend: a scripted desktop for testing the core's policies without
// one. The script (built from JSON by the N-API layer) holds apps, windows and
// element trees, plus faults: an element whose attribute read fails, an
// element that dies after some reads, a read that hangs, an app that stops
// answering, minimized and hidden windows, no accessibility bus at all.
// Actions and input are recorded in a log instead of touching anything.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "../core/backend.h"

namespace axsnap {

struct FakeFault {
  std::string failAttribute;   // this attribute's read fails; the element stays readable
  int dieAfterReads = -1;      // the element is gone after this many reads of it
  int hangMs = 0;              // each read of this element blocks this long (bounded by the deadline)
  bool childrenError = false;  // reading its children fails
  // "children" or "read": that read answers the deadline's error though the deadline has not passed yet, as
  // the AT-SPI batch does when its deadline timer fires a little early (or within its 2 ms margin).
  std::string earlyDeadline;
  int actionHangMs = 0;  // an action or set is recorded (it left), then the app stalls this long
  // The action answers, then its app answers nothing more until key or pointer input reaches it, as a GTK 3
  // app does whose action ran a modal dialog's loop inside the accessibility call (input closes the dialog).
  bool holdsApp = false;
  bool refuseFocus = false;  // Focus answers success but focus does not move (as some toolkits do)
  bool ignoreSet = false;    // a set is answered success and recorded, but the value stays as it was
  std::string failRead;      // every read fails at once: "unresponsive" (no answer) or "error"
  // Change events after an action on this element (DoAction, sets, insert, focus, select):
  int churnEvents = 0;      // the app keeps changing: this many more events follow the action's own...
  int churnIntervalMs = 0;  // ...one every this many ms
  // The app rebuilds its windows after replying (galculator's Paper mode): for this long after an action
  // its windows show only their first child (a half-built window), then the rest comes back with an event.
  int rebuildAfterMs = 0;
};

struct FakeElement {
  NodeAttributes attrs;
  std::vector<size_t> children;
  std::vector<std::string> via;  // parallel to children; "" = children
  FakeFault fault;
  int reads = 0;
};

struct FakeWindow {
  size_t root = 0;
  WindowInfo info;
  // What OCR reads in it (the world JSON's `ocr`): frames in window-relative points.
  std::vector<OcrLine> ocr;
  // Whether the world gave the window `ocr` at all: a window without it has no text in its pixels, and
  // reading it is not logged (the fake-backed tests of everything else see no OCR entries).
  bool readable = false;
  // The world's `captureFails`: reading its pixels fails as a capture does (the window server refused it).
  bool captureFails = false;
};

struct FakeApp {
  AppInfo info;
  bool focused = false;
  std::vector<FakeWindow> windows;
  double quietFloorMs = 0;              // AppEventState::quietFloorMs: an app that batches its changes
  std::string toolkit, toolkitVersion;  // the world's `toolkit: { name, version }`; Toolkit answers them
  bool held = false;                    // an element's holdsApp action ran: nothing answers until input comes
};

struct FakeScript {
  std::vector<FakeElement> elements;
  std::vector<FakeApp> apps;
  double scale = 1;
  bool noBus = false;
  int typeMsPerChar = 0;  // synthetic typing takes this long per character (deadline tests)
  bool noEvents = false;  // a platform without change events: Watch is kActionNotSupported
  // Long child lists (kLongChildList or more) are counted, not listed, and read
  // by index (ChildList::unlisted, ChildrenAt), as the Linux backend does.
  bool countLongLists = false;
  // No OCR engine: recognizeText answers kOcrUnavailable, as Linux without Tesseract does.
  bool ocrUnavailable = false;
};

class FakeBackend : public Backend {
 public:
  explicit FakeBackend(FakeScript script) : script_(std::move(script)) {}
  const char* Platform() const override { return "fake"; }
  Error Connect() override;
  Error ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) override;
  Error FocusedApp(AppInfo& out, bool& found, Clock::time_point deadline) override;
  Error Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) override;
  Error ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out, std::vector<Error>& errs,
                  Clock::time_point deadline) override;
  Error ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out, std::vector<Error>& errs,
                     Clock::time_point deadline) override;
  Error ChildrenAt(ElementId parent, const std::vector<int64_t>& indices, std::vector<ElementId>& out,
                   std::vector<Error>& errs, Clock::time_point deadline) override;
  double Scale(const WindowInfo&) override { return script_.scale; }
  Error Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                Clock::time_point deadline) override;
  Error DoAction(ElementId id, const std::string& name, Clock::time_point deadline) override;
  Error Toolkit(ElementId id, std::string& name, std::string& version, Clock::time_point deadline) override;
  Error SetText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  Error SetNumber(ElementId id, double value, Clock::time_point deadline) override;
  Error Focus(ElementId id, Clock::time_point deadline) override;
  Error Select(ElementId id, Clock::time_point deadline) override;
  Error Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) override;
  Error Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) override;
  Error TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline, size_t& typed) override;
  Error FocusedElement(int64_t pid, ElementId& out, bool& found, Clock::time_point deadline) override;
  // The deepest element whose frame holds the point (the later sibling on top
  // of an earlier one; invisible ones skipped), and its ancestors up to the window.
  Error ElementAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                       std::vector<ElementId>& chain, Clock::time_point deadline) override;
  Error InsertText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  void Release(const std::vector<ElementId>& ids) override;
  // The window's scripted `ocr` lines whose centre lies in a region (all when there are none) and in no
  // blank, in reading order (top to bottom, then left to right). Each call is logged ("ocr <pid> ..."),
  // so tests count OCR runs in fakeLog().
  Error OcrReady(const std::vector<std::string>& languages) override;
  Error RecognizeText(const WindowInfo& window, const OcrImage& image, const OcrOptions& options,
                      OcrResult& out) override;

  // Change events: every scripted mutation (Replace, an action's effect, input) is one event of its app's pid;
  // churn and rebuild faults add events later, delivered when WaitEvents reaches their time.
  Error Watch(const AppInfo& app, Clock::time_point deadline) override;
  Error WaitEvents(int64_t pid, uint64_t sinceStamp, Clock::time_point until, AppEventState& out) override;
  void Unwatch(int64_t pid) override;

  // The desktop changes: a new script replaces the old one. Element ids are
  // positions in the script, so a handle taken before may now name another
  // element or none, as a real handle can after the UI changed.
  // Every app of the new script gets one event (a window event when its windows changed).
  void Replace(FakeScript script);

  // What actions and input the fake received, oldest first. Thread-safe.
  std::vector<std::string> Log();
  // How many handles were released so far (tests check snapshots release theirs).
  size_t ReleasedCount();

 private:
  // Element ids are index + 1; app ids come after them.
  FakeElement* Find(ElementId id);
  Error Touch(FakeElement& e, Clock::time_point deadline);
  // One element of a batch read: found, within the deadline, and touched; else nullptr and `err`.
  FakeElement* ReadOne(ElementId id, Clock::time_point deadline, Error& err);
  void Record(std::string entry);
  // Input goes only to a window of a running app: the window's app and the window itself must still exist.
  Error InputWindow(const WindowInfo& window);
  // After an action left: the app may stall (fault.actionHangMs) past the caller's deadline.
  Error AfterSend(const FakeElement& e, Clock::time_point deadline);

  // Events of one pid. `pending` are events scheduled by faults, due at their time.
  struct Events {
    bool watching = false;
    uint64_t stamp = 0, windowStamp = 0;
    bool any = false;
    Clock::time_point last;
    std::deque<std::string> recent;
    std::multimap<Clock::time_point, std::pair<std::string, bool>> pending;  // kind, about a window
    Clock::time_point rebuildUntil;                                          // windows half-built until then
  };
  // Counts an event of `pid` now (or schedules it at `at`).
  void Emit(int64_t pid, const std::string& kind, bool window = false);
  void Schedule(int64_t pid, Clock::time_point at, const std::string& kind, bool window = false);
  // Moves due scheduled events into the counts.
  void Deliver(Events& ev, Clock::time_point now);
  // The pid of the app whose windows hold element index `index` (0 = none).
  int64_t PidOf(size_t index) const;
  // Whether an element's holdsApp action left the app `pid` answering nothing.
  bool Held(int64_t pid) const;
  // Input reached the app (a press or keys, not a pointer move): what held it closed.
  void Release(int64_t pid, bool input);
  // An action's effect on the element's app: one event, plus its churn and rebuild faults.
  void Effect(const FakeElement& e, const std::string& kind);
  // Whether element index `index` is a window root of an app that is rebuilding now.
  bool HalfBuilt(size_t index);

  FakeScript script_;
  std::map<int64_t, Events> events_;
  std::mutex logMutex_;
  std::vector<std::string> log_;
  std::vector<ElementId> released_;
};

}  // namespace axsnap
