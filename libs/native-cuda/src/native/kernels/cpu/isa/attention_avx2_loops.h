// The loops of the AVX2 + FMA attention (see AttendArgs in gemm_kernels.h for the fixed
// order), shared by the files of the paths that run them: dot products in 8 lanes of
// head_dim combined by a fixed tree, a vector exp, value sums as FMA chains over ascending
// keys. Included only by files compiled with at least -mavx2 -mfma; everything here has
// internal linkage, so no baseline code can end up with a copy built for other flags.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstddef>

#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/isa/exp_avx2.h"

namespace mnemo::kernels::cpu {
namespace {

// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), the tree of reduce.h's CombineLanes.
inline float Combine(__m256 v) {
  const __m128 a = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));  // l0+l4 .. l3+l7
  const __m128 b = _mm_add_ps(a, _mm_movehl_ps(a, a));                                   // (l0+l4)+(l2+l6), (l1+l5)+(l3+l7)
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_shuffle_ps(b, b, 1)));
}

// Softmax of one row and head over its n scores, in place (the order of AttendArgs).
inline void Softmax(float* s, std::size_t n) {
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(s + j));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vmax);
  float m = lanes[0];
  for (int l = 1; l < 8; ++l) m = std::fmax(m, lanes[l]);
  for (; j < n; ++j) m = std::fmax(m, s[j]);
  const __m256 vm = _mm256_set1_ps(m);
  __m256 sum = _mm256_setzero_ps();
  for (j = 0; j + 8 <= n; j += 8) {
    const __m256 p = Exp(_mm256_sub_ps(_mm256_loadu_ps(s + j), vm));
    _mm256_storeu_ps(s + j, p);
    sum = _mm256_add_ps(sum, p);
  }
  if (j < n) {
    alignas(32) float tail[8] = {};
    for (std::size_t t = 0; j + t < n; ++t) tail[t] = s[j + t];
    __m256 p = Exp(_mm256_sub_ps(_mm256_load_ps(tail), vm));
    // Lanes past the end add exact zeros.
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - j)), idx));
    p = _mm256_and_ps(p, live);
    _mm256_store_ps(tail, p);
    for (std::size_t t = 0; j + t < n; ++t) s[j + t] = tail[t];
    sum = _mm256_add_ps(sum, p);
  }
  const __m256 z = _mm256_set1_ps(Combine(sum));
  for (j = 0; j + 8 <= n; j += 8) _mm256_storeu_ps(s + j, _mm256_div_ps(_mm256_loadu_ps(s + j), z));
  const float zs = _mm256_cvtss_f32(z);
  for (; j < n; ++j) s[j] /= zs;
}

