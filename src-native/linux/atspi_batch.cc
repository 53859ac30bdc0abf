// Pipelined D-Bus calls: a batch, the per-call timeout, and what each call
// costs (the statistics the bench and ResetReadStats/TakeReadStats report).
//
// How a batch works: every D-Bus call of an operation is issued at once with
// g_dbus_connection_call() (replies may arrive in any order); a call's reply
// handler may issue follow-up calls (for example the extents of a node once
// its interfaces are known). The operation then iterates the backend's
// private GMainContext until no call is outstanding. Each call's timeout is
// min(per-call timeout, time left to the deadline). The first call to an app
// that gets no reply marks that app unresponsive for the rest of the batch:
// its outstanding calls are cancelled and later calls to it are not sent, so
// a stopped app costs one timeout, not one per call.
//
// Reply handlers hold a shared reference to the batch state. If a batch ends
// with calls still outstanding (only when GDBus fails to report a
// cancellation in time), their late replies find the state closed and are
// dropped, so no handler ever touches a finished operation.
//
// Follows GIO's GDBusConnection (g_dbus_connection_call, GCancellable) and
// GLib's main context (GMainContext, timeout sources); the D-Bus
// specification for reply timeouts and org.freedesktop.DBus.Properties.Get.

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "atspi_internal.h"

namespace axsnap {
namespace atspi {

namespace {

// Outstanding calls per batch; the rest wait in a queue. A call's timeout
// runs from when it is sent, so the window must stay small enough that the
// app (which answers in order) gets through it well within one timeout even
// for huge batches; 256 calls are a few milliseconds of app time and keep the
// pipe full (a round trip is ~0.1 ms).
constexpr size_t kMaxInFlight = 256;

struct CallCtx {
  std::shared_ptr<BatchState> state;
  std::string bus;
  ReplyFn fn;
  bool soft;  // a no-reply does not mark the app unresponsive
  std::string kind;
  Clock::time_point sent;
  bool direct = false;  // on the app's own connection (Peers)
};

struct Queued {
  std::string bus, path;
  const char* iface;
  const char* method;
  VariantPtr params;
  const char* replyType;
  ReplyFn fn;
  bool soft;
  std::string kind;  // for CallStats: the method, or "Get <property>"
};

}  // namespace

struct BatchState {
  GDBusConnection* conn = nullptr;  // borrowed from Impl for the batch's life
  Clock::time_point deadline;
  std::chrono::milliseconds perCall{800};
  bool closed = false;
  bool deadlinePassed = false;
  bool abandon = false;
  size_t inflight = 0;
  std::unordered_map<std::string, GObj<GCancellable>> cancellables;  // per app bus name
  std::unordered_set<std::string> dead;                              // apps that did not answer
  std::deque<Queued> queue;                                          // over kMaxInFlight
  std::deque<std::pair<ReplyFn, Reply>> deferred;                    // failures decided locally
  bool busClosed = false;
  CallStats* stats = nullptr;
  const Peers* peers = nullptr;  // direct connections to use where there is one
  Clock::time_point lastReply;

  GCancellable* CancellableFor(const std::string& busName) {
    auto& c = cancellables[busName];
    if (!c) c = AdoptObject(g_cancellable_new());
    return c.get();
  }

  void MarkDead(const std::string& busName) {
    if (!dead.insert(busName).second) return;
    auto it = cancellables.find(busName);
    if (it != cancellables.end()) g_cancellable_cancel(it->second.get());
  }

