// X11 for the Linux backend: the window's pixels and synthetic input.
// Xlib documentation: https://www.x.org/releases/current/doc/libX11/libX11/libX11.html
// XShm: https://www.x.org/releases/current/doc/xextproto/shm.html ; XTest: xtest.pdf
// The implementation is one file a job (x11_display.cc, x11_capture.cc, ...): x11_internal.h lists them.
//
// Threading and deadlines: the connection lives on a thread of its own (the
// X thread), owned by this object. Each call posts a job there and waits at
// most until its deadline. An X server that stops answering (SIGSTOP, a
// listener that never replies) would block Xlib forever; when the wait
// expires the socket is shut down (which makes the blocked Xlib call fail
// with an I/O error that returns instead of exiting), the connection is
// marked dead and its thread is left to finish on its own: nothing here ever
// joins a thread that may be blocked in X. The next call opens a new
// connection, so a restarted X server is picked up without a new process.
// Opening is bounded too: a local display's socket is probed first (setup
// request, then poll with the deadline).
//
// An X error never exits the process: a handler records it and the failing
// call returns kCaptureFailed / kInputFailed instead of Xlib's default exit.
//
// Input goes only to the observed app: a window owned by the observed pid
// (_NET_WM_PID, else the X server's record of its client: x11_clients.h) that is the observed window, its transient
// (WM_TRANSIENT_FOR) or an override-redirect popup of the same pid, checked at every event point before every event
// batch. Otherwise nothing is sent: kAppNotFound when no window of the pid exists or its process is exiting, a zombie
// or not the one that was observed (process_life.h; checked again right before the first event), kWindowNotFound when
// the pid has windows but not the observed one.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../core/types.h"
#include "x11_clients.h"

namespace axsnap {

// From core/backend.h, which this header does not include: the hand-built
// x11_selftest compiles with -Wextra -Werror, and backend.h's default
// virtual methods leave parameters unused.
using Clock = std::chrono::steady_clock;
struct PointerEvent;

class X11Display {
 public:
  // The observed window, as the accessibility layer saw it.
  struct Target {
    int64_t pid = 0;
    Rect frame;            // w = h = 0 when unknown
    std::string title;     // empty when unknown
    uint64_t element = 0;  // the accessibility element of the window; 0 = none
  };

  X11Display() = default;
  ~X11Display();  // never waits for the X thread
  X11Display(const X11Display&) = delete;
  X11Display& operator=(const X11Display&) = delete;

  // Opens $DISPLAY, or reopens it after the connection was lost or abandoned.
  // kCaptureFailed with a hint when there is no display; kTimeout when the
  // server does not answer by `deadline`.
  Error Open(Clock::time_point deadline = DefaultDeadline());
  bool IsOpen() const;

  // --- Guarded operations (what the backend uses) ---

  // Raises the observed window when something covers it (best effort), then
  // reads the frame's pixels (clipped to the screen).
  Error CaptureWindow(const Target& target, Clock::time_point deadline, std::vector<uint8_t>& rgba, int& width,
                      int& height, Rect& captured);
  // Synthetic input to the observed window only (see above). A timeout after
  // an event may have left is kDeliveryUncertain; before, kTimeout.
  Error Pointer(const Target& target, const PointerEvent& ev, Clock::time_point deadline);
  Error SendKeys(const Target& target, const std::string& combo, Clock::time_point deadline);
  // Types in chunks, re-checking the window and the deadline between them.
  // `typed` counts the code points sent, also on error.
  Error TypeText(const Target& target, const std::string& utf8, Clock::time_point deadline, size_t& typed);

  // The top-level client windows (x11_clients.h), bottom to top.
  Error ListClients(std::vector<X11Client>& out, Clock::time_point deadline);
  // Makes `xid` the observed window of (pid, element): a window known by its
  // X id (an app with no accessibility tree) needs no matching by frame and title.
  void Bind(int64_t pid, uint64_t element, unsigned long xid) {
    Binding& b = bound_[{pid, element}];
    if (b.xid != xid) b = Binding{xid, 0};
  }

  // --- Unguarded primitives (x11_selftest) ---

