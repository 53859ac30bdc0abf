// What the files that implement MacBackend share (private to them: nothing
// outside src-native/mac/ includes it): the helpers one job's file offers the
// others, each group under the file that defines it. MacBackend's class and
// the element table are declared in mac_backend.h; every method is defined in
// the file of its job.
//
// The rooms:
//   mac_backend.cc       construction and teardown, each job's autorelease pool, trust and
//                        permissions, settings, releasing handles
//   mac_elements.cc      the element table; the app and system-wide elements and their
//                        messaging timeouts; one attribute or a batch of them; what an AXError means
//   mac_apps.cc          running apps, the focused app, app names, the menu bar, launching
//   mac_windows.cc       an app's windows and surfaces (sheets, popovers, open menus), pinned;
//                        the candidates of window choice
//   mac_recover.cc       the recovery steps for a window that cannot be seen (unhide, activate,
//                        reopen, unminimize, raise, main and focused)
//   mac_reads.cc         node reads (one batched attribute read per element), secure fields, children
//   mac_web.cc           web engines: which apps carry one, Chromium's tree before a walk, the web area
//   mac_capture.cc       the window server's window list, one window's pixels, Vision OCR
//   mac_actions.cc       AX actions, values, focus, selection, text insertion
//   mac_input_target.cc  where input lands: the focused element, the elements under a point
//   mac_input.cc         synthetic input: the target checked, brought in front, not covered, then
//                        CGEvent (cg_input.cc)
//   mac_events.cc        change events: one AXObserver per watched app, its run loop, web-area samples
//
// Apple: HIServices' AXUIElement.h (every call here is a synchronous IPC to
// the app, bounded by AXUIElementSetMessagingTimeout), AXError.h.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "apple.h"
#include "cf_convert.h"
#include "cf_ref.h"
#include "mac_backend.h"

namespace axsnap {
namespace mac {

// The messaging timeout of the app and system-wide elements; a deadline that
// is nearer shortens it per element (MacBackend::SetTimeoutFor).
constexpr double kMessagingTimeoutS = 2.0;

// ---------------------------------------------------------------------------
// mac_elements.cc: AX attributes and errors.

bool In(const std::string& role, std::initializer_list<const char*> roles);

// A CFString's text; empty for anything else (or nothing).
std::string Str(CFTypeRef v);

// Errors that say something about the element or the app, not the attribute:
// the element is gone, the app did not answer, or we may not ask. Any other
// error on an optional attribute means "absent": many apps answer an
// attribute they do not implement with kAXErrorFailure or IllegalArgument.
bool Fatal(AXError e);

// The attributes `names` of one element: one batched call; a failed slot (an
// AXValue wrapping an AXError) is left null with its error. A batch the app
// refuses as a whole with a non-fatal error (apps that do not implement it)
// is read one attribute at a time. `values` and `singles` own what `slots`
// points to.
struct Attributes {
  std::vector<CFTypeRef> slots;
  std::vector<AXError> errors;
  CFRef<CFArrayRef> values;
  std::vector<CFAny> singles;
  bool batchRefused = false;  // the app refused the batched call: skip it next time
};

Error ReadAttributes(AXUIElementRef el, CFArrayRef names, bool tryBatch, Attributes& a);

Clock::time_point Sooner(Clock::time_point a, Clock::time_point b);

// ---------------------------------------------------------------------------
// mac_events.cc: the observers' run loop.

// Dispatches what the observers' ports hold (on the calling thread's run
// loop, where Watch put their sources), bounded. A run loop without sources
// returns at once.
void DrainRunLoop();
// DrainRunLoop when this thread has not dispatched for a while: called by
// the reads of long jobs, so notifications that come during a walk are
// counted near the time they came (review 3, S3).
void ServiceObservers();

// ---------------------------------------------------------------------------
// mac_web.cc: web engines.

// The web engine an app carries. Chromium and Electron apps carry theirs as
// a framework in the bundle; so do apps built on the Chromium Embedded
// Framework (Spotify), and NW.js apps. A few CEF apps keep the framework
// elsewhere (Steam's lives in a bundle under Application Support): those are
// known by bundle id.
enum class WebEngine { kNone, kChromium, kElectron };

WebEngine EngineOf(const std::string& bundlePath, const std::string& bundleId);

// Bounded breadth-first search for an AXWebArea below `root`, stopping at
// `until`; `filled` tells whether it has children yet. Containers are searched
// before leaves, so Chrome's toolbar buttons do not use up the budget.
// `area`, when given, gets the web area found.
bool FindWebArea(AXUIElementRef root, Clock::time_point until, bool& filled, CFRef<AXUIElementRef>* area = nullptr);

}  // namespace mac

// The names in mac are used unqualified throughout, as when they were one
// file's unnamed namespace.
using namespace mac;  // NOLINT

}  // namespace axsnap
