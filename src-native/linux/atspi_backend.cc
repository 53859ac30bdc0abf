// AT-SPI over GDBus. See atspi_backend.h for the contract.
//
// AtspiBackend is one class whose member functions live in the file of their
// job; this file holds what is left: construction, the settings, the handle
// table's own calls, the call statistics, the stubs the X11 layer overrides,
// and change events (delegated to atspi_events.cc). The other files:
//
//   atspi_vocabulary.cc    roles, states, interfaces, action names
//   dbus_reply.cc          reading replies, object references, the errors they become
//   atspi_batch.cc         pipelined calls, timeouts, call statistics
//   atspi_connection.cc    the buses, reconnecting, direct connections to apps
//   atspi_cache.cc         the bulk cache (Cache.GetItems) and when it may be used
//   atspi_prefetch.cc      a walk's first reads, started during window choice
//   atspi_apps.cc          apps, windows, menus
//   atspi_nodes.cc         node attributes (ReadNodes), extents, secure fields
//   atspi_children.cc      children (ReadChildren, ChildrenAt)
//   atspi_tables.cc        big tree views: the rows on screen through Table
//   atspi_input_target.cc  the focused element, the element at a point
//   atspi_actions.cc       actions, text, values, focus, selection
//   atspi_internal.h       what they share, with AtspiBackend::Impl
//
// Follows at-spi2-core's xml/ directory and atspi-constants.h throughout (see
// each file), GDBus for the calls.

#include <algorithm>
#include <string>
#include <vector>

#include "atspi_internal.h"

namespace axsnap {

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

void AtspiBackend::SetLiveReads(bool live) { impl_->live = live; }
void AtspiBackend::SetSecureNameHeuristic(bool on) { impl_->secureNames = on; }
void AtspiBackend::SetWindowCoordinates(bool on, const std::vector<std::string>& screenBuses) {
  impl_->windowCoordinates = on;
  impl_->screenCoordinateBuses = std::unordered_set<std::string>(screenBuses.begin(), screenBuses.end());
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
