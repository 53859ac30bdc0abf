// Windows and surfaces: an app's AXWindows (with dialogs and floating
// windows named by their subrole), the sheets and popovers inside them and
// the open menus, each pinned in the element table so its handle is stable
// while it exists, also while it is on another Space; each named by its
// window-server number ("w<N>", the same in every process) when one is found;
// and the candidates window choice looks at (the app's windows, its focused
// window, the system-wide focus).
//
// Apple: CGWindow.h (kCGWindowNumber, "a unique value within the user
// session"); the private _AXUIElementGetWindow (MacSystem::AXGetWindow).
//
// Apple: AXAttributeConstants.h (kAXWindowsAttribute, kAXFocusedWindowAttribute,
// kAXMainAttribute, kAXMinimizedAttribute, kAXHiddenAttribute,
// kAXMenuBarAttribute, kAXFocusedUIElementAttribute), AXRoleConstants.h
// (kAXSheetRole, kAXPopoverRole, kAXMenuRole; kAXDialogSubrole,
// kAXSystemDialogSubrole, kAXFloatingWindowSubrole), AXValue.h (AXPosition,
// AXSize as CGPoint and CGSize).

#include <algorithm>
#include <iterator>
#include <set>

#include "mac_internal.h"

namespace axsnap {

Error MacBackend::WindowInfoOf(AXUIElementRef window, int64_t pid, WindowInfo& out, std::string* subrole) {
  static const int kN = 8;
  const void* names[kN] = {CFSTR("AXRole"),     CFSTR("AXSubrole"), CFSTR("AXTitle"), CFSTR("AXMinimized"),
                           CFSTR("AXPosition"), CFSTR("AXSize"),    CFSTR("AXMain"),  CFSTR("AXFocused")};
  CFRef<CFArrayRef> attrs =
      CFRef<CFArrayRef>::Adopt(CFArrayCreate(kCFAllocatorDefault, names, kN, &kCFTypeArrayCallBacks));
  Attributes read;
  if (Error err = ReadAttributes(window, attrs.get(), /*tryBatch=*/true, read)) {
    if (err.code == ErrorCode::kElementGone) return {ErrorCode::kElementGone, "the window closed"};
    return err;
  }
  if (Fatal(read.errors[0])) return AXFailure(read.errors[0], "reading a window");
  auto slot = [&](int i) -> CFTypeRef { return read.slots[static_cast<size_t>(i)]; };
  out.element = elements_.Intern(window);
  out.pid = pid;
  out.role = Str(slot(0));
  out.title = Str(slot(2));
  out.minimized = CFToBool(slot(3)).value_or(false);
  std::optional<CGPoint> pos = CFToPoint(slot(4));
  std::optional<CGSize> size = CFToSize(slot(5));
  if (pos && size) {
    out.frame = {pos->x, pos->y, size->width, size->height};
    out.hasFrame = true;
  }
  out.active = CFToBool(slot(6)).value_or(false) || CFToBool(slot(7)).value_or(false);
  // A window whose role could not be read is not taken for a window.
  if (out.role.empty()) out.role = "AXUnknown";
  elements_.Remember(out.element, out.role, Str(slot(1)));
  if (subrole) *subrole = Str(slot(1));
  return {};
}

Error MacBackend::AppWindows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline,
                             std::vector<std::string>* subroles, std::vector<WindowInfo>* elsewhere) {
  AXUIElementRef appEl = AppElement(app.pid);
  if (!appEl) return {ErrorCode::kAppNotFound, "cannot reach pid " + std::to_string(app.pid)};
  SetTimeoutFor(appEl, deadline);
  // A hidden app's windows are in AXWindows but nowhere on screen. Asked of
  // AX: NSRunningApplication.hidden is stale without a main run loop.
  CFAny hidden;
  if (Error err = CopyAttribute(appEl, CFSTR("AXHidden"), hidden)) return err;
  const bool appHidden = CFToBool(hidden.get()).value_or(false);
  CFAny windows;
  if (Error err = CopyAttribute(appEl, CFSTR("AXWindows"), windows)) return err;
  // No list (an app without windows answers an empty one) says nothing of the
  // windows pinned: they keep their pins until a list leaves them out.
  if (!windows || CFGetTypeID(windows.get()) != CFArrayGetTypeID()) return {};
  CFArrayRef list = static_cast<CFArrayRef>(windows.get());
  std::set<ElementId> found;
  for (CFIndex i = 0; i < CFArrayGetCount(list); i++) {
    CFTypeRef w = CFArrayGetValueAtIndex(list, i);
    if (!IsElement(w)) continue;
    SetTimeoutFor(static_cast<AXUIElementRef>(w), deadline);
    WindowInfo info;
    std::string subrole;
    Error err = WindowInfoOf(static_cast<AXUIElementRef>(w), app.pid, info, &subrole);
    if (err.code == ErrorCode::kElementGone) continue;  // closed between the list and the read
    if (err) return err;
    // A window of no size is a placeholder some apps keep, not a window to show.
    info.visible = !appHidden && !(info.hasFrame && (info.frame.w < 1 || info.frame.h < 1));
    found.insert(info.element);
    out.push_back(std::move(info));
    if (subroles) subroles->push_back(std::move(subrole));
  }
  // The whole AXWindows list was read: a window it no longer holds has closed,
  // or is on another Space (KeepElsewhere tells which).
  Pins& pins = pins_[app.pid];
  pins.listings++;
  for (ElementId id : found) pins.lastListed[id] = pins.listings;
  std::set<ElementId> keep = KeepElsewhere(app, found, deadline, elsewhere);
  keep.insert(found.begin(), found.end());
  Repin(pins.windows, keep, /*complete=*/true);
  for (auto it = pins.lastListed.begin(); it != pins.lastListed.end();)
    it = pins.windows.count(it->first) ? std::next(it) : pins.lastListed.erase(it);
  return {};
}

