// AVX2 + FMA micro-kernel: a 6 x 16 tile in 12 ymm accumulators (BLIS's Haswell/Zen shape):
// per k, two 8-wide loads of B, six broadcasts of A, twelve FMAs.
// Compiled with -mavx2 -mfma (CMake); without them this path is absent.
#include "kernels/cpu/gemm_kernels.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace mnemo::kernels::cpu {
namespace {

constexpr std::size_t kMr = 6;
constexpr std::size_t kNr = 16;

template <std::size_t R>
void Kernel(std::size_t kc, const float* a, const float* b, float* c, std::size_t ldc, std::size_t cols,
            bool accumulate) {
  __m256 c0[R], c1[R];
  alignas(32) float edge[R][kNr] = {};
  const bool full = cols == kNr;
  if (!full)
    for (std::size_t i = 0; i < R; ++i)
      for (std::size_t j = 0; j < kNr; ++j) edge[i][j] = accumulate && j < cols ? c[i * ldc + j] : 0.0f;
#pragma GCC unroll 16
  for (std::size_t i = 0; i < R; ++i) {
    if (full && !accumulate) {
      c0[i] = _mm256_setzero_ps();
      c1[i] = _mm256_setzero_ps();
    } else if (full) {
      c0[i] = _mm256_loadu_ps(c + i * ldc);
      c1[i] = _mm256_loadu_ps(c + i * ldc + 8);
    } else {
      c0[i] = _mm256_load_ps(edge[i]);
      c1[i] = _mm256_load_ps(edge[i] + 8);
    }
  }
  for (std::size_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 16
    for (std::size_t i = 0; i < R; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      c0[i] = _mm256_fmadd_ps(ai, b0, c0[i]);
      c1[i] = _mm256_fmadd_ps(ai, b1, c1[i]);
    }
  }
  if (full) {
#pragma GCC unroll 16
    for (std::size_t i = 0; i < R; ++i) {
      _mm256_storeu_ps(c + i * ldc, c0[i]);
      _mm256_storeu_ps(c + i * ldc + 8, c1[i]);
    }
    return;
  }
  for (std::size_t i = 0; i < R; ++i) {
    _mm256_store_ps(edge[i], c0[i]);
    _mm256_store_ps(edge[i] + 8, c1[i]);
    for (std::size_t j = 0; j < cols; ++j) c[i * ldc + j] = edge[i][j];
  }
}

double FmaBurst(std::size_t iters, float* sink) {
  constexpr std::size_t kChains = 12;  // > FMA latency x issue width on Haswell..Zen 4
  __m256 acc[kChains];
  for (std::size_t i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(0.001f * static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
  for (std::size_t it = 0; it < iters; ++it)
#pragma GCC unroll 16
    for (std::size_t i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  alignas(32) float lanes[8];
  __m256 s = acc[0];
  for (std::size_t i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_store_ps(lanes, s);
  for (float v : lanes) *sink += v;
  return 2.0 * 8 * kChains * static_cast<double>(iters);
}

const GemmKernels kKernels = {CpuIsa::kAvx2Fma, kMr, kNr, true, FmaBurst,
                              {nullptr, Kernel<1>, Kernel<2>, Kernel<3>, Kernel<4>, Kernel<5>, Kernel<6>}};

}  // namespace

const GemmKernels* Avx2GemmKernels() { return &kKernels; }

}  // namespace mnemo::kernels::cpu
#else
namespace mnemo::kernels::cpu {
const GemmKernels* Avx2GemmKernels() { return nullptr; }
}  // namespace mnemo::kernels::cpu
#endif
