// FakeMacSystem: the AppKit / ScreenCaptureKit half of the macOS backend,
// answered from the fake world. See fake_mac_system.h for the log lines.

#include "fake_mac_system.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <map>
#include <mutex>
#include <thread>

#include <sys/syscall.h>
#include <unistd.h>

#include "fake_cf.h"

namespace axsnap {

namespace {

using macfake::FakeApp;
using macfake::FakeWorld;
using macfake::Step;

// Runs one recovery step on the app `pid` and logs `line`.
Error SystemStep(int64_t pid, Step step, const std::string& line) {
  macfake::AppendLog(line);
  Error result;
  macfake::WithWorld([&](FakeWorld* w) {
    FakeApp* app = w ? w->App(pid) : nullptr;
    if (!app) {
      result = {ErrorCode::kAppNotFound, "no running app with pid " + std::to_string(pid)};
      return;
    }
    macfake::ApplyStep(*w, *app, step, 0);
  });
  return result;
}

// ---------------------------------------------------------------- keyboard layouts (M5)
//
// What UCKeyTranslate answers for key codes 0-50 (the main key block, by
// Carbon's kVK_* codes) on a few of Apple's layouts, one UTF-16 unit per code,
// '·' for a dead key or a key that types nothing. From the layouts' public
// physical-key charts (Apple's "U.S.", "French", "German", "Dvorak", "Dvorak -
// QWERTY ⌘", "Russian - PC"); only the main block, the keypad and a few
// control keys are modelled. Under ⌘ every one types what it types plain,
// except "Dvorak - QWERTY ⌘", whose ⌘ table is U.S. QWERTY. That the modelled
// Russian types Cyrillic under ⌘ too is the case where the Latin fallback
// matters (key_layout.h); if Apple's ⌘ table is Latin the result is the same key.
struct FakeLayout {
  const char* name;
  const char* source;
  const char16_t* plain;
  const char16_t* shifted;
  bool qwertyCommand;
};

const char16_t kUsPlain[] = u"asdfhgzxcv·bqweryt123465=97-80]ou[ip\rlj'k;\\,/nm.\t `";
const char16_t kUsShifted[] = u"ASDFHGZXCV·BQWERYT!@#$^%+(&_*)}OU{IP\rLJ\"K:|<?NM>\t ~";
const FakeLayout kFakeLayouts[] = {
    {"us", "com.apple.keylayout.US", kUsPlain, kUsShifted, false},
    {"french", "com.apple.keylayout.French", u"qsdfhgwxcv<bazeryt&é\"'§(-çè)!à$ou·ip\rljùkm·;=n,:\t @",
     u"QSDFHGWXCV>BAZERYT123465_97°80*OU·IP\rLJ%KM£.+N?/\t #", false},
    {"german", "com.apple.keylayout.German", u"asdfhgyxcv·bqwerzt123465·97ß80+ouüip\rljäkö#,-nm.\t <",
     u"ASDFHGYXCV·BQWERZT!\"§$&%·)/?(=*OUÜIP\rLJÄKÖ';_NM:\t >", false},
    {"dvorak", "com.apple.keylayout.Dvorak", u"aoeudi;qjk·x',.pfy123465]97[80=rg/cl\rnh-ts\\wzbmv\t `",
     u"AOEUDI:QJK·X\"<>PFY!@#$^%}(&{*)+RG?CL\rNH_TS|WZBMV\t ~", false},
    {"dvorak-qwerty-cmd", "com.apple.keylayout.DVORAK-QWERTYCMD",
     u"aoeudi;qjk·x',.pfy123465]97[80=rg/cl\rnh-ts\\wzbmv\t `",
     u"AOEUDI:QJK·X\"<>PFY!@#$^%}(&{*)+RG?CL\rNH_TS|WZBMV\t ~", true},
    {"russian", "com.apple.keylayout.RussianWin", u"фыварпячсм·ийцукне123465=97-80ъщгхшз\rдоэлж\\б.тью\t ё",
     u"ФЫВАРПЯЧСМ·ИЙЦУКНЕ!\"№;:%+(?_*)ЪЩГХШЗ\rДОЭЛЖ/Б,ТЬЮ\t Ё", false},
};

const FakeLayout* FindLayout(const std::string& name) {
  for (const FakeLayout& l : kFakeLayouts)
    if (name == l.name) return &l;
  return nullptr;
}

void FillRow(const char16_t* row, std::array<uint16_t, 128>& out) {
  for (size_t k = 0; k < 51 && row[k]; k++) out[k] = row[k] == u'·' ? 0 : row[k];
  // The keypad (the same on every modelled layout) and a few control keys.
  const std::pair<int, char16_t> kRest[] = {
      {51, 0x08}, {53, 0x1B}, {65, u'.'}, {67, u'*'},  {69, u'+'},  {75, u'/'},  {76, 0x03},  {78, u'-'},
      {81, u'='}, {82, u'0'}, {83, u'1'}, {84, u'2'},  {85, u'3'},  {86, u'4'},  {87, u'5'},  {88, u'6'},
      {89, u'7'}, {91, u'8'}, {92, u'9'}, {117, 0x7F}, {123, 0x1C}, {124, 0x1D}, {125, 0x1F}, {126, 0x1E}};
  for (const auto& [code, c] : kRest) out[code] = c;
}

// The process's main thread (Linux: the thread whose id is the pid).
bool OnMainThread() { return static_cast<pid_t>(syscall(SYS_gettid)) == getpid(); }

// A capture larger than this is a bug in the caller (a frame in pixels, a
// scale applied twice), not a window.
constexpr double kMaxSide = 16384;

}  // namespace

// proc_listallpids: every app's pid and every other process's, ascending
// (the kernel's order is its own; callers must not rely on one).
Error FakeMacSystem::ProcessIds(std::vector<int64_t>& out) {
  out.clear();
  macfake::WithWorld([&](FakeWorld* w) {
    if (!w) return;
    for (const FakeApp& app : w->apps) out.push_back(app.pid);
    out.insert(out.end(), w->processes.begin(), w->processes.end());
  });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return {};
}

// +[NSRunningApplication runningApplicationWithProcessIdentifier:], asked
// afresh: every app of the world now, whenever it started (issue 35 M6; that
// a Mac answers so for an app launched after the first NSWorkspace read is
// on docs/macos.md's list to confirm). A `processes` pid is no application.
namespace {
std::atomic<int64_t> gAppQueries{0};
}  // namespace

int64_t FakeAppQueries() { return gAppQueries.load(); }

bool FakeMacSystem::AppOfProcess(int64_t pid, RunningApp& out) {
  gAppQueries++;
  bool found = false;
  macfake::WithWorld([&](FakeWorld* w) {
    const FakeApp* app = w ? w->App(pid) : nullptr;
    if (!app) return;
    out.pid = app->pid;
    out.name = app->name;
    out.bundleId = app->bundleId;
    out.bundlePath = app->bundlePath;
    out.regular = app->regular;
    out.accessory = false;
    out.hidden = app->hidden;
    out.active = app->active;
    found = true;
  });
  return found;
}

bool FakeMacSystem::ProcessExists(int64_t pid) {
  bool exists = false;
  macfake::WithWorld(
      [&](FakeWorld* w) { exists = w && (w->App(pid) || std::count(w->processes.begin(), w->processes.end(), pid)); });
  return exists;
}

Error FakeMacSystem::Unhide(int64_t pid) {
  return SystemStep(pid, Step::kUnhide, "system unhide " + std::to_string(pid));
}

Error FakeMacSystem::ActivateAllWindows(int64_t pid) {
  return SystemStep(pid, Step::kActivate, "system activate " + std::to_string(pid));
}

namespace {
LaunchableApp Launchable(const macfake::FakeInstalled& i) {
  LaunchableApp app;
  app.id = i.bundleId;
  app.name = i.name;
  app.executable = i.executable;
  app.path = i.path;
  return app;
}

bool SameBundleId(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}
}  // namespace

// The folder scan sees only the entries that are `listed`.
Error FakeMacSystem::InstalledApps(std::vector<LaunchableApp>& out) {
  out.clear();
  macfake::WithWorld([&](FakeWorld* w) {
    if (!w) return;
    for (const macfake::FakeInstalled& i : w->installed)
      if (i.listed) out.push_back(Launchable(i));
  });
  return {};
}

// Launch Services knows every installed entry, listed or not; bundle ids
// compare without case, as Launch Services compares them.
Error FakeMacSystem::AppForBundleId(const std::string& bundleId, LaunchableApp& out, bool& found) {
  found = false;
  macfake::AppendLog("system launch services " + bundleId);
  macfake::WithWorld([&](FakeWorld* w) {
    if (!w) return;
    for (const macfake::FakeInstalled& i : w->installed)
      if (SameBundleId(i.bundleId, bundleId)) {
        out = Launchable(i);
        found = true;
        return;
      }
  });
  return {};
}

Error FakeMacSystem::OpenApplication(const LaunchRequest& request, int64_t& pid,
                                     std::chrono::steady_clock::time_point) {
  std::string line = "system open application " + request.id + " args=[";
  for (size_t i = 0; i < request.args.size(); i++) line += (i ? "," : "") + request.args[i];
  line += "] env=";
  // Only the names: a test asserts that the caller's variables reach the app, not their values.
  for (size_t i = 0; i < request.env.size(); i++) line += (i ? "," : "") + request.env[i].first;
  macfake::AppendLog(line);
  pid = 0;
  Error result;
  macfake::WithWorld([&](FakeWorld* w) {
    macfake::FakeInstalled* entry = nullptr;
    if (w)
      for (macfake::FakeInstalled& i : w->installed)
        if (i.bundleId == request.id || (!i.path.empty() && i.path == request.id)) entry = &i;
    if (!entry) {
      result = {ErrorCode::kAppNotFound, "Launch Services knows no application " + request.id};
      return;
    }
    // Running already (opened before, or among the world's apps): NSWorkspace activates it.
    for (const FakeApp& a : w->apps)
      if (a.bundleId == entry->bundleId) pid = a.pid;
    if (pid != 0) return;
    if (!entry->app) {
      result = {ErrorCode::kActionFailed,
                "could not open " + request.id + ": The application cannot be opened (NSCocoaErrorDomain 260)"};
      return;
    }
    pid = entry->app->pid;
    w->apps.push_back(std::move(*entry->app));
    entry->app.reset();
  });
  return result;
}

Error FakeMacSystem::OpenBundle(const std::string& bundleId, std::chrono::steady_clock::time_point) {
  macfake::AppendLog("system open -b " + bundleId);
  Error result;
  macfake::WithWorld([&](FakeWorld* w) {
    FakeApp* app = nullptr;
    if (w && !bundleId.empty())
      for (FakeApp& a : w->apps)
        if (a.bundleId == bundleId) app = &a;
    if (!app) {
      // What `open -b` says for an unknown bundle, with its exit status 1.
      result = {ErrorCode::kAppNotFound, "open -b " + bundleId + ": Unable to find application with identifier"};
      return;
    }
    macfake::ApplyStep(*w, *app, Step::kOpen, 0);
  });
  return result;
}

double FakeMacSystem::BackingScale(const Rect&) {
  double scale = 2;
  macfake::WithWorld([&](FakeWorld* w) {
    if (w) scale = w->scale;
  });
  return scale;
}

// issue 12 items 4, 5, 9 (capture): ScreenCaptureKit as the fake models it.
// The window's content is rendered at its own backing scale into a canvas of
// the size PlanScreenCapture asks for; with scalesToFit NO it is only scaled
// down (a smaller content stays at the top-left corner, the rest empty), with
// YES it fills the canvas. The canvas is then redrawn at frame x scale, as
// mac_system_appkit.mm's ImageToRgba does. The window filter gives black for
// a window scripted blackWithWindowFilter; a window scripted captureHangs is
// never answered: its pass is kept (as ScreenCaptureKit keeps the completion
// handler) until FakeCompleteCaptures.
namespace {

std::mutex gHungMu;
// A completion handler ScreenCaptureKit still holds, and whether it ran.
struct HeldHandler {
  std::shared_ptr<CapturePass> pass;
  bool answered = false;
};
std::vector<HeldHandler>& Hung() {
  static auto* hung = new std::vector<HeldHandler>;
  return *hung;
}

struct Canvas {
  int w = 0, h = 0;
  std::vector<uint8_t> px;
};

}  // namespace

void FakeCompleteCaptures(size_t oldest) {
  std::vector<HeldHandler> done;
  {
    std::lock_guard<std::mutex> lock(gHungMu);
    auto& hung = Hung();
    const size_t n = std::min(oldest, hung.size());
    done.assign(hung.begin(), hung.begin() + static_cast<std::ptrdiff_t>(n));
    hung.erase(hung.begin(), hung.begin() + static_cast<std::ptrdiff_t>(n));
  }
  // Outside the lock, as handlers run on ScreenCaptureKit's queue.
  for (auto& h : done)
    if (!h.answered) h.pass->Answered();
}

Error FakeMacSystem::CaptureWindow(uint32_t windowNumber, const Rect& frame, double scale, CaptureFilter filter,
                                   const std::shared_ptr<CapturePass>& pass, std::vector<uint8_t>& rgba, int& width,
                                   int& height, std::chrono::steady_clock::time_point) {
  std::string why;
  bool black = false, hangs = false, kept = false;
  double own = 0;
  macfake::WithWorld([&](FakeWorld* w) {
    const macfake::FakeCGWindow* cg = nullptr;
    if (w)
      for (const auto& c : w->windows)
        if (c.number == windowNumber) cg = &c;
    if (!w || !cg)
      why = "no window numbered " + std::to_string(windowNumber);
    else if (w->screenRecording != "granted")
      why = "Screen Recording is not granted";
    else if (w->captureFails || cg->captureFails)
      why = "scripted capture failure";
    else if (!cg->onScreen)
      why = "the window is not on screen";
    if (cg) {
      black = cg->blackWithWindowFilter && filter == CaptureFilter::kWindow;
      hangs = cg->captureHangs;
      kept = cg->handlerKept;
      own = cg->backingScale;
    }
  });
  const double pw = std::round(frame.w * scale), ph = std::round(frame.h * scale);
  if (why.empty() && (!(pw >= 1 && ph >= 1) || pw > kMaxSide || ph > kMaxSide))
    why = "bad capture size " + std::to_string(pw) + "x" + std::to_string(ph);
  const std::string head = "system capture " + std::to_string(windowNumber);
  if (why.empty() && hangs) {
    {
      std::lock_guard<std::mutex> lock(gHungMu);
      if (pass) {
        pass->Ask();
        Hung().push_back({pass, false});
      }
    }
    if (pass) pass->Abandon();
    why = "ScreenCaptureKit did not capture window " + std::to_string(windowNumber) + " in time";
  }
  if (why.empty() && kept && pass) {
    // Answered at once; the finished handler (holding the pass) is kept.
    pass->Ask();
    pass->Answered();
    std::lock_guard<std::mutex> lock(gHungMu);
    Hung().push_back({pass, true});
  }
  if (!why.empty()) {
    macfake::AppendLog(head + " -> failed: " + why);
    return {ErrorCode::kCaptureFailed, why};
  }
  // The canvas ScreenCaptureKit is asked for (the display filter's display is
  // taken to start at 0,0), and the window drawn into it at its own scale.
  const double ownScale = own > 0 ? own : scale;
  const ScreenCapturePlan plan = PlanScreenCapture(filter, frame, ownScale, scale, Rect{0, 0, 100000, 100000});
  Canvas canvas;
  canvas.w = static_cast<int>(plan.width);
  canvas.h = static_cast<int>(plan.height);
  canvas.px.assign(static_cast<size_t>(canvas.w) * static_cast<size_t>(canvas.h) * 4, 0);
  double cw = frame.w * ownScale, ch = frame.h * ownScale;
  if (plan.scalesToFit || cw > canvas.w || ch > canvas.h) {
    const double fit = std::min(canvas.w / cw, canvas.h / ch);
    cw *= fit;
    ch *= fit;
  }
  const int iw = std::max(1, static_cast<int>(std::lround(cw))), ih = std::max(1, static_cast<int>(std::lround(ch)));
  for (int y = 0; y < std::min(ih, canvas.h); ++y) {
    uint8_t* row = canvas.px.data() + static_cast<size_t>(y) * static_cast<size_t>(canvas.w) * 4;
    for (int x = 0; x < std::min(iw, canvas.w); ++x) {
      // A gradient, so an encoder or a crop that loses the image shows: red
      // grows to the right, green downwards, blue is the window number.
      row[x * 4 + 0] = black ? 0 : static_cast<uint8_t>(iw > 1 ? x * 255 / (iw - 1) : 0);
      row[x * 4 + 1] = black ? 0 : static_cast<uint8_t>(ih > 1 ? y * 255 / (ih - 1) : 0);
      row[x * 4 + 2] = black ? 0 : static_cast<uint8_t>(windowNumber & 0xFF);
      row[x * 4 + 3] = 255;
    }
  }
  // Redrawn at the size the caller asked for (nearest pixel).
  width = static_cast<int>(pw);
  height = static_cast<int>(ph);
  rgba.assign(static_cast<size_t>(width) * static_cast<size_t>(height) * 4, 0);
  for (int y = 0; y < height; ++y) {
    const int sy = std::min(canvas.h - 1, static_cast<int>(static_cast<int64_t>(y) * canvas.h / height));
    for (int x = 0; x < width; ++x) {
      const int sx = std::min(canvas.w - 1, static_cast<int>(static_cast<int64_t>(x) * canvas.w / width));
      const uint8_t* from = canvas.px.data() + (static_cast<size_t>(sy) * static_cast<size_t>(canvas.w) + sx) * 4;
      uint8_t* to = rgba.data() + (static_cast<size_t>(y) * static_cast<size_t>(width) + x) * 4;
      std::copy(from, from + 4, to);
    }
  }
  macfake::AppendLog(head + " " + std::to_string(width) + "x" + std::to_string(height) +
                     (filter == CaptureFilter::kDisplay ? " (display filter)" : ""));
  return {};
}

namespace {
std::atomic<int64_t> gProbes{0};

Access WorldAccess() {
  Access access = Access::kGranted;
  macfake::WithWorld([&](FakeWorld* w) {
    if (!w) return;
    if (w->screenRecording == "denied")
      access = Access::kDenied;
    else if (w->screenRecording == "unknown")
      access = Access::kUnknown;
  });
  return access;
}
}  // namespace

// issue 12 item 11: the preflight and the probe answer alike in the fake; the
// probe is counted, since on a Mac it is the call that may show the prompt.
Access FakeMacSystem::ScreenRecordingPreflight() { return WorldAccess(); }

Access FakeMacSystem::ScreenRecordingProbe() {
  gProbes++;
  return WorldAccess();
}

int64_t FakeScreenRecordingProbes() { return gProbes.load(); }

// issue 12 item 9: pools counted per thread.
namespace {
std::mutex gPoolMu;
FakePoolCounts gPools;
std::map<std::thread::id, int64_t> gDepth;
struct PoolToken {
  std::thread::id thread;
};
}  // namespace

void FakeMacSystem::KeyboardLayout(KeyLayout& out) {
  out = KeyLayout();
  // What Apple's TIS calls would assert on (MacSystem::KeyboardLayout's contract).
  if (!OnMainThread()) {
    macfake::AppendLog("system keyboard layout off the main thread");
    out.why = "the keyboard layout can only be read on the main thread";
    return;
  }
  std::string name;
  macfake::WithWorld([&](FakeWorld* w) { name = w ? w->keyboardLayout : "us"; });
  const FakeLayout* layout = FindLayout(name);
  if (!layout) {
    out.source = "com.apple.inputmethod.Fake";
    out.why = "the input source " + out.source + " has no keyboard layout data";
    return;
  }
  out.known = true;
  out.source = layout->source;
  FillRow(layout->plain, out.plain);
  FillRow(layout->shifted, out.shifted);
  FillRow(layout->qwertyCommand ? kUsPlain : layout->plain, out.command);
}

void* FakeMacSystem::PushAutoreleasePool() {
  std::lock_guard<std::mutex> lock(gPoolMu);
  gPools.pushes++;
  const int64_t depth = ++gDepth[std::this_thread::get_id()];
  gPools.maxDepth = std::max(gPools.maxDepth, depth);
  return new PoolToken{std::this_thread::get_id()};
}

void FakeMacSystem::PopAutoreleasePool(void* pool) {
  std::lock_guard<std::mutex> lock(gPoolMu);
  auto* token = static_cast<PoolToken*>(pool);
  gPools.pops++;
  if (!token || token->thread != std::this_thread::get_id()) gPools.wrongThread++;
  --gDepth[std::this_thread::get_id()];
  delete token;
}

FakePoolCounts FakeAutoreleasePools() {
  std::lock_guard<std::mutex> lock(gPoolMu);
  return gPools;
}

void FakeMacSystem::RequestScreenRecording() { macfake::AppendLog("system request screen recording"); }

AXGetWindowFn FakeMacSystem::AXGetWindow() {
  bool present = false;
  macfake::WithWorld([&](FakeWorld* w) { present = w && w->axGetWindow; });
  return present ? &macfake::FakeAXUIElementGetWindow : nullptr;
}

void FakeMacSystem::Sleep(std::chrono::milliseconds ms) {
  // Recorded, not slept: tests check the settle time without waiting for it.
  macfake::AppendLog("system sleep " + std::to_string(ms.count()));
}

std::unique_ptr<MacSystem> CreateFakeMacSystem() { return std::make_unique<FakeMacSystem>(); }

namespace macfake {

bool IsFakeKeyboardLayout(const std::string& name) { return name == "none" || FindLayout(name) != nullptr; }

std::string FakeKeyboardLayoutNames() {
  std::string names;
  for (const FakeLayout& l : kFakeLayouts) names += std::string(names.empty() ? "" : ", ") + "\"" + l.name + "\"";
  return names + ", \"none\"";
}

}  // namespace macfake

}  // namespace axsnap
