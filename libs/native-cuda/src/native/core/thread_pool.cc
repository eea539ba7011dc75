#include "core/thread_pool.h"

#include <algorithm>
#include <utility>

namespace mnemo {

size_t ThreadPool::DefaultThreadCount() {
  const size_t hw = std::thread::hardware_concurrency();
  return std::clamp<size_t>(hw == 0 ? 1 : hw, 1, 16);
}

ThreadPool::ThreadPool(size_t threads) {
  const size_t n = threads == 0 ? DefaultThreadCount() : threads;
  threads_.reserve(n);
  for (size_t i = 0; i < n; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() { Shutdown(); }

Status ThreadPool::Submit(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::Closed("thread pool is shut down");
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return Status::Ok();
}

Status ThreadPool::SubmitAll(std::vector<Task> tasks) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::Closed("thread pool is shut down");
    for (Task& t : tasks) queue_.push_back(std::move(t));
  }
  if (tasks.size() == 1) {
    cv_.notify_one();
  } else {
    cv_.notify_all();
  }
  return Status::Ok();
}

bool ThreadPool::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

void ThreadPool::Shutdown() {
  std::lock_guard<std::mutex> join_lock(join_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // Drain before exiting: queued tasks carry completions somebody waits on.
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace mnemo
