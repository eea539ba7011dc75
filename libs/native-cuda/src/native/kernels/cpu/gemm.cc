// Loop nest of the packed GEMM (the micro-kernels are in isa/).
//
// Tasks are (row block of up to kMc rows) x (group of up to kMaxPanelsPerTask panels); a task
// packs its rows of x once per K block (kKc columns: an A block of kMc x kKc floats stays in
// L2, a B panel slice of kKc x nr floats in L1) and sweeps its panels, each panel slice once
// over every strip of the block. Any split is exact (see gemm_kernels.h), so the split only
// balances load.
#include "kernels/cpu/gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel_assert.h"

namespace mnemo::kernels::cpu {
namespace {

constexpr std::size_t kKc = 256;
constexpr std::size_t kMc = 96;  // a multiple of every path's mr (4, 6, 8, 12)
constexpr std::size_t kMaxPanelsPerTask = 16;

std::size_t CeilDiv(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// strips [ceil(rows / mr)][kc][mr] from x[r0 .. r0+rows)[pc .. pc+kc); rows past the end of
// the last strip are left as they are: the micro-kernel for `r` rows never reads them.
void PackA(float* dst, const float* x, std::size_t k, std::size_t r0, std::size_t rows, std::size_t pc,
           std::size_t kc, std::size_t mr) {
  for (std::size_t s = 0; s * mr < rows; ++s) {
    const std::size_t n_rows = std::min(mr, rows - s * mr);
    float* strip = dst + s * kc * mr;
    for (std::size_t i = 0; i < n_rows; ++i) {
      const float* src = x + (r0 + s * mr + i) * k + pc;
      for (std::size_t p = 0; p < kc; ++p) strip[p * mr + i] = src[p];
    }
  }
}

}  // namespace

const GemmKernels* GemmKernelsFor(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kPortable:
      return PortableGemmKernels();
    case CpuIsa::kAvx2Fma:
      return Avx2GemmKernels();
    case CpuIsa::kAvx512:
      return Avx512GemmKernels();
    case CpuIsa::kNeon:
      return NeonGemmKernels();
  }
  return nullptr;
}

const GemmKernels& ActiveGemmKernels() {
  static const GemmKernels* ks = GemmKernelsFor(ActiveCpuIsa());
  return *ks;
}

std::size_t PackedWeightElems(const GemmKernels& ks, std::size_t n, std::size_t k) {
  return CeilDiv(n, ks.nr) * ks.nr * k;
}
std::size_t PackedWeightElems(std::size_t n, std::size_t k) { return PackedWeightElems(ActiveGemmKernels(), n, k); }

void PackWeight(const GemmKernels& ks, float* packed, const float* w, std::size_t n, std::size_t k) {
  const std::size_t nr = ks.nr, panels = CeilDiv(n, nr);
  ParallelFor(panels, 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t p = begin; p < end; ++p) {
      float* dst = packed + p * k * nr;
      const std::size_t cols = std::min(nr, n - p * nr);
      for (std::size_t kk = 0; kk < k; ++kk) {
        for (std::size_t j = 0; j < cols; ++j) dst[kk * nr + j] = w[(p * nr + j) * k + kk];
        for (std::size_t j = cols; j < nr; ++j) dst[kk * nr + j] = 0.0f;
      }
    }
  });
}
void PackWeight(float* packed, const float* w, std::size_t n, std::size_t k) {
  PackWeight(ActiveGemmKernels(), packed, w, n, k);
}

void GemmPacked(const GemmKernels& ks, ParallelForPool& pool, float* out, const float* x, const float* packed,
                std::size_t m, std::size_t n, std::size_t k) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(out, out + m * n, 0.0f);
    return;
  }
  const std::size_t mr = ks.mr, nr = ks.nr;
  const std::size_t panels = CeilDiv(n, nr);
  const std::size_t row_blocks = CeilDiv(m, kMc);
  // Aim for ~4 tasks per lane, but keep a task's panels within L2.
  const std::size_t target = pool.lanes() * 4;
  const std::size_t per_task =
      std::clamp<std::size_t>(CeilDiv(panels * row_blocks, target), 1, kMaxPanelsPerTask);
  const std::size_t panel_groups = CeilDiv(panels, per_task);
  const std::size_t tasks = row_blocks * panel_groups;
  // Tiny products run on the calling thread: waking workers costs more.
  const std::size_t task_flops = 2 * std::min(m, kMc) * per_task * nr * k;
  const std::size_t grain = std::max<std::size_t>(1, (std::size_t{1} << 18) / std::max<std::size_t>(task_flops, 1));
  pool.Run(tasks, grain, [&](std::size_t begin, std::size_t end) {
    thread_local std::vector<float> a_block;
    a_block.resize(kMc * kKc);
    for (std::size_t t = begin; t < end; ++t) {
      // Row-block-major task order: neighbouring tasks share the rows of x.
      const std::size_t rb = t / panel_groups, pg = t % panel_groups;
      const std::size_t r0 = rb * kMc, rows = std::min(kMc, m - r0);
      const std::size_t p0 = pg * per_task, p1 = std::min(panels, p0 + per_task);
      for (std::size_t pc = 0; pc < k; pc += kKc) {
        const std::size_t kc = std::min(kKc, k - pc);
        PackA(a_block.data(), x, k, r0, rows, pc, kc, mr);
        for (std::size_t p = p0; p < p1; ++p) {
          const float* b = packed + p * k * nr + pc * nr;
          const std::size_t c0 = p * nr, cols = std::min(nr, n - c0);
          for (std::size_t s = 0; s * mr < rows; ++s) {
            const std::size_t r = std::min(mr, rows - s * mr);
            ks.by_rows[r](kc, a_block.data() + s * kc * mr, b, out + (r0 + s * mr) * n + c0, n, cols, pc != 0);
          }
        }
      }
    }
  });
}

void MatmulPacked(float* out, const float* x, const float* packed, std::size_t m, std::size_t n, std::size_t k) {
  GemmPacked(ActiveGemmKernels(), KernelPool(), out, x, packed, m, n, k);
}

void Matmul(float* out, const float* x, const float* w, std::size_t m, std::size_t n, std::size_t k) {
  // Packing on the fly costs one pass over w; the engine packs its weights once instead.
  thread_local std::vector<float> packed;
  packed.resize(PackedWeightElems(n, k));
  PackWeight(packed.data(), w, n, k);
  MatmulPacked(out, x, packed.data(), m, n, k);
}

}  // namespace mnemo::kernels::cpu
