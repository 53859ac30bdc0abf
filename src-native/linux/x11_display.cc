// X11 for the Linux backend: window lookup, capture (MIT-SHM or XGetImage)
// and synthetic input (XTEST). See x11_display.h.
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
#include "x11_display.h"

#include "process_life.h"
#include "x11_clients.h"

// PointerEvent. Its default virtual methods leave parameters unused, which the
// hand-built x11_selftest (-Wextra -Werror) would reject.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../core/backend.h"
#pragma GCC diagnostic pop

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

namespace axsnap {
namespace {

using Clock = std::chrono::steady_clock;

// ---- error handling --------------------------------------------------------

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

using IOExitHandlerFn = void (*)(Display*, void*);
using SetIOExitHandlerFn = void (*)(Display*, IOExitHandlerFn, void*);

std::string ErrorText(Display* dpy, int code) {
  char buf[160] = {0};
  if (dpy != nullptr) XGetErrorText(dpy, code, buf, sizeof buf);
  if (buf[0] == 0) std::snprintf(buf, sizeof buf, "X error %d", code);
  return buf;
}

std::string Hex(unsigned long v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%lx", v);
  return buf;
}

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// ---- geometry ----------------------------------------------------------------

struct IRect {
  long x = 0, y = 0, w = 0, h = 0;
};

double IntersectionArea(const IRect& a, const Rect& b) {
  const double x0 = std::max<double>(a.x, b.x), y0 = std::max<double>(a.y, b.y);
  const double x1 = std::min<double>(a.x + a.w, b.x + b.w), y1 = std::min<double>(a.y + a.h, b.y + b.h);
  return (x1 > x0 && y1 > y0) ? (x1 - x0) * (y1 - y0) : 0;
}

bool ToPixel(double v, int& out) {
  if (!std::isfinite(v) || v < -1e6 || v > 1e6) return false;
  out = static_cast<int>(std::lround(v));
  return true;
}

// ---- keyboard ---------------------------------------------------------------

// A snapshot of the core keyboard mapping, read fresh for each operation
// (Xlib's own cache only refreshes when MappingNotify events are processed,
// which this client never does).
class KeyMap {
 public:
  explicit KeyMap(Display* dpy) {
    XDisplayKeycodes(dpy, &min_, &max_);
    if (max_ >= min_) syms_ = XGetKeyboardMapping(dpy, static_cast<KeyCode>(min_), max_ - min_ + 1, &per_);
    if (syms_ == nullptr) per_ = 0;
  }
  ~KeyMap() {
    if (syms_ != nullptr) XFree(syms_);
  }
  KeyMap(const KeyMap&) = delete;
  KeyMap& operator=(const KeyMap&) = delete;

  bool ok() const { return syms_ != nullptr && per_ > 0; }
  int per() const { return per_; }

  KeySym At(int kc, int col) const {
    if (!ok() || kc < min_ || kc > max_ || col < 0 || col >= per_) return NoSymbol;
    return syms_[(kc - min_) * per_ + col];
  }

  // A keycode producing `ks` at level 0 (no shift) or 1 (shift) of group 1.
  bool Find(KeySym ks, KeyCode& kc, int& level) const {
    if (!ok() || ks == NoSymbol) return false;
    for (int want = 0; want < 2; ++want) {
      for (int k = min_; k <= max_; ++k) {
        KeySym s0 = At(k, 0);
        KeySym s1 = per_ > 1 ? At(k, 1) : NoSymbol;
        if (s1 == NoSymbol && s0 != NoSymbol) {
          // Core protocol rule: a lone alphabetic keysym means (lower, upper).
          KeySym lower = 0, upper = 0;
          XConvertCase(s0, &lower, &upper);
          if (lower != upper) {
            s0 = lower;
            s1 = upper;
          }
        }
        if ((want == 0 ? s0 : s1) == ks) {
          kc = static_cast<KeyCode>(k);
          level = want;
          return true;
        }
      }
    }
    return false;
  }

  // Keycodes with no keysym at all: safe to borrow temporarily.
  std::vector<KeyCode> Spare() const {
    std::vector<KeyCode> out;
    if (!ok()) return out;
    for (int k = max_; k >= min_; --k) {  // high keycodes first: least likely to be physical keys
      bool empty = true;
      for (int c = 0; c < per_ && empty; ++c) empty = At(k, c) == NoSymbol;
      if (empty && k > 8) out.push_back(static_cast<KeyCode>(k));
    }
    return out;
  }

 private:
  int min_ = 0, max_ = -1, per_ = 0;
  KeySym* syms_ = nullptr;
};

KeySym KeysymForCodePoint(uint32_t cp) {
  if ((cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff)) return cp;
  switch (cp) {
    case '\n':
    case '\r': return XK_Return;
    case '\t': return XK_Tab;
    case '\b': return XK_BackSpace;
    case 0x1b: return XK_Escape;
    case 0x7f: return XK_Delete;
    default: break;
  }
  if (cp < 0x20 || (cp >= 0x80 && cp < 0xa0) || cp > 0x10ffff) return NoSymbol;
  return 0x01000000UL | cp;
}

// Decodes UTF-8; false on malformed input.
bool DecodeUtf8(const std::string& s, std::vector<uint32_t>& out) {
  out.clear();
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    uint32_t cp = 0;
    int extra = 0;
    if (c < 0x80) {
      cp = c;
    } else if ((c & 0xe0) == 0xc0) {
      cp = c & 0x1f;
      extra = 1;
    } else if ((c & 0xf0) == 0xe0) {
      cp = c & 0x0f;
      extra = 2;
    } else if ((c & 0xf8) == 0xf0) {
      cp = c & 0x07;
      extra = 3;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;  // truncated sequence
    for (int k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Reject overlong forms, surrogates and out-of-range values.
    if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    out.push_back(cp);
    i += 1 + extra;
  }
  return true;
}

std::string Lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

KeySym ModifierKeysym(const std::string& lower) {
  if (lower == "ctrl" || lower == "control") return XK_Control_L;
  if (lower == "shift") return XK_Shift_L;
  if (lower == "alt" || lower == "option") return XK_Alt_L;
  if (lower == "super" || lower == "cmd" || lower == "command" || lower == "meta" || lower == "win") return XK_Super_L;
  return NoSymbol;
}

KeySym NamedKeysym(const std::string& lower) {
  struct Alias {
    const char* name;
    KeySym sym;
  };
  static const Alias kAliases[] = {
      {"enter", XK_Return},        {"return", XK_Return},     {"esc", XK_Escape},
      {"escape", XK_Escape},       {"tab", XK_Tab},           {"space", XK_space},
      {"backspace", XK_BackSpace}, {"delete", XK_Delete},     {"del", XK_Delete},
      {"insert", XK_Insert},       {"ins", XK_Insert},        {"up", XK_Up},
      {"down", XK_Down},           {"left", XK_Left},         {"right", XK_Right},
      {"arrowup", XK_Up},          {"arrowdown", XK_Down},    {"arrowleft", XK_Left},
      {"arrowright", XK_Right},    {"home", XK_Home},         {"end", XK_End},
      {"pageup", XK_Page_Up},      {"pgup", XK_Page_Up},      {"page_up", XK_Page_Up},
      {"pagedown", XK_Page_Down},  {"pgdn", XK_Page_Down},    {"page_down", XK_Page_Down},
      {"menu", XK_Menu},           {"plus", XK_plus},         {"minus", XK_minus},
      {"capslock", XK_Caps_Lock},  {"printscreen", XK_Print},
  };
  for (const auto& a : kAliases) {
    if (lower == a.name) return a.sym;
  }
  if (lower.size() >= 2 && lower.size() <= 3 && lower[0] == 'f' && std::isdigit(static_cast<unsigned char>(lower[1]))) {
    const int n = std::atoi(lower.c_str() + 1);
    if (n >= 1 && n <= 35) return XK_F1 + (n - 1);
  }
  return NoSymbol;
}

// Every named keysym, by its lower-case name. X resolves names exactly only
// (XStringToKeysym) and cannot list them, so the table is built once by naming
// every keysym value: the Latin-1 to special-key range, and the vendor pages
// (HP, DEC, Sun, XFree86). Unicode keysyms (U20AC) are not listed: a single
// character names its key anyway. An alias X does not give back for its value
// (Page_Up for Prior) still resolves exactly.
const std::unordered_map<std::string, std::vector<KeySym>>& KeysymsByLowerName() {
  static const std::unordered_map<std::string, std::vector<KeySym>> table = [] {
    std::unordered_map<std::string, std::vector<KeySym>> t;
    const auto add = [&t](KeySym ks) {
      const char* name = XKeysymToString(ks);
      if (name != nullptr) t[Lower(name)].push_back(ks);
    };
    for (KeySym ks = 0x20; ks <= 0xffff; ++ks) add(ks);
    for (const KeySym page : {0x1000ff00UL, 0x1004ff00UL, 0x1005ff00UL, 0x1008ff00UL})
      for (KeySym ks = page; ks <= page + 0xff; ++ks) add(ks);
    return t;
  }();
  return table;
}

// How many letters of `name` have the case they have in `x`.
int CaseAgreement(const std::string& name, const char* x) {
  int n = 0;
  for (size_t i = 0; i < name.size() && x[i] != '\0'; ++i) n += name[i] == x[i] ? 1 : 0;
  return n;
}

KeySym KeysymByName(const std::string& name) {
  const KeySym exact = XStringToKeysym(name.c_str());
  if (exact != NoSymbol) return exact;
  const auto& table = KeysymsByLowerName();
  const auto it = table.find(Lower(name));
  if (it == table.end()) return NoSymbol;
  KeySym best = NoSymbol;
  int bestScore = -1;
  for (KeySym ks : it->second) {
    const int score = CaseAgreement(name, XKeysymToString(ks));
    KeySym lower = 0, upper = 0;
    XConvertCase(ks, &lower, &upper);
    if (score > bestScore || (score == bestScore && ks == lower)) {
      best = ks;
      bestScore = score;
    }
  }
  return best;
}

}  // namespace

std::string KeysymNameOf(const std::string& name) {
  const KeySym ks = KeysymByName(name);
  const char* x = ks == NoSymbol ? nullptr : XKeysymToString(ks);
  return x == nullptr ? std::string() : std::string(x);
}

// ---- Impl ----------------------------------------------------------------------

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

