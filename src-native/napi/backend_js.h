// The N-API class of axsnap, NativeBackend, whose methods return promises.
// Each method copies its arguments into plain C++ values on the JavaScript
// thread (the baton), runs on the backend's worker thread without touching
// Napi::, and settles its promise back on the JavaScript thread through a
// thread-safe function (node-addon-api's ObjectWrap, ThreadSafeFunction and
// Promise::Deferred; N-API's env cleanup hooks). Typed in lib/native.ts;
// never exported as the public API. The methods live by what they serve:
// backend_js.cc (lifetime, the worker and calls), observe_js.cc (apps,
// windows, snapshots, live reads), act_js.cc (actions and input),
// events_js.cc (change events and settling), fake_js.cc (the test backends).
#pragma once

#include <napi.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "../core/backend.h"
#include "../core/handles.h"
#include "../core/snapshot.h"
#include "../core/walk.h"
#include "../core/worker.h"
#include "../fake/fake_backend.h"

namespace axsnap {

class MacBackend;  // mac/mac_backend.h, on macOS and the fake macOS layer

namespace napi {

using Settle = std::function<void(Napi::Env, Napi::Promise::Deferred&)>;

// The longest a waitEvents job keeps the worker once another job is queued.
constexpr std::chrono::milliseconds kWaitTurn{10};

struct Call {
  Napi::Promise::Deferred deferred;
  Settle settle;
  // How long the job waited in the worker's queue before it started.
  double queuedMs = 0;
};

Napi::Error ToJsError(Napi::Env env, const Error& err);
double Clamp(const Napi::Value& v, double lo, double hi, double fallback);
Clock::time_point DeadlineFrom(const Napi::Value& v);

// Live reads for one job's scope, off again however the job ends (a throw included).
class LiveReads {
 public:
  explicit LiveReads(Backend& b) : b_(b) { b_.SetLiveReads(true); }
  ~LiveReads() { b_.SetLiveReads(false); }
  LiveReads(const LiveReads&) = delete;
  LiveReads& operator=(const LiveReads&) = delete;

 private:
  Backend& b_;
};

// Whatever the backend wants around each worker job (Backend::BeginJob:
// macOS pushes an autorelease pool), ended when the job ends, thrown or not.
class JobScope {
 public:
  explicit JobScope(Backend& b) : end_(b.BeginJob()) {}
  ~JobScope() {
    if (end_) end_();
  }
  JobScope(const JobScope&) = delete;
  JobScope& operator=(const JobScope&) = delete;

 private:
  std::function<void()> end_;
};

class NativeBackend : public Napi::ObjectWrap<NativeBackend> {
 public:
  static Napi::Function Init(Napi::Env env);

  NativeBackend(const Napi::CallbackInfo& info);

  ~NativeBackend() override;

 private:
  static void OnEnvTeardown(void* self);

  void Shutdown(bool dropQueued);

  // On the worker: the backend's destruction is a job like the others (in
  // close() it is part of the closing job).
  void DestroyBackend();

  // Posts `work` to the worker; `work` returns the settle step run on the JS thread.
  Napi::Value Run(Napi::Env env, std::function<Settle(Backend&)> work);

  // A promise already rejected: arguments refused before anything reaches the worker.
  static Napi::Value Rejected(Napi::Env env, const Error& err);

  static Settle Fail(const Error& err);

  static Settle Done();

  // connect(deadlineMs?): connecting (and finding the accessibility bus) is bounded by the deadline.
  Napi::Value Connect(const Napi::CallbackInfo& info);

  Napi::Value ListApps(const Napi::CallbackInfo& info);

  // launchable(deadlineMs): what the system can start, [{ id, name, executable, path, hidden }].
  Napi::Value Launchable(const Napi::CallbackInfo& info);

  // launch({ id, args?, env?, deadlineMs }): starts one launchable() id or path; resolves { pid } (0: unknown).
  Napi::Value Launch(const Napi::CallbackInfo& info);

  Napi::Value Snapshot(const Napi::CallbackInfo& info);

  // window: { title } | { index } | { id } (TypeScript validated it; a direct caller gets INVALID_ARGUMENT).
  static Error WindowSelectorFrom(const Napi::Value& v, WindowSelector& out);

  // listWindows({ app, deadlineMs }): the app's windows, dialogs, open menus and popups, in listing order.
  Napi::Value ListWindows(const Napi::CallbackInfo& info);

  Napi::Value DoAction(const Napi::CallbackInfo& info);
  // { name, version } of the toolkit of the element's app.
  Napi::Value Toolkit(const Napi::CallbackInfo& info);

  Napi::Value SetText(const Napi::CallbackInfo& info);

  Napi::Value SetNumber(const Napi::CallbackInfo& info);

  Napi::Value Focus(const Napi::CallbackInfo& info);

  Napi::Value Select(const Napi::CallbackInfo& info);

  Napi::Value Pointer(const Napi::CallbackInfo& info);

  Napi::Value Keys(const Napi::CallbackInfo& info);