namespace {

// Windows AXWindows left out that keep their pin (KeepElsewhere): a user
// keeps a few windows on other Spaces or full screen, not hundreds; each one
// kept costs one read per listing.
constexpr size_t kKeptElsewhere = 8;

}  // namespace

std::set<ElementId> MacBackend::KeepElsewhere(const AppInfo& app, const std::set<ElementId>& found,
                                              Clock::time_point deadline, std::vector<WindowInfo>* listed) {
  std::set<ElementId> kept;
  Pins& pins = pins_[app.pid];
  std::vector<ElementId> absent;
  for (ElementId id : pins.windows)
    if (!found.count(id)) absent.push_back(id);
  if (absent.empty()) return kept;
  // The most recently listed first: those beyond the bound are let go.
  std::sort(absent.begin(), absent.end(),
            [&](ElementId a, ElementId b) { return pins.lastListed[a] > pins.lastListed[b]; });
  std::vector<ScreenWindow> all;
  bool haveAll = false;
  for (size_t i = 0; i < absent.size() && i < kKeptElsewhere; i++) {
    const ElementId id = absent[i];
    AXUIElementRef el = elements_.Get(id);
    if (!el) continue;
    if (Clock::now() >= deadline) {
      // Not asked for want of time: no proof it closed.
      kept.insert(id);
      continue;
    }
    SetTimeoutFor(el, deadline);
    WindowInfo info;
    if (listed) {
      Error err = WindowInfoOf(el, app.pid, info);
      if (err.code == ErrorCode::kElementGone) continue;
      // An app that does not answer has not closed the window; it is not listed this time.
      if (err) info = {};
    } else {
      // One attribute, without interning (nobody would release the handle):
      // only an element the app says is gone is a closed window.
      CFAny role;
      if (AXUIElementCopyAttributeValue(el, CFSTR("AXRole"), role.OutParam()) == kAXErrorInvalidUIElement) continue;
    }
    // A window the window server no longer lists has closed, whatever its
    // element still answers (an app may keep a closed window's object).
    if (const CGWindowID number = elements_.WindowNumber(id)) {
      if (!haveAll) haveAll = !ScreenWindows(all, /*everySpace=*/true);
      if (haveAll && std::none_of(all.begin(), all.end(),
                                  [&](const ScreenWindow& w) { return w.number == number && w.pid == app.pid; })) {
        if (info.element) elements_.Release(info.element);
        continue;
      }
    }
    kept.insert(id);
    if (listed && info.element) {
      info.visible = false;
      listed->push_back(std::move(info));
    }
  }
  return kept;
}

