// A deterministic parallel-for for the CPU kernels (not a task queue: see core/task_queue.h).
//
// Why not OpenMP or std::async: the pool is created once per process (kernels run many
// thousands of times per second during decode), sized from the usable cores, and must never
// influence results. Callers only ever hand it *independent* outputs (rows, columns, heads,
// GEMM tiles); a reduction is never split across lanes, so the lane count cannot change a bit.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace mnemo::kernels::cpu {

// Body of a parallel loop: processes items [begin, end). Must not throw.
using RangeFn = std::function<void(std::size_t begin, std::size_t end)>;

class ParallelForPool {
 public:
  // `lanes` - 1 worker threads; the calling thread is the last lane.
  explicit ParallelForPool(std::size_t lanes);
  ~ParallelForPool();
  ParallelForPool(const ParallelForPool&) = delete;
  ParallelForPool& operator=(const ParallelForPool&) = delete;

  std::size_t lanes() const;

  // Runs fn over [0, n) in chunks of at least `grain` items; returns when all are done.
  // Concurrent callers are serialised (one job slot); a call from inside any pool's worker
  // runs inline instead of deadlocking.
  void Run(std::size_t n, std::size_t grain, const RangeFn& fn);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The process-wide kernel pool: MNEMO_CPU_THREADS lanes if set to a positive integer, else
// ThreadBudgetFor(UsableCores()).kernel_lanes. Fixed at first use.
ParallelForPool& KernelPool();

std::size_t CpuThreadCount();

inline void ParallelFor(std::size_t n, std::size_t grain, const RangeFn& fn) { KernelPool().Run(n, grain, fn); }

}  // namespace mnemo::kernels::cpu
