// What this machine can do, measured on the kernels' own lanes: the yardsticks the engine
// benchmark divides its figures by.
#pragma once

#include <cstddef>

#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/parallel_for.h"

namespace mnemo::kernels::cpu {

// GFLOP/s of the path's register-only multiply-add loop on every lane of `pool` at once,
// running for about `seconds`.
double MeasurePeakGflops(ParallelForPool& pool, const GemmKernels& ks, double seconds);

// GB/s of reading a `bytes` buffer (make it several times the last-level cache) on every
// lane; the best of `reps` passes after one warm pass.
double MeasureReadGbs(ParallelForPool& pool, std::size_t bytes, int reps);

}  // namespace mnemo::kernels::cpu
