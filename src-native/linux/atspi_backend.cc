// AT-SPI over GDBus. See atspi_backend.h for the contract.
//
// How a batch works: every D-Bus call of an operation is issued at once with
// g_dbus_connection_call() (replies may arrive in any order); a call's reply
// handler may issue follow-up calls (for example the extents of a node once
// its interfaces are known). The operation then iterates the backend's
// private GMainContext until no call is outstanding. Each call's timeout is
// min(per-call timeout, time left to the deadline). The first call to an app
// that gets no reply marks that app unresponsive for the rest of the batch:
// its outstanding calls are cancelled and later calls to it are not sent, so
// a stopped app costs one timeout, not one per call.
//
// Reply handlers hold a shared reference to the batch state. If a batch ends
// with calls still outstanding (only when GDBus fails to report a
// cancellation in time), their late replies find the state closed and are
// dropped, so no handler ever touches a finished operation.
//
// Calls per node (live): GetRole, GetState, GetInterfaces and
// Properties.GetAll(Accessible) (name, description, accessible id, help
// text, attributes, child count); then, by interface, Component.GetExtents,
// Action.GetActions (one call, all names), Value.CurrentValue, Text.CharacterCount (+
// GetText, + GetSelection on the focused element), Document.GetAttributes,
// Hyperlink.GetURI. A node whose ChildCount was 0 in a read moments ago is
// not asked for its children again.
//
// Bulk cache (org.a11y.atspi.Cache.GetItems): atk-bridge exposes it only
// after some client has registered an event listener with the registry, and
// its child lists disagree with GetChildren in places. When enabled, it is
// used for role/name/description/states/interfaces only; children are always
// read live. On by default (measured: 165 ms → 75 ms per gtk3-widget-factory
// snapshot together with one-call action names); see SetUseBulkCache. The
// price: registering the listener makes apps emit events for the bus.

#include "atspi_backend.h"
#include "../core/secret_names.h"
#include "../core/walk.h"
#include "atspi_events.h"
#include "glib_ref.h"

#include <gio/gio.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace axsnap {
namespace {

using namespace glib;  // NOLINT: the RAII helpers are used throughout

// ---------------------------------------------------------------------------
// AT-SPI constants (at-spi2-core xml/ and atspi-constants.h).

constexpr char kRegistryBus[] = "org.a11y.atspi.Registry";
constexpr char kRootPath[] = "/org/a11y/atspi/accessible/root";
constexpr char kNullPath[] = "/org/a11y/atspi/null";
constexpr char kCachePath[] = "/org/a11y/atspi/cache";
constexpr char kRegistryPath[] = "/org/a11y/atspi/registry";

constexpr char kIfAccessible[] = "org.a11y.atspi.Accessible";
constexpr char kIfAction[] = "org.a11y.atspi.Action";
constexpr char kIfComponent[] = "org.a11y.atspi.Component";
constexpr char kIfDocument[] = "org.a11y.atspi.Document";
constexpr char kIfEditableText[] = "org.a11y.atspi.EditableText";
constexpr char kIfHyperlink[] = "org.a11y.atspi.Hyperlink";
constexpr char kIfText[] = "org.a11y.atspi.Text";
constexpr char kIfValue[] = "org.a11y.atspi.Value";
constexpr char kIfCache[] = "org.a11y.atspi.Cache";
constexpr char kIfTable[] = "org.a11y.atspi.Table";
constexpr char kIfTableCell[] = "org.a11y.atspi.TableCell";
constexpr char kIfProperties[] = "org.freedesktop.DBus.Properties";

// Bits for the interfaces an object reports (GetInterfaces).
enum IfaceBit : uint32_t {
  kHasAction = 1u << 0,
  kHasComponent = 1u << 1,
  kHasDocument = 1u << 2,
  kHasEditableText = 1u << 3,
  kHasHyperlink = 1u << 4,
  kHasText = 1u << 5,
  kHasValue = 1u << 6,
  kHasTable = 1u << 7,
};

uint32_t IfaceBitOf(const char* name) {
  static const std::pair<const char*, uint32_t> kMap[] = {
      {kIfAction, kHasAction},       {kIfComponent, kHasComponent},
      {kIfDocument, kHasDocument},   {kIfEditableText, kHasEditableText},
      {kIfHyperlink, kHasHyperlink}, {kIfText, kHasText},
      {kIfValue, kHasValue},         {kIfTable, kHasTable},
  };
  for (const auto& e : kMap)
    if (std::strcmp(e.first, name) == 0) return e.second;
  return 0;
}

uint32_t IfaceBits(GVariant* as) {  // "as"
  uint32_t bits = 0;
  GVariantIter it;
  g_variant_iter_init(&it, as);
  const gchar* name = nullptr;
  while (g_variant_iter_next(&it, "&s", &name)) bits |= IfaceBitOf(name);
  return bits;
}

// AtspiStateType values.
enum State : int {
  kStateActive = 1,
  kStateChecked = 4,
  kStateEditable = 7,
  kStateEnabled = 8,
  kStateExpandable = 9,
  kStateExpanded = 10,
  kStateFocusable = 11,
  kStateFocused = 12,
  kStateHorizontal = 14,
  kStateIconified = 15,
  kStateModal = 16,
  kStateMultiLine = 17,
  kStateSelectable = 22,
  kStateSelected = 23,
  kStateShowing = 25,
  kStateVertical = 29,
  kStateVisible = 30,
  kStateManagesDescendants = 31,
  kStateIndeterminate = 32,
  kStateRequired = 33,
  kStateCheckable = 41,
  kStateReadOnly = 43,
};

struct StateSet {
  uint32_t words[2] = {0, 0};
  bool Has(int s) const { return s >= 0 && s < 64 && (words[s / 32] & (1u << (s % 32))) != 0; }
};

StateSet StatesFrom(GVariant* au) {  // "au"
  StateSet set;
  gsize n = g_variant_n_children(au);
  for (gsize i = 0; i < n && i < 2; ++i) {
    VariantPtr w = AdoptVariant(g_variant_get_child_value(au, i));
    set.words[i] = g_variant_get_uint32(w.get());
  }
  return set;
}

// AtspiRole values, named as atspi_role_get_name() names them.
constexpr const char* kRoleNames[] = {
    "invalid",                // 0
    "accelerator label",      // 1
    "alert",                  // 2
    "animation",              // 3
    "arrow",                  // 4
    "calendar",               // 5
    "canvas",                 // 6
    "check box",              // 7
    "check menu item",        // 8
    "color chooser",          // 9
    "column header",          // 10
    "combo box",              // 11
    "date editor",            // 12
    "desktop icon",           // 13
    "desktop frame",          // 14
    "dial",                   // 15
    "dialog",                 // 16
    "directory pane",         // 17
    "drawing area",           // 18
    "file chooser",           // 19
    "filler",                 // 20
    "focus traversable",      // 21
    "font chooser",           // 22
    "frame",                  // 23
    "glass pane",             // 24
    "html container",         // 25
    "icon",                   // 26
    "image",                  // 27
    "internal frame",         // 28
    "label",                  // 29
    "layered pane",           // 30
    "list",                   // 31
    "list item",              // 32
    "menu",                   // 33
    "menu bar",               // 34
    "menu item",              // 35
    "option pane",            // 36
    "page tab",               // 37
    "page tab list",          // 38
    "panel",                  // 39
    "password text",          // 40
    "popup menu",             // 41
    "progress bar",           // 42
    "push button",            // 43
    "radio button",           // 44
    "radio menu item",        // 45
    "root pane",              // 46
    "row header",             // 47
    "scroll bar",             // 48
    "scroll pane",            // 49
    "separator",              // 50
    "slider",                 // 51
    "spin button",            // 52
    "split pane",             // 53
    "status bar",             // 54
    "table",                  // 55
    "table cell",             // 56
    "table column header",    // 57
    "table row header",       // 58
    "tearoff menu item",      // 59
    "terminal",               // 60
    "text",                   // 61
    "toggle button",          // 62
    "tool bar",               // 63
    "tool tip",               // 64
    "tree",                   // 65
    "tree table",             // 66
    "unknown",                // 67
    "viewport",               // 68
    "window",                 // 69
    "extended",               // 70
    "header",                 // 71
    "footer",                 // 72
    "paragraph",              // 73
    "ruler",                  // 74
    "application",            // 75
    "autocomplete",           // 76
    "editbar",                // 77
    "embedded",               // 78
    "entry",                  // 79
    "chart",                  // 80
    "caption",                // 81
    "document frame",         // 82
    "heading",                // 83
    "page",                   // 84
    "section",                // 85
    "redundant object",       // 86
    "form",                   // 87
    "link",                   // 88
    "input method window",    // 89
    "table row",              // 90
    "tree item",              // 91
    "document spreadsheet",   // 92
    "document presentation",  // 93
    "document text",          // 94
    "document web",           // 95
    "document email",         // 96
    "comment",                // 97
    "list box",               // 98
    "grouping",               // 99
    "image map",              // 100
    "notification",           // 101
    "info bar",               // 102
    "level bar",              // 103
    "title bar",              // 104
    "block quote",            // 105
    "audio",                  // 106
    "video",                  // 107
    "definition",             // 108
    "article",                // 109
    "landmark",               // 110
    "log",                    // 111
    "marquee",                // 112
    "math",                   // 113
    "rating",                 // 114
    "timer",                  // 115
    "static",                 // 116
    "math fraction",          // 117
    "math root",              // 118
    "subscript",              // 119
    "superscript",            // 120
    "description list",       // 121
    "description term",       // 122
    "description value",      // 123
    "footnote",               // 124
    "content deletion",       // 125
    "content insertion",      // 126
    "mark",                   // 127
    "suggestion",             // 128
    "push button menu",       // 129
};
constexpr uint32_t kRoleCount = sizeof(kRoleNames) / sizeof(kRoleNames[0]);
static_assert(kRoleCount == 130, "AtspiRole table out of step with atspi-constants.h (ATSPI_ROLE_COUNT)");

enum Role : uint32_t {
  kRoleAlert = 2,
  kRoleCheckBox = 7,
  kRoleCheckMenuItem = 8,
  kRoleColorChooser = 9,
  kRoleDialog = 16,
  kRoleFileChooser = 19,
  kRoleFontChooser = 22,
  kRoleFrame = 23,
  kRolePasswordText = 40,
  kRoleProgressBar = 42,
  kRoleRadioButton = 44,
  kRoleRadioMenuItem = 45,
  kRoleToggleButton = 62,
  kRoleWindow = 69,
  kRoleLink = 88,
  kRoleLevelBar = 103,
};

std::string RoleName(uint32_t role) {
  if (role < kRoleCount) return kRoleNames[role];
  return "unknown";
}

// The walk's row roles (IsRowRole) by role number, for the bulk cache's every child without a string each.
bool IsRowRoleId(uint32_t role) {
  static const std::vector<bool> rows = [] {
    std::vector<bool> v(kRoleCount);
    for (uint32_t r = 0; r < kRoleCount; ++r) v[r] = IsRowRole(kRoleNames[r]);
    return v;
  }();
  return role < kRoleCount && rows[role];
}

bool IsWindowRole(uint32_t role) {
  switch (role) {
    case kRoleFrame:
    case kRoleWindow:
    case kRoleDialog:
    case kRoleAlert:
    case kRoleFileChooser:
    case kRoleColorChooser:
    case kRoleFontChooser: return true;
    default: return false;
  }
}

bool IsCheckableRole(uint32_t role) {
  return role == kRoleCheckBox || role == kRoleCheckMenuItem || role == kRoleRadioButton ||
         role == kRoleRadioMenuItem || role == kRoleToggleButton;
}

constexpr int64_t kMaxTextChars = 10000;
// Outstanding calls per batch; the rest wait in a queue. A call's timeout
// runs from when it is sent, so the window must stay small enough that the
// app (which answers in order) gets through it well within one timeout even
// for huge batches; 256 calls are a few milliseconds of app time and keep the
// pipe full (a round trip is ~0.1 ms).
constexpr size_t kMaxInFlight = 256;

constexpr char kNoSessionBus[] =
    "no D-Bus session bus: start one (dbus-daemon --session) and export DBUS_SESSION_BUS_ADDRESS";

// Text-entry roles: the only ones the password name heuristic applies to.
// Containers that carry no meaning of their own (the renderer's generic containers).
bool IsWrapperRole(uint32_t role) {
  const std::string r = role < kRoleCount ? kRoleNames[role] : "";
  return r == "filler" || r == "panel" || r == "section" || r == "unknown" || r == "invalid";
}

bool IsTextEntryRole(uint32_t role) {
  const std::string r = role < kRoleCount ? kRoleNames[role] : "";
  return r == "entry" || r == "text" || r == "password text" || r == "spin button" || r == "editbar";
}

// Object attributes that mark a field as a password: HTML autocomplete tokens
// current-password / new-password (Chromium exposes the attribute as
// "autocomplete"), or an input type of password ("text-input-type",
// "input-type"). `attrs` is an a{ss}.
bool AttributesSayPassword(GVariant* attrs) {
  if (!attrs || !g_variant_is_of_type(attrs, G_VARIANT_TYPE("a{ss}"))) return false;
  GVariantIter it;
  g_variant_iter_init(&it, attrs);
  const gchar* key = nullptr;
  const gchar* value = nullptr;
  while (g_variant_iter_next(&it, "{&s&s}", &key, &value)) {
    std::string k = key ? key : "", v = value ? value : "";
    for (auto& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((k == "autocomplete" || k == "html-autocomplete") &&
        (v.find("current-password") != std::string::npos || v.find("new-password") != std::string::npos))
      return true;
    if ((k == "text-input-type" || k == "input-type" || k == "type") && v == "password") return true;
  }
  return false;
}

Error MakeError(ErrorCode code, std::string message) { return Error{code, std::move(message)}; }

std::string Lower(const std::string& s) {
  CharPtr folded(g_utf8_casefold(s.c_str(), static_cast<gssize>(s.size())));
  return folded ? std::string(folded.get()) : s;
}

// GTK3's toggle cells (GtkBooleanCellAccessible) return the descriptions of
// their inherited cell actions as both names and localized names ("Expands or
// contracts the row in the tree view containing this cell"). An action is
// named by its name, never its description: these map back to GTK's names.
std::string ActionNameOf(const std::string& name) {
  static const std::pair<const char*, const char*> kGtkDescriptions[] = {
      {"Expands or contracts the row in the tree view containing this cell", "expand or contract"},
      {"Creates a widget in which the contents of the cell can be edited", "edit"},
      {"Activates the cell", "activate"},
      {"Toggles the cell", "toggle"},
  };
  for (const auto& [description, short_name] : kGtkDescriptions)
    if (name == description) return short_name;
  return name;
}

// ---------------------------------------------------------------------------
// Outcome of one call.

enum class Outcome {
  kOk,
  kNoReply,    // the app did not answer in time (or an earlier call to it did not)
  kGone,       // object or app no longer exists
  kFailed,     // the call was answered with an error (unknown method/property, bad args)
  kDeadline,   // the operation's deadline passed first
  kBusClosed,  // the accessibility bus connection is gone
};

struct Reply {
  Outcome outcome = Outcome::kOk;
  GVariant* value = nullptr;  // borrowed; valid during the handler
  std::string message;        // for errors
};

using ReplyFn = std::function<void(const Reply&)>;

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

int TimeoutMs(Clock::time_point deadline, std::chrono::milliseconds perCall) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<int64_t>(left, perCall.count()));
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

// An AT-SPI object: bus name and object path.
struct ObjRef {
  std::string bus, path;
};

// The objects of an `(a(so))` reply (GetChildren, GetMatches): a null reference
// (the root path, or no bus name) names nothing and is left out.
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

// D-Bus calls by kind (the method, or the property a Properties.Get reads), with
// the time attributed to them: in a pipelined batch the app answers one call
// after another, so a reply is charged the time since the previous reply (or
// since it was sent, if later). Summed over kinds that is the batches' wall time.
struct CallStats {
  uint64_t calls = 0;
  std::unordered_map<std::string, ReadStat> kinds;
  void Add(const std::string& kind, double ms) {
    ++calls;
    ReadStat& k = kinds[kind];
    if (k.kind.empty()) k.kind = kind;
    k.calls++;
    k.ms += ms;
  }
};

// What one org.a11y.atspi.Cache.GetItems entry tells about an object. Strings
// point into the reply, which the snapshot keeps; the interfaces are decoded
// only for the items a walk reads (BulkSnapshot::IfacesOf).
struct CacheItem {
  uint32_t role = 0;
  const char* name = "";
  const char* description = "";
  StateSet states;
  std::string_view parent;  // path of the parent (same app), empty for none
  int32_t index = -1;       // index in parent
  int32_t childCount = 0;   // the app's count when it answered
  uint32_t pos = 0;         // the item's place in the reply
};

// One GetItems answer: every object the app's bridge holds in its cache, and
// the children of each parent in index order (built from parent + index).
struct BulkSnapshot {
  Clock::time_point taken;
  VariantPtr reply;                                                          // owns every string below
  std::unordered_map<std::string_view, CacheItem> items;                     // by path
  std::unordered_map<std::string_view, std::vector<std::string_view>> kids;  // parent path -> child paths
  uint32_t IfacesOf(const CacheItem& c) const {
    VariantPtr arr = AdoptVariant(g_variant_get_child_value(reply.get(), 0));
    VariantPtr item = AdoptVariant(g_variant_get_child_value(arr.get(), c.pos));
    VariantPtr as = AdoptVariant(g_variant_get_child_value(item.get(), 5));
    return IfaceBits(as.get());
  }
};

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

// Direct (peer-to-peer) connections to apps, by bus name: atk-bridge serves
// its objects on a socket of its own too (Application.GetApplicationBusAddress),
// as libatspi uses it. A walk's calls then skip the bus daemon's two hops.
struct Peers {
  std::unordered_map<std::string, GObj<GDBusConnection>> conns;
  std::unordered_set<std::string> none;  // apps without one (or that did not answer for it)
  GDBusConnection* For(const std::string& busName) const {
    auto it = conns.find(busName);
    if (it == conns.end() || g_dbus_connection_is_closed(it->second.get())) return nullptr;
    return it->second.get();
  }
};

// A walk's first reads of an app, started during window choice (ExpectWalk,
// else PrepareWalk) so that they overlap it instead of each going first, one
// after another, in a fresh process: the direct connection (its address, then
// connecting) and the bulk read (RegisterEvent when none is registered yet,
// then GetItems, on the direct connection when that is open by then). Its
// handlers touch only this state, which they keep alive; the backend takes
// the results at its next read of the app (TakePrefetch).
struct Prefetch : std::enable_shared_from_this<Prefetch> {
  std::string bus;
  ContextPtr ctx;                 // the backend's: where the follow-up calls' replies go
  GObj<GDBusConnection> busConn;  // the accessibility bus, for the bulk read without a direct connection
  GObj<GCancellable> cancel = AdoptObject(g_cancellable_new());
  GObj<GCancellable> peerCancel = AdoptObject(g_cancellable_new());
  Clock::time_point started = Clock::now(), deadline;
  std::chrono::milliseconds perCall{800};
  bool dropped = false;  // the backend disconnected: start nothing more

