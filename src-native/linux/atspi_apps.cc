// Apps and windows: the registry's apps (with their names and pids, one that
// stopped answering listed as unresponsive), the active app, an app's
// toplevel windows (a popup told from a menu by what it holds), and the open
// menus and popovers GTK3 keeps inside their window (ListedWindows).
//
// Follows at-spi2-core xml/Accessible.xml (GetChildren, GetRole, GetState,
// Name, ChildCount) and xml/Component.xml (GetExtents); the registry's root
// (org.a11y.atspi.Registry) lists the apps; org.freedesktop.DBus
// GetConnectionUnixProcessID (D-Bus specification) gives each one's pid.

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "atspi_internal.h"

namespace axsnap {

Error AtspiBackend::ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) {
  Error err = ListAppsOnce(out, deadline);
  // The bus went away under the call (restarted): reconnect once and ask again, within the deadline.
  if (err.code == ErrorCode::kNoAccessibilityBus && impl_->everConnected && !Connected() && Clock::now() < deadline) {
    if (Error e = Ready(deadline)) return e;
    err = ListAppsOnce(out, deadline);
  }
  return err;
}

Error AtspiBackend::ListAppsOnce(std::vector<AppInfo>& out, Clock::time_point deadline) {
  Impl& im = *impl_;
  out.clear();
  if (Error e = Ready(deadline)) return e;
  ContextScope scope(im.ctx.get());

  struct AppWork {
    std::string bus, path;
    bool ok = false;
    bool silent = false;  // the Name call got no reply
    std::string name;
    int64_t pid = 0;
  };
  std::vector<AppWork> apps;
  Error rootError;
  {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    b.Call(kRegistryBus, kRootPath, kIfAccessible, "GetChildren", nullptr, "(a(so))", [&](const Reply& r) {
      if (r.outcome != Outcome::kOk) {
        rootError = OutcomeError(r.outcome, kRegistryBus, r.message, b.PerCallMs());
        if (r.outcome == Outcome::kGone || r.outcome == Outcome::kFailed)
          rootError = MakeError(ErrorCode::kNoAccessibilityBus,
                                "the AT-SPI registry (at-spi2-registryd) does not answer: " + r.message);
        return;
      }
      for (ObjRef& ref : RefsIn(r.value)) {
        apps.emplace_back();
        apps.back().bus = std::move(ref.bus);
        apps.back().path = std::move(ref.path);
      }
      for (size_t i = 0; i < apps.size(); ++i) {
        b.GetProperty(apps[i].bus, apps[i].path, kIfAccessible, "Name", [&, i](const Reply& nr) {
          if (nr.outcome == Outcome::kNoReply || nr.outcome == Outcome::kDeadline) apps[i].silent = true;
          if (nr.outcome != Outcome::kOk || !g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING)) return;
          apps[i].ok = true;
          apps[i].name = g_variant_get_string(nr.value, nullptr);
        });
        b.Call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
               g_variant_new("(s)", apps[i].bus.c_str()), "(u)", [&, i](const Reply& pr) {
                 if (pr.outcome != Outcome::kOk) return;
                 guint32 pid = 0;
                 g_variant_get(pr.value, "(u)", &pid);
                 apps[i].pid = pid;
               });
      }
    });
    b.Run();
    if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  }
  if (rootError) return rootError;
  for (const AppWork& a : apps) {
    AppInfo info;
    if (a.ok) {
      im.knownNames[a.bus] = a.name;
      if (a.pid > 0) im.appByPid[a.pid] = {a.bus, a.path};
      info.name = a.name;
    } else if (a.silent && a.pid > 0) {
      // Did not answer (busy or stopped): listed, flagged, under the name it gave before.
      auto known = im.knownNames.find(a.bus);
      if (known != im.knownNames.end()) info.name = known->second;
      info.responsive = false;
    } else {
      continue;  // gone, or answered with an error
    }
    info.bundleId = info.name;
    info.pid = a.pid;
    info.element = im.Intern(a.bus, a.path);
    out.push_back(std::move(info));
  }
  return {};
}

