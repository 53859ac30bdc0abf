// Where input lands: the focused element of an app (where keys go) and the
// chain of elements under a point (where a click goes), both asked live.
//
// Follows at-spi2-core xml/Collection.xml (GetMatches with a MatchRule for
// STATE_FOCUSED), xml/Accessible.xml (GetState, GetChildren, Parent) and
// xml/Component.xml (GetAccessibleAtPoint, screen coordinates); state numbers
// from atspi-constants.h.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "atspi_internal.h"

namespace axsnap {

// Collection.GetMatches on each window of the app for STATE_FOCUSED (count 1);
// windows without Collection (some toolkits) get a bounded breadth-first
// search of their children for the FOCUSED state instead.
// Enough for nested focus (window, document, control), bounded so a toolkit that marks many
// elements focused cannot answer with its whole tree.
constexpr int kMaxFocusedMatches = 32;

Error AtspiBackend::FocusedElement(int64_t pid, ElementId& out, bool& found, Clock::time_point deadline) {
  Impl& im = *impl_;
  found = false;
  if (Error e = Ready(deadline)) return e;
  AppInfo known;
  const AppInfo* app = nullptr;
  // The app found by pid before, if its bus name still belongs to that pid (the bus daemon answers
  // that even while other apps are frozen); otherwise list the apps.
  if (auto it = im.appByPid.find(pid); it != im.appByPid.end()) {
    Outcome o;
    std::string msg;
    VariantPtr r = im.CallSync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetConnectionUnixProcessID", g_variant_new("(s)", it->second.first.c_str()), "(u)",
                               deadline, o, msg);
    guint32 owner = 0;
    if (o == Outcome::kOk) g_variant_get(r.get(), "(u)", &owner);
    if (o == Outcome::kOk && owner == pid) {
      known.pid = pid;
      known.element = im.Intern(it->second.first, it->second.second);
      app = &known;
    } else {
      im.appByPid.erase(it);
    }
  }
  std::vector<AppInfo> apps;
  if (!app) {
    if (Error e = AtspiBackend::ListApps(apps, deadline)) return e;
    for (const AppInfo& a : apps)
      if (a.pid == pid) app = &a;
    if (!app) return MakeError(ErrorCode::kAppNotFound, "no accessible app has pid " + std::to_string(pid));
    if (!app->responsive) return MakeError(ErrorCode::kAppUnresponsive, "the app did not answer");
  }
  std::vector<WindowInfo> windows;
  if (Error e = Windows(*app, windows, deadline)) return e;
  // The active window first: focus lives there.
  std::stable_sort(windows.begin(), windows.end(),
                   [](const WindowInfo& a, const WindowInfo& b) { return a.active && !b.active; });
  ContextScope scope(im.ctx.get());
  // Matches per window, in the windows' order (the active one first).
  std::vector<std::vector<ObjRef>> hits(windows.size());
  std::vector<ObjRef> noCollection;
  Error failure;
  {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    const int perCall = b.PerCallMs();
    for (size_t wi = 0; wi < windows.size(); ++wi) {
      const WindowInfo& w = windows[wi];
      const ObjRef* ref = im.Lookup(w.element);
      if (!ref) continue;
      ObjRef copy = *ref;
      // MatchRule (aiia{ss}iaiiasib): states ALL {FOCUSED}; attributes, roles and interfaces ALL of none
      // (atk-bridge fails every element for the INVALID match type, so empty lists take ALL).
      GVariantBuilder states;
      g_variant_builder_init(&states, G_VARIANT_TYPE("ai"));
      g_variant_builder_add(&states, "i", gint32(1u << kStateFocused));
      g_variant_builder_add(&states, "i", gint32(0));
      GVariant* rule = g_variant_new("(aii@a{ss}iaii@asib)", &states, 1 /* ALL */,
                                     g_variant_new_array(G_VARIANT_TYPE("{ss}"), nullptr, 0), 1, nullptr, 1,
                                     g_variant_new_strv(nullptr, 0), 1, FALSE);
      b.Call(copy.bus, copy.path, "org.a11y.atspi.Collection", "GetMatches",
             g_variant_new("(@(aiia{ss}iaiiasib)uib)", rule, 0u /* canonical */, kMaxFocusedMatches, TRUE), "(a(so))",
             [&, copy, perCall, wi](const Reply& r) {
               if (r.outcome == Outcome::kFailed) {
                 noCollection.push_back(copy);
                 return;
               }
               if (r.outcome != Outcome::kOk) {
                 if (!failure) failure = OutcomeError(r.outcome, copy.bus, r.message, perCall);
                 return;
               }
               hits[wi] = RefsIn(r.value);
               // GTK's bridge answers GetMatches but finds nothing by state: search the window instead.
               if (hits[wi].empty()) noCollection.push_back(copy);
             });
    }
    b.Run();
    if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  }
  // A window that could not be asked may hold the focus: unknown is not "none".
  if (failure) return failure;
  // Focus nests (Chromium marks the document and the focused control inside it): canonical order is a
  // pre-order walk, so the last match of the first window that has any is the innermost, where keys go.
  for (const auto& inWindow : hits)
    if (!inWindow.empty()) {
      out = im.Intern(inWindow.back().bus, inWindow.back().path);
      found = true;
      return {};
    }
  // Without Collection: breadth-first over the window, a level per batch, at most 4000 elements. The
  // deepest focused element wins (focus nests), so the search goes on below a focused one.
  std::vector<ObjRef> level = noCollection;
  size_t visited = 0;
  std::optional<ObjRef> focused;
  while (!level.empty() && visited < 4000 && Clock::now() < deadline) {
    std::vector<ObjRef> next;
    std::optional<ObjRef> focusedHere;
    {
      Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
      for (const ObjRef& ref : level) {
        ++visited;
        b.Call(ref.bus, ref.path, kIfAccessible, "GetState", nullptr, "(au)", [&, ref](const Reply& r) {
          if (r.outcome != Outcome::kOk) {
            if (r.outcome != Outcome::kGone && !failure)
              failure = OutcomeError(r.outcome, ref.bus, r.message, b.PerCallMs());
            return;
          }
          VariantPtr au = AdoptVariant(g_variant_get_child_value(r.value, 0));
          const StateSet st = StatesFrom(au.get());
          if (st.Has(kStateFocused) && !focusedHere) focusedHere = ref;
        });
        b.Call(ref.bus, ref.path, kIfAccessible, "GetChildren", nullptr, "(a(so))", [&, ref](const Reply& r) {
          if (r.outcome != Outcome::kOk) {
            if (r.outcome != Outcome::kGone && !failure)
              failure = OutcomeError(r.outcome, ref.bus, r.message, b.PerCallMs());
            return;
          }
          for (ObjRef& child : RefsIn(r.value)) next.push_back(std::move(child));
        });
      }
      b.Run();
      if (b.BusClosed())
        return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
    }
    if (focusedHere) focused = focusedHere;
    level.swap(next);
  }
  // A search that could not look everywhere does not know: a deeper focused element may be missed.
  if (failure) return failure;
  if (!level.empty())
    return MakeError(Clock::now() >= deadline ? ErrorCode::kTimeout : ErrorCode::kActionFailed,
                     "the focused element could not be searched for in the whole window");
  if (focused) {
    out = im.Intern(focused->bus, focused->path);
    found = true;
  }
  return {};
}