  static void OnIOExit(Display*, void* data) {
    // libX11 >= 1.7: returning (instead of exit) leaves the display unusable.
    static_cast<Impl*>(data)->dead = true;
  }

  bool Alive() const { return dpy != nullptr && !dead; }

  void BeginTrap() {
    XSync(dpy, False);
    t_xerror = XErrorRecord{};
  }
  // The first error since BeginTrap (0 when none); syncs so every request is answered.
  int EndTrap() {
    XSync(dpy, False);
    return t_xerror.code;
  }
  std::string LastErrorText() const {
    return ErrorText(dpy, t_xerror.code) + " (request " + std::to_string(t_xerror.request) + "." +
           std::to_string(t_xerror.minor) + ", resource " + Hex(t_xerror.resource) + ")";
  }

  void DestroyShmImage() {
    if (shmImage != nullptr) {
      shmImage->data = nullptr;  // the segment is not the image's to free
      XDestroyImage(shmImage);
      shmImage = nullptr;
    }
  }

  void ReleaseShm() {
    DestroyShmImage();
    ReleaseSegment();
  }

  // Detaches the segment (the image header, if any, keeps its size but no data).
  void ReleaseSegment() {
    if (shmImage != nullptr) shmImage->data = nullptr;
    if (shmAttached) {
      if (Alive()) {
        XShmDetach(dpy, &shm);
        XSync(dpy, False);
      }
      shmdt(shm.shmaddr);
      shmAttached = false;
    }
    shm = XShmSegmentInfo{};
    shmCapacity = 0;
  }

  // A segment of at least `bytes`, attached on both sides. The id is removed
  // right after the server attached, so the kernel frees it when both
  // processes detach or die.
  bool EnsureShmSegment(size_t bytes, std::string& why) {
    if (shmAttached && shmCapacity >= bytes) return true;
    ReleaseSegment();
    const int id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0600);
    if (id < 0) {
      why = std::string("shmget: ") + std::strerror(errno);
      return false;
    }
    void* addr = shmat(id, nullptr, 0);
    if (addr == reinterpret_cast<void*>(-1)) {
      why = std::string("shmat: ") + std::strerror(errno);
      shmctl(id, IPC_RMID, nullptr);
      return false;
    }
    shm.shmid = id;
    shm.shmaddr = static_cast<char*>(addr);
    shm.readOnly = False;
    BeginTrap();
    const Status st = XShmAttach(dpy, &shm);
    const int err = EndTrap();
    shmctl(id, IPC_RMID, nullptr);
    if (!st || err != 0) {
      why = "XShmAttach failed" + (err != 0 ? ": " + LastErrorText() : std::string());
      shmdt(addr);
      shm = XShmSegmentInfo{};
      return false;
    }
    shmAttached = true;
    shmCapacity = bytes;
    return true;
  }

  // Reads (x, y, w, h) of the root into the shm image. nullptr when it failed.
  XImage* ShmGet(int x, int y, int w, int h, std::string& why) {
    if (shmImage == nullptr || shmImage->width != w || shmImage->height != h) {
      DestroyShmImage();
      shmImage = XShmCreateImage(dpy, visual, static_cast<unsigned>(depth), ZPixmap, nullptr, &shm,
                                 static_cast<unsigned>(w), static_cast<unsigned>(h));
      if (shmImage == nullptr) {
        why = "XShmCreateImage failed";
        shmBroken = true;
        return nullptr;
      }
    }
    const size_t bytes = static_cast<size_t>(shmImage->bytes_per_line) * static_cast<size_t>(h);
    if (!EnsureShmSegment(bytes, why)) {
      DestroyShmImage();
      shmBroken = true;
      return nullptr;
    }
    shmImage->data = shm.shmaddr;
    BeginTrap();
    const Bool ok = XShmGetImage(dpy, root, shmImage, x, y, AllPlanes);
    const int err = EndTrap();
    if (!ok || err != 0) {
      why = "XShmGetImage failed" + (err != 0 ? ": " + LastErrorText() : std::string());
      return nullptr;
    }
    return shmImage;
  }

  // The root's current size (follows RandR changes, which the cached
  // DisplayWidth/Height do not while this client processes no events).
  void RootSize(int& w, int& h) {
    w = DisplayWidth(dpy, screen);
    h = DisplayHeight(dpy, screen);
    Window r = 0;
    int x = 0, y = 0;
    unsigned int gw = 0, gh = 0, border = 0, depthRet = 0;
    // A round trip; the root always exists, so no error trap is needed.
    if (XGetGeometry(dpy, root, &r, &x, &y, &gw, &gh, &border, &depthRet) && gw > 0 && gh > 0) {
      w = static_cast<int>(gw);
      h = static_cast<int>(gh);
    }
  }

  bool Attributes(Window w, XWindowAttributes& attrs) {
    std::memset(&attrs, 0, sizeof attrs);
    return XGetWindowAttributes(dpy, w, &attrs) != 0;
  }

  // Root-relative rectangle of w's inside (excluding the border).
  bool RootRect(Window w, const XWindowAttributes& attrs, IRect& r) {
    int rx = 0, ry = 0;
    Window child = 0;
    if (!XTranslateCoordinates(dpy, w, root, 0, 0, &rx, &ry, &child)) return false;
    r = IRect{rx, ry, attrs.width, attrs.height};
    return true;
  }

  bool Children(Window w, std::vector<Window>& out, Window* parentOut = nullptr) {
    out.clear();
    Window rootRet = 0, parent = 0;
    Window* kids = nullptr;
    unsigned int n = 0;
    if (!XQueryTree(dpy, w, &rootRet, &parent, &kids, &n)) return false;
    if (kids != nullptr) {
      out.assign(kids, kids + n);
      XFree(kids);
    }
    if (parentOut != nullptr) *parentOut = parent;
    return true;
  }

  // The child of the root that contains w (w itself for a top-level); 0 on error.
  Window TopLevelOf(Window w) {
    std::vector<Window> kids;
    for (int guard = 0; guard < 64 && w != 0; ++guard) {
      Window parent = 0;
      if (!Children(w, kids, &parent)) return 0;
      if (parent == root || parent == 0) return parent == root ? w : 0;
      w = parent;
    }
    return 0;
  }

  long Pid(Window w) { return NetWmPid(dpy, w, netWmPid); }

  bool HasWindowManager() {
    const Atom check = XInternAtom(dpy, "_NET_SUPPORTING_WM_CHECK", True);
    if (check == None) return false;
    Atom type = None;
    int format = 0;
    unsigned long n = 0, after = 0;
    unsigned char* data = nullptr;
    bool found =
        XGetWindowProperty(dpy, root, check, 0, 1, False, XA_WINDOW, &type, &format, &n, &after, &data) == Success &&
        data != nullptr && type == XA_WINDOW && n >= 1;
    if (data != nullptr) XFree(data);
    return found;
  }

  // The topmost viewable child of the root containing (x, y); 0 when none.
  Window TopmostAt(int x, int y) {
    std::vector<Window> kids;
    if (!Children(root, kids)) return 0;
    for (size_t i = kids.size(); i-- > 0;) {  // stacking order: bottom to top
      XWindowAttributes a;
      if (!Attributes(kids[i], a) || a.map_state != IsViewable) continue;
      const long w = a.width + 2L * a.border_width, h = a.height + 2L * a.border_width;
      if (x >= a.x && x < a.x + w && y >= a.y && y < a.y + h) return kids[i];
    }
    return 0;
  }

