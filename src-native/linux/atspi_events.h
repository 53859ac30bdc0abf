// Change events of watched apps on the accessibility bus (AT-SPI signals).
//
// Per app (by pid): one signal subscription per event interface
// (org.a11y.atspi.Event.Object, .Window, .Document), filtered by the app's
// unique bus name as sender, so the bus routes only that app's events to us.
// Toolkits (GTK3's atk-bridge, Chromium) emit events only for classes some
// listener registered with the registry (org.a11y.atspi.Registry.
// RegisterEvent), so the first watch on a connection registers the classes
// it needs, and the last unwatch deregisters them.
//
// Threading: signals are dispatched on the backend's private GMainContext,
// which only our worker iterates (Wait, and every batch of reads). An event
// is counted (and timed) when it is dispatched; events that arrive while the
// worker is busy with something else are counted at the next dispatch, so a
// quiet period is never measured shorter than it was.
//
// Content that slides without events: a GtkStack page switch with a slide
// transition maps the new page at once (a burst of state-changed:showing)
// and then moves it across the window for up to a second with no event at
// all (GTK moves the page's GdkWindow: no size-allocate, no bounds-changed),
// and unmaps the old page at the end. bounds-changed is no help (not sent for
// that; sent ~170 a second forever by gtk3-widget-factory's spinner and
// progress bars, and for ~300 ms by every GTK button press without any
// movement), so it is neither registered nor counted. Instead the first
// kProbes objects newly shown (showing, detail1 = 1) in the latest burst
// (state changes less than kBurstGap apart) are probes for
// kProbeFor: while Wait blocks (and until it passes), their screen extents
// are read every kProbeEvery, and a probe that moved counts as an event
// ("object:bounds-changed:probe"), so settling waits for the slide to end.
// A toggle or a button press shows nothing new and costs nothing.
//
// Trace: AXSNAP_EVENT_TRACE=1 prints every event of a watched app to stderr
// as it is dispatched ("TRACE <steady-clock ms> <class> <member> <detail>
// <path>") and each probe that moved: bench/page-switch-trace.ts.
//
// Batching toolkits: Chromium sends a page's changes to its accessibility
// tree in batches (its deferred-update delay, 150 ms after page load): a page
// that changes every 10 ms sends one burst of children-changed or
// property-change every 160-210 ms (measured, test/pages/ticker.html), so a
// 150 ms silence proves nothing. An app whose toolkit is Chromium (Chrome,
// Chromium, Electron) gets quietFloorMs = kBatchedQuietMs: settling and idle
// wait at least that long without an event.
//
// Bus loss: the subscriptions belong to one connection. When it closes, Wait
// fails with kNoAccessibilityBus; the backend drops them on reconnect
// (Drop) and the next Watch subscribes again on the new connection. Stamps
// survive (they only grow).
#pragma once

#include <gio/gio.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "../core/backend.h"

namespace axsnap {

class AtspiEvents {
 public:
  AtspiEvents() = default;
  ~AtspiEvents();
  AtspiEvents(const AtspiEvents&) = delete;
  AtspiEvents& operator=(const AtspiEvents&) = delete;

  // Whether `pid` has live subscriptions on `conn`.
  bool Watching(int64_t pid, GDBusConnection* conn) const;
  // Subscribes to the app's events (sender = `busName`) on `conn`, their
  // callbacks dispatched on `ctx`; registers the event classes with the
  // registry the first time on this connection. Then one call to the app
  // (its windows, for the window events) makes sure it has seen the
  // registration before we return: its next change is reported. A stopped
  // app does not fail the watch (its events will come when it runs).
  Error Watch(GDBusConnection* conn, GMainContext* ctx, int64_t pid, const std::string& busName,
              Clock::time_point deadline);
  // Dispatches what is pending, then waits on `ctx` until the app's stamp
  // exceeds `since` or `until` passes. kInvalidArgument when the pid is not
  // watched; kNoAccessibilityBus when the connection closed (out still says
  // what was counted, watching = false).
  Error Wait(GMainContext* ctx, int64_t pid, uint64_t since, Clock::time_point until, AppEventState& out);
  // A watched app whose toolkit is not known yet (it did not answer at Watch) is asked again, at most
  // every few seconds and briefly: its quiet floor depends on it.
  void Relearn(int64_t pid, Clock::time_point deadline);
  // Stops the app's subscriptions (deregistering the event classes after the last).
  void Unwatch(int64_t pid);
  // The connection is gone or being replaced: forget every subscription (stamps stay).
  void Drop();

 private:
  struct Probe {
    std::string path;
    Clock::time_point added;
    bool read = false;
    int32_t x = 0, y = 0, w = 0, h = 0;
  };
  struct App {
    std::string bus;
    std::vector<guint> subs;
    uint64_t stamp = 0, windowStamp = 0;
    bool any = false;
    Clock::time_point last;
    std::deque<std::string> recent;
    std::unordered_set<std::string> toplevels;  // object paths of the app's windows
    std::vector<Probe> probes;                  // objects newly shown: do they move?
    Clock::time_point nextProbe;
    double quietFloorMs = 0;           // AppEventState::quietFloorMs: set for toolkits that batch (Chromium)
    bool toolkitKnown = false;         // the app said its toolkit (a stopped or busy app is asked again)
    Clock::time_point nextToolkitAsk;  // not before then: a stopped app must not slow every wait
  };
  static void OnSignal(GDBusConnection* conn, const gchar* sender, const gchar* path, const gchar* iface,
                       const gchar* member, GVariant* params, gpointer data);
  static void Count(App& app, const char* path, const char* iface, const char* member, GVariant* params);
  static void Counted(App& app, std::string kind, bool window);
  // Reads the probes' extents; whether one moved since it was last read.
  bool ProbesMoved(App& app, Clock::time_point until);
  void Unsubscribe(App& app);
  // The app's toolkit (org.a11y.atspi.Application.ToolkitName), nullopt when it does not say in time.
  std::optional<std::string> ToolkitName(const std::string& busName, Clock::time_point deadline);
  // Asks the app's toolkit until it answers once, and sets its quiet floor from it.
  void LearnToolkit(App& app, Clock::time_point deadline);
  void Register(Clock::time_point deadline);
  void Deregister();

  GDBusConnection* conn_ = nullptr;  // a reference we hold while any subscription exists
  bool registered_ = false;
  std::map<int64_t, std::unique_ptr<App>> apps_;
};

}  // namespace axsnap
