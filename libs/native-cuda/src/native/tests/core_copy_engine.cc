// Copy engine: correctness on many ranges, conflict detection, bounds, sharding, async runs.
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <random>
#include <vector>

#include "core/copy_engine.h"
#include "core/task_queue.h"
#include "tests/check.h"
#include "tests/random_bytes.h"

namespace mnemo {
namespace {

using test::RandomBytes;

CopyBuffer View(std::vector<uint8_t>& v) { return {v.data(), v.size()}; }

// Scatter: `blocks` blocks of `block` bytes from src to a random permutation of slots in
// dst, plus the expected dst bytes.
struct Scatter {
  CopyBatch batch;
  std::vector<uint8_t> expected;
};

Scatter MakeScatter(std::vector<uint8_t>& src, std::vector<uint8_t>& dst, size_t blocks,
                    size_t block, uint32_t seed) {
  Scatter s;
  s.batch.buffers = {View(src), View(dst)};
  std::vector<size_t> slots(blocks);
  std::iota(slots.begin(), slots.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(slots.begin(), slots.end(), rng);
  s.expected = dst;
  for (size_t i = 0; i < blocks; ++i) {
    // Variable lengths (1..block) exercise unaligned tails.
    const size_t len = 1 + rng() % block;
    s.batch.ranges.push_back({0, i * block, 1, slots[i] * block, len});
    std::copy_n(src.begin() + i * block, len, s.expected.begin() + slots[i] * block);
  }
  return s;
}

// Blocks until a completion has been delivered.
struct Latch {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Status status;
  CopyEngine::Completion Callback() {
    return [this](Status s) {
      std::lock_guard<std::mutex> lock(mu);
      status = std::move(s);
      done = true;
      cv.notify_all();
    };
  }
  Status Wait() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return done; });
    return status;
  }
};

MNEMO_TEST(copy_engine, copies_thousands_of_ranges_synchronously) {
  const size_t blocks = 4096, block = 64;
  auto src = RandomBytes(blocks * block, 1);
  std::vector<uint8_t> dst(blocks * block, 0xAB);
  Scatter s = MakeScatter(src, dst, blocks, block, 2);
  CHECK(CopyEngine::CopySync(s.batch).ok());
  CHECK(dst == s.expected);
}

MNEMO_TEST(copy_engine, copies_thousands_of_ranges_on_the_pool) {
  TaskQueue pool(4);
  // A small minimum shard forces the batch across every thread.
  CopyEngine sut(pool, 1024);
  const size_t blocks = 8192, block = 256;
  auto src = RandomBytes(blocks * block, 3);
  std::vector<uint8_t> dst(blocks * block, 0);
  Scatter s = MakeScatter(src, dst, blocks, block, 4);
  Latch latch;
  CHECK(sut.Submit(s.batch, latch.Callback()).ok());
  CHECK(latch.Wait().ok());
  CHECK(dst == s.expected);
}

MNEMO_TEST(copy_engine, concurrent_batches_all_complete) {
  TaskQueue pool(3);
  CopyEngine sut(pool, 512);
  constexpr int kBatches = 16;
  std::vector<std::vector<uint8_t>> srcs, dsts;
  std::vector<Scatter> scatters;
  srcs.reserve(kBatches);
  dsts.reserve(kBatches);
  for (int b = 0; b < kBatches; ++b) {
    srcs.push_back(RandomBytes(512 * 128, 100 + b));
    dsts.emplace_back(512 * 128, 0);
    scatters.push_back(MakeScatter(srcs.back(), dsts.back(), 512, 128, 200 + b));
  }
  std::vector<Latch> latches(kBatches);
  for (int b = 0; b < kBatches; ++b) {
    CHECK(sut.Submit(scatters[b].batch, latches[b].Callback()).ok());
  }
  for (int b = 0; b < kBatches; ++b) {
    CHECK(latches[b].Wait().ok());
    CHECK(dsts[b] == scatters[b].expected);
  }
}

