// AVX-512 attention for prefill tiles: the arithmetic of the AVX2 path element for element
// (so a prefill row still equals a decode row bit for bit), with twice the work per
// instruction. Scores take two query rows per zmm register — the low half row r, the high half
// row r + 1, each half the 8-lane accumulator the AVX2 loop keeps for that row — against key
// rows broadcast to both halves; value sums take 16 columns per register and two rows per
// loaded value row, each column still one FMA chain over ascending keys. Decode rows keep the
// AVX2 loop (a decode step is bound by memory, not by arithmetic). Compiled with -mavx512f
// -mfma (CMake).
#include "kernels/cpu/gemm_kernels.h"

#if defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>

#include <vector>

#include "kernels/cpu/isa/attention_avx2_loops.h"

namespace mnemo::kernels::cpu {
namespace {

inline __m256 Low(__m512 v) { return _mm512_castps512_ps256(v); }
inline __m256 High(__m512 v) { return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)); }
inline __m512 Pair(const float* lo, const float* hi) {
  const __m512d low = _mm512_castps_pd(_mm512_castps256_ps512(_mm256_loadu_ps(lo)));
  return _mm512_castpd_ps(_mm512_insertf64x4(low, _mm256_castps_pd(_mm256_loadu_ps(hi)), 1));
}
inline __m512 Both(const float* p) { return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_loadu_ps(p)))); }

// Scores8 for two query rows at once from their paired q (qp[h * hd / 8 + d / 8] = dims d..d+8
// of head h, row r low, row r + 1 high): per row and key the same product, the same FMA chain
// over head_dim in 8 lanes, the same Combine8.
inline void Scores8x2(const __m512* qp, const float* const* k, std::size_t g, std::size_t hd, __m256 scale, float* s0,
                      float* s1, std::size_t score_stride) {
  const std::size_t steps = hd / 8;
  for (std::size_t h = 0; h < g; ++h, qp += steps) {
    __m512 acc[8];
#pragma GCC unroll 8
    for (std::size_t i = 0; i < 8; ++i) acc[i] = _mm512_mul_ps(qp[0], Both(k[i]));
    for (std::size_t d = 1; d < steps; ++d) {
#pragma GCC unroll 8
      for (std::size_t i = 0; i < 8; ++i) acc[i] = _mm512_fmadd_ps(qp[d], Both(k[i] + 8 * d), acc[i]);
    }
    __m256 lo[8], hi[8];
#pragma GCC unroll 8
    for (std::size_t i = 0; i < 8; ++i) lo[i] = Low(acc[i]), hi[i] = High(acc[i]);
    _mm256_storeu_ps(s0 + h * score_stride, _mm256_mul_ps(Combine8(lo), scale));
    _mm256_storeu_ps(s1 + h * score_stride, _mm256_mul_ps(Combine8(hi), scale));
  }
}

// ValueChunk for R rows and NH heads over 16 * NV columns from d0: out += p v_j, j ascending.
template <std::size_t R, std::size_t NH, std::size_t NV>
inline void ValueChunk16(const ValueRow* rows, std::size_t hd, const float* const* v_rows, std::size_t j0,
                         std::size_t j1, std::size_t h0, std::size_t d0) {
  __m512 acc[R][NH][NV];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (std::size_t h = 0; h < NH; ++h)
#pragma GCC unroll 8
      for (std::size_t c = 0; c < NV; ++c) acc[r][h][c] = _mm512_loadu_ps(rows[r].out + (h0 + h) * hd + d0 + 16 * c);
  for (std::size_t j = j0; j < j1; ++j) {
    const float* v = v_rows[j - j0] + d0;
    __m512 vv[NV];
#pragma GCC unroll 8
    for (std::size_t c = 0; c < NV; ++c) vv[c] = _mm512_loadu_ps(v + 16 * c);
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 8
      for (std::size_t h = 0; h < NH; ++h) {
        const __m512 p = _mm512_set1_ps(rows[r].scores[(h0 + h) * rows[r].score_stride + j]);
#pragma GCC unroll 8
        for (std::size_t c = 0; c < NV; ++c) acc[r][h][c] = _mm512_fmadd_ps(p, vv[c], acc[r][h][c]);
      }
  }
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (std::size_t h = 0; h < NH; ++h)
#pragma GCC unroll 8
      for (std::size_t c = 0; c < NV; ++c) _mm512_storeu_ps(rows[r].out + (h0 + h) * hd + d0 + 16 * c, acc[r][h][c]);
}

