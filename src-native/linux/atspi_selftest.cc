// Standalone check of AtspiBackend against a live gtk3-widget-factory.
// Not part of the addon. Build and run (the headless desktop is below):
//
//   g++ -std=c++17 -O2 -Wall -Wextra -Werror atspi_selftest.cc $(ls atspi_*.cc | grep -v selftest) dbus_reply.cc
//       ../core/names.cc
//       $(pkg-config --cflags --libs gio-2.0) -o atspi_selftest
//   ./atspi_selftest [--dump] [--quick] [--no-bulk] [--keep-bus] [--call-timeout MS]
//
// Needs DBUS_SESSION_BUS_ADDRESS and DISPLAY of a desktop where
// gtk3-widget-factory runs; AXSNAP_TEST_APP_PID (optional) is its pid.
// A headless desktop: a temporary HOME and XDG_RUNTIME_DIR (mode 700);
// unset NO_AT_BRIDGE WAYLAND_DISPLAY DBUS_SESSION_BUS_ADDRESS; GDK_BACKEND=x11;
// `Xvfb -displayfd 5 -screen 0 1920x1080x24 -nolisten tcp -noreset 5>file`
// (DISPLAY=:<number in file>); `setsid dbus-daemon --session --fork
// --print-address=1 --print-pid=1` (line 1 = DBUS_SESSION_BUS_ADDRESS,
// line 2 = pid); start gtk3-widget-factory, wait ~1.5 s, run this; then kill
// the app, the dbus-daemon's process group (it includes the accessibility
// bus and registry it activated) and Xvfb.
//
// The test SIGSTOPs the app (and SIGCONTs it) and, last, kills the
// accessibility bus daemon (not with --keep-bus). Exit status 0 when every
// check passes.
// Under valgrind pass --call-timeout 10000 (everything is ~50x slower).

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "atspi_backend.h"

using namespace axsnap;
using Ms = std::chrono::milliseconds;

namespace {

int g_failures = 0;

void Check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++g_failures;
}

std::string Describe(const Error& e) { return std::string(ErrorCodeName(e.code)) + ": " + e.message; }

double SelfCpuMs() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

double ProcCpuMs(int64_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
  FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  char buf[1024] = {0};
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');
  if (!p) return 0;
  unsigned long long ut = 0, st = 0;
  // fields after the command: state(3) ... utime(14) stime(15)
  std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st);
  return (ut + st) * 1000.0 / double(sysconf(_SC_CLK_TCK));
}

// The accessibility bus daemon (for CPU accounting only).
int64_t A11yBusPid() {
  for (int pid = 2; pid < 4194304; ++pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    FILE* f = std::fopen(path, "r");
    if (!f) continue;
    char buf[512] = {0};
    size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    for (size_t i = 0; i < n; ++i)
      if (!buf[i]) buf[i] = ' ';
    if (std::strstr(buf, "dbus-daemon") && std::strstr(buf, "accessibility.conf")) return pid;
    if (pid > 200000) break;
  }
  return 0;
}

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct Walked {
  ElementId id = 0;
  NodeAttributes attrs;
  int depth = 0;
  std::vector<size_t> children;  // indices into the walk
};

