// See atspi_events.h for the contract.
#include "atspi_events.h"
#include "glib_ref.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace axsnap {
namespace atspi {
// From atspi_internal.h, which this file does not include (its registry names collide with these).
std::string ErrorWords(const GError* e, const std::string& what);
}  // namespace atspi
namespace {

using namespace glib;  // NOLINT: the RAII helpers are used throughout

constexpr const char* kRegistryBus = "org.a11y.atspi.Registry";
constexpr const char* kRegistryPath = "/org/a11y/atspi/registry";
constexpr const char* kRegistryIface = "org.a11y.atspi.Registry";
constexpr const char* kAppRoot = "/org/a11y/atspi/accessible/root";
constexpr const char* kEventPrefix = "org.a11y.atspi.Event.";
constexpr size_t kRecent = 16;
// Probes (see atspi_events.h): GTK's slide transitions last up to about a second.
constexpr size_t kProbes = 4;
constexpr auto kProbeFor = std::chrono::milliseconds(2500);
constexpr auto kProbeEvery = std::chrono::milliseconds(50);
constexpr auto kBurstGap = std::chrono::milliseconds(100);
// About twice the longest gap between Chromium's update batches on a page that never stops changing (see
// atspi_events.h), so such a page is never quiet; one more batch interval than a settled page needs.
constexpr double kBatchedQuietMs = 400;
// An app that did not say its toolkit at Watch (stopped, busy) is asked again this often, this briefly.
constexpr auto kToolkitRetryEvery = std::chrono::seconds(2);
constexpr auto kToolkitRetryFor = std::chrono::milliseconds(150);

bool Tracing() {
  static const bool on = [] {
    const char* v = std::getenv("AXSNAP_EVENT_TRACE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

void Trace(const char* cls, const char* member, const std::string& detail, const char* path) {
  const double t = std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
  std::fprintf(stderr, "TRACE %.1f %s %s %s %s\n", t, cls, member, detail.empty() ? "-" : detail.c_str(), path);
}

// The interfaces whose signals count as changes.
constexpr const char* kInterfaces[] = {"org.a11y.atspi.Event.Object", "org.a11y.atspi.Event.Window",
                                       "org.a11y.atspi.Event.Document"};

// The event classes registered with the registry. atk-bridge compares them
// segment by segment, an empty segment matching anything ("window:" = every
// window event). "object:children-changed" is never deregistered: the bulk
// cache registered it too, and DeregisterEvent removes every registration of
// a name by our connection.
constexpr const char* kClasses[] = {"object:children-changed",
                                    "object:state-changed",
                                    "object:property-change",
                                    "object:text-changed",
                                    "object:selection-changed",
                                    "object:active-descendant-changed",
                                    "object:visible-data-changed",
                                    "window:",
                                    "document:"};
constexpr const char* kKeptClass = "object:children-changed";

int TimeoutMs(Clock::time_point deadline, int cap) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left, cap)));
}

// "ChildrenChanged" -> "children-changed".
std::string Kebab(const char* member) {
  std::string out;
  for (const char* p = member; *p; ++p) {
    if (std::isupper(static_cast<unsigned char>(*p))) {
      if (!out.empty()) out.push_back('-');
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(*p))));
    } else {
      out.push_back(*p);
    }
  }
  return out;
}

// The first argument of an AT-SPI event signal (siiva{sv}): its detail ("add", "checked", "accessible-name").
std::string Detail(GVariant* params) {
  if (!params || !g_variant_is_of_type(params, G_VARIANT_TYPE_TUPLE) || g_variant_n_children(params) < 1) return {};
  VariantPtr first(g_variant_get_child_value(params, 0));
  if (!g_variant_is_of_type(first.get(), G_VARIANT_TYPE_STRING)) return {};
  return g_variant_get_string(first.get(), nullptr);
}

// The second argument of an AT-SPI event signal (detail1: 1 = a state set), or -1.
int Detail1(GVariant* params) {
  if (!params || !g_variant_is_of_type(params, G_VARIANT_TYPE_TUPLE) || g_variant_n_children(params) < 2) return -1;
  VariantPtr v(g_variant_get_child_value(params, 1));
  if (!g_variant_is_of_type(v.get(), G_VARIANT_TYPE_INT32)) return -1;
  return g_variant_get_int32(v.get());
}