// Every head of R rows over keys [j0, j1): columns in 64s, then 16s; a last 8 (head_dim = 16k
// + 8) through the AVX2 chunk, row by row. Heads in pairs: with two rows that is 16
// independent accumulators per loaded value row, enough to hide the FMA latency (one head at
// a time measured 40% slower).
template <std::size_t R>
inline void ValueRows16(const ValueRow* rows, std::size_t g, std::size_t hd, const float* const* v_rows, std::size_t j0,
                        std::size_t j1) {
  constexpr std::size_t NH = 2;
  std::size_t h = 0;
  for (; h + NH <= g; h += NH) {
    std::size_t d = 0;
    for (; d + 64 <= hd; d += 64) ValueChunk16<R, NH, 4>(rows, hd, v_rows, j0, j1, h, d);
    for (; d + 16 <= hd; d += 16) ValueChunk16<R, NH, 1>(rows, hd, v_rows, j0, j1, h, d);
    for (std::size_t r = 0; d < hd && r < R; ++r) ValueChunk<NH, 1>(rows[r], hd, v_rows, j0, j1, h, d);
  }
  for (; h < g; ++h) {
    std::size_t d = 0;
    for (; d + 64 <= hd; d += 64) ValueChunk16<R, 1, 4>(rows, hd, v_rows, j0, j1, h, d);
    for (; d + 16 <= hd; d += 16) ValueChunk16<R, 1, 1>(rows, hd, v_rows, j0, j1, h, d);
    for (std::size_t r = 0; d < hd && r < R; ++r) ValueChunk<1, 1>(rows[r], hd, v_rows, j0, j1, h, d);
  }
}

// The tile's rows two at a time (an odd last row alone).
// q of each pair of rows is paired once per tile (every key group reuses it).
class RowPairs {
 public:
  explicit RowPairs(const AttendArgs& a) {
    const std::size_t steps = a.head_dim / 8, per_pair = a.group * steps;
    thread_local std::vector<__m512> storage;  // reused across tiles: no allocation per call
    storage.resize(a.rows / 2 * per_pair);
    paired_ = storage.data();
    for (std::size_t r = 0; r + 2 <= a.rows; r += 2)
      for (std::size_t h = 0; h < a.group; ++h)
        for (std::size_t d = 0; d < steps; ++d) {
          const float* q0 = a.q + r * a.q_stride + h * a.head_dim + 8 * d;
          paired_[r / 2 * per_pair + h * steps + d] = Pair(q0, q0 + a.q_stride);
        }
  }
  void Scores(const AttendArgs& a, const float* const* k, __m256 scale, std::size_t j, std::size_t stride) const {
    auto s = [&](std::size_t r) { return a.scores + r * a.group * stride + j; };
    const std::size_t per_pair = a.group * (a.head_dim / 8);
    std::size_t r = 0;
    for (; r + 2 <= a.rows; r += 2)
      Scores8x2(paired_ + r / 2 * per_pair, k, a.group, a.head_dim, scale, s(r), s(r + 1), stride);
    if (r < a.rows) Scores8(a.q + r * a.q_stride, k, a.group, a.head_dim, scale, s(r), stride);
  }
  void Values(const AttendArgs& a, const float* const* v_rows, std::size_t j0, std::size_t j1, std::size_t stride) const {
    auto row = [&](std::size_t r) { return ValueRow{a.scores + r * a.group * stride, stride, a.out + r * a.q_stride}; };
    std::size_t r = 0;
    for (; r + 2 <= a.rows; r += 2) {
      const ValueRow two[2] = {row(r), row(r + 1)};
      ValueRows16<2>(two, a.group, a.head_dim, v_rows, j0, j1);
    }
    if (r < a.rows) {
      const ValueRow one[1] = {row(r)};
      ValueRows16<1>(one, a.group, a.head_dim, v_rows, j0, j1);
    }
  }

 private:
  __m512* paired_;
};

void Attend(const AttendArgs& a) {
  if (a.head_dim % 8 != 0 || a.rows == 1) return Avx2Attend()(a);
  ForEachKvHead(a, AttendTileWith<RowPairs>);
}

}  // namespace

AttendFn Avx512Attend() { return Avx2Attend() != nullptr ? Attend : nullptr; }

}  // namespace mnemo::kernels::cpu
#else
namespace mnemo::kernels::cpu {
AttendFn Avx512Attend() { return nullptr; }
}  // namespace mnemo::kernels::cpu
#endif
