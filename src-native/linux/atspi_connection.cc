// The connection: the session bus, org.a11y.Bus.GetAddress (or
// AT_SPI_BUS_ADDRESS), a private connection to the accessibility bus,
// org.a11y.Status.IsEnabled, reconnecting when the bus went away (Ready),
// and the direct (peer-to-peer) connections to apps that a walk's calls use
// instead of the bus daemon.
//
// Follows at-spi2-core's bus launcher interface (org.a11y.Bus, org.a11y.Status
// in xml/Bus.xml, with the AT_SPI_BUS_ADDRESS override) and
// xml/Application.xml (GetApplicationBusAddress); the D-Bus specification for
// the session bus address (DBUS_SESSION_BUS_ADDRESS); GIO's
// g_dbus_connection_new_for_address.

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "atspi_internal.h"
#include "glib_wait.h"

namespace axsnap {
namespace atspi {

namespace {

constexpr char kNoSessionBus[] =
    "no D-Bus session bus: start one (dbus-daemon --session) and export DBUS_SESSION_BUS_ADDRESS";

// Connects to `address` with the given flags, bounded by `timeout`.
GObj<GDBusConnection> OpenBus(GMainContext* ctx, const char* address, GDBusConnectionFlags flags,
                              std::chrono::milliseconds timeout, std::string& message, bool& timedOutOut) {
  timedOutOut = false;
  if (timeout.count() <= 0) {
    timedOutOut = true;
    message = "the deadline passed before connecting to " + std::string(address);
    return nullptr;
  }
  glib::Connected c = glib::ConnectAddress(ctx, address, flags, timeout);
  if (c.timedOut) {
    message = "timed out connecting to " + std::string(address);
    timedOutOut = true;
    return nullptr;
  }
  if (!c.conn) message = ErrorWords(c.error.get(), "");
  return std::move(c.conn);
}

}  // namespace

// Opens the app's direct connection once (Peers): its address from
// Application.GetApplicationBusAddress, at most 300 ms in all. An app without
// one, or that does not answer, is read over the bus, and not asked again.
// Takes what the app's Prefetch brought first (one still opening is not
// waited for: the calls go over the bus meanwhile).
void EnsurePeer(AtspiBackend::Impl& im, const std::string& busName, Clock::time_point deadline) {
  // A bulk read still out is waited for: the app answers nothing else meanwhile (a big page's
  // takes a second), so calls sent beside it could time out, as they never did when it went alone.
  TakePrefetch(im, busName, /*waitBulk=*/true, deadline);
  if (!im.usePeers) return;
  if (im.peers.For(busName) || im.peers.none.count(busName)) return;
  // Being opened in the background: these calls go over the bus meanwhile.
  if (auto it = im.prefetch.find(busName); it != im.prefetch.end() && it->second->peerPending) return;
  im.peers.conns.erase(busName);  // closed: the app went away, or its socket did
  const Clock::time_point until = std::min(deadline, Clock::now() + std::chrono::milliseconds(300));
  Outcome o;
  std::string msg;
  VariantPtr r = im.CallSync(busName, kRootPath, "org.a11y.atspi.Application", "GetApplicationBusAddress", nullptr,
                             "(s)", until, o, msg);
  const gchar* address = nullptr;
  if (r) g_variant_get(r.get(), "(&s)", &address);
  if (!address || !*address) {
    im.peers.none.insert(busName);
    return;
  }
  bool timedOut = false;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
  GObj<GDBusConnection> conn =
      OpenBus(im.ctx.get(), address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT, left, msg, timedOut);
  if (!conn) {
    im.peers.none.insert(busName);
    return;
  }
  im.peers.conns[busName] = std::move(conn);
}

// EnsurePeer for the apps of these elements, and what their bridges survive.
void EnsurePeersFor(AtspiBackend::Impl& im, const std::vector<ElementId>& ids, Clock::time_point deadline) {
  std::unordered_set<std::string> seen;
  for (ElementId id : ids)
    if (const ObjRef* ref = im.Lookup(id); ref && seen.insert(ref->bus).second) {
      EnsurePeer(im, ref->bus, deadline);
      // Its dialect says what its bridge survives (Impl::GetAllUnsafe); no answer in time leaves it unknown,
      // asked again by the next read (GetAll is not sent meanwhile).
      DialectOf(im, ref->bus, std::min(deadline, Clock::now() + std::chrono::milliseconds(300)));
    }
}

}  // namespace atspi

Error AtspiBackend::Connect() { return ConnectWithin(Clock::now() + std::chrono::milliseconds(5000)); }

Error AtspiBackend::ConnectWithin(Clock::time_point deadline) {
  Impl& im = *impl_;
  ContextScope scope(im.ctx.get());
  im.Disconnect();
  im.ForgetReadState();
  // Names on a new bus connection may be reused by other apps: no old handle may reach them.
  im.ForgetHandles();
  im.bulkUnsupported.clear();
  im.registeredForCache = false;

  const auto flags = static_cast<GDBusConnectionFlags>(G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                       G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION);
  auto left = [&]() {
    return std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
  };
  std::string message;
  bool timedOut = false;

  // The session bus: GetAddress of the accessibility bus, and IsEnabled.
  GObj<GDBusConnection> session;
  std::string sessionFailure;
  const char* sessionAddr = std::getenv("DBUS_SESSION_BUS_ADDRESS");
  if (sessionAddr && *sessionAddr) {
    const int64_t budget = left();
    session = OpenBus(im.ctx.get(), sessionAddr, flags, std::chrono::milliseconds(budget), message, timedOut);
    if (!session)
      sessionFailure = timedOut ? "the D-Bus session bus at " + std::string(sessionAddr) + " did not answer within " +
                                      std::to_string(budget) + " ms (is it stopped or overloaded?)"
                                : std::string(kNoSessionBus) + " (" + message + ")";
  }

  std::string a11yAddr;
  std::string overrideFailure;
  const char* overrideAddr = std::getenv("AT_SPI_BUS_ADDRESS");
  if (overrideAddr && *overrideAddr) {
    im.bus = OpenBus(im.ctx.get(), overrideAddr, flags, std::chrono::milliseconds(left()), message, timedOut);
    if (!im.bus)
      overrideFailure = "AT_SPI_BUS_ADDRESS=" + std::string(overrideAddr) + ": " +
                        (timedOut ? "the accessibility bus did not answer in time" : message) + "; ";
  }

  if (!im.bus) {
    if (!session)
      return MakeError(ErrorCode::kNoAccessibilityBus,
                       overrideFailure + (sessionFailure.empty() ? std::string(kNoSessionBus) : sessionFailure));
    GError* raw = nullptr;
    const int timeout = static_cast<int>(std::min<int64_t>(left(), 2000));
    GVariant* r = timeout <= 0 ? nullptr
                               : g_dbus_connection_call_sync(
                                     session.get(), "org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress",
                                     nullptr, G_VARIANT_TYPE("(s)"), G_DBUS_CALL_FLAGS_NONE, timeout, nullptr, &raw);
    ErrorPtr err(raw);
    VariantPtr reply = AdoptVariant(r);
    if (!reply) {
      g_dbus_connection_close_sync(session.get(), nullptr, nullptr);
      const bool noAnswer = timeout <= 0 || ClassifyError(err.get()) == Outcome::kNoReply;
      return MakeError(ErrorCode::kNoAccessibilityBus,
                       overrideFailure +
                           (noAnswer ? "the session bus did not answer org.a11y.Bus.GetAddress before the deadline "
                                       "(the accessibility bus launcher may be starting or stopped)"
                                     : "no accessibility bus: org.a11y.Bus.GetAddress failed (" +
                                           (err ? ErrorWords(err.get(), "org.a11y.Bus.GetAddress") : std::string("?")) +
                                           "); is at-spi2-core installed and at-spi-bus-launcher running?"));
    }
    const gchar* addr = nullptr;
    g_variant_get(reply.get(), "(&s)", &addr);
    a11yAddr = addr ? addr : "";
    if (a11yAddr.empty()) {
      g_dbus_connection_close_sync(session.get(), nullptr, nullptr);
      return MakeError(ErrorCode::kNoAccessibilityBus,
                       "no accessibility bus: org.a11y.Bus.GetAddress returned nothing");
    }
    im.bus = OpenBus(im.ctx.get(), a11yAddr.c_str(), flags, std::chrono::milliseconds(left()), message, timedOut);
    if (!im.bus) {
      g_dbus_connection_close_sync(session.get(), nullptr, nullptr);
      return MakeError(ErrorCode::kNoAccessibilityBus,
                       "cannot connect to the accessibility bus at " + a11yAddr + ": " +
                           (timedOut ? "it did not answer before the deadline" : message));
    }
  }

  if (session) {
    // Chromium and Qt expose their trees only when assistive technology is on.
    // Best effort (GTK does not need it), and never past the deadline.
    const int timeout = static_cast<int>(std::min<int64_t>(left(), 1000));
    if (timeout > 0) {
      GError* raw = nullptr;
      GVariant* r = g_dbus_connection_call_sync(
          session.get(), "org.a11y.Bus", "/org/a11y/bus", kIfProperties, "Set",
          g_variant_new("(ssv)", "org.a11y.Status", "IsEnabled", g_variant_new_boolean(TRUE)), nullptr,
          G_DBUS_CALL_FLAGS_NONE, timeout, nullptr, &raw);
      ErrorPtr err(raw);
      VariantPtr reply = AdoptVariant(r);
    }
    g_dbus_connection_close_sync(session.get(), nullptr, nullptr);
  }
  im.everConnected = true;
  return {};
}

Error AtspiBackend::Ready(Clock::time_point deadline) {
  Impl& im = *impl_;
  if (im.bus && !g_dbus_connection_is_closed(im.bus.get())) return {};
  if (!im.everConnected) return im.CheckConnected();
  // The accessibility bus (or the session bus) went away since: connect again, within this call's deadline.
  if (Error err = ConnectWithin(deadline))
    return MakeError(err.code, "the accessibility bus connection was closed and reconnecting failed: " + err.message);
  return {};
}
}  // namespace axsnap
