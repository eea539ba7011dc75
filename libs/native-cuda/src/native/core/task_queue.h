// A task queue served by a fixed set of our own std::threads, for blocking native work
// (copies, I/O, submitted kernel lists), so that long work never occupies libuv's 4-thread
// pool. Not for splitting one computation: the kernels' deterministic parallel-for is
// kernels/cpu/parallel_for.h.
//
// Lifecycle: threads start in the constructor; Shutdown() stops accepting work, runs every
// task already queued (each task owns a completion that somebody waits on, so dropping one
// would strand a Promise), then joins. The destructor calls Shutdown(). Shutdown() is
// idempotent and may be called from any thread except a pool thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/status.h"

namespace mnemo {

class TaskQueue {
 public:
  using Task = std::function<void()>;

  // `threads` == 0 picks DefaultThreadCount(). `name` (at most 15 characters) names its threads,
  // so profiles and `top -H` tell the copy threads from the rest.
  explicit TaskQueue(size_t threads = 0, const char* name = "mnemo-tasks");
  ~TaskQueue();

  TaskQueue(const TaskQueue&) = delete;
  TaskQueue& operator=(const TaskQueue&) = delete;

  // Queues `task`; kClosed after Shutdown() began. Tasks must not throw.
  Status Submit(Task task);
  // Queues all `tasks` under one lock (one wake-up burst for a whole batch); all or none.
  Status SubmitAll(std::vector<Task> tasks);

  void Shutdown();

  size_t size() const { return threads_.size(); }
  bool closed() const;

  // ThreadBudgetFor(UsableCores()).task_threads (core/cpu_budget.h).
  static size_t DefaultThreadCount();

 private:
  void WorkerLoop();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;  // guarded by mu_
  bool stopping_ = false;   // guarded by mu_
  std::vector<std::thread> threads_;
  std::mutex join_mu_;  // serialises concurrent Shutdown() callers
};

}  // namespace mnemo