MNEMO_TEST(copy_engine, empty_batch_completes_on_the_pool) {
  TaskQueue pool(2);
  CopyEngine sut(pool);
  Latch latch;
  CHECK(sut.Submit(CopyBatch{}, latch.Callback()).ok());
  CHECK(latch.Wait().ok());
}

MNEMO_TEST(copy_engine, one_huge_range_is_split_across_shards) {
  std::vector<uint8_t> src = RandomBytes(1 << 20, 5), dst(1 << 20, 0);
  CopyBatch batch{{View(src), View(dst)}, {{0, 0, 1, 0, 1 << 20}}};
  const auto shards = PlanCopyShards(batch, 4, 1024);
  CHECK_EQ(shards.size(), size_t{4});
  size_t total = 0;
  for (const CopyShard& s : shards) {
    CHECK_EQ(s.bytes, size_t{1 << 18});
    total += s.bytes;
  }
  CHECK_EQ(total, size_t{1 << 20});
  for (const CopyShard& s : shards) RunCopyShard(s);
  CHECK(dst == src);
}

MNEMO_TEST(copy_engine, small_batches_are_not_split_below_the_minimum) {
  std::vector<uint8_t> src(4096), dst(4096);
  CopyBatch batch{{View(src), View(dst)}, {{0, 0, 1, 0, 4096}}};
  CHECK_EQ(PlanCopyShards(batch, 8, 256 * 1024).size(), size_t{1});
  CHECK_EQ(PlanCopyShards(batch, 8, 1024).size(), size_t{4});
  // Shard byte counts always add up to the batch, whatever the rounding.
  CopyBatch odd{{View(src), View(dst)}, {{0, 0, 1, 0, 1000}, {0, 1000, 1, 1000, 3001}}};
  size_t total = 0;
  for (const CopyShard& s : PlanCopyShards(odd, 3, 1)) total += s.bytes;
  CHECK_EQ(total, size_t{4001});
}

MNEMO_TEST(copy_engine, detects_conflicts) {
  std::vector<uint8_t> a(1024), b(1024);
  struct Case {
    const char* name;
    std::vector<CopyRange> ranges;
    StatusCode want;
  };
  const Case cases[] = {
      {"disjoint destinations", {{0, 0, 1, 0, 100}, {0, 0, 1, 100, 100}}, StatusCode::kOk},
      {"touching destinations", {{0, 0, 1, 0, 100}, {0, 100, 1, 100, 1}}, StatusCode::kOk},
      {"overlapping reads are fine", {{0, 0, 1, 0, 100}, {0, 50, 1, 500, 100}}, StatusCode::kOk},
      {"same destination twice", {{0, 0, 1, 0, 100}, {0, 200, 1, 0, 100}}, StatusCode::kRangeConflict},
      {"destinations overlap by one byte", {{0, 0, 1, 0, 100}, {0, 0, 1, 99, 10}}, StatusCode::kRangeConflict},
      {"destination inside another", {{0, 0, 1, 0, 500}, {0, 0, 1, 100, 10}}, StatusCode::kRangeConflict},
      {"far earlier destination still covers", {{0, 0, 1, 0, 900}, {0, 0, 1, 100, 5}, {0, 0, 1, 800, 5}}, StatusCode::kRangeConflict},
      {"write over another range's source", {{0, 0, 1, 0, 100}, {1, 500, 0, 50, 10}}, StatusCode::kRangeConflict},
      {"source and destination of one range overlap", {{0, 0, 0, 10, 100}}, StatusCode::kRangeConflict},
      {"copy onto itself", {{0, 0, 0, 0, 100}}, StatusCode::kRangeConflict},
      {"same buffer, disjoint halves", {{0, 0, 0, 512, 512}}, StatusCode::kOk},
      {"zero-length ranges never conflict", {{0, 0, 1, 0, 100}, {0, 0, 1, 50, 0}}, StatusCode::kOk},
  };
  for (const Case& c : cases) {
    CopyBatch batch{{View(a), View(b)}, c.ranges};
    const Status s = ValidateCopyBatch(batch);
    if (s.code() != c.want) {
      ::mnemo::test::Fail(__FILE__, __LINE__, std::string(c.name) + ": got " + s.ToString());
    }
  }
}