  // Opens `name` on this (the X) thread. Mirrors the old Open(): handlers,
  // per-display exit handler, extensions.
  Error OpenDisplay(const std::string& name) {
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

  // Frees the connection. After an I/O error the display struct is still
  // allocated; closing it frees the memory (requests on it are no-ops).
  void Close() {
    if (dpy == nullptr) return;
    ready = false;
    ReleaseShm();
    XCloseDisplay(dpy);
    dpy = nullptr;
    UninstallHandlers();
  }

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
  std::vector<Client> Clients() {
    std::vector<Client> out;
    std::vector<Window> tops, kids, grandkids;
    Children(root, tops);
    for (Window top : tops) {
      XWindowAttributes a;
      if (!Attributes(top, a)) continue;
      Client c;
      c.top = c.client = top;
      c.viewable = a.map_state == IsViewable;
      c.overrideRedirect = a.override_redirect != 0;
      c.outer = IRect{a.x, a.y, a.width + 2L * a.border_width, a.height + 2L * a.border_width};
      c.pid = Pid(top);
      if (!RootRect(top, a, c.rect)) continue;
      if (c.pid < 0 && c.viewable) FindClientBelow(top, c, kids, grandkids);
      if (c.pid < 0) PidFromServer(top, a, c, kids, grandkids);
      out.push_back(c);
    }
    return out;
  }

  void FindClientBelow(Window top, Client& c, std::vector<Window>& kids, std::vector<Window>& grandkids) {
    if (!Children(top, kids)) return;
    for (Window k : kids) {
      if (AdoptIfClient(k, c)) return;
      if (!Children(k, grandkids)) continue;
      for (Window g : grandkids) {
        if (AdoptIfClient(g, c)) return;
      }
    }
  }

  bool AdoptIfClient(Window w, Client& c) {
    XWindowAttributes a;
    IRect r;
    if (!Attributes(w, a) || a.map_state != IsViewable) return false;
    const long p = Pid(w);
    if (p < 0 || !RootRect(w, a, r)) return false;
    c.client = w;
    c.pid = p;
    c.rect = r;
    return true;
  }

  // The pid of a top-level that carries no _NET_WM_PID (xmessage, Tk), from the X server (X-Resource): of the
  // top-level itself when it is a client (it has WM_CLASS) or a popup (override-redirect windows are never
  // reparented), else of a client window one or two levels down (a reparenting WM's frame is the WM's own).
  void PidFromServer(Window top, const XWindowAttributes& a, Client& c, std::vector<Window>& kids,
                     std::vector<Window>& grandkids) {
    if (a.override_redirect || HasWmClass(dpy, top)) {
      c.pid = xres.PidOf(dpy, top);
      return;
    }
    if (!c.viewable || !Children(top, kids)) return;
    for (Window k : kids) {
      if (AdoptByClass(k, c)) return;
      if (!Children(k, grandkids)) continue;
      for (Window g : grandkids)
        if (AdoptByClass(g, c)) return;
    }
  }

  bool AdoptByClass(Window w, Client& c) {
    XWindowAttributes a;
    IRect r;
    if (!Attributes(w, a) || a.map_state != IsViewable || !HasWmClass(dpy, w)) return false;
    const long p = xres.PidOf(dpy, w);
    if (p < 0 || !RootRect(w, a, r)) return false;
    c.client = w;
    c.pid = p;
    c.rect = r;
    return true;
  }

  // The window's title: _NET_WM_NAME (UTF-8), else WM_NAME.
  std::string Name(Window w) { return WindowName(dpy, w); }

  Window TransientFor(Window w) {
    Window t = 0;
    return XGetTransientForHint(dpy, w, &t) ? t : 0;
  }

  void Motion(int x, int y) { XTestFakeMotionEvent(dpy, screen, x, y, CurrentTime); }
  void Button(int b, bool down) {
    XTestFakeButtonEvent(dpy, static_cast<unsigned>(b), down ? True : False, CurrentTime);
  }
  void Key(KeyCode kc, bool down) { XTestFakeKeyEvent(dpy, kc, down ? True : False, CurrentTime); }
};

namespace {

// Converts a ZPixmap XImage to RGBA rows with alpha 255, using the channel
// masks generically (any bit depth of 8/16/24/32 bits per pixel, either byte order).
bool ConvertImage(const XImage* img, const Visual* visual, int w, int h, std::vector<uint8_t>& out, std::string& why) {
  unsigned long masks[3] = {img->red_mask, img->green_mask, img->blue_mask};
  if ((masks[0] == 0 || masks[1] == 0 || masks[2] == 0) && visual != nullptr) {
    masks[0] = visual->red_mask;
    masks[1] = visual->green_mask;
    masks[2] = visual->blue_mask;
  }
  if (masks[0] == 0 || masks[1] == 0 || masks[2] == 0) {
    why = "unsupported visual (no colour masks: not TrueColor/DirectColor)";
    return false;
  }
  out.resize(static_cast<size_t>(w) * h * 4);
  const int bpp = img->bits_per_pixel;
  const int bpl = img->bytes_per_line;
  const bool msb = img->byte_order == MSBFirst;
  const auto* base = reinterpret_cast<const uint8_t*>(img->data);
  uint8_t* dst = out.data();

  // Fast paths: 32 bpp x8r8g8b8 in either byte order.
  if (bpp == 32 && masks[0] == 0xff0000 && masks[1] == 0xff00 && masks[2] == 0xff) {
    for (int y = 0; y < h; ++y) {
      const uint8_t* p = base + static_cast<size_t>(y) * bpl;
      for (int x = 0; x < w; ++x, p += 4, dst += 4) {
        if (msb) {
          dst[0] = p[1];
          dst[1] = p[2];
          dst[2] = p[3];
        } else {
          dst[0] = p[2];
          dst[1] = p[1];
          dst[2] = p[0];
        }
        dst[3] = 255;
      }
    }
    return true;
  }

  int shift[3], bits[3];
  for (int c = 0; c < 3; ++c) {
    shift[c] = __builtin_ctzl(masks[c]);
    bits[c] = __builtin_popcountl(masks[c]);
  }
  auto channel = [&](unsigned long pix, int c) -> uint8_t {
    const unsigned long v = (pix & masks[c]) >> shift[c];
    if (bits[c] == 8) return static_cast<uint8_t>(v);
    if (bits[c] > 8) return static_cast<uint8_t>(v >> (bits[c] - 8));
    const unsigned long max = (1UL << bits[c]) - 1;
    return static_cast<uint8_t>((v * 255 + max / 2) / max);
  };
  const int bytesPerPixel = bpp / 8;
  const bool byteAligned = bpp == 8 || bpp == 16 || bpp == 24 || bpp == 32;
  for (int y = 0; y < h; ++y) {
    const uint8_t* row = base + static_cast<size_t>(y) * bpl;
    for (int x = 0; x < w; ++x, dst += 4) {
      unsigned long pix = 0;
      if (byteAligned) {
        const uint8_t* p = row + static_cast<size_t>(x) * bytesPerPixel;
        for (int k = 0; k < bytesPerPixel; ++k) {
          if (msb) {
            pix = (pix << 8) | p[k];
          } else {
            pix |= static_cast<unsigned long>(p[k]) << (8 * k);
          }
        }
      } else {
        pix = XGetPixel(const_cast<XImage*>(img), x, y);
      }
      dst[0] = channel(pix, 0);
      dst[1] = channel(pix, 1);
      dst[2] = channel(pix, 2);
      dst[3] = 255;
    }
  }
  return true;
}

}  // namespace

// ---- X-thread primitives -------------------------------------------------------

namespace {

using Impl = X11Display::Impl;

Error XRaiseAndVerify(Impl& d, unsigned long xid, const Rect& frame) {
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "X display not open"};
  if (xid == 0 || xid == d.root) return Error{ErrorCode::kInputFailed, "no X window to raise"};

  d.BeginTrap();
  const Window top = d.TopLevelOf(xid);
  XWindowAttributes a;
  const bool haveAttrs = top != 0 && d.Attributes(xid, a);
  if (d.EndTrap() != 0 || top == 0 || !haveAttrs) {
    return Error{ErrorCode::kInputFailed, "X window " + Hex(xid) + " is gone: " + d.LastErrorText()};
  }
  if (a.map_state != IsViewable) {
    return Error{ErrorCode::kInputFailed, "X window " + Hex(xid) + " is not viewable (minimized or hidden)"};
  }
  IRect own;
  {
    d.BeginTrap();
    const bool ok = d.RootRect(xid, a, own);
    d.EndTrap();
    if (!ok) return Error{ErrorCode::kInputFailed, "X window " + Hex(xid) + " is gone"};
  }
  double cx = own.x + own.w / 2.0, cy = own.y + own.h / 2.0;
  if (frame.w > 0 && frame.h > 0 && std::isfinite(frame.x) && std::isfinite(frame.y)) {
    cx = frame.x + frame.w / 2;
    cy = frame.y + frame.h / 2;
  }
  const int px = static_cast<int>(std::floor(cx)), py = static_cast<int>(std::floor(cy));

