// The X thread and its queue: the connection lives on a thread of its own,
// each call posts a job there and waits at most until its deadline; a server
// that stops answering is abandoned (socket shut down, thread left to finish),
// and the next call opens a new connection. Opening is bounded too: a local
// display's socket is probed first. See x11_display.h for the whole contract.
//
// Xlib: "Display Functions" (XOpenDisplay, ConnectionNumber, XCloseDisplay),
// https://www.x.org/releases/current/doc/libX11/libX11/libX11.html ; the probe
// speaks the core protocol's connection setup ("Connection Setup",
// https://www.x.org/releases/current/doc/xproto/x11protocol.html) on the
// socket libxcb would use. Extensions queried when opening: MIT-SHM
// (XShmQueryExtension, https://www.x.org/releases/current/doc/xextproto/shm.html)
// and XTEST (XTestQueryExtension, XTestGrabControl,
// https://www.x.org/releases/current/doc/libXtst/xtestlib.html).
#include <X11/Xlib.h>
#include <X11/extensions/XShm.h>
#include <X11/extensions/XTest.h>
#include <dlfcn.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "x11_display.h"
#include "x11_internal.h"

namespace axsnap {
namespace {

using IOExitHandlerFn = void (*)(Display*, void*);
using SetIOExitHandlerFn = void (*)(Display*, IOExitHandlerFn, void*);

}  // namespace

void X11Display::Impl::OnIOExit(Display*, void* data) {
  // libX11 >= 1.7: returning (instead of exit) leaves the display unusable.
  static_cast<Impl*>(data)->dead = true;
}

Error X11Display::Impl::OpenDisplay(const std::string& name) {
  InstallHandlers();
  Display* d = XOpenDisplay(name.c_str());
  if (d == nullptr) {
    UninstallHandlers();
    return Error{ErrorCode::kCaptureFailed, "no X display: set DISPLAY (cannot open \"" + name + "\")"};
  }
  dpy = d;
  fd = ConnectionNumber(d);
  // libX11 >= 1.7 only; looked up at run time.
  if (auto setExit = reinterpret_cast<SetIOExitHandlerFn>(dlsym(RTLD_DEFAULT, "XSetIOErrorExitHandler"))) {
    setExit(d, &Impl::OnIOExit, this);
  }
  screen = DefaultScreen(d);
  root = RootWindow(d, screen);
  visual = DefaultVisual(d, screen);
  depth = DefaultDepth(d, screen);
  const char* noShm = std::getenv("AXSNAP_NO_XSHM");  // debugging/benchmark switch: force XGetImage
  hasShm = XShmQueryExtension(d) && !(noShm != nullptr && *noShm != 0 && *noShm != '0');
  int ev = 0, er = 0, major = 0, minor = 0;
  hasXTest = XTestQueryExtension(d, &ev, &er, &major, &minor);
  if (hasXTest) XTestGrabControl(d, True);  // our input still flows during another client's server grab
  netWmPid = XInternAtom(d, "_NET_WM_PID", True);
  if (dead) return Error{ErrorCode::kCaptureFailed, "the X display connection was lost while opening"};
  ready = true;
  return {};
}

void X11Display::Impl::Close() {
  if (dpy == nullptr) return;
  ready = false;
  ReleaseShm();
  XCloseDisplay(dpy);
  dpy = nullptr;
  UninstallHandlers();
}

struct X11Display::Conn {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  bool quit = false;  // set once: run nothing more, close the display, end
  Impl impl;
};

namespace {

using Conn = X11Display::Conn;

// The X thread: runs jobs in order; on quit closes the display and ends. It
// holds the connection's memory, so an abandoned thread that wakes up late
// (its socket shut down) still finds valid state.
void ConnThread(std::shared_ptr<Conn> c) {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(c->mutex);
      c->cv.wait(lock, [&] { return c->quit || !c->jobs.empty(); });
      if (c->quit) break;
      job = std::move(c->jobs.front());
      c->jobs.pop_front();
    }
    job();
  }
  c->impl.Close();
}

struct JobState {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  Error err;
  std::atomic<bool> sent{false};
};

// Parses "[unix]:N[.S]" (a local display); false for TCP and other forms.
bool LocalDisplayNumber(const std::string& name, std::string& number) {
  const size_t colon = name.rfind(':');
  if (colon == std::string::npos) return false;
  const std::string host = name.substr(0, colon);
  if (!host.empty() && host != "unix") return false;
  number = name.substr(
      colon + 1, name.find('.', colon) == std::string::npos ? std::string::npos : name.find('.', colon) - colon - 1);
  return !number.empty() && std::all_of(number.begin(), number.end(), [](char ch) { return std::isdigit(ch) != 0; });
}

// poll() on one fd until the deadline; true when `events` arrived.
bool PollUntil(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n > 0) return (p.revents & (events | POLLHUP | POLLERR)) != 0;
    if (n < 0 && errno != EINTR) return false;
  }
}