// Breadth-first, level by level: ReadChildren of a level, then ReadNodes of
// the next. No limits; a cycle guard on ids.
bool Walk(AtspiBackend& be, ElementId root, std::vector<Walked>& nodes, int& levels, Ms budget = Ms(10000)) {
  nodes.clear();
  levels = 0;
  auto deadline = Clock::now() + budget;
  std::unordered_set<ElementId> seen{root};
  std::vector<size_t> level{0};
  nodes.push_back(Walked{root, {}, 0, {}});
  {
    std::vector<NodeAttributes> attrs;
    std::vector<Error> errs;
    if (Error e = be.ReadNodes({root}, attrs, errs, deadline)) {
      std::printf("  walk: root read failed: %s\n", Describe(e).c_str());
      return false;
    }
    if (errs[0]) {
      std::printf("  walk: root read failed: %s\n", Describe(errs[0]).c_str());
      return false;
    }
    nodes[0].attrs = attrs[0];
  }
  while (!level.empty()) {
    ++levels;
    std::vector<ElementId> ids;
    for (size_t i : level) ids.push_back(nodes[i].id);
    std::vector<ChildList> kids;
    std::vector<Error> errs;
    if (Error e = be.ReadChildren(ids, kids, errs, deadline)) {
      std::printf("  walk: ReadChildren failed: %s\n", Describe(e).c_str());
      return false;
    }
    std::vector<size_t> next;
    std::vector<ElementId> nextIds;
    for (size_t k = 0; k < level.size(); ++k) {
      if (errs[k]) std::printf("  walk: children of %llu: %s\n", (unsigned long long)ids[k], Describe(errs[k]).c_str());
      for (ElementId c : kids[k].ids) {
        if (!seen.insert(c).second) continue;
        nodes[level[k]].children.push_back(nodes.size());
        next.push_back(nodes.size());
        nodes.push_back(Walked{c, {}, nodes[level[k]].depth + 1, {}});
        nextIds.push_back(c);
      }
    }
    if (!nextIds.empty()) {
      std::vector<NodeAttributes> attrs;
      std::vector<Error> rerrs;
      if (Error e = be.ReadNodes(nextIds, attrs, rerrs, deadline)) {
        std::printf("  walk: ReadNodes failed: %s\n", Describe(e).c_str());
        return false;
      }
      for (size_t k = 0; k < next.size(); ++k) {
        if (rerrs[k])
          std::printf("  walk: read %llu: %s\n", (unsigned long long)nextIds[k], Describe(rerrs[k]).c_str());
        nodes[next[k]].attrs = std::move(attrs[k]);
      }
    }
    level = std::move(next);
  }
  return true;
}

std::string ValueText(const Value& v) {
  if (std::holds_alternative<std::string>(v)) return "\"" + std::get<std::string>(v) + "\"";
  if (std::holds_alternative<double>(v)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", std::get<double>(v));
    return buf;
  }
  if (std::holds_alternative<bool>(v)) return std::get<bool>(v) ? "true" : "false";
  return "";
}

std::string Line(const NodeAttributes& a) {
  std::string s = a.role;
  if (a.title) s += " \"" + *a.title + "\"";
  if (a.description) s += " desc=\"" + *a.description + "\"";
  if (a.identifier) s += " id=" + *a.identifier;
  std::string v = ValueText(a.value);
  if (!v.empty()) s += " value=" + v;
  if (a.valueType) s += " (" + *a.valueType + (a.settable ? ", settable" : "") + ")";
  if (a.charCount) s += " chars=" + std::to_string(*a.charCount);
  if (a.placeholder) s += " placeholder=\"" + *a.placeholder + "\"";
  if (a.selectedText) s += " selected=\"" + *a.selectedText + "\"";
  if (a.url) s += " url=" + *a.url;
  if (a.orientation) s += " " + *a.orientation;
  const States& st = a.states;
  std::string flags;
  auto flag = [&](const char* n, const std::optional<bool>& b) {
    if (b) flags += std::string(flags.empty() ? "" : ",") + (*b ? "" : "!") + n;
  };
  flag("enabled", st.enabled);
  flag("focused", st.focused);
  flag("focusable", st.focusable);
  flag("selected", st.selected);
  flag("selectable", st.selectable);
  flag("expanded", st.expanded);
  flag("editable", st.editable);
  flag("secure", st.secure);
  flag("visible", st.visible);
  if (st.checked) flags += std::string(flags.empty() ? "" : ",") + "checked=" + std::to_string(*st.checked);
  if (!flags.empty()) s += " [" + flags + "]";
  if (!a.actions.empty()) {
    s += " actions=";
    for (size_t i = 0; i < a.actions.size(); ++i) s += (i ? "|" : "") + a.actions[i];
  }
  if (a.frame) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " @%g,%g %gx%g", a.frame->x, a.frame->y, a.frame->w, a.frame->h);
    s += buf;
  }
  return s;
}

void Dump(const std::vector<Walked>& nodes, size_t i, int indent) {
  std::printf("%*s%s\n", indent * 2, "", Line(nodes[i].attrs).c_str());
  for (size_t c : nodes[i].children) Dump(nodes, c, indent + 1);
}

const Walked* Find(const std::vector<Walked>& nodes, const std::string& role, const std::string& title) {
  for (const Walked& n : nodes)
    if (n.attrs.role == role && n.attrs.title && *n.attrs.title == title) return &n;
  return nullptr;
}

