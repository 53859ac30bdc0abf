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

// A screen rectangle as a note prints it: "x,y wxh" in whole points.
std::string RectWords(const Rect& r) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.0f,%.0f %.0fx%.0f", r.x, r.y, r.w, r.h);
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
  // Handles were forgotten by the connect: so are the windows they were placed by.
  ownerWindow_.clear();
  placements_.clear();
  shellIds_.clear();
  surfaceShellIds_.clear();
  menuSurfaces_.clear();
  menuRoles_.clear();
  inMenuContainer_.clear();
  unplacedMenuItems_.clear();
  comboMenuOwner_.clear();
  listedMenuSurface_.clear();
  gtkWindows_.clear();
  wayland_ = WaylandSession();
  // A native Wayland app's only meaningful coordinates are its surfaces' own (atspi_internal.h, CoordType).
  screenBuses_.clear();
  SetWindowCoordinates(wayland_, {});
  // Asked once per connection, briefly: a shell that does not answer leaves positions unknown.
  if (wayland_) {
    shell_.Open(std::min(deadline, Clock::now() + std::chrono::milliseconds(1500)));
    shellAskedAt_ = Clock::now();
  }
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
  if (Error err = AtspiBackend::ListedWindows(app, out, deadline)) return err;
  if (wayland_) PlaceListedMenus(app, out);
  return {};
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
  Error err = ReadNodesOf(ids, out, errs, deadline);
  if (err || !wayland_ || ownerWindow_.empty()) return err;
  NoteMenus(ids, out);
  std::vector<std::optional<Rect>*> frames;
  for (NodeAttributes& a : out) frames.push_back(&a.frame);
  ToScreen(ids, frames);
  return {};
}

Error LinuxBackend::ReadNodesOf(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out,
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
  Error err = ReadChildrenOf(ids, out, errs, deadline);
  if (err || !wayland_ || ownerWindow_.empty()) return err;
  // A million elements is far beyond any window's walk: drop the old owners rather than grow.
  if (ownerWindow_.size() > 1000000) {
    ownerWindow_.clear();
    inMenuContainer_.clear();
    unplacedMenuItems_.clear();
    comboMenuOwner_.clear();
    menuRoles_.clear();
    surfaceRoots_.clear();
  }
  for (size_t i = 0; i < ids.size() && i < out.size(); i++) {
    auto it = ownerWindow_.find(ids[i]);
    if (it == ownerWindow_.end()) continue;
    const ElementId surface = it->second;
    ElementId target = surface;
    ElementId comboSurface = 0;
    bool combo = false;
    bool container = false;
    bool unplaced = false;
    auto role = menuRoles_.find(ids[i]);
    if (role != menuRoles_.end()) {
      container = role->second == "menu" || role->second == "menu bar" || role->second == "popup menu";
      // GTK3: a menu item that opens a submenu ("menu" in a menu bar or menu) holds the submenu's
      // items, which are drawn on the submenu's own surface; a combo box holds its list's menu,
      // which is on a surface of its own only while open (checked by size in NoteMenus).
      if (role->second == "menu" && inMenuContainer_.count(ids[i])) {
        const ElementId below = MenuSurfaceBelow(surface);
        if (below != 0)
          target = below;
        else
          unplaced = true;  // closed (its items hidden), or open on a surface the shell does not list (NoteMenus)
      } else if (role->second == "combo box") {
        combo = true;
        comboSurface = MenuSurfaceBelow(surface);
      }
    }
    // The children drawn on a menu's surface while their parent is not (a menu bar's item) or is its first
    // element there (a combo box's menu): the hit test over that surface asks the parent.
    if ((target & kMenuKeyBit) != 0 && target != kUnknownSurface &&
        (surface != target || comboMenuOwner_.count(ids[i])) && !out[i].ids.empty()) {
      std::vector<ElementId>& roots = surfaceRoots_[target];
      if (std::find(roots.begin(), roots.end(), ids[i]) == roots.end() && roots.size() < 64) roots.push_back(ids[i]);
    }
    for (ElementId child : out[i].ids) {
      if (child == 0) continue;
      ownerWindow_[child] = target;
      if (container) inMenuContainer_.insert(child);
      if (unplaced)
        unplacedMenuItems_.insert(child);
      else
        unplacedMenuItems_.erase(child);
      if (combo) comboMenuOwner_[child] = comboSurface;
    }
  }
  return {};
}