void MacBackend::NumberWindows(int64_t pid, const std::vector<WindowInfo*>& list) {
  AXGetWindowFn getWindow = system_->AXGetWindow();
  std::vector<CGWindowID> taken;
  std::vector<ScreenWindow> all;
  bool haveAll = false;
  for (size_t i = 0; i < list.size(); i++) {
    WindowInfo& w = *list[i];
    if (!w.id.empty()) continue;
    // The same element earlier in the list (a focused window is also listed): the same id.
    bool copied = false;
    for (size_t j = 0; j < i && !copied; j++)
      if (list[j]->element == w.element) {
        w.id = list[j]->id;
        copied = true;
      }
    if (copied) continue;
    CGWindowID number = elements_.WindowNumber(w.element);
    AXUIElementRef el = elements_.Get(w.element);
    if (!number && getWindow && el && getWindow(el, &number) != kAXErrorSuccess) number = 0;
    // Not the number of another window of this listing (what the private call
    // answers for a sheet or popover is not documented).
    auto isTaken = [&](CGWindowID n) { return std::find(taken.begin(), taken.end(), n) != taken.end(); };
    if (number && isTaken(number)) number = 0;
    if (!number && w.hasFrame) {
      if (!haveAll) haveAll = !ScreenWindows(all, /*everySpace=*/true);
      const bool standard = !In(w.role, {"AXSheet", "AXPopover", "AXMenu"});
      number = MatchWindowNumber(all, pid, w.frame, w.title, standard, taken).value_or(0);
    }
    if (!number) continue;
    elements_.SetWindowNumber(w.element, number);
    taken.push_back(number);
    w.id = "w" + std::to_string(number);
  }
}

void MacBackend::Repin(std::set<ElementId>& pinned, const std::set<ElementId>& found, bool complete) {
  for (ElementId id : found)
    if (pinned.insert(id).second) elements_.Pin(id);
  if (!complete) return;
  for (auto it = pinned.begin(); it != pinned.end();) {
    if (found.count(*it)) {
      ++it;
      continue;
    }
    elements_.Unpin(*it);
    it = pinned.erase(it);
  }
}

void MacBackend::UnpinApp(int64_t pid) {
  auto it = pins_.find(pid);
  if (it == pins_.end()) return;
  Repin(it->second.windows, {}, /*complete=*/true);
  Repin(it->second.surfaces, {}, /*complete=*/true);
  pins_.erase(it);
}

// Every surface an agent may face: the app's windows, with dialogs, system
// dialogs and floating windows named by their subrole, then the sheets and
// popovers inside them and the open menus. Only AppWindows feeds window
// choice: a listed sheet or menu is never chosen as the main window.
Error MacBackend::Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  const size_t first = out.size();
  std::vector<std::string> subroles;
  std::vector<WindowInfo> elsewhere;
  if (Error err = AppWindows(app, out, deadline, &subroles, &elsewhere)) return err;
  for (size_t i = 0; i < subroles.size() && first + i < out.size(); i++) {
    WindowInfo& w = out[first + i];
    if (w.role == "AXWindow" &&
        In(subroles[i], {"AXDialog", "AXSystemDialog", "AXFloatingWindow", "AXSystemFloatingWindow"}))
      w.role = subroles[i];
  }
  Surfaces(app, out, deadline);
  // Windows on another Space last, not visible: listed both before and after
  // a Space switch, they are neither opened nor closed by it.
  for (WindowInfo& w : elsewhere) out.push_back(std::move(w));
  std::vector<WindowInfo*> all;
  for (size_t i = first; i < out.size(); i++) all.push_back(&out[i]);
  NumberWindows(app.pid, all);
  return {};
}

namespace {

// The title a surface is listed under: its own, else its parent's and its role.
std::string SurfaceTitle(const std::string& own, const std::string& parent, const std::string& role) {
  if (!own.empty()) return own;
  return parent.empty() ? role : parent + " / " + role;
}

}  // namespace

