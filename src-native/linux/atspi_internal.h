// What the AT-SPI backend's files share (private to src-native/linux/atspi_*.cc
// and dbus_reply.cc; nothing outside includes it): the AT-SPI vocabulary, the
// outcome of one D-Bus call, the state every operation works on
// (AtspiBackend::Impl), the batch that pipelines calls, and the functions one
// job's file offers the others. Each declaration names the file that defines it.
//
// The D-Bus API is at-spi2-core's xml/ directory (one file per interface:
// Accessible.xml, Action.xml, Cache.xml, Component.xml, Table.xml, ...); the
// numbers (roles, states, relations) are atspi/atspi-constants.h. The calls are
// GDBus's (GIO reference: GDBusConnection), their arguments GVariant values
// (GLib reference: GVariant format strings).
#pragma once

#include <gio/gio.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "atspi_backend.h"
#include "atspi_events.h"
#include "glib_ref.h"

namespace axsnap {
namespace atspi {

using namespace glib;  // NOLINT: the RAII helpers are used throughout

// ---------------------------------------------------------------------------
// The AT-SPI vocabulary (atspi_vocabulary.cc).

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
constexpr char kIfApplication[] = "org.a11y.atspi.Application";
constexpr char kIfSelection[] = "org.a11y.atspi.Selection";
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
  kHasSelection = 1u << 8,
};

uint32_t IfaceBits(GVariant* as);  // "as"

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
  kStateMultiSelectable = 18,
  kStatePressed = 20,
  kStateSingleLine = 26,
  kStateSelectable = 22,
  kStateSelected = 23,
  kStateSensitive = 24,
  kStateShowing = 25,
  kStateVertical = 29,
  kStateVisible = 30,
  kStateManagesDescendants = 31,
  kStateIndeterminate = 32,
  kStateRequired = 33,
  kStateInvalidEntry = 36,
  kStateCheckable = 41,
  kStateReadOnly = 43,
};

struct StateSet {
  uint32_t words[2] = {0, 0};
  bool Has(int s) const { return s >= 0 && s < 64 && (words[s / 32] & (1u << (s % 32))) != 0; }
  void Set(int s) {
    if (s >= 0 && s < 64) words[s / 32] |= 1u << (s % 32);
  }
};

// What an app's toolkit means by the states and names it reports (atspi_dialect.cc).
struct Dialect {
  bool known = false;            // its root answered (an app that did not is asked again by the next read)
  bool gtk4 = false;             // GTK 4: SENSITIVE without ENABLED, no SHOWING below windows, type names as names
  bool qt = false;               // Qt: its bridge crashes the app on Properties.GetAll (Impl::GetAllUnsafe)
  std::string toolkit, version;  // as Application.ToolkitName and Version said them
};
Dialect DialectFrom(const std::string& toolkitName, const std::string& version);
// States as the other toolkits mean them: ENABLED and SHOWING where GTK 4 leaves them out.
void AdaptStates(StateSet& s, const Dialect& d);
// A name that is GTK 4's stand-in for none: the widget's type name.
bool IsTypeNameFallback(const Dialect& d, const std::string& name);

StateSet StatesFrom(GVariant* au);  // "au"

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
  kRoleTableCell = 56,
  kRoleToggleButton = 62,
  kRoleWindow = 69,
  kRoleLink = 88,
  kRoleLevelBar = 103,
};

std::string RoleName(uint32_t role);
bool IsRowRoleId(uint32_t role);
bool IsWindowRole(uint32_t role);
bool IsCheckableRole(uint32_t role);
bool IsWrapperRole(uint32_t role);
bool IsTextEntryRole(uint32_t role);
bool IsDocumentRole(uint32_t role);
std::string ActionNameOf(const std::string& name);

// ---------------------------------------------------------------------------
// Replies (dbus_reply.cc): the outcome of one call, what its value holds, the
// error it becomes.

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

// An AT-SPI object: bus name and object path.
struct ObjRef {
  std::string bus, path;
};

