// out[m, n] = x[m, k] · w[n, k]ᵀ on the CPU.
//
// Every output element is Dot-shaped: lane l accumulates products k ≡ l (mod kLanes) in
// increasing k, then the lanes are combined by CombineLanes' tree. The register tiling
// below only decides *which* elements are computed together, never the order inside one,
// so out[i, j] is bit-identical for any m, any tile position and any thread count.
#include <algorithm>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/thread_pool.h"

namespace mnemo::kernels::cpu {
namespace {

constexpr std::size_t kMr = 2;   // x rows per micro-tile
constexpr std::size_t kNr = 4;   // w rows (output columns) per micro-tile
constexpr std::size_t kNc = 16;  // output columns per parallel tile: 16 w rows stay in L2
constexpr std::size_t kMb = 32;  // x rows per parallel tile

// NOTE: cloned for AVX2 (dispatched at load time through an ifunc) because SSE2, the x86-64
// baseline, halves the throughput. Both clones run the same IEEE operations in the same
// order (no "fma" target: contraction would change rounding), so results are identical.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MNEMO_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define MNEMO_SIMD_CLONES
#endif

// Computes a kMr x kNr tile. Rows past the edge are clamped duplicates whose results are
// dropped (rows_valid/cols_valid), so edge tiles run exactly the same arithmetic.
MNEMO_SIMD_CLONES void MicroTile(float* out, std::size_t ldo, const float* const* xr, const float* const* wr, std::size_t k,
               std::size_t rows_valid, std::size_t cols_valid) {
  float acc[kMr][kNr][kLanes] = {};
  std::size_t p = 0;
  for (; p + kLanes <= k; p += kLanes)
    for (std::size_t i = 0; i < kMr; ++i)
      for (std::size_t j = 0; j < kNr; ++j)
        for (std::size_t l = 0; l < kLanes; ++l) acc[i][j][l] += xr[i][p + l] * wr[j][p + l];
  for (std::size_t i = 0; i < kMr; ++i)
    for (std::size_t j = 0; j < kNr; ++j)
      for (std::size_t l = 0; p + l < k; ++l) acc[i][j][l] += xr[i][p + l] * wr[j][p + l];
  for (std::size_t i = 0; i < rows_valid; ++i)
    for (std::size_t j = 0; j < cols_valid; ++j) out[i * ldo + j] = CombineLanes(acc[i][j]);
}

}  // namespace

void Matmul(float* out, const float* x, const float* w, std::size_t m, std::size_t n, std::size_t k) {
  if (m == 0 || n == 0) return;
  const std::size_t col_tiles = (n + kNc - 1) / kNc;
  const std::size_t row_tiles = (m + kMb - 1) / kMb;
  // Small problems stay on the calling thread; the grain is in tiles of ~kMb*kNc*k flops.
  const std::size_t tile_work = std::min(m, kMb) * kNc * k;
  const std::size_t grain = std::max<std::size_t>(1, (std::size_t{1} << 16) / std::max<std::size_t>(tile_work, 1));
  ParallelFor(col_tiles * row_tiles, grain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const std::size_t c0 = (t / row_tiles) * kNc, c1 = std::min(n, c0 + kNc);
      const std::size_t r0 = (t % row_tiles) * kMb, r1 = std::min(m, r0 + kMb);
      for (std::size_t r = r0; r < r1; r += kMr) {
        const float* xr[kMr];
        for (std::size_t i = 0; i < kMr; ++i) xr[i] = x + std::min(r + i, r1 - 1) * k;
        for (std::size_t c = c0; c < c1; c += kNr) {
          const float* wr[kNr];
          for (std::size_t j = 0; j < kNr; ++j) wr[j] = w + std::min(c + j, c1 - 1) * k;
          MicroTile(out + r * n + c, n, xr, wr, k, std::min(kMr, r1 - r), std::min(kNr, c1 - c));
        }
      }
    }
  });
}

}  // namespace mnemo::kernels::cpu
