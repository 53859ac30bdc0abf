// X errors, so that none ends the process: the process-wide handlers, the
// trap each operation brackets its requests with, and the error's text.
//
// X errors: Open() installs a process-wide error handler (shared by every
// open X11Display, reference counted) that records the error in a
// thread_local and returns 0, so a BadWindow/BadMatch never exits the
// process. Each operation brackets its requests with BeginTrap/EndTrap
// (XSync before and after) and turns a recorded error into an Error.
//
// I/O errors (the X server goes away): Xlib calls the XIOErrorHandler and
// then, before libX11 1.7, always exit()s. With libX11 >= 1.7 a per-display
// exit handler (XSetIOErrorExitHandler, looked up at run time so the addon
// still loads against older libX11) may return instead: the display is then
// marked dead, later calls fail with an Error, and the connection is never
// used again. With an older libX11 a lost X server still ends the process;
// that limitation cannot be avoided from inside Xlib.
//
// Xlib: "Using the Default Error Handlers" (XSetErrorHandler,
// XSetIOErrorHandler, XGetErrorText) and XSetIOErrorExitHandler (libX11 1.7),
// https://www.x.org/releases/current/doc/libX11/libX11/libX11.html
#include <X11/Xlib.h>

#include <cstdio>
#include <mutex>
#include <string>

#include "x11_internal.h"

namespace axsnap {
namespace {

struct XErrorRecord {
  int code = 0;     // last error_code, 0 = none
  int request = 0;  // its major request code
  int minor = 0;
  unsigned long resource = 0;
  int count = 0;
};

// The display is used from one thread; the handler runs on the thread that
// made the failing call, so a thread_local is exact.
thread_local XErrorRecord t_xerror;

int OnXError(Display*, XErrorEvent* e) {
  t_xerror.code = e->error_code;
  t_xerror.request = e->request_code;
  t_xerror.minor = e->minor_code;
  t_xerror.resource = e->resourceid;
  t_xerror.count++;
  return 0;
}

int OnXIOError(Display*) {
  // Called when the connection is lost. Returning lets Xlib call the
  // per-display exit handler (Impl::OnIOExit) on libX11 >= 1.7, which marks
  // the display dead; older versions exit() after this regardless.
  return 0;
}

std::mutex g_handler_mutex;
int g_handler_users = 0;
XErrorHandler g_prev_error = nullptr;
XIOErrorHandler g_prev_io = nullptr;

}  // namespace

namespace x11 {

void InstallHandlers() {
  std::lock_guard<std::mutex> lock(g_handler_mutex);
  if (g_handler_users++ == 0) {
    g_prev_error = XSetErrorHandler(OnXError);
    g_prev_io = XSetIOErrorHandler(OnXIOError);
  }
}

void UninstallHandlers() {
  std::lock_guard<std::mutex> lock(g_handler_mutex);
  if (g_handler_users > 0 && --g_handler_users == 0) {
    XSetErrorHandler(g_prev_error);
    XSetIOErrorHandler(g_prev_io);
    g_prev_error = nullptr;
    g_prev_io = nullptr;
  }
}

}  // namespace x11

namespace {

std::string ErrorText(Display* dpy, int code) {
  char buf[160] = {0};
  if (dpy != nullptr) XGetErrorText(dpy, code, buf, sizeof buf);
  if (buf[0] == 0) std::snprintf(buf, sizeof buf, "X error %d", code);
  return buf;
}

}  // namespace

namespace x11 {

std::string Hex(unsigned long v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%lx", v);
  return buf;
}

}  // namespace x11

void X11Display::Impl::BeginTrap() {
  XSync(dpy, False);
  t_xerror = XErrorRecord{};
}

int X11Display::Impl::EndTrap() {
  XSync(dpy, False);
  return t_xerror.code;
}

std::string X11Display::Impl::LastErrorText() const {
  return ErrorText(dpy, t_xerror.code) + " (request " + std::to_string(t_xerror.request) + "." +
         std::to_string(t_xerror.minor) + ", resource " + Hex(t_xerror.resource) + ")";
}

}  // namespace axsnap
