#include "linux_backend.h"

#include "gio_launch.h"
#include "ocr_tesseract.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace axsnap {
namespace {

// What the X layer needs to find the observed window again (and refuse any other).
X11Display::Target TargetOf(const WindowInfo& window) {
  X11Display::Target t;
  t.pid = window.pid;
  if (window.hasFrame) t.frame = window.frame;
  // A menu bar's open menu is listed under its item's name; its X popup has no title.
  t.title = window.inParent ? std::string() : window.title;
  t.element = window.element;
  return t;
}

constexpr const char* kX11Bus = "x11";

std::string HexId(unsigned long xid) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%08lx", xid);
  return buf;
}

// What an X11-only app is called: its WM_CLASS class ("XTerm"), else the instance, else the program.
std::string AppNameOf(const X11Client& c) {
  if (!c.klass.empty()) return c.klass;
  if (!c.instance.empty()) return c.instance;
  return c.program;
}

Error NoTree(const char* what) {
  return {ErrorCode::kActionNotSupported, std::string("the app has no accessibility tree: ") + what +
                                              " is not possible; act on its pixels (clickAt, typeText, keys)"};
}

// X11 listings beside the registry's are answered quickly or not at all: a silent X server costs listApps (and
// every snapshot's app lookup) this much, not its deadline. A local server lists its clients in about 1 ms.
Clock::time_point X11Until(Clock::time_point deadline) {
  return std::min(deadline, Clock::now() + std::chrono::milliseconds(250));
}

}  // namespace

bool LinuxBackend::XidOf(ElementId id, unsigned long& xid) const {
  std::string bus, path;
  if (!Describe(id, bus, path) || bus != kX11Bus || path.size() < 2) return false;
  char* end = nullptr;
  xid = std::strtoul(path.c_str() + 1, &end, 16);
  return end != nullptr && *end == '\0' && xid != 0;
}

bool LinuxBackend::IsX11App(const AppInfo& app) const {
  if (app.noTree) return true;
  std::string bus, path;
  return Describe(app.element, bus, path) && bus == kX11Bus;
}

WindowInfo LinuxBackend::WindowOf(const X11Client& c) {
  WindowInfo w;
  w.element = InternForeign(kX11Bus, "/" + HexId(c.xid));
  w.pid = c.pid;
  w.title = c.title;
  w.frame = c.frame;
  w.hasFrame = c.frame.w > 0 && c.frame.h > 0;
  w.visible = c.viewable;
  w.role = "frame";
  w.kind = "window";
  w.id = "x11:" + HexId(c.xid);
  return w;
}

void LinuxBackend::BindX11(const WindowInfo& window) {
  unsigned long xid = 0;
  if (window.pid > 0 && XidOf(window.element, xid)) x11_.Bind(window.pid, window.element, xid);
}

Error LinuxBackend::ConnectWithin(Clock::time_point deadline) {
  atspiMissing_ = false;
  Error err = AtspiBackend::ConnectWithin(deadline);
  if (err.code != ErrorCode::kNoAccessibilityBus) return err;
  // No accessibility service, but X clients can still be seen and used by their pixels.
  if (x11_.Open(X11Until(deadline))) return err;
  atspiMissing_ = true;
  return {};
}

Error LinuxBackend::ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) {
  atspiError_ = {};
  Error err = AtspiBackend::ListApps(out, deadline);
  if (err && err.code != ErrorCode::kNoAccessibilityBus) return err;
  std::vector<X11Client> clients;
  Error xerr = x11_.ListClients(clients, X11Until(deadline));
  if (err) {
    if (xerr) return err;  // neither service: the accessibility error says what to start
    out.clear();
    atspiError_ = err;
  } else if (xerr) {
    return {};  // the registry's apps without the X11 ones
  }
  std::set<int64_t> treePids;
  for (const AppInfo& a : out) treePids.insert(a.pid);
  std::map<int64_t, size_t> byPid;
  noTreePids_.clear();
  for (const X11Client& c : clients) {
    if (c.pid <= 0 || treePids.count(c.pid) || byPid.count(c.pid)) continue;
    AppInfo app;
    app.name = AppNameOf(c);
    app.bundleId = c.program.empty() ? app.name : c.program;
    app.pid = c.pid;
    app.element = InternForeign(kX11Bus, "/pid/" + std::to_string(c.pid));
    app.noTree = true;
    byPid[c.pid] = out.size();
    noTreePids_.insert(c.pid);
    out.push_back(std::move(app));
  }
  return {};
}

