// The Linux backend: AT-SPI2 over D-Bus for the tree and semantic actions
// (AtspiBackend), X11 for the window's pixels and synthetic input
// (X11Display). Both are driven from the backend's worker thread; X11Display
// runs the X calls on a thread of its own so that a silent X server costs a
// call its deadline, never the worker.
//
// Apps with no accessibility tree (xterm, Tk, xmessage: X11 clients that
// never register with AT-SPI) are listed from X11 (x11_clients.h) beside the
// registry's apps, one app per pid, marked noTree. Each of their top-level
// windows is one element (an "x11" handle, path "/<xid>", in AT-SPI's handle
// table) with the window's title and frame and no children; pointer and key
// input reach it through the same observed-window checks as any window. With
// no accessibility bus at all but an X display, the X11 apps are all there is:
// connecting succeeds and listApps lists them.
//
// Window facts come from one of two places. On X11 (and for XWayland apps),
// from X (x11_windows.cc, x11_raise.cc): AT-SPI frames are already in screen
// space there. In a GNOME Wayland session (WaylandSession()), a native
// Wayland app's AT-SPI frames are relative to its window, so the compositor
// (GnomeShell, gnome_shell.h) says where each window is, its stacking and
// focus; every element frame read for a window found there is moved into
// screen space (PlaceWaylandWindow, wayland_frames.h), and screen points are
// moved back for hit-testing. Where the shell refuses (a user's own session),
// windows are marked positionUnknown and frames stay window-relative.
//
// A native Wayland window's pixels and input go through Mutter (WaylandRoute,
// wayland_input.h) in the same screen space. A positionUnknown window on a
// session whose shell refuses Eval (a user's own GNOME session) is reached
// only while it has keyboard focus (mutter's focused-window stream shows a
// surface of its AT-SPI size; see wayland_input.h), in window coordinates; when it is
// not focused, or the shell answers Eval but does not list it, its capture
// and pointer and key input are refused (typed, with a hint), never sent to
// a guessed place.
#pragma once

#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "../core/ocr.h"
#include "atspi_backend.h"
#include "gnome_shell.h"
#include "wayland_frames.h"
#include "wayland_input.h"
#include "x11_display.h"

