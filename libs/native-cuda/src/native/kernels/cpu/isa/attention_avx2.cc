// AVX2 + FMA attention of one row (see AttendArgs in gemm_kernels.h for the fixed order):
// dot products in 8 lanes of head_dim, combined by a fixed tree; a vector exp; the value sum
// as FMAs in ascending key order. Compiled with -mavx2 -mfma (CMake).
#include "kernels/cpu/gemm_kernels.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <cmath>

namespace mnemo::kernels::cpu {
namespace {

// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), the tree of reduce.h's CombineLanes.
inline float Combine(__m256 v) {
  const __m128 a = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));  // l0+l4 .. l3+l7
  const __m128 b = _mm_add_ps(a, _mm_movehl_ps(a, a));                                   // (l0+l4)+(l2+l6), (l1+l5)+(l3+l7)
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_shuffle_ps(b, b, 1)));
}

// exp(x) for x <= 0 (Cephes expf: range reduction by ln 2, degree-5 polynomial), ~1 ulp.
inline __m256 Exp(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
  const __m256 fx = _mm256_floor_ps(_mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f)));
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
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

// One row (decode): the same arithmetic as a tile row, in the simplest loop nest (decode is
// memory-bound and this is what it ran before tiles existed).
void AttendRow(const AttendArgs& a) {
  const std::size_t hd = a.head_dim, n = a.n_keys, g = a.group;
  auto key = [&](std::size_t j) {
    return a.key0 + static_cast<std::size_t>(a.table[j / a.block_size]) * a.block_stride + (j % a.block_size) * a.token_stride;
  };
  for (std::size_t j = 0; j < n; ++j) {
    const float* k = key(j);
    for (std::size_t h = 0; h < g; ++h) {
      const float* q = a.q + h * hd;
      __m256 acc = _mm256_mul_ps(_mm256_loadu_ps(q), _mm256_loadu_ps(k));
      for (std::size_t d = 8; d < hd; d += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(k + d), acc);
      a.scores[h * n + j] = Combine(acc) * a.scale;
    }
  }
  for (std::size_t h = 0; h < g; ++h) Softmax(a.scores + h * n, n);
  for (std::size_t i = 0; i < g * hd; i += 8) _mm256_storeu_ps(a.out + i, _mm256_setzero_ps());
  for (std::size_t j = 0; j < n; ++j) {
    const float* v = key(j) + a.value_offset;
    for (std::size_t h = 0; h < g; ++h) {
      const __m256 p = _mm256_set1_ps(a.scores[h * n + j]);
      float* o = a.out + h * hd;
      for (std::size_t d = 0; d < hd; d += 8)
        _mm256_storeu_ps(o + d, _mm256_fmadd_ps(p, _mm256_loadu_ps(v + d), _mm256_loadu_ps(o + d)));
    }
  }
}

void AttendTile(const AttendArgs& a) {
  const std::size_t hd = a.head_dim, g = a.group, rows = a.rows;
  const std::size_t stride = a.n_keys + rows - 1;  // keys of the last row
  auto key = [&](std::size_t j) {
    return a.key0 + static_cast<std::size_t>(a.table[j / a.block_size]) * a.block_stride + (j % a.block_size) * a.token_stride;
  };
  auto score = [&](std::size_t r, std::size_t h) { return a.scores + (r * g + h) * stride; };
  // Key j is read once for every row of the tile that sees it.
  for (std::size_t j = 0; j < stride; ++j) {
    const float* k = key(j);
    for (std::size_t r = j < a.n_keys ? 0 : j - a.n_keys + 1; r < rows; ++r)
      for (std::size_t h = 0; h < g; ++h) {
        const float* q = a.q + r * a.q_stride + h * hd;
        __m256 acc = _mm256_mul_ps(_mm256_loadu_ps(q), _mm256_loadu_ps(k));
        for (std::size_t d = 8; d < hd; d += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(k + d), acc);
        score(r, h)[j] = Combine(acc) * a.scale;
      }
  }
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t h = 0; h < g; ++h) {
      Softmax(score(r, h), a.n_keys + r);
      float* o = a.out + r * a.q_stride + h * hd;
      for (std::size_t d = 0; d < hd; d += 8) _mm256_storeu_ps(o + d, _mm256_setzero_ps());
    }
  // Value j likewise; each output still sums its values in ascending j.
  for (std::size_t j = 0; j < stride; ++j) {
    const float* v = key(j) + a.value_offset;
    for (std::size_t r = j < a.n_keys ? 0 : j - a.n_keys + 1; r < rows; ++r)
      for (std::size_t h = 0; h < g; ++h) {
        const __m256 p = _mm256_set1_ps(score(r, h)[j]);
        float* o = a.out + r * a.q_stride + h * hd;
        for (std::size_t d = 0; d < hd; d += 8)
          _mm256_storeu_ps(o + d, _mm256_fmadd_ps(p, _mm256_loadu_ps(v + d), _mm256_loadu_ps(o + d)));
      }
  }
}

void Attend(const AttendArgs& a) {
  if (a.head_dim % 8 != 0) return PortableAttend(a);  // one path per geometry: a model never mixes
  return a.rows == 1 ? AttendRow(a) : AttendTile(a);
}

}  // namespace

AttendFn Avx2Attend() { return Attend; }

}  // namespace mnemo::kernels::cpu
#else
namespace mnemo::kernels::cpu {
AttendFn Avx2Attend() { return nullptr; }
}  // namespace mnemo::kernels::cpu
#endif