  const bool wm = d.HasWindowManager();
  auto raise = [&]() {
    if (wm) {
      // Ask the window manager (it may ignore a plain XRaiseWindow on its frame's client).
      XEvent ev;
      std::memset(&ev, 0, sizeof ev);
      ev.xclient.type = ClientMessage;
      ev.xclient.window = xid;
      ev.xclient.message_type = XInternAtom(d.dpy, "_NET_ACTIVE_WINDOW", False);
      ev.xclient.format = 32;
      ev.xclient.data.l[0] = 2;  // source: pager/tool
      ev.xclient.data.l[1] = CurrentTime;
      XSendEvent(d.dpy, d.root, False, SubstructureRedirectMask | SubstructureNotifyMask, &ev);
    }
    XRaiseWindow(d.dpy, top);
    XSync(d.dpy, False);
  };

  d.BeginTrap();
  // Already on top (the common case between snapshots): no raise, no waiting.
  Window hit = d.TopmostAt(px, py);
  if (hit != top) {
    raise();
    const auto t0 = Clock::now();
    for (int attempt = 0;; ++attempt) {
      hit = d.TopmostAt(px, py);
      if (hit == top) break;
      if (MsSince(t0) > 200) break;
      SleepMs(10);
      if (attempt % 3 == 2) raise();
    }
  }
  if (hit == top && !wm) {
    // Without a window manager nobody assigns keyboard focus: give it to the
    // window so Keys/Type reach it. Failure (e.g. a race with unmapping) is not fatal.
    XSetInputFocus(d.dpy, xid, RevertToPointerRoot, CurrentTime);
  }
  d.EndTrap();
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  if (hit != top) {
    return Error{ErrorCode::kInputFailed, "X window " + Hex(xid) + " is not on top at (" + std::to_string(px) + ", " +
                                              std::to_string(py) + ")" +
                                              (hit != 0 ? ": covered by " + Hex(hit) : ": point is outside it")};
  }
  return {};
}

Error XCaptureRect(Impl& d, const Rect& r, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured) {
  rgba.clear();
  width = height = 0;
  captured = Rect{};
  if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "X display not open"};
  if (!std::isfinite(r.x) || !std::isfinite(r.y) || !std::isfinite(r.w) || !std::isfinite(r.h)) {
    return Error{ErrorCode::kInvalidArgument, "capture rectangle is not finite"};
  }
  int sw = 0, sh = 0;
  d.RootSize(sw, sh);
  // Clip to the screen: XGetImage outside the root raises BadMatch.
  const double x0 = std::max(0.0, std::floor(r.x)), y0 = std::max(0.0, std::floor(r.y));
  const double x1 = std::min<double>(sw, std::ceil(r.x + r.w)), y1 = std::min<double>(sh, std::ceil(r.y + r.h));
  if (!(x1 > x0) || !(y1 > y0)) {
    return Error{ErrorCode::kCaptureFailed, "capture area is entirely off screen"};
  }
  const int x = static_cast<int>(x0), y = static_cast<int>(y0);
  const int w = static_cast<int>(x1 - x0), h = static_cast<int>(y1 - y0);

  std::string why;
  if (d.hasShm) {
    if (XImage* img = d.ShmGet(x, y, w, h, why)) {
      if (!ConvertImage(img, d.visual, w, h, rgba, why)) return Error{ErrorCode::kCaptureFailed, why};
      width = w;
      height = h;
      captured = Rect{x0, y0, x1 - x0, y1 - y0};
      return {};
    }
    if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "the X display connection was lost"};
    if (d.shmBroken) {
      // Remote display, separate IPC namespace, no shm permission: XGetImage from now on.
      d.ReleaseShm();
      d.hasShm = false;
    }
  }
  d.BeginTrap();
  XImage* img = XGetImage(d.dpy, d.root, x, y, static_cast<unsigned>(w), static_cast<unsigned>(h), AllPlanes, ZPixmap);
  const int err = d.EndTrap();
  if (img == nullptr || err != 0) {
    if (img != nullptr) XDestroyImage(img);
    std::string msg = "XGetImage failed";
    if (err != 0) msg += ": " + d.LastErrorText();
    if (!why.empty()) msg += " (after " + why + ")";
    return Error{ErrorCode::kCaptureFailed, msg};
  }
  const bool ok = ConvertImage(img, d.visual, w, h, rgba, why);
  XDestroyImage(img);
  if (!ok) {
    rgba.clear();
    return Error{ErrorCode::kCaptureFailed, why};
  }
  width = w;
  height = h;
  captured = Rect{x0, y0, x1 - x0, y1 - y0};
  return {};
}

// ---- input -----------------------------------------------------------------------

namespace {

Error InputReady(const X11Display::Impl& d) {
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "X display not open"};
  if (!d.hasXTest)
    return Error{ErrorCode::kInputFailed, "the X server has no XTEST extension: synthetic input is unavailable"};
  return {};
}

}  // namespace

Error XClick(Impl& d, double x, double y, int button, int count) {
  if (Error e = InputReady(d)) return e;
  int px = 0, py = 0;
  if (!ToPixel(x, px) || !ToPixel(y, py)) return Error{ErrorCode::kInvalidArgument, "click point is not finite"};
  if (button < 1 || button > 9) return Error{ErrorCode::kInvalidArgument, "button must be 1..9"};
  count = std::clamp(count, 1, 10);
  d.BeginTrap();
  d.Motion(px, py);
  XSync(d.dpy, False);
  for (int i = 0; i < count; ++i) {
    if (i > 0) SleepMs(40);  // well inside double-click time (GTK: 400 ms)
    d.Button(button, true);
    d.Button(button, false);
    XFlush(d.dpy);
  }
  if (d.EndTrap() != 0) return Error{ErrorCode::kInputFailed, "click failed: " + d.LastErrorText()};
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  return {};
}

Error XWheel(Impl& d, double x, double y, double dx, double dy) {
  if (Error e = InputReady(d)) return e;
  int px = 0, py = 0;
  if (!ToPixel(x, px) || !ToPixel(y, py)) return Error{ErrorCode::kInvalidArgument, "wheel point is not finite"};
  if (!std::isfinite(dx) || !std::isfinite(dy)) return Error{ErrorCode::kInvalidArgument, "wheel steps are not finite"};
  // Positive dy scrolls down (button 5), positive dx right (button 7).
  const long sy = std::clamp<long>(std::lround(dy), -200, 200);
  const long sx = std::clamp<long>(std::lround(dx), -200, 200);
  d.BeginTrap();
  d.Motion(px, py);
  for (long i = 0; i < std::labs(sy); ++i) {
    d.Button(sy > 0 ? 5 : 4, true);
    d.Button(sy > 0 ? 5 : 4, false);
  }
  for (long i = 0; i < std::labs(sx); ++i) {
    d.Button(sx > 0 ? 7 : 6, true);
    d.Button(sx > 0 ? 7 : 6, false);
  }
  if (d.EndTrap() != 0) return Error{ErrorCode::kInputFailed, "wheel failed: " + d.LastErrorText()};
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  return {};
}

Error XDrag(Impl& d, double x, double y, double toX, double toY, int button) {
  if (Error e = InputReady(d)) return e;
  int px = 0, py = 0, qx = 0, qy = 0;
  if (!ToPixel(x, px) || !ToPixel(y, py) || !ToPixel(toX, qx) || !ToPixel(toY, qy)) {
    return Error{ErrorCode::kInvalidArgument, "drag points are not finite"};
  }
  if (button < 1 || button > 9) return Error{ErrorCode::kInvalidArgument, "button must be 1..9"};
  constexpr int kSteps = 10;
  d.BeginTrap();
  d.Motion(px, py);
  XSync(d.dpy, False);
  d.Button(button, true);
  XSync(d.dpy, False);
  SleepMs(20);
  for (int i = 1; i <= kSteps; ++i) {
    d.Motion(px + static_cast<int>(std::lround((qx - px) * static_cast<double>(i) / kSteps)),
             py + static_cast<int>(std::lround((qy - py) * static_cast<double>(i) / kSteps)));
    XFlush(d.dpy);
    SleepMs(10);
  }
  d.Motion(qx, qy);
  XSync(d.dpy, False);
  SleepMs(20);
  d.Button(button, false);
  if (d.EndTrap() != 0) return Error{ErrorCode::kInputFailed, "drag failed: " + d.LastErrorText()};
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  return {};
}

