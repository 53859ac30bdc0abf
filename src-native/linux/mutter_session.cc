// Mutter's RemoteDesktop + ScreenCast session (mutter_session.h). The call
// sequence follows mutter 43's interfaces (org.gnome.Mutter.RemoteDesktop,
// .RemoteDesktop.Session, .ScreenCast, .ScreenCast.Session, .ScreenCast.Stream):
// RemoteDesktop.CreateSession, its SessionId property, ScreenCast.CreateSession
// with remote-desktop-session-id, Session.RecordMonitor, RemoteDesktop
// Session.Start (which starts the linked cast), and the stream's
// PipeWireStreamAdded signal with the node id. GIO: g_dbus_connection_call,
// g_dbus_connection_signal_subscribe.
#include "mutter_session.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "glib_wait.h"

namespace axsnap {
namespace {

constexpr char kRd[] = "org.gnome.Mutter.RemoteDesktop";
constexpr char kRdPath[] = "/org/gnome/Mutter/RemoteDesktop";
constexpr char kRdSession[] = "org.gnome.Mutter.RemoteDesktop.Session";
constexpr char kSc[] = "org.gnome.Mutter.ScreenCast";
constexpr char kScPath[] = "/org/gnome/Mutter/ScreenCast";
constexpr char kScSession[] = "org.gnome.Mutter.ScreenCast.Session";
constexpr char kScStream[] = "org.gnome.Mutter.ScreenCast.Stream";
constexpr unsigned kShiftL = 0xffe1;

std::chrono::milliseconds Left(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

bool IsTimeout(const GError* e) {
  return g_error_matches(e, G_IO_ERROR, G_IO_ERROR_TIMED_OUT) || g_error_matches(e, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
         g_error_matches(e, G_DBUS_ERROR, G_DBUS_ERROR_NO_REPLY) ||
         g_error_matches(e, G_DBUS_ERROR, G_DBUS_ERROR_TIMEOUT) ||
         g_error_matches(e, G_DBUS_ERROR, G_DBUS_ERROR_TIMED_OUT);
}

// What a pending asynchronous call leaves behind: its callback may run after the wait gave up, so the
// state it writes is shared with it.
struct Pending {
  bool done = false;
  glib::VariantPtr reply;
  glib::ErrorPtr error;
};

}  // namespace

MutterSession::MutterSession(Source source) : source_(source), ctx_(g_main_context_new()) {}

MutterSession::~MutterSession() { Drop(true); }

void MutterSession::Drop(bool closeConnection) {
  if (conn_ && closedSub_) g_dbus_connection_signal_unsubscribe(conn_.get(), closedSub_);
  closedSub_ = 0;
  if (conn_ && !rdPath_.empty() && !owner_.empty() && !*closed_ && !g_dbus_connection_is_closed(conn_.get())) {
    // Stop without waiting: mutter also stops it when the connection goes. Sent to the compositor that
    // made it (its unique name), never to a successor that may have a session at the same path.
    g_dbus_connection_call(conn_.get(), owner_.c_str(), rdPath_.c_str(), kRdSession, "Stop", nullptr, nullptr,
                           G_DBUS_CALL_FLAGS_NO_AUTO_START, 200, nullptr, nullptr, nullptr);
  }
  rdPath_.clear();
  scPath_.clear();
  streamPath_.clear();
  nodeId_ = 0;
  owner_.clear();
  // A Closed signal of the old session still queued on the context must not mark the next one.
  closed_ = std::make_shared<bool>(false);
  if (closeConnection && conn_) {
    g_dbus_connection_close(conn_.get(), nullptr, nullptr, nullptr);
    conn_.reset();
  }
}

glib::VariantPtr MutterSession::Call(const char* dest, const char* path, const char* iface, const char* method,
                                     GVariant* args, const char* replyType, Clock::time_point deadline, Error& err) {
  glib::VariantPtr owned = glib::SinkVariant(args);
  err = {};
  if (!conn_) {
    err = {ErrorCode::kInternal, "no session bus connection"};
    return nullptr;
  }
  const auto left = Left(deadline);
  if (left.count() <= 0) {
    err = {ErrorCode::kTimeout, std::string("the deadline passed before ") + method};
    return nullptr;
  }
  glib::ContextScope scope(ctx_.get());
  auto pending = std::make_shared<Pending>();
  auto* holder = new std::shared_ptr<Pending>(pending);
  glib::GObj<GCancellable> cancel = glib::AdoptObject(g_cancellable_new());
  g_dbus_connection_call(
      conn_.get(), dest, path, iface, method, owned.get(), replyType ? G_VARIANT_TYPE(replyType) : nullptr,
      G_DBUS_CALL_FLAGS_NO_AUTO_START, static_cast<int>(left.count()) + 50, cancel.get(),
      [](GObject* src, GAsyncResult* res, gpointer data) {
        std::unique_ptr<std::shared_ptr<Pending>> h(static_cast<std::shared_ptr<Pending>*>(data));
        GError* raw = nullptr;
        (*h)->reply = glib::AdoptVariant(g_dbus_connection_call_finish(G_DBUS_CONNECTION(src), res, &raw));
        (*h)->error.reset(raw);
        (*h)->done = true;
      },
      holder);
  if (!glib::IterateUntil(ctx_.get(), left, [&] { return pending->done; })) {
    g_cancellable_cancel(cancel.get());
    err = {ErrorCode::kTimeout, std::string("GNOME's compositor did not answer ") + method + " in time"};
    return nullptr;
  }
  if (pending->error) {
    const GError* e = pending->error.get();
    if (IsTimeout(e)) {
      err = {ErrorCode::kTimeout, std::string("GNOME's compositor did not answer ") + method + " in time"};
    } else {
      g_dbus_error_strip_remote_error(pending->error.get());
      err = {ErrorCode::kActionFailed, std::string(method) + " failed: " + (e->message ? e->message : "")};
    }
    return nullptr;
  }
  return std::move(pending->reply);
}

std::string MutterSession::OwnerOf(const char* name, Clock::time_point deadline, Error& err) {
  glib::VariantPtr r = Call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                            g_variant_new("(s)", name), "(s)", deadline, err);
  if (!r) return {};
  const gchar* owner = nullptr;
  g_variant_get(r.get(), "(&s)", &owner);
  return owner ? owner : "";
}

Error MutterSession::Connect(Clock::time_point deadline) {
  if (conn_ && !g_dbus_connection_is_closed(conn_.get())) return {};
  Drop(true);
  const char* address = std::getenv("DBUS_SESSION_BUS_ADDRESS");
  if (!address || !*address)
    return {ErrorCode::kActionNotSupported, "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)"};
  glib::ContextScope scope(ctx_.get());
  const auto flags = static_cast<GDBusConnectionFlags>(G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                                       G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION);
  glib::Connected c = glib::ConnectAddress(ctx_.get(), address, flags, Left(deadline));
  if (c.timedOut) return {ErrorCode::kTimeout, "the session bus did not answer in time"};
  if (!c.conn)
    return {ErrorCode::kActionNotSupported,
            std::string("cannot connect to the session bus: ") + (c.error ? c.error->message : "unknown error")};
  conn_ = std::move(c.conn);
  return {};
}

bool MutterSession::Available(Clock::time_point deadline) {
  const char* wl = std::getenv("WAYLAND_DISPLAY");
  const char* type = std::getenv("XDG_SESSION_TYPE");
  if (!((wl && *wl) || (type && std::strcmp(type, "wayland") == 0))) return false;
  if (Connect(deadline)) return false;
  Error err;
  if (OwnerOf(kRd, deadline, err).empty()) return false;
  return !OwnerOf(kSc, deadline, err).empty();
}

Error MutterSession::Ensure(Clock::time_point deadline) {
  if (Error e = Connect(deadline)) return e;
  Error err;
  const std::string owner = OwnerOf(kRd, deadline, err);
  if (err.code == ErrorCode::kTimeout) return err;
  if (owner.empty())
    return {ErrorCode::kActionNotSupported,
            "GNOME's compositor offers no remote desktop here (org.gnome.Mutter.RemoteDesktop has no owner)"};
  if (!rdPath_.empty() && !*closed_ && owner == owner_) return {};
  // A new compositor (or a closed session): what the old one had is gone with it.
  Drop(false);
  owner_ = owner;
  if (Error e = Start(deadline)) {
    Drop(false);
    return e;
  }
  return {};
}

Error MutterSession::Start(Clock::time_point deadline) {
  Error err;
  glib::VariantPtr r = Call(kRd, kRdPath, kRd, "CreateSession", nullptr, "(o)", deadline, err);
  if (!r) return err;
  const gchar* path = nullptr;
  g_variant_get(r.get(), "(&o)", &path);
  rdPath_ = path;
  r = Call(kRd, rdPath_.c_str(), "org.freedesktop.DBus.Properties", "Get",
           g_variant_new("(ss)", kRdSession, "SessionId"), "(v)", deadline, err);
  if (!r) return err;
  glib::VariantPtr idv;
  {
    GVariant* inner = nullptr;
    g_variant_get(r.get(), "(v)", &inner);
    idv = glib::AdoptVariant(inner);
  }
  if (!g_variant_is_of_type(idv.get(), G_VARIANT_TYPE_STRING))
    return {ErrorCode::kActionFailed, "RemoteDesktop.Session's SessionId is not a string"};
  const std::string sessionId = g_variant_get_string(idv.get(), nullptr);

  GVariantBuilder opts;
  g_variant_builder_init(&opts, G_VARIANT_TYPE("a{sv}"));
  g_variant_builder_add(&opts, "{sv}", "remote-desktop-session-id", g_variant_new_string(sessionId.c_str()));
  r = Call(kSc, kScPath, kSc, "CreateSession", g_variant_new("(a{sv})", &opts), "(o)", deadline, err);
  if (!r) return err;
  g_variant_get(r.get(), "(&o)", &path);
  scPath_ = path;

  if (source_ == Source::kFocusedWindow) {
    g_variant_builder_init(&opts, G_VARIANT_TYPE("a{sv}"));
    g_variant_builder_add(&opts, "{sv}", "cursor-mode", g_variant_new_uint32(0));  // hidden: clean screenshots
    r = Call(kSc, scPath_.c_str(), kScSession, "RecordWindow", g_variant_new("(a{sv})", &opts), "(o)", deadline, err);
    if (!r) {
      // Mutter 43 answers "Window not found" when no window has focus (the Overview, the lock screen).
      if (err.code == ErrorCode::kActionFailed) err.message = "no window has keyboard focus: " + err.message;
      return err;
    }
  } else {
    // The first monitor by its connector (DisplayConfig), else "": RecordMonitor("") records the primary one.
    std::string connector;
    r = Call("org.gnome.Mutter.DisplayConfig", "/org/gnome/Mutter/DisplayConfig", "org.gnome.Mutter.DisplayConfig",
             "GetCurrentState", nullptr, nullptr, deadline, err);
    if (r && g_variant_n_children(r.get()) >= 3) {
      glib::VariantPtr monitors = glib::AdoptVariant(g_variant_get_child_value(r.get(), 1));
      if (g_variant_n_children(monitors.get()) > 0) {
        glib::VariantPtr m = glib::AdoptVariant(g_variant_get_child_value(monitors.get(), 0));
        glib::VariantPtr spec = glib::AdoptVariant(g_variant_get_child_value(m.get(), 0));
        glib::VariantPtr name = glib::AdoptVariant(g_variant_get_child_value(spec.get(), 0));
        if (g_variant_is_of_type(name.get(), G_VARIANT_TYPE_STRING))
          connector = g_variant_get_string(name.get(), nullptr);
      }
    } else if (err.code == ErrorCode::kTimeout) {
      return err;
    }
    g_variant_builder_init(&opts, G_VARIANT_TYPE("a{sv}"));
    g_variant_builder_add(&opts, "{sv}", "cursor-mode", g_variant_new_uint32(0));  // hidden: clean screenshots
    r = Call(kSc, scPath_.c_str(), kScSession, "RecordMonitor", g_variant_new("(sa{sv})", connector.c_str(), &opts),
             "(o)", deadline, err);
    if (!r) return err;
  }
  g_variant_get(r.get(), "(&o)", &path);
  streamPath_ = path;

  // The node id comes as a signal once the session starts: subscribe first, on this object's context. The
  // callbacks' data is shared, not on this stack: GDBus may still dispatch one after unsubscribing.
  glib::ContextScope scope(ctx_.get());
  struct Wait {
    uint32_t node = 0;
    bool got = false;
  };
  auto wait = std::make_shared<Wait>();
  const auto freeShared = [](gpointer p) { delete static_cast<std::shared_ptr<void>*>(p); };
  const guint added = g_dbus_connection_signal_subscribe(
      conn_.get(), owner_.c_str(), kScStream, "PipeWireStreamAdded", streamPath_.c_str(), nullptr,
      G_DBUS_SIGNAL_FLAGS_NONE,
      [](GDBusConnection*, const gchar*, const gchar*, const gchar*, const gchar*, GVariant* params, gpointer p) {
        auto& w = *std::static_pointer_cast<Wait>(*static_cast<std::shared_ptr<void>*>(p));
        if (g_variant_is_of_type(params, G_VARIANT_TYPE("(u)"))) {
          g_variant_get(params, "(u)", &w.node);
          w.got = true;
        }
      },
      new std::shared_ptr<void>(wait), freeShared);
  closedSub_ = g_dbus_connection_signal_subscribe(
      conn_.get(), owner_.c_str(), kRdSession, "Closed", rdPath_.c_str(), nullptr, G_DBUS_SIGNAL_FLAGS_NONE,
      [](GDBusConnection*, const gchar*, const gchar*, const gchar*, const gchar*, GVariant*, gpointer p) {
        *std::static_pointer_cast<bool>(*static_cast<std::shared_ptr<void>*>(p)) = true;
      },
      new std::shared_ptr<void>(closed_), freeShared);
  r = Call(kRd, rdPath_.c_str(), kRdSession, "Start", nullptr, nullptr, deadline, err);
  if (r) glib::IterateUntil(ctx_.get(), Left(deadline), [&] { return wait->got; });
  g_dbus_connection_signal_unsubscribe(conn_.get(), added);
  if (!r) return err;
  if (!wait->got) return {ErrorCode::kTimeout, "GNOME's compositor gave no PipeWire stream in time"};
  nodeId_ = wait->node;

  monitor_ = Rect{0, 0, 0, 0};
  r = Call(kSc, streamPath_.c_str(), "org.freedesktop.DBus.Properties", "Get",
           g_variant_new("(ss)", kScStream, "Parameters"), "(v)", deadline, err);
  if (r) {
    GVariant* inner = nullptr;
    g_variant_get(r.get(), "(v)", &inner);
    glib::VariantPtr params = glib::AdoptVariant(inner);
    int x = 0, y = 0, w = 0, h = 0;
    g_variant_lookup(params.get(), "position", "(ii)", &x, &y);
    g_variant_lookup(params.get(), "size", "(ii)", &w, &h);
    monitor_ = Rect{double(x), double(y), double(w), double(h)};
  }
  generation_++;
  // A window session is made for every call, keys or not: it taps only when keys follow (TapShift).
  if (source_ == Source::kMonitor) TapShift(deadline);
  return {};
}

void MutterSession::TapShift(Clock::time_point deadline) {
  // Chromium drops the first key of a new input session; a modifier tap takes that place.
  bool sent = false;
  if (Notify("NotifyKeyboardKeysym", g_variant_new("(ub)", kShiftL, TRUE), deadline, sent)) return;
  Notify("NotifyKeyboardKeysym", g_variant_new("(ub)", kShiftL, FALSE), deadline, sent);
}

Error MutterSession::Notify(const char* method, GVariant* args, Clock::time_point deadline, bool& sent) {
  glib::VariantPtr owned = glib::SinkVariant(args);
  sent = false;
  if (rdPath_.empty()) return {ErrorCode::kInputFailed, "no remote-desktop session"};
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, std::string("the deadline passed before ") + method};
  Error err;
  sent = true;  // from here the event may reach the compositor, whatever the reply
  // To the compositor that made the session (its unique name), never to a successor.
  glib::VariantPtr r = Call(owner_.c_str(), rdPath_.c_str(), kRdSession, method, owned.get(), nullptr, deadline, err);
  if (err.code == ErrorCode::kActionFailed) err.code = ErrorCode::kInputFailed;
  return err;
}

}  // namespace axsnap
