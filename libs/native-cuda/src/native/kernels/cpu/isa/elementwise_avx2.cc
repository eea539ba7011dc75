// AVX2 + FMA SwiGLU: out = silu(gate) * up with the vector exp, 8 elements at a time. Every
// element goes through the same vector arithmetic (a tail is padded into a full vector), so
// its bits never depend on where a range starts or ends. Compiled with -mavx2 -mfma (CMake).
#include "kernels/cpu/gemm_kernels.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "kernels/cpu/isa/exp_avx2.h"

namespace mnemo::kernels::cpu {
namespace {

// silu(g) * u = g * sigmoid(g) * u, with sigmoid from e = exp(-|g|) (never overflows):
// 1 / (1 + e) for g >= 0, e / (1 + e) for g < 0.
inline __m256 SiluMul8(__m256 g, __m256 u) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = Exp(_mm256_or_ps(g, _mm256_set1_ps(-0.0f)));
  const __m256 sigmoid = _mm256_div_ps(_mm256_blendv_ps(one, e, g), _mm256_add_ps(one, e));
  return _mm256_mul_ps(_mm256_mul_ps(g, sigmoid), u);
}

void SiluMulRange(float* out, const float* gate, const float* up, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, SiluMul8(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  if (i == n) return;
  alignas(32) float g[8] = {}, u[8] = {}, o[8];
  for (std::size_t t = 0; i + t < n; ++t) g[t] = gate[i + t], u[t] = up[i + t];
  _mm256_store_ps(o, SiluMul8(_mm256_load_ps(g), _mm256_load_ps(u)));
  for (std::size_t t = 0; i + t < n; ++t) out[i + t] = o[t];
}

}  // namespace

SiluMulFn Avx2SiluMul() { return SiluMulRange; }

}  // namespace mnemo::kernels::cpu
#else
namespace mnemo::kernels::cpu {
SiluMulFn Avx2SiluMul() { return nullptr; }
}  // namespace mnemo::kernels::cpu
#endif