int64_t Utf8Length(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

bool SameAttrs(const NodeAttributes& a, const NodeAttributes& b, std::string& why) {
  if (a.role != b.role)
    why = "role " + a.role + " vs " + b.role;
  else if (a.title != b.title)
    why = "title";
  else if (a.description != b.description)
    why = "description";
  else if (a.states.checked != b.states.checked)
    why = "checked";
  else if (a.states.focused != b.states.focused)
    why = "focused";
  else if (a.states.visible != b.states.visible)
    why = "visible";
  else if (a.states.enabled != b.states.enabled)
    why = "enabled";
  else if (a.actions != b.actions)
    why = "actions";
  else if (a.value != b.value)
    why = "value";
  else if (a.settable != b.settable)
    why = "settable";
  else if (a.charCount != b.charCount)
    why = "charCount";
  else if (a.identifier != b.identifier)
    why = "identifier";
  else if (a.placeholder != b.placeholder)
    why = "placeholder";
  else if (a.frame.has_value() != b.frame.has_value())
    why = "frame presence";
  else
    return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  bool dump = false, quick = false, noBulk = false, keepBus = false;
  int callTimeoutMs = 800;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--keep-bus")) keepBus = true;
    if (!std::strcmp(argv[i], "--call-timeout") && i + 1 < argc) callTimeoutMs = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--no-bulk")) noBulk = true;
    if (!std::strcmp(argv[i], "--dump")) dump = true;
    if (!std::strcmp(argv[i], "--quick")) quick = true;
  }
  const int runs = quick ? 1 : 5;

  // --- No bus: a typed error, not an abort.
  {
    std::string saved = std::getenv("DBUS_SESSION_BUS_ADDRESS") ? std::getenv("DBUS_SESSION_BUS_ADDRESS") : "";
    std::string savedAt = std::getenv("AT_SPI_BUS_ADDRESS") ? std::getenv("AT_SPI_BUS_ADDRESS") : "";
    unsetenv("AT_SPI_BUS_ADDRESS");
    setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/axsnap-no-bus", 1);
    {
      AtspiBackend bogus;
      auto t0 = Clock::now();
      Error e = bogus.Connect();
      Check(e.code == ErrorCode::kNoAccessibilityBus,
            "bogus DBUS_SESSION_BUS_ADDRESS -> " + Describe(e) + " (" + std::to_string(int(MsSince(t0))) + " ms)");
      std::vector<AppInfo> apps;
      Error le = bogus.ListApps(apps, Clock::now() + Ms(500));
      Check(le.code == ErrorCode::kNoAccessibilityBus, "ListApps without a bus -> " + Describe(le));
    }
    unsetenv("DBUS_SESSION_BUS_ADDRESS");
    {
      AtspiBackend none;
      Error e = none.Connect();
      Check(e.code == ErrorCode::kNoAccessibilityBus, "unset DBUS_SESSION_BUS_ADDRESS -> " + Describe(e));
    }
    if (!saved.empty()) setenv("DBUS_SESSION_BUS_ADDRESS", saved.c_str(), 1);
    if (!savedAt.empty()) setenv("AT_SPI_BUS_ADDRESS", savedAt.c_str(), 1);
  }

  AtspiBackend be;
  be.SetCallTimeout(Ms(callTimeoutMs));
  {
    auto t0 = Clock::now();
    Error e = be.Connect();
    Check(!e, "Connect: " + (e ? Describe(e) : std::string("ok")) + " (" + std::to_string(int(MsSince(t0))) + " ms)");
    if (e) return 1;
  }

  // --- Apps. The app registers shortly after it starts: poll briefly.
  AppInfo factory;
  bool haveFactory = false;
  for (int attempt = 0; attempt < 50 && !haveFactory; ++attempt) {
    std::vector<AppInfo> apps;
    auto t0 = Clock::now();
    Error e = be.ListApps(apps, Clock::now() + Ms(2000));
    if (e) {
      Check(false, "ListApps: " + Describe(e));
      return 1;
    }
    for (const AppInfo& a : apps) {
      if (a.name == "gtk3-widget-factory") {
        std::vector<WindowInfo> wins;
        if (!be.Windows(a, wins, Clock::now() + Ms(2000)) && !wins.empty()) {
          factory = a;
          haveFactory = true;
          std::printf("ListApps: %zu apps in %.2f ms\n", apps.size(), MsSince(t0));
        }
      }
    }
    if (!haveFactory && (attempt % 10 == 9)) {
      std::printf("  still waiting for gtk3-widget-factory; apps:");
      for (const AppInfo& a : apps) std::printf(" \"%s\"(pid %lld)", a.name.c_str(), (long long)a.pid);
      std::printf("\n");
    }
    if (!haveFactory) std::this_thread::sleep_for(Ms(100));
  }
  Check(haveFactory, "ListApps contains gtk3-widget-factory");
  if (!haveFactory) return 1;
  Check(factory.pid > 0, "gtk3-widget-factory pid " + std::to_string(factory.pid));
  if (const char* expected = std::getenv("AXSNAP_TEST_APP_PID"))
    Check(factory.pid == std::atoll(expected), "pid matches the launched process (" + std::string(expected) + ")");
  Check(factory.bundleId == factory.name, "bundleId = name");

  // --- Windows.
  std::vector<WindowInfo> wins;
  {
    auto t0 = Clock::now();
    Error e = be.Windows(factory, wins, Clock::now() + Ms(2000));
    Check(!e && !wins.empty(),
          "Windows: " + std::to_string(wins.size()) + " in " + std::to_string(MsSince(t0)) + " ms");
    if (wins.empty()) return 1;
  }
  const WindowInfo& win = wins[0];
  std::printf("window: role=%s title=\"%s\" frame=%g,%g %gx%g active=%d minimized=%d visible=%d\n", win.role.c_str(),
              win.title.c_str(), win.frame.x, win.frame.y, win.frame.w, win.frame.h, win.active, win.minimized,
              win.visible);
  // GTK3 frames often have an empty accessible name (gtk3-widget-factory sets
  // no window title); the X layer has WM_NAME.
  Check(win.role == "frame", "window is a frame (title \"" + win.title + "\")");
  Check(win.hasFrame && win.frame.w > 100 && win.frame.h > 100, "window has a frame");
  Check(win.visible, "window is visible");

  {
    AppInfo focused;
    bool found = false;
    Error e = be.FocusedApp(focused, found, Clock::now() + Ms(2000));
    std::printf("FocusedApp: %s found=%d name=%s\n", e ? Describe(e).c_str() : "ok", found, focused.name.c_str());
    Check(!e, "FocusedApp does not fail");
    if (found) Check(focused.name == "gtk3-widget-factory", "focused app is gtk3-widget-factory");
  }

  // --- Walks: live, and with the bulk cache, alternating (fair under load).
  std::vector<Walked> nodes, bulkNodes;
  int levels = 0;
  std::vector<double> liveTimes, bulkTimes;
  const int64_t busPid = A11yBusPid();
  for (int r = 0; r < runs; ++r) {
    for (int bulk = 0; bulk < (noBulk ? 1 : 2); ++bulk) {
      be.SetUseBulkCache(bulk == 1);
      be.InvalidateBulkCache();
      std::vector<Walked>& into = bulk ? bulkNodes : nodes;
      auto t0 = Clock::now();
      uint64_t calls0 = be.CallCount();
      double cpu0 = SelfCpuMs(), app0 = ProcCpuMs(factory.pid), bus0 = ProcCpuMs(busPid);
      bool ok = Walk(be, win.element, into, levels);
      double ms = MsSince(t0);
      if (!ok) Check(false, std::string(bulk ? "bulk" : "live") + " walk " + std::to_string(r));
      (bulk ? bulkTimes : liveTimes).push_back(ms);
      std::printf(
          "%s walk %d: %zu nodes, %d levels, %.1f ms, %llu calls, cpu: self %.0f ms, app %.0f ms, bus %.0f ms\n",
          bulk ? "bulk" : "live", r, into.size(), levels, ms, (unsigned long long)(be.CallCount() - calls0),
          SelfCpuMs() - cpu0, ProcCpuMs(factory.pid) - app0, ProcCpuMs(busPid) - bus0);
    }
  }
  const size_t liveCount = nodes.size();
  const std::vector<Walked>& liveNodes = nodes;
  std::printf("LIVE: %zu nodes, median walk %.1f ms over %d runs\n", liveCount, Median(liveTimes), runs);
  if (!noBulk)
    std::printf("BULK: %zu nodes, median walk %.1f ms over %d runs\n", bulkNodes.size(), Median(bulkTimes), runs);
  Check(liveCount > 150, "the walk reaches the whole window (" + std::to_string(liveCount) + " nodes)");
  {
    size_t errsSeen = 0;
    for (const Walked& n : nodes)
      if (n.attrs.role.empty()) ++errsSeen;
    Check(errsSeen == 0, "every node was read (" + std::to_string(errsSeen) + " without a role)");
  }
  if (dump) Dump(nodes, 0, 0);

  be.SetUseBulkCache(false);
  {
    // The walks must agree (children are live in both).
    size_t differ = 0;
    bool sameShape = bulkNodes.size() == liveNodes.size();
    for (size_t i = 0; sameShape && i < liveNodes.size(); ++i) {
      std::string why;
      if (liveNodes[i].id != bulkNodes[i].id) {
        sameShape = false;
        break;
      }
      if (!SameAttrs(liveNodes[i].attrs, bulkNodes[i].attrs, why)) {
        if (differ < 5)
          std::printf("  differs (%s): live %s | bulk %s\n", why.c_str(), Line(liveNodes[i].attrs).c_str(),
                      Line(bulkNodes[i].attrs).c_str());
        ++differ;
      }
    }
    if (!noBulk) Check(sameShape, "bulk walk has the same nodes as the live walk");
    if (!noBulk) Check(differ == 0, "bulk walk reads the same attributes (" + std::to_string(differ) + " differ)");
  }

  // --- Content checks.
  for (const char* t : {"Minimize", "Maximize", "Close"}) {
    const Walked* n = Find(nodes, "push button", t);
    Check(n && n->attrs.frame && !n->attrs.actions.empty(), std::string("header bar push button ") + t);
  }
  const Walked* page[3] = {Find(nodes, "radio button", "Page 1"), Find(nodes, "radio button", "Page 2"),
                           Find(nodes, "radio button", "Page 3")};
  Check(page[0] && page[1] && page[2], "radio buttons Page 1..3");
  if (page[0] && page[1]) {
    Check(page[0]->attrs.states.checked == 1, "Page 1 checked");
    Check(page[1]->attrs.states.checked == 0, "Page 2 not checked");
  }
  const Walked* entry = nullptr;
  size_t entriesWithText = 0;
  const Walked* password = nullptr;
  for (const Walked& n : nodes) {
    if (n.attrs.role == "text" && n.attrs.settable && std::holds_alternative<std::string>(n.attrs.value)) {
      if (!std::get<std::string>(n.attrs.value).empty()) {
        ++entriesWithText;
        if (!entry) entry = &n;
      }
    }
    if (n.attrs.role == "password text") password = &n;
  }
  Check(entriesWithText > 0 && entry, "entries with text (" + std::to_string(entriesWithText) + ")");
  if (entry) std::printf("  entry: %s\n", Line(entry->attrs).c_str());
  if (password) {
    std::printf("  password: %s\n", Line(password->attrs).c_str());
    Check(std::holds_alternative<std::monostate>(password->attrs.value) && password->attrs.states.secure == true &&
              password->attrs.charCount.has_value(),
          "password text: no value, secure, charCount");
  }
  {
    size_t hidden = 0, withFrame = 0;
    for (const Walked& n : nodes) {
      if (n.attrs.frame) {
        ++withFrame;
        if (n.attrs.frame->x == kHiddenCoordinate) ++hidden;
      }
    }
    std::printf("  %zu nodes with frames, %zu hidden (x = -2147483648)\n", withFrame, hidden);
  }

  // --- Actions.
  if (page[1]) {
    ElementId p2 = page[1]->id;
    Error e = be.DoAction(p2, "Click", Clock::now() + Ms(2000));
    Check(!e, "DoAction(\"Click\") on Page 2: " + (e ? Describe(e) : std::string("ok")));
    bool checked = false;
    for (int i = 0; i < 20 && !checked; ++i) {
      std::vector<NodeAttributes> attrs;
      std::vector<Error> errs;
      be.ReadNodes({p2, page[0]->id}, attrs, errs, Clock::now() + Ms(2000));
      checked = !errs[0] && attrs[0].states.checked == 1 && attrs[1].states.checked == 0;
      if (!checked) std::this_thread::sleep_for(Ms(20));
    }
    Check(checked, "after the click: Page 2 checked, Page 1 not");
    Error bad = be.DoAction(p2, "no-such-action", Clock::now() + Ms(2000));
    Check(bad.code == ErrorCode::kActionNotSupported, "unknown action -> " + Describe(bad));
    be.DoAction(page[0]->id, "click", Clock::now() + Ms(2000));
  }
  if (entry) {
    const std::string text = "axsnap was here \xc3\xa9";
    Error e = be.SetText(entry->id, text, Clock::now() + Ms(2000));
    Check(!e, "SetText on an entry: " + (e ? Describe(e) : std::string("ok")));
    std::vector<NodeAttributes> attrs;
    std::vector<Error> errs;
    be.ReadNodes({entry->id}, attrs, errs, Clock::now() + Ms(2000));
    Check(!errs[0] && std::holds_alternative<std::string>(attrs[0].value) &&
              std::get<std::string>(attrs[0].value) == text,
          "re-read entry value: " + ValueText(attrs[0].value));
    Check(attrs[0].charCount == Utf8Length(text), "charCount counts characters");
  }
  if (page[0]) {
    Error e = be.SetText(page[0]->id, "x", Clock::now() + Ms(2000));
    Check(e.code == ErrorCode::kNotSettable, "SetText on a radio button -> " + Describe(e));
    Error n = be.SetNumber(page[0]->id, 1, Clock::now() + Ms(2000));
    Check(n.code == ErrorCode::kNotSettable, "SetNumber on a radio button -> " + Describe(n));
  }
  {
    const Walked* slider = nullptr;
    for (const Walked& n : nodes)
      if ((n.attrs.role == "slider" || n.attrs.role == "scroll bar") && n.attrs.valueType == std::string("number") &&
          n.attrs.states.enabled == true) {
        slider = &n;
        break;
      }
    if (slider) {
      std::printf("  slider: %s\n", Line(slider->attrs).c_str());
      double target = std::holds_alternative<double>(slider->attrs.value) ? std::get<double>(slider->attrs.value) : 0;
      target = target > 10 ? target - 5 : target + 5;
      Error e = be.SetNumber(slider->id, target, Clock::now() + Ms(2000));
      std::vector<NodeAttributes> attrs;
      std::vector<Error> errs;
      be.ReadNodes({slider->id}, attrs, errs, Clock::now() + Ms(2000));
      Check(!e && std::holds_alternative<double>(attrs[0].value), "SetNumber on a " + slider->attrs.role + ": " +
                                                                      (e ? Describe(e) : "ok") + ", now " +
                                                                      ValueText(attrs[0].value));
    }
  }
  {
    const Walked* focusable = nullptr;
    for (const Walked& n : nodes)
      if (n.attrs.role == "push button" && n.attrs.states.focusable == true && n.attrs.states.visible == true &&
          n.attrs.title && *n.attrs.title != "Close" && *n.attrs.title != "Minimize" && *n.attrs.title != "Maximize") {
        focusable = &n;
        break;
      }
    if (focusable) {
      Error e = be.Focus(focusable->id, Clock::now() + Ms(2000));
      std::vector<NodeAttributes> attrs;
      std::vector<Error> errs;
      std::this_thread::sleep_for(Ms(50));
      be.ReadNodes({focusable->id}, attrs, errs, Clock::now() + Ms(2000));
      std::printf("  Focus(%s): %s; focused=%d\n", Line(focusable->attrs).c_str(), e ? Describe(e).c_str() : "ok",
                  attrs[0].states.focused.value_or(false));
      Check(!e, "Focus on a push button");
    }
  }

  // --- Released ids.
  {
    size_t before = be.HandleCount();
    ElementId gone = nodes.back().id;
    be.Release({gone});
    std::vector<NodeAttributes> attrs;
    std::vector<Error> errs;
    be.ReadNodes({gone}, attrs, errs, Clock::now() + Ms(1000));
    Check(be.HandleCount() == before - 1 && errs[0].code == ErrorCode::kInvalidArgument,
          "Release forgets the id: " + Describe(errs[0]));
    std::vector<ChildList> kids;
    be.ReadChildren({nodes[0].id}, kids, errs, Clock::now() + Ms(1000));
    Check(!kids[0].ids.empty() && kids[0].ids[0] == nodes[nodes[0].children[0]].id, "same element, same id");
  }

  // --- A deadline already passed: TIMEOUT, per element and for the call.
  {
    std::vector<NodeAttributes> attrs;
    std::vector<Error> errs;
    Error e = be.ReadNodes({nodes[0].id, nodes[1].id}, attrs, errs, Clock::now());
    Check(e.code == ErrorCode::kTimeout && errs[0].code == ErrorCode::kTimeout && errs[1].code == ErrorCode::kTimeout,
          "past deadline: ReadNodes -> " + Describe(e));
    std::vector<ChildList> kids;
    Error ce = be.ReadChildren({nodes[0].id}, kids, errs, Clock::now());
    Check(ce.code == ErrorCode::kTimeout, "past deadline: ReadChildren -> " + Describe(ce));
  }

  // --- A stopped app: the batch fails fast with APP_UNRESPONSIVE.
  {
    std::vector<ElementId> batch;
    for (size_t i = 0; i < nodes.size() && batch.size() < 50; ++i) batch.push_back(nodes[i].id);
    be.SetCallTimeout(Ms(800));
    kill(pid_t(factory.pid), SIGSTOP);
    auto t0 = Clock::now();
    std::vector<NodeAttributes> attrs;
    std::vector<Error> errs;
    Error e = be.ReadNodes(batch, attrs, errs, Clock::now() + Ms(1500));
    double ms = MsSince(t0);
    size_t unresponsive = 0;
    for (const Error& x : errs)
      if (x.code == ErrorCode::kAppUnresponsive) ++unresponsive;
    std::printf("stopped app: ReadNodes(%zu) returned %s after %.0f ms, %zu APP_UNRESPONSIVE\n", batch.size(),
                e ? Describe(e).c_str() : "ok", ms, unresponsive);
    Check(ms < 1600, "stopped app: returns within 1.6 s");
    Check(unresponsive == batch.size(), "stopped app: every element APP_UNRESPONSIVE");
    Check(!e, "stopped app: per-element errors, the call itself does not fail");

    t0 = Clock::now();
    std::vector<ChildList> kids;
    Error ce = be.ReadChildren(batch, kids, errs, Clock::now() + Ms(1500));
    ms = MsSince(t0);
    size_t childUnresponsive = 0;
    for (const Error& x : errs) childUnresponsive += x.code == ErrorCode::kAppUnresponsive;
    Check(ms < 1600 && !ce && childUnresponsive == batch.size(),
          "stopped app: ReadChildren fails fast (" + std::to_string(int(ms)) + " ms, " +
              std::to_string(childUnresponsive) + " APP_UNRESPONSIVE)");

    t0 = Clock::now();
    std::vector<AppInfo> apps;
    Error le = be.ListApps(apps, Clock::now() + Ms(1500));
    ms = MsSince(t0);
    bool listed = false;
    for (const AppInfo& a : apps) listed |= a.pid == factory.pid;
    Check(!le && !listed && ms < 1600, "stopped app: ListApps skips it (" + std::to_string(int(ms)) + " ms, " +
                                           std::to_string(apps.size()) + " apps)");

    t0 = Clock::now();
    Error ae = be.DoAction(batch[0], "click", Clock::now() + Ms(1500));
    ms = MsSince(t0);
    Check(ae.code == ErrorCode::kAppUnresponsive && ms < 1600,
          "stopped app: DoAction -> " + Describe(ae) + " (" + std::to_string(int(ms)) + " ms)");

    kill(pid_t(factory.pid), SIGCONT);
    be.SetCallTimeout(Ms(callTimeoutMs));
    std::this_thread::sleep_for(Ms(300));
    e = be.ReadNodes(batch, attrs, errs, Clock::now() + Ms(3000));
    size_t ok = 0;
    for (const Error& x : errs) ok += !x;
    Check(!e && ok == batch.size(), "after SIGCONT the app reads again (" + std::to_string(ok) + " ok)");
  }

  // --- The accessibility bus goes away: typed errors, no abort.
  if (busPid > 0 && !keepBus) {
    kill(pid_t(busPid), SIGKILL);
    std::this_thread::sleep_for(Ms(200));
    std::vector<NodeAttributes> attrs;
    std::vector<Error> errs;
    Error e = be.ReadNodes({nodes[0].id}, attrs, errs, Clock::now() + Ms(1000));
    Check(e.code == ErrorCode::kNoAccessibilityBus, "bus killed: ReadNodes -> " + Describe(e));
    Error a = be.DoAction(nodes[0].id, "click", Clock::now() + Ms(1000));
    Check(a.code == ErrorCode::kNoAccessibilityBus, "bus killed: DoAction -> " + Describe(a));
    Check(!be.Connected(), "bus killed: not connected");
  }

  std::printf("%s: %d failure(s)\n", g_failures ? "FAILED" : "ALL PASSED", g_failures);
  return g_failures ? 1 : 0;
}