  bool peerPending = false;  // the direct connection is being opened
  bool peerTried = false;
  GObj<GDBusConnection> peer;  // null after trying: the app has none (or did not answer in time)
  SourcePtr peerTimer;         // gives up on the direct connection after 300 ms
  double addressMs = -1;

  bool wantBulk = false;
  bool registerPending = false;
  double registerMs = -1;
  bool bulkIssued = false, bulkDone = false;
  Clock::time_point bulkSent, bulkAt;  // bulkAt: its answer came (as FreshBulk's snapshot is dated)
  double bulkMs = 0;
  VariantPtr bulkReply;
  Outcome bulkOutcome = Outcome::kOk;
  bool bulkStale = false;  // asked before an action: not kept

  bool Busy() const { return peerPending || (wantBulk && !bulkDone); }
};
using PrefetchPtr = std::shared_ptr<Prefetch>;

double MsSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

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

bool IsDocumentRole(uint32_t role) { return role < kRoleCount && std::strncmp(kRoleNames[role], "document", 8) == 0; }

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

}  // namespace

// ---------------------------------------------------------------------------

struct AtspiBackend::Impl {
  ContextPtr ctx{g_main_context_new()};
  GObj<GDBusConnection> bus;
  std::chrono::milliseconds callTimeout{800};
  bool everConnected = false;  // a closed connection is reopened by the next call
  bool live = false;           // SetLiveReads: no bulk cache, no leaf hints
  bool secureNames = true;     // SetSecureNameHeuristic
  // Names apps gave when they last answered (by bus name), for listing one that stopped answering.
  std::unordered_map<std::string, std::string> knownNames;
  // Where each app was found by pid (bus name, root path), so FocusedElement, which runs before every
  // typing chunk, need not list every app (one frozen app would cost each chunk a call timeout).
  std::unordered_map<int64_t, std::pair<std::string, std::string>> appByPid;

  // The per-call timeout of an operation ending at `deadline`: at least
  // callTimeout (800 ms), more for a long deadline (a quarter of it), never
  // past the deadline. A slow app can be read with a long deadline; a stopped
  // app costs at most that per operation (it is then skipped).
  std::chrono::milliseconds PerCall(Clock::time_point deadline) const {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return std::max(callTimeout, left / 4);
  }
  CallStats stats;  // D-Bus calls issued (diagnostics, the bench's breakdown)

  // Handle table.
  std::unordered_map<std::string, ElementId> idByKey;  // bus + '\n' + path
  std::unordered_map<ElementId, ObjRef> refById;
  ElementId nextId = 1;

  // Child counts of elements as ReadNodes last read them (from the bulk cache
  // or the Accessible properties' GetAll). ReadChildren answers a leaf without
  // a call, and counts a long list instead of listing it (the walk then asks
  // for the children it keeps by index: Chromium takes seconds to list 10,000
  // children), when the read is younger than countHintMaxAge: a walk reads a
  // level, then its children.
  struct CountSeen {
    int64_t count = 0;
    Clock::time_point at;
  };
  std::unordered_map<ElementId, CountSeen> countSeen;
  std::chrono::milliseconds countHintMaxAge{500};

  // Tables that manage their cells (GTK3 tree views: Table and Component,
  // MANAGES_DESCENDANTS), as ReadNodes last read them: ReadChildren reads
  // only the rows on screen of a big one (ReadVisibleTableRows).
  std::unordered_set<ElementId> managesCells;

  // Bulk cache.
  // On by default: one GetItems call replaces per-node role, name, description,
  // state and interface reads (bench: about a third less time per snapshot).
  bool useBulk = true;
  bool registeredForCache = false;
  std::unordered_set<std::string> bulkUnsupported;     // apps without GetItems
  std::unordered_map<std::string, BulkSnapshot> bulk;  // by app bus name
  // An app whose cache holds more objects than this (a 50,000-element page: a
  // GetItems reply of about a second, growing with the page, not the window) is
  // read live from then on: the walk's visible cut keeps that to what shows.
  static constexpr size_t kBulkMaxItems = 20000;

  // Whether an app gives AccessibleId or HelpText, which only the per-element
  // GetAll brings (GetItems has neither). GTK3 and Chromium never set them, and
  // GetAll was the largest share of a walk (a third of its time on
  // gtk3-widget-factory), so an app whose first kIdProbeReads answers carried
  // neither is not asked again (bus names are per app instance); live reads
  // follow the same decision, so a record and its re-read agree.
  struct IdProbe {
    int reads = 0;
    bool seen = false;
  };
  static constexpr int kIdProbeReads = 64;
  std::unordered_map<std::string, IdProbe> idProbe;  // by app bus name
  // Still counting answers: no id or help seen, fewer than kIdProbeReads answers.
  bool Probing(const std::string& busName) const {
    auto it = idProbe.find(busName);
    return it == idProbe.end() || (!it->second.seen && it->second.reads < kIdProbeReads);
  }
  bool WantsGetAll(const std::string& busName) const {
    auto it = idProbe.find(busName);
    return it == idProbe.end() || it->second.seen || it->second.reads < kIdProbeReads;
  }
  std::chrono::milliseconds bulkMaxAge{300};

  // Change events of watched apps (Watch / WaitEvents), on `bus`; dropped with it.
  AtspiEvents events;

  // Direct connections for the walk's reads (AXSNAP_P2P=0 turns them off).
  Peers peers;
  bool usePeers = true;
  // A walk's first reads under way, by app bus name (Prefetch).
  std::unordered_map<std::string, PrefetchPtr> prefetch;
  std::string walkExpected;  // ExpectWalk: the app whose Windows() starts them
  void DropPrefetch() {
    for (auto& [name, st] : prefetch) {
      st->dropped = true;
      g_cancellable_cancel(st->cancel.get());
      g_cancellable_cancel(st->peerCancel.get());
      st->peerTimer.reset();
    }
    prefetch.clear();
  }

  Impl() {
    // Benchmarks and diagnostics: AXSNAP_BULK=0 reads every element live, AXSNAP_P2P=0 over the bus only.
    if (const char* bulkEnv = std::getenv("AXSNAP_BULK")) useBulk = std::strcmp(bulkEnv, "0") != 0;
    if (const char* p2pEnv = std::getenv("AXSNAP_P2P")) usePeers = std::strcmp(p2pEnv, "0") != 0;
    // Tests only: a longer bulk age makes a cached read certain to be stale.
    if (const char* age = std::getenv("AXSNAP_BULK_MAX_AGE_MS"))
      if (long ms = std::strtol(age, nullptr, 10); ms > 0) bulkMaxAge = std::chrono::milliseconds(ms);
  }
  ~Impl() { Disconnect(); }

  void Disconnect() {
    events.Drop();
    DropPrefetch();
    for (auto& [name, conn] : peers.conns) g_dbus_connection_close_sync(conn.get(), nullptr, nullptr);
    peers = Peers{};
    if (bus) {
      g_dbus_connection_close_sync(bus.get(), nullptr, nullptr);
      bus.reset();
    }
    Drain();
  }

  // Runs whatever is already queued on the private context (late replies of
  // abandoned calls) so their resources are released.
  void Drain() {
    if (!ctx) return;
    for (int i = 0; i < 1000 && g_main_context_iteration(ctx.get(), FALSE); ++i) {
    }
  }

  ElementId Intern(const std::string& busName, const std::string& path) {
    std::string key = busName;
    key.push_back('\n');
    key += path;
    auto it = idByKey.find(key);
    if (it != idByKey.end()) return it->second;
    ElementId id = nextId++;
    idByKey.emplace(std::move(key), id);
    refById.emplace(id, ObjRef{busName, path});
    return id;
  }

  const ObjRef* Lookup(ElementId id) const {
    auto it = refById.find(id);
    return it == refById.end() ? nullptr : &it->second;
  }

  // The error for an id with no entry: a handle this backend gave out earlier
  // (released, or from before the accessibility bus reconnected) is gone.
  Error Unknown(ElementId id) const {
    if (id != 0 && id < nextId)
      return MakeError(ErrorCode::kElementGone,
                       "the element is gone (its handle was released, or the accessibility bus restarted)");
    return MakeError(ErrorCode::kInvalidArgument, "unknown element handle " + std::to_string(id));
  }

  // Every handle refers to the old connection's names: forget them all (ids are never reused).
  void ForgetHandles() {
    idByKey.clear();
    refById.clear();
    countSeen.clear();
    managesCells.clear();
    bulk.clear();
    idProbe.clear();
    DropPrefetch();
    peers = Peers{};
  }

  Error CheckConnected() const {
    if (!bus)
      return MakeError(ErrorCode::kNoAccessibilityBus, "not connected to the accessibility bus: call Connect()");
    if (g_dbus_connection_is_closed(bus.get()))
      return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed; reconnect");
    return {};
  }

  // Blocking call for single operations (actions, setup). Does not use the
  // private context.
  VariantPtr CallSync(const std::string& busName, const std::string& path, const char* iface, const char* method,
                      GVariant* params, const char* replyType, Clock::time_point deadline, Outcome& outcome,
                      std::string& message) {
    VariantPtr owned = SinkVariant(params);
    int timeout = TimeoutMs(deadline, PerCall(deadline));
    if (timeout <= 0) {
      outcome = Outcome::kDeadline;
      message = "the deadline passed";
      return nullptr;
    }
    const Clock::time_point sent = Clock::now();
    GError* raw = nullptr;
    GVariant* r = g_dbus_connection_call_sync(bus.get(), busName.c_str(), path.c_str(), iface, method, owned.get(),
                                              replyType ? G_VARIANT_TYPE(replyType) : nullptr,
                                              G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout, nullptr, &raw);
    ErrorPtr err(raw);
    stats.Add(method, std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
    if (r) {
      outcome = Outcome::kOk;
      return AdoptVariant(r);
    }
    outcome = ClassifyError(err.get());
    if (outcome == Outcome::kNoReply && Clock::now() >= deadline) outcome = Outcome::kDeadline;
    message = err ? err->message : "unknown error";
    return nullptr;
  }

  // After acting: earlier reads may be out of date.
  void ForgetReadState() {
    bulk.clear();
    countSeen.clear();
    for (auto& [name, st] : prefetch) st->bulkStale = true;
  }

  // The interface bits of one element (blocking).
  bool InterfacesOf(const ObjRef& ref, Clock::time_point deadline, uint32_t& bits, Error& err) {
    Outcome o;
    std::string msg;
    VariantPtr r = CallSync(ref.bus, ref.path, kIfAccessible, "GetInterfaces", nullptr, "(as)", deadline, o, msg);
    if (o != Outcome::kOk) {
      err = o == Outcome::kFailed ? MakeError(ErrorCode::kElementGone, "not an accessible object: " + msg)
                                  : OutcomeError(o, ref.bus, msg, static_cast<int>(callTimeout.count()));
      return false;
    }
    VariantPtr as = AdoptVariant(g_variant_get_child_value(r.get(), 0));
    bits = IfaceBits(as.get());
    return true;
  }
};

namespace {

// ---------------------------------------------------------------------------
// A batch of pipelined calls.

struct BatchState;

struct CallCtx {
  std::shared_ptr<BatchState> state;
  std::string bus;
  ReplyFn fn;
  bool soft;  // a no-reply does not mark the app unresponsive
  std::string kind;
  Clock::time_point sent;
  bool direct = false;  // on the app's own connection (Peers)
};

struct Queued {
  std::string bus, path;
  const char* iface;
  const char* method;
  VariantPtr params;
  const char* replyType;
  ReplyFn fn;
  bool soft;
  std::string kind;  // for CallStats: the method, or "Get <property>"
};

struct BatchState {
  GDBusConnection* conn = nullptr;  // borrowed from Impl for the batch's life
  Clock::time_point deadline;
  std::chrono::milliseconds perCall{800};
  bool closed = false;
  bool deadlinePassed = false;
  bool abandon = false;
  size_t inflight = 0;
  std::unordered_map<std::string, GObj<GCancellable>> cancellables;  // per app bus name
  std::unordered_set<std::string> dead;                              // apps that did not answer
  std::deque<Queued> queue;                                          // over kMaxInFlight
  std::deque<std::pair<ReplyFn, Reply>> deferred;                    // failures decided locally
  bool busClosed = false;
  CallStats* stats = nullptr;
  const Peers* peers = nullptr;  // direct connections to use where there is one
  Clock::time_point lastReply;

  GCancellable* CancellableFor(const std::string& busName) {
    auto& c = cancellables[busName];
    if (!c) c = AdoptObject(g_cancellable_new());
    return c.get();
  }

  void MarkDead(const std::string& busName) {
    if (!dead.insert(busName).second) return;
    auto it = cancellables.find(busName);
    if (it != cancellables.end()) g_cancellable_cancel(it->second.get());
  }