Error LinuxBackend::ReadChildrenOf(const std::vector<ElementId>& ids, std::vector<ChildList>& out,
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
  // An X window's frame comes with its node read (ReadNodes, already in screen space): the default does that.
  if (any) return Backend::ReadFrames(ids, out, deadline);
  Error err = AtspiBackend::ReadFrames(ids, out, deadline);
  if (err || !wayland_ || ownerWindow_.empty()) return err;
  std::vector<std::optional<Rect>*> frames;
  for (std::optional<Rect>& f : out) frames.push_back(&f);
  ToScreen(ids, frames);
  return {};
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
  if (!XidOf(window.element, xid)) {
    if (wayland_ && shell_.evalAllowed()) {
      bool routed = false;
      if (Error e = MenuAtPoint(window, x, y, stopAt, chain, routed, deadline)) return e;
      if (routed) return {};
    }
    // AT-SPI hit-tests a Wayland window in its own coordinates; an open menu's items in their menu's.
    auto menu = listedMenuSurface_.find(window.element);
    auto place = menu == listedMenuSurface_.end() ? placements_.end() : placements_.find(menu->second);
    if (place != placements_.end())
      ScreenToWindow(x, y, place->second);
    else if (const WaylandPlacement* p = PlacementOf(window.element))
      ScreenToWindow(x, y, *p);
    return AtspiBackend::ElementAtPoint(window, x, y, stopAt, chain, deadline);
  }
  chain.clear();
  std::vector<NodeAttributes> attrs;
  std::vector<Error> errs;
  if (Error err = ReadNodes({window.element}, attrs, errs, deadline)) return err;
  if (errs[0]) return errs[0];
  const Rect& f = *attrs[0].frame;
  if (x >= f.x && x < f.x + f.w && y >= f.y && y < f.y + f.h) chain.push_back(window.element);
  return {};
}

Error LinuxBackend::MenuAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                                std::vector<ElementId>& chain, bool& routed, Clock::time_point deadline) {
  routed = false;
  // Asked now, not from the last listing: the menu may have closed (or another opened) since the snapshot.
  std::vector<ShellWindow> shell;
  if (Error e = shell_.Windows(shell, std::min(deadline, Clock::now() + std::chrono::milliseconds(1000)))) return e;
  const ShellWindow* top = nullptr;
  for (auto it = shell.rbegin(); it != shell.rend() && !top; ++it) {  // listed bottom to top
    const Rect& f = it->frame;
    if (!it->hidden && !it->minimized && x >= f.x && x < f.x + f.w && y >= f.y && y < f.y + f.h) top = &*it;
  }
  if (!top || !IsMenuSurface(*top)) return {};
  // A snapshot of the menu's own popup window: its own hit test, by its placement.
  auto own = shellIds_.find(window.element);
  if (own != shellIds_.end() && own->second == top->id) return {};
  int64_t pid = window.pid;
  if (pid <= 0 && own != shellIds_.end())
    for (const ShellWindow& s : shell)
      if (s.id == own->second) pid = s.pid;
  routed = true;
  chain.clear();
  // Another app's menu covers the point: a press there reaches that menu, nothing of this app.
  if (pid > 0 && top->pid != pid) return {};
  // Where to start: the AT-SPI popup window matched to that surface (a GTK3 combo box's list), else the
  // element whose children are drawn on it (read by the snapshot's walk), else a listed menu-bar menu.
  // Only elements still held (a listing's windows that no snapshot kept are released).
  const ElementId key = MenuKey(top->id);
  std::string bus, path;
  auto held = [&](ElementId id) { return id != 0 && Describe(id, bus, path); };
  WaylandPlacement place;
  place.origin = top->buffer;
  if (auto p = placements_.find(key); p != placements_.end()) place = p->second;
  for (const auto& [element, shellId] : shellIds_)
    if (shellId == top->id && placements_.count(element) && held(element)) {
      ScreenToWindow(x, y, placements_[element]);
      if (Error e = AtspiBackend::ElementAtPointFrom(element, window, x, y, stopAt, chain, deadline)) return e;
      // A popup window with nothing of its own at the point (Chromium's <select> popup has no tree: its
      // options are in the page's): the window's own hit test answers, and lib/session/act/pixels.ts judges it.
      if (chain.empty() || chain[0] == element) {
        chain.clear();
        routed = false;
      }
      return {};
    }
  std::vector<ElementId> starts;
  if (auto r = surfaceRoots_.find(key); r != surfaceRoots_.end())
    for (ElementId e : r->second)
      if (held(e)) starts.push_back(e);
  for (const auto& [element, surface] : listedMenuSurface_)
    if (surface == key && held(element) && std::find(starts.begin(), starts.end(), element) == starts.end())
      starts.push_back(element);
  if (starts.empty())
    return {ErrorCode::kActionFailed,
            "an open menu of the app is over that point, and its elements were not read: what a press there "
            "reaches is not known; nothing was sent",
            "take a new snapshot (it reads the open menu's items) and use its pixels, or act on the menu's items "
            "by index"};
  ScreenToWindow(x, y, place);
  // The start whose children hold the point (a closed menu's items are hidden: they hold no point). With one
  // start, its answer whatever it is; with several and none holding the point, no guess.
  for (ElementId start : starts) {
    if (Error e = AtspiBackend::ElementAtPointFrom(start, window, x, y, stopAt, chain, deadline)) return e;
    if (starts.size() == 1 || (!chain.empty() && chain[0] != start)) return {};
  }
  chain.clear();
  return {ErrorCode::kActionFailed,
          "an open menu of the app is over that point, and none of its items is there; nothing was sent",
          "take a new snapshot and use the pixels of one of the menu's items, or act on them by index"};
}