Error MakeError(ErrorCode code, std::string message);
Outcome ClassifyError(const GError* e);
// A failed call in words (never the raw D-Bus error text), for notes and hints: every GError a call
// gets passes through here. `what` names the call ("Selection.SelectChild"; see CallWhat), or is empty.
std::string ErrorWords(const GError* e, const std::string& what);
// The name of a call for ErrorWords: the short interface and the method, or the property a Properties call reads.
std::string CallWhat(const char* iface, const char* method, GVariant* params);
Error OutcomeError(Outcome o, const std::string& busName, const std::string& message, int timeoutMs);
VariantPtr UnwrapV(GVariant* reply);
Rect RectOf(GVariant* reply);
bool VariantToDouble(GVariant* v, double& out);
bool VariantToInt(GVariant* v, int64_t& out);
bool DictString(GVariant* dict, const char* key, std::string& out);
bool AttrString(GVariant* attrs, const char* key, std::string& out);
std::vector<ObjRef> RefsIn(GVariant* reply);
std::optional<ObjRef> RefOf(GVariant* reply);  // a "((so))" reply; nullopt for the null reference

// ---------------------------------------------------------------------------
// Call timing and statistics (atspi_batch.cc).

int TimeoutMs(Clock::time_point deadline, std::chrono::milliseconds perCall);
double MsSince(Clock::time_point t);

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

// ---------------------------------------------------------------------------
// The bulk cache (atspi_cache.cc).

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

// ---------------------------------------------------------------------------
// Direct connections and the walk's first reads (atspi_connection.cc,
// atspi_prefetch.cc).

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

}  // namespace atspi

// The names above are used unqualified throughout, as when they were one file's
// unnamed namespace.
using namespace atspi;  // NOLINT

// ---------------------------------------------------------------------------
// The backend's state: the connection, the handle table and what earlier reads
// let later ones skip.

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
  static constexpr double kBulkSlowMs = 400;  // a GetItems slower than this is not asked again

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
  // Apps that must never be asked Properties.GetAll on an element: Qt 5's bridge (its ToolkitName "Qt")
  // crashes the app on it (VLC 3 with Qt 5.15: SIGSEGV in QVariant::toString, the app gone). Learned once
  // per app bus with its dialect (EnsurePeersFor); their Name and Description are asked one by one.
  bool GetAllUnsafe(const std::string& busName) const {
    auto it = dialects.find(busName);
    return it == dialects.end() || it->second.qt;  // not known yet: not risked
  }
  // Still counting answers: no id or help seen, fewer than kIdProbeReads answers.
  bool Probing(const std::string& busName) const {
    if (GetAllUnsafe(busName)) return false;
    auto it = idProbe.find(busName);
    return it == idProbe.end() || (!it->second.seen && it->second.reads < kIdProbeReads);
  }
  bool WantsGetAll(const std::string& busName) const {
    if (GetAllUnsafe(busName)) return false;
    auto it = idProbe.find(busName);
    return it == idProbe.end() || it->second.seen || it->second.reads < kIdProbeReads;
  }
  std::chrono::milliseconds bulkMaxAge{300};
  // The snapshot under way (ExpectWalk): a bulk read of its app taken since it began serves the whole
  // walk, whatever its age. A walk is one observation, and GTK 4 answers GetItems with its whole
  // cache, hidden pages included (gtk4-widget-factory: about 220 ms), so a walk longer than
  // bulkMaxAge read it again and again (three times a snapshot, 1.8 s instead of 0.7 s).
  Clock::time_point walkSince;
  std::string walkBus;
  bool BulkFresh(const std::string& busName, const BulkSnapshot& snap) const {
    if (Clock::now() - snap.taken < bulkMaxAge) return true;
    return busName == walkBus && snap.taken >= walkSince;
  }

  // Each app's toolkit dialect, by bus name (DialectOf).
  std::unordered_map<std::string, Dialect> dialects;

  // The coordinate type asked of Component (GetExtents, GetAccessibleAtPoint): at-spi2's
  // ATSPI_COORD_TYPE_SCREEN (0) on X11, ATSPI_COORD_TYPE_WINDOW (1) for native Wayland apps
  // (SetWindowCoordinates). A Wayland client does not know where its surfaces are: its SCREEN
  // answers add what it believes of its place (a GTK3 popup menu: its offset in the parent
  // window; Chromium's popups: their place in the browser window), while WINDOW is always
  // relative to the element's own surface, which the compositor can place. XWayland apps
  // (screenCoordinateBuses) keep SCREEN: X root coordinates are screen coordinates.
  bool windowCoordinates = false;
  std::unordered_set<std::string> screenCoordinateBuses;
  guint32 CoordType(const std::string& busName) const {
    return windowCoordinates && !screenCoordinateBuses.count(busName) ? 1u : 0u;
  }

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
    dialects.clear();
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
    message = ErrorWords(err.get(), CallWhat(iface, method, owned.get()));
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

  // The state set of one element (blocking).
  bool StatesOf(const ObjRef& ref, Clock::time_point deadline, StateSet& states, Error& err) {
    Outcome o;
    std::string msg;
    VariantPtr r = CallSync(ref.bus, ref.path, kIfAccessible, "GetState", nullptr, "(au)", deadline, o, msg);
    if (o != Outcome::kOk) {
      err = OutcomeError(o, ref.bus, msg, static_cast<int>(PerCall(deadline).count()));
      return false;
    }
    VariantPtr au = AdoptVariant(g_variant_get_child_value(r.get(), 0));
    states = StatesFrom(au.get());
    return true;
  }
};

