// Plain C++ mirror of the raw tree model (lib/model/model.ts) and the error codes the
// TypeScript layer maps into AxsnapError. No platform headers here: the core,
// every backend and the N-API layer share these types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace axsnap {

// The AT-SPI coordinate of a widget that is not on screen.
constexpr double kHiddenCoordinate = -2147483648.0;

struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
};

inline bool Intersects(const Rect& a, const Rect& b) {
  return a.x < b.x + b.w && a.x + a.w > b.x && a.y < b.y + b.h && a.y + a.h > b.y;
}

// Stable codes; lib/native.ts maps each to an AxsnapError code.
enum class ErrorCode {
  kNone = 0,
  kNoAccessibilityBus,  // no session bus / a11y bus: PERMISSION_DENIED-like, with a hint
  kAppNotFound,
  kAmbiguousApp,  // a name matched several running apps (the message lists their pids)
  kWindowNotFound,
  kAppUnresponsive,  // a call timed out: the app did not answer
  kTimeout,          // the overall deadline passed
  kElementGone,      // the element no longer exists
  kActionNotSupported,
  kActionFailed,
  kNotSettable,
  kInvalidArgument,
  kCaptureFailed,
  kInputFailed,
  kPermissionDenied,   // macOS: Accessibility or Screen Recording not granted to this process
  kDeliveryUncertain,  // an action or set was sent and the app answered with an error: it may have happened
  kAmbiguousWindow,    // a window title matched several windows of the app (the message lists them)
  kOcrUnavailable,     // no OCR engine, or its data for a language, is installed (the message names the packages)
  kInternal,
};

const char* ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kNone;
  std::string message;
  // What to do about it, where only the backend that failed knows (OCR_UNAVAILABLE: Debian's packages on
  // Linux, nothing to install on macOS); empty: lib/model/errors.ts's hint for the code.
  std::string hint;
  // A constructor, not aggregate initialisation: `{code, message}` everywhere leaves the hint out without
  // -Wmissing-field-initializers (an error under the macOS check's -Werror).
  Error() = default;
  Error(ErrorCode c, std::string m, std::string h = {}) : code(c), message(std::move(m)), hint(std::move(h)) {}
  explicit operator bool() const { return code != ErrorCode::kNone; }
};

// An element in a backend's handle table. 0 is never a valid id. The same
// native element always maps to the same id within one backend, which is what
// the walk's cycle guard compares.
using ElementId = uint64_t;

using Value = std::variant<std::monostate, std::string, double, bool>;

struct States {
  std::optional<bool> enabled, focused, focusable, selected, selectable, expanded, minimized, secure, required, invalid,
      readonly, multiline, editable, modal, visible;
  // true / false / "mixed" (2)
  std::optional<int> checked;
};

// What one read of an element returns: every field of RawNode but children.
struct NodeAttributes {
  std::string role;
  std::optional<std::string> subrole, roleDescription, title, description, help, identifier, url, placeholder,
      selectedText;
  Value value;
  // The value as the app shows it where that is not the number (ARIA's aria-valuetext: "Three degrees").
  std::optional<std::string> valueText;
  std::optional<std::string> valueType;  // "string" | "number" | "boolean"
  bool settable = false;
  std::optional<int64_t> charCount;
  std::optional<std::string> orientation;
  States states;
  std::vector<std::string> actions;
  std::optional<Rect> frame;
  std::optional<int64_t> rowIndex, rowCount;
  // The title came from these elements (AT-SPI LABELLED_BY): the renderer
  // need not print a label again that only names this element.
  std::vector<ElementId> labelledBy;
};

struct RawNode {
  ElementId id = 0;
  NodeAttributes attrs;
  std::optional<std::string> via;
  std::vector<RawNode> children;
};

struct AppInfo {
  std::string name;
  std::string bundleId;  // Linux: the AT-SPI application name
  int64_t pid = 0;
  ElementId element = 0;
  // False when the app did not answer while being listed (its name is the
  // last one it gave, or empty); a snapshot of it fails with kAppUnresponsive.
  bool responsive = true;
  // No accessibility tree at all (Linux: an X11 client that never registered
  // with AT-SPI): its windows are its X windows, read as one element each.
  bool noTree = false;
};

// An app the system can start (Linux: a desktop entry; macOS: an
// application bundle), for launchApp's name matching, which is done in JS.
struct LaunchableApp {
  std::string id;          // desktop id ("gtk3-widget-factory.desktop") or bundle id
  std::string name;        // the entry's Name / the bundle's display name
  std::string executable;  // Linux: the entry's executable; macOS: the bundle's CFBundleExecutable
  std::string path;        // the .desktop file or the .app bundle
  bool hidden = false;     // Linux: NoDisplay (not shown in menus, still launchable)
};

