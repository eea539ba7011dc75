// Row-wise and element-wise CPU kernels: embedding, RMSNorm, RoPE, SwiGLU, add, bias.
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/kernel_assert.h"

namespace mnemo::kernels::cpu {
namespace {

// Element-wise loops are memory bound: only split when each worker gets a sizeable slice.
constexpr std::size_t kElementGrain = 1 << 14;

// Rows per parallel chunk so a chunk holds at least ~kElementGrain elements.
std::size_t RowGrain(std::size_t row_elems) { return row_elems >= kElementGrain ? 1 : kElementGrain / row_elems; }

}  // namespace

void Embedding(float* out, const float* table, const int32_t* ids, std::size_t rows, std::size_t dim,
               std::size_t vocab) {
  for (std::size_t r = 0; r < rows; ++r)
    MNEMO_KERNEL_CHECK(ids[r] >= 0 && static_cast<std::size_t>(ids[r]) < vocab);
  ParallelFor(rows, RowGrain(dim), [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r)
      std::memcpy(out + r * dim, table + static_cast<std::size_t>(ids[r]) * dim, dim * sizeof(float));
  });
}

void RmsNorm(float* out, const float* x, const float* weight, std::size_t rows, std::size_t dim, float eps) {
  MNEMO_KERNEL_CHECK(dim > 0);
  ParallelFor(rows, RowGrain(dim), [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      const float* xr = x + r * dim;
      float* o = out + r * dim;
      const float mean_sq = SumSquares(xr, dim) / static_cast<float>(dim);
      const float inv = 1.0f / std::sqrt(mean_sq + eps);
      // Same rounding order as Hugging Face LlamaRMSNorm: weight * (x * rsqrt(...)).
      for (std::size_t i = 0; i < dim; ++i) o[i] = weight[i] * (xr[i] * inv);
    }
  });
}

void Rope(float* x, const int32_t* positions, std::size_t rows, std::size_t num_heads, std::size_t head_dim,
          float theta) {
  MNEMO_KERNEL_CHECK(head_dim % 2 == 0 && head_dim > 0);
  const std::size_t half = head_dim / 2;
  // fp32 like transformers' rotary embedding: inv_freq = 1 / theta^(2i/d), angle = pos * inv_freq.
  std::vector<float> inv_freq(half);
  for (std::size_t i = 0; i < half; ++i)
    inv_freq[i] = 1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(head_dim));
  const std::size_t row_elems = num_heads * head_dim;
  ParallelFor(rows, RowGrain(row_elems), [&](std::size_t begin, std::size_t end) {
    std::vector<float> cos_v(half), sin_v(half);
    for (std::size_t r = begin; r < end; ++r) {
      const float pos = static_cast<float>(positions[r]);
      for (std::size_t i = 0; i < half; ++i) {
        const float angle = pos * inv_freq[i];
        cos_v[i] = std::cos(angle);
        sin_v[i] = std::sin(angle);
      }
      for (std::size_t h = 0; h < num_heads; ++h) {
        float* v = x + r * row_elems + h * head_dim;
        for (std::size_t i = 0; i < half; ++i) {
          const float a = v[i], b = v[i + half];
          v[i] = a * cos_v[i] - b * sin_v[i];
          v[i + half] = b * cos_v[i] + a * sin_v[i];
        }
      }
    }
  });
}

void PortableSiluMul(float* out, const float* gate, const float* up, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void SiluMul(float* out, const float* gate, const float* up, std::size_t n) {
  // One implementation per machine, as for attention: the vector one where the GEMM path has
  // AVX2 + FMA (a scalar exp per element cost ~6% of a prefill).
  static const SiluMulFn silu_mul = [] {
    const CpuIsa isa = ActiveCpuIsa();
    const SiluMulFn avx2 = Avx2SiluMul();
    return (isa == CpuIsa::kAvx2Fma || isa == CpuIsa::kAvx512) && avx2 != nullptr ? avx2 : PortableSiluMul;
  }();
  ParallelFor(n, kElementGrain, [&](std::size_t begin, std::size_t end) { silu_mul(out + begin, gate + begin, up + begin, end - begin); });
}

void Add(float* out, const float* a, const float* b, std::size_t n) {
  ParallelFor(n, kElementGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) out[i] = a[i] + b[i];
  });
}

void AddBias(float* out, const float* x, const float* bias, std::size_t rows, std::size_t n) {
  ParallelFor(rows, RowGrain(n), [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r)
      for (std::size_t i = 0; i < n; ++i) out[r * n + i] = x[r * n + i] + bias[i];
  });
}

}  // namespace mnemo::kernels::cpu
