// X11 client windows of apps that may have no accessibility tree at all
// (xterm, Tk, xmessage): which top-level windows there are, whose process
// owns each, and what they are called.
//
// ICCCM (WM_CLASS, WM_NAME, WM_STATE):
//   https://www.x.org/releases/current/doc/xorg-docs/icccm/icccm.html
// EWMH (_NET_CLIENT_LIST, _NET_SUPPORTING_WM_CHECK, _NET_WM_PID, _NET_WM_NAME):
//   https://specifications.freedesktop.org/wm-spec/latest/
// X-Resource 1.2 (XResQueryClientIds, the client's pid from the server):
//   https://www.x.org/releases/current/doc/resourceproto/resproto.txt
//
// The pid: _NET_WM_PID when the client sets it (xterm, GTK, Chromium), else
// the X server's own record of the connection's peer (X-Resource), which
// xmessage and Tk need. libXRes is loaded at run time: it is not part of the
// libX11/libXext/libXtst stack the addon links (Debian's libxres1 comes only
// with packages that ask for it), and the addon must load without it; then
// such windows simply have no pid (-1). Remote (TCP) clients have no pid
// either: the server knows peers' credentials only over the local socket.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../core/types.h"

typedef struct _XDisplay Display;

namespace axsnap {

struct X11Client {
  unsigned long xid = 0;  // the client window (the one with WM_CLASS), not a window manager's frame
  int64_t pid = -1;       // -1 when neither _NET_WM_PID nor X-Resource knows it
  std::string instance;   // WM_CLASS res_name ("xterm", "tk.tcl")
  std::string klass;      // WM_CLASS res_class ("XTerm", "Tk.tcl")
  std::string title;      // _NET_WM_NAME, else WM_NAME
  std::string program;    // the process's argv[0] basename, else /proc/<pid>/comm ("wish")
  Rect frame;             // the client window's inside, in root coordinates
  bool viewable = false;
};

// X-Resource client pids, per connection (the extension is probed once).
class XResPids {
 public:
  // The pid of the process whose connection created `window`; -1 when unknown.
  long PidOf(Display* dpy, unsigned long window);

 private:
  int state_ = 0;  // 0 not probed, 1 usable, -1 not there (no libXRes, or the server lacks 1.2)
};

// _NET_WM_PID of the window; -1 when unset. `atom` is _NET_WM_PID (None: -1).
long NetWmPid(Display* dpy, unsigned long window, unsigned long atom);
// _NET_WM_NAME (UTF-8), else WM_NAME.
std::string WindowName(Display* dpy, unsigned long window);
// Whether the window has WM_CLASS (what makes a window a client, ICCCM 4.1.2.5).
bool HasWmClass(Display* dpy, unsigned long window);

// The top-level client windows: _NET_CLIENT_LIST when a window manager runs;
// otherwise the viewable, InputOutput, non-override-redirect children of the
// root that have WM_CLASS (or a child one or two levels down that has it).
// Bottom to top. Windows that vanish meanwhile are skipped; the caller traps
// X errors.
std::vector<X11Client> ListX11Clients(Display* dpy, unsigned long root, XResPids& xres);

// What a user calls the program of `pid`: argv[0]'s basename, else comm; empty when unreadable.
std::string ProgramName(int64_t pid);

}  // namespace axsnap