  void CancelAll() {
    for (auto& e : cancellables) g_cancellable_cancel(e.second.get());
  }
};

namespace {

void OnCallDone(GObject* source, GAsyncResult* res, gpointer data);

void Issue(const std::shared_ptr<BatchState>& st, Queued q) {
  Reply fail;
  if (st->busClosed) {
    fail.outcome = Outcome::kBusClosed;
    fail.message = "the accessibility bus connection was closed";
  } else if (st->dead.count(q.bus)) {
    fail.outcome = Outcome::kNoReply;
    fail.message = "an earlier call to " + q.bus + " got no reply";
  } else if (st->deadlinePassed) {
    fail.outcome = Outcome::kDeadline;
    fail.message = "the deadline passed";
  }
  int timeout = 0;
  if (fail.outcome == Outcome::kOk) {
    timeout = TimeoutMs(st->deadline, st->perCall);
    if (timeout <= 0) {
      fail.outcome = Outcome::kDeadline;
      fail.message = "the deadline passed";
    }
  }
  if (fail.outcome != Outcome::kOk) {
    st->deferred.emplace_back(std::move(q.fn), std::move(fail));
    return;
  }
  if (st->inflight >= kMaxInFlight) {
    st->queue.push_back(std::move(q));
    return;
  }
  GDBusConnection* direct = st->peers ? st->peers->For(q.bus) : nullptr;
  auto* ctx = new CallCtx{st, q.bus, std::move(q.fn), q.soft, std::move(q.kind), Clock::now(), direct != nullptr};
  ++st->inflight;
  g_dbus_connection_call(direct ? direct : st->conn, direct ? nullptr : q.bus.c_str(), q.path.c_str(), q.iface,
                         q.method, q.params.get(), q.replyType ? G_VARIANT_TYPE(q.replyType) : nullptr,
                         G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout, st->CancellableFor(q.bus), OnCallDone, ctx);
}

void PumpQueue(const std::shared_ptr<BatchState>& st) {
  while (!st->queue.empty() && st->inflight < kMaxInFlight) {
    Queued q = std::move(st->queue.front());
    st->queue.pop_front();
    Issue(st, std::move(q));
  }
}

void OnCallDone(GObject* source, GAsyncResult* res, gpointer data) {
  std::unique_ptr<CallCtx> ctx(static_cast<CallCtx*>(data));
  GError* raw = nullptr;
  VariantPtr value = AdoptVariant(g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &raw));
  ErrorPtr err(raw);
  BatchState& st = *ctx->state;
  --st.inflight;
  if (st.closed) return;
  if (st.stats) {
    const Clock::time_point now = Clock::now();
    const Clock::time_point from = std::max(ctx->sent, st.lastReply);
    st.lastReply = now;
    st.stats->Add(ctx->kind, std::chrono::duration<double, std::milli>(now - from).count());
  }
  Reply r;
  if (value) {
    r.outcome = Outcome::kOk;
    r.value = value.get();
  } else if (g_error_matches(err.get(), G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    if (st.dead.count(ctx->bus)) {
      r.outcome = Outcome::kNoReply;
      r.message = "an earlier call to " + ctx->bus + " got no reply";
    } else {
      r.outcome = Outcome::kDeadline;
      r.message = "the deadline passed";
    }
  } else {
    r.outcome = ClassifyError(err.get());
    r.message = ErrorWords(err.get(), ctx->kind);
    if (r.outcome == Outcome::kNoReply) {
      // A timeout cut short by the deadline is the deadline's doing.
      if (st.deadlinePassed || Clock::now() + std::chrono::milliseconds(2) >= st.deadline) {
        r.outcome = Outcome::kDeadline;
      } else if (!ctx->soft) {
        st.MarkDead(ctx->bus);
      }
    } else if (r.outcome == Outcome::kBusClosed && ctx->direct) {
      // The app's own connection closed: the app exited, the bus is fine.
      r.outcome = Outcome::kGone;
    } else if (r.outcome == Outcome::kBusClosed) {
      st.busClosed = true;
      st.CancelAll();
    }
  }
  ctx->fn(r);
  PumpQueue(ctx->state);
}

}  // namespace

int TimeoutMs(Clock::time_point deadline, std::chrono::milliseconds perCall) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<int64_t>(left, perCall.count()));
}

double MsSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

