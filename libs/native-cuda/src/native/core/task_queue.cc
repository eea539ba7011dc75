#include "core/task_queue.h"

#include "core/cpu_budget.h"

#include <pthread.h>

#include <algorithm>
#include <string>
#include <utility>

namespace mnemo {

size_t TaskQueue::DefaultThreadCount() { return ThreadBudgetFor(UsableCores()).task_threads; }

TaskQueue::TaskQueue(size_t threads, const char* name) {
  const size_t n = threads == 0 ? DefaultThreadCount() : threads;
  threads_.reserve(n);
  const std::string thread_name = std::string(name).substr(0, 15);
  for (size_t i = 0; i < n; ++i) {
    threads_.emplace_back([this, thread_name] {
      pthread_setname_np(pthread_self(), thread_name.c_str());
      WorkerLoop();
    });
  }
}

TaskQueue::~TaskQueue() { Shutdown(); }

Status TaskQueue::Submit(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::Closed("thread pool is shut down");
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return Status::Ok();
}

Status TaskQueue::SubmitAll(std::vector<Task> tasks) {
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

bool TaskQueue::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

void TaskQueue::Shutdown() {
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

void TaskQueue::WorkerLoop() {
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
