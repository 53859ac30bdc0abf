#include "worker.h"

namespace axsnap {

Worker::Worker() : thread_([this] { Run(); }) {}

Worker::~Worker() { Stop(); }

void Worker::Post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    jobs_.push_back(std::move(job));
    queued_.store(jobs_.size(), std::memory_order_relaxed);
  }
  cv_.notify_one();
}

void Worker::Cancel() {
  std::lock_guard<std::mutex> lock(mutex_);
  jobs_.clear();
  queued_.store(0, std::memory_order_relaxed);
}

void Worker::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void Worker::Run() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      queued_.store(jobs_.size(), std::memory_order_relaxed);
    }
    job();
  }
}

}  // namespace axsnap
