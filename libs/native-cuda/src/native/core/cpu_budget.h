// How many cores this process may use, and how the addon's two thread pools share them.
//
// Usable cores = CPUs in the affinity mask (taskset, cpuset), capped by the cgroup CPU quota
// (v2 `cpu.max`, v1 `cpu.cfs_quota_us / cpu.cfs_period_us`, the tightest on the way up the
// hierarchy), rounded up, at least 1. std::thread::hardware_concurrency() sees neither.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace mnemo {

// Computed once per process (the limits are read at first use).
std::size_t UsableCores();

struct ThreadBudget {
  std::size_t kernel_lanes;  // parallel-for lanes of the compute kernels, the caller included
  std::size_t task_threads;  // task-queue threads for copies and I/O (mostly waiting on memory or disk)
};

// Compute takes every core while it runs; copies and I/O get half as many threads (at least
// one, at most 16), enough to overlap transfers with compute without doubling the runnable
// threads when both are busy.
ThreadBudget ThreadBudgetFor(std::size_t cores);

// --- pure parts, exposed for tests ---

// CPUs granted by a cgroup v2 `cpu.max` line ("max 100000" → none; "150000 100000" → 1.5).
// nullopt for no limit or text that is not a quota.
std::optional<double> ParseCpuMax(const std::string& text);

// ceil(quota) capped by the affinity count, at least 1.
std::size_t CoresWithin(std::size_t affinity_cpus, std::optional<double> quota_cpus);

}  // namespace mnemo
