// Device timings of the kernel check (--perf): GEMM paths, paged attention, host <-> device
// copies, the dispatch cost per copy call, swaps at Llama-3.1-8B's KV block size, and how
// much the copy lane overlaps compute. One JSON line per measurement (json_line.h).
#pragma once

#include <string>

namespace mnemo::check {

struct PerfOptions {
  int reps = 10;        // timed repetitions of a short measurement (after warm-up)
  bool quick = false;   // fewer sizes and reps: a smoke run
};

// Prints the measurements; returns false (after printing why) when no device is usable or the
// harness was built without CUDA.
bool RunDevicePerf(const PerfOptions& opts);

}  // namespace mnemo::check
