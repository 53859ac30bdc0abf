// Hand-run self test of X11Display and the PNG budget (not part of the addon).
//
// Build (from src-native/linux):
//   g++ -std=c++17 -O2 -Wall -Wextra -Werror -Wno-unused-parameter x11_selftest.cc x11_capture.cc x11_clients.cc
//       x11_display.cc x11_errors.cc x11_guarded.cc x11_keys.cc x11_keysyms.cc x11_observed.cc x11_pointer.cc
//       x11_primitives.cc x11_raise.cc x11_windows.cc process_life.cc proc_files.cc ../core/png_budget.cc
//       ../core/names.cc $(pkg-config --cflags --libs x11 xtst xext libpng zlib) -o x11_selftest
// (-Wno-unused-parameter: names.cc includes core/backend.h, whose default virtual methods leave parameters unused.)
// Run (the wrapper starts the app; the test starts nothing itself but a probe client):
//   xvfb-run -a -s "-screen 0 1920x1080x24" sh -c 'NO_AT_BRIDGE=1 GDK_BACKEND=x11 gtk3-widget-factory >/dev/null 2>&1 &
//     sleep 3; pid=$(pgrep -n gtk3-widget); wid=$(xdotool search --onlyvisible --pid $pid | head -1);
//     eval $(xdotool getwindowgeometry --shell $wid); ./x11_selftest $pid $X $Y $WIDTH $HEIGHT $wid; kill $pid'
// I/O-error mode (an X server this test may kill):
//   Xvfb :77 & ./x11_selftest --io-test $! :77
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <png.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../core/png_budget.h"
#include "x11_display.h"

using namespace axsnap;
using Clock = std::chrono::steady_clock;

static int g_failures = 0;

static void Check(bool ok, const std::string& what, const std::string& detail = "") {
  std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what.c_str(), detail.empty() ? "" : ": ", detail.c_str());
  if (!ok) ++g_failures;
}

static std::string Describe(const Error& e) { return e ? std::string(ErrorCodeName(e.code)) + " " + e.message : "ok"; }

static double Ms(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

static size_t DistinctColours(const std::vector<uint8_t>& rgba) {
  std::set<uint32_t> seen;
  for (size_t i = 0; i + 3 < rgba.size(); i += 4) {
    seen.insert(rgba[i] | rgba[i + 1] << 8 | rgba[i + 2] << 16);
    if (seen.size() > 10000) break;
  }
  return seen.size();
}

// Decodes a PNG from memory; true with its size when it is valid.
static bool DecodePng(const std::vector<uint8_t>& png, int& w, int& h) {
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&img, png.data(), png.size())) return false;
  img.format = PNG_FORMAT_RGBA;
  std::vector<uint8_t> buf(PNG_IMAGE_SIZE(img));
  const bool ok = png_image_finish_read(&img, nullptr, buf.data(), 0, nullptr) != 0;
  w = static_cast<int>(img.width);
  h = static_cast<int>(img.height);
  png_image_free(&img);
  return ok;
}

static void Median(std::vector<double> v, double& med, double& min) {
  std::sort(v.begin(), v.end());
  med = v[v.size() / 2];
  min = v.front();
}

// A probe X client in a child process: a window at (x, y) that reports key
// presses (keysym names) and button presses on a pipe. Its own connection
// processes MappingNotify as it goes, like a real toolkit.
static pid_t StartProbe(int x, int y, int w, int h, int& readFd) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  std::fflush(stdout);
  const pid_t child = fork();
  if (child != 0) {
    close(fds[1]);
    readFd = fds[0];
    return child;
  }
  close(fds[0]);
  FILE* out = fdopen(fds[1], "w");
  Display* dpy = XOpenDisplay(nullptr);
  if (dpy == nullptr) _exit(2);
  const Window win = XCreateSimpleWindow(dpy, DefaultRootWindow(dpy), x, y, static_cast<unsigned>(w),
                                         static_cast<unsigned>(h), 0, 0, 0x3366cc);
  const long pid = getpid();
  XChangeProperty(dpy, win, XInternAtom(dpy, "_NET_WM_PID", False), XA_CARDINAL, 32, PropModeReplace,
                  reinterpret_cast<const unsigned char*>(&pid), 1);
  XSelectInput(dpy, win, KeyPressMask | ButtonPressMask | StructureNotifyMask);
  XMapWindow(dpy, win);
  for (;;) {
    XEvent ev;
    XNextEvent(dpy, &ev);
    if (ev.type == MapNotify) {
      std::fprintf(out, "ready %lu\n", win);
    } else if (ev.type == MappingNotify) {
      XRefreshKeyboardMapping(&ev.xmapping);
    } else if (ev.type == KeyPress) {
      char text[16];
      KeySym ks = 0;
      XLookupString(&ev.xkey, text, sizeof text, &ks, nullptr);
      const char* name = XKeysymToString(ks);
      std::fprintf(out, "key %s\n", name != nullptr ? name : std::to_string(ks).c_str());
    } else if (ev.type == ButtonPress) {
      std::fprintf(out, "button %u\n", ev.xbutton.button);
    }
    std::fflush(out);
  }
}