void MacBackend::Surfaces(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  AXUIElementRef appEl = AppElement(app.pid);
  if (!appEl) return;
  std::set<ElementId> listed, surfaces;
  for (const WindowInfo& w : out) listed.insert(w.element);
  // Best effort: a surface that cannot be read (closed meanwhile, an app that
  // stopped answering) is left out; the windows are already listed.
  auto roleOf = [&](AXUIElementRef el) {
    CFAny role;
    return CopyAttribute(el, CFSTR("AXRole"), role) ? std::string() : Str(role.get());
  };
  auto add = [&](AXUIElementRef el, const std::string& parentTitle, bool parentVisible) {
    SetTimeoutFor(el, deadline);
    WindowInfo info;
    if (WindowInfoOf(el, app.pid, info)) return;
    if (!listed.insert(info.element).second) return;
    surfaces.insert(info.element);
    info.title = SurfaceTitle(info.title, parentTitle, info.role);
    info.visible = parentVisible && !(info.hasFrame && (info.frame.w < 1 || info.frame.h < 1));
    out.push_back(std::move(info));
  };
  // The elements of an array attribute of `el` (up to 256).
  auto elementsOf = [&](AXUIElementRef el, CFStringRef attr) {
    std::vector<CFRef<AXUIElementRef>> found;
    CFAny list;
    if (Clock::now() >= deadline || CopyAttribute(el, attr, list) || !list ||
        CFGetTypeID(list.get()) != CFArrayGetTypeID())
      return found;
    CFArrayRef items = static_cast<CFArrayRef>(list.get());
    for (CFIndex i = 0; i < std::min<CFIndex>(CFArrayGetCount(items), 256); i++) {
      CFTypeRef item = CFArrayGetValueAtIndex(items, i);
      if (IsElement(item)) found.push_back(CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(item)));
    }
    return found;
  };

  // Sheets and popovers: children of the windows listed.
  const size_t windows = out.size();
  for (size_t i = 0; i < windows && Clock::now() < deadline; i++) {
    if (out[i].minimized) continue;
    AXUIElementRef w = elements_.Get(out[i].element);
    if (!w) continue;
    const std::string parentTitle = out[i].title;
    const bool parentVisible = out[i].visible;
    for (CFRef<AXUIElementRef>& child : elementsOf(w, CFSTR("AXChildren"))) {
      if (Clock::now() >= deadline) break;
      SetTimeoutFor(child.get(), deadline);
      const std::string role = roleOf(child.get());
      if (role == "AXSheet" || role == "AXPopover") add(child.get(), parentTitle, parentVisible);
    }
  }

  // Menus: a context menu or popover is a child of the application element
  // while it is open; a menu bar menu is open when its item is selected; a
  // pop-up button's menu holds the focus while it is open.
  const bool appVisible = std::any_of(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(windows),
                                      [](const WindowInfo& w) { return w.visible; }) ||
                          windows == 0;
  SetTimeoutFor(appEl, deadline);
  for (CFRef<AXUIElementRef>& child : elementsOf(appEl, CFSTR("AXChildren"))) {
    if (Clock::now() >= deadline) break;
    SetTimeoutFor(child.get(), deadline);
    const std::string role = roleOf(child.get());
    if (role == "AXMenu" || role == "AXPopover") add(child.get(), app.name, appVisible);
  }
  CFAny bar;
  if (Clock::now() < deadline && !CopyAttribute(appEl, CFSTR("AXMenuBar"), bar) && IsElement(bar.get())) {
    AXUIElementRef barEl = static_cast<AXUIElementRef>(bar.get());
    SetTimeoutFor(barEl, deadline);
    for (CFRef<AXUIElementRef>& item : elementsOf(barEl, CFSTR("AXChildren"))) {
      if (Clock::now() >= deadline) break;
      SetTimeoutFor(item.get(), deadline);
      CFAny selected;
      if (CopyAttribute(item.get(), CFSTR("AXSelected"), selected) || !CFToBool(selected.get()).value_or(false))
        continue;
      CFAny title;
      CopyAttribute(item.get(), CFSTR("AXTitle"), title);
      for (CFRef<AXUIElementRef>& menu : elementsOf(item.get(), CFSTR("AXChildren"))) {
        SetTimeoutFor(menu.get(), deadline);
        if (roleOf(menu.get()) == "AXMenu") add(menu.get(), Str(title.get()), true);
      }
    }
  }
  CFAny focused;
  if (Clock::now() < deadline && !CopyAttribute(appEl, CFSTR("AXFocusedUIElement"), focused) &&
      IsElement(focused.get())) {
    CFRef<AXUIElementRef> el = CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(focused.get()));
    // Up from a focused menu item to its menu, a few levels at most.
    for (int depth = 0; depth < 4 && el && Clock::now() < deadline; depth++) {
      SetTimeoutFor(el.get(), deadline);
      const std::string role = roleOf(el.get());
      if (role == "AXMenu") {
        add(el.get(), app.name, true);
        break;
      }
      if (role != "AXMenuItem") break;
      CFAny parent;
      if (CopyAttribute(el.get(), CFSTR("AXParent"), parent) || !IsElement(parent.get())) break;
      el = CFRef<AXUIElementRef>::Retain(static_cast<AXUIElementRef>(parent.get()));
    }
  }
  // Pinned as the windows are; a pass the deadline cut short unpins nothing
  // it may not have got to.
  Repin(pins_[app.pid].surfaces, surfaces, Clock::now() < deadline);
}

