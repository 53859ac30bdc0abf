// A walk's first reads of an app, started while the window is still being
// chosen (ExpectWalk, PrepareWalk): its direct connection (the address, then
// connecting) and its bulk read (RegisterEvent when none is registered yet,
// then Cache.GetItems), so that they overlap window choice instead of each
// going first, one after another, in a fresh process. The walk's reads take
// what came (TakePrefetch) or wait for the rest.
//
// Follows at-spi2-core xml/Application.xml (GetApplicationBusAddress),
// xml/Registry.xml (RegisterEvent) and xml/Cache.xml (GetItems); GIO's
// asynchronous GDBusConnection calls (g_dbus_connection_new_for_address).

#include <algorithm>
#include <memory>
#include <string>

#include "atspi_internal.h"
#include "glib_wait.h"

namespace axsnap {
namespace atspi {

namespace {

void PrefetchBulk(const PrefetchPtr& st);

void PeerDone(const PrefetchPtr& st, GObj<GDBusConnection> conn) {
  if (!st->peerPending) return;
  st->peerPending = false;
  g_cancellable_cancel(st->peerCancel.get());  // the timer's way: a connect still under way stops
  st->peer = std::move(conn);
  st->peerTimer.reset();
  PrefetchBulk(st);
}

void OnPrefetchConnected(GObject*, GAsyncResult* res, gpointer data) {
  std::unique_ptr<PrefetchPtr> h(static_cast<PrefetchPtr*>(data));
  GError* raw = nullptr;
  GObj<GDBusConnection> conn = AdoptObject(g_dbus_connection_new_for_address_finish(res, &raw));
  ErrorPtr err(raw);
  if (conn) g_dbus_connection_set_exit_on_close(conn.get(), FALSE);
  PeerDone(*h, std::move(conn));
}

void OnPrefetchAddress(GObject* source, GAsyncResult* res, gpointer data) {
  std::unique_ptr<PrefetchPtr> h(static_cast<PrefetchPtr*>(data));
  const PrefetchPtr& st = *h;
  GError* raw = nullptr;
  VariantPtr r = AdoptVariant(g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &raw));
  ErrorPtr err(raw);
  st->addressMs = MsSince(st->started);
  const gchar* address = nullptr;
  if (r) g_variant_get(r.get(), "(&s)", &address);
  if (st->dropped || !st->peerPending || !address || !*address) return PeerDone(st, nullptr);
  ContextScope scope(st->ctx.get());
  g_dbus_connection_new_for_address(address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT, nullptr,
                                    st->peerCancel.get(), OnPrefetchConnected, new PrefetchPtr(st));
}

void OnPrefetchRegistered(GObject* source, GAsyncResult* res, gpointer data) {
  std::unique_ptr<PrefetchPtr> h(static_cast<PrefetchPtr*>(data));
  const PrefetchPtr& st = *h;
  GError* raw = nullptr;
  VariantPtr r = AdoptVariant(g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &raw));
  ErrorPtr err(raw);
  st->registerMs = MsSince(st->started);
  st->registerPending = false;
  PrefetchBulk(st);
}

void OnPrefetchBulk(GObject* source, GAsyncResult* res, gpointer data) {
  std::unique_ptr<PrefetchPtr> h(static_cast<PrefetchPtr*>(data));
  const PrefetchPtr& st = *h;
  GError* raw = nullptr;
  st->bulkReply = AdoptVariant(g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &raw));
  ErrorPtr err(raw);
  st->bulkMs = MsSince(st->bulkSent);
  st->bulkAt = Clock::now();
  st->bulkDone = true;
  if (st->bulkReply)
    st->bulkOutcome = Outcome::kOk;
  else if (g_error_matches(err.get(), G_IO_ERROR, G_IO_ERROR_CANCELLED))
    st->bulkOutcome = Outcome::kDeadline;
  else
    st->bulkOutcome = ClassifyError(err.get());
}

// GetItems once the listener is registered: on the direct connection when it
// is open by then, else over the bus (no dispatch may come between, so the
// connection's completion is not waited for: the app would sit idle).
void PrefetchBulk(const PrefetchPtr& st) {
  if (!st->wantBulk || st->bulkIssued || st->registerPending) return;
  st->bulkIssued = true;
  const int timeout = TimeoutMs(st->deadline, st->perCall);
  if (st->dropped || timeout <= 0) {
    st->bulkDone = true;
    st->bulkOutcome = Outcome::kDeadline;
    return;
  }
  GDBusConnection* conn = st->peer && !g_dbus_connection_is_closed(st->peer.get()) ? st->peer.get() : nullptr;
  st->bulkSent = Clock::now();
  ContextScope scope(st->ctx.get());
  g_dbus_connection_call(conn ? conn : st->busConn.get(), conn ? nullptr : st->bus.c_str(), kCachePath, kIfCache,
                         "GetItems", nullptr, nullptr, G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout, st->cancel.get(),
                         OnPrefetchBulk, new PrefetchPtr(st));
}

}  // namespace