  void CancelAll() {
    for (auto& e : cancellables) g_cancellable_cancel(e.second.get());
  }
};

void OnCallDone(GObject* source, GAsyncResult* res, gpointer data);

void Issue(const std::shared_ptr<BatchState>& st, Queued q) {
  Reply fail;
  if (st->busClosed) {
    fail.outcome = Outcome::kBusClosed;
    fail.message = "the accessibility bus connection was closed";
  } else if (st->dead.count(q.bus)) {
    fail.outcome = Outcome::kNoReply;
    fail.message = "an earlier call to " + q.bus + " got no reply";
  } else if (st->deadlinePassed) {
    fail.outcome = Outcome::kDeadline;
    fail.message = "the deadline passed";
  }
  int timeout = 0;
  if (fail.outcome == Outcome::kOk) {
    timeout = TimeoutMs(st->deadline, st->perCall);
    if (timeout <= 0) {
      fail.outcome = Outcome::kDeadline;
      fail.message = "the deadline passed";
    }
  }
  if (fail.outcome != Outcome::kOk) {
    st->deferred.emplace_back(std::move(q.fn), std::move(fail));
    return;
  }
  if (st->inflight >= kMaxInFlight) {
    st->queue.push_back(std::move(q));
    return;
  }
  GDBusConnection* direct = st->peers ? st->peers->For(q.bus) : nullptr;
  auto* ctx = new CallCtx{st, q.bus, std::move(q.fn), q.soft, std::move(q.kind), Clock::now(), direct != nullptr};
  ++st->inflight;
  g_dbus_connection_call(direct ? direct : st->conn, direct ? nullptr : q.bus.c_str(), q.path.c_str(), q.iface,
                         q.method, q.params.get(), q.replyType ? G_VARIANT_TYPE(q.replyType) : nullptr,
                         G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout, st->CancellableFor(q.bus), OnCallDone, ctx);
}

void PumpQueue(const std::shared_ptr<BatchState>& st) {
  while (!st->queue.empty() && st->inflight < kMaxInFlight) {
    Queued q = std::move(st->queue.front());
    st->queue.pop_front();
    Issue(st, std::move(q));
  }
}

void OnCallDone(GObject* source, GAsyncResult* res, gpointer data) {
  std::unique_ptr<CallCtx> ctx(static_cast<CallCtx*>(data));
  GError* raw = nullptr;
  VariantPtr value = AdoptVariant(g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &raw));
  ErrorPtr err(raw);
  BatchState& st = *ctx->state;
  --st.inflight;
  if (st.closed) return;
  if (st.stats) {
    const Clock::time_point now = Clock::now();
    const Clock::time_point from = std::max(ctx->sent, st.lastReply);
    st.lastReply = now;
    st.stats->Add(ctx->kind, std::chrono::duration<double, std::milli>(now - from).count());
  }
  Reply r;
  if (value) {
    r.outcome = Outcome::kOk;
    r.value = value.get();
  } else if (g_error_matches(err.get(), G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    if (st.dead.count(ctx->bus)) {
      r.outcome = Outcome::kNoReply;
      r.message = "an earlier call to " + ctx->bus + " got no reply";
    } else {
      r.outcome = Outcome::kDeadline;
      r.message = "the deadline passed";
    }
  } else {
    r.outcome = ClassifyError(err.get());
    r.message = err ? err->message : "unknown error";
    if (r.outcome == Outcome::kNoReply) {
      // A timeout cut short by the deadline is the deadline's doing.
      if (st.deadlinePassed || Clock::now() + std::chrono::milliseconds(2) >= st.deadline) {
        r.outcome = Outcome::kDeadline;
      } else if (!ctx->soft) {
        st.MarkDead(ctx->bus);
      }
    } else if (r.outcome == Outcome::kBusClosed && ctx->direct) {
      // The app's own connection closed: the app exited, the bus is fine.
      r.outcome = Outcome::kGone;
    } else if (r.outcome == Outcome::kBusClosed) {
      st.busClosed = true;
      st.CancelAll();
    }
  }
  ctx->fn(r);
  PumpQueue(ctx->state);
}

class Batch {
 public:
  // `stats` (the backend's) must outlive late replies: they are counted too.
  Batch(GMainContext* ctx, GDBusConnection* conn, std::chrono::milliseconds perCall, Clock::time_point deadline,
        CallStats* stats)
      : ctx_(ctx), st_(std::make_shared<BatchState>()) {
    st_->conn = conn;
    st_->deadline = deadline;
    st_->perCall = perCall;
    st_->stats = stats;
  }
  ~Batch() { st_->closed = true; }
  // Calls to an app with a direct connection go on it (Peers).
  void UsePeers(const Peers* peers) { st_->peers = peers; }
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  // Queues a call. `params` may be floating (g_variant_new) or null. `fn`
  // runs from Run(), never from inside Call(). A `soft` call that gets no
  // reply does not mark its app unresponsive (for calls that may be slow
  // for reasons other than a stuck app, like a bulk read of a huge app).
  void Call(const std::string& busName, const std::string& path, const char* iface, const char* method,
            GVariant* params, const char* replyType, ReplyFn fn, bool soft = false) {
    Issue(st_, Queued{busName, path, iface, method, SinkVariant(params), replyType, std::move(fn), soft, method});
  }

  // org.freedesktop.DBus.Properties.Get; the handler gets the unwrapped value
  // in a new Reply whose value is the property (or an error outcome).
  void GetProperty(const std::string& busName, const std::string& path, const char* iface, const char* prop,
                   ReplyFn fn) {
    Issue(st_, Queued{busName, path, kIfProperties, "Get", SinkVariant(g_variant_new("(ss)", iface, prop)), "(v)",
                      [fn = std::move(fn)](const Reply& r) {
                        if (r.outcome != Outcome::kOk) return fn(r);
                        VariantPtr inner = UnwrapV(r.value);
                        Reply unwrapped;
                        unwrapped.value = inner.get();
                        if (!inner) {
                          unwrapped.outcome = Outcome::kFailed;
                          unwrapped.message = "malformed property reply";
                        }
                        fn(unwrapped);
                      },
                      false, std::string("Get ") + prop});
  }

  // Iterates the private context until every call (and follow-up) is done,
  // or the deadline passes (outstanding calls are then cancelled).
  void Run() {
    GMainContext* ctx = ctx_;
    SourcePtr deadlineSource, abandonSource;
    auto armDeadline = [&]() {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(st_->deadline - Clock::now()).count();
      deadlineSource.reset(g_timeout_source_new(static_cast<guint>(std::max<int64_t>(left, 0))));
      g_source_set_callback(
          deadlineSource.get(),
          [](gpointer p) -> gboolean {
            auto* st = static_cast<BatchState*>(p);
            st->deadlinePassed = true;
            st->CancelAll();
            return G_SOURCE_REMOVE;
          },
          st_.get(), nullptr);
      g_source_attach(deadlineSource.get(), ctx);
      // Cancellations are reported within milliseconds; this is the backstop.
      abandonSource.reset(g_timeout_source_new(static_cast<guint>(std::max<int64_t>(left, 0) + 500)));
      g_source_set_callback(
          abandonSource.get(),
          [](gpointer p) -> gboolean {
            static_cast<BatchState*>(p)->abandon = true;
            return G_SOURCE_REMOVE;
          },
          st_.get(), nullptr);
      g_source_attach(abandonSource.get(), ctx);
    };
    bool armed = false;
    for (;;) {
      while (!st_->deferred.empty()) {
        auto item = std::move(st_->deferred.front());
        st_->deferred.pop_front();
        item.first(item.second);
        PumpQueue(st_);
      }
      if (st_->inflight == 0 && st_->queue.empty() && st_->deferred.empty()) break;
      if (st_->abandon) break;
      if (!armed) {
        armDeadline();
        armed = true;
      }
      g_main_context_iteration(ctx, TRUE);
    }
    if (st_->abandon) {
      // Only when GDBus did not report cancelled calls in time. Whatever is
      // queued was never sent: report it (its handlers' follow-ups are
      // refused the same way); replies still out are dropped on arrival.
      abandoned_ = st_->inflight > 0;
      st_->deadlinePassed = true;
      while (!st_->queue.empty() || !st_->deferred.empty()) {
        while (!st_->queue.empty()) {
          Reply r;
          r.outcome = Outcome::kDeadline;
          r.message = "the deadline passed";
          st_->deferred.emplace_back(std::move(st_->queue.front().fn), std::move(r));
          st_->queue.pop_front();
        }
        auto item = std::move(st_->deferred.front());
        st_->deferred.pop_front();
        item.first(item.second);
      }
    }
  }

  // Some calls never reported back (see Run): their handlers did not run.
  bool Abandoned() const { return abandoned_; }

  bool BusClosed() const { return st_->busClosed; }
  int PerCallMs() const { return static_cast<int>(st_->perCall.count()); }

 private:
  GMainContext* ctx_;
  std::shared_ptr<BatchState> st_;
  uint64_t* counter_;
  bool abandoned_ = false;
};

// The app's bulk snapshot, read now (one GetItems call) unless one younger than
// bulkMaxAge is kept; null when the app does not serve GetItems (remembered),
// the deadline passed, or the bulk cache is off or bypassed (live reads).
template <typename ImplT>
void EnsurePeer(ImplT& im, const std::string& busName, Clock::time_point deadline);

// A GetItems answer kept as the app's bulk snapshot (taken at `taken`); null
// when there is none to keep. An app that does not serve it, is too slow, or
// answers another layout or too many objects is read live from then on.
template <typename ImplT>
const BulkSnapshot* KeepBulk(ImplT& im, const std::string& busName, Outcome outcome, GVariant* value,
                             Clock::time_point taken) {
  if (outcome == Outcome::kFailed || outcome == Outcome::kNoReply) im.bulkUnsupported.insert(busName);
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

// Takes what the app's Prefetch brought so far: its direct connection, its
// bulk snapshot. `waitBulk`: waits for the bulk read still out first (until
// `deadline`). Whatever is still under way is left to finish.
template <typename ImplT>
void TakePrefetch(ImplT& im, const std::string& busName, bool waitBulk, Clock::time_point deadline) {
  auto it = im.prefetch.find(busName);
  if (it == im.prefetch.end()) return;
  PrefetchPtr st = it->second;
  if (waitBulk && st->wantBulk && !st->bulkDone && !st->bulkStale) {
    bool timedOut = false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    SourcePtr timer(g_timeout_source_new(static_cast<guint>(std::max<int64_t>(left, 0))));
    g_source_set_callback(
        timer.get(),
        [](gpointer p) -> gboolean {
          *static_cast<bool*>(p) = true;
          return G_SOURCE_REMOVE;
        },
        &timedOut, nullptr);
    g_source_attach(timer.get(), im.ctx.get());
    while (!st->bulkDone && !timedOut) g_main_context_iteration(im.ctx.get(), TRUE);
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
    if (!st->bulkStale) KeepBulk(im, busName, st->bulkOutcome, st->bulkReply.get(), st->bulkAt);
    st->bulkReply.reset();
  }
  if (!st->Busy()) im.prefetch.erase(busName);
}

// Starts the reads a walk of the app begins with (Prefetch), unless there is
// nothing to start: a direct connection open or known absent, a fresh bulk
// snapshot (or none to be had).
template <typename ImplT>
void StartPrefetch(ImplT& im, const std::string& busName, Clock::time_point deadline) {
  if (im.prefetch.count(busName)) return;
  const bool wantPeer = im.usePeers && !im.peers.For(busName) && !im.peers.none.count(busName);
  auto kept = im.bulk.find(busName);
  const bool wantBulk = im.useBulk && !im.live && !im.bulkUnsupported.count(busName) &&
                        !(kept != im.bulk.end() && Clock::now() - kept->second.taken < im.bulkMaxAge);
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
template <typename ImplT>
void AwaitPrefetchRegistration(ImplT& im, const std::string& busName, Clock::time_point deadline) {
  auto it = im.prefetch.find(busName);
  if (it == im.prefetch.end() || !it->second->registerPending) return;
  PrefetchPtr st = it->second;
  const auto until = std::min(deadline, Clock::now() + im.PerCall(deadline));
  bool timedOut = false;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
  SourcePtr timer(g_timeout_source_new(static_cast<guint>(std::max<int64_t>(left, 0))));
  g_source_set_callback(
      timer.get(),
      [](gpointer p) -> gboolean {
        *static_cast<bool*>(p) = true;
        return G_SOURCE_REMOVE;
      },
      &timedOut, nullptr);
  g_source_attach(timer.get(), im.ctx.get());
  while (st->registerPending && !timedOut) g_main_context_iteration(im.ctx.get(), TRUE);
}

template <typename ImplT>
const BulkSnapshot* FreshBulk(ImplT& im, const std::string& busName, Clock::time_point deadline) {
  TakePrefetch(im, busName, /*waitBulk=*/true, deadline);
  if (!im.useBulk || im.live || im.bulkUnsupported.count(busName)) return nullptr;
  auto kept = im.bulk.find(busName);
  if (kept != im.bulk.end() && Clock::now() - kept->second.taken < im.bulkMaxAge) return &kept->second;
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
  b.Call(
      busName, kCachePath, kIfCache, "GetItems", nullptr, nullptr,
      [&](const Reply& r) { out = KeepBulk(im, busName, r.outcome, r.value, Clock::now()); },
      /*soft=*/true);
  b.Run();
  return out;
}

// Connects to `address` with the given flags, bounded by `timeout`.
GObj<GDBusConnection> ConnectAddress(GMainContext* ctx, const char* address, GDBusConnectionFlags flags,
                                     std::chrono::milliseconds timeout, std::string& message, bool& timedOutOut) {
  timedOutOut = false;
  if (timeout.count() <= 0) {
    timedOutOut = true;
    message = "the deadline passed before connecting to " + std::string(address);
    return nullptr;
  }
  struct Wait {
    bool done = false;
    GObj<GDBusConnection> conn;
    std::string message;
  };
  auto wait = std::make_shared<Wait>();
  auto* holder = new std::shared_ptr<Wait>(wait);
  GObj<GCancellable> cancel = AdoptObject(g_cancellable_new());
  g_dbus_connection_new_for_address(
      address, flags, nullptr, cancel.get(),
      [](GObject*, GAsyncResult* res, gpointer data) {
        std::unique_ptr<std::shared_ptr<Wait>> h(static_cast<std::shared_ptr<Wait>*>(data));
        GError* raw = nullptr;
        GDBusConnection* c = g_dbus_connection_new_for_address_finish(res, &raw);
        ErrorPtr err(raw);
        (*h)->done = true;
        (*h)->conn = AdoptObject(c);
        if (err) (*h)->message = err->message;
      },
      holder);
  bool timedOut = false;
  SourcePtr timer(g_timeout_source_new(static_cast<guint>(timeout.count())));
  g_source_set_callback(
      timer.get(),
      [](gpointer p) -> gboolean {
        *static_cast<bool*>(p) = true;
        return G_SOURCE_REMOVE;
      },
      &timedOut, nullptr);
  g_source_attach(timer.get(), ctx);
  while (!wait->done && !timedOut) g_main_context_iteration(ctx, TRUE);
  if (!wait->done) {
    g_cancellable_cancel(cancel.get());
    message = "timed out connecting to " + std::string(address);
    timedOutOut = true;
    return nullptr;
  }
  if (!wait->conn) {
    message = wait->message;
    return nullptr;
  }
  g_dbus_connection_set_exit_on_close(wait->conn.get(), FALSE);
  return std::move(wait->conn);
}

// Opens the app's direct connection once (Peers): its address from
// Application.GetApplicationBusAddress, at most 300 ms in all. An app without
// one, or that does not answer, is read over the bus, and not asked again.
// Takes what the app's Prefetch brought first (one still opening is not
// waited for: the calls go over the bus meanwhile).
template <typename ImplT>
void EnsurePeer(ImplT& im, const std::string& busName, Clock::time_point deadline) {
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
      ConnectAddress(im.ctx.get(), address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT, left, msg, timedOut);
  if (!conn) {
    im.peers.none.insert(busName);
    return;
  }
  im.peers.conns[busName] = std::move(conn);
}

// EnsurePeer for the apps of these elements.
template <typename ImplT>
void EnsurePeersFor(ImplT& im, const std::vector<ElementId>& ids, Clock::time_point deadline) {
  std::unordered_set<std::string> seen;
  for (ElementId id : ids)
    if (const ObjRef* ref = im.Lookup(id); ref && seen.insert(ref->bus).second) EnsurePeer(im, ref->bus, deadline);
}

}  // namespace

// ---------------------------------------------------------------------------

AtspiBackend::AtspiBackend() : impl_(new Impl) {}
AtspiBackend::~AtspiBackend() {
  ContextScope scope(impl_->ctx.get());
  impl_->Disconnect();
}

bool AtspiBackend::Connected() const { return impl_->bus && !g_dbus_connection_is_closed(impl_->bus.get()); }
void AtspiBackend::SetCallTimeout(std::chrono::milliseconds timeout) {
  impl_->callTimeout = std::max(timeout, std::chrono::milliseconds(1));
}
void AtspiBackend::SetUseBulkCache(bool on) { impl_->useBulk = on; }
void AtspiBackend::InvalidateBulkCache() { impl_->ForgetReadState(); }
size_t AtspiBackend::HandleCount() const { return impl_->refById.size(); }
uint64_t AtspiBackend::CallCount() const { return impl_->stats.calls; }
void AtspiBackend::ResetReadStats() { impl_->stats.kinds.clear(); }
std::vector<ReadStat> AtspiBackend::TakeReadStats() {
  std::vector<ReadStat> out;
  for (auto& e : impl_->stats.kinds) out.push_back(std::move(e.second));
  impl_->stats.kinds.clear();
  std::sort(out.begin(), out.end(), [](const ReadStat& a, const ReadStat& b) { return a.ms > b.ms; });
  return out;
}

bool AtspiBackend::Describe(ElementId id, std::string& busName, std::string& objectPath) const {
  const ObjRef* ref = impl_->Lookup(id);
  if (!ref) return false;
  busName = ref->bus;
  objectPath = ref->path;
  return true;
}

ElementId AtspiBackend::InternForeign(const std::string& busName, const std::string& path) {
  return impl_->Intern(busName, path);
}

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
    session = ConnectAddress(im.ctx.get(), sessionAddr, flags, std::chrono::milliseconds(budget), message, timedOut);
    if (!session)
      sessionFailure = timedOut ? "the D-Bus session bus at " + std::string(sessionAddr) + " did not answer within " +
                                      std::to_string(budget) + " ms (is it stopped or overloaded?)"
                                : std::string(kNoSessionBus) + " (" + message + ")";
  }