void LinuxBackend::PrepareWalk(const AppInfo& app, const WindowInfo& window, Clock::time_point deadline,
                               std::vector<std::string>& notes, bool& contentPending) {
  unsigned long xid = 0;
  if (!XidOf(window.element, xid)) {
    const bool noShell = wayland_ && !shell_.present();
    if (window.positionUnknown)
      notes.push_back("screen positions are unknown: " +
                      (shell_.evalAllowed() ? std::string("the compositor does not list this window")
                       : noShell            ? WaylandCompositorWords() +
                                       " does not tell a client where its windows are, and axsnap asks "
                                       "GNOME Shell only"
                                 : shell_.status()) +
                      "; frames are relative to the window");
    // Which route this window's pixels and input take, said where the agent reads it.
    if (Error none = NoRouteFor(window, ErrorCode::kCaptureFailed, "screenshots", deadline)) {
      notes.push_back(app.name + " is a native Wayland window on " + WaylandCompositorWords() +
                      ", which gives axsnap no route to its pixels or input: no screenshot, and pointer and key "
                      "input are refused with nothing sent; its tree and semantic actions (click by index, "
                      "setValue) work");
    } else if (OnMutter(window, deadline)) {
      std::string how;
      if (FocusedRoute())
        how =
            " only while it is the focused window (nothing here can raise it), through a stream of the focused "
            "window, in the window's own coordinates; the focused window is taken to be this one when its surface "
            "has this window's size; not checked: whether another window or a shell dialog is over a point";
      else if (window.positionUnknown)
        how = ", which refuses them while the window's place is unknown";
      notes.push_back(app.name +
                      " is a native Wayland window: its screenshot and pointer and key input go through "
                      "GNOME's compositor (Mutter ScreenCast and RemoteDesktop)" +
                      how);
    }
    // Two open menus opened from one surface cannot be told apart (MenuSurfaceBelow): say so, their items get no frame.
    std::map<uint64_t, int> menusOn;
    for (const ShellWindow& m : menuSurfaces_)
      if (m.pid == (window.pid > 0 ? window.pid : app.pid) && ++menusOn[m.transientFor] == 2)
        notes.push_back(
            "two menus of the app are open from one surface: the compositor does not say which is which, so the "
            "frames of their items are unknown");
    // GTK 4 measures a popover's content from a place of its own (neither the window's frame nor the popup
    // surface's: 20-30 points off, measured with gtk4-widget-factory 4.8), and AT-SPI does not say which
    // elements are in the popover: their printed frames may be wrong, so the snapshot says so.
    auto place = placements_.find(window.element);
    auto sid = surfaceShellIds_.find(window.element);
    if (place != placements_.end() && place->second.fromFrame && sid != surfaceShellIds_.end())
      for (const ShellWindow& m : menuSurfaces_)
        if (m.transientFor == sid->second) {
          notes.push_back("a GTK 4 popover or menu is open on a surface of its own at " + RectWords(m.frame) +
                          ": the frames of its elements are not known (they may be printed off their place); act on "
                          "them by index, not by pixel");
          break;
        }
    return AtspiBackend::PrepareWalk(app, window, deadline, notes, contentPending);
  }
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

std::string LinuxBackend::Route(const WindowInfo& window, Clock::time_point deadline) {
  return OnMutter(window, deadline) ? "gnome-mutter" : "x11";
}

bool LinuxBackend::OnMutter(const WindowInfo& window, Clock::time_point deadline) {
  unsigned long xid = 0;
  if (!wayland_ || XidOf(window.element, xid) || !mutter_.Active(deadline)) return false;
  return NativeWayland(window, deadline);
}

bool LinuxBackend::NativeWayland(const WindowInfo& window, Clock::time_point deadline) {
  unsigned long xid = 0;
  if (!wayland_ || XidOf(window.element, xid)) return false;
  std::vector<X11Client> clients;
  if (!x11_.ListClients(clients, X11Until(deadline)))
    for (const X11Client& c : clients)
      if (c.pid == window.pid) return false;
  return true;
}

Error LinuxBackend::NoRouteFor(const WindowInfo& window, ErrorCode code, const char* what, Clock::time_point deadline) {
  if (!NativeWayland(window, deadline) || mutter_.Active(deadline)) return {};
  return {code,
          WaylandCompositorWords() + " gives axsnap no route for " + what +
              " of native Wayland windows (axsnap's route is GNOME's Mutter, not on this session bus; no "
              "xdg-desktop-portal route is built)" +
              (code == ErrorCode::kCaptureFailed ? "" : ": nothing was sent"),
          "act through the accessibility tree (click an element by its index, set a value, type into a field given by "
          "its index); for "
          "screenshots and pointer/key input run the app on the agent's Wayland desktop (axsnap desktop start NAME "
          "--wayland) or as an XWayland client (GTK: GDK_BACKEND=x11; Qt: QT_QPA_PLATFORM=xcb; Chromium/Electron: "
          "--ozone-platform=x11)"};
}

Error LinuxBackend::MutterTargetOf(const WindowInfo& window, ErrorCode code, MutterTarget& out) const {
  auto id = shellIds_.find(window.element);
  auto place = placements_.find(window.element);
  if (!window.positionUnknown && id != shellIds_.end() && place != placements_.end()) {
    out.shellId = id->second;
    out.fromFrame = place->second.fromFrame;
    return {};
  }
  const std::string why = shell_.evalAllowed() ? std::string("GNOME Shell does not list this window") : shell_.status();
  return {code,
          "the window's place on screen is unknown (" + why +
              "): screenshots and pointer and key input through GNOME's compositor need it" +
              (code == ErrorCode::kInputFailed ? ": nothing was sent" : ""),
          "act through the accessibility tree (click by index, setValue), or run the app on the agent's Wayland "
          "desktop (axsnap desktop start NAME --wayland), whose GNOME Shell says where windows are"};
}

Error LinuxBackend::FocusedOf(const WindowInfo& window, ErrorCode code, FocusedWindow& out,
                              Clock::time_point deadline) {
  bool active = false;
  Rect extents;
  if (Error e = WindowState(window.element, active, extents, deadline)) {
    if (e.code != ErrorCode::kTimeout && e.code != ErrorCode::kElementGone) e.code = code;
    return e;
  }
  if (extents.w <= 0 || extents.h <= 0) return {code, "the window has no size in the accessibility tree"};
  out.width = extents.w;
  out.height = extents.h;
  const ElementId element = window.element;
  out.toolkitActive = [this, element](Clock::time_point d) {
    bool a = false;
    Rect r;
    return !WindowState(element, a, r, d) && a;
  };
  return {};
}

Error LinuxBackend::Capture(const WindowInfo& window, std::vector<uint8_t>& rgba, int& width, int& height,
                            Rect& captured, Clock::time_point deadline) {
  if (OnMutter(window, deadline)) {
    if (FocusedRoute()) {
      FocusedWindow focused;
      if (Error e = FocusedOf(window, ErrorCode::kCaptureFailed, focused, deadline)) return e;
      return mutter_.CaptureFocused(focused, rgba, width, height, captured, deadline);
    }
    MutterTarget target;
    if (Error e = MutterTargetOf(window, ErrorCode::kCaptureFailed, target)) return e;
    return mutter_.Capture(target, rgba, width, height, captured, deadline);
  }
  if (Error e = NoRouteFor(window, ErrorCode::kCaptureFailed, "screenshots", deadline)) return e;
  if (!window.hasFrame || window.frame.w <= 0 || window.frame.h <= 0)
    return {ErrorCode::kCaptureFailed, "the window has no on-screen frame"};
  BindX11(window);
  return x11_.CaptureWindow(TargetOf(window), deadline, rgba, width, height, captured);
}

// Synthetic input changes the UI behind the bulk cache's back: drop it after sending.
Error LinuxBackend::Pointer(const WindowInfo& window, const PointerEvent& ev, Clock::time_point deadline) {
  if (Error e = NoRouteFor(window, ErrorCode::kActionNotSupported, "pointer input", deadline)) return e;
  BindX11(window);
  Error err;
  const bool mutter = OnMutter(window, deadline);
  if (mutter && FocusedRoute()) {
    FocusedWindow focused;
    err = FocusedOf(window, ErrorCode::kInputFailed, focused, deadline);
    if (!err) err = mutter_.PointerFocused(focused, ev, deadline);
  } else if (mutter) {
    MutterTarget target;
    err = MutterTargetOf(window, ErrorCode::kInputFailed, target);
    if (!err) err = mutter_.Pointer(target, ev, deadline);
  } else {
    err = x11_.Pointer(TargetOf(window), ev, deadline);
  }
  InvalidateBulkCache();
  return err;
}

Error LinuxBackend::Keys(const WindowInfo& window, const std::string& combo, Clock::time_point deadline) {
  if (Error e = NoRouteFor(window, ErrorCode::kActionNotSupported, "key input", deadline)) return e;
  BindX11(window);
  Error err;
  const bool mutter = OnMutter(window, deadline);
  if (mutter && FocusedRoute()) {
    FocusedWindow focused;
    err = FocusedOf(window, ErrorCode::kInputFailed, focused, deadline);
    if (!err) err = mutter_.KeysFocused(focused, combo, deadline);
  } else if (mutter) {
    MutterTarget target;
    err = MutterTargetOf(window, ErrorCode::kInputFailed, target);
    if (!err) err = mutter_.Keys(target, combo, deadline);
  } else {
    err = x11_.SendKeys(TargetOf(window), combo, deadline);
  }
  InvalidateBulkCache();
  return err;
}

Error LinuxBackend::TypeText(const WindowInfo& window, const std::string& text, Clock::time_point deadline,
                             size_t& typed) {
  typed = 0;
  if (Error e = NoRouteFor(window, ErrorCode::kActionNotSupported, "typed text", deadline)) return e;
  BindX11(window);
  Error err;
  const bool mutter = OnMutter(window, deadline);
  if (mutter && FocusedRoute()) {
    FocusedWindow focused;
    err = FocusedOf(window, ErrorCode::kInputFailed, focused, deadline);
    if (!err) err = mutter_.TypeTextFocused(focused, text, deadline, typed);
  } else if (mutter) {
    MutterTarget target;
    err = MutterTargetOf(window, ErrorCode::kInputFailed, target);
    if (!err) err = mutter_.TypeText(target, text, deadline, typed);
  } else {
    err = x11_.TypeText(TargetOf(window), text, deadline, typed);
  }
  InvalidateBulkCache();
  return err;
}

Error LinuxBackend::Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  if (IsX11App(app)) return X11Windows(app, out, deadline);
  // XWayland apps (X clients on this session's X display, when there is one) keep their AT-SPI frames: X root
  // coordinates are screen coordinates there, whatever the shell says. Known before their extents are asked.
  std::set<int64_t> x11Pids;
  if (wayland_) {
    std::vector<X11Client> clients;
    if (!x11_.ListClients(clients, X11Until(deadline)))
      for (const X11Client& c : clients) x11Pids.insert(c.pid);
    std::string bus, path;
    if (x11Pids.count(app.pid) && Describe(app.element, bus, path) && screenBuses_.insert(bus).second)
      SetWindowCoordinates(true, std::vector<std::string>(screenBuses_.begin(), screenBuses_.end()));
  }
  if (Error err = AtspiBackend::Windows(app, out, deadline)) return err;
  if (wayland_) PlaceWaylandWindows(app, out, x11Pids, deadline);
  for (WindowInfo& w : out) {
    // A toolkit that leaves the frame's accessible name empty (gtk3-widget-factory) still titles its X window.
    if (!w.title.empty() || w.inParent || !w.hasFrame || w.frame.w <= 0 || w.frame.h <= 0 || w.positionUnknown)
      continue;
    if (w.role != "frame" && w.role != "dialog" && w.role != "window") continue;
    if (!w.kind.empty() && w.kind != "window" && w.kind != "dialog") continue;
    const auto until = std::min(deadline, Clock::now() + std::chrono::milliseconds(300));
    std::string title;
    // The window's pid is set by the caller; the app's is the one to match.
    if (!x11_.WindowTitle(w.pid > 0 ? w.pid : app.pid, w.frame, title, until) && !title.empty()) w.title = title;
  }
  return {};
}