Error AtspiBackend::FocusedApp(AppInfo& out, bool& found, Clock::time_point deadline) {
  Impl& im = *impl_;
  found = false;
  std::vector<AppInfo> apps;
  // The registry's apps only: a subclass may list apps that are not AT-SPI objects.
  if (Error e = AtspiBackend::ListApps(apps, deadline)) return e;
  ContextScope scope(im.ctx.get());
  std::vector<bool> active(apps.size(), false);
  {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    for (size_t i = 0; i < apps.size(); ++i) {
      const ObjRef* ref = im.Lookup(apps[i].element);
      if (!ref || !apps[i].responsive) continue;  // one that did not answer the listing is not asked again
      b.Call(ref->bus, ref->path, kIfAccessible, "GetChildren", nullptr, "(a(so))", [&, i](const Reply& r) {
        if (r.outcome != Outcome::kOk) return;
        for (const ObjRef& child : RefsIn(r.value)) {
          b.Call(child.bus, child.path, kIfAccessible, "GetState", nullptr, "(au)", [&, i](const Reply& sr) {
            if (sr.outcome != Outcome::kOk) return;
            VariantPtr au = AdoptVariant(g_variant_get_child_value(sr.value, 0));
            if (StatesFrom(au.get()).Has(kStateActive)) active[i] = true;
          });
        }
      });
    }
    b.Run();
  }
  for (size_t i = 0; i < apps.size(); ++i) {
    if (active[i]) {
      out = apps[i];
      found = true;
      break;
    }
  }
  return {};
}