  std::string a11yAddr;
  std::string overrideFailure;
  const char* overrideAddr = std::getenv("AT_SPI_BUS_ADDRESS");
  if (overrideAddr && *overrideAddr) {
    im.bus = ConnectAddress(im.ctx.get(), overrideAddr, flags, std::chrono::milliseconds(left()), message, timedOut);
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
      return MakeError(
          ErrorCode::kNoAccessibilityBus,
          overrideFailure + (noAnswer ? "the session bus did not answer org.a11y.Bus.GetAddress before the deadline "
                                        "(the accessibility bus launcher may be starting or stopped)"
                                      : "no accessibility bus: org.a11y.Bus.GetAddress failed (" +
                                            std::string(err ? err->message : "?") +
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
    im.bus =
        ConnectAddress(im.ctx.get(), a11yAddr.c_str(), flags, std::chrono::milliseconds(left()), message, timedOut);
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

// ---------------------------------------------------------------------------
// Apps and windows.

Error AtspiBackend::ListApps(std::vector<AppInfo>& out, Clock::time_point deadline) {
  Error err = ListAppsOnce(out, deadline);
  // The bus went away under the call (restarted): reconnect once and ask again, within the deadline.
  if (err.code == ErrorCode::kNoAccessibilityBus && impl_->everConnected && !Connected() && Clock::now() < deadline) {
    if (Error e = Ready(deadline)) return e;
    err = ListAppsOnce(out, deadline);
  }
  return err;
}

Error AtspiBackend::ListAppsOnce(std::vector<AppInfo>& out, Clock::time_point deadline) {
  Impl& im = *impl_;
  out.clear();
  if (Error e = Ready(deadline)) return e;
  ContextScope scope(im.ctx.get());

  struct AppWork {
    std::string bus, path;
    bool ok = false;
    bool silent = false;  // the Name call got no reply
    std::string name;
    int64_t pid = 0;
  };
  std::vector<AppWork> apps;
  Error rootError;
  {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    b.Call(kRegistryBus, kRootPath, kIfAccessible, "GetChildren", nullptr, "(a(so))", [&](const Reply& r) {
      if (r.outcome != Outcome::kOk) {
        rootError = OutcomeError(r.outcome, kRegistryBus, r.message, b.PerCallMs());
        if (r.outcome == Outcome::kGone || r.outcome == Outcome::kFailed)
          rootError = MakeError(ErrorCode::kNoAccessibilityBus,
                                "the AT-SPI registry (at-spi2-registryd) does not answer: " + r.message);
        return;
      }
      for (ObjRef& ref : RefsIn(r.value)) {
        apps.emplace_back();
        apps.back().bus = std::move(ref.bus);
        apps.back().path = std::move(ref.path);
      }
      for (size_t i = 0; i < apps.size(); ++i) {
        b.GetProperty(apps[i].bus, apps[i].path, kIfAccessible, "Name", [&, i](const Reply& nr) {
          if (nr.outcome == Outcome::kNoReply || nr.outcome == Outcome::kDeadline) apps[i].silent = true;
          if (nr.outcome != Outcome::kOk || !g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING)) return;
          apps[i].ok = true;
          apps[i].name = g_variant_get_string(nr.value, nullptr);
        });
        b.Call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
               g_variant_new("(s)", apps[i].bus.c_str()), "(u)", [&, i](const Reply& pr) {
                 if (pr.outcome != Outcome::kOk) return;
                 guint32 pid = 0;
                 g_variant_get(pr.value, "(u)", &pid);
                 apps[i].pid = pid;
               });
      }
    });
    b.Run();
    if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  }
  if (rootError) return rootError;
  for (const AppWork& a : apps) {
    AppInfo info;
    if (a.ok) {
      im.knownNames[a.bus] = a.name;
      if (a.pid > 0) im.appByPid[a.pid] = {a.bus, a.path};
      info.name = a.name;
    } else if (a.silent && a.pid > 0) {
      // Did not answer (busy or stopped): listed, flagged, under the name it gave before.
      auto known = im.knownNames.find(a.bus);
      if (known != im.knownNames.end()) info.name = known->second;
      info.responsive = false;
    } else {
      continue;  // gone, or answered with an error
    }
    info.bundleId = info.name;
    info.pid = a.pid;
    info.element = im.Intern(a.bus, a.path);
    out.push_back(std::move(info));
  }
  return {};
}

Error AtspiBackend::FocusedApp(AppInfo& out, bool& found, Clock::time_point deadline) {
  Impl& im = *impl_;
  found = false;
  std::vector<AppInfo> apps;
  // The registry's apps only: a subclass may list apps that are not AT-SPI objects.
  if (Error e = AtspiBackend::ListApps(apps, deadline)) return e;
  ContextScope scope(im.ctx.get());
  std::vector<bool> active(apps.size(), false);
  {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    for (size_t i = 0; i < apps.size(); ++i) {
      const ObjRef* ref = im.Lookup(apps[i].element);
      if (!ref || !apps[i].responsive) continue;  // one that did not answer the listing is not asked again
      b.Call(ref->bus, ref->path, kIfAccessible, "GetChildren", nullptr, "(a(so))", [&, i](const Reply& r) {
        if (r.outcome != Outcome::kOk) return;
        for (const ObjRef& child : RefsIn(r.value)) {
          b.Call(child.bus, child.path, kIfAccessible, "GetState", nullptr, "(au)", [&, i](const Reply& sr) {
            if (sr.outcome != Outcome::kOk) return;
            VariantPtr au = AdoptVariant(g_variant_get_child_value(sr.value, 0));
            if (StatesFrom(au.get()).Has(kStateActive)) active[i] = true;
          });
        }
      });
    }
    b.Run();
  }
  for (size_t i = 0; i < apps.size(); ++i) {
    if (active[i]) {
      out = apps[i];
      found = true;
      break;
    }
  }
  return {};
}

Error AtspiBackend::Windows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  Impl& im = *impl_;
  out.clear();
  if (Error e = Ready(deadline)) return e;
  const ObjRef* appRef = im.Lookup(app.element);
  if (!appRef) return MakeError(ErrorCode::kAppNotFound, "unknown application handle");
  const ObjRef appCopy = *appRef;
  ContextScope scope(im.ctx.get());

  struct WinWork {
    std::string bus, path;
    uint32_t role = 0;
    bool haveRole = false;
    StateSet states;
    std::string title;
    Rect frame;
    bool hasFrame = false;
    uint32_t firstChildRole = 0;  // "window"-role toplevels only: what the popup holds
    bool haveFirstChild = false;
    int32_t childCount = -1;
  };
  std::deque<WinWork> wins;  // stable addresses while handlers run
  // A walk of this app comes next (ExpectWalk).
  const bool expected = !im.walkExpected.empty() && im.walkExpected == appCopy.bus;
  Error appError;
  bool noReply = false;  // some window did not answer: the app is busy, not windowless
  {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    b.Call(appCopy.bus, appCopy.path, kIfAccessible, "GetChildren", nullptr, "(a(so))", [&](const Reply& r) {
      if (r.outcome != Outcome::kOk) {
        appError = OutcomeError(r.outcome, appCopy.bus, r.message, b.PerCallMs());
        if (r.outcome == Outcome::kGone) appError = MakeError(ErrorCode::kAppNotFound, "the application is gone");
        return;
      }
      for (ObjRef& ref : RefsIn(r.value)) {
        wins.emplace_back();
        WinWork* w = &wins.back();
        w->bus = std::move(ref.bus);
        w->path = std::move(ref.path);
        b.Call(w->bus, w->path, kIfAccessible, "GetRole", nullptr, "(u)", [w, &noReply, &b](const Reply& rr) {
          if (rr.outcome == Outcome::kNoReply) noReply = true;
          if (rr.outcome != Outcome::kOk) return;
          g_variant_get(rr.value, "(u)", &w->role);
          w->haveRole = true;
          if (w->role != kRoleWindow) return;
          // A GTK3 popup toplevel ("window") holds the menu of a menu bar item, a
          // menu button or a combo box: its first child says which kind it is.
          b.Call(w->bus, w->path, kIfAccessible, "GetChildAtIndex", g_variant_new("(i)", 0), "((so))",
                 [w, &b](const Reply& cr) {
                   if (cr.outcome != Outcome::kOk) return;
                   const gchar* cbus = nullptr;
                   const gchar* cpath = nullptr;
                   g_variant_get(cr.value, "((&s&o))", &cbus, &cpath);
                   if (!cbus || !cpath || std::string(cpath) == "/org/a11y/atspi/null") return;
                   b.Call(cbus, cpath, kIfAccessible, "GetRole", nullptr, "(u)", [w](const Reply& fr) {
                     if (fr.outcome != Outcome::kOk) return;
                     g_variant_get(fr.value, "(u)", &w->firstChildRole);
                     w->haveFirstChild = true;
                   });
                 });
        });
        b.Call(w->bus, w->path, kIfAccessible, "GetState", nullptr, "(au)", [w](const Reply& sr) {
          if (sr.outcome != Outcome::kOk) return;
          VariantPtr au = AdoptVariant(g_variant_get_child_value(sr.value, 0));
          w->states = StatesFrom(au.get());
        });
        b.GetProperty(w->bus, w->path, kIfAccessible, "Name", [w](const Reply& nr) {
          if (nr.outcome == Outcome::kOk && g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING))
            w->title = g_variant_get_string(nr.value, nullptr);
        });
        b.GetProperty(w->bus, w->path, kIfAccessible, "ChildCount", [w](const Reply& cr) {
          if (cr.outcome == Outcome::kOk && g_variant_is_of_type(cr.value, G_VARIANT_TYPE_INT32))
            w->childCount = g_variant_get_int32(cr.value);
        });
        b.Call(w->bus, w->path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))", [w](const Reply& er) {
          if (er.outcome != Outcome::kOk) return;
          w->frame = RectOf(er.value);
          w->hasFrame = true;
        });
      }
    });
    b.Run();
    if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  }
  if (appError) return appError;
  if (noReply)
    return MakeError(ErrorCode::kAppUnresponsive,
                     "application " + appCopy.bus + " did not answer when its windows were read (busy or stopped)");
  if (expected) {
    im.walkExpected.clear();
    // Once the windows are read: the app then has nothing to answer until the walk (window choice goes on with
    // X11), so its bulk read goes on meanwhile; asked before, it would hold up these reads instead.
    StartPrefetch(im, appCopy.bus, deadline);
    AwaitPrefetchRegistration(im, appCopy.bus, deadline);
  }
  for (const WinWork& w : wins) {
    if (!w.haveRole || !IsWindowRole(w.role)) continue;
    WindowInfo info;
    info.element = im.Intern(w.bus, w.path);
    info.title = w.title;
    info.frame = w.frame;
    info.hasFrame = w.hasFrame;
    info.active = w.states.Has(kStateActive);
    info.minimized = w.states.Has(kStateIconified);
    info.visible = w.states.Has(kStateShowing) && w.states.Has(kStateVisible);
    info.role = RoleName(w.role);
    info.modal = w.states.Has(kStateModal);
    // Object paths are unique within the app's connection for the object's life.
    info.id = w.path;
    if (w.role == kRoleWindow) {
      const std::string inner = w.haveFirstChild ? RoleName(w.firstChildRole) : "";
      info.kind = inner == "menu" || inner == "popup menu" ? "menu" : "popup";
    } else if (w.role == kRoleFrame && w.title.empty() && w.childCount == 0) {
      // Chromium's <select> list (and other views popups): an untitled, empty
      // toplevel; the options live in the page, under the expanded combo box.
      info.kind = "popup";
      info.inParent = true;
    }
    out.push_back(std::move(info));
  }
  return {};
}

Error AtspiBackend::ListedWindows(const AppInfo& app, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  if (Error e = Windows(app, out, deadline)) return e;
  AppendMenuBarMenus(*impl_, out, deadline);
  return {};
}