Error XMove(Impl& d, double x, double y) {
  if (Error e = InputReady(d)) return e;
  int px = 0, py = 0;
  if (!ToPixel(x, px) || !ToPixel(y, py)) return Error{ErrorCode::kInvalidArgument, "move point is not finite"};
  d.BeginTrap();
  d.Motion(px, py);
  if (d.EndTrap() != 0) return Error{ErrorCode::kInputFailed, "move failed: " + d.LastErrorText()};
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  return {};
}

namespace {

// Keysyms that have no keycode borrow spare keycodes for the duration of one
// Keys/Type call. A batch is mapped before any of its keys is sent, then the
// clients get a moment to take in the new mapping (a mapping change made
// between two key events was sometimes missed by a client's Xlib/XKB
// refresh). Restoring waits too: toolkits translate a key event with the
// mapping they fetch when they process it, so restoring too early could turn
// the character into nothing.
constexpr int kMapSettleMs = 30;
constexpr int kRestoreDelayMs = 100;

class TempKeys {
 public:
  TempKeys(Display* dpy, const KeyMap& map) : dpy_(dpy), per_(map.per()), spare_(map.Spare()) {}
  ~TempKeys() { Restore(); }
  TempKeys(const TempKeys&) = delete;
  TempKeys& operator=(const TempKeys&) = delete;

  size_t Capacity() const { return spare_.size(); }

  // Maps `batch` (at most Capacity() keysyms) onto spare keycodes, after
  // restoring the previous batch.
  void Borrow(const std::vector<KeySym>& batch) {
    Restore();
    std::vector<KeySym> syms(static_cast<size_t>(per_), NoSymbol);
    for (size_t i = 0; i < batch.size() && i < spare_.size(); ++i) {
      syms[0] = batch[i];
      if (syms.size() > 1) syms[1] = batch[i];  // same symbol with or without shift
      XChangeKeyboardMapping(dpy_, spare_[i], per_, syms.data(), 1);
      used_.emplace_back(spare_[i], batch[i]);
    }
    XSync(dpy_, False);
    SleepMs(kMapSettleMs);
  }

  bool Lookup(KeySym ks, KeyCode& kc) const {
    for (const auto& m : used_) {
      if (m.second == ks) {
        kc = m.first;
        return true;
      }
    }
    return false;
  }

  void Restore() {
    if (used_.empty()) return;
    XSync(dpy_, False);
    SleepMs(kRestoreDelayMs);
    std::vector<KeySym> none(static_cast<size_t>(per_), NoSymbol);
    for (const auto& m : used_) XChangeKeyboardMapping(dpy_, m.first, per_, none.data(), 1);
    XSync(dpy_, False);
    used_.clear();
  }

 private:
  Display* dpy_;
  int per_;
  std::vector<KeyCode> spare_;
  std::vector<std::pair<KeyCode, KeySym>> used_;
};

struct Stroke {
  KeyCode kc = 0;
  bool shift = false;
};

// A keycode for `ks` (+ shift when it sits at level 1): from the keyboard
// mapping, else from the borrowed batch.
bool Resolve(const KeyMap& map, const TempKeys& temp, KeySym ks, Stroke& out) {
  int level = 0;
  if (map.Find(ks, out.kc, level)) {
    out.shift = level == 1;
    return true;
  }
  out.shift = false;
  return temp.Lookup(ks, out.kc);
}

}  // namespace

Error XKeys(Impl& d, const std::string& combo, const std::function<Error()>& beforeSend = nullptr) {
  if (Error e = InputReady(d)) return e;

  // "ctrl+shift+t", "alt+F4", "ctrl++" (the key is '+'), "+".
  const std::string spec = Trim(combo);
  if (spec.empty()) return Error{ErrorCode::kInvalidArgument, "empty key combination"};
  std::vector<std::string> parts;
  std::string keyName;
  std::string mods = spec;
  if (spec == "+") {
    mods.clear();
    keyName = "+";
  } else if (spec.size() >= 2 && spec.compare(spec.size() - 2, 2, "++") == 0) {
    mods = spec.substr(0, spec.size() - 2);
    keyName = "+";
  }
  if (!mods.empty()) {
    size_t start = 0;
    for (;;) {
      const size_t plus = mods.find('+', start);
      parts.push_back(Trim(mods.substr(start, plus == std::string::npos ? std::string::npos : plus - start)));
      if (plus == std::string::npos) break;
      start = plus + 1;
    }
  }
  if (keyName.empty()) {
    keyName = parts.back();
    parts.pop_back();
  }
  for (const auto& p : parts) {
    if (p.empty()) return Error{ErrorCode::kInvalidArgument, "malformed key combination \"" + combo + "\""};
  }
  if (keyName.empty()) return Error{ErrorCode::kInvalidArgument, "malformed key combination \"" + combo + "\""};

  std::vector<KeySym> modSyms;
  bool hasShift = false, hasOtherModifier = false;
  for (const auto& p : parts) {
    const KeySym ks = ModifierKeysym(Lower(p));
    if (ks == NoSymbol)
      return Error{ErrorCode::kInvalidArgument, "unknown modifier \"" + p + "\" in \"" + combo + "\""};
    if (std::find(modSyms.begin(), modSyms.end(), ks) != modSyms.end()) continue;
    modSyms.push_back(ks);
    if (ks == XK_Shift_L) {
      hasShift = true;
    } else {
      hasOtherModifier = true;
    }
  }

  KeySym key = NoSymbol;
  const std::string lowerKey = Lower(keyName);
  std::vector<uint32_t> cps;
  if ((key = NamedKeysym(lowerKey)) != NoSymbol) {
  } else if ((key = ModifierKeysym(lowerKey)) != NoSymbol) {
  } else if (DecodeUtf8(keyName, cps) && cps.size() == 1) {
    uint32_t cp = cps[0];
    // With a modifier, a letter names the key: "ctrl+A" is ctrl+a (add shift explicitly).
    if (hasOtherModifier && cp < 0x80) cp = static_cast<uint32_t>(std::tolower(static_cast<int>(cp)));
    key = KeysymForCodePoint(cp);
  } else {
    key = KeysymByName(keyName);
  }
  if (key == NoSymbol) return Error{ErrorCode::kInvalidArgument, "unknown key \"" + keyName + "\""};
  // Everything above is parsing: a bad combination is refused before any check or event.
  if (beforeSend) {
    if (Error e = beforeSend()) return e;
  }

  d.BeginTrap();
  KeyMap map(d.dpy);
  if (!map.ok()) {
    d.EndTrap();
    return Error{ErrorCode::kInputFailed, "cannot read the keyboard mapping"};
  }
  std::vector<KeyCode> modCodes;
  for (KeySym ks : modSyms) {
    KeyCode kc = 0;
    int level = 0;
    if (!map.Find(ks, kc, level)) {
      d.EndTrap();
      return Error{ErrorCode::kInputFailed, std::string("no keycode for modifier ") + XKeysymToString(ks)};
    }
    modCodes.push_back(kc);
  }
  Error result;
  {
    TempKeys temp(d.dpy, map);
    Stroke stroke;
    {
      KeyCode kc = 0;
      int level = 0;
      if (!map.Find(key, kc, level) && temp.Capacity() > 0) temp.Borrow({key});
    }
    if (!Resolve(map, temp, key, stroke)) {
      result = Error{ErrorCode::kInputFailed, "no keycode for key \"" + keyName + "\" and no spare keycode to map it"};
    } else {
      if (stroke.shift && !hasShift) {
        KeyCode kc = 0;
        int level = 0;
        if (map.Find(XK_Shift_L, kc, level)) modCodes.push_back(kc);
      }
      for (KeyCode kc : modCodes) d.Key(kc, true);
      d.Key(stroke.kc, true);
      d.Key(stroke.kc, false);
      for (size_t i = modCodes.size(); i-- > 0;) d.Key(modCodes[i], false);
      XSync(d.dpy, False);
    }
  }  // restores borrowed keycodes
  if (d.EndTrap() != 0 && !result) result = Error{ErrorCode::kInputFailed, "keys failed: " + d.LastErrorText()};
  if (!d.Alive() && !result) result = Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  return result;
}

