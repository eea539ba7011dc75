// SizeClassPool: class sizes, reuse of freed buffers, the byte cap, retry after an allocation
// failure with the cache emptied, foreign pointers, and concurrent take/put.
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "core/size_class_pool.h"
#include "tests/check.h"

namespace mnemo {
namespace {

// A raw allocator that counts and can be told to fail once its budget is used.
struct Counting {
  std::atomic<int> allocs{0};
  std::atomic<int> frees{0};
  std::atomic<std::size_t> used{0};
  std::size_t budget = SIZE_MAX;
  std::mutex mu;
  std::map<void*, std::size_t> sizes;

  SizeClassPool Make(std::size_t cap) {
    return SizeClassPool(
        [this](std::size_t bytes, void** out) {
          std::lock_guard<std::mutex> lock(mu);
          if (used + bytes > budget) return Status::OutOfMemory("budget");
          *out = std::malloc(bytes);
          sizes[*out] = bytes;
          used += bytes;
          allocs++;
          return Status::Ok();
        },
        [this](void* p) {
          std::lock_guard<std::mutex> lock(mu);
          frees++;
          used -= sizes.count(p) ? sizes[p] : 0;
          sizes.erase(p);
          std::free(p);
        },
        cap);
  }
};

MNEMO_TEST(size_class_pool, class_sizes) {
  CHECK_EQ(SizeClassPool::ClassBytes(1), std::size_t{256});
  CHECK_EQ(SizeClassPool::ClassBytes(256), std::size_t{256});
  CHECK_EQ(SizeClassPool::ClassBytes(257), std::size_t{512});
  CHECK_EQ(SizeClassPool::ClassBytes(1 << 20), std::size_t{1} << 20);
  CHECK_EQ(SizeClassPool::ClassBytes((1 << 20) + 1), std::size_t{5} << 18);  // 1.25 MiB
  CHECK_EQ(SizeClassPool::ClassBytes(3 << 20), std::size_t{3} << 20);
  CHECK_EQ(SizeClassPool::ClassBytes((3 << 20) + 1), std::size_t{7} << 19);  // 3.5 MiB
  for (std::size_t b = 1; b < (std::size_t{64} << 20); b = b * 3 + 7) {
    const std::size_t c = SizeClassPool::ClassBytes(b);
    CHECK(c >= b);
    // Slack: under 2x up to 1 MiB (powers of two), under 25% above.
    CHECK(b <= 256 || c < 2 * b);
    CHECK(b <= (std::size_t{1} << 20) || c - b < b / 4);
  }
}

MNEMO_TEST(size_class_pool, freed_buffers_come_back_without_the_allocator) {
  Counting raw;
  SizeClassPool pool = raw.Make(std::size_t{1} << 30);
  // A "forward pass" taking the same shapes every step.
  for (int step = 0; step < 10; ++step) {
    void* a = nullptr;
    void* b = nullptr;
    CHECK(pool.Take(1000, &a).ok());
    CHECK(pool.Take(300000, &b).ok());
    pool.Put(a);
    pool.Put(b);
  }
  CHECK_EQ(raw.allocs.load(), 2);
  CHECK_EQ(raw.frees.load(), 0);
  CHECK_EQ(pool.stats().hits, uint64_t{18});
  pool.Trim();
  CHECK_EQ(raw.frees.load(), 2);
  CHECK_EQ(pool.stats().cached_bytes, std::size_t{0});
}

MNEMO_TEST(size_class_pool, the_cap_bounds_what_is_kept) {
  Counting raw;
  SizeClassPool pool = raw.Make(4096);
  std::vector<void*> ps(4);
  for (auto& p : ps) CHECK(pool.Take(2048, &p).ok());
  for (void* p : ps) pool.Put(p);
  CHECK_EQ(pool.stats().cached_bytes, std::size_t{4096});
  CHECK_EQ(raw.frees.load(), 2);
}

MNEMO_TEST(size_class_pool, allocation_failure_empties_the_cache_and_retries) {
  Counting raw;
  raw.budget = 3 << 20;
  SizeClassPool pool = raw.Make(std::size_t{1} << 30);
  void* a = nullptr;
  CHECK(pool.Take(2 << 20, &a).ok());
  pool.Put(a);  // cached: the budget stays used
  // 2 MiB cached + a 2.5 MiB class > the 3 MiB budget: possible only once the cache is emptied.
  void* c = nullptr;
  CHECK(pool.Take((2 << 20) + 1, &c).ok());
  CHECK_EQ(pool.stats().trims, uint64_t{1});
  CHECK_EQ(pool.stats().cached_bytes, std::size_t{0});
  pool.Put(c);
  // With nothing cached to give back, the failure reaches the caller.
  pool.Trim();
  raw.budget = 0;
  void* d = nullptr;
  CHECK_EQ(static_cast<int>(pool.Take(64, &d).code()), static_cast<int>(StatusCode::kOutOfMemory));
}

MNEMO_TEST(size_class_pool, a_foreign_pointer_is_freed_not_cached) {
  Counting raw;
  SizeClassPool pool = raw.Make(std::size_t{1} << 30);
  pool.Put(std::malloc(64));
  CHECK_EQ(raw.frees.load(), 1);
  CHECK_EQ(pool.stats().cached_bytes, std::size_t{0});
  pool.Put(nullptr);
}

MNEMO_TEST(size_class_pool, concurrent_take_and_put_never_hand_out_one_buffer_twice) {
  Counting raw;
  SizeClassPool pool = raw.Make(std::size_t{1} << 30);
  std::atomic<bool> clash{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        void* p = nullptr;
        if (!pool.Take(static_cast<std::size_t>(512 + (i % 7) * 1000), &p).ok()) continue;
        auto* word = static_cast<std::atomic<int>*>(p);
        // Each holder stamps its id; another holder of the same buffer would overwrite it.
        word->store(t + 1);
        std::this_thread::yield();
        if (word->load() != t + 1) clash = true;
        pool.Put(p);
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(!clash.load());
  CHECK_EQ(pool.stats().live_bytes, std::size_t{0});
}

}  // namespace
}  // namespace mnemo
