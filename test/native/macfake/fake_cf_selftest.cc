// Smoke test of the fake CF/AX/CG layer on its own (no addon, no backend):
// object lifetimes, strings, single and batched attribute reads with the
// AXError-in-slot behaviour, children, element identity through CFEqual and
// CFHash, faults, sets and actions, Chromium reveal, events, the window list,
// FakeMacSystem recovery, a leak count of zero at the end, and that misuse
// (over-release, use after free, CFRelease(NULL)) aborts.
//
// test/mac/fake.test.ts builds and runs it; by hand, from this directory:
//   c++ -std=c++17 -Wall -Wextra -Wno-unused-parameter -DAXSNAP_APPLE_DECLS
//     fake_cf_selftest.cc fake_cf.cc fake_mac_system.cc -lpthread -o /tmp/fake_cf_selftest
//   /tmp/fake_cf_selftest

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../../../src-native/mac/cf_ref.h"
#include "fake_cf.h"
#include "fake_mac_system.h"

using axsnap::CFAny;
using axsnap::CFRef;
using namespace axsnap::macfake;  // NOLINT(google-build-using-namespace)

namespace {

int failures = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

std::string Str(CFTypeRef v) {
  if (!v || CFGetTypeID(v) != CFStringGetTypeID()) return "<not a string>";
  CFStringRef s = static_cast<CFStringRef>(v);
  const CFIndex max = CFStringGetMaximumSizeForEncoding(CFStringGetLength(s), kCFStringEncodingUTF8) + 1;
  std::vector<char> buf(static_cast<size_t>(max));
  if (!CFStringGetCString(s, buf.data(), max, kCFStringEncodingUTF8)) return "<conversion failed>";
  return buf.data();
}

CFRef<CFStringRef> Make(const std::string& s) {
  return CFRef<CFStringRef>::Adopt(
      CFStringCreateWithBytes(kCFAllocatorDefault, reinterpret_cast<const UInt8*>(s.data()),
                              static_cast<CFIndex>(s.size()), kCFStringEncodingUTF8, false));
}

bool IsAXError(CFTypeRef v, AXError want) {
  if (!v || CFGetTypeID(v) != AXValueGetTypeID()) return false;
  AXValueRef value = static_cast<AXValueRef>(v);
  AXError got = kAXErrorSuccess;
  return AXValueGetType(value) == kAXValueTypeAXError && AXValueGetValue(value, kAXValueTypeAXError, &got) &&
         got == want;
}

bool HasLine(const std::string& line) {
  for (const std::string& l : Log())
    if (l == line) return true;
  return false;
}

void DumpLog() {
  for (const std::string& l : Log()) std::fprintf(stderr, "  log: %s\n", l.c_str());
}

FakeElement El(int64_t id, int64_t pid, std::map<std::string, FakeValue> attrs) {
  FakeElement e;
  e.id = id;
  e.pid = pid;
  e.attrs = std::move(attrs);
  return e;
}

// pid 100 "Notes": app 1 → window 2 (CG 41) → button 3, field 4, dying 5;
// pid 200 "Chrome": app 10 → window 11 (CG 51) → web area 12 (hidden child 13).
FakeWorld MakeWorld() {
  FakeWorld w;
  w.focusedPid = 100;
  FakeApp notes;
  notes.pid = 100, notes.name = "Notes", notes.bundleId = "com.apple.Notes", notes.rootId = 1;
  FakeApp chrome;
  chrome.pid = 200, chrome.name = "Chrome", chrome.bundleId = "com.google.Chrome", chrome.rootId = 10;
  chrome.chromium = FakeChromium{30, "AXManualAccessibility"};
  chrome.recoverOn = "activate";
  chrome.hidden = true;
  w.apps = {notes, chrome};

  w.elements[1] = El(1, 100,
                     {{"AXWindows", FakeValue::Array({FakeValue::Element(2)})},
                      {"AXFocusedWindow", FakeValue::Element(2)},
                      {"AXChildren", FakeValue::Array({FakeValue::Element(2)})}});
  FakeElement win =
      El(2, 100,
         {{"AXRole", FakeValue::String("AXWindow")},
          {"AXTitle", FakeValue::String("Notes — “draft”")},
          {"AXParent", FakeValue::Element(1)},
          {"AXMinimized", FakeValue::Bool(false)},
          {"AXPosition", FakeValue::Point(0, 25)},
          {"AXSize", FakeValue::Size(800, 600)},
          {"AXChildren", FakeValue::Array({FakeValue::Element(3), FakeValue::Element(4), FakeValue::Element(5)})}});
  win.actions = {"AXRaise"};
  win.settable = {"AXMinimized", "AXMain"};
  win.cgWindow = 41;
  w.elements[2] = win;
  FakeElement button = El(3, 100,
                          {{"AXRole", FakeValue::String("AXButton")},
                           {"AXTitle", FakeValue::String("New")},
                           {"AXPosition", FakeValue::Point(10, 40)},
                           {"AXSize", FakeValue::Size(80, 24)},
                           {"AXHelp", FakeValue::NoValue()},
                           {"AXValue", FakeValue::Error(kAXErrorCannotComplete)}});
  button.actions = {"AXPress"};
  button.faults.failBatchSlots = {"AXTitle"};
  w.elements[3] = button;
  FakeElement field = El(4, 100,
                         {{"AXRole", FakeValue::String("AXTextField")},
                          {"AXValue", FakeValue::String("hello")},
                          {"AXNumberOfCharacters", FakeValue::Int(5)}});
  field.settable = {"AXValue", "AXFocused"};
  w.elements[4] = field;
  FakeElement dying = El(5, 100, {{"AXRole", FakeValue::String("AXGroup")}});
  dying.faults.dieAfterReads = 1;
  w.elements[5] = dying;

  w.elements[10] = El(10, 200, {{"AXWindows", FakeValue::Array({FakeValue::Element(11)})}});
  w.elements[11] = El(11, 200,
                      {{"AXRole", FakeValue::String("AXWindow")},
                       {"AXTitle", FakeValue::String("Docs")},
                       {"AXMinimized", FakeValue::Bool(true)},
                       {"AXChildren", FakeValue::Array({FakeValue::Element(12)})}});
  FakeElement web = El(12, 200, {{"AXRole", FakeValue::String("AXWebArea")}});
  web.hiddenChildren = {FakeValue::Element(13)};
  w.elements[12] = web;
  w.elements[13] = El(13, 200, {{"AXRole", FakeValue::String("AXHeading")}, {"AXTitle", FakeValue::String("Hi")}});

  FakeCGWindow a;
  a.number = 41, a.pid = 100, a.x = 0, a.y = 25, a.w = 800, a.h = 600, a.name = "Notes";
  FakeCGWindow b;
  b.number = 51, b.pid = 200, b.x = 100, b.y = 100, b.w = 400, b.h = 300, b.name = "Docs", b.onScreen = false;
  w.windows = {a, b};
  return w;
}

void TestStrings() {
  CFRef<CFStringRef> s = Make("h\xC3\xA9llo \xF0\x9F\x98\x80");  // "héllo 😀"
  CHECK(CFStringGetLength(s.get()) == 8);                        // the emoji is two UTF-16 units
  CHECK(Str(s.get()) == "h\xC3\xA9llo \xF0\x9F\x98\x80");
  CHECK(CFStringGetCStringPtr(s.get(), kCFStringEncodingUTF8) == nullptr);
  char small[4];
  CHECK(!CFStringGetCString(s.get(), small, sizeof small, kCFStringEncodingUTF8));
  CFIndex used = 0;
  CHECK(CFStringGetBytes(s.get(), CFRangeMake(0, 2), kCFStringEncodingUTF8, 0, false, nullptr, 0, &used) == 2);
  CHECK(used == 3);
  const UInt8 bad[] = {0xC3, 0x28};
  CHECK(CFStringCreateWithBytes(kCFAllocatorDefault, bad, 2, kCFStringEncodingUTF8, false) == nullptr);
  CHECK(CFEqual(s.get(), Make("h\xC3\xA9llo \xF0\x9F\x98\x80").get()));
  CHECK(CFHash(s.get()) == CFHash(Make("h\xC3\xA9llo \xF0\x9F\x98\x80").get()));
  CHECK(CFSTR("AXRole") == CFSTR("AXRole"));
  CHECK(CFEqual(CFSTR("AXRole"), Make("AXRole").get()));
  CFRelease(CFSTR("AXRole"));  // allowed, does nothing

  const UniChar units[] = {0x61, 0xD83D, 0xDE00};
  CFRef<CFStringRef> u = CFRef<CFStringRef>::Adopt(CFStringCreateWithCharacters(kCFAllocatorDefault, units, 3));
  UniChar back[3] = {};
  CFStringGetCharacters(u.get(), CFRangeMake(0, 3), back);
  CHECK(std::memcmp(back, units, sizeof units) == 0);

  double d = 2.5;
  CFRef<CFNumberRef> n = CFRef<CFNumberRef>::Adopt(CFNumberCreate(kCFAllocatorDefault, kCFNumberDoubleType, &d));
  int32_t i = 0;
  CHECK(!CFNumberGetValue(n.get(), kCFNumberSInt32Type, &i));  // lossy
  CHECK(i == 2);
  int64_t big = 7;
  CFRef<CFNumberRef> m = CFRef<CFNumberRef>::Adopt(CFNumberCreate(kCFAllocatorDefault, kCFNumberSInt64Type, &big));
  CHECK(CFNumberGetValue(m.get(), kCFNumberDoubleType, &d) && d == 7);

  CFRef<CFURLRef> url =
      CFRef<CFURLRef>::Adopt(CFURLCreateWithString(kCFAllocatorDefault, Make("https://example.com/").get(), nullptr));
  CHECK(url && Str(CFURLGetString(url.get())) == "https://example.com/");
  CHECK(CFURLCreateWithString(kCFAllocatorDefault, Make("not a url").get(), nullptr) == nullptr);

  const void* keys[] = {kAXTrustedCheckOptionPrompt};
  const void* values[] = {kCFBooleanTrue};
  CFRef<CFDictionaryRef> dict = CFRef<CFDictionaryRef>::Adopt(CFDictionaryCreate(
      kCFAllocatorDefault, keys, values, 1, &kCFTypeDictionaryKeyCallBacks, &kCFTypeDictionaryValueCallBacks));
  CHECK(CFDictionaryGetValue(dict.get(), Make("AXTrustedCheckOptionPrompt").get()) == kCFBooleanTrue);
  CHECK(!CFDictionaryGetValueIfPresent(dict.get(), CFSTR("other"), nullptr));
}

void TestReads() {
  CFRef<AXUIElementRef> app = CFRef<AXUIElementRef>::Adopt(AXUIElementCreateApplication(100));
  CFAny win;
  CHECK(AXUIElementCopyAttributeValue(app.get(), CFSTR("AXFocusedWindow"), win.OutParam()) == kAXErrorSuccess);
  CHECK(CFGetTypeID(win.get()) == AXUIElementGetTypeID());
  AXUIElementRef w = static_cast<AXUIElementRef>(win.get());
  CFAny title;
  CHECK(AXUIElementCopyAttributeValue(w, CFSTR("AXTitle"), title.OutParam()) == kAXErrorSuccess);
  CHECK(Str(title.get()) == "Notes — “draft”");
  CFAny missing;
  CHECK(AXUIElementCopyAttributeValue(w, CFSTR("AXNope"), missing.OutParam()) == kAXErrorAttributeUnsupported);
  CHECK(!missing);

  // Identity: another copy of the same window is a different object, CFEqual and same CFHash.
  CFRef<CFArrayRef> windows;
  CHECK(AXUIElementCopyAttributeValue(app.get(), CFSTR("AXWindows"),
                                      reinterpret_cast<CFTypeRef*>(windows.OutParam())) == kAXErrorSuccess);
  CHECK(CFArrayGetCount(windows.get()) == 1);
  CFTypeRef again = CFArrayGetValueAtIndex(windows.get(), 0);
  CHECK(again != win.get());
  CHECK(CFEqual(again, win.get()));
  CHECK(CFHash(again) == CFHash(win.get()));
  // The app element and the window's AXParent designate the same element.
  CFAny parent;
  CHECK(AXUIElementCopyAttributeValue(w, CFSTR("AXParent"), parent.OutParam()) == kAXErrorSuccess);
  CHECK(CFEqual(parent.get(), app.get()) && CFHash(parent.get()) == CFHash(app.get()));
  CHECK(!CFEqual(parent.get(), win.get()));
  pid_t pid = 0;
  CHECK(AXUIElementGetPid(w, &pid) == kAXErrorSuccess && pid == 100);

  // Children: whole, counted, and in a range.
  CFIndex count = 0;
  CHECK(AXUIElementGetAttributeValueCount(w, CFSTR("AXChildren"), &count) == kAXErrorSuccess && count == 3);
  CFRef<CFArrayRef> some;
  CHECK(AXUIElementCopyAttributeValues(w, CFSTR("AXChildren"), 1, 5, some.OutParam()) == kAXErrorSuccess);
  CHECK(CFArrayGetCount(some.get()) == 2);
  CHECK(AXUIElementCopyAttributeValues(w, CFSTR("AXChildren"), 4, 1, some.OutParam()) == kAXErrorIllegalArgument);
  CHECK(AXUIElementGetAttributeValueCount(w, CFSTR("AXTitle"), &count) == kAXErrorIllegalArgument);
  CFRef<CFArrayRef> children;
  CHECK(AXUIElementCopyAttributeValue(w, CFSTR("AXChildren"), reinterpret_cast<CFTypeRef*>(children.OutParam())) ==
        kAXErrorSuccess);
  AXUIElementRef button = static_cast<AXUIElementRef>(CFArrayGetValueAtIndex(children.get(), 0));
  AXUIElementRef field = static_cast<AXUIElementRef>(CFArrayGetValueAtIndex(children.get(), 1));
  AXUIElementRef dying = static_cast<AXUIElementRef>(CFArrayGetValueAtIndex(children.get(), 2));
  CHECK(AXUIElementCopyAttributeValues(w, CFSTR("AXChildren"), 1, 1, some.OutParam()) == kAXErrorSuccess);
  CHECK(CFArrayGetCount(some.get()) == 1 && CFEqual(CFArrayGetValueAtIndex(some.get(), 0), field));

  // Single reads of a no-value and an error attribute.
  CFAny v;
  CHECK(AXUIElementCopyAttributeValue(button, CFSTR("AXHelp"), v.OutParam()) == kAXErrorNoValue);
  CHECK(AXUIElementCopyAttributeValue(button, CFSTR("AXValue"), v.OutParam()) == kAXErrorCannotComplete);
  CHECK(AXUIElementCopyAttributeValue(button, CFSTR("AXTitle"), v.OutParam()) == kAXErrorSuccess);  // batch-only fault

  // A batch: failed slots hold AXValues wrapping the AXError, the call succeeds.
  const void* names[] = {CFSTR("AXRole"), CFSTR("AXTitle"), CFSTR("AXNope"),
                         CFSTR("AXHelp"), CFSTR("AXValue"), CFSTR("AXPosition")};
  CFRef<CFArrayRef> attrs =
      CFRef<CFArrayRef>::Adopt(CFArrayCreate(kCFAllocatorDefault, names, 6, &kCFTypeArrayCallBacks));
  CFRef<CFArrayRef> slots;
  CHECK(AXUIElementCopyMultipleAttributeValues(button, attrs.get(), 0, slots.OutParam()) == kAXErrorSuccess);
  CHECK(CFArrayGetCount(slots.get()) == 6);
  CHECK(Str(CFArrayGetValueAtIndex(slots.get(), 0)) == "AXButton");
  CHECK(IsAXError(CFArrayGetValueAtIndex(slots.get(), 1), kAXErrorCannotComplete));  // failBatchSlots
  CHECK(IsAXError(CFArrayGetValueAtIndex(slots.get(), 2), kAXErrorNoValue));         // unsupported
  CHECK(IsAXError(CFArrayGetValueAtIndex(slots.get(), 3), kAXErrorNoValue));         // null
  CHECK(IsAXError(CFArrayGetValueAtIndex(slots.get(), 4), kAXErrorCannotComplete));  // { error }
  CGPoint p{};
  CHECK(AXValueGetValue(static_cast<AXValueRef>(CFArrayGetValueAtIndex(slots.get(), 5)), kAXValueTypeCGPoint, &p) &&
        p.x == 10 && p.y == 40);
  CFRef<CFArrayRef> stopped;
  CHECK(AXUIElementCopyMultipleAttributeValues(button, attrs.get(), kAXCopyMultipleAttributeOptionStopOnError,
                                               stopped.OutParam()) == kAXErrorCannotComplete);
  CHECK(!stopped);

  // dieAfterReads: 1 — one read, then the element is gone for every call.
  CHECK(AXUIElementCopyAttributeValue(dying, CFSTR("AXRole"), v.OutParam()) == kAXErrorSuccess);
  CHECK(AXUIElementCopyAttributeValue(dying, CFSTR("AXRole"), v.OutParam()) == kAXErrorInvalidUIElement);
  CHECK(AXUIElementCopyMultipleAttributeValues(dying, attrs.get(), 0, slots.OutParam()) == kAXErrorInvalidUIElement);
  CHECK(AXUIElementPerformAction(dying, CFSTR("AXPress")) == kAXErrorInvalidUIElement);

  // Sets.
  CHECK(AXUIElementSetAttributeValue(field, CFSTR("AXValue"), Make("bye").get()) == kAXErrorSuccess);
  CHECK(AXUIElementCopyAttributeValue(field, CFSTR("AXValue"), v.OutParam()) == kAXErrorSuccess);
  CHECK(Str(v.get()) == "bye");
  CHECK(AXUIElementSetAttributeValue(field, CFSTR("AXValue"), kCFBooleanTrue) == kAXErrorIllegalArgument);
  CHECK(AXUIElementSetAttributeValue(field, CFSTR("AXRole"), Make("x").get()) == kAXErrorIllegalArgument);
  CHECK(AXUIElementSetAttributeValue(field, CFSTR("AXNope"), Make("x").get()) == kAXErrorAttributeUnsupported);
  CHECK(AXUIElementSetAttributeValue(field, CFSTR("AXFocused"), kCFBooleanTrue) == kAXErrorSuccess);
  CFAny focused;
  CHECK(AXUIElementCopyAttributeValue(app.get(), CFSTR("AXFocusedUIElement"), focused.OutParam()) == kAXErrorSuccess);
  CHECK(CFEqual(focused.get(), field));
  Boolean settable = false;
  CHECK(AXUIElementIsAttributeSettable(field, CFSTR("AXValue"), &settable) == kAXErrorSuccess && settable);
  CHECK(AXUIElementIsAttributeSettable(field, CFSTR("AXRole"), &settable) == kAXErrorSuccess && !settable);
  CHECK(HasLine("set 4 AXValue \"bye\""));
  CHECK(HasLine("set 4 AXNope \"x\" -> -25205"));

  // Actions.
  CFRef<CFArrayRef> actions;
  CHECK(AXUIElementCopyActionNames(button, actions.OutParam()) == kAXErrorSuccess);
  CHECK(CFArrayGetCount(actions.get()) == 1 && Str(CFArrayGetValueAtIndex(actions.get(), 0)) == "AXPress");
  CHECK(AXUIElementPerformAction(button, CFSTR("AXPress")) == kAXErrorSuccess);
  CHECK(AXUIElementPerformAction(button, CFSTR("AXShowMenu")) == kAXErrorActionUnsupported);
  CHECK(HasLine("perform 3 AXPress"));
  CHECK(HasLine("perform 3 AXShowMenu -> -25206"));

  // Hit testing: the deepest element under the point.
  CFRef<AXUIElementRef> sys = CFRef<AXUIElementRef>::Adopt(AXUIElementCreateSystemWide());
  CFRef<AXUIElementRef> hit;
  CHECK(AXUIElementCopyElementAtPosition(sys.get(), 20, 50, hit.OutParam()) == kAXErrorSuccess);
  CHECK(hit && CFEqual(hit.get(), button));
  CHECK(AXUIElementCopyElementAtPosition(app.get(), 500, 500, hit.OutParam()) == kAXErrorSuccess);
  CHECK(hit && CFEqual(hit.get(), win.get()));
  CHECK(AXUIElementCopyElementAtPosition(sys.get(), 5000, 5000, hit.OutParam()) == kAXErrorNoValue);

  // The system-wide element.
  CFAny focusedApp;
  CHECK(AXUIElementCopyAttributeValue(sys.get(), CFSTR("AXFocusedApplication"), focusedApp.OutParam()) ==
        kAXErrorSuccess);
  CHECK(CFEqual(focusedApp.get(), app.get()));

  // An app that does not exist.
  CFRef<AXUIElementRef> ghost = CFRef<AXUIElementRef>::Adopt(AXUIElementCreateApplication(999));
  CHECK(AXUIElementCopyAttributeValue(ghost.get(), CFSTR("AXRole"), v.OutParam()) == kAXErrorCannotComplete);
}

void TestWindowsAndRecovery() {
  CFRef<CFArrayRef> all = CFRef<CFArrayRef>::Adopt(CGWindowListCopyWindowInfo(kCGWindowListOptionAll, kCGNullWindowID));
  CHECK(CFArrayGetCount(all.get()) == 2);
  CFDictionaryRef first = static_cast<CFDictionaryRef>(CFArrayGetValueAtIndex(all.get(), 0));
  int32_t number = 0;
  CHECK(CFNumberGetValue(static_cast<CFNumberRef>(CFDictionaryGetValue(first, kCGWindowNumber)), kCFNumberSInt32Type,
                         &number) &&
        number == 41);
  CGRect r{};
  CFDictionaryRef bounds = static_cast<CFDictionaryRef>(CFDictionaryGetValue(first, kCGWindowBounds));
  CHECK(CGRectMakeWithDictionaryRepresentation(bounds, &r) && r.origin.y == 25 && r.size.width == 800);
  CHECK(Str(CFDictionaryGetValue(first, kCGWindowName)) == "Notes");
  CHECK(Str(CFDictionaryGetValue(first, kCGWindowOwnerName)) == "Notes");
  CHECK(CFDictionaryGetValue(first, kCGWindowIsOnscreen) == kCFBooleanTrue);
  CFRef<CFArrayRef> onScreen =
      CFRef<CFArrayRef>::Adopt(CGWindowListCopyWindowInfo(kCGWindowListOptionOnScreenOnly, kCGNullWindowID));
  CHECK(CFArrayGetCount(onScreen.get()) == 1);

  // Chrome (pid 200) is hidden, its window minimized, and only "activate" brings it back.
  axsnap::FakeMacSystem system;
  CHECK(!system.Unhide(200));
  onScreen = CFRef<CFArrayRef>::Adopt(CGWindowListCopyWindowInfo(kCGWindowListOptionOnScreenOnly, kCGNullWindowID));
  CHECK(CFArrayGetCount(onScreen.get()) == 1);  // ignored: not its step
  CHECK(!system.ActivateAllWindows(200));
  onScreen = CFRef<CFArrayRef>::Adopt(CGWindowListCopyWindowInfo(kCGWindowListOptionOnScreenOnly, kCGNullWindowID));
  CHECK(CFArrayGetCount(onScreen.get()) == 2);
  first = static_cast<CFDictionaryRef>(CFArrayGetValueAtIndex(onScreen.get(), 0));
  CHECK(CFNumberGetValue(static_cast<CFNumberRef>(CFDictionaryGetValue(first, kCGWindowNumber)), kCFNumberSInt32Type,
                         &number) &&
        number == 51);  // activation brought Chrome's window to the front
  CHECK(system.OpenBundle("com.example.none", std::chrono::steady_clock::now()).code ==
        axsnap::ErrorCode::kAppNotFound);
  std::vector<int64_t> pids;
  axsnap::RunningApp notesApp, chromeApp;
  CHECK(!system.ProcessIds(pids) && pids == std::vector<int64_t>({100, 200}));
  CHECK(system.AppOfProcess(100, notesApp) && system.AppOfProcess(200, chromeApp) && chromeApp.active &&
        !chromeApp.hidden && !notesApp.active && !system.AppOfProcess(300, notesApp) && !system.ProcessExists(300));
  CHECK(HasLine("system unhide 200") && HasLine("system activate 200") && HasLine("system open -b com.example.none"));

  // AXRaise on Notes' window moves it to the front of the window list.
  CFRef<AXUIElementRef> notes = CFRef<AXUIElementRef>::Adopt(AXUIElementCreateApplication(100));
  CFAny win;
  CHECK(AXUIElementCopyAttributeValue(notes.get(), CFSTR("AXFocusedWindow"), win.OutParam()) == kAXErrorSuccess);
  CHECK(AXUIElementPerformAction(static_cast<AXUIElementRef>(win.get()), CFSTR("AXRaise")) == kAXErrorSuccess);
  all = CFRef<CFArrayRef>::Adopt(CGWindowListCopyWindowInfo(kCGWindowListOptionAll, kCGNullWindowID));
  first = static_cast<CFDictionaryRef>(CFArrayGetValueAtIndex(all.get(), 0));
  CHECK(CFNumberGetValue(static_cast<CFNumberRef>(CFDictionaryGetValue(first, kCGWindowNumber)), kCFNumberSInt32Type,
                         &number) &&
        number == 41);
  // Minimize and unminimize (Notes has no recoverOn: natural effects).
  CHECK(AXUIElementSetAttributeValue(static_cast<AXUIElementRef>(win.get()), CFSTR("AXMinimized"), kCFBooleanTrue) ==
        kAXErrorSuccess);
  onScreen = CFRef<CFArrayRef>::Adopt(CGWindowListCopyWindowInfo(kCGWindowListOptionOnScreenOnly, kCGNullWindowID));
  CHECK(CFArrayGetCount(onScreen.get()) == 1);
  CHECK(AXUIElementSetAttributeValue(static_cast<AXUIElementRef>(win.get()), CFSTR("AXMinimized"), kCFBooleanFalse) ==
        kAXErrorSuccess);
  onScreen = CFRef<CFArrayRef>::Adopt(CGWindowListCopyWindowInfo(kCGWindowListOptionOnScreenOnly, kCGNullWindowID));
  CHECK(CFArrayGetCount(onScreen.get()) == 2);

  // Capture: a gradient of frame × scale pixels.
  std::vector<uint8_t> rgba;
  int width = 0, height = 0;
  const auto soon = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  CHECK(!system.CaptureWindow(41, axsnap::Rect{0, 25, 100, 50}, system.BackingScale({}), axsnap::CaptureFilter::kWindow,
                              nullptr, rgba, width, height, soon));
  CHECK(width == 200 && height == 100 && rgba.size() == 200u * 100u * 4u);
  CHECK(rgba[0] == 0 && rgba[(199) * 4] == 255 && rgba[3] == 255 && rgba[2] == 41);
  CHECK(system
            .CaptureWindow(99, axsnap::Rect{0, 0, 10, 10}, 2, axsnap::CaptureFilter::kWindow, nullptr, rgba, width,
                           height, soon)
            .code == axsnap::ErrorCode::kCaptureFailed);
  system.Sleep(std::chrono::milliseconds(700));
  CHECK(HasLine("system sleep 700") && HasLine("system capture 41 200x100"));

  // Screen Recording denied: no window names.
  WithWorld([](FakeWorld* w) { w->screenRecording = "denied"; });
  all = CFRef<CFArrayRef>::Adopt(CGWindowListCopyWindowInfo(kCGWindowListOptionAll, kCGNullWindowID));
  CHECK(CFDictionaryGetValue(static_cast<CFDictionaryRef>(CFArrayGetValueAtIndex(all.get(), 0)), kCGWindowName) ==
        nullptr);
  CHECK(!CGPreflightScreenCaptureAccess());
  CHECK(system.ScreenRecordingPreflight() == axsnap::Access::kDenied);
}

void TestChromium() {
  CFRef<AXUIElementRef> chrome = CFRef<AXUIElementRef>::Adopt(AXUIElementCreateApplication(200));
  CFRef<AXUIElementRef> notes = CFRef<AXUIElementRef>::Adopt(AXUIElementCreateApplication(100));
  CHECK(AXUIElementSetAttributeValue(notes.get(), CFSTR("AXManualAccessibility"), kCFBooleanTrue) ==
        kAXErrorAttributeUnsupported);
  CHECK(AXUIElementSetAttributeValue(chrome.get(), CFSTR("AXEnhancedUserInterface"), kCFBooleanTrue) ==
        kAXErrorAttributeUnsupported);  // scripted for the other switch
  CFAny windows, children;
  CHECK(AXUIElementCopyAttributeValue(chrome.get(), CFSTR("AXWindows"), windows.OutParam()) == kAXErrorSuccess);
  AXUIElementRef win = static_cast<AXUIElementRef>(CFArrayGetValueAtIndex(static_cast<CFArrayRef>(windows.get()), 0));
  CHECK(AXUIElementCopyAttributeValue(win, CFSTR("AXChildren"), children.OutParam()) == kAXErrorSuccess);
  CFRef<AXUIElementRef> web = CFRef<AXUIElementRef>::Retain(
      static_cast<AXUIElementRef>(CFArrayGetValueAtIndex(static_cast<CFArrayRef>(children.get()), 0)));
  CFIndex count = -1;
  CHECK(AXUIElementGetAttributeValueCount(web.get(), CFSTR("AXChildren"), &count) == kAXErrorAttributeUnsupported);
  CHECK(AXUIElementSetAttributeValue(chrome.get(), CFSTR("AXManualAccessibility"), kCFBooleanTrue) == kAXErrorSuccess);
  CHECK(AXUIElementGetAttributeValueCount(web.get(), CFSTR("AXChildren"), &count) == kAXErrorAttributeUnsupported);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  CHECK(AXUIElementGetAttributeValueCount(web.get(), CFSTR("AXChildren"), &count) == kAXErrorSuccess && count == 1);
  CHECK(HasLine("set 10 AXManualAccessibility true"));
}

void TestHangAndTrust() {
  WithWorld([](FakeWorld* w) { w->App(100)->hungMs = 5000; });
  CFRef<AXUIElementRef> app = CFRef<AXUIElementRef>::Adopt(AXUIElementCreateApplication(100));
  CHECK(AXUIElementSetMessagingTimeout(app.get(), 0.05f) == kAXErrorSuccess);
  const auto t0 = std::chrono::steady_clock::now();
  CFAny v;
  CHECK(AXUIElementCopyAttributeValue(app.get(), CFSTR("AXTitle"), v.OutParam()) == kAXErrorCannotComplete);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  CHECK(ms >= 45 && ms < 1000);
  CHECK(HasLine("timeout app 100 0.05"));
  WithWorld([](FakeWorld* w) { w->App(100)->hungMs = 20; });
  CHECK(AXUIElementCopyAttributeValue(app.get(), CFSTR("AXTitle"), v.OutParam()) == kAXErrorSuccess);
  CHECK(Str(v.get()) == "Notes");

  WithWorld([](FakeWorld* w) { w->trusted = false; });
  CHECK(AXUIElementCopyAttributeValue(app.get(), CFSTR("AXTitle"), v.OutParam()) == kAXErrorAPIDisabled);
  CHECK(!AXIsProcessTrusted());
  const void* keys[] = {kAXTrustedCheckOptionPrompt};
  const void* values[] = {kCFBooleanTrue};
  CFRef<CFDictionaryRef> options = CFRef<CFDictionaryRef>::Adopt(CFDictionaryCreate(
      kCFAllocatorDefault, keys, values, 1, &kCFTypeDictionaryKeyCallBacks, &kCFTypeDictionaryValueCallBacks));
  CHECK(!AXIsProcessTrustedWithOptions(options.get()));
  CHECK(HasLine("prompt accessibility"));
}

void TestEvents() {
  // Untrusted (left so by TestHangAndTrust): CGEventPost drops events.
  CFRef<CGEventRef> lost = CFRef<CGEventRef>::Adopt(CGEventCreateKeyboardEvent(nullptr, 1, false));
  CGEventPost(kCGHIDEventTap, lost.get());
  CHECK(HasLine("dropped event keyUp code=1 flags=0x0"));
  WithWorld([](FakeWorld* w) { w->trusted = true; });
  CFRef<CGEventSourceRef> source =
      CFRef<CGEventSourceRef>::Adopt(CGEventSourceCreate(kCGEventSourceStateCombinedSessionState));
  CFRef<CGEventRef> down = CFRef<CGEventRef>::Adopt(
      CGEventCreateMouseEvent(source.get(), kCGEventLeftMouseDown, CGPointMake(120, 340), kCGMouseButtonLeft));
  CGEventSetIntegerValueField(down.get(), kCGMouseEventClickState, 2);
  CGEventSetFlags(down.get(), kCGEventFlagMaskCommand);
  CGEventPost(kCGHIDEventTap, down.get());
  CFRef<CGEventRef> key = CFRef<CGEventRef>::Adopt(CGEventCreateKeyboardEvent(source.get(), 36, true));
  CGEventPost(kCGHIDEventTap, key.get());
  CFRef<CGEventRef> text = CFRef<CGEventRef>::Adopt(CGEventCreateKeyboardEvent(source.get(), 0, true));
  const UniChar hello[] = {'h', 0xE9, 'l', 'l', 'o'};
  CGEventKeyboardSetUnicodeString(text.get(), 5, hello);
  CGEventPost(kCGHIDEventTap, text.get());
  CFRef<CGEventRef> scroll =
      CFRef<CGEventRef>::Adopt(CGEventCreateScrollWheelEvent2(source.get(), kCGScrollEventUnitLine, 2, -3, 1, 0));
  CGEventPost(kCGHIDEventTap, scroll.get());
  CHECK(HasLine("event leftMouseDown 120,340 clicks=2 flags=0x100000"));
  CHECK(HasLine("event keyDown code=36 flags=0x0"));
  CHECK(HasLine("event unicode \"h\xC3\xA9llo\""));
  CHECK(HasLine("event scroll 1 -3 line at 0,0"));
}

// Runs `fn` in a forked child and reports whether it aborted.
bool Aborts(void (*fn)()) {
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    // Keep the expected abort message out of the test's output.
    std::freopen("/dev/null", "w", stderr);
    fn();
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

}  // namespace

int main() {
  InstallWorld(MakeWorld());
  TestStrings();
  TestReads();
  TestWindowsAndRecovery();
  TestChromium();
  TestHangAndTrust();
  TestEvents();
  ClearWorld();

  const int64_t live = LiveObjects();
  if (live != 0) std::fprintf(stderr, "%s\n", LiveObjectsSummary().c_str());
  CHECK(live == 0);

  CHECK(Aborts([] {
    CFStringRef s = CFStringCreateWithCString(kCFAllocatorDefault, "x", kCFStringEncodingUTF8);
    CFRelease(s);
    CFRelease(s);  // over-release
  }));
  CHECK(Aborts([] {
    CFStringRef s = CFStringCreateWithCString(kCFAllocatorDefault, "x", kCFStringEncodingUTF8);
    CFRelease(s);
    CFStringGetLength(s);  // use after free
  }));
  CHECK(Aborts([] { CFRelease(nullptr); }));
  CHECK(Aborts([] {
    int not_cf = 0;
    CFRetain(&not_cf);
  }));
  CHECK(Aborts([] { CFArrayGetCount(static_cast<CFArrayRef>(static_cast<CFTypeRef>(CFSTR("x")))); }));
  CHECK(!Aborts([] {
    CFRelease(CFSTR("constant"));
    CFRelease(kCFBooleanTrue);
  }));

  if (failures) {
    DumpLog();
    std::fprintf(stderr, "fake_cf_selftest: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("fake_cf_selftest: all checks passed\n");
  return 0;
}