MNEMO_TEST(copy_engine, detects_conflicts_between_aliasing_buffers) {
  // The same memory passed as two buffers (or as overlapping views) is still one memory.
  std::vector<uint8_t> mem(1024);
  CopyBuffer whole{mem.data(), mem.size()};
  CopyBuffer tail{mem.data() + 512, 512};
  std::vector<uint8_t> src(1024);
  CopyBatch batch{{whole, tail, View(src)}, {{2, 0, 0, 600, 10}, {2, 0, 1, 90, 10}}};
  CHECK_EQ(ValidateCopyBatch(batch).code(), StatusCode::kRangeConflict);
}

MNEMO_TEST(copy_engine, rejects_out_of_bounds_ranges) {
  std::vector<uint8_t> a(100), b(100);
  struct Case {
    const char* name;
    CopyRange range;
    StatusCode want;
  };
  const Case cases[] = {
      {"exactly to the end", {0, 50, 1, 50, 50}, StatusCode::kOk},
      {"source past the end", {0, 51, 1, 0, 50}, StatusCode::kOutOfRange},
      {"destination past the end", {0, 0, 1, 51, 50}, StatusCode::kOutOfRange},
      {"offset beyond size, zero length", {0, 101, 1, 0, 0}, StatusCode::kOutOfRange},
      {"length overflows offset", {0, 10, 1, 0, UINT64_MAX - 5}, StatusCode::kOutOfRange},
      {"bad source index", {2, 0, 1, 0, 1}, StatusCode::kOutOfRange},
      {"bad destination index", {0, 0, 7, 0, 1}, StatusCode::kOutOfRange},
  };
  for (const Case& c : cases) {
    CopyBatch batch{{View(a), View(b)}, {c.range}};
    const Status s = ValidateCopyBatch(batch);
    if (s.code() != c.want) {
      ::mnemo::test::Fail(__FILE__, __LINE__, std::string(c.name) + ": got " + s.ToString());
    }
  }
}

MNEMO_TEST(copy_engine, invalid_batch_is_refused_without_calling_done) {
  TaskQueue pool(2);
  CopyEngine sut(pool);
  std::vector<uint8_t> a(100), b(100);
  bool called = false;
  const Status s = sut.Submit(CopyBatch{{View(a), View(b)}, {{0, 0, 1, 0, 101}}},
                              [&](Status) { called = true; });
  CHECK_EQ(s.code(), StatusCode::kOutOfRange);
  pool.Shutdown();
  CHECK(!called);
}

MNEMO_TEST(copy_engine, submit_after_pool_shutdown_is_closed) {
  TaskQueue pool(2);
  CopyEngine sut(pool);
  pool.Shutdown();
  std::vector<uint8_t> a(10), b(10);
  bool called = false;
  const Status s = sut.Submit(CopyBatch{{View(a), View(b)}, {{0, 0, 1, 0, 10}}},
                              [&](Status) { called = true; });
  CHECK_EQ(s.code(), StatusCode::kClosed);
  CHECK(!called);
}

MNEMO_TEST(copy_engine, shutdown_finishes_in_flight_batches) {
  auto pool = std::make_unique<TaskQueue>(2);
  CopyEngine sut(*pool, 1024);
  std::vector<uint8_t> src = RandomBytes(1 << 22, 9), dst(1 << 22, 0);
  Latch latch;
  CHECK(sut.Submit(CopyBatch{{View(src), View(dst)}, {{0, 0, 1, 0, 1 << 22}}}, latch.Callback()).ok());
  pool->Shutdown();  // drains: the batch must be complete when this returns
  CHECK(latch.done);
  CHECK(latch.status.ok());
  CHECK(dst == src);
}

}  // namespace
}  // namespace mnemo
