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
  // Edge tiles go through a full-width scratch tile so the register code is the same for
  // every tile (NOTE: keep every loop over i compile-time bounded: GCC then keeps c0/c1 in
  // registers; a data-dependent loop inside would spill them to the stack every k).
  alignas(32) float edge[R * kNr];
  const bool full = cols == kNr;
  float* t = full ? c : edge;
  const std::size_t ldt = full ? ldc : kNr;
  if (!full)
    for (std::size_t i = 0; i < R; ++i)
      for (std::size_t j = 0; j < kNr; ++j) edge[i * kNr + j] = accumulate && j < cols ? c[i * ldc + j] : 0.0f;
  const bool load = accumulate || !full;
  __m256 c0[R], c1[R];
#pragma GCC unroll 16
  for (std::size_t i = 0; i < R; ++i) {
    c0[i] = load ? _mm256_loadu_ps(t + i * ldt) : _mm256_setzero_ps();
    c1[i] = load ? _mm256_loadu_ps(t + i * ldt + 8) : _mm256_setzero_ps();
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
#pragma GCC unroll 16
  for (std::size_t i = 0; i < R; ++i) {
    _mm256_storeu_ps(t + i * ldt, c0[i]);
    _mm256_storeu_ps(t + i * ldt + 8, c1[i]);
  }
  if (!full)
    for (std::size_t i = 0; i < R; ++i)
      for (std::size_t j = 0; j < cols; ++j) c[i * ldc + j] = edge[i * kNr + j];
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

const GemmKernels kKernels = {CpuIsa::kAvx2Fma, kMr, kNr, true, FmaBurst, nullptr,
                              {nullptr, Kernel<1>, Kernel<2>, Kernel<3>, Kernel<4>, Kernel<5>, Kernel<6>}};

}  // namespace

const GemmKernels* Avx2GemmKernels() { return &kKernels; }

}  // namespace mnemo::kernels::cpu
#else
namespace mnemo::kernels::cpu {
const GemmKernels* Avx2GemmKernels() { return nullptr; }
}  // namespace mnemo::kernels::cpu
#endif
