// AX elements and their attributes: the element table (AX hands out a new
// AXUIElementRef for every copy of an element, so identity is CFEqual, found
// through CFHash), the app and system-wide elements with their messaging
// timeouts, reading one attribute or one batch of them, and which AXErrors
// say something about the element rather than the attribute.
//
// Apple: HIServices' AXUIElement.h (AXUIElementCreateApplication,
// AXUIElementCreateSystemWide, AXUIElementSetMessagingTimeout - zero means
// "the global timeout" - AXUIElementCopyAttributeValue,
// AXUIElementCopyMultipleAttributeValues and its AXValue-wrapped errors),
// AXError.h; CFEqual and CFHash in CFBase.h.

#include <algorithm>

#include "mac_internal.h"

namespace axsnap {
namespace mac {

bool In(const std::string& role, std::initializer_list<const char*> roles) {
  for (const char* r : roles)
    if (role == r) return true;
  return false;
}

std::string Str(CFTypeRef v) { return CFToString(v).value_or(std::string()); }

bool Fatal(AXError e) {
  return e == kAXErrorInvalidUIElement || e == kAXErrorCannotComplete || e == kAXErrorAPIDisabled;
}

Error ReadAttributes(AXUIElementRef el, CFArrayRef names, bool tryBatch, Attributes& a) {
  const CFIndex n = CFArrayGetCount(names);
  a.slots.assign(static_cast<size_t>(n), nullptr);
  a.errors.assign(static_cast<size_t>(n), kAXErrorSuccess);
  const AXError e =
      tryBatch ? AXUIElementCopyMultipleAttributeValues(el, names, 0, a.values.OutParam()) : kAXErrorNotImplemented;
  if (e == kAXErrorSuccess && a.values && CFArrayGetCount(a.values.get()) == n) {
    for (CFIndex i = 0; i < n; i++) {
      CFTypeRef v = CFArrayGetValueAtIndex(a.values.get(), i);
      if (!IsAXErrorValue(v, &a.errors[i])) a.slots[i] = v;
    }
    return {};
  }
  if (e != kAXErrorSuccess && Fatal(e)) return AXFailure(e, "reading an element");
  a.batchRefused = tryBatch;
  a.singles.resize(static_cast<size_t>(n));
  for (CFIndex i = 0; i < n; i++) {
    CFStringRef name = static_cast<CFStringRef>(CFArrayGetValueAtIndex(names, i));
    a.errors[i] = AXUIElementCopyAttributeValue(el, name, a.singles[i].OutParam());
    if (a.errors[i] == kAXErrorSuccess)
      a.slots[i] = a.singles[i].get();
    else if (Fatal(a.errors[i]))
      return AXFailure(a.errors[i], "reading an element");
  }
  return {};
}

Clock::time_point Sooner(Clock::time_point a, Clock::time_point b) { return a < b ? a : b; }

}  // namespace mac

ElementId ElementTable::Intern(AXUIElementRef element) {
  if (!element) return 0;
  const CFHashCode hash = CFHash(element);
  auto range = byHash_.equal_range(hash);
  for (auto it = range.first; it != range.second; ++it) {
    auto e = entries_.find(it->second);
    if (e != entries_.end() && CFEqual(e->second.ref.get(), element)) {
      // Whoever interned it now holds the handle, or releases it again.
      e->second.released = false;
      return it->second;
    }
  }
  const ElementId id = next_++;
  Entry entry;
  entry.ref = CFRef<AXUIElementRef>::Retain(element);
  entry.hash = hash;
  entries_.emplace(id, std::move(entry));
  byHash_.emplace(hash, id);
  return id;
}

ElementId ElementTable::Find(AXUIElementRef element) const {
  if (!element) return 0;
  auto range = byHash_.equal_range(CFHash(element));
  for (auto it = range.first; it != range.second; ++it) {
    auto e = entries_.find(it->second);
    if (e != entries_.end() && CFEqual(e->second.ref.get(), element)) return it->second;
  }
  return 0;
}

AXUIElementRef ElementTable::Get(ElementId id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.ref.get();
}

void ElementTable::Remember(ElementId id, const std::string& role, const std::string& subrole, bool secure) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  it->second.role = role;
  it->second.subrole = subrole;
  it->second.secure = secure;
}

const std::string* ElementTable::Role(ElementId id) const {
  auto it = entries_.find(id);
  return it == entries_.end() || it->second.role.empty() ? nullptr : &it->second.role;
}

bool ElementTable::IsSecure(ElementId id) const {
  auto it = entries_.find(id);
  return it != entries_.end() && (it->second.secure || it->second.subrole == "AXSecureTextField");
}

void ElementTable::Release(ElementId id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (it->second.pins > 0) {
    it->second.released = true;
    return;
  }
  Erase(it);
}

void ElementTable::Pin(ElementId id) {
  auto it = entries_.find(id);
  if (it != entries_.end()) it->second.pins++;
}

void ElementTable::Unpin(ElementId id) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.pins == 0) return;
  if (--it->second.pins == 0 && it->second.released) Erase(it);
}

CGWindowID ElementTable::WindowNumber(ElementId id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? 0 : it->second.windowNumber;
}

void ElementTable::SetWindowNumber(ElementId id, CGWindowID number) {
  auto it = entries_.find(id);
  if (it != entries_.end()) it->second.windowNumber = number;
}

void ElementTable::Erase(std::unordered_map<ElementId, Entry>::iterator it) {
  const ElementId id = it->first;
  auto range = byHash_.equal_range(it->second.hash);
  for (auto h = range.first; h != range.second; ++h)
    if (h->second == id) {
      byHash_.erase(h);
      break;
    }
  entries_.erase(it);
}

AXUIElementRef MacBackend::SystemWide() {
  if (!systemWide_) {
    systemWide_ = CFRef<AXUIElementRef>::Adopt(AXUIElementCreateSystemWide());
    // The system-wide element's timeout is the global one: every reference
    // without its own uses it. Set once, never shortened by a deadline.
    AXUIElementSetMessagingTimeout(systemWide_.get(), static_cast<float>(kMessagingTimeoutS));
  }
  return systemWide_.get();
}

void MacBackend::SetTimeoutFor(AXUIElementRef element, Clock::time_point deadline) {
  const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
  // Never longer than the snapshot has left; never zero, which on an element
  // means "use the current global timeout" (2 s here), not "no time".
  const float seconds = static_cast<float>(std::max(0.05, std::min(kMessagingTimeoutS, left)));
  AXUIElementSetMessagingTimeout(element, seconds);
}

AXUIElementRef MacBackend::AppElement(int64_t pid) {
  auto it = apps_.find(pid);
  if (it != apps_.end()) return it->second.get();
  CFRef<AXUIElementRef> app = CFRef<AXUIElementRef>::Adopt(AXUIElementCreateApplication(static_cast<pid_t>(pid)));
  if (!app) return nullptr;
  AXUIElementSetMessagingTimeout(app.get(), static_cast<float>(kMessagingTimeoutS));
  AXUIElementRef raw = app.get();
  apps_.emplace(pid, std::move(app));
  return raw;
}

Error MacBackend::CopyAttribute(AXUIElementRef element, CFStringRef attribute, CFAny& out) {
  const AXError e = AXUIElementCopyAttributeValue(element, attribute, out.OutParam());
  if (e == kAXErrorSuccess) return {};
  out.reset();
  // Missing is not an error for a reader: the caller sees an empty value.
  if (!Fatal(e)) return {};
  return AXFailure(e, "reading " + Str(attribute));
}

}  // namespace axsnap
