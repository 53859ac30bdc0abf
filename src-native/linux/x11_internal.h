// What the files that implement X11Display share (private to them: nothing
// else includes it, not x11_clients.cc nor x11_selftest.cc): the connection's state
// (X11Display::Impl), whose methods are defined by job in the files named at
// each group, and the functions one job's file offers the others, each with
// the file that defines it. Everything here runs on the X thread with the
// connection's Impl (x11_display.cc), except the keysym tables.
//
// The rooms:
//   x11_display.cc     the X thread, its queue, opening (bounded) and abandoning the connection
//   x11_errors.cc      X errors: the handlers, the trap around requests, their text
//   x11_windows.cc     reading the window tree: top-levels, their client windows and pids
//   x11_observed.cc    which window is the observed one; may input at a point reach it
//   x11_raise.cc       raising a window and giving it keyboard focus
//   x11_capture.cc     screen pixels: MIT-SHM or XGetImage, converted to RGBA
//   x11_pointer.cc     XTest pointer input: click, wheel, drag, move
//   x11_keysyms.cc     key names and characters to keysyms (no display needed)
//   x11_keys.cc        XTest key input: combinations and typed text, the keyboard mapping
//   x11_guarded.cc     X11Display's guarded operations (the backend's): checked, bounded
//   x11_primitives.cc  X11Display's unguarded primitives (x11_selftest) and screen size
//   x11_clients.cc     the client list for apps without accessibility (x11_clients.h)
//
// Xlib: https://www.x.org/releases/current/doc/libX11/libX11/libX11.html
#pragma once

#include <X11/Xlib.h>
#include <X11/extensions/XShm.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../core/types.h"
#include "x11_clients.h"
#include "x11_display.h"

namespace axsnap {
namespace x11 {

// ---------------------------------------------------------------------------
// Geometry.

struct IRect {
  long x = 0, y = 0, w = 0, h = 0;
};

}  // namespace x11

// The names in x11 are used unqualified throughout, as when they were one
// file's unnamed namespace.
using namespace x11;  // NOLINT

// ---------------------------------------------------------------------------
// The connection's state, used on the X thread only.

struct X11Display::Impl {
  Display* dpy = nullptr;
  int screen = 0;
  Window root = 0;
  Visual* visual = nullptr;
  int depth = 0;
  bool hasShm = false;
  bool hasXTest = false;
  std::atomic<bool> dead{false};   // the connection was lost (I/O error) or abandoned
  std::atomic<bool> ready{false};  // opened and usable
  std::atomic<int> fd{-1};         // the socket, for shutdown() from the waiting thread
  Atom netWmPid = None;
  XResPids xres;  // pids of clients without _NET_WM_PID

  // MIT-SHM: one segment, reused while big enough; an XImage header over it
  // for the last requested size.
  XShmSegmentInfo shm{};
  bool shmAttached = false;
  bool shmBroken = false;  // the segment could not be set up: MIT-SHM unusable here
  size_t shmCapacity = 0;
  XImage* shmImage = nullptr;

  // x11_display.cc: opening and closing.
  static void OnIOExit(Display*, void* data);
  // Opens `name` on this (the X) thread. Mirrors the old Open(): handlers,
  // per-display exit handler, extensions.
  Error OpenDisplay(const std::string& name);
  // Frees the connection. After an I/O error the display struct is still
  // allocated; closing it frees the memory (requests on it are no-ops).
  void Close();

  bool Alive() const { return dpy != nullptr && !dead; }

  // x11_errors.cc: the trap around a run of requests.
  void BeginTrap();
  // The first error since BeginTrap (0 when none); syncs so every request is answered.
  int EndTrap();
  std::string LastErrorText() const;

  // x11_capture.cc: the MIT-SHM segment and image.
  void DestroyShmImage();
  void ReleaseShm();
  // Detaches the segment (the image header, if any, keeps its size but no data).
  void ReleaseSegment();
  // A segment of at least `bytes`, attached on both sides. The id is removed
  // right after the server attached, so the kernel frees it when both
  // processes detach or die.
  bool EnsureShmSegment(size_t bytes, std::string& why);
  // Reads (x, y, w, h) of the root into the shm image. nullptr when it failed.
  XImage* ShmGet(int x, int y, int w, int h, std::string& why);

  // x11_windows.cc: the window tree.
  // The root's current size (follows RandR changes, which the cached
  // DisplayWidth/Height do not while this client processes no events).
  void RootSize(int& w, int& h);
  bool Attributes(Window w, XWindowAttributes& attrs);
  // Root-relative rectangle of w's inside (excluding the border).
  bool RootRect(Window w, const XWindowAttributes& attrs, IRect& r);
  bool Children(Window w, std::vector<Window>& out, Window* parentOut = nullptr);
  // The child of the root that contains w (w itself for a top-level); 0 on error.
  Window TopLevelOf(Window w);
  long Pid(Window w) { return NetWmPid(dpy, w, netWmPid); }
  bool HasWindowManager();
  // The topmost viewable child of the root containing (x, y); 0 when none.
  Window TopmostAt(int x, int y);