// Which of the shell's windows an AT-SPI window is: the same pid, then the
// same title, then a size the AT-SPI window has (the frame's or the buffer's).
// Two equally good candidates are no answer: a wrong frame is worse than none.
// An AT-SPI popup toplevel (role "window": a GTK3 combo box's list) is only
// ever a menu surface of the shell; a frame or dialog never is one.
namespace {
bool PopupWindow(const WindowInfo& w) { return w.role == "window" || w.kind == "menu" || w.kind == "popup"; }

bool SameClass(const WindowInfo& w, const ShellWindow& s) {
  return PopupWindow(w) ? IsMenuSurface(s) || s.type == 11 : !IsMenuSurface(s);
}

const ShellWindow* MatchShellWindow(const WindowInfo& w, int64_t pid, const std::vector<ShellWindow>& shell) {
  const ShellWindow* best = nullptr;
  int bestScore = 0;
  bool tie = false;
  for (const ShellWindow& s : shell) {
    if (s.pid != pid || !SameClass(w, s)) continue;
    int score = 0;
    if (!w.title.empty() && s.title == w.title) score += 2;
    if (w.hasFrame && (SameSize(w.frame.w, w.frame.h, s.frame) || SameSize(w.frame.w, w.frame.h, s.buffer))) score += 1;
    if (score > bestScore) {
      best = &s;
      bestScore = score;
      tie = false;
    } else if (score > 0 && score == bestScore) {
      tie = true;
    }
  }
  return best && !tie ? best : nullptr;
}
}  // namespace