Error MacBackend::GatherWindows(const AppInfo& app, WindowCandidates& c, Clock::time_point deadline) {
  // Windows only: sheets, menus and popovers are never the window a snapshot
  // chooses by itself (and listing them costs IPCs every snapshot).
  if (Error err = AppWindows(app, c.appWindows, deadline)) return err;
  // One window of the app as a candidate; a window that closed meanwhile is none.
  auto asWindow = [&](AXUIElementRef w, std::optional<WindowInfo>& out) -> Error {
    SetTimeoutFor(w, deadline);
    WindowInfo info;
    Error err = WindowInfoOf(w, app.pid, info);
    if (err.code == ErrorCode::kElementGone) return {};
    if (err) return err;
    // Hidden or not is the app's, as the window list has it.
    for (const WindowInfo& listed : c.appWindows)
      if (listed.element == info.element) info.visible = listed.visible;
    out = info;
    return {};
  };
  // The window an attribute of `el` names (AXFocusedWindow, AXWindow).
  auto windowAttr = [&](AXUIElementRef el, CFStringRef attr, std::optional<WindowInfo>& out) -> Error {
    CFAny w;
    if (Error err = CopyAttribute(el, attr, w)) return err;
    if (!IsElement(w.get())) return {};
    return asWindow(static_cast<AXUIElementRef>(w.get()), out);
  };
  if (Error err = windowAttr(AppElement(app.pid), CFSTR("AXFocusedWindow"), c.appFocused)) return err;

  AppInfo focused;
  bool haveFocused = false;
  if (Error err = FocusedApp(focused, haveFocused, deadline)) return err;
  c.targetIsFocusedApp = haveFocused && focused.pid == app.pid;
  // Every candidate gets its window-server number as its id, the same for
  // the same window wherever it appears.
  auto numbered = [&]() -> Error {
    std::vector<WindowInfo*> list;
    for (WindowInfo& w : c.appWindows) list.push_back(&w);
    for (std::optional<WindowInfo>* w : {&c.appFocused, &c.systemFocused})
      if (*w) list.push_back(&**w);
    NumberWindows(app.pid, list);
    if (c.targetIsFocusedApp) {
      c.focusedAppFocused = c.appFocused;
      c.focusedAppWindows = c.appWindows;
    }
    return {};
  };
  if (!c.targetIsFocusedApp) return numbered();
  c.focusedAppFocused = c.appFocused;
  c.focusedAppWindows = c.appWindows;
  // The system-wide focused element's window: what has keyboard focus right now.
  CFAny element;
  if (Error err = CopyAttribute(SystemWide(), CFSTR("AXFocusedUIElement"), element)) return err;
  if (IsElement(element.get())) {
    AXUIElementRef el = static_cast<AXUIElementRef>(element.get());
    SetTimeoutFor(el, deadline);
    pid_t pid = 0;
    if (AXUIElementGetPid(el, &pid) == kAXErrorSuccess && pid == app.pid) {
      CFAny role;
      if (Error err = CopyAttribute(el, CFSTR("AXRole"), role)) return err;
      if (Str(role.get()) == "AXWindow") {
        // Focus on a window that cannot be read is no input: the chain goes on without it.
        asWindow(el, c.systemFocused);
      } else if (Error err = windowAttr(el, CFSTR("AXWindow"), c.systemFocused)) {
        return err;
      }
    }
  }
  return numbered();
}

}  // namespace axsnap
