// X11 for the Linux backend: the window's pixels and synthetic input.
// Xlib documentation: https://www.x.org/releases/current/doc/libX11/libX11/libX11.html
// XShm: https://www.x.org/releases/current/doc/xextproto/shm.html ; XTest: xtest.pdf
//
// Used from the backend's worker thread only (Xlib without XInitThreads is
// not thread-safe). An X error never exits the process: a handler installed
// on Open() records it and the failing call returns kCaptureFailed /
// kInputFailed instead of Xlib's default exit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../core/types.h"

namespace axsnap {

class X11Display {
 public:
  X11Display() = default;
  ~X11Display();
  X11Display(const X11Display&) = delete;
  X11Display& operator=(const X11Display&) = delete;

  // Opens $DISPLAY. kCaptureFailed with a hint when there is no display.
  Error Open();
  bool IsOpen() const;

  // The top-level X window of `pid` (_NET_WM_PID on viewable windows) whose
  // geometry best matches `frame` (screen points). 0 when none.
  Error FindWindow(int64_t pid, const Rect& frame, unsigned long& xid);

  // XRaiseWindow + sync; then confirm the window is the topmost viewable
  // top-level window covering the frame's centre.
  Error RaiseAndVerify(unsigned long xid, const Rect& frame);

  // Pixels of the screen area `r` (clipped to the screen; MIT-SHM when
  // available) as RGBA rows. `captured` is the area actually read.
  Error CaptureRect(const Rect& r, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured);

  // Synthetic input with XTest at screen points.
  Error Click(double x, double y, int button, int count);
  Error Wheel(double x, double y, double dx, double dy);
  Error Drag(double x, double y, double toX, double toY, int button);
  Error Move(double x, double y);
  // "ctrl+shift+t", "Return", "alt+F4": modifiers ctrl/shift/alt/super/meta, then one key name (X keysym names or a
  // character).
  Error Keys(const std::string& combo);
  // Types UTF-8 text; characters without a keycode are mapped onto a spare keycode temporarily.
  Error Type(const std::string& utf8);

  int ScreenWidth() const;
  int ScreenHeight() const;

 private:
  struct Impl;
  Impl* impl_ = nullptr;
};

}  // namespace axsnap
