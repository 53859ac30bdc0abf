// The fake backend: a scripted desktop for testing the core's policies without
// one. The script (built from JSON by the N-API layer) holds apps, windows and
// element trees, plus faults: an element whose attribute read fails, an
// element that dies after some reads, a read that hangs, an app that stops
// answering, minimized and hidden windows, no accessibility bus at all.
// Actions and input are recorded in a log instead of touching anything.
#pragma once

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
  int actionHangMs = 0;        // an action or set is recorded (it left), then the app stalls this long
  bool refuseFocus = false;    // Focus answers success but focus does not move (as some toolkits do)
  bool ignoreSet = false;      // a set is answered success and recorded, but the value stays as it was
  std::string failRead;        // every read fails at once: "unresponsive" (no answer) or "error"
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
};

struct FakeApp {
  AppInfo info;
  bool focused = false;
  std::vector<FakeWindow> windows;
};

struct FakeScript {
  std::vector<FakeElement> elements;
  std::vector<FakeApp> apps;
  double scale = 1;
  bool noBus = false;
  int typeMsPerChar = 0;  // synthetic typing takes this long per character (deadline tests)
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
  double Scale(const WindowInfo&) override { return script_.scale; }
  Error Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                Clock::time_point deadline) override;
  Error DoAction(ElementId id, const std::string& name, Clock::time_point deadline) override;
  Error SetText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  Error SetNumber(ElementId id, double value, Clock::time_point deadline) override;
  Error Focus(ElementId id, Clock::time_point deadline) override;
  Error Select(ElementId id, Clock::time_point deadline) override;
  Error Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) override;
  Error Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) override;
  Error TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline, size_t& typed) override;
  Error FocusedElement(int64_t pid, ElementId& out, bool& found, Clock::time_point deadline) override;
  Error InsertText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  void Release(const std::vector<ElementId>& ids) override;

  // The desktop changes: a new script replaces the old one. Element ids are
  // positions in the script, so a handle taken before may now name another
  // element or none, as a real handle can after the UI changed.
  void Replace(FakeScript script) { script_ = std::move(script); }

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

  FakeScript script_;
  std::mutex logMutex_;
  std::vector<std::string> log_;
  std::vector<ElementId> released_;
};

}  // namespace axsnap