// Keysyms for code points; CRLF types one Return. kInvalidArgument for a control character.
Error ToKeysyms(const std::vector<uint32_t>& cps, std::vector<KeySym>& syms) {
  syms.clear();
  syms.reserve(cps.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    if (cps[i] == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') continue;  // CRLF types one Return
    const KeySym ks = KeysymForCodePoint(cps[i]);
    if (ks == NoSymbol) {
      return Error{ErrorCode::kInvalidArgument, "cannot type control character U+" + Hex(cps[i]).substr(2)};
    }
    syms.push_back(ks);
  }
  return {};
}

Error XTypeSyms(Impl& d, const std::vector<KeySym>& syms);

Error XType(Impl& d, const std::string& utf8) {
  if (Error e = InputReady(d)) return e;
  std::vector<uint32_t> cps;
  if (!DecodeUtf8(utf8, cps)) return Error{ErrorCode::kInvalidArgument, "text is not valid UTF-8"};
  std::vector<KeySym> syms;
  if (Error e = ToKeysyms(cps, syms)) return e;
  return XTypeSyms(d, syms);
}

Error XTypeSyms(Impl& d, const std::vector<KeySym>& syms) {
  if (Error e = InputReady(d)) return e;

  if (syms.empty()) return {};

  d.BeginTrap();
  KeyMap map(d.dpy);
  if (!map.ok()) {
    d.EndTrap();
    return Error{ErrorCode::kInputFailed, "cannot read the keyboard mapping"};
  }
  KeyCode shiftKc = 0;
  {
    int level = 0;
    map.Find(XK_Shift_L, shiftKc, level);
  }
  Error result;
  {
    TempKeys temp(d.dpy, map);
    size_t i = 0;
    while (i < syms.size() && !result) {
      // The next run of text whose unmapped keysyms fit in the spare keycodes.
      std::vector<KeySym> batch;
      size_t j = i;
      for (; j < syms.size(); ++j) {
        KeyCode kc = 0;
        int level = 0;
        if (map.Find(syms[j], kc, level) || std::find(batch.begin(), batch.end(), syms[j]) != batch.end()) continue;
        if (batch.size() == temp.Capacity()) break;
        batch.push_back(syms[j]);
      }
      if (j == i) {
        result = Error{ErrorCode::kInputFailed,
                       std::string("no keycode for ") + Hex(syms[i]) + " and no spare keycode to map it"};
        break;
      }
      if (!batch.empty()) temp.Borrow(batch);
      for (; i < j; ++i) {
        Stroke s;
        if (!Resolve(map, temp, syms[i], s)) {
          result = Error{ErrorCode::kInputFailed, std::string("no keycode for ") + Hex(syms[i])};
          break;
        }
        const bool shift = s.shift && shiftKc != 0;
        if (shift) d.Key(shiftKc, true);
        d.Key(s.kc, true);
        d.Key(s.kc, false);
        if (shift) d.Key(shiftKc, false);
        XFlush(d.dpy);
      }
    }
    XSync(d.dpy, False);
  }  // restores borrowed keycodes
  if (d.EndTrap() != 0 && !result) result = Error{ErrorCode::kInputFailed, "typing failed: " + d.LastErrorText()};
  if (!d.Alive() && !result) result = Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  return result;
}

}  // namespace

// ---- X-thread operations -----------------------------------------------------
//
// Everything below up to "the X thread" runs on the X thread, with the
// connection's Impl.

namespace {

using Impl = X11Display::Impl;
using Client = X11Display::Impl::Client;

bool FrameKnown(const Rect& frame) {
  return frame.w > 0 && frame.h > 0 && std::isfinite(frame.x) && std::isfinite(frame.y);
}

// Later candidates are higher in the stacking order: ties go to them.
bool BetterMatch(const Client& c, const Client* best, const Rect& frame) {
  if (best == nullptr) return true;
  if (!FrameKnown(frame))
    return static_cast<double>(c.rect.w) * c.rect.h >= static_cast<double>(best->rect.w) * best->rect.h;
  const double ia = IntersectionArea(c.rect, frame), ib = IntersectionArea(best->rect, frame);
  if (ia != ib) return ia > ib;
  auto sizeDiff = [&](const IRect& r) { return std::fabs(r.w - frame.w) + std::fabs(r.h - frame.h); };
  return sizeDiff(c.rect) <= sizeDiff(best->rect);
}

Error XFindWindow(Impl& d, int64_t pid, const Rect& frame, unsigned long& xid) {
  xid = 0;
  if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "X display not open"};
  d.BeginTrap();
  const std::vector<Client> all = d.Clients();
  d.EndTrap();
  if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "the X display connection was lost"};
  const Client* best = nullptr;
  for (const auto& c : all) {
    if (c.viewable && c.pid == pid && pid > 0 && BetterMatch(c, best, frame)) best = &c;
  }
  // No fallback to another pid's window: input and capture belong to the observed app only.
  if (best != nullptr) xid = best->client;
  return {};
}

// The accessibility title and the X title agree when one contains the other
// (toolkits add or drop decorations such as " - Chromium").
bool TitlesAgree(const std::string& xname, const std::string& title) {
  if (title.empty() || xname.empty()) return title.empty();
  return xname.find(title) != std::string::npos || title.find(xname) != std::string::npos;
}

Error ObservedGone(const std::vector<Client>& all, int64_t pid) {
  for (const auto& c : all) {
    if (c.pid == pid) {
      return Error{ErrorCode::kWindowNotFound,
                   "the observed window of pid " + std::to_string(pid) + " is gone (the app has other windows)"};
    }
  }
  return Error{ErrorCode::kAppNotFound, "no window of pid " + std::to_string(pid) + " exists any more"};
}

// The observed window: the one bound to the target before (it must still be
// there, viewable, with the pid), else the pid's viewable window that
// matches the frame and the title. Never a window of another pid.
// The X server drops a dead client's windows only once it notices the closed connection: until then they are
// still listed, viewable, under the dead pid. The process itself says at once that it is dying or dead, though
// kill(pid, 0) still succeeds (process_life.h). `start` is the process's start time when the window was matched
// (0: not yet); it is set to the current one.
Error ObservedProcessGone(int64_t pid, uint64_t& start) {
  const ProcessLife life = ProcessLifeOf(pid);
  const bool reused = start != 0 && life.start != 0 && life.start != start;
  if (!life.running || reused)
    return Error{ErrorCode::kAppNotFound, "the app (pid " + std::to_string(pid) + ") has exited" +
                                              (life.running ? " and its pid is another process's now" : "")};
  start = life.start;
  return {};
}

Error ResolveObserved(Impl& d, const X11Display::Target& t, unsigned long bound, uint64_t& start,
                      const std::vector<Client>& all, Client& out) {
  if (t.pid <= 0) return Error{ErrorCode::kAppNotFound, "the observed window has no pid"};
  if (Error gone = ObservedProcessGone(t.pid, start)) return gone;
  if (bound != 0) {
    for (const auto& c : all) {
      if (c.client == bound && c.pid == t.pid && c.viewable) {
        out = c;
        return {};
      }
    }
    return ObservedGone(all, t.pid);
  }
  const Client* best = nullptr;
  for (const auto& c : all) {
    if (!c.viewable || c.pid != t.pid) continue;
    if (FrameKnown(t.frame) && IntersectionArea(c.rect, t.frame) <= 0) continue;
    if (!TitlesAgree(d.Name(c.client), t.title)) continue;
    if (BetterMatch(c, best, t.frame)) best = &c;
  }
  if (best == nullptr) return ObservedGone(all, t.pid);
  out = *best;
  return {};
}

const Client* TopmostAt(const std::vector<Client>& all, int x, int y) {
  for (size_t i = all.size(); i-- > 0;) {  // stacking order: bottom to top
    const Client& c = all[i];
    if (c.viewable && x >= c.outer.x && x < c.outer.x + c.outer.w && y >= c.outer.y && y < c.outer.y + c.outer.h)
      return &c;
  }
  return nullptr;
}

// Whether input at a point covered by `hit` goes to the observed app's
// observed window: the window itself, its transient (dialog, menu) or an
// override-redirect popup of the same pid. `why` names the intruder.
bool MayReceive(Impl& d, const Client& observed, const Client* hit, std::string& why) {
  if (hit == nullptr) {
    why = "no window";
    return false;
  }
  if (hit->top == observed.top) return true;
  if (hit->pid != observed.pid) {
    why = "window " + Hex(hit->top) + " of " + (hit->pid > 0 ? "pid " + std::to_string(hit->pid) : "an unknown app");
    return false;
  }
  if (hit->overrideRedirect) return true;
  Window w = hit->client;
  for (int depth = 0; depth < 4 && w != 0; ++depth) {
    w = d.TransientFor(w);
    if (w != 0 && (w == observed.client || w == observed.top)) return true;
  }
  why = "window " + Hex(hit->top) + " of the same app, which is neither the observed window nor its dialog or popup";
  return false;
}

struct Point {
  int x = 0, y = 0;
};

// The first point where input would reach a window other than the observed
// one (or its popups); -1 when every point is fine.
int FirstRefusedPoint(Impl& d, const Client& observed, const std::vector<Client>& all, const std::vector<Point>& pts,
                      std::string& why) {
  for (size_t i = 0; i < pts.size(); ++i) {
    if (!MayReceive(d, observed, TopmostAt(all, pts[i].x, pts[i].y), why)) return static_cast<int>(i);
  }
  return -1;
}