// What to start: `id` is a desktop or bundle id, or the path of a .desktop
// file or an .app bundle. `env` replaces the launched app's environment
// when `envGiven` (the caller's process.env: a test desktop's DISPLAY and
// buses reach the app even where this process's own environ differs).
struct LaunchRequest {
  std::string id;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  bool envGiven = false;
};

struct WindowInfo {
  ElementId element = 0;
  int64_t pid = 0;  // the owning app's pid: the X11 layer finds the window by it
  std::string title;
  Rect frame;
  bool hasFrame = false;
  bool active = false;  // has focus / is the active window
  bool minimized = false;
  bool visible = true;  // showing on screen
  std::string role;     // "frame", "dialog", "AXWindow"...
  // Stable while the window exists (within the app's lifetime): Linux, the
  // window's AT-SPI object path; macOS, "w" + its window-server number; empty
  // when the backend has none (the core then derives one from the element handle).
  std::string id;
  // "window" | "dialog" | "menu" | "popup" | "sheet"; empty = from the role
  // (WindowKindOf in window_choice.h).
  std::string kind;
  bool modal = false;  // a modal dialog (AT-SPI MODAL state; macOS sheets and modal dialogs)
  // Its content is already part of its parent window's tree, in place (Linux:
  // the open menu of a menu bar item, which GTK does not expose as a toplevel):
  // listed, but window choice keeps the parent.
  bool inParent = false;
  // Where the platform cannot say where the window is on screen (GNOME
  // Wayland without the compositor's window list): `frame` has the window's
  // size at origin (0,0) and element frames are relative to the window.
  bool positionUnknown = false;
  // Its place in the compositor's stacking order, 0 = bottom; -1 = not known.
  int stacking = -1;
};

// What a backend has heard from one watched app (Backend::WaitEvents).
struct AppEventState {
  bool watching = false;            // events are being received for this pid
  uint64_t stamp = 0;               // change events counted since Watch; grows only
  uint64_t windowStamp = 0;         // the subset about windows, menus, popups, dialogs
                                    // (created, destroyed, activated, shown/hidden)
  double msSinceLast = -1;          // since the last event of any kind; -1 = none yet
  std::vector<std::string> recent;  // up to 16 latest event kinds, oldest first
                                    // ("object:children-changed:add", "AXValueChanged")
  // A silence shorter than this proves nothing for this app: it sends its
  // changes in batches this far apart (Chromium), so settling and idle wait
  // at least this long. 0 = events come as the app changes.
  double quietFloorMs = 0;
};

// Reads of one kind during a snapshot (Linux: a D-Bus method, or "Get <property>"):
// how many, and the time attributed to them (backend.h, Backend::TakeReadStats).
struct ReadStat {
  std::string kind;
  int64_t calls = 0;
  double ms = 0;
};

// Where a snapshot's time went, in ms (walkMs: the window's walk alone).
struct SnapshotTimings {
  double appMs = 0, windowMs = 0, walkMs = 0, menuBarMs = 0;
};

// kContentPending: the app was asked to build its tree (Chromium on macOS)
// and had not finished within the bound; the notes say so.
// kUnresponsive: some reads got no answer within their per-call timeout (the
// app is busy or stopped); kErrors: some reads failed otherwise. Either way
// elements were left out. An element that is gone (removed between being
// listed and being read) is not a failure while its window still answers.
enum class WalkEnd { kComplete, kNodeLimit, kDepthLimit, kDeadline, kContentPending, kUnresponsive, kErrors };
const char* WalkEndName(WalkEnd end);

struct RawSnapshot {
  std::string platform;  // "linux" | "macos" | "fake"
  AppInfo app;
  WindowInfo window;
  double scale = 1;
  RawNode root;
  std::optional<RawNode> menuBar;
  WalkEnd ended = WalkEnd::kComplete;
  int64_t nodesObserved = 0;
  double elapsedMs = 0;
  SnapshotTimings timings;
  std::vector<ReadStat> reads;  // empty where the backend does not count
  std::vector<std::string> notes;
};

// An encoded screenshot with its coordinate contract.
struct Screenshot {
  std::vector<uint8_t> png;
  int pixelWidth = 0, pixelHeight = 0;
  double scale = 1;                 // pixels per window point after the size budget
  double originX = 0, originY = 0;  // window origin on screen, points
  int encodes = 0;                  // PNG encodes used to meet the budget
  double captureMs = 0, encodeMs = 0;
};

}  // namespace axsnap
