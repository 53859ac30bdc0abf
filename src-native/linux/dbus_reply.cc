// Reading D-Bus replies: how a failed call is classified (the app is slow,
// gone, refused, or the bus closed) and the error each outcome becomes; the
// values inside a reply (a property's variant, extents, numbers, a{sv} and
// a{ss} dictionaries); the object references of an a(so) list.
//
// Follows the D-Bus specification (error names, org.freedesktop.DBus.Properties),
// GIO's GDBusError/GIOErrorEnum for the errors GDBus reports locally, and GLib's
// GVariant format strings; object references and the null path are AT-SPI's
// (at-spi2-core xml/Accessible.xml).

#include <cstring>
#include <string>
#include <vector>

#include "atspi_internal.h"

namespace axsnap {
namespace atspi {

Error MakeError(ErrorCode code, std::string message) { return Error{code, std::move(message)}; }

Outcome ClassifyError(const GError* e) {
  if (!e) return Outcome::kFailed;
  // dbus-daemon answers NoReply when the app's connection closes with the call pending (it exited):
  // that app is gone, not slow.
  if (g_error_matches(e, G_DBUS_ERROR, G_DBUS_ERROR_NO_REPLY) && e->message &&
      std::strstr(e->message, "disconnected from message bus"))
    return Outcome::kGone;
  if (g_error_matches(e, G_IO_ERROR, G_IO_ERROR_TIMED_OUT) || g_error_matches(e, G_DBUS_ERROR, G_DBUS_ERROR_NO_REPLY) ||
      g_error_matches(e, G_DBUS_ERROR, G_DBUS_ERROR_TIMEOUT) ||
      g_error_matches(e, G_DBUS_ERROR, G_DBUS_ERROR_TIMED_OUT))
    return Outcome::kNoReply;
  if (g_error_matches(e, G_IO_ERROR, G_IO_ERROR_CLOSED) || g_error_matches(e, G_DBUS_ERROR, G_DBUS_ERROR_DISCONNECTED))
    return Outcome::kBusClosed;
  if (g_error_matches(e, G_DBUS_ERROR, G_DBUS_ERROR_SERVICE_UNKNOWN) ||
      g_error_matches(e, G_DBUS_ERROR, G_DBUS_ERROR_NAME_HAS_NO_OWNER) ||
      g_error_matches(e, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_OBJECT))
    return Outcome::kGone;
  if (g_dbus_error_is_remote_error(e)) {
    CharPtr remote(g_dbus_error_get_remote_error(e));
    if (remote && (std::strcmp(remote.get(), "org.freedesktop.DBus.Error.UnknownObject") == 0 ||
                   std::strcmp(remote.get(), "org.freedesktop.DBus.Error.ServiceUnknown") == 0 ||
                   std::strcmp(remote.get(), "org.freedesktop.DBus.Error.NameHasNoOwner") == 0))
      return Outcome::kGone;
  }
  return Outcome::kFailed;
}

namespace {

bool IsRemote(const GError* e, const char* name) {
  if (!g_dbus_error_is_remote_error(e)) return false;
  CharPtr remote(g_dbus_error_get_remote_error(e));
  return remote && std::strcmp(remote.get(), name) == 0;
}

}  // namespace

std::string CallWhat(const char* iface, const char* method, GVariant* params) {
  const auto shortName = [](const char* name) {
    const char* prefix = "org.a11y.atspi.";
    return std::strncmp(name, prefix, std::strlen(prefix)) == 0 ? std::string(name + std::strlen(prefix))
                                                                : std::string(name);
  };
  if (!iface || !method) return "";
  // A property is what a Properties call is about: "Table.NSelectedRows", not "Properties.Get".
  if (std::strcmp(iface, "org.freedesktop.DBus.Properties") == 0 && params &&
      g_variant_is_of_type(params, G_VARIANT_TYPE_TUPLE) && g_variant_n_children(params) >= 2) {
    VariantPtr i = AdoptVariant(g_variant_get_child_value(params, 0));
    VariantPtr n = AdoptVariant(g_variant_get_child_value(params, 1));
    if (g_variant_is_of_type(i.get(), G_VARIANT_TYPE_STRING) && g_variant_is_of_type(n.get(), G_VARIANT_TYPE_STRING))
      return shortName(g_variant_get_string(i.get(), nullptr)) + "." + g_variant_get_string(n.get(), nullptr);
  }
  return shortName(iface) + "." + method;
}

std::string ErrorWords(const GError* e, const std::string& what) {
  if (!e) return "unknown error";
  const std::string call = what.empty() ? "the call" : what;
  const auto is = [e](int code, const char* remote) {
    return g_error_matches(e, G_DBUS_ERROR, code) || IsRemote(e, remote);
  };
  if (is(G_DBUS_ERROR_UNKNOWN_METHOD, "org.freedesktop.DBus.Error.UnknownMethod") ||
      is(G_DBUS_ERROR_UNKNOWN_INTERFACE, "org.freedesktop.DBus.Error.UnknownInterface") ||
      is(G_DBUS_ERROR_UNKNOWN_PROPERTY, "org.freedesktop.DBus.Error.UnknownProperty"))
    return "the element does not offer " + call;
  if (is(G_DBUS_ERROR_INVALID_ARGS, "org.freedesktop.DBus.Error.InvalidArgs"))
    return "the app did not accept " + call + " here";
  if (is(G_DBUS_ERROR_NAME_HAS_NO_OWNER, "org.freedesktop.DBus.Error.NameHasNoOwner") ||
      is(G_DBUS_ERROR_SERVICE_UNKNOWN, "org.freedesktop.DBus.Error.ServiceUnknown"))
    return "its app is no longer on the bus (it exited)";
  if (is(G_DBUS_ERROR_UNKNOWN_OBJECT, "org.freedesktop.DBus.Error.UnknownObject"))
    return "the app no longer has this element";
  if (is(G_DBUS_ERROR_NO_REPLY, "org.freedesktop.DBus.Error.NoReply"))
    return e->message && std::strstr(e->message, "disconnected from message bus")
               ? "the app left the bus before answering (it exited)"
               : "the app did not answer " + call;
  if (is(G_DBUS_ERROR_TIMEOUT, "org.freedesktop.DBus.Error.Timeout") ||
      is(G_DBUS_ERROR_TIMED_OUT, "org.freedesktop.DBus.Error.TimedOut") ||
      g_error_matches(e, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    return "the app did not answer " + call + " in time";
  if (is(G_DBUS_ERROR_ACCESS_DENIED, "org.freedesktop.DBus.Error.AccessDenied"))
    return "the bus refused " + call + " (access denied)";
  if (g_error_matches(e, G_IO_ERROR, G_IO_ERROR_CLOSED) || g_error_matches(e, G_DBUS_ERROR, G_DBUS_ERROR_DISCONNECTED))
    return "the bus connection closed";
  if (g_dbus_error_is_remote_error(e)) {
    // The app's own words, without the D-Bus error name in front.
    ErrorPtr copy(g_error_copy(e));
    g_dbus_error_strip_remote_error(copy.get());
    return "the app answered " + call + " with an error" +
           (copy->message && *copy->message ? ": " + std::string(copy->message) : std::string());
  }
  return e->message ? e->message : "unknown error";
}

// Unwraps "(v)" -> the inner value (a new reference), or null.
VariantPtr UnwrapV(GVariant* reply) {
  if (!reply || !g_variant_is_of_type(reply, G_VARIANT_TYPE("(v)"))) return nullptr;
  VariantPtr boxed = AdoptVariant(g_variant_get_child_value(reply, 0));
  return AdoptVariant(g_variant_get_variant(boxed.get()));
}

// A Component.GetExtents reply, "((iiii))".
Rect RectOf(GVariant* reply) {
  gint32 x = 0, y = 0, w = 0, h = 0;
  g_variant_get(reply, "((iiii))", &x, &y, &w, &h);
  return Rect{double(x), double(y), double(w), double(h)};
}

bool VariantToDouble(GVariant* v, double& out) {
  if (!v) return false;
  if (g_variant_is_of_type(v, G_VARIANT_TYPE_DOUBLE))
    out = g_variant_get_double(v);
  else if (g_variant_is_of_type(v, G_VARIANT_TYPE_INT32))
    out = g_variant_get_int32(v);
  else if (g_variant_is_of_type(v, G_VARIANT_TYPE_UINT32))
    out = g_variant_get_uint32(v);
  else if (g_variant_is_of_type(v, G_VARIANT_TYPE_INT64))
    out = static_cast<double>(g_variant_get_int64(v));
  else
    return false;
  return true;
}

bool VariantToInt(GVariant* v, int64_t& out) {
  if (!v) return false;
  if (g_variant_is_of_type(v, G_VARIANT_TYPE_INT32))
    out = g_variant_get_int32(v);
  else if (g_variant_is_of_type(v, G_VARIANT_TYPE_UINT32))
    out = g_variant_get_uint32(v);
  else if (g_variant_is_of_type(v, G_VARIANT_TYPE_INT64))
    out = g_variant_get_int64(v);
  else
    return false;
  return true;
}

// Looks a string up in an a{sv}; false when absent or not a string.
bool DictString(GVariant* dict, const char* key, std::string& out) {
  VariantPtr v = AdoptVariant(g_variant_lookup_value(dict, key, G_VARIANT_TYPE_STRING));
  if (!v) return false;
  out = g_variant_get_string(v.get(), nullptr);
  return true;
}

// Looks a string up in an a{ss}.
bool AttrString(GVariant* attrs, const char* key, std::string& out) {
  if (!attrs || !g_variant_is_of_type(attrs, G_VARIANT_TYPE("a{ss}"))) return false;
  const gchar* s = nullptr;
  if (!g_variant_lookup(attrs, key, "&s", &s)) return false;
  out = s;
  return true;
}

Error OutcomeError(Outcome o, const std::string& busName, const std::string& message, int timeoutMs) {
  switch (o) {
    case Outcome::kOk: return {};
    case Outcome::kNoReply:
      return MakeError(ErrorCode::kAppUnresponsive,
                       "application " + busName + " did not answer within " + std::to_string(timeoutMs) + " ms");
    case Outcome::kGone: return MakeError(ErrorCode::kElementGone, "the element no longer exists (" + message + ")");
    case Outcome::kDeadline:
      return MakeError(ErrorCode::kTimeout, "the deadline passed before " + busName + " answered");
    case Outcome::kBusClosed:
      return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed: " + message);
    case Outcome::kFailed: break;
  }
  return MakeError(ErrorCode::kInternal, message);
}

// The objects of an `(a(so))` reply (GetChildren, GetMatches): a null reference
// (the root path, or no bus name) names nothing and is left out.
std::optional<ObjRef> RefOf(GVariant* reply) {
  const gchar* bus = nullptr;
  const gchar* path = nullptr;
  g_variant_get(reply, "((&s&o))", &bus, &path);
  if (!bus || !*bus || !path || std::strcmp(path, kNullPath) == 0) return std::nullopt;
  return ObjRef{bus, path};
}

std::vector<ObjRef> RefsIn(GVariant* reply) {
  std::vector<ObjRef> out;
  VariantPtr arr = AdoptVariant(g_variant_get_child_value(reply, 0));
  GVariantIter it;
  g_variant_iter_init(&it, arr.get());
  const gchar* busName = nullptr;
  const gchar* path = nullptr;
  while (g_variant_iter_next(&it, "(&s&o)", &busName, &path))
    if (busName && *busName && std::strcmp(path, kNullPath) != 0) out.push_back(ObjRef{busName, path});
  return out;
}

}  // namespace atspi
}  // namespace axsnap