Batch::Batch(GMainContext* ctx, GDBusConnection* conn, std::chrono::milliseconds perCall, Clock::time_point deadline,
             CallStats* stats)
    : ctx_(ctx), st_(std::make_shared<BatchState>()) {
  st_->conn = conn;
  st_->deadline = deadline;
  st_->perCall = perCall;
  st_->stats = stats;
}
Batch::~Batch() { st_->closed = true; }
void Batch::UsePeers(const Peers* peers) { st_->peers = peers; }

void Batch::Call(const std::string& busName, const std::string& path, const char* iface, const char* method,
                 GVariant* params, const char* replyType, ReplyFn fn, bool soft) {
  Issue(st_, Queued{busName, path, iface, method, SinkVariant(params), replyType, std::move(fn), soft, method});
}

void Batch::GetProperty(const std::string& busName, const std::string& path, const char* iface, const char* prop,
                        ReplyFn fn) {
  Issue(st_, Queued{busName, path, kIfProperties, "Get", SinkVariant(g_variant_new("(ss)", iface, prop)), "(v)",
                    [fn = std::move(fn)](const Reply& r) {
                      if (r.outcome != Outcome::kOk) return fn(r);
                      VariantPtr inner = UnwrapV(r.value);
                      Reply unwrapped;
                      unwrapped.value = inner.get();
                      if (!inner) {
                        unwrapped.outcome = Outcome::kFailed;
                        unwrapped.message = "malformed property reply";
                      }
                      fn(unwrapped);
                    },
                    false, std::string("Get ") + prop});
}

void Batch::Run() {
  GMainContext* ctx = ctx_;
  SourcePtr deadlineSource, abandonSource;
  auto armDeadline = [&]() {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(st_->deadline - Clock::now()).count();
    deadlineSource.reset(g_timeout_source_new(static_cast<guint>(std::max<int64_t>(left, 0))));
    g_source_set_callback(
        deadlineSource.get(),
        [](gpointer p) -> gboolean {
          auto* st = static_cast<BatchState*>(p);
          st->deadlinePassed = true;
          st->CancelAll();
          return G_SOURCE_REMOVE;
        },
        st_.get(), nullptr);
    g_source_attach(deadlineSource.get(), ctx);
    // Cancellations are reported within milliseconds; this is the backstop.
    abandonSource.reset(g_timeout_source_new(static_cast<guint>(std::max<int64_t>(left, 0) + 500)));
    g_source_set_callback(
        abandonSource.get(),
        [](gpointer p) -> gboolean {
          static_cast<BatchState*>(p)->abandon = true;
          return G_SOURCE_REMOVE;
        },
        st_.get(), nullptr);
    g_source_attach(abandonSource.get(), ctx);
  };
  bool armed = false;
  for (;;) {
    while (!st_->deferred.empty()) {
      auto item = std::move(st_->deferred.front());
      st_->deferred.pop_front();
      item.first(item.second);
      PumpQueue(st_);
    }
    if (st_->inflight == 0 && st_->queue.empty() && st_->deferred.empty()) break;
    if (st_->abandon) break;
    if (!armed) {
      armDeadline();
      armed = true;
    }
    g_main_context_iteration(ctx, TRUE);
  }
  if (st_->abandon) {
    // Only when GDBus did not report cancelled calls in time. Whatever is
    // queued was never sent: report it (its handlers' follow-ups are
    // refused the same way); replies still out are dropped on arrival.
    abandoned_ = st_->inflight > 0;
    st_->deadlinePassed = true;
    while (!st_->queue.empty() || !st_->deferred.empty()) {
      while (!st_->queue.empty()) {
        Reply r;
        r.outcome = Outcome::kDeadline;
        r.message = "the deadline passed";
        st_->deferred.emplace_back(std::move(st_->queue.front().fn), std::move(r));
        st_->queue.pop_front();
      }
      auto item = std::move(st_->deferred.front());
      st_->deferred.pop_front();
      item.first(item.second);
    }
  }
}

bool Batch::BusClosed() const { return st_->busClosed; }
int Batch::PerCallMs() const { return static_cast<int>(st_->perCall.count()); }

}  // namespace atspi
}  // namespace axsnap