// Eight dot-product accumulators (one per key) reduced at once: lane l of the result is
// Combine(acc[l]), bit for bit (the same pairs added in the same tree; only which register
// holds them differs), so a row's scores do not depend on whether keys went 8 at a time.
inline __m256 Combine8(const __m256* acc) {
  auto halves = [](__m256 x, __m256 y) {  // [x0+x4, x1+x5, x2+x6, x3+x7 | y0+y4, ..]
    return _mm256_add_ps(_mm256_permute2f128_ps(x, y, 0x20), _mm256_permute2f128_ps(x, y, 0x31));
  };
  auto quarters = [](__m256 xy, __m256 zw) {  // [x04+x26, x15+x37, z.., z.. | y.., y.., w.., w..]
    return _mm256_add_ps(_mm256_shuffle_ps(xy, zw, _MM_SHUFFLE(1, 0, 1, 0)), _mm256_shuffle_ps(xy, zw, _MM_SHUFFLE(3, 2, 3, 2)));
  };
  const __m256 u0 = quarters(halves(acc[0], acc[1]), halves(acc[2], acc[3]));  // keys 0 2 | 1 3
  const __m256 u1 = quarters(halves(acc[4], acc[5]), halves(acc[6], acc[7]));  // keys 4 6 | 5 7
  const __m256 s = _mm256_add_ps(_mm256_shuffle_ps(u0, u1, _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm256_shuffle_ps(u0, u1, _MM_SHUFFLE(3, 1, 3, 1)));  // keys 0 2 4 6 | 1 3 5 7
  return _mm256_permutevar8x32_ps(s, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// Keys per block of the value sum: their value rows (up to 64 x 128 floats) stay in L1 while
// every head and column chunk of the kv head passes over them.
constexpr std::size_t kValueBlock = 64;

// Where one query row's value sum reads and writes: head h's scores at
// scores + h * score_stride, its output at out + h * head_dim.
struct ValueRow {
  const float* scores;
  std::size_t score_stride;
  float* out;
};

// out[h][d0 .. d0 + 8 * NV) += Σ_{j in [j0, j1)} p[h][j] v_j, for NH heads at once, in
// registers: each value row is loaded once for all heads of the group. The running sums go
// through memory only as exact fp32 stores, so every element is still one FMA chain over j
// ascending (the order of AttendArgs).
template <std::size_t NH, std::size_t NV>
inline void ValueChunk(const ValueRow& row, std::size_t hd, const float* const* v_rows, std::size_t j0, std::size_t j1,
                       std::size_t h0, std::size_t d0) {
  __m256 acc[NH][NV];
#pragma GCC unroll 8
  for (std::size_t h = 0; h < NH; ++h)
#pragma GCC unroll 8
    for (std::size_t c = 0; c < NV; ++c) acc[h][c] = _mm256_loadu_ps(row.out + (h0 + h) * hd + d0 + 8 * c);
  for (std::size_t j = j0; j < j1; ++j) {
    const float* v = v_rows[j - j0] + d0;
    __m256 vv[NV];
#pragma GCC unroll 8
    for (std::size_t c = 0; c < NV; ++c) vv[c] = _mm256_loadu_ps(v + 8 * c);
#pragma GCC unroll 8
    for (std::size_t h = 0; h < NH; ++h) {
      const __m256 p = _mm256_broadcast_ss(row.scores + (h0 + h) * row.score_stride + j);
#pragma GCC unroll 8
      for (std::size_t c = 0; c < NV; ++c) acc[h][c] = _mm256_fmadd_ps(p, vv[c], acc[h][c]);
    }
  }
#pragma GCC unroll 8
  for (std::size_t h = 0; h < NH; ++h)
#pragma GCC unroll 8
    for (std::size_t c = 0; c < NV; ++c) _mm256_storeu_ps(row.out + (h0 + h) * hd + d0 + 8 * c, acc[h][c]);
}

template <std::size_t NH>
inline void ValueHeads(const ValueRow& row, std::size_t hd, const float* const* v_rows, std::size_t j0, std::size_t j1,
                       std::size_t h0) {
  std::size_t d = 0;
  for (; d + 32 <= hd; d += 32) ValueChunk<NH, 4>(row, hd, v_rows, j0, j1, h0, d);
  for (; d < hd; d += 8) ValueChunk<NH, 1>(row, hd, v_rows, j0, j1, h0, d);
}

// Every head of one row over keys [j0, j1), in pairs of heads.
inline void ValueAllHeads(const ValueRow& row, std::size_t g, std::size_t hd, const float* const* v_rows,
                          std::size_t j0, std::size_t j1) {
  std::size_t h = 0;
  for (; h + 2 <= g; h += 2) ValueHeads<2>(row, hd, v_rows, j0, j1, h);
  if (h < g) ValueHeads<1>(row, hd, v_rows, j0, j1, h);
}

// scores[h * score_stride + j .. + 8) for keys j .. j + 7 (rows k[0..8)) of one query row q
// ([group][head_dim]), one transposing reduction per head.
inline void Scores8(const float* q, const float* const* k, std::size_t g, std::size_t hd, __m256 scale, float* scores,
                    std::size_t score_stride) {
  for (std::size_t h = 0; h < g; ++h) {
    const float* qh = q + h * hd;
    __m256 acc[8];
    const __m256 q0 = _mm256_loadu_ps(qh);
#pragma GCC unroll 8
    for (std::size_t i = 0; i < 8; ++i) acc[i] = _mm256_mul_ps(q0, _mm256_loadu_ps(k[i]));
    for (std::size_t d = 8; d < hd; d += 8) {
      const __m256 qd = _mm256_loadu_ps(qh + d);
#pragma GCC unroll 8
      for (std::size_t i = 0; i < 8; ++i) acc[i] = _mm256_fmadd_ps(qd, _mm256_loadu_ps(k[i] + d), acc[i]);
    }
    _mm256_storeu_ps(scores + h * score_stride, _mm256_mul_ps(Combine8(acc), scale));
  }
}

// One score the way Scores8 computes each of its eight.
inline float Score1(const float* q, const float* k, std::size_t hd, float scale) {
  __m256 acc = _mm256_mul_ps(_mm256_loadu_ps(q), _mm256_loadu_ps(k));
  for (std::size_t d = 8; d < hd; d += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(k + d), acc);
  return Combine(acc) * scale;
}

// Every row of a tile on its own (the AVX2 path).
struct RowByRow {
  explicit RowByRow(const AttendArgs&) {}
  static void Scores(const AttendArgs& a, const float* const* k, __m256 scale, std::size_t j, std::size_t stride) {
    for (std::size_t r = 0; r < a.rows; ++r)
      Scores8(a.q + r * a.q_stride, k, a.group, a.head_dim, scale, a.scores + r * a.group * stride + j, stride);
  }
  static void Values(const AttendArgs& a, const float* const* v_rows, std::size_t j0, std::size_t j1, std::size_t stride) {
    for (std::size_t r = 0; r < a.rows; ++r)
      ValueAllHeads(ValueRow{a.scores + r * a.group * stride, stride, a.out + r * a.q_stride}, a.group, a.head_dim, v_rows,
                    j0, j1);
  }
};

// A tile of rows (prefill): keys every row sees (j < n_keys) go through blocked loops whose
// per-row arithmetic is that of decode (Rows: how the tile's rows share them), each key and
// value row read once for the tile while in L1; the causal tail (keys only the
// later rows see) one key at a time. Each element keeps its order: scores are independent, and
// the tail keys come after the shared ones in every value sum.
template <class Rows>
void AttendTileWith(const AttendArgs& a) {
  const std::size_t hd = a.head_dim, g = a.group, rows = a.rows, n = a.n_keys;
  const std::size_t stride = n + rows - 1;  // keys of the last row
  auto key = [&](std::size_t j) {
    return a.key0 + static_cast<std::size_t>(a.table[j / a.block_size]) * a.block_stride + (j % a.block_size) * a.token_stride;
  };
  auto score = [&](std::size_t r, std::size_t h) { return a.scores + (r * g + h) * stride; };
  const __m256 scale = _mm256_set1_ps(a.scale);
  Rows tile_rows(a);
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const float* k[8];
    for (std::size_t i = 0; i < 8; ++i) k[i] = key(j + i);
    tile_rows.Scores(a, k, scale, j, stride);
  }
  for (; j < stride; ++j) {
    const float* k = key(j);
    for (std::size_t r = j < n ? 0 : j - n + 1; r < rows; ++r)
      for (std::size_t h = 0; h < g; ++h) score(r, h)[j] = Score1(a.q + r * a.q_stride + h * hd, k, hd, a.scale);
  }
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t h = 0; h < g; ++h) {
      Softmax(score(r, h), n + r);
      float* o = a.out + r * a.q_stride + h * hd;
      for (std::size_t d = 0; d < hd; d += 8) _mm256_storeu_ps(o + d, _mm256_setzero_ps());
    }
  const float* v_rows[kValueBlock];
  for (std::size_t j0 = 0; j0 < n; j0 += kValueBlock) {
    const std::size_t j1 = n - j0 < kValueBlock ? n : j0 + kValueBlock;
    for (std::size_t jj = j0; jj < j1; ++jj) v_rows[jj - j0] = key(jj) + a.value_offset;
    tile_rows.Values(a, v_rows, j0, j1, stride);
  }
  for (j = n; j < stride; ++j) {
    const float* v = key(j) + a.value_offset;
    for (std::size_t r = j - n + 1; r < rows; ++r)
      for (std::size_t h = 0; h < g; ++h) {
        const __m256 p = _mm256_set1_ps(score(r, h)[j]);
        float* o = a.out + r * a.q_stride + h * hd;
        for (std::size_t d = 0; d < hd; d += 8)
          _mm256_storeu_ps(o + d, _mm256_fmadd_ps(p, _mm256_loadu_ps(v + d), _mm256_loadu_ps(o + d)));
      }
  }
}

}  // namespace
}  // namespace mnemo::kernels::cpu