Error AtspiBackend::Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  Impl& im = *impl_;
  out.clear();
  if (Error e = Ready(deadline)) return e;
  const ObjRef* appRef = im.Lookup(app.element);
  if (!appRef) return MakeError(ErrorCode::kAppNotFound, "unknown application handle");
  const ObjRef appCopy = *appRef;
  ContextScope scope(im.ctx.get());

  struct WinWork {
    std::string bus, path;
    uint32_t role = 0;
    bool haveRole = false;
    StateSet states;
    std::string title;
    Rect frame;
    bool hasFrame = false;
    uint32_t firstChildRole = 0;  // "window"-role toplevels only: what the popup holds
    bool haveFirstChild = false;
    int32_t childCount = -1;
  };
  std::deque<WinWork> wins;  // stable addresses while handlers run
  // A walk of this app comes next (ExpectWalk).
  const bool expected = !im.walkExpected.empty() && im.walkExpected == appCopy.bus;
  Error appError;
  bool noReply = false;  // some window did not answer: the app is busy, not windowless
  {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    b.Call(appCopy.bus, appCopy.path, kIfAccessible, "GetChildren", nullptr, "(a(so))", [&](const Reply& r) {
      if (r.outcome != Outcome::kOk) {
        appError = OutcomeError(r.outcome, appCopy.bus, r.message, b.PerCallMs());
        if (r.outcome == Outcome::kGone) appError = MakeError(ErrorCode::kAppNotFound, "the application is gone");
        return;
      }
      for (ObjRef& ref : RefsIn(r.value)) {
        wins.emplace_back();
        WinWork* w = &wins.back();
        w->bus = std::move(ref.bus);
        w->path = std::move(ref.path);
        b.Call(w->bus, w->path, kIfAccessible, "GetRole", nullptr, "(u)", [w, &noReply, &b](const Reply& rr) {
          if (rr.outcome == Outcome::kNoReply) noReply = true;
          if (rr.outcome != Outcome::kOk) return;
          g_variant_get(rr.value, "(u)", &w->role);
          w->haveRole = true;
          if (w->role != kRoleWindow) return;
          // A GTK3 popup toplevel ("window") holds the menu of a menu bar item, a
          // menu button or a combo box: its first child says which kind it is.
          b.Call(w->bus, w->path, kIfAccessible, "GetChildAtIndex", g_variant_new("(i)", 0), "((so))",
                 [w, &b](const Reply& cr) {
                   if (cr.outcome != Outcome::kOk) return;
                   const gchar* cbus = nullptr;
                   const gchar* cpath = nullptr;
                   g_variant_get(cr.value, "((&s&o))", &cbus, &cpath);
                   if (!cbus || !cpath || std::string(cpath) == "/org/a11y/atspi/null") return;
                   b.Call(cbus, cpath, kIfAccessible, "GetRole", nullptr, "(u)", [w](const Reply& fr) {
                     if (fr.outcome != Outcome::kOk) return;
                     g_variant_get(fr.value, "(u)", &w->firstChildRole);
                     w->haveFirstChild = true;
                   });
                 });
        });
        b.Call(w->bus, w->path, kIfAccessible, "GetState", nullptr, "(au)", [w](const Reply& sr) {
          if (sr.outcome != Outcome::kOk) return;
          VariantPtr au = AdoptVariant(g_variant_get_child_value(sr.value, 0));
          w->states = StatesFrom(au.get());
        });
        b.GetProperty(w->bus, w->path, kIfAccessible, "Name", [w](const Reply& nr) {
          if (nr.outcome == Outcome::kOk && g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING))
            w->title = g_variant_get_string(nr.value, nullptr);
        });
        b.GetProperty(w->bus, w->path, kIfAccessible, "ChildCount", [w](const Reply& cr) {
          if (cr.outcome == Outcome::kOk && g_variant_is_of_type(cr.value, G_VARIANT_TYPE_INT32))
            w->childCount = g_variant_get_int32(cr.value);
        });
        b.Call(w->bus, w->path, kIfComponent, "GetExtents", g_variant_new("(u)", im.CoordType(w->bus)), "((iiii))",
               [w](const Reply& er) {
                 if (er.outcome != Outcome::kOk) return;
                 w->frame = RectOf(er.value);
                 w->hasFrame = true;
               });
      }
    });
    b.Run();
    if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  }
  if (appError) return appError;
  if (noReply)
    return MakeError(ErrorCode::kAppUnresponsive,
                     "application " + appCopy.bus + " did not answer when its windows were read (busy or stopped)");
  if (expected) {
    im.walkExpected.clear();
    // Once the windows are read: the app then has nothing to answer until the walk (window choice goes on with
    // X11), so its bulk read goes on meanwhile; asked before, it would hold up these reads instead.
    StartPrefetch(im, appCopy.bus, deadline);
    AwaitPrefetchRegistration(im, appCopy.bus, deadline);
  }
  for (const WinWork& w : wins) {
    if (!w.haveRole || !IsWindowRole(w.role)) continue;
    WindowInfo info;
    info.element = im.Intern(w.bus, w.path);
    info.title = w.title;
    info.frame = w.frame;
    info.hasFrame = w.hasFrame;
    info.active = w.states.Has(kStateActive);
    info.minimized = w.states.Has(kStateIconified);
    info.visible = w.states.Has(kStateShowing) && w.states.Has(kStateVisible);
    info.role = RoleName(w.role);
    info.modal = w.states.Has(kStateModal);
    // Object paths are unique within the app's connection for the object's life.
    info.id = w.path;
    if (w.role == kRoleWindow) {
      const std::string inner = w.haveFirstChild ? RoleName(w.firstChildRole) : "";
      info.kind = inner == "menu" || inner == "popup menu" ? "menu" : "popup";
    } else if (w.role == kRoleFrame && w.title.empty() && w.childCount == 0) {
      // Chromium's <select> list (and other views popups): an untitled, empty
      // toplevel; the options live in the page, under the expanded combo box.
      info.kind = "popup";
      info.inParent = true;
    }
    out.push_back(std::move(info));
  }
  return {};
}

Error AtspiBackend::ListedWindows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  if (Error e = Windows(app, out, deadline)) return e;
  AppendMenuBarMenus(*impl_, out, deadline);
  return {};
}

