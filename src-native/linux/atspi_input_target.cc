// Where input lands: the focused element of an app (where keys go) and the
// chain of elements under a point (where a click goes), both asked live.
//
// Follows at-spi2-core xml/Collection.xml (GetMatches with a MatchRule for
// STATE_FOCUSED), xml/Accessible.xml (GetState, ChildCount, GetChildren, Parent) and
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

// Where keys go: the focused element, searched for by the app's windows'
// elements, breadth first, a level per batch. Never below a parent that has
// more than kFocusMaxChildren children: those are made on demand and asking
// for them makes the app build them all (LibreOffice Calc's sheet answers
// ChildCount with 2^31-1; measured: GetChildren on it never returns, Calc
// spins a core and grows by 350 MB in 10 s, and no later call is answered);
// keys go to that parent anyway. Below a web document (Chromium: thousands
// of elements), one Collection.GetMatches for STATE_FOCUSED asks the rest;
// never elsewhere, because at-spi2-atk's GetMatches walks every child of
// every element below, with no bound, inside the app. (Until now it was asked
// of every window with sort order 0, INVALID, which at-spi2-atk answers with
// nothing: every search was this walk, with the sheet's GetChildren.)
constexpr int64_t kFocusMaxChildren = 1000;
constexpr size_t kFocusWalkMax = 4000;
// Enough for nested focus (document, control), bounded so a toolkit that marks many
// elements focused cannot answer with its whole tree.
constexpr int kMaxFocusedMatches = 32;
constexpr guint32 kSortCanonical = 1;  // ATSPI_Collection_SORT_ORDER_CANONICAL

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
  std::vector<ObjRef> level;
  for (const WindowInfo& w : windows)
    if (const ObjRef* ref = im.Lookup(w.element)) level.push_back(*ref);
  Error failure;
  auto fail = [&failure](const Reply& r, const std::string& bus, int perCall) {
    if (r.outcome != Outcome::kGone && !failure) failure = OutcomeError(r.outcome, bus, r.message, perCall);
  };
  auto closed = [] { return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed"); };
  size_t visited = 0;
  std::optional<ObjRef> focused;  // the deepest focused element read so far
  while (!level.empty() && visited < kFocusWalkMax && Clock::now() < deadline) {
    // The level's states, child counts and roles; then the children of those that may be asked for
    // them, or a web document's focused elements.
    std::vector<StateSet> st(level.size());
    std::vector<int64_t> counts(level.size(), -1);
    std::vector<bool> web(level.size(), false);
    {
      Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
      const int perCall = b.PerCallMs();
      for (size_t k = 0; k < level.size(); ++k) {
        ++visited;
        const ObjRef& ref = level[k];
        b.Call(ref.bus, ref.path, kIfAccessible, "GetState", nullptr, "(au)", [&, k, perCall](const Reply& r) {
          if (r.outcome != Outcome::kOk) return fail(r, level[k].bus, perCall);
          VariantPtr au = AdoptVariant(g_variant_get_child_value(r.value, 0));
          st[k] = StatesFrom(au.get());
        });
        b.GetProperty(ref.bus, ref.path, kIfAccessible, "ChildCount", [&, k, perCall](const Reply& r) {
          if (r.outcome != Outcome::kOk) return fail(r, level[k].bus, perCall);
          VariantToInt(r.value, counts[k]);
        });
        b.Call(ref.bus, ref.path, kIfAccessible, "GetRole", nullptr, "(u)", [&, k](const Reply& r) {
          guint32 role = 0;
          if (r.outcome == Outcome::kOk) g_variant_get(r.value, "(u)", &role);
          web[k] = RoleName(role) == "document web";
        });
      }
      b.Run();
      if (b.BusClosed()) return closed();
    }
    if (failure) return failure;
    std::optional<ObjRef> focusedHere;
    std::vector<std::vector<ObjRef>> kids(level.size());
    std::vector<std::vector<ObjRef>> matches(level.size());
    {
      Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
      const int perCall = b.PerCallMs();
      for (size_t k = 0; k < level.size(); ++k) {
        if (st[k].Has(kStateFocused) && !focusedHere) focusedHere = level[k];
        // Too many (made on demand): keys go to the parent, and its children are never asked for. A parent
        // that manages a few (Writer's document: the paragraphs on screen) is searched as any other.
        if (counts[k] <= 0 || counts[k] > kFocusMaxChildren) continue;
        const ObjRef& ref = level[k];
        auto children = [&, k, perCall] {
          const ObjRef& at = level[k];
          b.Call(at.bus, at.path, kIfAccessible, "GetChildren", nullptr, "(a(so))", [&, k, perCall](const Reply& r) {
            if (r.outcome != Outcome::kOk) return fail(r, level[k].bus, perCall);
            kids[k] = RefsIn(r.value);
          });
        };
        if (!web[k]) {
          children();
          continue;
        }
        // MatchRule (aiia{ss}iaiiasib): states ALL {FOCUSED}; attributes, roles and interfaces ALL of none
        // (atk-bridge fails every element for the INVALID match type, so empty lists take ALL).
        GVariantBuilder states;
        g_variant_builder_init(&states, G_VARIANT_TYPE("ai"));
        g_variant_builder_add(&states, "i", gint32(1u << kStateFocused));
        g_variant_builder_add(&states, "i", gint32(0));
        GVariant* rule = g_variant_new("(aii@a{ss}iaii@asib)", &states, 1 /* ALL */,
                                       g_variant_new_array(G_VARIANT_TYPE("{ss}"), nullptr, 0), 1, nullptr, 1,
                                       g_variant_new_strv(nullptr, 0), 1, FALSE);
        b.Call(ref.bus, ref.path, "org.a11y.atspi.Collection", "GetMatches",
               g_variant_new("(@(aiia{ss}iaiiasib)uib)", rule, kSortCanonical, kMaxFocusedMatches, TRUE), "(a(so))",
               [&, k, perCall, children](const Reply& r) {
                 // No Collection: its children are searched as any others'.
                 if (r.outcome == Outcome::kFailed) return children();
                 if (r.outcome != Outcome::kOk) return fail(r, level[k].bus, perCall);
                 matches[k] = RefsIn(r.value);
                 // Nothing found below a document that says the focus is inside it: not believed
                 // (measured on Chromium 156's form page), its children are searched as any others'.
                 if (matches[k].empty() && st[k].Has(kStateFocused)) children();
               });
      }
      b.Run();
      if (b.BusClosed()) return closed();
    }
    // A search that could not look everywhere does not know: a deeper focused element may be missed.
    if (failure) return failure;
    // Canonical order is a pre-order walk: the last match is the innermost, where keys go.
    for (const auto& inDocument : matches)
      if (!inDocument.empty()) {
        out = im.Intern(inDocument.back().bus, inDocument.back().path);
        found = true;
        return {};
      }
    if (focusedHere) focused = focusedHere;
    std::vector<ObjRef> next;
    for (auto& list : kids)
      for (ObjRef& child : list) next.push_back(std::move(child));
    level.swap(next);
  }
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
  return ElementAtPointFrom(window.element, window, x, y, stopAt, chain, deadline);
}