// Takes what the app's Prefetch brought so far: its direct connection, its
// bulk snapshot. `waitBulk`: waits for the bulk read still out first (until
// `deadline`). Whatever is still under way is left to finish.
void TakePrefetch(AtspiBackend::Impl& im, const std::string& busName, bool waitBulk, Clock::time_point deadline) {
  auto it = im.prefetch.find(busName);
  if (it == im.prefetch.end()) return;
  PrefetchPtr st = it->second;
  if (waitBulk && st->wantBulk && !st->bulkDone && !st->bulkStale) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    glib::IterateUntil(im.ctx.get(), left, [&] { return st->bulkDone; });
  }
  if (st->peerTried && !st->peerPending) {
    st->peerTried = false;
    if (st->addressMs >= 0) im.stats.Add("GetApplicationBusAddress", st->addressMs);
    if (st->peer && !g_dbus_connection_is_closed(st->peer.get()))
      im.peers.conns[busName] = std::move(st->peer);
    else
      im.peers.none.insert(busName);
  }
  if (st->wantBulk && st->bulkDone) {
    st->wantBulk = false;
    if (st->registerMs >= 0) im.stats.Add("RegisterEvent", st->registerMs);
    im.stats.Add("GetItems", st->bulkMs);
    if (!st->bulkStale) KeepBulk(im, busName, st->bulkOutcome, st->bulkReply.get(), st->bulkAt, st->bulkMs);
    st->bulkReply.reset();
  }
  if (!st->Busy()) im.prefetch.erase(busName);
}

// Starts the reads a walk of the app begins with (Prefetch), unless there is
// nothing to start: a direct connection open or known absent, a fresh bulk
// snapshot (or none to be had).
void StartPrefetch(AtspiBackend::Impl& im, const std::string& busName, Clock::time_point deadline) {
  if (im.prefetch.count(busName)) return;
  const bool wantPeer = im.usePeers && !im.peers.For(busName) && !im.peers.none.count(busName);
  auto kept = im.bulk.find(busName);
  const bool wantBulk = im.useBulk && !im.live && !im.bulkUnsupported.count(busName) &&
                        !(kept != im.bulk.end() && im.BulkFresh(busName, kept->second));
  if (!wantPeer && !wantBulk) return;
  auto st = std::make_shared<Prefetch>();
  st->bus = busName;
  st->ctx.reset(g_main_context_ref(im.ctx.get()));
  st->busConn.reset(G_DBUS_CONNECTION(g_object_ref(im.bus.get())));
  st->deadline = deadline;
  st->perCall = im.PerCall(deadline);
  st->wantBulk = wantBulk;
  im.prefetch[busName] = st;
  if (wantPeer) {
    im.peers.conns.erase(busName);  // closed: the app went away, or its socket did
    st->peerPending = st->peerTried = true;
    // As EnsurePeer: at most 300 ms for the address and the connection together.
    const auto until = std::min(deadline, Clock::now() + std::chrono::milliseconds(300));
    const int timeout = std::max(1, TimeoutMs(until, im.PerCall(until)));
    st->peerTimer.reset(g_timeout_source_new(static_cast<guint>(timeout)));
    g_source_set_callback(
        st->peerTimer.get(),
        [](gpointer p) -> gboolean {
          PeerDone(static_cast<Prefetch*>(p)->shared_from_this(), nullptr);
          return G_SOURCE_REMOVE;
        },
        st.get(), nullptr);
    g_source_attach(st->peerTimer.get(), im.ctx.get());
    g_dbus_connection_call(im.bus.get(), busName.c_str(), kRootPath, "org.a11y.atspi.Application",
                           "GetApplicationBusAddress", nullptr, G_VARIANT_TYPE("(s)"), G_DBUS_CALL_FLAGS_NO_AUTO_START,
                           timeout, st->peerCancel.get(), OnPrefetchAddress, new PrefetchPtr(st));
  }
  if (wantBulk && !im.registeredForCache) {
    // The bridge only serves GetItems once someone listens for events.
    im.registeredForCache = true;
    st->registerPending = true;
    g_dbus_connection_call(im.bus.get(), kRegistryBus, kRegistryPath, "org.a11y.atspi.Registry", "RegisterEvent",
                           g_variant_new("(s@ass)", "object:children-changed", g_variant_new_strv(nullptr, 0), ""),
                           nullptr, G_DBUS_CALL_FLAGS_NO_AUTO_START, std::max(1, TimeoutMs(deadline, st->perCall)),
                           st->cancel.get(), OnPrefetchRegistered, new PrefetchPtr(st));
  }
  PrefetchBulk(st);
}

// Waits (at most one call timeout) for the app's Prefetch to hear the event
// listener registered, so that its GetItems goes out now: nothing else may
// dispatch its replies until the walk's first read (window choice goes on
// with X11), and the app would sit idle meanwhile.
void AwaitPrefetchRegistration(AtspiBackend::Impl& im, const std::string& busName, Clock::time_point deadline) {
  auto it = im.prefetch.find(busName);
  if (it == im.prefetch.end() || !it->second->registerPending) return;
  PrefetchPtr st = it->second;
  const auto until = std::min(deadline, Clock::now() + im.PerCall(deadline));
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  glib::IterateUntil(im.ctx.get(), left, [&] { return !st->registerPending; });
}

}  // namespace atspi

void AtspiBackend::ExpectWalk(const AppInfo& app) {
  const ObjRef* ref = impl_->Lookup(app.element);
  impl_->walkExpected = ref ? ref->bus : std::string();
  impl_->walkSince = Clock::now();
  impl_->walkBus = impl_->walkExpected;
}

void AtspiBackend::PrepareWalk(const AppInfo&, const WindowInfo& window, Clock::time_point deadline,
                               std::vector<std::string>&, bool&) {
  Impl& im = *impl_;
  im.walkExpected.clear();
  if (im.CheckConnected()) return;
  const ObjRef* ref = im.Lookup(window.element);
  if (!ref) return;
  im.walkBus = ref->bus;
  ContextScope scope(im.ctx.get());
  StartPrefetch(im, ref->bus, deadline);
}
}  // namespace axsnap