// GTK3 does not expose a menu bar's open menu as a toplevel (a menu attached to
// a menu item has no toplevel accessible; a combo box's or a menu button's
// has): the menu bar item ("menu" role) holds the items itself, showing while
// open. Found by a bounded search of each visible window's containers for menu
// bars (depth <= 3, <= 256 nodes), then the bar's selected items and their
// selected submenus. Each open menu is listed with the item's path as id, its
// name as title and its items' extents as frame.
void AtspiBackend::AppendMenuBarMenus(Impl& im, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  struct Node {
    std::string bus, path;
    std::string role, name;
    StateSet states;
    Rect frame;
    bool hasFrame = false;
  };
  std::vector<Node> level;
  for (const WindowInfo& w : out) {
    if (!w.visible || w.minimized || w.kind == "menu" || w.kind == "popup") continue;
    const ObjRef* ref = im.Lookup(w.element);
    if (!ref) continue;
    Node n;
    n.bus = ref->bus;
    n.path = ref->path;
    level.push_back(std::move(n));
  }
  // Reads children (role, name, states; extents when asked) of `parents`.
  auto children = [&](const std::vector<Node>& parents, bool extents, bool names) {
    std::deque<Node> got;
    ContextScope scope(im.ctx.get());
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    for (const Node& p : parents) {
      b.Call(p.bus, p.path, kIfAccessible, "GetChildren", nullptr, "(a(so))", [&, extents, names](const Reply& r) {
        if (r.outcome != Outcome::kOk) return;
        for (ObjRef& ref : RefsIn(r.value)) {
          got.emplace_back();
          Node* n = &got.back();
          const bool named = names;
          n->bus = std::move(ref.bus);
          n->path = std::move(ref.path);
          b.Call(n->bus, n->path, kIfAccessible, "GetRole", nullptr, "(u)", [n](const Reply& rr) {
            if (rr.outcome != Outcome::kOk) return;
            uint32_t role = 0;
            g_variant_get(rr.value, "(u)", &role);
            n->role = RoleName(role);
          });
          b.Call(n->bus, n->path, kIfAccessible, "GetState", nullptr, "(au)", [n](const Reply& sr) {
            if (sr.outcome != Outcome::kOk) return;
            VariantPtr au = AdoptVariant(g_variant_get_child_value(sr.value, 0));
            n->states = StatesFrom(au.get());
          });
          if (named)
            b.GetProperty(n->bus, n->path, kIfAccessible, "Name", [n](const Reply& nr) {
              if (nr.outcome == Outcome::kOk && g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING))
                n->name = g_variant_get_string(nr.value, nullptr);
            });
          if (!extents) continue;
          b.Call(n->bus, n->path, kIfComponent, "GetExtents", g_variant_new("(u)", im.CoordType(n->bus)), "((iiii))",
                 [n](const Reply& er) {
                   if (er.outcome != Outcome::kOk) return;
                   n->frame = RectOf(er.value);
                   n->hasFrame = n->frame.x != kHiddenCoordinate && n->frame.w > 0 && n->frame.h > 0;
                 });
        }
      });
    }
    b.Run();
    return std::vector<Node>(got.begin(), got.end());
  };
  // Menu bars: containers only, a few levels down. On the way, open popovers
  // (GTK3 GtkPopover: a "panel" with the MODAL state among the window's
  // children, whose parent is the menu button; a menu button's menu model
  // lives in its window too). Titled with the button's name.
  std::vector<Node> bars, popovers;
  size_t seen = 0;
  for (int depth = 0; depth < 3 && !level.empty() && seen < 256 && Clock::now() < deadline; ++depth) {
    std::vector<Node> next;
    for (Node& n : children(level, false, false)) {
      ++seen;
      if (!n.states.Has(kStateShowing)) continue;
      if (n.role == "menu bar")
        bars.push_back(std::move(n));
      else if ((n.role == "popup menu" || (n.role == "panel" && n.states.Has(kStateModal))) &&
               n.states.Has(kStateVisible))
        popovers.push_back(std::move(n));
      else if (n.role == "filler" || n.role == "panel" || n.role == "layered pane" || n.role == "root pane" ||
               n.role == "tool bar")
        next.push_back(std::move(n));
    }
    level = std::move(next);
  }
  if (!popovers.empty() && Clock::now() < deadline) {
    ContextScope scope(im.ctx.get());
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    for (Node& n : popovers) {
      Node* p = &n;
      b.GetProperty(p->bus, p->path, kIfAccessible, "Name", [p](const Reply& nr) {
        if (nr.outcome == Outcome::kOk && g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING) && p->name.empty())
          p->name = g_variant_get_string(nr.value, nullptr);
      });
      b.GetProperty(p->bus, p->path, kIfAccessible, "Parent", [p, &b](const Reply& pr) {
        if (pr.outcome != Outcome::kOk || !g_variant_is_of_type(pr.value, G_VARIANT_TYPE("(so)"))) return;
        const gchar* pbus = nullptr;
        const gchar* ppath = nullptr;
        g_variant_get(pr.value, "(&s&o)", &pbus, &ppath);
        if (!pbus || !ppath || std::string(ppath) == "/org/a11y/atspi/null") return;
        b.GetProperty(pbus, ppath, kIfAccessible, "Name", [p](const Reply& nr) {
          if (nr.outcome == Outcome::kOk && g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING))
            p->name = g_variant_get_string(nr.value, nullptr);
        });
      });
      b.Call(p->bus, p->path, kIfComponent, "GetExtents", g_variant_new("(u)", im.CoordType(p->bus)), "((iiii))",
             [p](const Reply& er) {
               if (er.outcome != Outcome::kOk) return;
               p->frame = RectOf(er.value);
               p->hasFrame = p->frame.x != kHiddenCoordinate && p->frame.w > 0 && p->frame.h > 0;
             });
    }
    b.Run();
    for (const Node& n : popovers) {
      if (!n.hasFrame) continue;
      WindowInfo info;
      info.element = im.Intern(n.bus, n.path);
      info.title = n.name;
      info.frame = n.frame;
      info.hasFrame = true;
      info.role = n.role;
      info.kind = "menu";
      info.id = n.path;
      info.inParent = true;
      out.push_back(std::move(info));
    }
  }
  // Open menus: a bar's selected "menu" item, then its selected "menu" items (submenus).
  level = std::move(bars);
  for (int depth = 0; depth < 4 && !level.empty() && Clock::now() < deadline; ++depth) {
    std::vector<Node> open;
    for (Node& n : children(level, false, true))
      if (n.role == "menu" && n.states.Has(kStateSelected) && n.states.Has(kStateShowing)) open.push_back(n);
    if (open.empty()) break;
    for (Node& menu : open) {
      WindowInfo info;
      std::vector<Node> items = children({menu}, true, false);
      bool any = false;
      for (const Node& item : items) {
        if (!item.hasFrame || !item.states.Has(kStateShowing)) continue;
        if (!any) {
          info.frame = item.frame;
          any = true;
          continue;
        }
        const double x2 = std::max(info.frame.x + info.frame.w, item.frame.x + item.frame.w);
        const double y2 = std::max(info.frame.y + info.frame.h, item.frame.y + item.frame.h);
        info.frame.x = std::min(info.frame.x, item.frame.x);
        info.frame.y = std::min(info.frame.y, item.frame.y);
        info.frame.w = x2 - info.frame.x;
        info.frame.h = y2 - info.frame.y;
      }
      if (!any) continue;  // selected but not open (keyboard focus on the bar)
      info.element = im.Intern(menu.bus, menu.path);
      info.title = menu.name;
      info.hasFrame = true;
      info.role = "menu";
      info.kind = "menu";
      info.id = menu.path;
      info.inParent = true;
      out.push_back(std::move(info));
    }
    level = std::move(open);
  }
}
}  // namespace axsnap
