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