static std::string ReadAvailable(int fd, int waitMs) {
  std::this_thread::sleep_for(std::chrono::milliseconds(waitMs));
  std::string s;
  char buf[4096];
  for (;;) {
    fd_set set;
    FD_ZERO(&set);
    FD_SET(fd, &set);
    timeval tv{0, 0};
    if (select(fd + 1, &set, nullptr, nullptr, &tv) <= 0) break;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    s.append(buf, static_cast<size_t>(n));
  }
  return s;
}

static int IoTest(pid_t xserver) {
  X11Display x;
  Error e = x.Open();
  Check(!e, "io-test: Open", Describe(e));
  if (e) return 1;
  kill(xserver, SIGKILL);
  waitpid(xserver, nullptr, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<uint8_t> rgba;
  int w = 0, h = 0;
  Rect cap;
  e = x.CaptureRect(Rect{0, 0, 100, 100}, rgba, w, h, cap);
  Check(static_cast<bool>(e), "io-test: capture after the server died fails without exiting", Describe(e));
  e = x.Click(10, 10, 1, 1);
  Check(static_cast<bool>(e), "io-test: click after the server died fails", Describe(e));
  Check(!x.IsOpen(), "io-test: IsOpen() false after the connection was lost");
  std::printf("io-test: survived (%d failures)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--io-test") == 0) {
    if (argc >= 4) setenv("DISPLAY", argv[3], 1);
    return IoTest(static_cast<pid_t>(std::atol(argv[2])));
  }
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s pid x y w h [xid]\n", argv[0]);
    return 2;
  }
  const int64_t pid = std::atoll(argv[1]);
  const Rect frame{std::atof(argv[2]), std::atof(argv[3]), std::atof(argv[4]), std::atof(argv[5])};
  const unsigned long expectXid = argc > 6 ? std::strtoul(argv[6], nullptr, 0) : 0;

  // ---- PNG budget, no display needed ----
  {
    // Downscale: a uniform image stays uniform; a non-integer ratio keeps the mean.
    std::vector<uint8_t> src(5 * 3 * 4), out;
    for (int i = 0; i < 15; ++i) {
      src[i * 4] = static_cast<uint8_t>(i * 17);
      src[i * 4 + 1] = 100;
      src[i * 4 + 2] = 200;
      src[i * 4 + 3] = 255;
    }
    Downscale(src.data(), 5, 3, 3, 2, out);
    double meanIn = 0, meanOut = 0;
    for (int i = 0; i < 15; ++i) meanIn += src[i * 4] / 15.0;
    for (int i = 0; i < 6; ++i) meanOut += out[i * 4] / 6.0;
    bool uniform = true;
    for (int i = 0; i < 6; ++i)
      uniform = uniform && out[i * 4 + 1] == 100 && out[i * 4 + 2] == 200 && out[i * 4 + 3] == 255;
    Check(out.size() == 3 * 2 * 4 && uniform && std::abs(meanIn - meanOut) < 1.0, "Downscale 5x3 -> 3x2 (box filter)",
          "mean in " + std::to_string(meanIn) + " out " + std::to_string(meanOut));
    // 2:1 exact average.
    std::vector<uint8_t> two = {0, 0, 0, 255, 100, 50, 20, 255, 200, 100, 40, 255, 60, 30, 12, 255};
    Downscale(two.data(), 2, 2, 1, 1, out);
    Check(out.size() == 4 && out[0] == 90 && out[1] == 45 && out[2] == 18 && out[3] == 255,
          "Downscale 2x2 -> 1x1 average",
          std::to_string(out[0]) + "," + std::to_string(out[1]) + "," + std::to_string(out[2]));

    // Worst case for PNG: 2560x1600 noise.
    const int W = 2560, H = 1600;
    std::vector<uint8_t> noise(static_cast<size_t>(W) * H * 4);
    std::mt19937 rng(42);
    for (size_t i = 0; i < noise.size(); i += 4) {
      const uint32_t v = rng();
      noise[i] = v & 0xff;
      noise[i + 1] = (v >> 8) & 0xff;
      noise[i + 2] = (v >> 16) & 0xff;
      noise[i + 3] = 255;
    }
    BudgetOptions opts;
    Screenshot shot;
    Error e = EncodeWithinBudget(noise.data(), W, H, 2.0, opts, shot);
    int dw = 0, dh = 0;
    const bool decoded = !e && DecodePng(shot.png, dw, dh);
    std::printf("noise 2560x1600: %dx%d scale %.3f, %d encodes, %zu bytes, %.1f ms\n", shot.pixelWidth,
                shot.pixelHeight, shot.scale, shot.encodes, shot.png.size(), shot.encodeMs);
    Check(!e && shot.png.size() <= opts.maxBytes && shot.encodes <= 3 && shot.pixelWidth >= W * opts.minScale &&
              std::max(shot.pixelWidth, shot.pixelHeight) <= opts.maxSide && decoded && dw == shot.pixelWidth &&
              dh == shot.pixelHeight,
          "noise meets the budget in <= 3 encodes, never below 0.25", Describe(e));
    Check(std::abs(shot.scale - 2.0 * shot.pixelWidth / W) < 1e-9, "scale = pixelsPerPoint * outW/width");

    // Lower-entropy noise (6 bits a channel): the predicted scale lands above the floor.
    std::vector<uint8_t> soft(noise);
    for (size_t i = 0; i < soft.size(); i += 4) {
      soft[i] &= 0x3f;
      soft[i + 1] &= 0x3f;
      soft[i + 2] &= 0x3f;
    }
    e = EncodeWithinBudget(soft.data(), W, H, 1.0, opts, shot);
    std::printf("6-bit noise 2560x1600: %dx%d scale %.3f, %d encodes, %zu bytes, %.1f ms\n", shot.pixelWidth,
                shot.pixelHeight, shot.scale, shot.encodes, shot.png.size(), shot.encodeMs);
    Check(!e && shot.png.size() <= opts.maxBytes && shot.encodes <= 3 && shot.scale > 0.25,
          "6-bit noise meets the budget in <= 3 encodes above the floor", Describe(e));

    // A huge noisy image where the floor wins: best effort, never below minScale.
    BudgetOptions tight;
    tight.maxBytes = 50 * 1024;
    e = EncodeWithinBudget(noise.data(), W, H, 1.0, tight, shot);
    std::printf("noise with a 50 KB budget: %dx%d, %d encodes, %zu bytes\n", shot.pixelWidth, shot.pixelHeight,
                shot.encodes, shot.png.size());
    Check(!e && shot.pixelWidth >= 640 && shot.pixelHeight >= 400 && shot.encodes <= 4,
          "impossible budget stops at the 0.25 floor within 4 encodes");
    std::vector<uint8_t> png;
    e = EncodePng(nullptr, 0, 0, 1, png);
    Check(e.code == ErrorCode::kInvalidArgument, "EncodePng rejects an empty image");
  }

  // ---- X11 ----
  X11Display x;
  Error e = x.Open();
  Check(!e && x.IsOpen(), "Open", Describe(e));
  if (e) return 1;
  std::printf("screen %dx%d\n", x.ScreenWidth(), x.ScreenHeight());

  unsigned long xid = 0;
  e = x.FindWindow(pid, frame, xid);
  char buf[64];
  std::snprintf(buf, sizeof buf, "xid 0x%lx (xdotool 0x%lx)", xid, expectXid);
  Check(!e && xid != 0 && (expectXid == 0 || xid == expectXid), "FindWindow by pid + frame", buf);

  unsigned long fallback = 0;
  e = x.FindWindow(999999, frame, fallback);
  std::snprintf(buf, sizeof buf, "xid 0x%lx", fallback);
  Check(!e && fallback == 0, "FindWindow never falls back to another pid's window", buf);

  // Deliberate BadWindow: recorded by the handler, reported, no exit.
  e = x.RaiseAndVerify(0x1, frame);
  Check(e.code == ErrorCode::kInputFailed && e.message.find("BadWindow") != std::string::npos,
        "BadWindow on xid 0x1 is caught", Describe(e));
  Check(x.IsOpen(), "display still usable after BadWindow");

  e = x.RaiseAndVerify(xid, frame);
  Check(!e, "RaiseAndVerify", Describe(e));

  // Partly off-screen: clipped, no BadMatch.
  std::vector<uint8_t> rgba;
  int w = 0, h = 0;
  Rect cap;
  e = x.CaptureRect(Rect{-100, -50, 600, 400}, rgba, w, h, cap);
  Check(!e && w == 500 && h == 350 && cap.x == 0 && cap.y == 0 && rgba.size() == 500u * 350 * 4,
        "CaptureRect partly off-screen is clipped", Describe(e) + " " + std::to_string(w) + "x" + std::to_string(h));
  e = x.CaptureRect(Rect{1900, 1000, 100, 100}, rgba, w, h, cap);
  Check(!e && w == 20 && h == 80, "CaptureRect past the bottom-right is clipped");
  e = x.CaptureRect(Rect{-500, -500, 100, 100}, rgba, w, h, cap);
  Check(e.code == ErrorCode::kCaptureFailed, "CaptureRect fully off-screen fails cleanly", Describe(e));

  // The window itself.
  e = x.CaptureRect(frame, rgba, w, h, cap);
  const size_t colours = DistinctColours(rgba);
  Check(!e && colours > 10, "window capture is not blank", std::to_string(colours) + " colours");

  // Timing: 1280x800 with MIT-SHM vs XGetImage.
  {
    std::vector<double> shmMs, plainMs;
    for (int i = 0; i < 15; ++i) {
      const auto t0 = Clock::now();
      e = x.CaptureRect(Rect{0, 0, 1280, 800}, rgba, w, h, cap);
      shmMs.push_back(Ms(t0));
    }
    setenv("AXSNAP_NO_XSHM", "1", 1);
    X11Display plain;
    Error pe = plain.Open();
    unsetenv("AXSNAP_NO_XSHM");
    std::vector<uint8_t> rgba2;
    for (int i = 0; i < 15 && !pe; ++i) {
      const auto t0 = Clock::now();
      pe = plain.CaptureRect(Rect{0, 0, 1280, 800}, rgba2, w, h, cap);
      plainMs.push_back(Ms(t0));
    }
    // The widget factory animates (spinners, progress bars): allow a few changed pixels.
    size_t differing = 0;
    for (size_t i = 0; i + 3 < rgba.size() && rgba.size() == rgba2.size(); i += 4) {
      differing += std::memcmp(&rgba[i], &rgba2[i], 4) != 0;
    }
    Check(!e && !pe && rgba.size() == rgba2.size() && differing < rgba.size() / 4 / 100,
          "SHM and XGetImage captures agree", std::to_string(differing) + " pixels differ (animation) " + Describe(pe));
    double med = 0, mn = 0, med2 = 0, mn2 = 0;
    Median(shmMs, med, mn);
    Median(plainMs, med2, mn2);
    std::printf(
        "capture 1280x800 (incl. RGBA conversion): XShmGetImage median %.2f ms (min %.2f, first %.2f), "
        "XGetImage median %.2f ms (min %.2f)\n",
        med, mn, shmMs[0], med2, mn2);

    std::vector<uint8_t> png;
    for (int level : {1, 6}) {
      std::vector<double> encMs;
      for (int i = 0; i < 5; ++i) {
        const auto t0 = Clock::now();
        EncodePng(rgba.data(), 1280, 800, level, png);
        encMs.push_back(Ms(t0));
      }
      Median(encMs, med, mn);
      std::printf("EncodePng 1280x800 level %d: median %.2f ms (min %.2f), %zu bytes\n", level, med, mn, png.size());
    }
  }

  // Budget on a real 1366x768 capture at scale 1.
  {
    e = x.CaptureRect(Rect{frame.x, frame.y, 1366, 768}, rgba, w, h, cap);
    BudgetOptions opts;
    Screenshot shot;
    const auto t0 = Clock::now();
    Error be = e ? e : EncodeWithinBudget(rgba.data(), w, h, 1.0, opts, shot);
    const double total = Ms(t0);
    int dw = 0, dh = 0;
    const bool decoded = !be && DecodePng(shot.png, dw, dh);
    std::printf("capture %dx%d -> %dx%d scale %.4f, %d encodes, %zu bytes, encodeMs %.2f (total %.2f)\n", w, h,
                shot.pixelWidth, shot.pixelHeight, shot.scale, shot.encodes, shot.png.size(), shot.encodeMs, total);
    Check(!be && w == 1366 && shot.png.size() <= 900 * 1024 && std::max(shot.pixelWidth, shot.pixelHeight) <= 1280 &&
              shot.encodes >= 1 && decoded && dw == shot.pixelWidth,
          "1366x768 capture within budget", Describe(be));
  }

  // Input on the app window.
  {
    e = x.Click(frame.x + frame.w / 2, frame.y + frame.h - 20, 1, 1);
    Check(!e, "Click on the window", Describe(e));
    e = x.Click(frame.x + frame.w / 2, frame.y + frame.h - 20, 1, 2);
    Check(!e, "double click", Describe(e));
    e = x.Move(frame.x + 50, frame.y + 50);
    Check(!e, "Move", Describe(e));
    e = x.Wheel(frame.x + frame.w / 2, frame.y + frame.h / 2, 0, 2);
    Check(!e, "Wheel", Describe(e));
    e = x.Keys("ctrl+a");
    Check(!e, "Keys(ctrl+a)", Describe(e));
    e = x.Type("h\xc3\xa9llo \xe2\x9c\x93");
    Check(!e, "Type(h\u00e9llo \u2713)", Describe(e));
    e = x.Keys("ctrl+bogus");
    Check(e.code == ErrorCode::kInvalidArgument, "Keys rejects an unknown key", Describe(e));
    e = x.Keys("hyper+a");
    Check(e.code == ErrorCode::kInvalidArgument, "Keys rejects an unknown modifier", Describe(e));
    e = x.Type(std::string("\xff"));
    Check(e.code == ErrorCode::kInvalidArgument, "Type rejects invalid UTF-8", Describe(e));
  }

  // A probe window overlapping the app: raise order, click and key delivery.
  {
    int fd = -1;
    const pid_t probe = StartProbe(static_cast<int>(frame.x) + 200, static_cast<int>(frame.y) + 200, 400, 300, fd);
    std::string got = ReadAvailable(fd, 500);
    Check(got.find("ready") != std::string::npos, "probe window mapped");
    const Rect probeFrame{frame.x + 200, frame.y + 200, 400, 300};

    e = x.RaiseAndVerify(xid, frame);
    Check(!e, "app raised above the probe", Describe(e));
    unsigned long probeXid = 0;
    e = x.FindWindow(probe, probeFrame, probeXid);
    Check(!e && probeXid != 0, "FindWindow finds the probe by pid");
    e = x.RaiseAndVerify(probeXid, probeFrame);
    Check(!e, "probe raised and verified on top", Describe(e));
    e = x.Click(probeFrame.x + 200, probeFrame.y + 150, 1, 1);
    Check(!e, "click on probe", Describe(e));
    e = x.Type("h\xc3\xa9llo \xe2\x9c\x93 A!");
    Check(!e, "Type into probe", Describe(e));
    e = x.Keys("ctrl+shift+t");
    Check(!e, "Keys(ctrl+shift+t) into probe", Describe(e));
    e = x.Keys("alt+F4");
    Check(!e, "Keys(alt+F4) into probe", Describe(e));
    e = x.Keys("ctrl+\xe2\x82\xac");  // ctrl+euro: needs a borrowed keycode
    Check(!e, "Keys(ctrl+\u20ac) into probe", Describe(e));
    e = x.Drag(probeFrame.x + 20, probeFrame.y + 20, probeFrame.x + 200, probeFrame.y + 100, 1);
    Check(!e, "Drag on probe", Describe(e));
    got = ReadAvailable(fd, 300);
    std::string flat = got;
    std::replace(flat.begin(), flat.end(), '\n', ' ');
    std::printf("probe saw: %s\n", flat.c_str());
    const char* expected[] = {"button 1",    "key h",     "key eacute", "key l",      "key o",
                              "key space",   "key U2713", "key A",      "key exclam", "key Control_L",
                              "key Shift_L", "key T",     "key Alt_L",  "key F4",     "key U20AC"};
    size_t pos = 0;
    bool inOrder = true;
    std::string missing;
    for (const char* s : expected) {
      const size_t at = got.find(std::string(s) + "\n", pos);
      if (at == std::string::npos) {
        inOrder = false;
        missing += std::string(" ") + s;
      } else {
        pos = at;
      }
    }
    Check(inOrder, "probe received the click and every key, in order", missing);

    // Now the app on top again: the probe must not see this click.
    e = x.RaiseAndVerify(xid, frame);
    Check(!e, "app raised back on top", Describe(e));
    e = x.Click(probeFrame.x + 200, probeFrame.y + 150, 1, 1);
    got = ReadAvailable(fd, 200);
    Check(!e && got.find("button") == std::string::npos, "click goes to the app, not the covered probe");
    kill(probe, SIGKILL);
    waitpid(probe, nullptr, 0);
    close(fd);
  }

  std::printf("%s: %d failure(s)\n", g_failures == 0 ? "ALL PASSED" : "FAILED", g_failures);
  return g_failures == 0 ? 0 : 1;
}
