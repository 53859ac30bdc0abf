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
  // Stops the app's subscriptions (deregistering the event classes after the last).
  void Unwatch(int64_t pid);
  // The connection is gone or being replaced: forget every subscription (stamps stay).
  void Drop();

 private:
  struct App {
    std::string bus;
    std::vector<guint> subs;
    uint64_t stamp = 0, windowStamp = 0;
    bool any = false;
    Clock::time_point last;
    std::deque<std::string> recent;
    std::unordered_set<std::string> toplevels;  // object paths of the app's windows
  };
  static void OnSignal(GDBusConnection* conn, const gchar* sender, const gchar* path, const gchar* iface,
                       const gchar* member, GVariant* params, gpointer data);
  static void Count(App& app, const char* path, const char* iface, const char* member, GVariant* params);
  void Unsubscribe(App& app);
  void Register(Clock::time_point deadline);
  void Deregister();

  GDBusConnection* conn_ = nullptr;  // a reference we hold while any subscription exists
  bool registered_ = false;
  std::map<int64_t, std::unique_ptr<App>> apps_;
};

}  // namespace axsnap
