// The CPU kernels' parallel-for pool: coverage of every index, concurrent callers, nesting,
// and matmul results that do not depend on which thread computed what.
#include <atomic>
#include <thread>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/parallel_for.h"
#include "tests/kernels_cpu_test.h"

MNEMO_TEST(kernels_cpu_parallel_for, visits_every_index_exactly_once) {
  for (std::size_t n : {0, 1, 7, 64, 1000, 100003})
    for (std::size_t grain : {1, 3, 4096}) {
      std::vector<std::atomic<int>> hits(n);
      kc::ParallelFor(n, grain, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) hits[i].fetch_add(1, std::memory_order_relaxed);
      });
      for (std::size_t i = 0; i < n; ++i) CHECK_CASE(hits[i].load() == 1, mnemo::test::Label("n grain i", {(long long)n, (long long)grain, (long long)i}));
    }
}

MNEMO_TEST(kernels_cpu_parallel_for, concurrent_callers_and_nested_calls_complete) {
  std::atomic<long long> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int round = 0; round < 200; ++round)
        kc::ParallelFor(64, 1, [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i)
            // A nested loop runs inline on the worker instead of waiting for the busy pool.
            kc::ParallelFor(4, 1, [&](std::size_t nb, std::size_t ne) { total.fetch_add((long long)(ne - nb)); });
        });
    });
  for (auto& c : callers) c.join();
  CHECK_EQ(total.load(), 4LL * 200 * 64 * 4);
}

MNEMO_TEST(kernels_cpu_parallel_for, matmul_is_identical_across_concurrent_callers) {
  mnemo::test::Rng rng(21);
  const std::size_t m = 9, n = 130, k = 333;
  auto x = rng.Floats(m * k), w = rng.Floats(n * k);
  std::vector<float> ref(m * n);
  kc::Matmul(ref.data(), x.data(), w.data(), m, n, k);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&] {
      std::vector<float> out(m * n);
      for (int round = 0; round < 20; ++round) {
        kc::Matmul(out.data(), x.data(), w.data(), m, n, k);
        if (!mnemo::test::BitEqual(out.data(), ref.data(), out.size())) mismatches.fetch_add(1);
      }
    });
  for (auto& c : callers) c.join();
  CHECK_EQ(mismatches.load(), 0);
  CHECK(kc::CpuThreadCount() >= 1);
}