// GTK3 does not expose a menu bar's open menu as a toplevel (a menu attached to
// a menu item has no toplevel accessible; a combo box's or a menu button's
// has): the menu bar item ("menu" role) holds the items itself, showing while
// open. Found by a bounded search of each visible window's containers for menu
// bars (depth <= 3, <= 256 nodes), then the bar's selected items and their
// selected submenus. Each open menu is listed with the item's path as id, its
// name as title and its items' extents as frame.
void AtspiBackend::AppendMenuBarMenus(Impl& im, std::vector<WindowInfo>& out, Clock::time_point deadline) {
  struct Node {
    std::string bus, path;
    std::string role, name;
    StateSet states;
    Rect frame;
    bool hasFrame = false;
  };
  std::vector<Node> level;
  for (const WindowInfo& w : out) {
    if (!w.visible || w.minimized || w.kind == "menu" || w.kind == "popup") continue;
    const ObjRef* ref = im.Lookup(w.element);
    if (!ref) continue;
    Node n;
    n.bus = ref->bus;
    n.path = ref->path;
    level.push_back(std::move(n));
  }
  // Reads children (role, name, states; extents when asked) of `parents`.
  auto children = [&](const std::vector<Node>& parents, bool extents, bool names) {
    std::deque<Node> got;
    ContextScope scope(im.ctx.get());
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    for (const Node& p : parents) {
      b.Call(p.bus, p.path, kIfAccessible, "GetChildren", nullptr, "(a(so))", [&, extents, names](const Reply& r) {
        if (r.outcome != Outcome::kOk) return;
        for (ObjRef& ref : RefsIn(r.value)) {
          got.emplace_back();
          Node* n = &got.back();
          const bool named = names;
          n->bus = std::move(ref.bus);
          n->path = std::move(ref.path);
          b.Call(n->bus, n->path, kIfAccessible, "GetRole", nullptr, "(u)", [n](const Reply& rr) {
            if (rr.outcome != Outcome::kOk) return;
            uint32_t role = 0;
            g_variant_get(rr.value, "(u)", &role);
            n->role = RoleName(role);
          });
          b.Call(n->bus, n->path, kIfAccessible, "GetState", nullptr, "(au)", [n](const Reply& sr) {
            if (sr.outcome != Outcome::kOk) return;
            VariantPtr au = AdoptVariant(g_variant_get_child_value(sr.value, 0));
            n->states = StatesFrom(au.get());
          });
          if (named)
            b.GetProperty(n->bus, n->path, kIfAccessible, "Name", [n](const Reply& nr) {
              if (nr.outcome == Outcome::kOk && g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING))
                n->name = g_variant_get_string(nr.value, nullptr);
            });
          if (!extents) continue;
          b.Call(n->bus, n->path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
                 [n](const Reply& er) {
                   if (er.outcome != Outcome::kOk) return;
                   n->frame = RectOf(er.value);
                   n->hasFrame = n->frame.x != kHiddenCoordinate && n->frame.w > 0 && n->frame.h > 0;
                 });
        }
      });
    }
    b.Run();
    return std::vector<Node>(got.begin(), got.end());
  };
  // Menu bars: containers only, a few levels down. On the way, open popovers
  // (GTK3 GtkPopover: a "panel" with the MODAL state among the window's
  // children, whose parent is the menu button; a menu button's menu model
  // lives in its window too). Titled with the button's name.
  std::vector<Node> bars, popovers;
  size_t seen = 0;
  for (int depth = 0; depth < 3 && !level.empty() && seen < 256 && Clock::now() < deadline; ++depth) {
    std::vector<Node> next;
    for (Node& n : children(level, false, false)) {
      ++seen;
      if (!n.states.Has(kStateShowing)) continue;
      if (n.role == "menu bar")
        bars.push_back(std::move(n));
      else if ((n.role == "popup menu" || (n.role == "panel" && n.states.Has(kStateModal))) &&
               n.states.Has(kStateVisible))
        popovers.push_back(std::move(n));
      else if (n.role == "filler" || n.role == "panel" || n.role == "layered pane" || n.role == "root pane" ||
               n.role == "tool bar")
        next.push_back(std::move(n));
    }
    level = std::move(next);
  }
  if (!popovers.empty() && Clock::now() < deadline) {
    ContextScope scope(im.ctx.get());
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    for (Node& n : popovers) {
      Node* p = &n;
      b.GetProperty(p->bus, p->path, kIfAccessible, "Name", [p](const Reply& nr) {
        if (nr.outcome == Outcome::kOk && g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING) && p->name.empty())
          p->name = g_variant_get_string(nr.value, nullptr);
      });
      b.GetProperty(p->bus, p->path, kIfAccessible, "Parent", [p, &b](const Reply& pr) {
        if (pr.outcome != Outcome::kOk || !g_variant_is_of_type(pr.value, G_VARIANT_TYPE("(so)"))) return;
        const gchar* pbus = nullptr;
        const gchar* ppath = nullptr;
        g_variant_get(pr.value, "(&s&o)", &pbus, &ppath);
        if (!pbus || !ppath || std::string(ppath) == "/org/a11y/atspi/null") return;
        b.GetProperty(pbus, ppath, kIfAccessible, "Name", [p](const Reply& nr) {
          if (nr.outcome == Outcome::kOk && g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING))
            p->name = g_variant_get_string(nr.value, nullptr);
        });
      });
      b.Call(p->bus, p->path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))", [p](const Reply& er) {
        if (er.outcome != Outcome::kOk) return;
        p->frame = RectOf(er.value);
        p->hasFrame = p->frame.x != kHiddenCoordinate && p->frame.w > 0 && p->frame.h > 0;
      });
    }
    b.Run();
    for (const Node& n : popovers) {
      if (!n.hasFrame) continue;
      WindowInfo info;
      info.element = im.Intern(n.bus, n.path);
      info.title = n.name;
      info.frame = n.frame;
      info.hasFrame = true;
      info.role = n.role;
      info.kind = "menu";
      info.id = n.path;
      info.inParent = true;
      out.push_back(std::move(info));
    }
  }
  // Open menus: a bar's selected "menu" item, then its selected "menu" items (submenus).
  level = std::move(bars);
  for (int depth = 0; depth < 4 && !level.empty() && Clock::now() < deadline; ++depth) {
    std::vector<Node> open;
    for (Node& n : children(level, false, true))
      if (n.role == "menu" && n.states.Has(kStateSelected) && n.states.Has(kStateShowing)) open.push_back(n);
    if (open.empty()) break;
    for (Node& menu : open) {
      WindowInfo info;
      std::vector<Node> items = children({menu}, true, false);
      bool any = false;
      for (const Node& item : items) {
        if (!item.hasFrame || !item.states.Has(kStateShowing)) continue;
        if (!any) {
          info.frame = item.frame;
          any = true;
          continue;
        }
        const double x2 = std::max(info.frame.x + info.frame.w, item.frame.x + item.frame.w);
        const double y2 = std::max(info.frame.y + info.frame.h, item.frame.y + item.frame.h);
        info.frame.x = std::min(info.frame.x, item.frame.x);
        info.frame.y = std::min(info.frame.y, item.frame.y);
        info.frame.w = x2 - info.frame.x;
        info.frame.h = y2 - info.frame.y;
      }
      if (!any) continue;  // selected but not open (keyboard focus on the bar)
      info.element = im.Intern(menu.bus, menu.path);
      info.title = menu.name;
      info.hasFrame = true;
      info.role = "menu";
      info.kind = "menu";
      info.id = menu.path;
      info.inParent = true;
      out.push_back(std::move(info));
    }
    level = std::move(open);
  }
}

// ---------------------------------------------------------------------------
// Node reads.

namespace {
struct NodeJob {
  ElementId id = 0;
  const ObjRef* ref = nullptr;
  NodeAttributes* out = nullptr;
  Error* err = nullptr;
  bool failed = false;

  int phase1Pending = 0;
  uint32_t role = 0;
  StateSet states;
  uint32_t ifaces = 0;
  bool haveRole = false, haveStates = false, haveIfaces = false;
  std::string name;
  VariantPtr attributes;        // a{ss} from the Accessible properties (GetAll), when given
  VariantPtr objectAttributes;  // GetAttributes, asked of text entries: wins over the properties' copy
  // What the text decision (issueText) still waits for: phase 2's own step, and
  // the properties' GetAll when it runs beside phase 2 (their Attributes may
  // make the field secure).
  int textWaits = 1;

  bool secure = false;  // decided in phase 2 (role, attributes, name), before any text is read

  GVariant* Attributes() const { return objectAttributes ? objectAttributes.get() : attributes.get(); }

  // Value sources, resolved at the end.
  std::optional<double> number;
  std::optional<std::string> text;
  int64_t childCount = -1;  // from the Accessible properties, when given

  // Relations of a nameless control: the names of its LABELLED_BY and
  // DESCRIBED_BY targets (by slot, in the app's order), the labels' objects.
  // These are interned only when their names became the title (FinishNode):
  // a handle the result does not carry would never be released.
  std::vector<std::string> labelNames, describerNames;
  std::vector<ObjRef> labels;
  bool namedByLabels = false;
};

// AtspiRelationType (atspi-constants.h).
constexpr uint32_t kRelationLabelledBy = 2;
constexpr uint32_t kRelationDescribedBy = 18;
constexpr size_t kMaxRelationTargets = 4;

// A control an agent must tell apart by name: without one it prints as a bare
// role, so its label is looked up through its relations (as screen readers do).
bool WantsRelationName(const NodeJob& job) {
  if (!job.name.empty()) return false;
  if (IsTextEntryRole(job.role) || IsCheckableRole(job.role)) return true;
  if (job.ifaces & (kHasEditableText | kHasValue)) return true;
  const std::string r = RoleName(job.role);
  return r == "combo box" || r == "slider" || r == "push button" || r == "list box" || r == "spin button" ||
         r == "table" || r == "tree table" || r == "tree" || r == "list";
}

// Names joined by a space, blank ones skipped.
std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (n.find_first_not_of(" \t\n") == std::string::npos) continue;
    if (!out.empty()) out.push_back(' ');
    out += n;
  }
  return out;
}

bool Fail(NodeJob& job, const Reply& r, int perCallMs) {
  if (r.outcome == Outcome::kOk || r.outcome == Outcome::kFailed) return false;
  if (!job.failed) {
    job.failed = true;
    *job.err = OutcomeError(r.outcome, job.ref->bus, r.message, perCallMs);
  }
  return true;
}

// Whether an HTML id names a password field: a word (split at - _ and case
// changes) password, passwd, pwd, passcode or pin. Pages hide autocomplete
// from AT-SPI (Chromium exposes only the id), so the id stands in for it.
bool IdSaysPassword(const std::string& id) {
  std::string spaced;
  for (size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    if (i > 0 && std::isupper(static_cast<unsigned char>(c)) && std::islower(static_cast<unsigned char>(id[i - 1])))
      spaced.push_back(' ');
    spaced.push_back(c == '-' || c == '_' || c == '.' ? ' ' : c);
  }
  if (NameSaysPassword(spaced)) return true;
  std::string word;
  for (size_t i = 0; i <= spaced.size(); ++i) {
    const char c = i < spaced.size() ? spaced[i] : ' ';
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      continue;
    }
    if (word == "passwd" || word == "pwd") return true;
    word.clear();
  }
  return false;
}

// A secure field: its text is never read, only its length.
bool IsSecureField(const NodeJob& job, bool nameHeuristic) {
  if (job.role == kRolePasswordText) return true;
  if (AttributesSayPassword(job.Attributes())) return true;
  if (!(IsTextEntryRole(job.role) || (job.ifaces & kHasEditableText))) return false;
  // The HTML id is markup, like autocomplete: not switched off with the name heuristic.
  std::string id;
  if (AttrString(job.Attributes(), "id", id) && IdSaysPassword(id)) return true;
  return nameHeuristic && NameSaysPassword(job.name);
}

// A table that creates its cells on demand and reaches them through Table
// (GTK3's tree view): ReadChildren may read only its rows on screen.
bool ManagesCells(const NodeJob& job) {
  if (!job.states.Has(kStateManagesDescendants)) return false;
  if ((job.ifaces & (kHasTable | kHasComponent)) != (kHasTable | kHasComponent)) return false;
  const std::string r = RoleName(job.role);
  return r == "table" || r == "tree table";
}

void FinishNode(NodeJob& job) {
  NodeAttributes& a = *job.out;
  a.role = RoleName(job.role);
  a.title = job.name;  // the accessible name, empty included (the renderer decides)
  if (job.name.empty()) a.title.reset();
  if (job.name.empty()) {
    std::string label = JoinNames(job.labelNames);
    if (!label.empty()) {
      a.title = std::move(label);
      job.namedByLabels = true;
    }
  }
  if (!a.description) {
    std::string described = JoinNames(job.describerNames);
    if (!described.empty()) a.description = std::move(described);
  }
  const StateSet& s = job.states;
  States& st = a.states;
  st.enabled = s.Has(kStateEnabled);
  if (s.Has(kStateFocused)) st.focused = true;
  if (s.Has(kStateFocusable)) st.focusable = true;
  if (s.Has(kStateSelectable)) {
    st.selectable = true;
    st.selected = s.Has(kStateSelected);
  } else if (s.Has(kStateSelected)) {
    st.selected = true;
  }
  if (s.Has(kStateExpandable)) st.expanded = s.Has(kStateExpanded);
  if (s.Has(kStateIndeterminate) && (s.Has(kStateCheckable) || IsCheckableRole(job.role)))
    st.checked = 2;
  else if (s.Has(kStateCheckable) || s.Has(kStateChecked) || IsCheckableRole(job.role))
    st.checked = s.Has(kStateChecked) ? 1 : 0;
  if (s.Has(kStateIconified)) st.minimized = true;
  if (job.secure) st.secure = true;
  if (s.Has(kStateRequired)) st.required = true;
  if (s.Has(kStateReadOnly)) st.readonly = true;
  if (s.Has(kStateMultiLine)) st.multiline = true;
  if (s.Has(kStateEditable)) st.editable = true;
  if (s.Has(kStateModal)) st.modal = true;
  st.visible = s.Has(kStateShowing) && s.Has(kStateVisible);
  if (s.Has(kStateHorizontal))
    a.orientation = "horizontal";
  else if (s.Has(kStateVertical))
    a.orientation = "vertical";

  if (job.ifaces & kHasValue) {
    // GTK sets Value through AT-SPI; progress and level bars only display one.
    a.settable = job.role != kRoleProgressBar && job.role != kRoleLevelBar && !s.Has(kStateReadOnly);
    a.valueType = "number";
    if (job.number) a.value = *job.number;
  } else if (job.ifaces & kHasEditableText) {
    a.settable = !s.Has(kStateReadOnly);
    a.valueType = "string";
    if (!job.secure && job.text) a.value = *job.text;
  } else if (job.text && !job.secure) {
    a.valueType = "string";
    a.value = *job.text;
  }

  if (job.Attributes()) {
    std::string placeholder;
    if (AttrString(job.Attributes(), "placeholder-text", placeholder) && !placeholder.empty())
      a.placeholder = placeholder;
  }
}

}  // namespace

