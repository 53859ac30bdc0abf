// The AT-SPI half of the Linux backend: the accessibility tree over D-Bus.
//
// Talks to the accessibility bus with GDBus (gio) directly; libatspi is not
// used (it aborts the process when no bus is reachable, keeps its own caches
// and runs on the default main context). The D-Bus API is the one in
// at-spi2-core's xml/ directory; constants come from atspi-constants.h.
//
// Everything runs on the calling thread (the backend's worker): replies are
// dispatched on a private GMainContext that is iterated only inside an
// operation, so no callback ever runs on another thread or between calls.
//
// Screenshots and synthetic input are not AT-SPI: Capture/Pointer/Keys/
// TypeText return kInternal here. LinuxBackend composes this class with the
// X11 layer (x11_display.h) and overrides them.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "../core/backend.h"

namespace axsnap {

class AtspiBackend : public Backend {
 public:
  AtspiBackend();
  ~AtspiBackend() override;
  AtspiBackend(const AtspiBackend&) = delete;
  AtspiBackend& operator=(const AtspiBackend&) = delete;

  const char* Platform() const override { return "linux"; }

  // Session bus (DBUS_SESSION_BUS_ADDRESS) -> org.a11y.Bus.GetAddress (or
  // AT_SPI_BUS_ADDRESS) -> a private connection to the accessibility bus.
  // Also sets org.a11y.Status.IsEnabled so Chromium and Qt expose their trees.
  // Calling it again reconnects (every handle given out before is then gone:
  // kElementGone). Never aborts. Connect() allows 5 s.
  Error Connect() override;
  // Connect bounded by `deadline`: a frozen session bus (accepts the socket,
  // never answers) fails with a message saying it did not answer.
  Error ConnectWithin(Clock::time_point deadline) override;