Error LinuxBackend::FocusedApp(AppInfo& out, bool& found, Clock::time_point deadline) {
  found = false;
  Error err = AtspiBackend::FocusedApp(out, found, deadline);
  // No registry (or no bus): no AT-SPI app has focus, and the X11 apps can still be read.
  if (err.code == ErrorCode::kNoAccessibilityBus && (atspiMissing_ || x11_.IsOpen())) return {};
  return err;
}

Error LinuxBackend::X11Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  out.clear();
  std::vector<X11Client> clients;
  if (Error err = x11_.ListClients(clients, deadline)) return err;
  for (const X11Client& c : clients)
    if (c.pid == app.pid) out.push_back(WindowOf(c));
  if (out.empty())
    return {ErrorCode::kAppNotFound, app.name + " (pid " + std::to_string(app.pid) + ") has no X11 window any more"};
  return {};
}

Error LinuxBackend::ListedWindows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  if (IsX11App(app)) return X11Windows(app, out, deadline);
  return AtspiBackend::ListedWindows(app, out, deadline);
}

int LinuxBackend::WindowByEarlierId(const AppInfo& app, const std::vector<WindowInfo>& windows, const std::string& id,
                                    Clock::time_point deadline) {
  // A GTK app maps its first window a moment before it registers, and was listed by the xid meanwhile.
  const std::string prefix = "x11:";
  if (IsX11App(app) || id.compare(0, prefix.size(), prefix) != 0) return -1;
  char* end = nullptr;
  const unsigned long want = std::strtoul(id.c_str() + prefix.size(), &end, 16);
  if (want == 0 || end == nullptr || *end != '\0') return -1;
  for (size_t i = 0; i < windows.size(); i++) {
    if (!windows[i].hasFrame || Clock::now() >= deadline) continue;
    unsigned long xid = 0;
    if (!x11_.FindWindow(app.pid, windows[i].frame, xid, X11Until(deadline)) && xid == want) return static_cast<int>(i);
  }
  return -1;
}

Error LinuxBackend::ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out,
                              std::vector<Error>& errs, Clock::time_point deadline) {
  std::vector<size_t> x11, other;
  std::vector<unsigned long> xids(ids.size(), 0);
  for (size_t i = 0; i < ids.size(); i++) (XidOf(ids[i], xids[i]) ? x11 : other).push_back(i);
  if (x11.empty()) return AtspiBackend::ReadNodes(ids, out, errs, deadline);
  out.assign(ids.size(), NodeAttributes{});
  errs.assign(ids.size(), Error{});
  if (!other.empty()) {
    std::vector<ElementId> sub;
    for (size_t i : other) sub.push_back(ids[i]);
    std::vector<NodeAttributes> subOut;
    std::vector<Error> subErrs;
    Error err = AtspiBackend::ReadNodes(sub, subOut, subErrs, deadline);
    for (size_t k = 0; k < other.size(); k++) {
      if (err) errs[other[k]] = err;
      if (k < subOut.size()) out[other[k]] = std::move(subOut[k]);
      if (k < subErrs.size() && subErrs[k]) errs[other[k]] = subErrs[k];
    }
  }
  std::vector<X11Client> clients;
  Error xerr = x11_.ListClients(clients, deadline);
  for (size_t i : x11) {
    if (xerr) {
      errs[i] = xerr;
      continue;
    }
    auto it = std::find_if(clients.begin(), clients.end(), [&](const X11Client& c) { return c.xid == xids[i]; });
    if (it == clients.end()) {
      errs[i] = {ErrorCode::kElementGone, "the X window " + HexId(xids[i]) + " is gone"};
      continue;
    }
    NodeAttributes& a = out[i];
    a.role = "frame";
    a.title = it->title;
    a.frame = it->frame;
    a.states.visible = it->viewable;
    a.states.enabled = true;
  }
  return {};
}