Error AtspiBackend::ReadNodes(const std::vector<ElementId>& ids, std::vector<NodeAttributes>& out,
                              std::vector<Error>& errs, Clock::time_point deadline) {
  Impl& im = *impl_;
  out.assign(ids.size(), NodeAttributes{});
  errs.assign(ids.size(), Error{});
  if (Error e = Ready(deadline)) return e;
  ContextScope scope(im.ctx.get());

  std::vector<NodeJob> jobs(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    jobs[i].id = ids[i];
    jobs[i].out = &out[i];
    jobs[i].err = &errs[i];
    jobs[i].ref = im.Lookup(ids[i]);
    if (!jobs[i].ref) {
      jobs[i].failed = true;
      errs[i] = im.Unknown(ids[i]);
    }
  }
  EnsurePeersFor(im, ids, deadline);

  Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
  b.UsePeers(&im.peers);
  const int perCall = b.PerCallMs();

  // Text: decided once role, name and object attributes are known, so a
  // secure field's text is never asked for.
  auto issueText = [&b, perCall, secureNames = im.secureNames](NodeJob* j) {
    if (j->failed) return;
    j->secure = IsSecureField(*j, secureNames);
    if (!(j->ifaces & kHasText)) return;
    const bool secure = j->secure;
    const bool editable = (j->ifaces & kHasEditableText) || j->states.Has(kStateEditable);
    // Keep the text where it adds to the name: editable text, or text without a name.
    // Containers (Chromium's panels, sections, lists) also implement Text, as
    // U+FFFC placeholders for their children: only text-bearing roles qualify.
    const std::string roleName = RoleName(j->role);
    const bool textRole = roleName == "static" || roleName == "label" || roleName == "paragraph" ||
                          roleName == "text" || roleName == "heading" || roleName == "caption" ||
                          roleName == "terminal" || roleName == "entry";
    const bool wantText = !secure && !(j->ifaces & kHasValue) && (editable || (j->name.empty() && textRole));
    const bool wantSelection = !secure && j->states.Has(kStateFocused);
    // The count alone matters only for a secure field (whether it holds anything); Chromium
    // implements Text on every element, so asking everywhere would cost a call per element.
    if (!wantText && !wantSelection && !secure) return;
    b.GetProperty(j->ref->bus, j->ref->path, kIfText, "CharacterCount",
                  [j, perCall, wantText, wantSelection, editable, &b](const Reply& r) {
                    if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
                    int64_t count = 0;
                    if (!VariantToInt(r.value, count) || count < 0) return;
                    j->out->charCount = count;
                    if (wantText) {
                      if (count == 0) {
                        if (editable) j->text = std::string();
                      } else {
                        b.Call(j->ref->bus, j->ref->path, kIfText, "GetText",
                               g_variant_new("(ii)", 0, gint32(std::min(count, kMaxTextChars))), "(s)",
                               [j, perCall](const Reply& tr) {
                                 if (Fail(*j, tr, perCall) || tr.outcome != Outcome::kOk) return;
                                 const gchar* s = nullptr;
                                 g_variant_get(tr.value, "(&s)", &s);
                                 j->text = s ? s : "";
                               });
                      }
                    }
                    if (wantSelection && count > 0) {
                      b.Call(j->ref->bus, j->ref->path, kIfText, "GetSelection", g_variant_new("(i)", 0), "(ii)",
                             [j, perCall, &b](const Reply& sr) {
                               if (Fail(*j, sr, perCall) || sr.outcome != Outcome::kOk) return;
                               gint32 start = 0, end = 0;
                               g_variant_get(sr.value, "(ii)", &start, &end);
                               if (end <= start || start < 0) return;
                               end = gint32(std::min<int64_t>(end, int64_t(start) + kMaxTextChars));
                               b.Call(j->ref->bus, j->ref->path, kIfText, "GetText", g_variant_new("(ii)", start, end),
                                      "(s)", [j, perCall](const Reply& tr) {
                                        if (Fail(*j, tr, perCall) || tr.outcome != Outcome::kOk) return;
                                        const gchar* s = nullptr;
                                        g_variant_get(tr.value, "(&s)", &s);
                                        if (s && *s) j->out->selectedText = s;
                                      });
                             });
                    }
                  });
  };
  // The text decision runs once everything it reads has come (NodeJob::textWaits).
  auto textStep = [&issueText](NodeJob* j) {
    if (--j->textWaits == 0) issueText(j);
  };

  // Phase 2: what depends on role, states and interfaces.
  auto phase2 = [&](NodeJob& job) {
    if (job.failed) return;
    const std::string& busName = job.ref->bus;
    const std::string& path = job.ref->path;
    NodeJob* j = &job;
    // Extents cost GTK an X round trip each, the largest share of a walk: not
    // asked (outside live reads) where no line can use them: a hidden element
    // never prints, and a nameless wrapper with nothing to act on is elided or
    // printed with its children's union (lib/render/plan.ts).
    const bool hidden = !(job.states.Has(kStateShowing) && job.states.Has(kStateVisible));
    const bool wrapper = IsWrapperRole(job.role) && job.name.empty() && !job.out->description &&
                         !(job.ifaces & (kHasAction | kHasValue | kHasEditableText));
    if ((job.ifaces & kHasComponent) && (im.live || !(hidden || wrapper))) {
      b.Call(busName, path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
             [j, perCall](const Reply& r) {
               if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
               j->out->frame = RectOf(r.value);
             });
    }
    if (job.ifaces & kHasAction) {
      // One GetActions call for all names (localized, e.g. "Click"; matching is
      // case-insensitive everywhere). NActions + GetName(i) would cost one call
      // per action, the largest share of a walk's calls.
      // Chromium leaves the localized names empty: those few are asked for
      // again by index (GetName gives the raw name, "press").
      b.Call(busName, path, kIfAction, "GetActions", nullptr, "(a(sss))", [j, perCall, &b](const Reply& r) {
        if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
        VariantPtr arr = AdoptVariant(g_variant_get_child_value(r.value, 0));
        auto names = std::make_shared<std::vector<std::string>>();
        std::vector<size_t> missing;
        GVariantIter it;
        g_variant_iter_init(&it, arr.get());
        const gchar *name = nullptr, *desc = nullptr, *keys = nullptr;
        while (g_variant_iter_next(&it, "(&s&s&s)", &name, &desc, &keys)) {
          if (!name || !*name) missing.push_back(names->size());
          names->emplace_back(ActionNameOf(name ? name : ""));
          if (names->size() >= 64) break;
        }
        auto publish = [j, names]() {
          for (auto& s : *names)
            if (!s.empty()) j->out->actions.push_back(std::move(s));
        };
        if (missing.empty()) return publish();
        auto left = std::make_shared<size_t>(missing.size());
        for (size_t k : missing) {
          b.Call(j->ref->bus, j->ref->path, kIfAction, "GetName", g_variant_new("(i)", gint32(k)), "(s)",
                 [j, perCall, names, left, k, publish](const Reply& gr) {
                   if (!Fail(*j, gr, perCall) && gr.outcome == Outcome::kOk) {
                     const gchar* s = nullptr;
                     g_variant_get(gr.value, "(&s)", &s);
                     (*names)[k] = ActionNameOf(s ? s : "");
                   }
                   if (--*left == 0) publish();
                 });
        }
      });
    }
    if (job.ifaces & kHasValue) {
      b.GetProperty(busName, path, kIfValue, "CurrentValue", [j, perCall](const Reply& r) {
        if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
        double d = 0;
        if (VariantToDouble(r.value, d)) j->number = d;
      });
    }
    const bool entry = IsTextEntryRole(job.role) || (job.ifaces & kHasEditableText);
    if (entry) {
      // Object attributes first (autocomplete, input type, id): they may make the field secure. Asked even
      // when GetAll gave an Attributes property: Chromium's is not the object attributes (it lacks the id).
      b.Call(busName, path, kIfAccessible, "GetAttributes", nullptr, "(a{ss})",
             [j, perCall, &textStep](const Reply& r) {
               if (Fail(*j, r, perCall)) return;
               if (r.outcome == Outcome::kOk) j->objectAttributes = AdoptVariant(g_variant_get_child_value(r.value, 0));
               textStep(j);
             });
    } else {
      textStep(j);
    }
    if (WantsRelationName(job)) {
      // LABELLED_BY and DESCRIBED_BY targets; their names from the bulk cache when it has them.
      b.Call(busName, path, kIfAccessible, "GetRelationSet", nullptr, "(a(ua(so)))",
             [j, perCall, &b, &im](const Reply& r) {
               if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
               VariantPtr arr = AdoptVariant(g_variant_get_child_value(r.value, 0));
               GVariantIter it;
               g_variant_iter_init(&it, arr.get());
               guint32 type = 0;
               GVariantIter* targets = nullptr;
               while (g_variant_iter_next(&it, "(ua(so))", &type, &targets)) {
                 const bool label = type == kRelationLabelledBy;
                 const bool describer = type == kRelationDescribedBy;
                 const gchar *tBus = nullptr, *tPath = nullptr;
                 while ((label || describer) && g_variant_iter_next(targets, "(&s&o)", &tBus, &tPath)) {
                   std::vector<std::string>& names = label ? j->labelNames : j->describerNames;
                   if (names.size() >= kMaxRelationTargets) continue;
                   const std::string targetBus = tBus;
                   const std::string targetPath = tPath;
                   if (targetPath == "/org/a11y/atspi/null") continue;
                   const size_t slot = names.size();
                   names.emplace_back();
                   if (label) j->labels.push_back({targetBus, targetPath});
                   auto cached = im.bulk.find(targetBus);
                   if (cached != im.bulk.end()) {
                     auto item = cached->second.items.find(targetPath);
                     if (item != cached->second.items.end()) {
                       names[slot] = item->second.name;
                       continue;
                     }
                   }
                   b.GetProperty(targetBus, targetPath, kIfAccessible, "Name", [j, label, slot](const Reply& nr) {
                     // A label that cannot be read only leaves the name empty: never the control's error.
                     if (nr.outcome != Outcome::kOk || !g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING)) return;
                     (label ? j->labelNames : j->describerNames)[slot] = g_variant_get_string(nr.value, nullptr);
                   });
                 }
                 g_variant_iter_free(targets);
               }
             });
    }
    // Chromium puts Document on every element of a page: only documents carry a URL worth a call.
    if ((job.ifaces & kHasDocument) && IsDocumentRole(job.role)) {
      b.Call(busName, path, kIfDocument, "GetAttributes", nullptr, "(a{ss})", [j, perCall](const Reply& r) {
        if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
        VariantPtr attrs = AdoptVariant(g_variant_get_child_value(r.value, 0));
        std::string url;
        if ((AttrString(attrs.get(), "DocURL", url) || AttrString(attrs.get(), "URI", url)) && !url.empty())
          j->out->url = url;
      });
    }
    if (job.role == kRoleLink && (job.ifaces & kHasHyperlink)) {
      b.Call(busName, path, kIfHyperlink, "GetURI", g_variant_new("(i)", 0), "(s)", [j, perCall](const Reply& r) {
        if (Fail(*j, r, perCall) || r.outcome != Outcome::kOk) return;
        const gchar* s = nullptr;
        g_variant_get(r.value, "(&s)", &s);
        if (s && *s) j->out->url = s;
      });
    }
  };

  auto phase1Done = [&](NodeJob& job) {
    if (--job.phase1Pending == 0 && !job.failed) phase2(job);
  };

  // Name, Description, AccessibleId, HelpText (newer bridges), Attributes
  // (atk-bridge) in one call. Mostly asked after every other call of the
  // batch (issuePhase1), so that the app answers first the calls the walk's
  // next steps depend on.
  auto issueGetAll = [&](NodeJob& job, bool needBasics) {
    NodeJob* j = &job;
    b.Call(
        job.ref->bus, job.ref->path, kIfProperties, "GetAll", g_variant_new("(s)", kIfAccessible), "(a{sv})",
        [j, perCall, needBasics, &b, &phase1Done, &textStep, &im](const Reply& r) {
          auto done = [&]() { needBasics ? phase1Done(*j) : textStep(j); };
          if (Fail(*j, r, perCall)) return done();
          if (r.outcome == Outcome::kOk) {
            VariantPtr dict = AdoptVariant(g_variant_get_child_value(r.value, 0));
            std::string s;
            if (needBasics && DictString(dict.get(), "Name", s)) j->name = s;
            if (needBasics && DictString(dict.get(), "Description", s) && !s.empty()) j->out->description = s;
            // Ids and help only from an app still probed or known to give them (Impl::idProbe).
            const bool keepIds = im.WantsGetAll(j->ref->bus);
            auto& probe = im.idProbe[j->ref->bus];
            probe.reads++;
            if (DictString(dict.get(), "HelpText", s) && !s.empty()) {
              probe.seen = true;
              if (keepIds) j->out->help = s;
            }
            if (DictString(dict.get(), "AccessibleId", s) && !s.empty()) {
              probe.seen = true;
              if (keepIds) j->out->identifier = s;
            }
            VariantPtr childCount = AdoptVariant(g_variant_lookup_value(dict.get(), "ChildCount", nullptr));
            int64_t n = -1;
            if (childCount && VariantToInt(childCount.get(), n)) j->childCount = n;
            VariantPtr attrs = AdoptVariant(g_variant_lookup_value(dict.get(), "Attributes", G_VARIANT_TYPE("a{ss}")));
            if (attrs) j->attributes = std::move(attrs);
            return done();
          }
          // No GetAll: the two properties that matter, one by one.
          if (!needBasics) return done();
          j->phase1Pending += 2;
          b.GetProperty(j->ref->bus, j->ref->path, kIfAccessible, "Name", [j, perCall, &phase1Done](const Reply& nr) {
            if (!Fail(*j, nr, perCall) && nr.outcome == Outcome::kOk &&
                g_variant_is_of_type(nr.value, G_VARIANT_TYPE_STRING))
              j->name = g_variant_get_string(nr.value, nullptr);
            phase1Done(*j);
          });
          b.GetProperty(j->ref->bus, j->ref->path, kIfAccessible, "Description",
                        [j, perCall, &phase1Done](const Reply& dr) {
                          if (!Fail(*j, dr, perCall) && dr.outcome == Outcome::kOk &&
                              g_variant_is_of_type(dr.value, G_VARIANT_TYPE_STRING)) {
                            std::string s = g_variant_get_string(dr.value, nullptr);
                            if (!s.empty()) j->out->description = s;
                          }
                          phase1Done(*j);
                        });
          phase1Done(*j);
        });
  };

  std::vector<std::pair<NodeJob*, bool>> propertyReads;  // GetAll to ask, after the rest (issueGetAll)
  auto issuePhase1 = [&](NodeJob& job, bool needBasics) {
    NodeJob* j = &job;
    const std::string& busName = job.ref->bus;
    const std::string& path = job.ref->path;
    if (!needBasics && !im.WantsGetAll(busName)) {
      // Role, name, states and interfaces came with the bulk read; nothing else of phase 1 is asked.
      job.phase1Pending = 1;
      return phase1Done(job);
    }
    job.phase1Pending = needBasics ? 4 : 1;
    // Deferred while the probe counts answers (all of them then in the jobs'
    // order) or when only ids and help are wanted; in place otherwise.
    if (!needBasics || im.Probing(busName))
      propertyReads.emplace_back(&job, needBasics);
    else
      issueGetAll(job, needBasics);
    if (!needBasics) {
      // With the basics from the bulk read, GetAll brings only what phase 2
      // does not need (identifier, help, child count), except the Attributes
      // the text decision reads: phase 2 goes out now, and only that decision
      // waits for it.
      job.textWaits = 2;
      return phase2(job);
    }
    {
      b.Call(busName, path, kIfAccessible, "GetRole", nullptr, "(u)", [j, perCall, &phase1Done](const Reply& r) {
        if (!Fail(*j, r, perCall)) {
          if (r.outcome == Outcome::kOk) {
            g_variant_get(r.value, "(u)", &j->role);
            j->haveRole = true;
          } else if (!j->failed) {
            j->failed = true;
            *j->err = MakeError(ErrorCode::kElementGone, "not an accessible object: " + r.message);
          }
        }
        phase1Done(*j);
      });
      b.Call(busName, path, kIfAccessible, "GetState", nullptr, "(au)", [j, perCall, &phase1Done](const Reply& r) {
        if (!Fail(*j, r, perCall) && r.outcome == Outcome::kOk) {
          VariantPtr au = AdoptVariant(g_variant_get_child_value(r.value, 0));
          j->states = StatesFrom(au.get());
          j->haveStates = true;
        }
        phase1Done(*j);
      });
      b.Call(busName, path, kIfAccessible, "GetInterfaces", nullptr, "(as)", [j, perCall, &phase1Done](const Reply& r) {
        if (!Fail(*j, r, perCall) && r.outcome == Outcome::kOk) {
          VariantPtr as = AdoptVariant(g_variant_get_child_value(r.value, 0));
          j->ifaces = IfaceBits(as.get());
          j->haveIfaces = true;
        }
        phase1Done(*j);
      });
    }
  };

  // Bulk: one GetItems per app for role/name/description/states/interfaces.
  std::unordered_map<std::string, std::vector<NodeJob*>> byApp;
  for (NodeJob& job : jobs)
    if (!job.failed) byApp[job.ref->bus].push_back(&job);

  // Role, name, description, states and interfaces from the app's bulk
  // snapshot when it holds the element; read one by one otherwise.
  std::unordered_map<std::string, const BulkSnapshot*> snaps;
  for (auto& [busName, group] : byApp) {
    const BulkSnapshot* snap = nullptr;
    if (im.useBulk && !im.live) {
      auto kept = im.bulk.find(busName);
      if (kept != im.bulk.end() && Clock::now() - kept->second.taken < im.bulkMaxAge)
        snap = &kept->second;
      else if (group.size() >= 4)  // a lone element is cheaper read live than a whole bulk read
        snap = FreshBulk(im, busName, deadline);
    }
    snaps[busName] = snap;
  }
  for (auto& [busName, group] : byApp) {
    const BulkSnapshot* snap = snaps[busName];
    for (NodeJob* j : group) {
      const CacheItem* item = nullptr;
      if (snap)
        if (auto it = snap->items.find(j->ref->path); it != snap->items.end()) item = &it->second;
      if (!item) {
        issuePhase1(*j, true);
        continue;
      }
      const CacheItem& c = *item;
      j->role = c.role;
      j->name = c.name;
      if (*c.description) j->out->description = c.description;
      j->states = c.states;
      j->ifaces = snap->IfacesOf(c);
      j->childCount = c.childCount;
      j->haveRole = j->haveStates = j->haveIfaces = true;
      issuePhase1(*j, false);  // identifier, help, attributes when the app gives them; then phase 2
    }
  }
  for (auto& [job, needBasics] : propertyReads) issueGetAll(*job, needBasics);

  b.Run();
  if (b.Abandoned()) {
    for (NodeJob& job : jobs) {
      if (job.failed) continue;
      job.failed = true;
      *job.err = MakeError(ErrorCode::kTimeout, "the deadline passed before " + job.ref->bus + " answered");
    }
  }

  size_t okCount = 0;
  Error firstError;
  const auto readAt = Clock::now();
  for (NodeJob& job : jobs) {
    if (job.failed) {
      if (!firstError) firstError = *job.err;
      if (job.ref) im.countSeen.erase(job.id);
      continue;
    }
    if (job.childCount >= 0)
      im.countSeen[job.id] = {job.childCount, readAt};
    else
      im.countSeen.erase(job.id);
    if (!job.haveRole) {
      job.failed = true;
      *job.err = MakeError(ErrorCode::kInternal, "the role could not be read");
      continue;
    }
    FinishNode(job);
    if (job.namedByLabels)
      for (const ObjRef& label : job.labels) job.out->labelledBy.push_back(im.Intern(label.bus, label.path));
    if (ManagesCells(job))
      im.managesCells.insert(job.id);
    else
      im.managesCells.erase(job.id);
    ++okCount;
  }
  if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
  if (okCount == 0 && !ids.empty() && firstError.code == ErrorCode::kTimeout) return firstError;
  return {};
}