Error AtspiBackend::ElementAtPointFrom(ElementId start, const WindowInfo& window, double x, double y,
                                       const std::vector<ElementId>& stopAt, std::vector<ElementId>& chain,
                                       Clock::time_point deadline) {
  Impl& im = *impl_;
  chain.clear();
  if (Error e = Ready(deadline)) return e;
  const ObjRef* windowRef = im.Lookup(window.element);
  if (!windowRef) return im.Unknown(window.element);
  const ObjRef win = *windowRef;
  const ObjRef* startRef = im.Lookup(start);
  if (!startRef) return im.Unknown(start);
  const int perCall = static_cast<int>(im.callTimeout.count());
  const gint32 px = static_cast<gint32>(std::floor(x));
  const gint32 py = static_cast<gint32>(std::floor(y));
  // Down: each answer holds the point and lies inside the element asked.
  std::vector<ObjRef> down{*startRef};
  while (static_cast<int>(down.size()) < kMaxHitDepth) {
    const ObjRef at = down.back();
    Outcome o;
    std::string msg;
    VariantPtr r = im.CallSync(at.bus, at.path, kIfComponent, "GetAccessibleAtPoint",
                               g_variant_new("(iiu)", px, py, im.CoordType(at.bus)), "((so))", deadline, o, msg);
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