  // The top-level X window of `pid` (_NET_WM_PID on viewable windows) whose
  // geometry best matches `frame` (screen points). 0 when none; never a
  // window of another pid.
  Error FindWindow(int64_t pid, const Rect& frame, unsigned long& xid, Clock::time_point deadline = DefaultDeadline());
  // The X title (_NET_WM_NAME, else WM_NAME) of the pid's viewable window over `frame`; empty when none.
  Error WindowTitle(int64_t pid, const Rect& frame, std::string& title, Clock::time_point deadline);
  // XRaiseWindow + sync; then confirm the window is the topmost viewable
  // top-level window covering the frame's centre.
  Error RaiseAndVerify(unsigned long xid, const Rect& frame, Clock::time_point deadline = DefaultDeadline());
  // Pixels of the screen area `r` (clipped to the screen; MIT-SHM when
  // available) as RGBA rows. `captured` is the area actually read.
  Error CaptureRect(const Rect& r, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                    Clock::time_point deadline = DefaultDeadline());
  // Synthetic input with XTest at screen points, wherever it lands.
  Error Click(double x, double y, int button, int count, Clock::time_point deadline = DefaultDeadline());
  Error Wheel(double x, double y, double dx, double dy, Clock::time_point deadline = DefaultDeadline());
  Error Drag(double x, double y, double toX, double toY, int button, Clock::time_point deadline = DefaultDeadline());
  Error Move(double x, double y, Clock::time_point deadline = DefaultDeadline());
  // "ctrl+shift+t", "Return", "alt+F4": modifiers ctrl/shift/alt/super/meta, then one key name (X keysym names or a
  // character).
  Error Keys(const std::string& combo, Clock::time_point deadline = DefaultDeadline());
  // Types UTF-8 text; characters without a keycode are mapped onto a spare keycode temporarily.
  Error Type(const std::string& utf8, Clock::time_point deadline = DefaultDeadline());

  int ScreenWidth();
  int ScreenHeight();

  struct Impl;  // the connection's state, used on the X thread only
  struct Conn;  // Impl + the X thread's queue, shared with that thread

 private:
  static Clock::time_point DefaultDeadline() { return Clock::now() + std::chrono::seconds(5); }
  struct Outcome {
    bool timedOut = false;
    bool sent = false;  // the job had started sending input
  };
  using Job = std::function<Error(Impl&, std::atomic<bool>& sent)>;
  // Runs `job` on the X thread, waiting until `until`; opens the display first.
  Error Run(Clock::time_point until, Job job, Outcome& outcome);
  Error RunOpen(Clock::time_point until, Job job);
  Error RunOnce(const std::shared_ptr<Conn>& c, Clock::time_point until, const Job& job, Outcome& outcome);
  // Shuts the socket down so a blocked Xlib call returns, then forgets the connection.
  void Abandon();
  // Lets the X thread close the connection once its queue is done; forgets it here.
  void Retire();
  using Send = std::function<Error(Impl&, const std::function<Error()>& check)>;
  Error Guarded(const Target& target, Clock::time_point deadline, const std::vector<std::pair<int, int>>& points,
                const Send& send, bool& sent);
  Error Simple(Clock::time_point deadline, const std::function<Error(Impl&)>& op);

  std::shared_ptr<Conn> conn_;
  // The X window each observed window was matched with, per connection
  // (pid, element) -> client window: the identity of "the observed window";
  // with the start time of the process the pid named then (process_life.h),
  // so a later process given the same pid is not taken for it.
  struct Binding {
    unsigned long xid = 0;
    uint64_t start = 0;  // 0 until input or a capture has matched the window
  };
  std::map<std::pair<int64_t, uint64_t>, Binding> bound_;
};

// The X keysym a key name names, case-insensitively ("kp_enter" is KP_Enter):
// the exact name first; else the one keysym whose name matches ignoring case,
// and where several do (Greek_alpha, Greek_ALPHA), the one whose letters'
// case agrees with the name's most often, the lower-case keysym on a tie.
// Returns its X name, empty when no keysym has that name. Needs no display.
std::string KeysymNameOf(const std::string& name);

// A key combination ("ctrl+shift+t", "alt+F4", "ctrl++") as keysyms: its modifiers' (Control_L, Shift_L,
// Alt_L, Super_L) in order, then the key's. kInvalidArgument for a malformed one or an unknown name. Needs no
// display: the Wayland route (wayland_input.h) sends the same keysyms through the compositor.
struct KeyCombo {
  std::vector<unsigned long> mods;
  unsigned long key = 0;
  std::string keyName;
  bool hasShift = false;
};
Error ParseKeyCombo(const std::string& combo, KeyCombo& out);

}  // namespace axsnap
