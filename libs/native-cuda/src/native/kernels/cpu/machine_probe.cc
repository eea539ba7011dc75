#include "kernels/cpu/machine_probe.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

namespace mnemo::kernels::cpu {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

double MeasurePeakGflops(ParallelForPool& pool, const GemmKernels& ks, double seconds) {
  float sink = 0;
  // Calibrate one burst to ~1 ms on the calling thread.
  std::size_t iters = 1 << 12;
  for (;;) {
    const double t0 = Now();
    ks.fma_burst(iters, &sink);
    if (Now() - t0 > 1e-3 || iters > (std::size_t{1} << 30)) break;
    iters *= 2;
  }
  const std::size_t lanes = pool.lanes();
  const std::size_t bursts = std::max<std::size_t>(lanes, static_cast<std::size_t>(seconds / 1e-3) * lanes);
  std::atomic<double> flops{0};
  const double t0 = Now();
  pool.Run(bursts, 1, [&](std::size_t b, std::size_t e) {
    float local = 0;
    double done = 0;
    for (std::size_t i = b; i < e; ++i) done += ks.fma_burst(iters, &local);
    double cur = flops.load();
    while (!flops.compare_exchange_weak(cur, cur + done)) {
    }
    if (local == 12345.0f) sink += local;  // keeps the loop observable
  });
  const double wall = Now() - t0;
  return flops.load() / wall / 1e9 + 0.0f * sink;
}

double MeasureReadGbs(ParallelForPool& pool, std::size_t bytes, int reps) {
  const std::size_t words = std::max<std::size_t>(bytes / sizeof(uint64_t), 1 << 16);
  std::unique_ptr<uint64_t[]> buf(new uint64_t[words]);
  constexpr std::size_t kChunk = 1 << 16;  // words per work item (512 KiB)
  const std::size_t items = (words + kChunk - 1) / kChunk;
  // First touch on the lanes that will read (NUMA placement), with non-zero data.
  pool.Run(items, 1, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b * kChunk; i < std::min(words, e * kChunk); ++i) buf[i] = i * 0x9E3779B97F4A7C15ull;
  });
  std::atomic<uint64_t> sink{0};
  double best = 0;
  for (int r = 0; r <= reps; ++r) {
    const double t0 = Now();
    pool.Run(items, 1, [&](std::size_t b, std::size_t e) {
      uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      const std::size_t end = std::min(words, e * kChunk);
      std::size_t i = b * kChunk;
      for (; i + 4 <= end; i += 4) {
        a0 ^= buf[i];
        a1 ^= buf[i + 1];
        a2 ^= buf[i + 2];
        a3 ^= buf[i + 3];
      }
      for (; i < end; ++i) a0 ^= buf[i];
      sink.fetch_xor(a0 ^ a1 ^ a2 ^ a3, std::memory_order_relaxed);
    });
    const double gbs = static_cast<double>(words * sizeof(uint64_t)) / (Now() - t0) / 1e9;
    if (r > 0) best = std::max(best, gbs);  // r = 0 warms the TLB and caches
  }
  return best + 0.0 * static_cast<double>(sink.load() & 1);
}

}  // namespace mnemo::kernels::cpu
