// arm64 Advanced SIMD micro-kernel: an 8 x 8 tile in 16 q-register accumulators, vfmaq_f32.
// Only compiled into the path table on arm64.
#include "kernels/cpu/gemm_kernels.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>

namespace mnemo::kernels::cpu {
namespace {

constexpr std::size_t kMr = 8;
constexpr std::size_t kNr = 8;

template <std::size_t R>
void Kernel(std::size_t kc, const float* a, const float* b, float* c, std::size_t ldc, std::size_t cols,
            bool accumulate) {
  float32x4_t c0[R], c1[R];
  float edge[R][kNr];
  const bool full = cols == kNr;
  for (std::size_t i = 0; i < R; ++i) {
    if (!accumulate) {
      c0[i] = vdupq_n_f32(0.0f);
      c1[i] = vdupq_n_f32(0.0f);
    } else if (full) {
      c0[i] = vld1q_f32(c + i * ldc);
      c1[i] = vld1q_f32(c + i * ldc + 4);
    } else {
      for (std::size_t j = 0; j < kNr; ++j) edge[i][j] = j < cols ? c[i * ldc + j] : 0.0f;
      c0[i] = vld1q_f32(edge[i]);
      c1[i] = vld1q_f32(edge[i] + 4);
    }
  }
  for (std::size_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    const float32x4_t b0 = vld1q_f32(b);
    const float32x4_t b1 = vld1q_f32(b + 4);
    for (std::size_t i = 0; i < R; ++i) {
      c0[i] = vfmaq_n_f32(c0[i], b0, a[i]);
      c1[i] = vfmaq_n_f32(c1[i], b1, a[i]);
    }
  }
  for (std::size_t i = 0; i < R; ++i) {
    if (full) {
      vst1q_f32(c + i * ldc, c0[i]);
      vst1q_f32(c + i * ldc + 4, c1[i]);
    } else {
      vst1q_f32(edge[i], c0[i]);
      vst1q_f32(edge[i] + 4, c1[i]);
      for (std::size_t j = 0; j < cols; ++j) c[i * ldc + j] = edge[i][j];
    }
  }
}

double FmaBurst(std::size_t iters, float* sink) {
  constexpr std::size_t kChains = 16;
  float32x4_t acc[kChains];
  for (std::size_t i = 0; i < kChains; ++i) acc[i] = vdupq_n_f32(0.001f * static_cast<float>(i));
  const float32x4_t b = vdupq_n_f32(0.001f);
  for (std::size_t it = 0; it < iters; ++it)
    for (std::size_t i = 0; i < kChains; ++i) acc[i] = vfmaq_n_f32(b, acc[i], 0.999f);
  float32x4_t s = acc[0];
  for (std::size_t i = 1; i < kChains; ++i) s = vaddq_f32(s, acc[i]);
  *sink += vaddvq_f32(s);
  return 2.0 * 4 * kChains * static_cast<double>(iters);
}

const GemmKernels kKernels = {CpuIsa::kNeon, kMr, kNr, true, FmaBurst, nullptr,
                              {nullptr, Kernel<1>, Kernel<2>, Kernel<3>, Kernel<4>, Kernel<5>, Kernel<6>, Kernel<7>,
                               Kernel<8>}};

}  // namespace

const GemmKernels* NeonGemmKernels() { return &kKernels; }

}  // namespace mnemo::kernels::cpu
#else
namespace mnemo::kernels::cpu {
const GemmKernels* NeonGemmKernels() { return nullptr; }
}  // namespace mnemo::kernels::cpu
#endif
