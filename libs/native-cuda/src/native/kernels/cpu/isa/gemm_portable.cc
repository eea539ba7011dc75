// Portable micro-kernel: plain C++, a multiply then an add (never contracted: this file is
// compiled with -ffp-contract=off, and ISO C++ mode does not contract either).
#include "kernels/cpu/gemm_kernels.h"

namespace mnemo::kernels::cpu {
namespace {

constexpr std::size_t kMr = 4;
constexpr std::size_t kNr = 16;

template <std::size_t R>
void Kernel(std::size_t kc, const float* a, const float* b, float* c, std::size_t ldc, std::size_t cols,
            bool accumulate) {
  float acc[R][kNr];
  for (std::size_t i = 0; i < R; ++i)
    for (std::size_t j = 0; j < kNr; ++j) acc[i][j] = accumulate && j < cols ? c[i * ldc + j] : 0.0f;
  for (std::size_t p = 0; p < kc; ++p, a += kMr, b += kNr)
    for (std::size_t i = 0; i < R; ++i) {
      const float ai = a[i];
      for (std::size_t j = 0; j < kNr; ++j) {
        const float prod = ai * b[j];
        acc[i][j] = acc[i][j] + prod;
      }
    }
  for (std::size_t i = 0; i < R; ++i)
    for (std::size_t j = 0; j < cols; ++j) c[i * ldc + j] = acc[i][j];
}

double FmaBurst(std::size_t iters, float* sink) {
  constexpr std::size_t kChains = 16;
  float acc[kChains];
  for (std::size_t i = 0; i < kChains; ++i) acc[i] = 0.001f * static_cast<float>(i);
  const float a = 0.999f, b = 0.001f;
  for (std::size_t it = 0; it < iters; ++it)
    for (std::size_t i = 0; i < kChains; ++i) acc[i] = acc[i] * a + b;
  float s = 0;
  for (float v : acc) s += v;
  *sink += s;
  return 2.0 * kChains * static_cast<double>(iters);
}

const GemmKernels kKernels = {CpuIsa::kPortable, kMr, kNr, false, FmaBurst, nullptr,
                              {nullptr, Kernel<1>, Kernel<2>, Kernel<3>, Kernel<4>}};

}  // namespace

const GemmKernels* PortableGemmKernels() { return &kKernels; }

}  // namespace mnemo::kernels::cpu
