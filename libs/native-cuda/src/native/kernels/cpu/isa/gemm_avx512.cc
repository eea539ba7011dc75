// AVX-512F micro-kernel: a 12 x 32 tile in 24 zmm accumulators; per k, two 16-wide loads of
// B, twelve broadcasts of A, twenty-four FMAs. Compiled with -mavx512f -mfma when the
// compiler accepts them (CMake); otherwise this path is absent.
#include "kernels/cpu/gemm_kernels.h"

#if defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>

namespace mnemo::kernels::cpu {
namespace {

constexpr std::size_t kMr = 12;
constexpr std::size_t kNr = 32;
// k steps ahead (8 KiB of the panel): a decode-sized product streams its panels from memory,
// and a shorter distance left each lane at about half the machine's read rate (measured:
// 25 -> 45 GB/s of weights at m = 8); prefill shapes, whose panels sit in L2, do not notice.
constexpr std::size_t kPrefetch = 64;

template <std::size_t R>
void Kernel(std::size_t kc, const float* a, const float* b, float* c, std::size_t ldc, std::size_t cols,
            bool accumulate) {
  __m512 c0[R], c1[R];
  // Masks select the valid columns of an edge tile: loads/stores never touch the rest.
  const __mmask16 m0 = cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << cols) - 1);
  const __mmask16 m1 = cols >= 32 ? __mmask16(0xFFFF) : cols <= 16 ? __mmask16(0) : __mmask16((1u << (cols - 16)) - 1);
#pragma GCC unroll 16
  for (std::size_t i = 0; i < R; ++i) {
    if (accumulate) {
      c0[i] = _mm512_maskz_loadu_ps(m0, c + i * ldc);
      c1[i] = _mm512_maskz_loadu_ps(m1, c + i * ldc + 16);
    } else {
      c0[i] = _mm512_setzero_ps();
      c1[i] = _mm512_setzero_ps();
    }
  }
  for (std::size_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    // The first strip of a row block meets each B row cold (L2 or beyond): ask for it ahead
    // (a hint only; addresses past the panel's end are never dereferenced).
    _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetch * kNr), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetch * kNr + 16), _MM_HINT_T0);
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 16
    for (std::size_t i = 0; i < R; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      c0[i] = _mm512_fmadd_ps(ai, b0, c0[i]);
      c1[i] = _mm512_fmadd_ps(ai, b1, c1[i]);
    }
  }
#pragma GCC unroll 16
  for (std::size_t i = 0; i < R; ++i) {
    _mm512_mask_storeu_ps(c + i * ldc, m0, c0[i]);
    _mm512_mask_storeu_ps(c + i * ldc + 16, m1, c1[i]);
  }
}

double FmaBurst(std::size_t iters, float* sink) {
  constexpr std::size_t kChains = 16;
  __m512 acc[kChains];
  for (std::size_t i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
  for (std::size_t it = 0; it < iters; ++it)
#pragma GCC unroll 16
    for (std::size_t i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (std::size_t i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  *sink += _mm512_reduce_add_ps(s);
  return 2.0 * 16 * kChains * static_cast<double>(iters);
}

const GemmKernels kKernels = {CpuIsa::kAvx512, kMr, kNr, true, FmaBurst, nullptr,
                              {nullptr, Kernel<1>, Kernel<2>, Kernel<3>, Kernel<4>, Kernel<5>, Kernel<6>, Kernel<7>,
                               Kernel<8>, Kernel<9>, Kernel<10>, Kernel<11>, Kernel<12>}};

}  // namespace

const GemmKernels* Avx512GemmKernels() { return &kKernels; }

}  // namespace mnemo::kernels::cpu
#else
namespace mnemo::kernels::cpu {
const GemmKernels* Avx512GemmKernels() { return nullptr; }
}  // namespace mnemo::kernels::cpu
#endif