// The object path in a children-changed event's any_data (a variant holding (so)), or "".
std::string ChildPath(GVariant* params) {
  if (!params || g_variant_n_children(params) < 4) return {};
  VariantPtr any(g_variant_get_child_value(params, 3));
  if (!g_variant_is_of_type(any.get(), G_VARIANT_TYPE_VARIANT)) return {};
  VariantPtr inner(g_variant_get_variant(any.get()));
  if (!g_variant_is_of_type(inner.get(), G_VARIANT_TYPE("(so)"))) return {};
  const gchar* bus = nullptr;
  const gchar* path = nullptr;
  g_variant_get(inner.get(), "(&s&o)", &bus, &path);
  return path ? path : "";
}

}  // namespace

AtspiEvents::~AtspiEvents() { Drop(); }

bool AtspiEvents::Watching(int64_t pid, GDBusConnection* conn) const {
  auto it = apps_.find(pid);
  return it != apps_.end() && !it->second->subs.empty() && conn_ == conn && conn && !g_dbus_connection_is_closed(conn);
}

void AtspiEvents::Count(App& app, const char* path, const char* iface, const char* member, GVariant* params) {
  const char* cls = iface + std::strlen(kEventPrefix);
  std::string kind;
  for (const char* p = cls; *p; ++p) kind.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(*p))));
  kind += ":" + Kebab(member);
  const std::string detail = Detail(params);
  if (!detail.empty()) kind += ":" + detail;

  // Events about windows, menus, popups and dialogs: the window class (but
  // moves and resizes), the app's list of windows changing (GTK3 adds and
  // removes popup menus and dialogs there), and a window of the app being
  // shown, hidden, activated or iconified.
  bool window = false;
  if (std::strcmp(cls, "Window") == 0) {
    window = std::strcmp(member, "Move") != 0 && std::strcmp(member, "Resize") != 0;
  } else if (std::strcmp(cls, "Object") == 0 && std::strcmp(member, "ChildrenChanged") == 0 &&
             std::strcmp(path, kAppRoot) == 0) {
    window = true;
    const std::string child = ChildPath(params);
    if (!child.empty()) {
      if (detail.rfind("add", 0) == 0) app.toplevels.insert(child);
      if (detail.rfind("remove", 0) == 0) app.toplevels.erase(child);
    }
  } else if (std::strcmp(cls, "Object") == 0 && std::strcmp(member, "StateChanged") == 0 &&
             (detail == "showing" || detail == "visible" || detail == "active" || detail == "iconified") &&
             app.toplevels.count(path)) {
    window = true;
  }
  // Newly shown content (a stack page, a popover) may still slide into place without events: probe it.
  if (std::strcmp(cls, "Object") == 0 && std::strcmp(member, "StateChanged") == 0 && detail == "showing" &&
      Detail1(params) == 1 && std::strcmp(path, kAppRoot) != 0) {
    const Clock::time_point now = Clock::now();
    // The first few of the latest burst (a page maps its container first, then the children).
    if (!app.probes.empty() && now - app.probes.back().added > kBurstGap) app.probes.clear();
    if (app.probes.size() < kProbes) app.probes.push_back(Probe{path, now});
  }
  Counted(app, std::move(kind), window);
}

void AtspiEvents::Counted(App& app, std::string kind, bool window) {
  app.stamp++;
  if (window) app.windowStamp++;
  app.any = true;
  app.last = Clock::now();
  app.recent.push_back(std::move(kind));
  while (app.recent.size() > kRecent) app.recent.pop_front();
}

bool AtspiEvents::ProbesMoved(App& app, Clock::time_point until) {
  const Clock::time_point now = Clock::now();
  app.probes.erase(
      std::remove_if(app.probes.begin(), app.probes.end(), [&](const Probe& p) { return now - p.added > kProbeFor; }),
      app.probes.end());
  bool moved = false;
  for (Probe& p : app.probes) {
    const int timeout = TimeoutMs(until, 100);
    if (timeout <= 0) break;
    GError* raw = nullptr;
    VariantPtr r(g_dbus_connection_call_sync(conn_, app.bus.c_str(), p.path.c_str(), "org.a11y.atspi.Component",
                                             "GetExtents", g_variant_new("(u)", 0u), G_VARIANT_TYPE("((iiii))"),
                                             G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout, nullptr, &raw));
    ErrorPtr err(raw);
    if (!r) {
      p.read = false;
      continue;
    }
    gint32 x = 0, y = 0, w = 0, h = 0;
    g_variant_get(r.get(), "((iiii))", &x, &y, &w, &h);
    if (p.read && (x != p.x || y != p.y || w != p.w || h != p.h)) {
      moved = true;
      if (Tracing()) Trace("Object", "BoundsChanged", "probe", p.path.c_str());
    }
    p.read = true;
    p.x = x;
    p.y = y;
    p.w = w;
    p.h = h;
  }
  return moved;
}