void LinuxBackend::PlaceWaylandWindows(const AppInfo& app, std::vector<WindowInfo>& out,
                                       const std::set<int64_t>& x11Pids, Clock::time_point deadline) {
  // The shell may have started (or restarted) after the connect: asked again, at most every few seconds.
  if (!shell_.evalAllowed() && Clock::now() - shellAskedAt_ > std::chrono::seconds(5)) {
    shell_.Open(std::min(deadline, Clock::now() + std::chrono::milliseconds(500)));
    shellAskedAt_ = Clock::now();
  }
  std::vector<ShellWindow> shell;
  Error err;
  if (shell_.evalAllowed())
    err = shell_.Windows(shell, std::min(deadline, Clock::now() + std::chrono::milliseconds(1000)));
  else
    err = {ErrorCode::kPermissionDenied, shell_.status()};
  // The open menus: a GTK3 menu's items are in its own surface's coordinates, which start at its buffer.
  for (const ShellWindow& m : menuSurfaces_) {
    placements_.erase(MenuKey(m.id));
    surfaceShellIds_.erase(MenuKey(m.id));
  }
  menuSurfaces_.clear();
  if (!err)
    for (const ShellWindow& s : shell) {
      if (!IsMenuSurface(s) || s.buffer.w <= 0 || s.buffer.h <= 0) continue;
      menuSurfaces_.push_back(s);
      WaylandPlacement place;
      place.origin = s.buffer;
      placements_[MenuKey(s.id)] = place;
      surfaceShellIds_[MenuKey(s.id)] = s.id;
    }
  // Matched by title or size first; then the app's one window left to the one AT-SPI window left
  // without a title to contradict it (a resize between the reads), never a window taken already.
  std::vector<const ShellWindow*> matched(out.size(), nullptr);
  std::set<uint64_t> taken;
  for (size_t i = 0; i < out.size(); i++) {
    const int64_t pid = out[i].pid > 0 ? out[i].pid : app.pid;
    if (!err) matched[i] = MatchShellWindow(out[i], pid, shell);
    if (matched[i]) taken.insert(matched[i]->id);
  }
  if (!err) {
    std::vector<size_t> loose;
    for (size_t i = 0; i < out.size(); i++)
      if (!matched[i] && out[i].title.empty() && !PopupWindow(out[i])) loose.push_back(i);
    std::vector<const ShellWindow*> free;
    const int64_t pid = loose.empty() ? 0 : (out[loose[0]].pid > 0 ? out[loose[0]].pid : app.pid);
    for (const ShellWindow& s : shell)
      if (s.pid == pid && !IsMenuSurface(s) && s.type != 11 && !taken.count(s.id)) free.push_back(&s);
    if (loose.size() == 1 && free.size() == 1) matched[loose[0]] = free[0];
  }
  // Menus are walked by their toolkit's structure (ReadChildren): GTK's only.
  std::string toolkit, version;
  const bool gtk =
      !out.empty() &&
      !Toolkit(out[0].element, toolkit, version, std::min(deadline, Clock::now() + std::chrono::milliseconds(300))) &&
      (toolkit == "gtk" || toolkit == "GTK");  // GTK3 says "gtk"
  for (size_t i = 0; i < out.size(); i++) {
    WindowInfo& w = out[i];
    placements_.erase(w.element);
    shellIds_.erase(w.element);
    surfaceShellIds_.erase(w.element);
    ownerWindow_[w.element] = w.element;
    if (gtk)
      gtkWindows_.insert(w.element);
    else
      gtkWindows_.erase(w.element);
    const int64_t pid = w.pid > 0 ? w.pid : app.pid;
    const ShellWindow* s = matched[i];
    if (!s && x11Pids.count(pid)) continue;  // an XWayland app's frames are screen frames already
    // Listed by the shell before its first buffer arrived (a dialog just opened): no size, so no place yet.
    if (s && (s->buffer.w <= 0 || s->buffer.h <= 0 || s->frame.w <= 0 || s->frame.h <= 0)) s = nullptr;
    if (!s) {
      // Not listed by the shell, or not told apart from another of the app's windows: no guess.
      w.positionUnknown = true;
      w.frame.x = 0;
      w.frame.y = 0;
      continue;
    }
    w.stacking = s->stack;
    w.active = s->focus;
    w.minimized = s->minimized;
    if (s->hidden || s->minimized) w.visible = false;
    if (w.title.empty()) w.title = s->title;
    shellIds_[w.element] = s->id;
    surfaceShellIds_[w.element] = s->id;
    // An XWayland app's AT-SPI frames are X root coordinates: screen space already.
    if (s->clientType != 0) continue;
    const WaylandPlacement place = PlaceWaylandWindow(w.frame.w, w.frame.h, s->frame, s->buffer);
    placements_[w.element] = place;
    w.frame = place.origin;
    w.hasFrame = true;
  }
  lastWindows_.clear();
  for (const WindowInfo& w : out) lastWindows_.insert(w.element);
}

