// RAII for GLib and GDBus objects, shared by the AT-SPI backend and its event
// listener (one definition, so both own references the same way).
#pragma once

#include <gio/gio.h>

#include <memory>

namespace axsnap {
namespace glib {

// RAII for GLib objects. "Adopt" takes over a reference the caller owns
// (a return value marked "transfer full"); "Ref" adds a reference of its own.

struct GObjectUnref {
  void operator()(gpointer p) const {
    if (p) g_object_unref(p);
  }
};
template <typename T>
using GObj = std::unique_ptr<T, GObjectUnref>;
template <typename T>
inline GObj<T> AdoptObject(T* p) {
  return GObj<T>(p);
}

struct VariantUnref {
  void operator()(GVariant* v) const {
    if (v) g_variant_unref(v);
  }
};
using VariantPtr = std::unique_ptr<GVariant, VariantUnref>;
inline VariantPtr AdoptVariant(GVariant* v) { return VariantPtr(v); }
// For floating variants (g_variant_new): take ownership of the floating ref.
inline VariantPtr SinkVariant(GVariant* v) { return VariantPtr(v ? g_variant_ref_sink(v) : nullptr); }

struct GErrorFree {
  void operator()(GError* e) const {
    if (e) g_error_free(e);
  }
};
using ErrorPtr = std::unique_ptr<GError, GErrorFree>;

struct GFree {
  void operator()(gpointer p) const { g_free(p); }
};
using CharPtr = std::unique_ptr<gchar, GFree>;

struct ContextUnref {
  void operator()(GMainContext* c) const {
    if (c) g_main_context_unref(c);
  }
};
using ContextPtr = std::unique_ptr<GMainContext, ContextUnref>;

struct SourceDestroy {
  void operator()(GSource* s) const {
    if (s) {
      g_source_destroy(s);
      g_source_unref(s);
    }
  }
};
using SourcePtr = std::unique_ptr<GSource, SourceDestroy>;

// Makes `ctx` the thread-default context for the scope, so that GDBus
// dispatches async replies there.
class ContextScope {
 public:
  explicit ContextScope(GMainContext* ctx) : ctx_(ctx) { g_main_context_push_thread_default(ctx_); }
  ~ContextScope() { g_main_context_pop_thread_default(ctx_); }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  GMainContext* ctx_;
};

}  // namespace glib
}  // namespace axsnap
