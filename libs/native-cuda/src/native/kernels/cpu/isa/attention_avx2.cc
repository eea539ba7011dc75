// AVX2 + FMA attention (see AttendArgs in gemm_kernels.h for the fixed order): dot products
// in 8 lanes of head_dim, combined by a fixed tree (8 keys at a time by one transposing
// reduction where the loop allows); a vector exp; the value sum as FMAs in ascending key
// order, in registers over blocks of keys. Decode rows and prefill tiles share these loops.
// Compiled with -mavx2 -mfma (CMake).
#include "kernels/cpu/gemm_kernels.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <cmath>

#include "kernels/cpu/isa/attention_avx2_loops.h"

namespace mnemo::kernels::cpu {
namespace {

// Token rows ahead of the one being read that a decode row asks for: far enough to cover a
// memory access (cache blocks lie anywhere, so the hardware streamer cannot run ahead across
// them), near enough that they are still in cache when their turn comes.
constexpr std::size_t kPrefetchAhead = 16;

template <int Hint>
inline void PrefetchRow(const float* row, std::size_t bytes) {
  const char* p = reinterpret_cast<const char*>(row);
  for (std::size_t b = 0; b < bytes; b += 64) _mm_prefetch(p + b, static_cast<_mm_hint>(Hint));
}

// One row (decode) for `kv_heads` consecutive kv heads: the arithmetic of a tile row, arranged
// for a memory-bound step. Each token row of the cache (every kv head's slice, contiguous) is
// read once for all heads and all `group` query heads of each; scores go 8 keys at a time with
// one transposing reduction (Combine8); the value sum keeps two heads x 32 columns in registers
// over a block of keys held in L1. Per head, the operations and their order are those of a
// call for that head alone.
void AttendRow(const AttendArgs& a) {
  const std::size_t hd = a.head_dim, n = a.n_keys, g = a.group, nh = a.kv_heads;
  auto key = [&](std::size_t j) {
    return a.key0 + static_cast<std::size_t>(a.table[j / a.block_size]) * a.block_stride + (j % a.block_size) * a.token_stride;
  };
  auto scores = [&](std::size_t kh) { return a.scores + kh * g * n; };
  const __m256 scale = _mm256_set1_ps(a.scale);
  const std::size_t span = nh * hd * sizeof(float);  // bytes of a token row this call reads
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const float* k[8];
    for (std::size_t i = 0; i < 8; ++i) k[i] = key(j + i);
    for (std::size_t i = j + kPrefetchAhead; i < j + kPrefetchAhead + 8 && i < n; ++i) PrefetchRow<_MM_HINT_T0>(key(i), span);
    for (std::size_t kh = 0; kh < nh; ++kh) {
      const float* kk[8];
      for (std::size_t i = 0; i < 8; ++i) kk[i] = k[i] + kh * hd;
      Scores8(a.q + kh * g * hd, kk, g, hd, scale, scores(kh) + j, n);
    }
  }
  for (; j < n; ++j)
    for (std::size_t kh = 0; kh < nh; ++kh)
      for (std::size_t h = 0; h < g; ++h)
        scores(kh)[h * n + j] = Score1(a.q + (kh * g + h) * hd, key(j) + kh * hd, hd, a.scale);
  for (std::size_t r = 0; r < nh * g; ++r) Softmax(a.scores + r * n, n);
  for (std::size_t i = 0; i < nh * g * hd; i += 8) _mm256_storeu_ps(a.out + i, _mm256_setzero_ps());
  const float* v_rows[kValueBlock];
  const float* head_rows[kValueBlock];
  for (std::size_t j0 = 0; j0 < n; j0 += kValueBlock) {
    const std::size_t j1 = n - j0 < kValueBlock ? n : j0 + kValueBlock;
    for (std::size_t jj = j0; jj < j1; ++jj) v_rows[jj - j0] = key(jj) + a.value_offset;
    // The next block's value rows into L2 while this one is summed.
    for (std::size_t jj = j1; jj < j1 + kValueBlock && jj < n; ++jj) PrefetchRow<_MM_HINT_T1>(key(jj) + a.value_offset, span);
    for (std::size_t kh = 0; kh < nh; ++kh) {
      for (std::size_t jj = j0; jj < j1; ++jj) head_rows[jj - j0] = v_rows[jj - j0] + kh * hd;
      ValueAllHeads(ValueRow{scores(kh), n, a.out + kh * g * hd}, g, hd, head_rows, j0, j1);
    }
  }
}

void Attend(const AttendArgs& a) {
  if (a.head_dim % 8 != 0) return PortableAttend(a);  // one path per geometry: a model never mixes
  if (a.rows == 1) return AttendRow(a);
  ForEachKvHead(a, AttendTileWith<RowByRow>);
}

}  // namespace

AttendFn Avx2Attend() { return Attend; }

}  // namespace mnemo::kernels::cpu
#else
namespace mnemo::kernels::cpu {
AttendFn Avx2Attend() { return nullptr; }
}  // namespace mnemo::kernels::cpu
#endif