Error LinuxBackend::ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out,
                                 std::vector<Error>& errs, Clock::time_point deadline) {
  std::vector<size_t> other;
  unsigned long xid = 0;
  for (size_t i = 0; i < ids.size(); i++)
    if (!XidOf(ids[i], xid)) other.push_back(i);
  if (other.size() == ids.size()) return AtspiBackend::ReadChildren(ids, out, errs, deadline);
  // An X11-only window has no children: what it shows is only in its pixels.
  out.assign(ids.size(), ChildList{});
  errs.assign(ids.size(), Error{});
  if (other.empty()) return {};
  std::vector<ElementId> sub;
  for (size_t i : other) sub.push_back(ids[i]);
  std::vector<ChildList> subOut;
  std::vector<Error> subErrs;
  Error err = AtspiBackend::ReadChildren(sub, subOut, subErrs, deadline);
  for (size_t k = 0; k < other.size(); k++) {
    if (err) errs[other[k]] = err;
    if (k < subOut.size()) out[other[k]] = std::move(subOut[k]);
    if (k < subErrs.size() && subErrs[k]) errs[other[k]] = subErrs[k];
  }
  return {};
}

Error LinuxBackend::ReadFrames(const std::vector<ElementId>& ids, std::vector<std::optional<Rect>>& out,
                               Clock::time_point deadline) {
  unsigned long xid = 0;
  bool any = false;
  for (ElementId id : ids) any = any || XidOf(id, xid);
  if (!any) return AtspiBackend::ReadFrames(ids, out, deadline);
  // An X window's frame comes with its node read (ReadNodes below): the default does that.
  return Backend::ReadFrames(ids, out, deadline);
}

Error LinuxBackend::DoAction(ElementId id, const std::string& name, Clock::time_point deadline) {
  unsigned long xid = 0;
  if (XidOf(id, xid)) return NoTree("an accessibility action");
  return AtspiBackend::DoAction(id, name, deadline);
}

Error LinuxBackend::Toolkit(ElementId id, std::string& name, std::string& version, Clock::time_point deadline) {
  unsigned long xid = 0;
  if (XidOf(id, xid)) return NoTree("naming its toolkit");
  return AtspiBackend::Toolkit(id, name, version, deadline);
}

Error LinuxBackend::SetText(ElementId id, const std::string& text, Clock::time_point deadline) {
  unsigned long xid = 0;
  if (XidOf(id, xid)) return NoTree("setting a value");
  return AtspiBackend::SetText(id, text, deadline);
}

Error LinuxBackend::SetNumber(ElementId id, double value, Clock::time_point deadline) {
  unsigned long xid = 0;
  if (XidOf(id, xid)) return NoTree("setting a value");
  return AtspiBackend::SetNumber(id, value, deadline);
}

Error LinuxBackend::Focus(ElementId id, Clock::time_point deadline) {
  unsigned long xid = 0;
  if (XidOf(id, xid)) return NoTree("focusing an element");
  return AtspiBackend::Focus(id, deadline);
}

Error LinuxBackend::Select(ElementId id, Clock::time_point deadline) {
  unsigned long xid = 0;
  if (XidOf(id, xid)) return NoTree("selecting an element");
  return AtspiBackend::Select(id, deadline);
}

Error LinuxBackend::InsertText(ElementId id, const std::string& text, Clock::time_point deadline) {
  unsigned long xid = 0;
  if (XidOf(id, xid)) return NoTree("inserting text into an element");
  return AtspiBackend::InsertText(id, text, deadline);
}

Error LinuxBackend::FocusedElement(int64_t pid, ElementId& out, bool& found, Clock::time_point deadline) {
  if (!noTreePids_.count(pid)) return AtspiBackend::FocusedElement(pid, out, found, deadline);
  found = false;
  AppInfo app;
  app.pid = pid;
  app.noTree = true;
  std::vector<WindowInfo> windows;
  if (Error err = X11Windows(app, windows, deadline)) return err;
  // Stacking order is bottom to top: the topmost viewable one is where a keyboard user would be.
  for (auto it = windows.rbegin(); it != windows.rend(); ++it)
    if (it->visible) {
      out = it->element;
      found = true;
      break;
    }
  return {};
}

Error LinuxBackend::ElementAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                                   std::vector<ElementId>& chain, Clock::time_point deadline) {
  unsigned long xid = 0;
  if (!XidOf(window.element, xid)) return AtspiBackend::ElementAtPoint(window, x, y, stopAt, chain, deadline);
  chain.clear();
  std::vector<NodeAttributes> attrs;
  std::vector<Error> errs;
  if (Error err = ReadNodes({window.element}, attrs, errs, deadline)) return err;
  if (errs[0]) return errs[0];
  const Rect& f = *attrs[0].frame;
  if (x >= f.x && x < f.x + f.w && y >= f.y && y < f.y + f.h) chain.push_back(window.element);
  return {};
}

