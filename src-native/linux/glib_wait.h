// Running a GLib main context until an asynchronous reply has come or a time
// is up (GLib's g_main_context_iteration, g_timeout_source_new): the AT-SPI
// backend's blocking steps over GDBus's async calls wait this way, and so
// does opening a bus connection (g_dbus_connection_new_for_address).
#pragma once

#include <gio/gio.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>

#include "glib_ref.h"

namespace axsnap {
namespace glib {

// Iterates ctx until done() holds or `timeout` has passed; done() is checked
// after every dispatch, since the reply's callback runs inside an iteration.
// The timer wakes a blocking iteration at the end and is destroyed on return,
// so it never fires into a finished wait. True when done() held.
template <typename Done>
bool IterateUntil(GMainContext* ctx, std::chrono::milliseconds timeout, Done done) {
  bool timedOut = false;
  SourcePtr timer(g_timeout_source_new(static_cast<guint>(std::max<int64_t>(timeout.count(), 0))));
  g_source_set_callback(
      timer.get(),
      [](gpointer p) -> gboolean {
        *static_cast<bool*>(p) = true;
        return G_SOURCE_REMOVE;
      },
      &timedOut, nullptr);
  g_source_attach(timer.get(), ctx);
  while (!done() && !timedOut) g_main_context_iteration(ctx, TRUE);
  return done();
}

// A bus connection opened within a time: `conn` is set, or `error` says why
// not, or `timedOut` (the attempt was cancelled).
struct Connected {
  GObj<GDBusConnection> conn;
  ErrorPtr error;
  bool timedOut = false;
};

// Opens a connection to `address` on ctx (which must be the thread-default
// context: the reply comes there), waiting at most `timeout`. The synchronous
// g_dbus_connection_new_for_address_sync has no timeout: a bus that accepts the
// socket and never authenticates would hold the caller forever. A connection
// that closes never exits the process.
inline Connected ConnectAddress(GMainContext* ctx, const char* address, GDBusConnectionFlags flags,
                                std::chrono::milliseconds timeout) {
  // Shared with the callback, which may outlive this call when the attempt is cancelled.
  auto out = std::make_shared<Connected>();
  auto done = std::make_shared<bool>(false);
  struct Holder {
    std::shared_ptr<Connected> out;
    std::shared_ptr<bool> done;
  };
  GObj<GCancellable> cancel = AdoptObject(g_cancellable_new());
  g_dbus_connection_new_for_address(
      address, flags, nullptr, cancel.get(),
      [](GObject*, GAsyncResult* res, gpointer data) {
        std::unique_ptr<Holder> h(static_cast<Holder*>(data));
        GError* raw = nullptr;
        h->out->conn = AdoptObject(g_dbus_connection_new_for_address_finish(res, &raw));
        h->out->error.reset(raw);
        *h->done = true;
      },
      new Holder{out, done});
  if (timeout.count() <= 0 || !IterateUntil(ctx, timeout, [&] { return *done; })) {
    g_cancellable_cancel(cancel.get());
    // The cancelled callback frees its holder on the next iteration; a context that is never iterated
    // again would keep it.
    IterateUntil(ctx, std::chrono::milliseconds(100), [&] { return *done; });
    Connected late;
    late.timedOut = true;
    return late;
  }
  if (out->conn) g_dbus_connection_set_exit_on_close(out->conn.get(), FALSE);
  return std::move(*out);
}

}  // namespace glib
}  // namespace axsnap