namespace axsnap {

class LinuxBackend : public AtspiBackend {
 public:
  const char* Platform() const override { return "linux"; }
  double Scale(const WindowInfo&) override { return 1.0; }
  Error Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                Clock::time_point deadline) override;
  Error Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) override;
  Error Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) override;
  Error TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline, size_t& typed) override;
  // The AT-SPI windows; an untitled frame or dialog takes its X title.
  Error Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) override;
  // Desktop entries, through GIO (gio_launch.h).
  Error Launchable(std::vector<LaunchableApp>& out, Clock::time_point deadline) override;
  Error Launch(const LaunchRequest& request, int64_t& pid, Clock::time_point deadline) override;
  // Tesseract (ocr_tesseract.h), loaded on first use and kept.
  Error RecognizeText(const WindowInfo& window, const OcrImage& image, const OcrOptions& options,
                      OcrResult& out) override;
  Error OcrReady(const std::vector<std::string>& languages) override;

  // --- X11 apps with no accessibility tree (the rest goes to AtspiBackend) ---
  Error ConnectWithin(Clock::time_point deadline) override;
  // The registry's apps plus the X11 clients whose pid none of them has.
  Error ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) override;
  Error FocusedApp(AppInfo& out, bool& found, Clock::time_point deadline) override;
  Error AccessibilityMissing() const override { return atspiError_; }
  Error ListedWindows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) override;
  std::string Route(const WindowInfo& window, Clock::time_point deadline) override;
  int WindowByEarlierId(const AppInfo& app, const std::vector<WindowInfo>& windows, const std::string& id,
                        Clock::time_point deadline) override;
  Error ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out, std::vector<Error>& errs,
                  Clock::time_point deadline) override;
  Error ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out, std::vector<Error>& errs,
                     Clock::time_point deadline) override;
  Error ReadFrames(const std::vector<ElementId>& ids, std::vector<std::optional<Rect>>& out,
                   Clock::time_point deadline) override;
  Error DoAction(ElementId id, const std::string& name, Clock::time_point deadline) override;
  Error Toolkit(ElementId id, std::string& name, std::string& version, Clock::time_point deadline) override;
  Error SetText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  Error SetNumber(ElementId id, double value, Clock::time_point deadline) override;
  Error Focus(ElementId id, Clock::time_point deadline) override;
  Error Select(ElementId id, Clock::time_point deadline) override;
  Error InsertText(ElementId id, const std::string& text, Clock::time_point deadline) override;
  // An X11 app's keyboard focus is its window: key input is checked against X's focus there.
  Error FocusedElement(int64_t pid, ElementId& out, bool& found, Clock::time_point deadline) override;
  Error ElementAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                       std::vector<ElementId>& chain, Clock::time_point deadline) override;
  void PrepareWalk(const AppInfo& app, const WindowInfo& window, Clock::time_point deadline,
                   std::vector<std::string>& notes, bool& contentPending) override;
  Error Watch(const AppInfo& app, Clock::time_point deadline) override;
  Error WaitEvents(int64_t pid, uint64_t sinceStamp, Clock::time_point until, AppEventState& out) override;
  void Unwatch(int64_t pid) override;
  // The session's window source: X11, or on Wayland GNOME Shell if it answers Eval (asked afresh).
  Error Permissions(PermissionStatus& out, bool prompt) override;
  // GNOME Wayland only: raises and focuses the window through the compositor.
  bool Recovers() const override { return wayland_ && shell_.evalAllowed(); }
  Error Recover(RecoveryStep step, const AppInfo& app, const std::optional<WindowInfo>& window,
                Clock::time_point deadline) override;

  // The session this backend saw at its last connect, for permissions():
  // "wayland" with the compositor's status sentence, or "x11".
  bool wayland() const { return wayland_; }
  const GnomeShell& shell() const { return shell_; }
  // Raises and focuses a native Wayland window through the compositor (GNOME
  // Shell's MetaWindow.activate), confirmed by its stacking and focus; where
  // the X11 path raises before input, a Wayland input route calls this.
  Error RaiseWayland(const WindowInfo& window, Clock::time_point deadline);

 private:
  // The X window behind an "x11" handle; false for any other handle.
  bool XidOf(ElementId id, unsigned long& xid) const;
  bool IsX11App(const AppInfo& app) const;
  Error X11Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline);
  WindowInfo WindowOf(const X11Client& c);
  // Binds an "x11" window's handle to its xid before capture or input.
  void BindX11(const WindowInfo& window);
  // A native Wayland window on GNOME: capture and input go through Mutter (wayland_input.h), not X11,
  // which never sees it. An app with an X11 window (XWayland) keeps the X11 route.
  bool OnMutter(const WindowInfo& window, Clock::time_point deadline);
  // A native Wayland window: no X11 handle, and its app has no X11 window (an XWayland app's windows are X's).
  bool NativeWayland(const WindowInfo& window, Clock::time_point deadline);
  // A native Wayland window that no route reaches (no Mutter on the bus: sway, KDE, a stopped GNOME): the
  // refusal for `what`, before anything is sent. X11 capture or input would give a wrong or black image, or
  // input sent to no window. Empty when a route exists.
  Error NoRouteFor(const WindowInfo& window, ErrorCode code, const char* what, Clock::time_point deadline);
  // The shell's window behind a placed window; refused (`code`, nothing sent) when its place is unknown.
  Error MutterTargetOf(const WindowInfo& window, ErrorCode code, MutterTarget& out) const;
  // A native Wayland window while the shell refuses Eval: no window has a known place, and the focused-window
  // route is the only one. (Asked of the shell, not of `window`: a window handed back from JS for input does
  // not carry its positionUnknown flag.)
  bool FocusedRoute() const { return !shell_.evalAllowed(); }
  // Its AT-SPI size (read now) and the toolkit's own word on its focus (AT-SPI ACTIVE, read when asked).
  Error FocusedOf(const WindowInfo& window, ErrorCode code, FocusedWindow& out, Clock::time_point deadline);

  // The reads before Wayland placement (X11-only windows, then AT-SPI).
  Error ReadNodesOf(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out, std::vector<Error>& errs,
                    Clock::time_point deadline);
  Error ReadChildrenOf(const std::vector<ElementId>& ids, std::vector<ChildList>& out, std::vector<Error>& errs,
                       Clock::time_point deadline);

  // --- GNOME Wayland (gnome_shell.h, wayland_frames.h) ---
  // Matches the AT-SPI windows to the shell's and puts their frames in screen space.
  // Windows of `x11Pids` (XWayland apps) the shell does not match are left as X11 gives them.
  void PlaceWaylandWindows(const AppInfo& app, std::vector<WindowInfo>& out, const std::set<int64_t>& x11Pids,
                           Clock::time_point deadline);
  // The placement of the surface an element was reached in; null when none applies (X11, or not walked).
  // `unknown` is set for an element of a surface the compositor did not place (a menu it does not list).
  const WaylandPlacement* PlacementOf(ElementId id, bool* unknown = nullptr) const;
  void ToScreen(const std::vector<ElementId>& ids, std::vector<std::optional<Rect>*> frames) const;
  // Menus on their own surfaces (wayland_frames.h, "Menus"): the surface key of the open menu that
  // a menu or combo box opened from the surface `owner`, or kUnknownSurface.
  ElementId MenuSurfaceBelow(ElementId owner) const;
  // Notes which read nodes open menus (roles), and moves a combo box's menu onto its popup surface.
  void NoteMenus(const std::vector<ElementId>& ids, const std::vector<NodeAttributes>& out);
  // A point over an open menu of the app (a popup surface above the window, topmost there in the compositor's
  // stacking, asked now) is hit-tested in that menu, in its surface's coordinates (`routed`); a point over
  // another app's menu reaches nothing of this app (empty chain, routed). Not routed: the window's own test.
  Error MenuAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                    std::vector<ElementId>& chain, bool& routed, Clock::time_point deadline);
  // ListedWindows: the open menus of menu bars and popovers (appended after Windows()) placed.
  void PlaceListedMenus(const AppInfo& app, std::vector<WindowInfo>& out);

  bool wayland_ = false;
  GnomeShell shell_;
  Clock::time_point shellAskedAt_{};
  // Each element read through a window's walk belongs to that window (by descent from it, in
  // ReadChildren), and that window's placement moves its frames. Bounded: cleared when too big.
  std::unordered_map<ElementId, ElementId> ownerWindow_;
  std::unordered_map<ElementId, WaylandPlacement> placements_;  // AT-SPI window element -> placement
  std::unordered_map<ElementId, uint64_t> shellIds_;            // AT-SPI window element -> MetaWindow id
  // Open menus are surfaces of their own (xdg_popup) that AT-SPI has no window for: keyed by
  // MenuKey(MetaWindow id) in placements_ and ownerWindow_, never an AT-SPI handle.
  static constexpr ElementId kMenuKeyBit = ElementId(1) << 63;
  static constexpr ElementId kUnknownSurface = ~ElementId(0);
  static ElementId MenuKey(uint64_t shellId) { return kMenuKeyBit | shellId; }
  std::vector<ShellWindow> menuSurfaces_;                       // the shell's menu surfaces at the last listing
  std::unordered_map<ElementId, uint64_t> surfaceShellIds_;     // owner key (window or menu) -> MetaWindow id
  std::unordered_map<ElementId, std::string> menuRoles_;        // read nodes that hold or open menus, by role
  std::unordered_set<ElementId> inMenuContainer_;               // children of a menu bar, menu or popup menu
  std::unordered_set<ElementId> unplacedMenuItems_;             // items of a submenu whose surface was not found
  std::unordered_set<ElementId> gtkWindows_;                    // AT-SPI windows of GTK apps (menus walked by role)
  std::set<std::string> screenBuses_;                           // XWayland apps' bus names: SCREEN coordinates
  std::unordered_map<ElementId, ElementId> comboMenuOwner_;     // a combo box's child -> the surface it may open on
  std::unordered_map<ElementId, ElementId> listedMenuSurface_;  // a listed open menu's element -> its surface key
  // A menu surface key -> the elements read whose children may be drawn on it (a menu bar's or a menu's
  // items that open a menu, a combo box's menu): where a hit test over that surface starts. Several: every
  // item of a menu bar is given the one open menu's surface (MenuSurfaceBelow cannot tell which opened it).
  std::unordered_map<ElementId, std::vector<ElementId>> surfaceRoots_;
  std::set<ElementId> lastWindows_;  // the AT-SPI windows Windows() gave last

  X11Display x11_;
  WaylandRoute mutter_{shell_};
  bool atspiMissing_ = false;     // the last Connect found no accessibility bus, and an X display
  Error atspiError_;              // set while ListApps answered with the X11 apps alone
  std::set<int64_t> noTreePids_;  // the X11-only apps of the last listing (events: none)
  std::unique_ptr<OcrEngine> ocr_;
};

}  // namespace axsnap