// ---------------------------------------------------------------------------
// Big tree views: the rows on screen, not every cell.
//
// GTK3's tree view (a table with MANAGES_DESCENDANTS) answers GetChildren
// with every cell of every row and makes an accessible for each: 30,003
// children in about 1.8 s for 10,000 rows of 3 columns, each then read. Its
// Table interface reaches one cell directly (GetAccessibleAt: about 0.5 ms
// alone, pipelined like any call), Component.GetAccessibleAtPoint finds the
// cell under a point, and a cell off screen has the hidden coordinate. So a
// table of more than kTableCutCells cells is read as: its column headers
// (GetColumnHeader: the children GTK lists first), the cell just below them
// (the first row on screen; its row from TableCell.Position, else
// Table.GetRowAtIndex of its index in the table), then the cells of the rows
// from there that can fit above the table's bottom, at most kTableCutRows
// (GetAccessibleAt), keeping the rows whose first cell is on screen.
// ChildList::total (NRows) and each cell's row number carry the real
// "(showing A-B of M items)" to the renderer. Five dependent steps, about
// 8 ms for 13 rows on screen (most of it GTK making the cells' accessibles);
// an app that refuses a Table call, or whose cell below the headers is not
// a table cell it can place, gets GetChildren instead. Which tables:
// ReadNodes notes the ones that manage their cells (ManagesCells); a small
// one (at most kTableCutCells cells) is read whole, as any other list.
namespace {

constexpr int64_t kTableCutCells = 256;
constexpr int64_t kTableCutRows = 20;  // the walk's and the renderer's cap on rows shown
constexpr int64_t kTableMaxColumns = 64;

struct TableRead {
  ObjRef ref;
  int64_t rows = -1, cols = -1;
  std::optional<Rect> frame;
  std::vector<std::string> headers;  // object paths by column; "" = none
  std::optional<Rect> headerFrame;   // the first column's header
  std::vector<std::string> probes;   // cells found below the headers, top first
  std::string probe;                 // the first of them
  std::optional<Rect> probeFrame;    // its place: a row is no taller than the distance to the next
  bool probeIsCell = false;          // a table cell (a table with row objects is read whole)
  int64_t position = -1, rowAtIndex = -1;
  int64_t first = -1;                           // the first row on screen
  std::vector<std::vector<std::string>> cells;  // rows first.., columns
  std::vector<std::optional<Rect>> rowFrames;   // each row's first cell
  bool fallback = false;                        // the app refused a Table call: GetChildren
  Error err;
  bool Live() const { return !fallback && !err; }
};

bool OnScreen(const Rect& r) { return r.x != kHiddenCoordinate && r.y != kHiddenCoordinate && r.w > 0 && r.h > 0; }

// The object of a "((so))" reply; "" for the null reference.
std::string RefPath(GVariant* reply) {
  const gchar* bus = nullptr;
  const gchar* path = nullptr;
  g_variant_get(reply, "((&s&o))", &bus, &path);
  if (!bus || !*bus || !path || std::strcmp(path, kNullPath) == 0) return {};
  return path;
}

}  // namespace

std::vector<bool> AtspiBackend::ReadVisibleTableRows(const std::vector<ElementId>& ids, std::vector<ChildList>& out,
                                                     std::vector<Error>& errs, Clock::time_point deadline) {
  Impl& im = *impl_;
  std::vector<bool> handled(ids.size(), false);
  std::vector<std::pair<size_t, TableRead>> tables;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!im.managesCells.count(ids[i])) continue;
    if (const ObjRef* ref = im.Lookup(ids[i])) {
      tables.emplace_back(i, TableRead{});
      tables.back().second.ref = *ref;
    }
  }
  if (tables.empty()) return handled;
  const int perCall = static_cast<int>(im.PerCall(deadline).count());
  // True when the reply cannot be used; a refusal sends the table to GetChildren, any other failure is its error.
  auto unusable = [perCall](TableRead& t, const Reply& r) {
    if (r.outcome == Outcome::kOk) return false;
    if (t.Live()) {
      if (r.outcome == Outcome::kFailed)
        t.fallback = true;
      else
        t.err = OutcomeError(r.outcome, t.ref.bus, r.message, perCall);
    }
    return true;
  };
  // One dependent step: `issue` queues a table's calls in a batch. False when the bus closed (GetChildren says so).
  auto step = [&](const std::function<void(Batch&, TableRead&)>& issue) {
    Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
    b.UsePeers(&im.peers);
    for (auto& entry : tables)
      if (entry.second.Live()) issue(b, entry.second);
    b.Run();
    if (b.Abandoned())
      for (auto& entry : tables)
        if (entry.second.Live()) entry.second.err = MakeError(ErrorCode::kTimeout, "the deadline passed");
    return !b.BusClosed();
  };

  // 1. Size and place.
  bool open = step([&](Batch& b, TableRead& t) {
    TableRead* tp = &t;
    b.Call(t.ref.bus, t.ref.path, kIfProperties, "GetAll", g_variant_new("(s)", kIfTable), "(a{sv})",
           [tp, &unusable](const Reply& r) {
             if (unusable(*tp, r)) return;
             VariantPtr dict = AdoptVariant(g_variant_get_child_value(r.value, 0));
             VariantPtr rows = AdoptVariant(g_variant_lookup_value(dict.get(), "NRows", nullptr));
             VariantPtr cols = AdoptVariant(g_variant_lookup_value(dict.get(), "NColumns", nullptr));
             if (!rows || !cols || !VariantToInt(rows.get(), tp->rows) || !VariantToInt(cols.get(), tp->cols))
               tp->fallback = true;
           });
    b.Call(t.ref.bus, t.ref.path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
           [tp, &unusable](const Reply& r) {
             if (!unusable(*tp, r)) tp->frame = RectOf(r.value);
           });
  });
  for (auto& entry : tables) {
    TableRead& t = entry.second;
    // A small table is read whole, as any other list.
    if (t.Live() && (t.rows < 0 || t.cols <= 0 || t.rows * t.cols <= kTableCutCells)) t.fallback = true;
  }

  // 2. Column headers.
  open = open && step([&](Batch& b, TableRead& t) {
           TableRead* tp = &t;
           const int64_t cols = std::min(t.cols, kTableMaxColumns);
           t.headers.assign(static_cast<size_t>(cols), std::string());
           for (int64_t c = 0; c < cols; ++c) {
             b.Call(t.ref.bus, t.ref.path, kIfTable, "GetColumnHeader", g_variant_new("(i)", gint32(c)), "((so))",
                    [tp, c, &b, &unusable](const Reply& r) {
                      if (unusable(*tp, r)) return;
                      std::string path = RefPath(r.value);
                      if (c == 0 && !path.empty())
                        b.Call(tp->ref.bus, path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
                               [tp](const Reply& er) {
                                 if (er.outcome == Outcome::kOk) tp->headerFrame = RectOf(er.value);
                               });
                      tp->headers[static_cast<size_t>(c)] = std::move(path);
                    });
           }
         });

  // 3. The cell just below the headers: a few points down, past a gap between rows.
  constexpr int kProbeDy[] = {1, 4, 8};
  open = open && step([&](Batch& b, TableRead& t) {
           if (!t.frame || !OnScreen(*t.frame) || t.rows == 0) return;
           const Rect& f = *t.frame;
           double top = f.y, x = f.x + f.w / 2;
           if (t.headerFrame && OnScreen(*t.headerFrame)) {
             const Rect& h = *t.headerFrame;
             top = std::max(top, std::min(h.y + h.h, f.y + f.h));
             x = std::clamp(h.x + h.w / 2, f.x + 1, f.x + f.w - 1);  // a header scrolled half out
           }
           TableRead* tp = &t;
           t.probes.assign(std::size(kProbeDy), std::string());
           for (size_t k = 0; k < std::size(kProbeDy); ++k) {
             const double y = top + kProbeDy[k];
             if (y >= f.y + f.h) break;
             b.Call(t.ref.bus, t.ref.path, kIfComponent, "GetAccessibleAtPoint",
                    g_variant_new("(iiu)", gint32(x), gint32(y), 0u), "((so))", [tp, k, &unusable](const Reply& r) {
                      if (!unusable(*tp, r)) tp->probes[k] = RefPath(r.value);
                    });
           }
         });
  for (auto& entry : tables)
    for (const std::string& p : entry.second.probes)
      if (!p.empty()) {
        entry.second.probe = p;
        break;
      }

  // 4. Its row: TableCell.Position, else the table's row of its index; and its height.
  open = open && step([&](Batch& b, TableRead& t) {
           if (t.probe.empty()) return;
           TableRead* tp = &t;
           b.Call(t.ref.bus, t.probe, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
                  [tp](const Reply& r) {
                    if (r.outcome == Outcome::kOk) tp->probeFrame = RectOf(r.value);
                  });
           b.Call(t.ref.bus, t.probe, kIfAccessible, "GetRole", nullptr, "(u)", [tp](const Reply& r) {
             guint32 role = 0;
             if (r.outcome == Outcome::kOk) g_variant_get(r.value, "(u)", &role);
             tp->probeIsCell = RoleName(role) == "table cell";
           });
           b.GetProperty(t.ref.bus, t.probe, kIfTableCell, "Position", [tp](const Reply& r) {
             if (r.outcome != Outcome::kOk || !g_variant_is_of_type(r.value, G_VARIANT_TYPE("(ii)"))) return;
             gint32 row = -1, col = -1;
             g_variant_get(r.value, "(ii)", &row, &col);
             tp->position = row;
           });
           b.Call(t.ref.bus, t.probe, kIfAccessible, "GetIndexInParent", nullptr, "(i)",
                  [tp, &b, &unusable](const Reply& r) {
                    // Only needed without Position: a refusal here is not the table's.
                    if (r.outcome == Outcome::kFailed || unusable(*tp, r)) return;
                    gint32 index = -1;
                    g_variant_get(r.value, "(i)", &index);
                    if (index < 0) return;
                    b.Call(tp->ref.bus, tp->ref.path, kIfTable, "GetRowAtIndex", g_variant_new("(i)", index), "(i)",
                           [tp, &unusable](const Reply& rr) {
                             if (rr.outcome == Outcome::kFailed || unusable(*tp, rr)) return;
                             gint32 row = -1;
                             g_variant_get(rr.value, "(i)", &row);
                             tp->rowAtIndex = row;
                           });
                  });
         });
  for (auto& entry : tables) {
    TableRead& t = entry.second;
    if (!t.Live()) continue;
    if (t.probe.empty()) {
      // Nothing below the headers: off screen, only headers are shown; else the table cannot say, read it whole.
      if (t.frame && OnScreen(*t.frame)) t.fallback = true;
    } else {
      t.first = t.position >= 0 ? t.position : t.rowAtIndex;
      // Not a cell the table can place (or a table of rows, which the renderer lists as rows): read it whole.
      if (!t.probeIsCell || t.first < 0 || t.first >= t.rows) t.fallback = true;
    }
  }

  // 5. The cells of the rows from there, and each row's place.
  open = open && step([&](Batch& b, TableRead& t) {
           if (t.first < 0) return;
           const int64_t cols = static_cast<int64_t>(t.headers.size());
           int64_t n = std::min(t.rows - t.first, kTableCutRows);
           if (t.probeFrame && OnScreen(*t.probeFrame) && t.frame) {
             // Rows are at least a cell high: no more than this many fit between the first and the bottom.
             const double below = t.frame->y + t.frame->h - t.probeFrame->y;
             n = std::min<int64_t>(n, static_cast<int64_t>(std::ceil(below / t.probeFrame->h)) + 1);
           }
           t.cells.assign(static_cast<size_t>(n), std::vector<std::string>(static_cast<size_t>(cols)));
           t.rowFrames.assign(static_cast<size_t>(n), std::nullopt);
           TableRead* tp = &t;
           for (int64_t k = 0; k < n; ++k) {
             for (int64_t c = 0; c < cols; ++c) {
               b.Call(t.ref.bus, t.ref.path, kIfTable, "GetAccessibleAt",
                      g_variant_new("(ii)", gint32(t.first + k), gint32(c)), "((so))",
                      [tp, k, c, &b, &unusable](const Reply& r) {
                        if (unusable(*tp, r)) return;
                        std::string path = RefPath(r.value);
                        if (c == 0 && !path.empty())
                          b.Call(tp->ref.bus, path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
                                 [tp, k](const Reply& er) {
                                   if (er.outcome == Outcome::kOk) tp->rowFrames[size_t(k)] = RectOf(er.value);
                                 });
                        tp->cells[size_t(k)][size_t(c)] = std::move(path);
                      });
             }
           }
         });
  if (!open) return handled;  // the bus closed: GetChildren reports it

  for (auto& entry : tables) {
    const size_t i = entry.first;
    TableRead& t = entry.second;
    if (t.fallback) continue;
    handled[i] = true;
    if (t.err) {
      errs[i] = t.err;
      continue;
    }
    ChildList& list = out[i];
    list.total = t.rows;
    auto add = [&](const std::string& path, const char* via, int64_t row) {
      if (path.empty()) return;
      list.ids.push_back(im.Intern(t.ref.bus, path));
      list.via.emplace_back(via);
      list.rowIndex.push_back(row);
    };
    for (const std::string& h : t.headers) add(h, "", -1);
    // The rows on screen: below the headers, above the bottom; they follow one another.
    const Rect f = t.frame.value_or(Rect{});
    const double top = t.headerFrame && OnScreen(*t.headerFrame) ? t.headerFrame->y + t.headerFrame->h : f.y;
    bool started = false;
    for (size_t k = 0; k < t.cells.size(); ++k) {
      const std::optional<Rect>& rf = t.rowFrames[k];
      const bool visible = rf && OnScreen(*rf) && rf->y < f.y + f.h && rf->y + rf->h > top;
      if (!visible) {
        if (started) break;
        continue;
      }
      started = true;
      for (const std::string& cell : t.cells[k]) add(cell, "visibleRows", t.first + static_cast<int64_t>(k));
    }
  }
  return handled;
}

void AtspiBackend::ExpectWalk(const AppInfo& app) {
  const ObjRef* ref = impl_->Lookup(app.element);
  impl_->walkExpected = ref ? ref->bus : std::string();
}