  // A top-level window and the client window in it that carries
  // _NET_WM_PID (the top-level itself, or one or two levels down under a
  // reparenting window manager).
  struct Client {
    Window top = 0;
    Window client = 0;
    long pid = -1;
    bool viewable = false;
    bool overrideRedirect = false;
    IRect rect;   // the client's inside, root coordinates
    IRect outer;  // the top-level with its border: what hit-testing sees
  };

  // Every child of the root, bottom to top. Windows may vanish mid-walk:
  // their calls fail (recorded by the trap, ignored) and they are skipped.
  std::vector<Client> Clients();
  void FindClientBelow(Window top, Client& c, std::vector<Window>& kids, std::vector<Window>& grandkids);
  bool AdoptIfClient(Window w, Client& c);
  // The pid of a top-level that carries no _NET_WM_PID (xmessage, Tk), from the X server (X-Resource): of the
  // top-level itself when it is a client (it has WM_CLASS) or a popup (override-redirect windows are never
  // reparented), else of a client window one or two levels down (a reparenting WM's frame is the WM's own).
  void PidFromServer(Window top, const XWindowAttributes& a, Client& c, std::vector<Window>& kids,
                     std::vector<Window>& grandkids);
  bool AdoptByClass(Window w, Client& c);

  // The window's title: _NET_WM_NAME (UTF-8), else WM_NAME.
  std::string Name(Window w) { return WindowName(dpy, w); }
  Window TransientFor(Window w);

  // x11_pointer.cc and x11_keys.cc: XTest events.
  void Motion(int x, int y);
  void Button(int b, bool down);
  void Key(KeyCode kc, bool down);
};

namespace x11 {

using Impl = X11Display::Impl;
using Client = X11Display::Impl::Client;

// ---------------------------------------------------------------------------
// Errors and waits (x11_errors.cc; the waits here).

// Process-wide, reference counted: Impl::OpenDisplay installs, Close uninstalls.
void InstallHandlers();
void UninstallHandlers();
std::string Hex(unsigned long v);

inline void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
inline double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// ---------------------------------------------------------------------------
// Which window is observed, and may input reach it (x11_observed.cc).

double IntersectionArea(const IRect& a, const Rect& b);
bool FrameKnown(const Rect& frame);
bool BetterMatch(const Client& c, const Client* best, const Rect& frame);
Error XFindWindow(Impl& d, int64_t pid, const Rect& frame, unsigned long& xid);
bool MayReceive(Impl& d, const Client& observed, const Client* hit, std::string& why);

struct Point {
  int x = 0, y = 0;
};

Error PrepareInput(Impl& d, const X11Display::Target& t, unsigned long bound, uint64_t& start, std::vector<Point> pts,
                   Client& observed, bool keyboard);

// ---------------------------------------------------------------------------
// Raising and focus (x11_raise.cc).

Error XRaiseAndVerify(Impl& d, unsigned long xid, const Rect& frame);
void RequestRaise(Impl& d, const Client& w, bool wm);
bool FocusObserved(Impl& d, const Client& observed, const std::vector<Client>& all, bool wm, std::string& why);

// ---------------------------------------------------------------------------
// Capture (x11_capture.cc).

Error XCaptureRect(Impl& d, const Rect& r, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured);

// ---------------------------------------------------------------------------
// Pointer input (x11_pointer.cc).

bool ToPixel(double v, int& out);
Error InputReady(const X11Display::Impl& d);
Error XClick(Impl& d, double x, double y, int button, int count);
Error XWheel(Impl& d, double x, double y, double dx, double dy);
Error XDrag(Impl& d, double x, double y, double toX, double toY, int button);
Error XMove(Impl& d, double x, double y);

// ---------------------------------------------------------------------------
// Keysyms (x11_keysyms.cc).

KeySym KeysymForCodePoint(uint32_t cp);
bool DecodeUtf8(const std::string& s, std::vector<uint32_t>& out);
std::string Lower(std::string s);
std::string Trim(const std::string& s);
KeySym ModifierKeysym(const std::string& lower);
KeySym NamedKeysym(const std::string& lower);
KeySym KeysymByName(const std::string& name);

// ---------------------------------------------------------------------------
// Key input (x11_keys.cc).

Error XKeys(Impl& d, const std::string& combo, const std::function<Error()>& beforeSend = nullptr);
Error ToKeysyms(const std::vector<uint32_t>& cps, std::vector<KeySym>& syms);
Error XType(Impl& d, const std::string& utf8);
Error XTypeSyms(Impl& d, const std::vector<KeySym>& syms);

}  // namespace x11
}  // namespace axsnap