void RequestRaise(Impl& d, const Client& w, bool wm) {
  if (wm) {
    // Ask the window manager (it may ignore a plain XRaiseWindow on its frame's client).
    XEvent ev;
    std::memset(&ev, 0, sizeof ev);
    ev.xclient.type = ClientMessage;
    ev.xclient.window = w.client;
    ev.xclient.message_type = XInternAtom(d.dpy, "_NET_ACTIVE_WINDOW", False);
    ev.xclient.format = 32;
    ev.xclient.data.l[0] = 2;  // source: pager/tool
    ev.xclient.data.l[1] = CurrentTime;
    XSendEvent(d.dpy, d.root, False, SubstructureRedirectMask | SubstructureNotifyMask, &ev);
  }
  XRaiseWindow(d.dpy, w.top);
  XSync(d.dpy, False);
}

// Whether X keyboard focus is in the observed window or one of its popups
// (a menu holding focus keeps it); `why` names where it is otherwise.
bool FocusIsObserved(Impl& d, const Client& observed, const std::vector<Client>& all, std::string& why) {
  Window focus = 0;
  int revert = 0;
  XGetInputFocus(d.dpy, &focus, &revert);
  if (focus == None || focus == PointerRoot) {
    why = "no window";
    return false;
  }
  const Window top = d.TopLevelOf(focus);
  for (const auto& c : all)
    if (c.top == top) return MayReceive(d, observed, &c, why);
  why = "window " + Hex(top) + ", which belongs to no listed app";
  return false;
}

// Key events go to the window with X keyboard focus, not to the one under a
// point. Without a window manager nobody assigns that focus: give it to the
// observed window. With one, ask it to activate the window (bounded) and
// refuse when focus stays elsewhere: keys must never reach another app.
bool FocusObserved(Impl& d, const Client& observed, const std::vector<Client>& all, bool wm, std::string& why) {
  if (FocusIsObserved(d, observed, all, why)) return true;
  if (!wm) {
    XSetInputFocus(d.dpy, observed.client, RevertToPointerRoot, CurrentTime);
    XSync(d.dpy, False);
    return FocusIsObserved(d, observed, all, why);
  }
  RequestRaise(d, observed, wm);
  const auto t0 = Clock::now();
  while (MsSince(t0) <= 200) {
    SleepMs(10);
    if (FocusIsObserved(d, observed, all, why)) return true;
  }
  return false;
}

// The check before every batch of events: the observed window is found (by
// identity, never another pid's), raised if something covers one of the
// points, and every point is then on it or on one of its popups. On any
// failure nothing has been sent.
Error PrepareInput(Impl& d, const X11Display::Target& t, unsigned long bound, uint64_t& start, std::vector<Point> pts,
                   Client& observed, bool keyboard) {
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  d.BeginTrap();
  std::vector<Client> all = d.Clients();
  Error err = ResolveObserved(d, t, bound, start, all, observed);
  if (err) {
    d.EndTrap();
    return err;
  }
  if (pts.empty()) {
    pts.push_back(Point{static_cast<int>(observed.rect.x + observed.rect.w / 2),
                        static_cast<int>(observed.rect.y + observed.rect.h / 2)});
  }
  const bool wm = d.HasWindowManager();
  std::string why;
  int refused = FirstRefusedPoint(d, observed, all, pts, why);
  if (refused >= 0) {
    RequestRaise(d, observed, wm);
    const auto t0 = Clock::now();
    for (int attempt = 0; refused >= 0 && MsSince(t0) <= 200; ++attempt) {
      SleepMs(10);
      if (attempt % 3 == 2) RequestRaise(d, observed, wm);
      all = d.Clients();
      if ((err = ResolveObserved(d, t, observed.client, start, all, observed))) break;
      refused = FirstRefusedPoint(d, observed, all, pts, why);
    }
  }
  std::string focusWhy;
  const bool focusOk = err || refused >= 0 || !keyboard || FocusObserved(d, observed, all, wm, focusWhy);
  d.EndTrap();
  if (!d.Alive()) return Error{ErrorCode::kInputFailed, "the X display connection was lost"};
  if (err) return err;
  if (refused >= 0) {
    return Error{ErrorCode::kInputFailed, "the observed window " + Hex(observed.client) + " is not on top at (" +
                                              std::to_string(pts[refused].x) + ", " + std::to_string(pts[refused].y) +
                                              "): " + why + " is there"};
  }
  if (!focusOk)
    return Error{ErrorCode::kInputFailed, "keyboard focus is not in the observed window " + Hex(observed.client) +
                                              " but in " + focusWhy + "; nothing was sent"};
  // Raising and focusing can take a while: the app may have been killed since it was first asked.
  return ObservedProcessGone(t.pid, start);
}

}  // namespace

// ---- the X thread --------------------------------------------------------------

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

Error NothingSent(Error e) {
  if (e && e.message.find("nothing was sent") == std::string::npos) e.message += ": nothing was sent";
  return e;
}

constexpr auto kInputGrace = std::chrono::milliseconds(300);  // a healthy server's last batch may run a little over
constexpr auto kCaptureFloor = std::chrono::milliseconds(250);
constexpr auto kCaptureCap = std::chrono::seconds(5);
constexpr size_t kTypeChunk = 24;  // code points per checked batch

}  // namespace

// ---- X11Display ----------------------------------------------------------------

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

// Runs one guarded batch: `send` calls `check` (identity and on-top checks
// at `points`) right before its first event. Errors before that say nothing
// was sent; any failure after it is kDeliveryUncertain.
Error X11Display::Guarded(const Target& target, Clock::time_point deadline,
                          const std::vector<std::pair<int, int>>& points, const Send& send, bool& sent) {
  sent = false;
  if (Clock::now() >= deadline) return NothingSent(Error{ErrorCode::kTimeout, "the deadline passed"});
  if (Error e = Open(deadline)) return NothingSent(e);
  const auto key = std::make_pair(target.pid, target.element);
  const auto it = bound_.find(key);
  const Binding bound = target.element != 0 && it != bound_.end() ? it->second : Binding{};
  // Written on the X thread before `started`, read here after Run: a finished or abandoned job's last word.
  auto matched = std::make_shared<Binding>();
  auto matchedSet = std::make_shared<std::atomic<bool>>(false);
  std::vector<Point> pts;
  for (const auto& p : points) pts.push_back(Point{p.first, p.second});
  Outcome outcome;
  Error e = Run(
      deadline + kInputGrace,
      [target, bound, matched, matchedSet, pts, send](Impl& d, std::atomic<bool>& started) -> Error {
        return send(d, [&]() -> Error {
          Client observed;
          uint64_t start = bound.start;
          // Key batches come without points (they go where keyboard focus is, not under a point).
          if (Error err = PrepareInput(d, target, bound.xid, start, pts, observed, pts.empty())) return err;
          *matched = Binding{observed.client, start};
          matchedSet->store(true);
          started = true;
          return {};
        });
      },
      outcome);
  sent = outcome.sent;
  if (matchedSet->load() && target.element != 0 && conn_) bound_[key] = *matched;
  if (!e) return {};
  if (!sent) return NothingSent(e);
  if (outcome.timedOut) {
    return Error{ErrorCode::kDeliveryUncertain,
                 "the X server stopped answering while input was being sent; it may have arrived"};
  }
  return Error{ErrorCode::kDeliveryUncertain, "input was being sent when it failed (" + e.message + ")"};
}

Error X11Display::CaptureWindow(const Target& target, Clock::time_point deadline, std::vector<uint8_t>& rgba,
                                int& width, int& height, Rect& captured) {
  rgba.clear();
  width = height = 0;
  captured = Rect{};
  // Bounded by the snapshot's deadline, with a floor so a walk cut by its deadline still gets a screenshot.
  const auto now = Clock::now();
  const auto until = std::clamp(deadline, now + kCaptureFloor, now + kCaptureCap);
  const auto key = std::make_pair(target.pid, target.element);
  const auto it = bound_.find(key);
  const Binding bound = target.element != 0 && it != bound_.end() ? it->second : Binding{};
  struct Shot {
    std::vector<uint8_t> rgba;
    int width = 0, height = 0;
    Rect captured;
    Binding matched;
  };
  auto shot = std::make_shared<Shot>();
  Outcome outcome;
  Error e = Run(
      until,
      [target, bound, shot](Impl& d, std::atomic<bool>&) -> Error {
        // The area is read after raising the window, so what is captured is the window itself. A window that
        // cannot be matched is still captured by its frame (best effort, as the accessibility layer saw it).
        Client observed;
        std::vector<Point> centre;
        if (FrameKnown(target.frame))
          centre.push_back(Point{static_cast<int>(std::floor(target.frame.x + target.frame.w / 2)),
                                 static_cast<int>(std::floor(target.frame.y + target.frame.h / 2))});
        uint64_t start = bound.start;
        if (!PrepareInput(d, target, bound.xid, start, centre, observed, /*keyboard=*/false))
          shot->matched = Binding{observed.client, start};
        if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "the X display connection was lost"};
        return XCaptureRect(d, target.frame, shot->rgba, shot->width, shot->height, shot->captured);
      },
      outcome);
  if (shot->matched.xid != 0 && target.element != 0 && conn_) bound_[key] = shot->matched;
  if (outcome.timedOut) return Error{ErrorCode::kCaptureFailed, "the X server did not answer within the deadline"};
  if (e) return e;
  rgba = std::move(shot->rgba);
  width = shot->width;
  height = shot->height;
  captured = shot->captured;
  return {};
}