void LinuxBackend::PlaceListedMenus(const AppInfo& app, std::vector<WindowInfo>& out) {
  // The app's placed windows (not menus) from Windows(): an in-window popover is drawn in one of them.
  const WindowInfo* only = nullptr;
  int placed = 0;
  for (const WindowInfo& w : out)
    if (lastWindows_.count(w.element) && !PopupWindow(w) && placements_.count(w.element)) {
      only = &w;
      placed++;
    }
  for (WindowInfo& w : out) {
    if (lastWindows_.count(w.element) || !w.inParent) continue;
    listedMenuSurface_.erase(w.element);
    const Rect atspi = w.frame;
    w.positionUnknown = true;
    if (w.role == "menu") {
      // A menu bar's open menu (AtspiBackend::AppendMenuBarMenus): its items, in their own surface's
      // coordinates, span that surface's frame. Found by that size among the app's menu surfaces.
      const ShellWindow* found = nullptr;
      int n = 0;
      for (const ShellWindow& m : menuSurfaces_)
        if (m.pid == (w.pid > 0 ? w.pid : app.pid) && SameSize(atspi.w, atspi.h, m.frame)) {
          found = &m;
          n++;
        }
      // The menu item itself is on the surface its menu opened from: the window's (a menu bar's item) or
      // the parent menu's (a submenu's item); its items are on its menu's. The chain must reach the window.
      const uint64_t windowId = only ? surfaceShellIds_[only->element] : 0;
      bool reaches = false;
      for (uint64_t up = n == 1 ? found->transientFor : 0, hops = 0; up != 0 && hops < 16; hops++) {
        if (up == windowId) {
          reaches = true;
          break;
        }
        auto parent =
            std::find_if(menuSurfaces_.begin(), menuSurfaces_.end(), [&](const ShellWindow& m) { return m.id == up; });
        up = parent == menuSurfaces_.end() ? 0 : parent->transientFor;
      }
      if (only) {
        ownerWindow_[w.element] =
            reaches && found->transientFor != windowId ? MenuKey(found->transientFor) : only->element;
        menuRoles_[w.element] = "menu";
        inMenuContainer_.insert(w.element);
      }
      if (reaches) {
        const ElementId key = MenuKey(found->id);
        listedMenuSurface_[w.element] = key;
        w.frame = WindowToScreen(atspi, placements_[key]);
        w.stacking = found->stack;
        w.positionUnknown = false;
      }
    } else if (only) {
      // A GTK3 popover is drawn inside its window (no surface of its own): the window's place.
      ownerWindow_[w.element] = only->element;
      w.frame = WindowToScreen(atspi, placements_[only->element]);
      w.stacking = only->stacking;
      w.positionUnknown = false;
    }
    if (w.positionUnknown) {
      w.frame.x = 0;
      w.frame.y = 0;
    }
  }
}

