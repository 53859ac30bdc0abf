// Windows as the compositor knows them, on GNOME Wayland: GNOME Shell's
// org.gnome.Shell.Eval (available when the shell runs with --unsafe-mode, as
// the agent's own Wayland desktop does). A Wayland client cannot say where it
// is on screen, so frames, stacking, focus and raising come from here.
//
// On a user's own GNOME session Eval answers (false, ""): then nothing here
// is available, `evalAllowed` is false, and callers must report screen
// positions as unknown rather than guess. Introspect.GetWindows is no
// substitute: it has no positions and is refused there too.
//
// Every call is a synchronous GDBus call bounded by its deadline, made from
// the backend's worker thread (never the JS thread).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../core/backend.h"
#include "glib_ref.h"

namespace axsnap {

struct ShellWindow {
  uint64_t id = 0;  // MetaWindow id (also RecordWindow's window-id)
  int stack = 0;    // 0 = bottom; the list is ordered bottom to top
  int64_t pid = 0;
  int clientType = 0;  // 0 = native Wayland, 1 = X11 (XWayland)
  bool focus = false;
  bool hidden = false;
  bool minimized = false;
  int type = 0;               // MetaWindowType: 0 normal, 3 dialog, 9 dropdown menu, 10 popup menu, 13 combo, ...
  uint64_t transientFor = 0;  // the parent window's id (a popup's: the surface it opened from); 0 for none
  Rect frame;                 // the visible window, in screen space
  Rect buffer;                // the surface, client-side shadow included
  std::string title;
  std::string wmClass;
};

// What input into a window checks first (gnome_shell.h InputState).
struct ShellInputState {
  uint64_t atPoint = 0;  // the topmost shown window whose frame holds the point; 0: none
  uint64_t focused = 0;  // the window with keyboard focus; 0: none
  int modal = 0;         // the shell's modal grabs: while > 0 a shell dialog takes all input
  bool shellUi = false;  // the shell's own UI (its top bar, a notification) takes a press at the point
};

// The session as this process sees it: XDG_SESSION_TYPE, else WAYLAND_DISPLAY without DISPLAY.
bool WaylandSession();
// The compositor of a Wayland session without Mutter, in words for errors and notes ("sway (a wlroots
// compositor)", "KDE Plasma's KWin", "this compositor"), from SWAYSOCK, KDE_FULL_SESSION,
// XDG_CURRENT_DESKTOP (lib/observe/linux-checks.ts compositorOf decides the same for permissions()).
std::string WaylandCompositorWords();

class GnomeShell {
 public:
  // Connects to the session bus and asks Eval("1"). Not an error when the
  // shell is absent or refuses: `present()`/`evalAllowed()` say which.
  Error Open(Clock::time_point deadline);
  bool present() const { return present_; }
  bool evalAllowed() const { return evalAllowed_; }
  // What was found, in a sentence for notes and permissions.
  const std::string& status() const { return status_; }

  // Every window the shell manages, bottom to top.
  Error Windows(std::vector<ShellWindow>& out, Clock::time_point deadline);
  // Raises and focuses the window (MetaWindow.activate), then waits until the
  // shell reports it focused and on top of its peers, within the deadline.
  Error Activate(uint64_t id, Clock::time_point deadline);
  // One Eval: which window is on top at the screen point (x, y) (a non-finite point asks nothing about
  // points), which has focus, and whether a shell dialog holds the input. The Mutter route's guards.
  Error InputState(double x, double y, ShellInputState& out, Clock::time_point deadline);

 private:
  Error Eval(const std::string& script, std::string& result, Clock::time_point deadline);

  glib::GObj<GDBusConnection> bus_;
  bool present_ = false;
  bool evalAllowed_ = false;
  std::string status_;
};

// A menu's own surface (a Wayland xdg_popup: GTK3 menus and combo lists, mutter types them
// DROPDOWN_MENU; POPUP_MENU and COMBO for the X11 hints). Tooltips are not menus.
inline bool IsMenuSurface(const ShellWindow& w) { return w.type == 9 || w.type == 10 || w.type == 13; }

// Whether the window `popup` is an open menu of the window `owner`: a menu surface transient for it, or for
// one of its menus (a submenu), up the compositor's transient chain (bounded).
inline bool MenuOfWindow(const std::vector<ShellWindow>& windows, uint64_t popup, uint64_t owner) {
  for (int hops = 0; hops < 16 && popup != 0; hops++) {
    const ShellWindow* w = nullptr;
    for (const ShellWindow& s : windows)
      if (s.id == popup) w = &s;
    if (!w || !IsMenuSurface(*w)) return false;
    if (w->transientFor == owner) return true;
    popup = w->transientFor;
  }
  return false;
}

// Parses the Eval answer of the window list (exposed for tests). False when malformed.
bool ParseShellWindows(const std::string& json, std::vector<ShellWindow>& out);

}  // namespace axsnap
