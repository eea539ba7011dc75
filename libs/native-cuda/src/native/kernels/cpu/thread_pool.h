// A persistent parallel-for pool for the CPU kernels.
//
// Why not OpenMP or std::async: the pool must be created once per process (kernels run many
// thousands of times per second during decode), sized by MNEMO_CPU_THREADS, and must never
// influence results. Callers only ever hand it *independent* outputs (rows, columns, heads);
// a reduction is never split across workers, so the thread count cannot change a single bit.
#pragma once

#include <cstddef>
#include <functional>

namespace mnemo::kernels::cpu {

// Body of a parallel loop: processes items [begin, end). Must not throw.
using RangeFn = std::function<void(std::size_t begin, std::size_t end)>;

// Number of workers including the calling thread: MNEMO_CPU_THREADS if set to a positive
// integer, else std::thread::hardware_concurrency() (at least 1). Fixed at first use.
std::size_t CpuThreadCount();

// Runs fn over [0, n) split into chunks of at least `grain` items; returns when all are done.
// The calling thread participates. Concurrent callers are serialised (the pool has one job
// slot); a call made from inside a worker runs inline instead of deadlocking.
void ParallelFor(std::size_t n, std::size_t grain, const RangeFn& fn);

}  // namespace mnemo::kernels::cpu
