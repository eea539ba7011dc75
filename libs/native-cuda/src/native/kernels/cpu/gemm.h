// Packed, register-blocked GEMM (BLIS-style) for out[m, n] = x[m, k] · w[n, k]ᵀ.
//
// Weights are packed once into panels of nr columns, `[ceil(n / nr)][k][nr]` (zero-padded),
// so a micro-kernel streams one contiguous panel; activations are packed per call into strips
// of mr rows `[kc][mr]` sized for L2. The reduction order of every element is fixed by the
// micro-kernel contract (gemm_kernels.h): one accumulator, k ascending, one path per machine.
// Hence out[i, j] is bit-identical for every m, tile position, K block, thread count and for
// packed vs unpacked weights.
//
// Decode (small m): every panel of w is read from memory once per call for all m rows.
#pragma once

#include <cstddef>

#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/parallel_for.h"

namespace mnemo::kernels::cpu {

// Elements of w[n, k] packed for `ks` (the active path when omitted).
std::size_t PackedWeightElems(const GemmKernels& ks, std::size_t n, std::size_t k);
std::size_t PackedWeightElems(std::size_t n, std::size_t k);

// packed [PackedWeightElems] = w [n, k] in ks's panel layout.
void PackWeight(const GemmKernels& ks, float* packed, const float* w, std::size_t n, std::size_t k);
void PackWeight(float* packed, const float* w, std::size_t n, std::size_t k);

// out[m, n] = x[m, k] · wᵀ, w packed for `ks`, split over `pool`'s lanes.
// out must not alias x or packed.
void GemmPacked(const GemmKernels& ks, ParallelForPool& pool, float* out, const float* x, const float* packed,
                std::size_t m, std::size_t n, std::size_t k);

// Several products of the same x in one call: outs[o].out[m, n_o] = x · outs[o].packedᵀ (q, k
// and v of a layer; gate and up). x is packed once and the lanes split the panels of all
// outputs together; every element is bit-identical to its own GemmPacked call. Outputs must
// not alias x, a weight or each other.
struct GemmOut {
  float* out;
  const float* packed;  // packed for this n, k by PackWeight
  std::size_t n;
};
constexpr std::size_t kMaxGemmOuts = 4;
void GemmPackedMulti(const GemmKernels& ks, ParallelForPool& pool, const GemmOut* outs, std::size_t count,
                     const float* x, std::size_t m, std::size_t k);

// The active path on the kernel pool.
void MatmulPackedMulti(const GemmOut* outs, std::size_t count, const float* x, std::size_t m, std::size_t k);
void MatmulPacked(float* out, const float* x, const float* packed, std::size_t m, std::size_t n, std::size_t k);

// The active path's kernels (never null: the portable path always exists).
const GemmKernels& ActiveGemmKernels();

}  // namespace mnemo::kernels::cpu
