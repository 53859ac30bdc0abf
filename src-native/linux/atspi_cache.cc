// The bulk cache: one org.a11y.atspi.Cache.GetItems reply per app, indexed
// (BulkSnapshot), kept for bulkMaxAge, and the checks that say when it may
// stand in for live reads: an item's children only when it holds all of them,
// never near a document, never an app that serves another layout or too many
// objects.
//
// atk-bridge exposes GetItems only after some client has registered an event
// listener with the registry, and its child lists disagree with GetChildren
// in places. When enabled, it is used for role/name/description/states/
// interfaces, and for children where the checks allow. On by default
// (measured: 165 ms -> 75 ms per gtk3-widget-factory snapshot together with
// one-call action names); see SetUseBulkCache. The price: registering the
// listener makes apps emit events for the bus.
//
// Follows at-spi2-core xml/Cache.xml (GetItems, the a((so)(so)(so)iiassusau)
// item layout) and xml/Registry.xml (RegisterEvent).

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "atspi_internal.h"

namespace axsnap {
namespace atspi {

namespace {

// Indexes a GetItems reply of the (a((so)(so)(so)iiassusau)) layout, taking
// only what children and hidden states need, field by field (a 5,000-element
// page's reply is 5,000 items: decoding all of every item with one format
// string each cost ~60 ms, this ~10 ms).
void ParseBulk(VariantPtr reply, BulkSnapshot& out) {
  out.reply = std::move(reply);
  VariantPtr arr = AdoptVariant(g_variant_get_child_value(out.reply.get(), 0));
  const gsize n = g_variant_n_children(arr.get());
  out.items.reserve(n);
  for (gsize k = 0; k < n; ++k) {
    VariantPtr item = AdoptVariant(g_variant_get_child_value(arr.get(), k));
    auto field = [&item](gsize i) { return AdoptVariant(g_variant_get_child_value(item.get(), i)); };
    auto pathOf = [](GVariant* ref) {
      VariantPtr path = AdoptVariant(g_variant_get_child_value(ref, 1));
      return g_variant_get_string(path.get(), nullptr);
    };
    VariantPtr self = field(0), parentRef = field(2), index = field(3), count = field(4), name = field(6),
               role = field(7), desc = field(8), st = field(9);
    const gchar* objPath = pathOf(self.get());
    const gchar* parentPath = pathOf(parentRef.get());
    CacheItem c;
    c.role = g_variant_get_uint32(role.get());
    c.name = g_variant_get_string(name.get(), nullptr);
    c.description = g_variant_get_string(desc.get(), nullptr);
    if (parentPath && std::strcmp(parentPath, kNullPath) != 0) c.parent = parentPath;
    c.index = g_variant_get_int32(index.get());
    c.childCount = g_variant_get_int32(count.get());
    c.pos = static_cast<uint32_t>(k);
    gsize words = 0;
    const guint32* w = static_cast<const guint32*>(g_variant_get_fixed_array(st.get(), &words, sizeof(guint32)));
    for (gsize i = 0; i < words && i < 2; ++i) c.states.words[i] = w[i];
    out.items.insert_or_assign(std::string_view(objPath), c);
  }
  for (const auto& [path, c] : out.items)
    if (!c.parent.empty()) out.kids[c.parent].push_back(path);
  for (auto& [parent, kids] : out.kids)
    std::sort(kids.begin(), kids.end(),
              [&out](std::string_view a, std::string_view b) { return out.items.at(a).index < out.items.at(b).index; });
}

}  // namespace

// A document or the parent of one: its children are asked of the app. A page
// Chromium built while a client read it can stay out of the bridge's cache,
// or in it as an older document object (measured: a document item with 0
// children for good); the walk must reach the live page.
bool NearDocument(const BulkSnapshot& snap, const std::string& path, const std::vector<std::string_view>& kids) {
  if (auto self = snap.items.find(path); self != snap.items.end() && IsDocumentRole(self->second.role)) return true;
  for (std::string_view k : kids)
    if (IsDocumentRole(snap.items.at(k).role)) return true;
  return false;
}

// The children of `path` from a bulk snapshot, when the snapshot holds all of
// them (the app's child count, at indices 0..n-1): false otherwise (a parent
// whose children the bridge does not cache, such as a tree view's cells).
bool BulkChildren(const BulkSnapshot& snap, const std::string& path, std::vector<std::string_view>& out) {
  out.clear();
  auto self = snap.items.find(path);
  if (self == snap.items.end()) return false;
  if (self->second.childCount == 0) return true;
  auto kids = snap.kids.find(path);
  if (kids == snap.kids.end() || kids->second.size() != static_cast<size_t>(self->second.childCount)) return false;
  for (size_t i = 0; i < kids->second.size(); ++i)
    if (snap.items.at(kids->second[i]).index != static_cast<int32_t>(i)) return false;
  out = kids->second;
  return true;
}

// A GetItems answer kept as the app's bulk snapshot (taken at `taken`); null
// when there is none to keep. An app that does not serve it, is too slow, or
// answers another layout or too many objects is read live from then on.
const BulkSnapshot* KeepBulk(AtspiBackend::Impl& im, const std::string& busName, Outcome outcome, GVariant* value,
                             Clock::time_point taken, double tookMs) {
  if (outcome == Outcome::kFailed || outcome == Outcome::kNoReply) im.bulkUnsupported.insert(busName);
  // Too slow to be worth asking again: this answer is used, the next reads are live. (LibreOffice
  // answers in about 500 ms, every menu item of every menu included, and a walk longer than
  // bulkMaxAge asked again and again: 2 s of a 4 s snapshot of Calc.)
  if (tookMs > im.kBulkSlowMs) im.bulkUnsupported.insert(busName);
  if (outcome != Outcome::kOk) return nullptr;
  if (!g_variant_is_of_type(value, G_VARIANT_TYPE("(a((so)(so)(so)iiassusau))"))) {
    im.bulkUnsupported.insert(busName);
    return nullptr;
  }
  // Too big to be worth keeping: not parsed (a 50,000-element page's reply takes a second more).
  VariantPtr items = AdoptVariant(g_variant_get_child_value(value, 0));
  if (g_variant_n_children(items.get()) > im.kBulkMaxItems) {
    im.bulkUnsupported.insert(busName);
    return nullptr;
  }
  BulkSnapshot snap;
  snap.taken = taken;
  const Clock::time_point p0 = Clock::now();
  ParseBulk(AdoptVariant(g_variant_ref(value)), snap);
  im.stats.Add("GetItems (parse)", MsSince(p0));
  auto& slot = im.bulk[busName];
  slot = std::move(snap);
  return &slot;
}

const BulkSnapshot* FreshBulk(AtspiBackend::Impl& im, const std::string& busName, Clock::time_point deadline) {
  TakePrefetch(im, busName, /*waitBulk=*/true, deadline);
  if (!im.useBulk || im.live || im.bulkUnsupported.count(busName)) return nullptr;
  auto kept = im.bulk.find(busName);
  if (kept != im.bulk.end() && im.BulkFresh(busName, kept->second)) return &kept->second;
  if (!im.registeredForCache) {
    // The bridge only serves GetItems once someone listens for events.
    im.registeredForCache = true;
    Outcome o;
    std::string msg;
    im.CallSync(kRegistryBus, kRegistryPath, "org.a11y.atspi.Registry", "RegisterEvent",
                g_variant_new("(s@ass)", "object:children-changed", g_variant_new_strv(nullptr, 0), ""), nullptr,
                deadline, o, msg);
  }
  const BulkSnapshot* out = nullptr;
  EnsurePeer(im, busName, deadline);
  Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
  b.UsePeers(&im.peers);
  const Clock::time_point sent = Clock::now();
  b.Call(
      busName, kCachePath, kIfCache, "GetItems", nullptr, nullptr,
      [&](const Reply& r) { out = KeepBulk(im, busName, r.outcome, r.value, Clock::now(), MsSince(sent)); },
      /*soft=*/true);
  b.Run();
  return out;
}

}  // namespace atspi
}  // namespace axsnap
