// TaskQueue: runs everything submitted, on its own threads, and shuts down cleanly.
#include <pthread.h>

#include <atomic>
#include <cstring>
#include <future>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/task_queue.h"
#include "tests/check.h"

namespace mnemo {
namespace {

MNEMO_TEST(task_queue, runs_every_task_on_pool_threads) {
  TaskQueue sut(4);
  CHECK_EQ(sut.size(), size_t{4});
  std::atomic<int> done{0};
  std::mutex mu;
  std::set<std::thread::id> ids;
  const auto caller = std::this_thread::get_id();
  for (int i = 0; i < 1000; ++i) {
    CHECK(sut.Submit([&] {
               {
                 std::lock_guard<std::mutex> lock(mu);
                 ids.insert(std::this_thread::get_id());
               }
               done.fetch_add(1);
             }).ok());
  }
  sut.Shutdown();
  CHECK_EQ(done.load(), 1000);
  CHECK(ids.count(caller) == 0);
  CHECK(ids.size() >= 1 && ids.size() <= 4);
}

MNEMO_TEST(task_queue, names_its_threads_for_profiles) {
  TaskQueue pool(1, "mnemo-copy-with-a-long-name");  // cut to the kernel's 15 characters
  std::promise<std::string> name;
  CHECK(pool.Submit([&name] {
          char buf[32] = {};
          pthread_getname_np(pthread_self(), buf, sizeof buf);
          name.set_value(buf);
        }).ok());
  CHECK(name.get_future().get() == std::string("mnemo-copy-with"));
}

MNEMO_TEST(task_queue, shutdown_drains_queued_tasks_then_refuses_new_ones) {
  TaskQueue sut(1);
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  // The first task blocks the only worker so the rest are still queued at Shutdown().
  CHECK(sut.Submit([&] {
             while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
             ran.fetch_add(1);
           }).ok());
  std::vector<TaskQueue::Task> more;
  for (int i = 0; i < 10; ++i) more.emplace_back([&] { ran.fetch_add(1); });
  CHECK(sut.SubmitAll(std::move(more)).ok());
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    release.store(true);
  });
  sut.Shutdown();
  releaser.join();
  CHECK_EQ(ran.load(), 11);
  CHECK(sut.closed());
  const Status late = sut.Submit([] {});
  CHECK_EQ(late.code(), StatusCode::kClosed);
  CHECK_EQ(sut.SubmitAll({[] {}}).code(), StatusCode::kClosed);
}

MNEMO_TEST(task_queue, shutdown_is_idempotent_and_concurrent_safe) {
  TaskQueue sut(3);
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) CHECK(sut.Submit([&] { ran.fetch_add(1); }).ok());
  std::thread a([&] { sut.Shutdown(); });
  std::thread b([&] { sut.Shutdown(); });
  a.join();
  b.join();
  sut.Shutdown();
  CHECK_EQ(ran.load(), 100);
}

MNEMO_TEST(task_queue, destructor_joins_without_explicit_shutdown) {
  std::atomic<int> ran{0};
  {
    TaskQueue sut(2);
    for (int i = 0; i < 50; ++i) CHECK(sut.Submit([&] { ran.fetch_add(1); }).ok());
  }
  CHECK_EQ(ran.load(), 50);
}

MNEMO_TEST(task_queue, default_thread_count_is_bounded) {
  const size_t n = TaskQueue::DefaultThreadCount();
  CHECK(n >= 1 && n <= 16);
  TaskQueue sut;
  CHECK_EQ(sut.size(), n);
}

}  // namespace
}  // namespace mnemo
