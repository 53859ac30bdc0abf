// One native thread per backend: every accessibility, X11 and capture call of
// that backend runs here, in order, never on the JavaScript thread. AT-SPI
// over GDBus, Xlib and the AX API all want a single owning thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace axsnap {

class Worker {
 public:
  Worker();
  ~Worker();  // runs the jobs already posted, then joins
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void Post(std::function<void()> job);
  // Some job is waiting to start. Read by a job that only waits (for an
  // app's events), so it can return early and let that job run (any thread).
  bool HasQueued() const { return queued_.load(std::memory_order_relaxed) > 0; }
  // Drops the jobs not yet started (their callers are gone).
  void Cancel();
  // Stops accepting jobs, finishes those queued, joins. Idempotent.
  void Stop();

 private:
  void Run();
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::atomic<size_t> queued_{0};  // jobs_.size(), readable without the mutex
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace axsnap
