// Children: an element's children (ReadChildren: from the bulk cache when it
// holds them all, hidden ones left out; "no children" from a read moments
// ago; a long list counted, not listed; a big tree view through
// atspi_tables.cc; else GetChildren), and the children at given indices
// (ChildrenAt) for a long list the walk keeps part of.
//
// Follows at-spi2-core xml/Accessible.xml (GetChildren, GetChildAtIndex) and
// xml/Cache.xml for what the bulk snapshot holds.

#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/walk.h"
#include "atspi_internal.h"

namespace axsnap {

Error AtspiBackend::ReadChildren(const std::vector<ElementId>& ids, std::vector<ChildList>& out,
                                 std::vector<Error>& errs, Clock::time_point deadline) {
  Impl& im = *impl_;
  out.assign(ids.size(), ChildList{});
  errs.assign(ids.size(), Error{});
  if (Error e = Ready(deadline)) return e;
  ContextScope scope(im.ctx.get());
  EnsurePeersFor(im, ids, deadline);
  // Big tree views: their rows on screen only (ReadVisibleTableRows).
  const std::vector<bool> tableRead = ReadVisibleTableRows(ids, out, errs, deadline);

  // Child references are collected first and interned after the batch, so
  // the handle table does not change while handlers hold ObjRef pointers.
  std::vector<std::vector<std::pair<std::string, std::string>>> found(ids.size());
  std::vector<bool> ok(ids.size(), false);
  // From the bulk snapshot: the parent's children when it holds them all. A
  // child it knows to be hidden (not SHOWING and VISIBLE) is left out here,
  // before it costs a handle, a read or a place in the walk's node budget: a
  // hidden element never prints, and a long list's off-screen rows are most
  // of a big page (ChildList::positions keeps the others' places).
  std::vector<bool> fromBulk(ids.size(), false);
  if (!im.live && im.useBulk) {
    std::vector<std::string_view> kids;
    for (size_t i = 0; i < ids.size(); ++i) {
      const ObjRef* ref = tableRead[i] ? nullptr : im.Lookup(ids[i]);
      if (!ref) continue;
      const BulkSnapshot* snap = FreshBulk(im, ref->bus, deadline);
      if (!snap || !BulkChildren(*snap, ref->path, kids) || NearDocument(*snap, ref->path, kids)) continue;
      const Dialect& dialect = DialectOf(im, ref->bus, deadline);
      fromBulk[i] = ok[i] = true;
      ChildList& list = out[i];
      bool rows = false;
      for (size_t k = 0; k < kids.size(); ++k) {
        const CacheItem& c = snap->items.at(kids[k]);
        // Every child's role is known here, listed or not: the list's header or caption is counted out of
        // its rows by index (ChildList::nonRows), even when it is off screen and left out.
        if (IsRowRoleId(c.role))
          rows = true;
        else
          list.nonRows.push_back(static_cast<int64_t>(k));
        StateSet states = c.states;
        AdaptStates(states, dialect);
        if (!(states.Has(kStateShowing) && states.Has(kStateVisible))) {
          list.hiddenLeftOut++;
          continue;
        }
        found[i].emplace_back(ref->bus, std::string(kids[k]));
        list.positions.push_back(static_cast<int64_t>(k));
      }
      if (list.hiddenLeftOut == 0) list.positions.clear();
      // Not a list of rows: nothing to count out.
      if (!rows) list.nonRows.clear();
    }
  }
  {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    b.UsePeers(&im.peers);
    const int perCall = b.PerCallMs();
    for (size_t i = 0; i < ids.size(); ++i) {
      if (tableRead[i]) {
        ok[i] = !errs[i];
        continue;
      }
      if (fromBulk[i]) continue;
      const ObjRef* ref = im.Lookup(ids[i]);
      if (!ref) {
        errs[i] = im.Unknown(ids[i]);
        continue;
      }
      auto seen = im.live ? im.countSeen.end() : im.countSeen.find(ids[i]);
      if (seen != im.countSeen.end()) {
        const bool fresh = Clock::now() - seen->second.at < im.countHintMaxAge;
        const int64_t count = seen->second.count;
        im.countSeen.erase(seen);  // one use: a later ReadChildren asks the app
        if (fresh && count == 0) {
          ok[i] = true;  // no children, read moments ago
          continue;
        }
        if (fresh && count >= static_cast<int64_t>(kLongChildList)) {
          ok[i] = true;
          out[i].unlisted = count;
          continue;
        }
      }
      b.Call(ref->bus, ref->path, kIfAccessible, "GetChildren", nullptr, "(a(so))",
             [&, i, perCall, busName = ref->bus](const Reply& r) {
               if (r.outcome != Outcome::kOk) {
                 errs[i] = OutcomeError(r.outcome, busName, r.message, perCall);
                 return;
               }
               ok[i] = true;
               for (ObjRef& child : RefsIn(r.value)) found[i].emplace_back(std::move(child.bus), std::move(child.path));
             });
    }
    b.Run();
    if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  }
  size_t okCount = 0;
  Error firstError;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!ok[i]) {
      if (!errs[i]) errs[i] = MakeError(ErrorCode::kTimeout, "the deadline passed before the children were read");
      if (!firstError) firstError = errs[i];
      continue;
    }
    ++okCount;
    out[i].ids.reserve(found[i].size());
    for (auto& c : found[i]) {
      out[i].ids.push_back(im.Intern(c.first, c.second));
      out[i].via.emplace_back();
    }
  }
  if (okCount == 0 && !ids.empty() && firstError.code == ErrorCode::kTimeout) return firstError;
  return {};
}

Error AtspiBackend::ChildrenAt(ElementId parent, const std::vector<int64_t>& indices, std::vector<ElementId>& out,
                               std::vector<Error>& errs, Clock::time_point deadline) {
  Impl& im = *impl_;
  out.assign(indices.size(), 0);
  errs.assign(indices.size(), Error{});
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(parent);
  if (!ref) return im.Unknown(parent);
  ContextScope scope(im.ctx.get());
  EnsurePeer(im, ref->bus, deadline);
  std::vector<std::pair<std::string, std::string>> found(indices.size());
  {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    b.UsePeers(&im.peers);
    const int perCall = b.PerCallMs();
    for (size_t i = 0; i < indices.size(); ++i) {
      b.Call(ref->bus, ref->path, kIfAccessible, "GetChildAtIndex", g_variant_new("(i)", gint32(indices[i])), "((so))",
             [&, i, perCall, busName = ref->bus](const Reply& r) {
               if (r.outcome != Outcome::kOk) {
                 errs[i] = OutcomeError(r.outcome, busName, r.message, perCall);
                 return;
               }
               const gchar *childBus = nullptr, *childPath = nullptr;
               g_variant_get(r.value, "((&s&o))", &childBus, &childPath);
               if (childBus && *childBus && std::strcmp(childPath, kNullPath) != 0) found[i] = {childBus, childPath};
             });
    }
    b.Run();
    if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!errs[i] && found[i].first.empty()) errs[i] = MakeError(ErrorCode::kElementGone, "no child at that index");
    if (!errs[i]) out[i] = im.Intern(found[i].first, found[i].second);
  }
  return {};
}
}  // namespace axsnap