ElementId LinuxBackend::MenuSurfaceBelow(ElementId owner) const {
  if (owner == kUnknownSurface) return kUnknownSurface;
  auto sid = surfaceShellIds_.find(owner);
  if (sid == surfaceShellIds_.end()) return 0;
  const ShellWindow* found = nullptr;
  int n = 0;
  for (const ShellWindow& m : menuSurfaces_)
    if (m.transientFor == sid->second) {
      found = &m;
      n++;
    }
  if (n == 0) return 0;
  return n == 1 ? MenuKey(found->id) : kUnknownSurface;
}

namespace {
bool MenuItemRole(const std::string& role) {
  return role == "menu item" || role == "check menu item" || role == "radio menu item" || role == "menu" ||
         role == "separator" || role == "tear off menu item";
}
}  // namespace

void LinuxBackend::NoteMenus(const std::vector<ElementId>& ids, const std::vector<NodeAttributes>& out) {
  for (size_t i = 0; i < ids.size() && i < out.size(); i++) {
    const std::string& role = out[i].role;
    auto owner = ownerWindow_.find(ids[i]);
    if (owner == ownerWindow_.end()) continue;
    // Only GTK windows are walked by menu structure (Chromium's menus are AT-SPI windows of their own).
    auto window = owner->second;
    if ((window & kMenuKeyBit) == 0 && window != kUnknownSurface && !gtkWindows_.count(window)) {
      // An element of a menu surface was reached from a GTK window; any other window's: no menus.
      continue;
    }
    if (role == "menu" || role == "menu bar" || role == "popup menu" || role == "combo box") menuRoles_[ids[i]] = role;
    // A combo box's list (GTK3: a "menu") is on its own surface while open: the one whose frame has its size.
    auto combo = comboMenuOwner_.find(ids[i]);
    if (combo != comboMenuOwner_.end() && role == "menu" && out[i].frame && out[i].frame->x != kHiddenCoordinate &&
        out[i].frame->w > 0) {
      // Shown, so open: on its surface, or, when that is not known (not listed, not of its size), nowhere known.
      owner->second = kUnknownSurface;
      for (const ShellWindow& m : menuSurfaces_)
        if (MenuKey(m.id) == combo->second && SameSize(out[i].frame->w, out[i].frame->h, m.frame))
          owner->second = combo->second;
    }
    // A submenu's item shown while its menu's surface is not known (not listed yet, or not told apart):
    // its frame is unknown, not the window's.
    if (unplacedMenuItems_.count(ids[i]) && MenuItemRole(role) && out[i].frame &&
        out[i].frame->x != kHiddenCoordinate && out[i].frame->w > 0)
      owner->second = kUnknownSurface;
  }
}

