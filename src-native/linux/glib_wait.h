// Running a GLib main context until an asynchronous reply has come or a time
// is up (GLib's g_main_context_iteration, g_timeout_source_new): the AT-SPI
// backend's blocking steps over GDBus's async calls wait this way.
#pragma once

#include <gio/gio.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

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

}  // namespace glib
}  // namespace axsnap