void LinuxBackend::PrepareWalk(const AppInfo& app, const WindowInfo& window, Clock::time_point deadline,
                               std::vector<std::string>& notes, bool& contentPending) {
  unsigned long xid = 0;
  if (!XidOf(window.element, xid)) return AtspiBackend::PrepareWalk(app, window, deadline, notes, contentPending);
  notes.push_back(app.name + " has no accessibility tree: only its window (X11 " + HexId(xid) +
                  ") and what its pixels show");
}

Error LinuxBackend::Watch(const AppInfo& app, Clock::time_point deadline) {
  if (IsX11App(app)) return {ErrorCode::kActionNotSupported, "an app with no accessibility tree reports no changes"};
  return AtspiBackend::Watch(app, deadline);
}

Error LinuxBackend::WaitEvents(int64_t pid, uint64_t sinceStamp, Clock::time_point until, AppEventState& out) {
  if (noTreePids_.count(pid))
    return {ErrorCode::kActionNotSupported, "an app with no accessibility tree reports no changes"};
  return AtspiBackend::WaitEvents(pid, sinceStamp, until, out);
}

void LinuxBackend::Unwatch(int64_t pid) {
  if (!noTreePids_.count(pid)) AtspiBackend::Unwatch(pid);
}

Error LinuxBackend::Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height,
                            Rect& captured, Clock::time_point deadline) {
  if (!window.hasFrame || window.frame.w <= 0 || window.frame.h <= 0)
    return {ErrorCode::kCaptureFailed, "the window has no on-screen frame"};
  BindX11(window);
  return x11_.CaptureWindow(TargetOf(window), deadline, rgba, width, height, captured);
}

// Synthetic input changes the UI behind the bulk cache's back: drop it after sending.
Error LinuxBackend::Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) {
  BindX11(window);
  Error err = x11_.Pointer(TargetOf(window), ev, deadline);
  InvalidateBulkCache();
  return err;
}

Error LinuxBackend::Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) {
  BindX11(window);
  Error err = x11_.SendKeys(TargetOf(window), combo, deadline);
  InvalidateBulkCache();
  return err;
}

Error LinuxBackend::TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline,
                             size_t& typed) {
  BindX11(window);
  Error err = x11_.TypeText(TargetOf(window), text, deadline, typed);
  InvalidateBulkCache();
  return err;
}

Error LinuxBackend::Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  if (IsX11App(app)) return X11Windows(app, out, deadline);
  if (Error err = AtspiBackend::Windows(app, out, deadline)) return err;
  for (WindowInfo& w : out) {
    // A toolkit that leaves the frame's accessible name empty (gtk3-widget-factory) still titles its X window.
    if (!w.title.empty() || w.inParent || !w.hasFrame || w.frame.w <= 0 || w.frame.h <= 0) continue;
    if (w.role != "frame" && w.role != "dialog" && w.role != "window") continue;
    if (!w.kind.empty() && w.kind != "window" && w.kind != "dialog") continue;
    const auto until = std::min(deadline, Clock::now() + std::chrono::milliseconds(300));
    std::string title;
    // The window's pid is set by the caller; the app's is the one to match.
    if (!x11_.WindowTitle(w.pid > 0 ? w.pid : app.pid, w.frame, title, until) && !title.empty()) w.title = title;
  }
  return {};
}

Error LinuxBackend::Launchable(std::vector<LaunchableApp>& out, Clock::time_point) { return GioLaunchable(out); }

Error LinuxBackend::Launch(const LaunchRequest& request, int64_t& pid, Clock::time_point) {
  return GioLaunch(request, pid);
}

Error LinuxBackend::OcrReady(const std::vector<std::string>& languages) {
  if (!ocr_) ocr_ = CreateTesseractEngine();
  return ocr_->Ready(languages);
}

Error LinuxBackend::RecognizeText(const WindowInfo&, const OcrImage& image, const OcrOptions& options, OcrResult& out) {
  if (!ocr_) ocr_ = CreateTesseractEngine();
  return RecognizeImage(*ocr_, image, options, out);
}

}  // namespace axsnap