Error X11Display::Pointer(const Target& target, const PointerEvent& ev, Clock::time_point deadline) {
  int px = 0, py = 0, qx = 0, qy = 0;
  if (!ToPixel(ev.x, px) || !ToPixel(ev.y, py))
    return Error{ErrorCode::kInvalidArgument, "pointer point is not finite: nothing was sent"};
  std::vector<std::pair<int, int>> points{{px, py}};
  if (ev.kind == PointerEvent::Kind::kDrag) {
    if (!ToPixel(ev.toX, qx) || !ToPixel(ev.toY, qy))
      return Error{ErrorCode::kInvalidArgument, "drag end is not finite: nothing was sent"};
    points.emplace_back(qx, qy);  // both ends must be on the observed window (or its popup) before the press
  }
  bool sent = false;
  return Guarded(
      target, deadline, points,
      [ev](Impl& d, const std::function<Error()>& check) -> Error {
        if (Error e = check()) return e;
        switch (ev.kind) {
          case PointerEvent::Kind::kClick: return XClick(d, ev.x, ev.y, ev.button, ev.count);
          case PointerEvent::Kind::kWheel: return XWheel(d, ev.x, ev.y, ev.dx, ev.dy);
          case PointerEvent::Kind::kDrag: return XDrag(d, ev.x, ev.y, ev.toX, ev.toY, ev.button);
          case PointerEvent::Kind::kMove: return XMove(d, ev.x, ev.y);
        }
        return {};
      },
      sent);
}

Error X11Display::SendKeys(const Target& target, const std::string& combo, Clock::time_point deadline) {
  bool sent = false;
  return Guarded(
      target, deadline, {},
      [combo](Impl& d, const std::function<Error()>& check) -> Error { return XKeys(d, combo, check); }, sent);
}

Error X11Display::TypeText(const Target& target, const std::string& utf8, Clock::time_point deadline, size_t& typed) {
  typed = 0;
  std::vector<uint32_t> cps;
  if (!DecodeUtf8(utf8, cps)) return Error{ErrorCode::kInvalidArgument, "text is not valid UTF-8: nothing was sent"};
  std::vector<KeySym> all;
  if (Error e = ToKeysyms(cps, all)) return NothingSent(e);  // refuse the whole text before typing any of it
  const size_t total = cps.size();
  auto progress = [&]() { return std::to_string(typed) + " of " + std::to_string(total) + " characters typed"; };
  std::chrono::milliseconds lastChunk{0};
  size_t i = 0;
  while (i < total) {
    size_t j = std::min(total, i + kTypeChunk);
    if (cps[j - 1] == '\r' && j < total && cps[j] == '\n') ++j;  // keep CRLF (one Return) in one chunk
    // Do not start a chunk that would likely run past the deadline.
    if (Clock::now() + lastChunk >= deadline) {
      if (typed == 0)
        return Error{ErrorCode::kTimeout, "the deadline passed before typing: " + progress() + ", nothing was sent"};
      return Error{ErrorCode::kDeliveryUncertain, "typing stopped at the deadline: " + progress()};
    }
    std::vector<KeySym> chunk;
    if (Error e = ToKeysyms(
            std::vector<uint32_t>(cps.begin() + static_cast<long>(i), cps.begin() + static_cast<long>(j)), chunk))
      return e;
    const auto t0 = Clock::now();
    bool sent = false;
    Error e = Guarded(
        target, deadline, {},
        [chunk](Impl& d, const std::function<Error()>& check) -> Error {
          if (Error err = check()) return err;
          return XTypeSyms(d, chunk);
        },
        sent);
    if (e) {
      if (typed == 0 && !sent) return e;  // says nothing was sent
      const std::string pending = sent ? " (the next " + std::to_string(j - i) + " may have been partly sent)" : "";
      return Error{ErrorCode::kDeliveryUncertain, "typing stopped: " + progress() + pending + ": " + e.message};
    }
    lastChunk = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
    typed += j - i;
    i = j;
  }
  return {};
}

// ---- unguarded primitives (x11_selftest) ------------------------------------------

Error X11Display::Simple(Clock::time_point deadline, const std::function<Error(Impl&)>& op) {
  Outcome outcome;
  return Run(
      deadline, [op](Impl& d, std::atomic<bool>&) { return op(d); }, outcome);
}

Error X11Display::FindWindow(int64_t pid, const Rect& frame, unsigned long& xid, Clock::time_point deadline) {
  xid = 0;
  auto out = std::make_shared<unsigned long>(0);
  Error e = Simple(deadline, [pid, frame, out](Impl& d) { return XFindWindow(d, pid, frame, *out); });
  xid = *out;
  return e;
}

Error X11Display::WindowTitle(int64_t pid, const Rect& frame, std::string& title, Clock::time_point deadline) {
  title.clear();
  auto out = std::make_shared<std::string>();
  Error e = Simple(deadline, [pid, frame, out](Impl& d) {
    if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "X display not open"};
    d.BeginTrap();
    const std::vector<Client> all = d.Clients();
    const Client* best = nullptr;
    for (const auto& c : all) {
      if (!c.viewable || c.pid != pid || pid <= 0) continue;
      if (FrameKnown(frame) && IntersectionArea(c.rect, frame) <= 0) continue;
      if (BetterMatch(c, best, frame)) best = &c;
    }
    if (best != nullptr) *out = d.Name(best->client);
    d.EndTrap();
    return Error{};
  });
  title = *out;
  return e;
}

Error X11Display::ListClients(std::vector<X11Client>& out, Clock::time_point deadline) {
  out.clear();
  auto list = std::make_shared<std::vector<X11Client>>();
  Error e = Simple(deadline, [list](Impl& d) {
    if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "X display not open"};
    d.BeginTrap();
    *list = ListX11Clients(d.dpy, d.root, d.xres);
    d.EndTrap();
    if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "the X display connection was lost"};
    return Error{};
  });
  if (!e) out = std::move(*list);
  return e;
}

Error X11Display::RaiseAndVerify(unsigned long xid, const Rect& frame, Clock::time_point deadline) {
  return Simple(deadline, [xid, frame](Impl& d) { return XRaiseAndVerify(d, xid, frame); });
}

Error X11Display::CaptureRect(const Rect& r, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured,
                              Clock::time_point deadline) {
  struct Shot {
    std::vector<uint8_t> rgba;
    int width = 0, height = 0;
    Rect captured;
  };
  auto shot = std::make_shared<Shot>();
  Error e = Simple(deadline, [r, shot](Impl& d) {
    return XCaptureRect(d, r, shot->rgba, shot->width, shot->height, shot->captured);
  });
  rgba = std::move(shot->rgba);
  width = shot->width;
  height = shot->height;
  captured = shot->captured;
  return e;
}

Error X11Display::Click(double x, double y, int button, int count, Clock::time_point deadline) {
  return Simple(deadline, [=](Impl& d) { return XClick(d, x, y, button, count); });
}

Error X11Display::Wheel(double x, double y, double dx, double dy, Clock::time_point deadline) {
  return Simple(deadline, [=](Impl& d) { return XWheel(d, x, y, dx, dy); });
}

Error X11Display::Drag(double x, double y, double toX, double toY, int button, Clock::time_point deadline) {
  return Simple(deadline, [=](Impl& d) { return XDrag(d, x, y, toX, toY, button); });
}

Error X11Display::Move(double x, double y, Clock::time_point deadline) {
  return Simple(deadline, [=](Impl& d) { return XMove(d, x, y); });
}

Error X11Display::Keys(const std::string& combo, Clock::time_point deadline) {
  return Simple(deadline, [combo](Impl& d) { return XKeys(d, combo); });
}

Error X11Display::Type(const std::string& utf8, Clock::time_point deadline) {
  return Simple(deadline, [utf8](Impl& d) { return XType(d, utf8); });
}

int X11Display::ScreenWidth() {
  auto w = std::make_shared<int>(0);
  Simple(DefaultDeadline(), [w](Impl& d) {
    int h = 0;
    d.RootSize(*w, h);
    return Error{};
  });
  return *w;
}

int X11Display::ScreenHeight() {
  auto h = std::make_shared<int>(0);
  Simple(DefaultDeadline(), [h](Impl& d) {
    int w = 0;
    d.RootSize(w, *h);
    return Error{};
  });
  return *h;
}

}  // namespace axsnap