const WaylandPlacement* LinuxBackend::PlacementOf(ElementId id, bool* unknown) const {
  if (unknown) *unknown = false;
  auto owner = ownerWindow_.find(id);
  if (owner == ownerWindow_.end()) return nullptr;
  if (owner->second == kUnknownSurface) {
    if (unknown) *unknown = true;
    return nullptr;
  }
  auto it = placements_.find(owner->second);
  return it == placements_.end() ? nullptr : &it->second;
}

void LinuxBackend::ToScreen(const std::vector<ElementId>& ids, std::vector<std::optional<Rect>*> frames) const {
  for (size_t i = 0; i < ids.size() && i < frames.size(); i++) {
    std::optional<Rect>& f = *frames[i];
    if (!f) continue;
    bool unknown = false;
    if (const WaylandPlacement* p = PlacementOf(ids[i], &unknown))
      f = WindowToScreen(*f, *p);
    else if (unknown && f->x != kHiddenCoordinate)
      f.reset();  // on a surface the compositor did not place: no frame rather than a wrong one
  }
}

Error LinuxBackend::RaiseWayland(const WindowInfo& window, Clock::time_point deadline) {
  auto it = shellIds_.find(window.element);
  if (it == shellIds_.end())
    return {ErrorCode::kActionNotSupported,
            shell_.evalAllowed() ? "the compositor does not list this window" : shell_.status()};
  return shell_.Activate(it->second, deadline);
}

Error LinuxBackend::Recover(RecoveryStep step, const AppInfo&, const std::optional<WindowInfo>& window,
                            Clock::time_point deadline) {
  // MetaWindow.activate unminimizes, raises and focuses: the one step the compositor offers.
  if (step != RecoveryStep::kRaise || !window)
    return {ErrorCode::kActionNotSupported, "only raising goes through the compositor"};
  return RaiseWayland(*window, deadline);
}

// Asked whatever this process's session type: the CLI's warm process answers for a caller whose
// session type may differ (lib/observe/linux-checks.ts decides with the caller's).
Error LinuxBackend::Permissions(PermissionStatus& out, bool) {
  GnomeShell probe;
  probe.Open(Clock::now() + std::chrono::milliseconds(1500));
  out.windowSource = probe.evalAllowed() ? "gnome-shell" : "unknown";
  out.windowDetail = probe.status();
  // Its own connection (made and closed here): the backend's session is not disturbed.
  MutterSession mutter;
  out.mutter = mutter.Available(Clock::now() + std::chrono::milliseconds(800));
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