void AtspiBackend::PrepareWalk(const AppInfo&, const WindowInfo& window, Clock::time_point deadline,
                               std::vector<std::string>&, bool&) {
  Impl& im = *impl_;
  im.walkExpected.clear();
  if (im.CheckConnected()) return;
  const ObjRef* ref = im.Lookup(window.element);
  if (!ref) return;
  ContextScope scope(im.ctx.get());
  StartPrefetch(im, ref->bus, deadline);
}

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
        if (!(c.states.Has(kStateShowing) && c.states.Has(kStateVisible))) {
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

Error AtspiBackend::ReadFrames(const std::vector<ElementId>& ids, std::vector<std::optional<Rect>>& out,
                               Clock::time_point deadline) {
  Impl& im = *impl_;
  out.assign(ids.size(), std::nullopt);
  if (Error e = Ready(deadline)) return e;
  ContextScope scope(im.ctx.get());
  EnsurePeersFor(im, ids, deadline);
  Batch b(im.ctx.get(), im.bus.get(), im.PerCall(deadline), deadline, &im.stats);
  b.UsePeers(&im.peers);
  for (size_t i = 0; i < ids.size(); ++i) {
    const ObjRef* ref = im.Lookup(ids[i]);
    if (!ref) continue;
    b.Call(ref->bus, ref->path, kIfComponent, "GetExtents", g_variant_new("(u)", 0u), "((iiii))",
           [&out, i](const Reply& r) {
             if (r.outcome == Outcome::kOk) out[i] = RectOf(r.value);
           });
  }
  b.Run();
  if (b.BusClosed()) return MakeError(ErrorCode::kNoAccessibilityBus, "the accessibility bus connection was closed");
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

double AtspiBackend::Scale(const WindowInfo&) { return 1.0; }

namespace {
Error NotHere() {
  return MakeError(ErrorCode::kInternal, "not implemented in AtspiBackend; the X11 layer provides it");
}
}  // namespace

Error AtspiBackend::Capture(const WindowInfo&, std::vector<uint8_t>&, int&, int&, Rect&, Clock::time_point) {
  return NotHere();
}
Error AtspiBackend::Pointer(const WindowInfo&, const PointerEvent&, Clock::time_point) { return NotHere(); }
Error AtspiBackend::Keys(const WindowInfo&, const std::string&, Clock::time_point) { return NotHere(); }
Error AtspiBackend::TypeText(const WindowInfo&, const std::string&, Clock::time_point, size_t& typed) {
  typed = 0;
  return NotHere();
}

// ---------------------------------------------------------------------------
// Actions.

Error AtspiBackend::DoAction(ElementId id, const std::string& name, Clock::time_point deadline) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(id);
  if (!ref) return im.Unknown(id);
  const ObjRef target = *ref;
  im.ForgetReadState();
  const int perCall = static_cast<int>(im.callTimeout.count());
  Outcome o;
  std::string msg;
  // Raw names (NActions + GetName), then the localized ones (GetActions).
  std::vector<std::string> names;
  VariantPtr nv = im.CallSync(target.bus, target.path, kIfProperties, "Get",
                              g_variant_new("(ss)", kIfAction, "NActions"), "(v)", deadline, o, msg);
  if (o == Outcome::kFailed) return MakeError(ErrorCode::kActionNotSupported, "the element has no actions");
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  {
    VariantPtr inner = UnwrapV(nv.get());
    int64_t count = 0;
    VariantToInt(inner.get(), count);
    for (int64_t i = 0; i < std::min<int64_t>(count, 64); ++i) {
      VariantPtr gn = im.CallSync(target.bus, target.path, kIfAction, "GetName", g_variant_new("(i)", gint32(i)), "(s)",
                                  deadline, o, msg);
      if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
      const gchar* s = nullptr;
      g_variant_get(gn.get(), "(&s)", &s);
      names.emplace_back(ActionNameOf(s ? s : ""));
    }
  }
  const std::string wanted = Lower(name);
  int index = -1;
  for (size_t i = 0; i < names.size() && index < 0; ++i)
    if (!names[i].empty() && Lower(names[i]) == wanted) index = static_cast<int>(i);
  if (index < 0 && !names.empty()) {
    VariantPtr r = im.CallSync(target.bus, target.path, kIfAction, "GetActions", nullptr, "(a(sss))", deadline, o, msg);
    if (o == Outcome::kOk) {
      VariantPtr arr = AdoptVariant(g_variant_get_child_value(r.get(), 0));
      GVariantIter it;
      g_variant_iter_init(&it, arr.get());
      const gchar *n = nullptr, *d = nullptr, *k = nullptr;
      for (int i = 0; index < 0 && g_variant_iter_next(&it, "(&s&s&s)", &n, &d, &k); ++i)
        if (n && *n && Lower(ActionNameOf(n)) == wanted && static_cast<size_t>(i) < names.size()) index = i;
    }
  }
  if (index < 0) {
    std::string have;
    for (const auto& n : names)
      if (!n.empty()) have += (have.empty() ? "" : ", ") + n;
    return MakeError(ErrorCode::kActionNotSupported,
                     "no action \"" + name + "\" on this element" + (have.empty() ? "" : " (has: " + have + ")"));
  }
  VariantPtr done =
      im.CallSync(target.bus, target.path, kIfAction, "DoAction", g_variant_new("(i)", index), "(b)", deadline, o, msg);
  if (o != Outcome::kOk)
    return o == Outcome::kFailed ? MakeError(ErrorCode::kActionFailed, "DoAction failed: " + msg)
                                 : OutcomeError(o, target.bus, msg, perCall);
  gboolean success = FALSE;
  g_variant_get(done.get(), "(b)", &success);
  if (!success) return MakeError(ErrorCode::kActionFailed, "the application refused action \"" + names[index] + "\"");
  return {};
}

// What SetText and InsertText both check first: the bus, the element, valid UTF-8; the reads that
// follow must not reuse what the snapshot read.
Error AtspiBackend::EditTarget(ElementId id, const std::string& text, Clock::time_point deadline, std::string& bus,
                               std::string& path) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(id);
  if (!ref) return im.Unknown(id);
  bus = ref->bus;
  path = ref->path;
  im.ForgetReadState();
  if (!g_utf8_validate(text.c_str(), static_cast<gssize>(text.size()), nullptr))
    return MakeError(ErrorCode::kInvalidArgument, "the text is not valid UTF-8");
  return {};
}

Error AtspiBackend::SetText(ElementId id, const std::string& text, Clock::time_point deadline) {
  Impl& im = *impl_;
  ObjRef target;
  if (Error e = EditTarget(id, text, deadline, target.bus, target.path)) return e;
  uint32_t bits = 0;
  Error err;
  if (!im.InterfacesOf(target, deadline, bits, err)) return err;
  if (!(bits & kHasEditableText))
    return MakeError(ErrorCode::kNotSettable, "the element has no editable text (AT-SPI EditableText)");
  Outcome o;
  std::string msg;
  VariantPtr r = im.CallSync(target.bus, target.path, kIfEditableText, "SetTextContents",
                             g_variant_new("(s)", text.c_str()), "(b)", deadline, o, msg);
  if (o != Outcome::kOk)
    return o == Outcome::kFailed ? MakeError(ErrorCode::kNotSettable, "SetTextContents failed: " + msg)
                                 : OutcomeError(o, target.bus, msg, static_cast<int>(im.callTimeout.count()));
  gboolean success = FALSE;
  g_variant_get(r.get(), "(b)", &success);
  if (!success) return MakeError(ErrorCode::kNotSettable, "the application refused the text (read-only field?)");
  return {};
}

Error AtspiBackend::SetNumber(ElementId id, double value, Clock::time_point deadline) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(id);
  if (!ref) return im.Unknown(id);
  const ObjRef target = *ref;
  im.ForgetReadState();
  uint32_t bits = 0;
  Error err;
  if (!im.InterfacesOf(target, deadline, bits, err)) return err;
  if (!(bits & kHasValue)) return MakeError(ErrorCode::kNotSettable, "the element has no value (AT-SPI Value)");
  Outcome o;
  std::string msg;
  VariantPtr r = im.CallSync(target.bus, target.path, kIfProperties, "Set",
                             g_variant_new("(ssv)", kIfValue, "CurrentValue", g_variant_new_double(value)), nullptr,
                             deadline, o, msg);
  if (o != Outcome::kOk)
    return o == Outcome::kFailed ? MakeError(ErrorCode::kNotSettable, "setting CurrentValue failed: " + msg)
                                 : OutcomeError(o, target.bus, msg, static_cast<int>(im.callTimeout.count()));
  return {};
}

Error AtspiBackend::Focus(ElementId id, Clock::time_point deadline) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(id);
  if (!ref) return im.Unknown(id);
  const ObjRef target = *ref;
  im.ForgetReadState();
  Outcome o;
  std::string msg;
  VariantPtr r = im.CallSync(target.bus, target.path, kIfComponent, "GrabFocus", nullptr, "(b)", deadline, o, msg);
  if (o != Outcome::kOk)
    return o == Outcome::kFailed ? MakeError(ErrorCode::kActionNotSupported, "the element cannot take focus: " + msg)
                                 : OutcomeError(o, target.bus, msg, static_cast<int>(im.callTimeout.count()));
  gboolean success = FALSE;
  g_variant_get(r.get(), "(b)", &success);
  if (!success) return MakeError(ErrorCode::kActionFailed, "the application refused to focus the element");
  return {};
}

// Selects a row or cell in its list: Selection.SelectChild on the parent, at
// the element's index in it (the AT-SPI way to "click" a row without input).
namespace {

// GTK3's tree view refuses Selection.SelectChild for a cell of a table with
// more than one column; its Table interface selects the cell's row instead
// (Table.GetRowAtIndex, then AddRowSelection). True when the row was selected.
template <typename ImplT>
bool SelectTableRow(ImplT& im, const std::string& bus, const std::string& path, gint32 index,
                    Clock::time_point deadline) {
  Outcome o;
  std::string msg;
  VariantPtr rv =
      im.CallSync(bus, path, kIfTable, "GetRowAtIndex", g_variant_new("(i)", index), "(i)", deadline, o, msg);
  if (o != Outcome::kOk) return false;
  gint32 row = -1;
  g_variant_get(rv.get(), "(i)", &row);
  if (row < 0) return false;
  VariantPtr av =
      im.CallSync(bus, path, kIfTable, "AddRowSelection", g_variant_new("(i)", row), "(b)", deadline, o, msg);
  if (o != Outcome::kOk) return false;
  gboolean ok = FALSE;
  g_variant_get(av.get(), "(b)", &ok);
  return ok != FALSE;
}

}  // namespace

Error AtspiBackend::Select(ElementId id, Clock::time_point deadline) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  const ObjRef* ref = im.Lookup(id);
  if (!ref) return im.Unknown(id);
  const ObjRef target = *ref;
  im.ForgetReadState();
  const int perCall = static_cast<int>(im.callTimeout.count());
  Outcome o;
  std::string msg;
  VariantPtr pv = im.CallSync(target.bus, target.path, kIfProperties, "Get",
                              g_variant_new("(ss)", kIfAccessible, "Parent"), "(v)", deadline, o, msg);
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  VariantPtr parent = UnwrapV(pv.get());
  if (!parent || !g_variant_is_of_type(parent.get(), G_VARIANT_TYPE("(so)")))
    return MakeError(ErrorCode::kActionNotSupported, "the element has no parent to select it in");
  const gchar* parentBus = nullptr;
  const gchar* parentPath = nullptr;
  g_variant_get(parent.get(), "(&s&o)", &parentBus, &parentPath);
  const std::string pBus = parentBus ? parentBus : "";
  const std::string pPath = parentPath ? parentPath : "";
  VariantPtr iv =
      im.CallSync(target.bus, target.path, kIfAccessible, "GetIndexInParent", nullptr, "(i)", deadline, o, msg);
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  gint32 index = -1;
  g_variant_get(iv.get(), "(i)", &index);
  if (index < 0) return MakeError(ErrorCode::kActionNotSupported, "the element is not a child of its parent");
  VariantPtr sv = im.CallSync(pBus, pPath, "org.a11y.atspi.Selection", "SelectChild", g_variant_new("(i)", index),
                              "(b)", deadline, o, msg);
  if (o == Outcome::kFailed)
    return MakeError(ErrorCode::kActionNotSupported, "its list does not support selection: " + msg);
  if (o != Outcome::kOk) return OutcomeError(o, pBus, msg, perCall);
  gboolean ok = FALSE;
  g_variant_get(sv.get(), "(b)", &ok);
  if (!ok && SelectTableRow(im, pBus, pPath, index, deadline)) return {};
  if (!ok) return MakeError(ErrorCode::kActionFailed, "the list refused to select the element");
  return {};
}

void AtspiBackend::SetLiveReads(bool live) { impl_->live = live; }
void AtspiBackend::SetSecureNameHeuristic(bool on) { impl_->secureNames = on; }

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

// The object of a "((so))" reply; nullopt for the null reference.
std::optional<ObjRef> RefOf(GVariant* reply) {
  const gchar* bus = nullptr;
  const gchar* path = nullptr;
  g_variant_get(reply, "((&s&o))", &bus, &path);
  if (!bus || !*bus || !path || std::strcmp(path, kNullPath) == 0) return std::nullopt;
  return ObjRef{bus, path};
}

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

Error AtspiBackend::InsertText(ElementId id, const std::string& text, Clock::time_point deadline) {
  Impl& im = *impl_;
  ObjRef target;
  if (Error e = EditTarget(id, text, deadline, target.bus, target.path)) return e;
  const int perCall = static_cast<int>(im.PerCall(deadline).count());
  uint32_t bits = 0;
  Error err;
  if (!im.InterfacesOf(target, deadline, bits, err)) return err;
  if (!(bits & kHasEditableText) || !(bits & kHasText))
    return MakeError(ErrorCode::kActionNotSupported,
                     "the element cannot insert text (no AT-SPI EditableText); type into it instead");
  Outcome o;
  std::string msg;
  VariantPtr sv = im.CallSync(target.bus, target.path, kIfAccessible, "GetState", nullptr, "(au)", deadline, o, msg);
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  {
    VariantPtr au = AdoptVariant(g_variant_get_child_value(sv.get(), 0));
    const StateSet st = StatesFrom(au.get());
    if (!st.Has(kStateEditable) || st.Has(kStateReadOnly))
      return MakeError(ErrorCode::kNotSettable, "the element is not editable (read-only)");
  }
  VariantPtr cv = im.CallSync(target.bus, target.path, kIfProperties, "Get",
                              g_variant_new("(ss)", kIfText, "CharacterCount"), "(v)", deadline, o, msg);
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  int64_t count = 0;
  {
    VariantPtr inner = UnwrapV(cv.get());
    if (!VariantToInt(inner.get(), count) || count < 0)
      return MakeError(ErrorCode::kActionFailed, "the element did not say how long its text is");
  }
  // The length is in bytes: atk-bridge hands it to atk_editable_text_insert_text, which GTK reads as
  // bytes (a character count cuts a multi-byte character off the end). Toolkits that count characters
  // take the whole string, since bytes >= characters.
  VariantPtr r =
      im.CallSync(target.bus, target.path, kIfEditableText, "InsertText",
                  g_variant_new("(isi)", gint32(count), text.c_str(), gint32(text.size())), "(b)", deadline, o, msg);
  if (o == Outcome::kFailed) return MakeError(ErrorCode::kDeliveryUncertain, "InsertText failed: " + msg);
  if (o != Outcome::kOk) return OutcomeError(o, target.bus, msg, perCall);
  gboolean success = FALSE;
  g_variant_get(r.get(), "(b)", &success);
  if (!success) return MakeError(ErrorCode::kNotSettable, "the application refused to insert the text");
  return {};
}

void AtspiBackend::Release(const std::vector<ElementId>& ids) {
  Impl& im = *impl_;
  for (ElementId id : ids) {
    auto it = im.refById.find(id);
    if (it == im.refById.end()) continue;
    std::string key = it->second.bus;
    key.push_back('\n');
    key += it->second.path;
    im.idByKey.erase(key);
    im.refById.erase(it);
    im.countSeen.erase(id);
    im.managesCells.erase(id);
  }
}

// ---------------------------------------------------------------------------
// Change events (atspi_events.h): Watch / WaitEvents / Unwatch.

Error AtspiBackend::Watch(const AppInfo& app, Clock::time_point deadline) {
  Impl& im = *impl_;
  if (Error e = Ready(deadline)) return e;
  if (im.events.Watching(app.pid, im.bus.get())) {
    im.events.Relearn(app.pid, deadline);
    return {};
  }
  // The app's unique name on the bus: from its element, else where a listing last found its pid.
  std::string busName;
  if (const ObjRef* ref = im.Lookup(app.element)) {
    busName = ref->bus;
  } else if (auto it = im.appByPid.find(app.pid); it != im.appByPid.end()) {
    busName = it->second.first;
  }
  if (busName.empty())
    return MakeError(ErrorCode::kAppNotFound,
                     "app pid " + std::to_string(app.pid) + " is not known on the accessibility bus (list apps first)");
  return im.events.Watch(im.bus.get(), im.ctx.get(), app.pid, busName, deadline);
}

Error AtspiBackend::WaitEvents(int64_t pid, uint64_t sinceStamp, Clock::time_point until, AppEventState& out) {
  return impl_->events.Wait(impl_->ctx.get(), pid, sinceStamp, until, out);
}

void AtspiBackend::Unwatch(int64_t pid) {
  ContextScope scope(impl_->ctx.get());
  impl_->events.Unwatch(pid);
}

}  // namespace axsnap
