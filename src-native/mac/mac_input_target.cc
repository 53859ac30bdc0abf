// Where input lands, asked live for the action path: the app's focused
// element (where keys go) and the chain of elements under a point, up to the
// window (where a click goes). Never a hit test over this process's own
// windows: hosts that serve AX on their main thread only can crash.
//
// Apple: HIServices' AXUIElement.h (AXUIElementCopyElementAtPosition, in
// screen coordinates with the origin at the top left of the main display),
// AXAttributeConstants.h (kAXFocusedUIElementAttribute, kAXParentAttribute).

#include <unistd.h>

#include <algorithm>

#include "mac_internal.h"

namespace axsnap {

Error MacBackend::FocusedElement(int64_t pid, ElementId& out, bool& found, Clock::time_point deadline) {
  out = 0;
  found = false;
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed"};
  AXUIElementRef appEl = AppElement(pid);
  if (!appEl) return {ErrorCode::kAppNotFound, "cannot reach pid " + std::to_string(pid)};
  SetTimeoutFor(appEl, deadline);
  CFAny focused;
  const AXError e = AXUIElementCopyAttributeValue(appEl, CFSTR("AXFocusedUIElement"), focused.OutParam());
  // No value: nothing in the app has keyboard focus.
  if (e == kAXErrorNoValue) return {};
  // Anything else that is not an element proves nothing about focus: an error, never "no focus".
  if (e == kAXErrorAttributeUnsupported)
    return {ErrorCode::kActionNotSupported, "the app does not report its focused element"};
  if (e == kAXErrorCannotComplete) {
    // AX answers a process that is not running as it answers one that hangs.
    if (!system_->ProcessExists(pid)) return {ErrorCode::kAppNotFound, "no running app has pid " + std::to_string(pid)};
  }
  if (e != kAXErrorSuccess) return AXFailure(e, "reading the focused element");
  if (!IsElement(focused.get())) return {ErrorCode::kActionFailed, "the app's focused element is not an element"};
  out = elements_.Intern(static_cast<AXUIElementRef>(focused.get()));
  found = out != 0;
  return {};
}

Error MacBackend::ElementAtPoint(const WindowInfo& window, double x, double y, const std::vector<ElementId>& stopAt,
                                 std::vector<ElementId>& chain, Clock::time_point deadline) {
  chain.clear();
  if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed"};
  // A hit test over this very process's windows asks the process itself over AX, off its main thread: hosts
  // that serve AX on their main thread only (Electron, NW.js) can crash (the same rule as Covered).
  if (window.pid == static_cast<int64_t>(getpid()))
    return {ErrorCode::kInputFailed,
            "the window belongs to the process axsnap runs in (pid " + std::to_string(window.pid) +
                "); what is under a point there cannot be checked, so nothing was sent. Act on the element by "
                "index, or drive this app from another process"};
  AXUIElementRef appEl = AppElement(window.pid);
  if (!appEl) return {ErrorCode::kAppNotFound, "cannot reach pid " + std::to_string(window.pid)};
  SetTimeoutFor(appEl, deadline);
  CFRef<AXUIElementRef> hit;
  const AXError e =
      AXUIElementCopyElementAtPosition(appEl, static_cast<float>(x), static_cast<float>(y), hit.OutParam());
  // Nothing of the app under the point.
  if (e == kAXErrorNoValue) return {};
  if (e != kAXErrorSuccess) return AXFailure(e, "asking what is under the point");
  if (!hit) return {};
  AXUIElementRef win = elements_.Get(window.element);
  CFRef<AXUIElementRef> at = std::move(hit);
  // Each element of the climb is a new AXUIElement: its calls get what the deadline leaves, never the 2 s
  // global timeout, and the climb stops once the deadline passed (the caller has answered by then).
  for (int depth = 0; depth < 64 && at; ++depth) {
    const ElementId id = elements_.Intern(at.get());
    if (std::find(chain.begin(), chain.end(), id) != chain.end()) break;
    chain.push_back(id);
    if ((win && CFEqual(at.get(), win)) || std::find(stopAt.begin(), stopAt.end(), id) != stopAt.end()) break;
    if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed while climbing from the point"};
    SetTimeoutFor(at.get(), deadline);
    CFAny parent;
    if (Error err = CopyAttribute(at.get(), CFSTR("AXParent"), parent)) return err;
    if (!IsElement(parent.get())) break;
    if (Clock::now() >= deadline) return {ErrorCode::kTimeout, "the deadline passed while climbing from the point"};
    // The application element is above every window: the climb ends below it.
    CFAny role;
    auto pe = static_cast<AXUIElementRef>(parent.get());
    SetTimeoutFor(pe, deadline);
    if (!CopyAttribute(pe, CFSTR("AXRole"), role) && Str(role.get()) == "AXApplication") break;
    at = CFRef<AXUIElementRef>::Retain(pe);
  }
  return {};
}

}  // namespace axsnap