void AtspiEvents::OnSignal(GDBusConnection*, const gchar*, const gchar* path, const gchar* iface, const gchar* member,
                           GVariant* params, gpointer data) {
  if (!path || !iface || !member || std::strncmp(iface, kEventPrefix, std::strlen(kEventPrefix)) != 0) return;
  // Not a change of what a snapshot shows: an animation (gtk3-widget-factory's progress bar and spinner)
  // sends bounds-changed about 170 times a second, so an app would never be quiet, and every GTK button
  // press sends it for ~300 ms without moving. Frames that move with real changes come with children-changed
  // or state-changed, and content that slides in is probed (see atspi_events.h). (Not registered either;
  // this drops those another listener made the app send.)
  if (std::strcmp(member, "BoundsChanged") == 0) return;
  // property-change also carries toolkit-internal properties ("widget", "renderer": GTK sends them while it
  // makes cell accessibles for a reader, i.e. because we read): only the accessible-* ones (name,
  // description, value, role, parent, table caption...) are changes of what an agent sees.
  if (std::strcmp(member, "PropertyChange") == 0 && Detail(params).rfind("accessible-", 0) != 0) return;
  if (Tracing()) Trace(iface + std::strlen(kEventPrefix), member, Detail(params), path);
  Count(*static_cast<App*>(data), path, iface, member, params);
}

void AtspiEvents::Register(Clock::time_point deadline) {
  if (registered_ || !conn_) return;
  registered_ = true;
  // at-spi2-core 2.34+ takes (event, properties, app bus name); older
  // registries only (event). Ask the new way first, fall back once refused.
  bool oldSignature = false;
  for (const char* cls : kClasses) {
    const int timeout = TimeoutMs(deadline, 800);
    if (timeout <= 0) return;
    for (int attempt = 0; attempt < 2; ++attempt) {
      GVariant* params =
          oldSignature ? g_variant_new("(s)", cls) : g_variant_new("(s@ass)", cls, g_variant_new_strv(nullptr, 0), "");
      GError* raw = nullptr;
      VariantPtr r(g_dbus_connection_call_sync(conn_, kRegistryBus, kRegistryPath, kRegistryIface, "RegisterEvent",
                                               params, nullptr, G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout, nullptr,
                                               &raw));
      ErrorPtr err(raw);
      if (r) break;
      const bool refused = err && err->domain == G_DBUS_ERROR &&
                           (err->code == G_DBUS_ERROR_INVALID_ARGS || err->code == G_DBUS_ERROR_UNKNOWN_METHOD);
      if (!refused || oldSignature) {
        // The registry does not answer (or is gone): best effort, stop asking.
        if (err && (g_error_matches(err.get(), G_IO_ERROR, G_IO_ERROR_TIMED_OUT) ||
                    g_error_matches(err.get(), G_IO_ERROR, G_IO_ERROR_CLOSED)))
          return;
        break;
      }
      oldSignature = true;
    }
  }
}

void AtspiEvents::Deregister() {
  if (!registered_ || !conn_) return;
  registered_ = false;
  if (g_dbus_connection_is_closed(conn_)) return;
  // Fire and forget: nothing waits for the answers (a closed connection or a
  // gone registry just drops them), so Unwatch never blocks.
  for (const char* cls : kClasses) {
    if (std::strcmp(cls, kKeptClass) == 0) continue;
    g_dbus_connection_call(conn_, kRegistryBus, kRegistryPath, kRegistryIface, "DeregisterEvent",
                           g_variant_new("(s)", cls), nullptr, G_DBUS_CALL_FLAGS_NO_AUTO_START, 1000, nullptr, nullptr,
                           nullptr);
  }
}

void AtspiEvents::Relearn(int64_t pid, Clock::time_point deadline) {
  auto it = apps_.find(pid);
  if (it == apps_.end() || it->second->toolkitKnown || it->second->subs.empty()) return;
  App& app = *it->second;
  const Clock::time_point now = Clock::now();
  if (now < app.nextToolkitAsk) return;
  LearnToolkit(app, std::min(deadline, now + kToolkitRetryFor));
}