  Napi::Value TypeText(const Napi::CallbackInfo& info);

  // recognizeText({ window, regions, blanks, languages?, singleLine?, deadlineMs }): the window captured and
  // read on the worker (core/ocr.h); only text and frames come back.
  Napi::Value RecognizeText(const Napi::CallbackInfo& info);

  Napi::Value Release(const Napi::CallbackInfo& info);

  // What the handle ledger and the backend's table hold, asked on the worker (the only thread that touches them):
  // the leak tests' measure of handles nobody releases.
  Napi::Value HandleStats(const Napi::CallbackInfo& info);

  // Closing runs on the worker too: tearing down GDBus and X may block, and
  // must not freeze the event loop. Calls made after close() reject.
  Napi::Value Close(const Napi::CallbackInfo& info);

  // The subtree of one live element, bounded: what identity checks read again.
  Napi::Value ReadElement(const Napi::CallbackInfo& info);

  // A bounded walk of one element with every cache bypassed: what the action path checks must be the app's
  // answer now, not a bulk read from before the snapshot. Runs on the worker.
  Settle LiveRead(Backend& b, ElementId id, const WalkOptions& options);

  // The element with keyboard focus in an app, asked live, read like readElement; null when none has focus.
  Napi::Value FocusedElement(const Napi::CallbackInfo& info);

  // What pointer input at a screen point over a window reaches now, asked live: the deepest element there,
  // read like readElement (its children for its name), and its ancestors up to the window or the first of
  // `stopAt` (attributes only), nearest first; null when nothing of the app is under the point.
  Napi::Value ElementAt(const Napi::CallbackInfo& info);

  Napi::Value InsertText(const Napi::CallbackInfo& info);

  Napi::Value FakeReplace(const Napi::CallbackInfo& info);

  Napi::Value Permissions(const Napi::CallbackInfo& info);

  Napi::Value FakeLog(const Napi::CallbackInfo& info);

  Napi::Value FakeReleased(const Napi::CallbackInfo& info);

  // --- Change events (core/settle.h, Backend::Watch / WaitEvents) ---

  // An app argument as snapshot takes it: a pid (1..2^31-1) or a non-blank name.
  static Error AppQueryFromJs(const Napi::Value& app, AppQuery& q);

  // The app, watched. A pid the backend already knows is watched without listing apps (a stopped app
  // would cost the listing a call timeout); otherwise the app is found as snapshot finds it. Runs on the worker.
  static Error WatchApp(Backend& b, const AppQuery& q, Clock::time_point deadline, AppInfo& out);

  static Napi::Object EventStateToJs(Napi::Env env, const AppEventState& st);

  // watch(app, deadlineMs?): starts counting the app's change events; resolves { pid, name }.
  Napi::Value Watch(const Napi::CallbackInfo& info);

  // waitEvents(pid, sinceStamp, timeoutMs): resolves the app's event state once its stamp exceeds sinceStamp
  // or timeoutMs passed, or sooner when another job is queued behind it: only waiting, it must not hold the
  // worker from a call that reads or acts (lib/session/act/watcher.ts asks again). Watches the app first when it is
  // not (again after a reconnect); that step alone may take up to 1 s when timeoutMs is shorter.
  Napi::Value WaitEvents(const Napi::CallbackInfo& info);

  // waitQuiet(app, { quietMs = 150, capMs = 3000 }): resolves { settled, ms, events, windowEvents } once the app
  // sent no event for quietMs, or capMs passed ("unsupported" at once on a platform without events). Finding
  // and watching an app not yet watched may take up to 1 s beyond a shorter cap.
  Napi::Value WaitQuiet(const Napi::CallbackInfo& info);

  // lastCall(): the number of the call posted last (synchronous), for callStarted.
  Napi::Value LastCall(const Napi::CallbackInfo& info);

  // callStarted(n): whether call n has started on the worker, so a call that settled by its deadline
  // can tell the app's silence from time spent queued behind other calls (synchronous).
  Napi::Value CallStarted(const Napi::CallbackInfo& info);

  // unwatch(pid): the app's events are no longer listened to.
  Napi::Value Unwatch(const Napi::CallbackInfo& info);

  std::unique_ptr<Backend> backend_;
  // Touched only by jobs on the worker thread.
  HandleLedger ledger_;
  FakeBackend* fake_ = nullptr;
  bool macFake_ = false;
  // The macOS backend (backend_), for what must run on the JavaScript thread: the keyboard layout (keys).
  MacBackend* mac_ = nullptr;
  std::unique_ptr<Worker> worker_;
  // Calls are numbered as posted (JS thread); the worker runs them in that order and notes the last it started.
  uint64_t lastCall_ = 0;
  std::atomic<uint64_t> startedCall_{0};
  Napi::ThreadSafeFunction tsfn_;
  napi_env env_ = nullptr;
  // JS-thread state: pending calls, no new calls accepted, torn down.
  int pending_ = 0;
  bool closed_ = false;
  bool shutDown_ = false;
  bool tornDown_ = false;
};

}  // namespace napi
}  // namespace axsnap