  Error ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) override;
  Error FocusedApp(AppInfo& out, bool& found, Clock::time_point deadline) override;
  Error Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) override;
  // Windows() plus the open menus of menu bars (GTK3 keeps them inside their window).
  Error ListedWindows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) override;

  // Pipelined: all calls of a batch are in flight together (at most 256 at
  // a time), so a batch costs about one round trip per dependent step, not
  // one per call. Per element: kElementGone (object or app gone),
  // kAppUnresponsive (its app did not answer one call within the per-call
  // timeout: the rest of the batch for that app fails at once), kTimeout
  // (the deadline came first), kInvalidArgument (unknown id). The call
  // itself fails only with kNoAccessibilityBus (bus gone), or kTimeout when
  // the deadline left no element read.
  Error ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out, std::vector<Error>& errs,
                  Clock::time_point deadline) override;
  // From the bulk cache when it holds all of a parent's children (hidden ones
  // left out: ChildList::hiddenLeftOut, positions), else GetChildren; via = "".
  // A node ReadNodes saw less than 500 ms earlier with ChildCount 0 is answered
  // "no children" without a call, and one with ChildCount >= kLongChildList is
  // counted, not listed (ChildList::unlisted: the walk reads what it keeps by
  // index with ChildrenAt). Never from a cache in live mode.
  // A big table that manages its cells (GTK3 tree view) gives its column
  // headers and the cells of its rows on screen, via "visibleRows", with
  // total = its row count and each cell's rowIndex (ReadVisibleTableRows).
  Error ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out, std::vector<Error>& errs,
                     Clock::time_point deadline) override;
  // GetExtents alone (screen coordinates), pipelined.
  Error ReadFrames(const std::vector<ElementId>& ids, std::vector<std::optional<Rect>>& out,
                   Clock::time_point deadline) override;
  // The children at these indices (GetChildAtIndex, pipelined), for a long
  // list ReadChildren only counted.
  Error ChildrenAt(ElementId parent, const std::vector<int64_t>& indices, std::vector<ElementId>& out,
                   std::vector<Error>& errs, Clock::time_point deadline) override;

  double Scale(const WindowInfo& window) override;

  // Not AT-SPI: kInternal. The X11 layer provides these in LinuxBackend.
  Error Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                Clock::time_point deadline) override;
  Error Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) override;
  Error Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) override;
  Error TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline, size_t& typed) override;

  Error DoAction(ElementId id, const std::string& name, Clock::time_point deadline) override;
  // Application.ToolkitName and .Version on the element's app root, asked once per bus name.
  Error Toolkit(ElementId id, std::string& name, std::string& version, Clock::time_point deadline) override;
  Error SetText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  Error SetNumber(ElementId id, double value, Clock::time_point deadline) override;
  Error Focus(ElementId id, Clock::time_point deadline) override;
  Error Select(ElementId id, Clock::time_point deadline) override;

  void Release(const std::vector<ElementId>& ids) override;
  int64_t HandleTableSize() const override { return static_cast<int64_t>(HandleCount()); }

  // The focused element of app `pid`, asked live: Collection.GetMatches
  // (STATE_FOCUSED, count 1) on each of its windows, else a bounded walk of
  // its windows for the FOCUSED state.
  Error FocusedElement(int64_t pid, ElementId& out, bool& found, Clock::time_point deadline) override;
  // Component.GetAccessibleAtPoint from the window down, again on each answer
  // (toolkits answer one level at a time; Chromium may answer deeper), then
  // Accessible.Parent from the deepest up to the window, so no level the
  // descent skipped is missing from the chain.
  Error ElementAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                       std::vector<ElementId>& chain, Clock::time_point deadline) override;
  // The same hit test, asked of `start` (an element of a surface of its own, such as an open menu, with
  // (x, y) in that surface's coordinates) and climbed back up to `window` or an element of `stopAt`.
  Error ElementAtPointFrom(ElementId start, const WindowInfo& window, double x, double y,
                           const std::vector<ElementId>& stopAt, std::vector<ElementId>& chain,
                           Clock::time_point deadline);
  // EditableText.InsertText at Text.CharacterCount. kActionNotSupported
  // without EditableText; kNotSettable when the states say it is not EDITABLE
  // (or READ_ONLY), or the app refuses.
  Error InsertText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  // While on, ReadNodes never uses the bulk cache and ReadChildren never the
  // "had no children" hint: every attribute is asked of the app.
  void SetLiveReads(bool live) override;
  // Secure fields: the password text role, object attributes that say
  // password (autocomplete current-password/new-password, input type
  // password), and, while this is on (default), a text-entry role whose name
  // says password/passcode/PIN/密码 as a word. A secure field's text is never
  // read, only its length.
  void SetSecureNameHeuristic(bool on) override;

  // Start, without waiting, what the walk of the app begins with when this
  // process has no fresh copy of it: its direct connection and its bulk read
  // (GetItems, after registering the event listener it needs). ExpectWalk
  // has Windows() start them once it has read the app's windows (the app is
  // then idle while window choice goes on: X11 titles); PrepareWalk starts
  // them if that did not. The walk's first reads take what came, or wait for
  // the rest; the results are the same.
  void ExpectWalk(const AppInfo& app) override;
  void PrepareWalk(const AppInfo& app, const WindowInfo& window, Clock::time_point deadline,
                   std::vector<std::string>& notes, bool& contentPending) override;

  // Change events (atspi_events.h): signals of the app's bus name on the
  // accessibility bus, registered with the registry. After a reconnect the
  // old subscriptions are gone: WaitEvents fails with kNoAccessibilityBus
  // until Watch is called again (which subscribes on the new connection).
  Error Watch(const AppInfo& app, Clock::time_point deadline) override;
  Error WaitEvents(int64_t pid, uint64_t sinceStamp, Clock::time_point until, AppEventState& out) override;
  void Unwatch(int64_t pid) override;

  // --- Beyond the Backend interface (LinuxBackend, tests) ---

  bool Connected() const;
  // The floor of one D-Bus call's timeout (default 800 ms). An operation with
  // deadline D allows each call max(this, (D - now) / 4), and never past D: a
  // slow app can be read with a long deadline, and one that does not answer
  // costs one such timeout (its remaining calls in the batch fail at once).
  void SetCallTimeout(std::chrono::milliseconds timeout);
  // Bulk reads: one org.a11y.atspi.Cache.GetItems call per app supplies
  // role, name, description, states and interfaces for the nodes it lists
  // (reused for 300 ms, so one call usually serves a walk); the rest is read
  // live. About 40% fewer calls and 20-30% faster walks on
  // gtk3-widget-factory, same results. Off by default: atk-bridge serves
  // GetItems only once a client has registered an event listener, so this
  // registers one (every app then emits children-changed events), and the
  // reply holds every object of the app, not just the window walked.
  void SetUseBulkCache(bool on);
  // Forget what earlier reads may let later ones skip: the bulk snapshot and
  // the "had no children" hints. Call after synthetic input (the AT-SPI
  // actions here do it themselves).
  void InvalidateBulkCache();
  // Component coordinates in each element's own window (at-spi2 WINDOW, 1) instead of the
  // screen (0): a native Wayland app's only meaningful ones (atspi_internal.h, CoordType).
  // Apps on `screenBuses` (XWayland apps, by bus name) are still asked for SCREEN.
  void SetWindowCoordinates(bool on, const std::vector<std::string>& screenBuses);
  // A window's AT-SPI ACTIVE state (the toolkit's "this toplevel has focus") and its own extents, read live
  // now. On a Wayland session where the compositor says nothing (GNOME without Eval) this is the only
  // word on which window is focused (LinuxBackend's focused-window route).
  Error WindowState(ElementId window, bool& active, Rect& extents, Clock::time_point deadline);
  // The D-Bus address of an element (for diagnostics); false for unknown ids.
  bool Describe(ElementId id, std::string& busName, std::string& objectPath) const;
  // A handle for something that is not an AT-SPI object (LinuxBackend: an X11
  // window of an app with no tree, bus "x11"), in the same table: one id per
  // (bus, path) until released, forgotten on reconnect like the rest. Never
  // sent to D-Bus: whoever interns such ids answers for them.
  ElementId InternForeign(const std::string& busName, const std::string& path);
  // Number of live handles.
  size_t HandleCount() const;
  // D-Bus calls issued so far (diagnostics).
  uint64_t CallCount() const;
  void ResetReadStats() override;
  std::vector<ReadStat> TakeReadStats() override;

  // The state every operation works on (atspi_internal.h). Named here so the
  // functions of the backend's files (atspi_*.cc) can take it; complete only there.
  struct Impl;

 private:
  // Connected, reconnecting first (once, within `deadline`) when the
  // connection was closed since (the bus restarted).
  Error Ready(Clock::time_point deadline);
  // The element an edit goes to (SetText, InsertText): connected, known, the text valid UTF-8.
  Error EditTarget(ElementId id, const std::string& text, Clock::time_point deadline, std::string& bus,
                   std::string& path);
  Error ListAppsOnce(std::vector<AppInfo>& out, Clock::time_point deadline);
  // ReadChildren: a big table that manages its cells (a GTK3 tree view) read
  // as its column headers and the cells of its rows on screen, with its row
  // count. handled[i]: out[i] (or errs[i]) is its answer; the others are left
  // to GetChildren.
  std::vector<bool> ReadVisibleTableRows(const std::vector<ElementId>& ids, std::vector<ChildList>& out,
                                         std::vector<Error>& errs, Clock::time_point deadline);
  // Windows(): the open menus of menu bars, which GTK3 keeps inside their window.
  void AppendMenuBarMenus(Impl& im, std::vector<WindowInfo>& out, Clock::time_point deadline);
  std::unique_ptr<Impl> impl_;
};

}  // namespace axsnap
