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

#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>
#include <dlfcn.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
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

}  // namespace

// ---- Impl ----------------------------------------------------------------------

struct X11Display::Impl {
  Display* dpy = nullptr;
  int screen = 0;
  Window root = 0;
  Visual* visual = nullptr;
  int depth = 0;
  bool hasShm = false;
  bool hasXTest = false;
  bool dead = false;  // the connection was lost (I/O error)
  Atom netWmPid = None;

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

  long Pid(Window w) {
    if (netWmPid == None) return -1;
    Atom type = None;
    int format = 0;
    unsigned long n = 0, after = 0;
    unsigned char* data = nullptr;
    long pid = -1;
    if (XGetWindowProperty(dpy, w, netWmPid, 0, 1, False, XA_CARDINAL, &type, &format, &n, &after, &data) == Success &&
        data != nullptr) {
      if (type == XA_CARDINAL && format == 32 && n >= 1)
        pid = static_cast<long>(reinterpret_cast<unsigned long*>(data)[0]);
    }
    if (data != nullptr) XFree(data);
    return pid;
  }

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

// ---- X11Display ----------------------------------------------------------------

X11Display::~X11Display() {
  if (impl_ == nullptr) return;
  if (impl_->dpy != nullptr) {
    impl_->ReleaseShm();
    // After an I/O error the display struct is still allocated; closing it
    // frees the memory (requests on the dead connection are no-ops).
    XCloseDisplay(impl_->dpy);
    impl_->dpy = nullptr;
    UninstallHandlers();
  }
  delete impl_;
  impl_ = nullptr;
}

bool X11Display::IsOpen() const { return impl_ != nullptr && impl_->Alive(); }

Error X11Display::Open() {
  if (impl_ != nullptr && impl_->dpy != nullptr) {
    if (impl_->Alive()) return {};
    return Error{ErrorCode::kCaptureFailed, "the X display connection was lost"};
  }
  const char* name = std::getenv("DISPLAY");
  if (name == nullptr || *name == 0) {
    return Error{ErrorCode::kCaptureFailed, "no X display: set DISPLAY"};
  }
  InstallHandlers();
  Display* dpy = XOpenDisplay(nullptr);
  if (dpy == nullptr) {
    UninstallHandlers();
    return Error{ErrorCode::kCaptureFailed, std::string("no X display: set DISPLAY (cannot open \"") + name + "\")"};
  }
  if (impl_ == nullptr) impl_ = new Impl;
  Impl& d = *impl_;
  d.dpy = dpy;
  d.dead = false;
  // libX11 >= 1.7 only; looked up at run time.
  if (auto setExit = reinterpret_cast<SetIOExitHandlerFn>(dlsym(RTLD_DEFAULT, "XSetIOErrorExitHandler"))) {
    setExit(dpy, &Impl::OnIOExit, impl_);
  }
  d.screen = DefaultScreen(dpy);
  d.root = RootWindow(dpy, d.screen);
  d.visual = DefaultVisual(dpy, d.screen);
  d.depth = DefaultDepth(dpy, d.screen);
  const char* noShm = std::getenv("AXSNAP_NO_XSHM");  // debugging/benchmark switch: force XGetImage
  d.hasShm = XShmQueryExtension(dpy) && !(noShm != nullptr && *noShm != 0 && *noShm != '0');
  int ev = 0, er = 0, major = 0, minor = 0;
  d.hasXTest = XTestQueryExtension(dpy, &ev, &er, &major, &minor);
  if (d.hasXTest) XTestGrabControl(dpy, True);  // our input still flows during another client's server grab
  d.netWmPid = XInternAtom(dpy, "_NET_WM_PID", True);
  return {};
}

Error X11Display::FindWindow(int64_t pid, const Rect& frame, unsigned long& xid) {
  xid = 0;
  if (!IsOpen()) return Error{ErrorCode::kCaptureFailed, "X display not open"};
  Impl& d = *impl_;

  struct Candidate {
    Window win;
    IRect r;
    long pid;
    bool topLevel;
  };
  std::vector<Candidate> cands;
  d.BeginTrap();
  std::vector<Window> tops, kids, grandkids;
  d.Children(d.root, tops);
  // Windows may vanish mid-walk: their calls fail (recorded, ignored) and they are skipped.
  for (Window top : tops) {
    XWindowAttributes a;
    IRect r;
    if (!d.Attributes(top, a) || a.map_state != IsViewable || !d.RootRect(top, a, r)) continue;
    const long p = d.Pid(top);
    cands.push_back({top, r, p, true});
    if (p >= 0) continue;
    // Reparenting window managers: the client (with _NET_WM_PID) is one or two levels down.
    if (!d.Children(top, kids)) continue;
    for (Window k : kids) {
      XWindowAttributes ka;
      IRect kr;
      if (!d.Attributes(k, ka) || ka.map_state != IsViewable || !d.RootRect(k, ka, kr)) continue;
      const long kp = d.Pid(k);
      if (kp >= 0) {
        cands.push_back({k, kr, kp, false});
        continue;
      }
      if (!d.Children(k, grandkids)) continue;
      for (Window g : grandkids) {
        XWindowAttributes ga;
        IRect gr;
        if (!d.Attributes(g, ga) || ga.map_state != IsViewable || !d.RootRect(g, ga, gr)) continue;
        const long gp = d.Pid(g);
        if (gp >= 0) cands.push_back({g, gr, gp, false});
      }
    }
  }
  d.EndTrap();
  if (!d.Alive()) return Error{ErrorCode::kCaptureFailed, "the X display connection was lost"};

  const bool frameKnown = frame.w > 0 && frame.h > 0 && std::isfinite(frame.x) && std::isfinite(frame.y);
  auto sizeDiff = [&](const IRect& r) { return std::fabs(r.w - frame.w) + std::fabs(r.h - frame.h); };
  // Later candidates are higher in the stacking order: ties go to them.
  auto better = [&](const Candidate& c, const Candidate* best) {
    if (best == nullptr) return true;
    if (!frameKnown) return static_cast<double>(c.r.w) * c.r.h >= static_cast<double>(best->r.w) * best->r.h;
    const double ia = IntersectionArea(c.r, frame), ib = IntersectionArea(best->r, frame);
    if (ia != ib) return ia > ib;
    return sizeDiff(c.r) <= sizeDiff(best->r);
  };

  const Candidate* best = nullptr;
  for (const auto& c : cands) {
    if (c.pid == pid && pid > 0 && better(c, best)) best = &c;
  }
  if (best == nullptr && frameKnown) {
    // No window carries the pid: the top-level window that best covers the frame.
    for (const auto& c : cands) {
      if (c.topLevel && IntersectionArea(c.r, frame) > 0 && better(c, best)) best = &c;
    }
  }
  if (best != nullptr) xid = best->win;
  return {};
}

Error X11Display::RaiseAndVerify(unsigned long xid, const Rect& frame) {
  if (!IsOpen()) return Error{ErrorCode::kInputFailed, "X display not open"};
  Impl& d = *impl_;
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

Error X11Display::CaptureRect(const Rect& r, std::vector<uint8_t>& rgba, int& width, int& height, Rect& captured) {
  rgba.clear();
  width = height = 0;
  captured = Rect{};
  if (!IsOpen()) return Error{ErrorCode::kCaptureFailed, "X display not open"};
  Impl& d = *impl_;
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

Error InputReady(const X11Display& self, bool hasXTest) {
  if (!self.IsOpen()) return Error{ErrorCode::kInputFailed, "X display not open"};
  if (!hasXTest)
    return Error{ErrorCode::kInputFailed, "the X server has no XTEST extension: synthetic input is unavailable"};
  return {};
}

}  // namespace

Error X11Display::Click(double x, double y, int button, int count) {
  if (Error e = InputReady(*this, impl_ != nullptr && impl_->hasXTest)) return e;
  Impl& d = *impl_;
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

Error X11Display::Wheel(double x, double y, double dx, double dy) {
  if (Error e = InputReady(*this, impl_ != nullptr && impl_->hasXTest)) return e;
  Impl& d = *impl_;
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

Error X11Display::Drag(double x, double y, double toX, double toY, int button) {
  if (Error e = InputReady(*this, impl_ != nullptr && impl_->hasXTest)) return e;
  Impl& d = *impl_;
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

Error X11Display::Move(double x, double y) {
  if (Error e = InputReady(*this, impl_ != nullptr && impl_->hasXTest)) return e;
  Impl& d = *impl_;
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

Error X11Display::Keys(const std::string& combo) {
  if (Error e = InputReady(*this, impl_ != nullptr && impl_->hasXTest)) return e;
  Impl& d = *impl_;

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
    key = XStringToKeysym(keyName.c_str());
  }
  if (key == NoSymbol) return Error{ErrorCode::kInvalidArgument, "unknown key \"" + keyName + "\""};

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

Error X11Display::Type(const std::string& utf8) {
  if (Error e = InputReady(*this, impl_ != nullptr && impl_->hasXTest)) return e;
  Impl& d = *impl_;
  std::vector<uint32_t> cps;
  if (!DecodeUtf8(utf8, cps)) return Error{ErrorCode::kInvalidArgument, "text is not valid UTF-8"};
  std::vector<KeySym> syms;
  syms.reserve(cps.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    if (cps[i] == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') continue;  // CRLF types one Return
    const KeySym ks = KeysymForCodePoint(cps[i]);
    if (ks == NoSymbol) {
      return Error{ErrorCode::kInvalidArgument, "cannot type control character U+" + Hex(cps[i]).substr(2)};
    }
    syms.push_back(ks);
  }
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

int X11Display::ScreenWidth() const {
  if (!IsOpen()) return 0;
  int w = 0, h = 0;
  impl_->RootSize(w, h);
  return w;
}

int X11Display::ScreenHeight() const {
  if (!IsOpen()) return 0;
  int w = 0, h = 0;
  impl_->RootSize(w, h);
  return h;
}

}  // namespace axsnap