// Input at a point is judged by what is there now. A descent that never ends
// (a toolkit answering an element with itself, or a cycle) stops at this depth,
// and so does the climb back up.
constexpr int kMaxHitDepth = 64;

namespace {

bool SameRef(const ObjRef& a, const ObjRef& b) { return a.bus == b.bus && a.path == b.path; }

}  // namespace

Error AtspiBackend::ElementAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                                   std::vector<ElementId>& chain, Clock::time_point deadline) {
  Impl& im = *impl_;
  chain.clear();
  if (Error e = Ready(deadline)) return e;
  const ObjRef* windowRef = im.Lookup(window.element);
  if (!windowRef) return im.Unknown(window.element);
  const ObjRef win = *windowRef;
  const int perCall = static_cast<int>(im.callTimeout.count());
  const gint32 px = static_cast<gint32>(std::floor(x));
  const gint32 py = static_cast<gint32>(std::floor(y));
  // Down: each answer holds the point and lies inside the element asked.
  std::vector<ObjRef> down{win};
  while (static_cast<int>(down.size()) < kMaxHitDepth) {
    const ObjRef at = down.back();
    Outcome o;
    std::string msg;
    VariantPtr r = im.CallSync(at.bus, at.path, kIfComponent, "GetAccessibleAtPoint",
                               g_variant_new("(iiu)", px, py, 0u /* screen */), "((so))", deadline, o, msg);
    // No Component (or the call refused): nothing deeper can be asked of it.
    if (o == Outcome::kFailed && down.size() > 1) break;
    if (o != Outcome::kOk) return OutcomeError(o, at.bus, msg, perCall);
    std::optional<ObjRef> hit = RefOf(r.get());
    if (!hit || std::any_of(down.begin(), down.end(), [&](const ObjRef& d) { return SameRef(d, *hit); })) break;
    down.push_back(std::move(*hit));
  }
  // Up: the parents of the deepest, up to the window or an element the caller knows. Each id goes into
  // `chain` as it is interned, so a call that fails mid-climb still hands back what it made (the caller
  // releases the chain on error too).
  std::vector<ObjRef> up{down.back()};
  auto known = [&](const ObjRef& ref) {
    const ElementId id = im.Intern(ref.bus, ref.path);
    chain.push_back(id);
    return std::find(stopAt.begin(), stopAt.end(), id) != stopAt.end();
  };
  while (!SameRef(up.back(), win) && !known(up.back()) && static_cast<int>(up.size()) < kMaxHitDepth) {
    const ObjRef at = up.back();
    Outcome o;
    std::string msg;
    VariantPtr pv = im.CallSync(at.bus, at.path, kIfProperties, "Get", g_variant_new("(ss)", kIfAccessible, "Parent"),
                                "(v)", deadline, o, msg);
    if (o != Outcome::kOk) return OutcomeError(o, at.bus, msg, perCall);
    VariantPtr parent = UnwrapV(pv.get());
    if (!parent || !g_variant_is_of_type(parent.get(), G_VARIANT_TYPE("(so)"))) break;
    const gchar* bus = nullptr;
    const gchar* path = nullptr;
    g_variant_get(parent.get(), "(&s&o)", &bus, &path);
    if (!bus || !*bus || !path || std::strcmp(path, kNullPath) == 0) break;
    ObjRef next{bus, path};
    if (std::any_of(up.begin(), up.end(), [&](const ObjRef& u) { return SameRef(u, next); })) break;
    up.push_back(std::move(next));
  }
  // `chain[i]` is `up[i]` for those already asked; the rest (the window, the last parent) are interned now.
  for (size_t i = chain.size(); i < up.size(); i++) chain.push_back(im.Intern(up[i].bus, up[i].path));
  return {};
}
}  // namespace axsnap