void AtspiEvents::LearnToolkit(App& app, Clock::time_point deadline) {
  app.nextToolkitAsk = Clock::now() + kToolkitRetryEvery;
  std::optional<std::string> toolkit = ToolkitName(app.bus, deadline);
  if (!toolkit) return;
  app.toolkitKnown = true;
  // Lowercase: Chromium says "Chromium"; a branded build may say more.
  for (char& ch : *toolkit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  app.quietFloorMs = toolkit->find("chromium") != std::string::npos ? kBatchedQuietMs : 0;
}

std::optional<std::string> AtspiEvents::ToolkitName(const std::string& busName, Clock::time_point deadline) {
  const int timeout = TimeoutMs(deadline, 500);
  if (timeout <= 0) return std::nullopt;
  GError* raw = nullptr;
  VariantPtr r(g_dbus_connection_call_sync(conn_, busName.c_str(), kAppRoot, "org.freedesktop.DBus.Properties", "Get",
                                           g_variant_new("(ss)", "org.a11y.atspi.Application", "ToolkitName"),
                                           G_VARIANT_TYPE("(v)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout, nullptr,
                                           &raw));
  ErrorPtr err(raw);
  // No answer in time (stopped, busy): unknown, asked again at the next watch. An error reply is an answer.
  if (!r) return err && err->domain == G_DBUS_ERROR ? std::optional<std::string>("") : std::nullopt;
  VariantPtr boxed(g_variant_get_child_value(r.get(), 0));
  VariantPtr name(g_variant_get_variant(boxed.get()));
  if (!g_variant_is_of_type(name.get(), G_VARIANT_TYPE_STRING)) return std::string();
  return std::string(g_variant_get_string(name.get(), nullptr));
}

void AtspiEvents::Unsubscribe(App& app) {
  for (guint id : app.subs)
    if (conn_) g_dbus_connection_signal_unsubscribe(conn_, id);
  app.subs.clear();
}

Error AtspiEvents::Watch(GDBusConnection* conn, GMainContext* ctx, int64_t pid, const std::string& busName,
                         Clock::time_point deadline) {
  if (!conn || g_dbus_connection_is_closed(conn))
    return {ErrorCode::kNoAccessibilityBus, "the accessibility bus connection is closed"};
  if (busName.empty() || busName[0] != ':')
    return {ErrorCode::kAppNotFound, "no bus name for app pid " + std::to_string(pid)};
  if (conn_ != conn) {
    Drop();
    conn_ = static_cast<GDBusConnection*>(g_object_ref(conn));
  }
  std::unique_ptr<App>& slot = apps_[pid];
  if (!slot) slot = std::make_unique<App>();
  App& app = *slot;
  if (!app.subs.empty() && app.bus == busName) return {};
  // The name must still be this pid's: after the bus restarted, unique names start over and an old
  // ":1.12" may now be another app. The bus daemon answers this even when the app is stopped.
  {
    const int timeout = TimeoutMs(deadline, 800);
    GError* raw = nullptr;
    VariantPtr r(timeout <= 0 ? nullptr
                              : g_dbus_connection_call_sync(
                                    conn_, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                    "GetConnectionUnixProcessID", g_variant_new("(s)", busName.c_str()),
                                    G_VARIANT_TYPE("(u)"), G_DBUS_CALL_FLAGS_NONE, timeout, nullptr, &raw));
    ErrorPtr err(raw);
    guint32 owner = 0;
    if (r) g_variant_get(r.get(), "(u)", &owner);
    if (!r && timeout <= 0) return {ErrorCode::kTimeout, "the deadline passed before the app could be watched"};
    if (!r && err && err->domain == G_DBUS_ERROR)
      return {ErrorCode::kAppNotFound, "app pid " + std::to_string(pid) + " is no longer on the accessibility bus"};
    if (!r)
      return {ErrorCode::kNoAccessibilityBus,
              "the bus did not answer: " +
                  (err ? atspi::ErrorWords(err.get(), "GetConnectionUnixProcessID") : std::string("?"))};
    if (static_cast<int64_t>(owner) != pid)
      return {ErrorCode::kAppNotFound, "the bus name known for pid " + std::to_string(pid) + " is another app's now"};
  }
  Unsubscribe(app);
  app.bus = busName;
  app.toplevels.clear();
  app.toolkitKnown = false;
  LearnToolkit(app, deadline);

  Register(deadline);
  {
    // Callbacks are dispatched on the thread-default context at subscription time: ours.
    ContextScope scope(ctx);
    for (const char* iface : kInterfaces)
      app.subs.push_back(g_dbus_connection_signal_subscribe(conn_, busName.c_str(), iface, nullptr, nullptr, nullptr,
                                                            G_DBUS_SIGNAL_FLAGS_NONE, &AtspiEvents::OnSignal, &app,
                                                            nullptr));
  }
  // The app's windows (for the window events), and a round trip that the app
  // answers only after it has handled the registry's EventListenerRegistered
  // (the registry sent that before answering us).
  const int timeout = TimeoutMs(deadline, 800);
  if (timeout > 0) {
    GError* raw = nullptr;
    VariantPtr r(g_dbus_connection_call_sync(conn_, busName.c_str(), kAppRoot, "org.a11y.atspi.Accessible",
                                             "GetChildren", nullptr, G_VARIANT_TYPE("(a(so))"),
                                             G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout, nullptr, &raw));
    ErrorPtr err(raw);
    if (r) {
      VariantPtr list(g_variant_get_child_value(r.get(), 0));
      GVariantIter iter;
      g_variant_iter_init(&iter, list.get());
      const gchar* bus = nullptr;
      const gchar* path = nullptr;
      while (g_variant_iter_next(&iter, "(&s&o)", &bus, &path))
        if (path) app.toplevels.insert(path);
    } else if (err && err->domain == G_DBUS_ERROR &&
               (err->code == G_DBUS_ERROR_SERVICE_UNKNOWN || err->code == G_DBUS_ERROR_NAME_HAS_NO_OWNER)) {
      Unsubscribe(app);
      return {ErrorCode::kAppNotFound, "the app (pid " + std::to_string(pid) + ") left the accessibility bus"};
    }
    // No answer (stopped, busy): watching anyway; its events come when it runs again.
  }
  return {};
}

Error AtspiEvents::Wait(GMainContext* ctx, int64_t pid, uint64_t since, Clock::time_point until, AppEventState& out) {
  auto it = apps_.find(pid);
  if (it == apps_.end())
    return {ErrorCode::kInvalidArgument, "not watching app pid " + std::to_string(pid) + " (call watch first)"};
  App& app = *it->second;
  auto fill = [&](bool watching) {
    out.watching = watching;
    out.stamp = app.stamp;
    out.windowStamp = app.windowStamp;
    out.msSinceLast = app.any ? std::chrono::duration<double, std::milli>(Clock::now() - app.last).count() : -1;
    out.recent.assign(app.recent.begin(), app.recent.end());
    out.quietFloorMs = app.quietFloorMs;
  };
  auto closed = [&]() { return app.subs.empty() || !conn_ || g_dbus_connection_is_closed(conn_); };
  ContextScope scope(ctx);
  for (;;) {
    // Everything already queued first (bounded: a flood cannot keep us here).
    for (int i = 0; i < 10000 && g_main_context_iteration(ctx, FALSE); ++i) {
    }
    if (closed()) {
      fill(false);
      return {ErrorCode::kNoAccessibilityBus,
              "the accessibility bus connection was closed while waiting for events; watch the app again"};
    }
    Clock::time_point now = Clock::now();
    if (app.stamp > since || now >= until) break;
    // Newly shown content still moving counts as an event.
    if (!app.probes.empty() && now >= app.nextProbe) {
      if (ProbesMoved(app, until)) Counted(app, "object:bounds-changed:probe", false);
      now = Clock::now();
      app.nextProbe = now + kProbeEvery;
      if (app.stamp > since || now >= until) break;
    }
    // Block for the next event, in slices, so a closed connection is noticed even if nothing wakes us.
    Clock::time_point wake = std::min(until, now + std::chrono::milliseconds(50));
    if (!app.probes.empty()) wake = std::min(wake, app.nextProbe);
    const auto slice = std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count());
    SourcePtr timer(g_timeout_source_new(static_cast<guint>(slice)));
    g_source_set_callback(
        timer.get(), [](gpointer) -> gboolean { return G_SOURCE_REMOVE; }, nullptr, nullptr);
    g_source_attach(timer.get(), ctx);
    g_main_context_iteration(ctx, TRUE);
  }
  fill(true);
  return {};
}

void AtspiEvents::Unwatch(int64_t pid) {
  auto it = apps_.find(pid);
  if (it == apps_.end()) return;
  Unsubscribe(*it->second);
  apps_.erase(it);
  bool any = false;
  for (const auto& entry : apps_) any = any || !entry.second->subs.empty();
  if (!any) Deregister();
}

void AtspiEvents::Drop() {
  for (auto& entry : apps_) Unsubscribe(*entry.second);
  registered_ = false;
  if (conn_) {
    g_object_unref(conn_);
    conn_ = nullptr;
  }
}

}  // namespace axsnap