namespace atspi {

// ---------------------------------------------------------------------------
// A batch of pipelined calls (atspi_batch.cc).

struct BatchState;

class Batch {
 public:
  // `stats` (the backend's) must outlive late replies: they are counted too.
  Batch(GMainContext* ctx, GDBusConnection* conn, std::chrono::milliseconds perCall, Clock::time_point deadline,
        CallStats* stats);
  ~Batch();
  // Calls to an app with a direct connection go on it (Peers).
  void UsePeers(const Peers* peers);
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  // Queues a call. `params` may be floating (g_variant_new) or null. `fn`
  // runs from Run(), never from inside Call(). A `soft` call that gets no
  // reply does not mark its app unresponsive (for calls that may be slow
  // for reasons other than a stuck app, like a bulk read of a huge app).
  void Call(const std::string& busName, const std::string& path, const char* iface, const char* method,
            GVariant* params, const char* replyType, ReplyFn fn, bool soft = false);

  // org.freedesktop.DBus.Properties.Get; the handler gets the unwrapped value
  // in a new Reply whose value is the property (or an error outcome).
  void GetProperty(const std::string& busName, const std::string& path, const char* iface, const char* prop,
                   ReplyFn fn);

  // Iterates the private context until every call (and follow-up) is done,
  // or the deadline passes (outstanding calls are then cancelled).
  void Run();

  // Some calls never reported back (see Run): their handlers did not run.
  bool Abandoned() const { return abandoned_; }

  bool BusClosed() const;
  int PerCallMs() const;

 private:
  GMainContext* ctx_;
  std::shared_ptr<BatchState> st_;
  bool abandoned_ = false;
};

// ---------------------------------------------------------------------------
// What one job's file offers the others.

// atspi_cache.cc
const BulkSnapshot* KeepBulk(AtspiBackend::Impl& im, const std::string& busName, Outcome outcome, GVariant* value,
                             Clock::time_point taken, double tookMs);
// The app's bulk snapshot, read now (one GetItems call) unless one younger than
// bulkMaxAge is kept; null when the app does not serve GetItems (remembered),
// the deadline passed, or the bulk cache is off or bypassed (live reads).
const BulkSnapshot* FreshBulk(AtspiBackend::Impl& im, const std::string& busName, Clock::time_point deadline);
bool NearDocument(const BulkSnapshot& snap, const std::string& path, const std::vector<std::string_view>& kids);
bool BulkChildren(const BulkSnapshot& snap, const std::string& path, std::vector<std::string_view>& out);

// atspi_prefetch.cc
void TakePrefetch(AtspiBackend::Impl& im, const std::string& busName, bool waitBulk, Clock::time_point deadline);
void StartPrefetch(AtspiBackend::Impl& im, const std::string& busName, Clock::time_point deadline);
void AwaitPrefetchRegistration(AtspiBackend::Impl& im, const std::string& busName, Clock::time_point deadline);

// atspi_dialect.cc: the app's dialect, read once (Application.GetAll on its root) and kept by bus name.
const Dialect& DialectOf(AtspiBackend::Impl& im, const std::string& busName, Clock::time_point deadline);

// atspi_connection.cc
void EnsurePeer(AtspiBackend::Impl& im, const std::string& busName, Clock::time_point deadline);
void EnsurePeersFor(AtspiBackend::Impl& im, const std::vector<ElementId>& ids, Clock::time_point deadline);

}  // namespace atspi
}  // namespace axsnap