// Closes a socket on every path.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// 0 = nothing listens there, 1 = the server answered, -1 = it did not answer by the deadline.
int ProbeSocket(const std::string& path, bool abstract, Clock::time_point deadline) {
  Fd s{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)};
  if (s.fd < 0) return 0;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  socklen_t len = sizeof addr;
  if (abstract) {  // Linux abstract namespace: a leading NUL, no terminator
    std::memcpy(addr.sun_path + 1, path.data(), std::min(path.size(), sizeof addr.sun_path - 2));
    len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + path.size());
  } else {
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  }
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    if (errno != EINPROGRESS && errno != EAGAIN) return 0;
    if (!PollUntil(s.fd, POLLOUT, deadline)) return -1;  // a full accept queue: the server is not accepting
  }
  // Connection setup: little-endian, protocol 11.0, no authorisation. Any reply (success, failure,
  // authenticate) proves the server answers.
  const unsigned char setup[12] = {'l', 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  if (::send(s.fd, setup, sizeof setup, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof setup)) return 0;
  return PollUntil(s.fd, POLLIN, deadline) ? 1 : -1;
}

// A local X server that accepts connections but never answers would block
// XOpenDisplay forever: ask it for a setup reply first, bounded by the
// deadline. Remote displays are bounded by the X thread's wait only.
Error ProbeServer(const std::string& name, Clock::time_point deadline) {
  std::string number;
  if (!LocalDisplayNumber(name, number)) return {};
  const std::string path = "/tmp/.X11-unix/X" + number;
  for (const bool abstract : {true, false}) {  // libxcb's order on Linux
    const int r = ProbeSocket(path, abstract, deadline);
    if (r == 1) return {};
    if (r == -1) {
      return Error{ErrorCode::kTimeout,
                   "the X server at \"" + name + "\" accepted the connection but did not answer within the deadline"};
    }
  }
  return {};  // nothing listens: XOpenDisplay fails at once with its own message
}

}  // namespace

X11Display::~X11Display() { Retire(); }

bool X11Display::IsOpen() const { return conn_ != nullptr && conn_->impl.ready && !conn_->impl.dead; }

void X11Display::Retire() {
  if (!conn_) return;
  {
    std::lock_guard<std::mutex> lock(conn_->mutex);
    conn_->quit = true;
    conn_->jobs.clear();
  }
  conn_->cv.notify_all();
  conn_.reset();
  bound_.clear();  // window ids belong to that connection's server
}

void X11Display::Abandon() {
  if (!conn_) return;
  conn_->impl.dead = true;
  const int fd = conn_->impl.fd;
  // Wakes a thread blocked reading or writing the socket: Xlib then takes
  // the I/O-error path, which returns (see OnIOExit) instead of exiting.
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  Retire();
}

Error X11Display::Open(Clock::time_point deadline) {
  if (IsOpen()) return {};
  Retire();  // a lost or abandoned connection: start over (the X server may have restarted)
  const char* env = std::getenv("DISPLAY");
  if (env == nullptr || *env == 0) return Error{ErrorCode::kCaptureFailed, "no X display: set DISPLAY"};
  const std::string name = env;
  if (Error e = ProbeServer(name, deadline)) return e;
  auto c = std::make_shared<Conn>();
  std::thread(ConnThread, c).detach();
  conn_ = c;
  Error e = RunOpen(deadline, [name](Impl& d, std::atomic<bool>&) { return d.OpenDisplay(name); });
  if (e) Retire();
  return e;
}

Error X11Display::RunOpen(Clock::time_point until, Job job) {
  Outcome outcome;
  return RunOnce(conn_, until, job, outcome);
}

Error X11Display::Run(Clock::time_point until, Job job, Outcome& outcome) {
  // A connection found dead by this call (the X server restarted since the
  // last one) is reopened and the job run again once, when nothing was sent.
  for (int attempt = 0;; ++attempt) {
    if (Clock::now() >= until) return Error{ErrorCode::kTimeout, "the deadline passed before the X call"};
    if (Error e = Open(until)) return e;
    auto c = conn_;
    Error e = RunOnce(c, until, job, outcome);
    if (outcome.timedOut || !c->impl.dead) return e;
    Retire();  // the connection was lost: the next call reconnects
    if (!e || outcome.sent || attempt > 0) return e;
  }
}

Error X11Display::RunOnce(const std::shared_ptr<Conn>& c, Clock::time_point until, const Job& job, Outcome& outcome) {
  auto st = std::make_shared<JobState>();
  {
    std::lock_guard<std::mutex> lock(c->mutex);
    c->jobs.push_back([c, st, job]() {
      Error e = job(c->impl, st->sent);
      std::lock_guard<std::mutex> done(st->mutex);
      st->err = std::move(e);
      st->done = true;
      st->cv.notify_all();
    });
  }
  c->cv.notify_one();
  std::unique_lock<std::mutex> lock(st->mutex);
  const bool done = st->cv.wait_until(lock, until, [&] { return st->done; });
  outcome.sent = st->sent;
  outcome.timedOut = !done;
  if (!done) {
    lock.unlock();
    Abandon();
    return Error{ErrorCode::kTimeout, "the X server did not answer within the deadline"};
  }
  return st->err;
}

}  // namespace axsnap
