// Loop nest of the packed GEMM (the micro-kernels are in isa/).
//
// x is packed once per call: row block rb (a run of whole mr-row strips, at most kMc rows)
// and K block kb (KBlock columns) form one A block of mc x kc floats (L2-sized), packed by the
// first task that needs it into a buffer every lane shares. Tasks are (row block) x (group of
// panels), so n can be split finely over the lanes (few row blocks, or a small n such as the
// k/v projections) without packing x again per task, and row blocks are sized evenly so no
// small tail block is left for the last lane. A task that finds its A block being packed by
// another lane packs a private copy instead of waiting (on a loaded machine the other lane
// may be descheduled). Packing is a copy and every split is exact (see gemm_kernels.h), so
// none of this changes a bit: the split only balances load.
#include "kernels/cpu/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel_assert.h"

namespace mnemo::kernels::cpu {
namespace {

// K block (columns of x per packed A block): K blocking only moves where the exact fp32 partial
// sums are stored, so it never changes a bit. 512 on AVX-512 (every such core has at least
// 1 MiB of L2 for the 12 x 512 strips of an A block): on an Intel Xeon VM, alternating process
// pairs of mnemo-medium's shapes ran 3-5 % faster than with 256 (k/v 243-254 -> 250-261 GFLOP/s,
// gate/up 274-283 -> 287-297); 1,024 was no better. 256 elsewhere, where it was tuned.
std::size_t KBlock(const GemmKernels& ks) { return ks.isa == CpuIsa::kAvx512 ? 512 : 256; }
constexpr std::size_t kMc = 96;
constexpr std::size_t kMaxPanelsPerTask = 16;
constexpr std::size_t kTasksPerLane = 8;

std::size_t CeilDiv(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// One strip [kc][MR] from MR rows of x starting at src[0..MR): p outer writes the strip
// sequentially from MR sequential read streams. A compile-time MR lets the compiler keep
// the row pointers in registers and unroll the rows.
template <std::size_t MR>
void PackStrip(float* strip, const float* const* src, std::size_t kc) {
  for (std::size_t p = 0; p < kc; ++p, strip += MR)
#pragma GCC unroll 16
    for (std::size_t i = 0; i < MR; ++i) strip[i] = src[i][p];
}

// strips [ceil(rows / mr)][kc][mr] from x[r0 .. r0+rows)[pc .. pc+kc); rows past the end of
// the last strip are left as they are: the micro-kernel for `r` rows never reads them.
void PackA(float* dst, const float* x, std::size_t k, std::size_t r0, std::size_t rows, std::size_t pc,
           std::size_t kc, std::size_t mr) {
  for (std::size_t s = 0; s * mr < rows; ++s) {
    const std::size_t n_rows = std::min(mr, rows - s * mr);
    float* strip = dst + s * kc * mr;
    const float* src[kMaxMr];
    for (std::size_t i = 0; i < n_rows; ++i) src[i] = x + (r0 + s * mr + i) * k + pc;
    if (n_rows == 12 && mr == 12) {
      PackStrip<12>(strip, src, kc);
    } else if (n_rows == 6 && mr == 6) {
      PackStrip<6>(strip, src, kc);
    } else {
      for (std::size_t p = 0; p < kc; ++p, strip += mr)
        for (std::size_t i = 0; i < n_rows; ++i) strip[i] = src[i][p];
    }
  }
}

// x packed once per call, shared by the lanes: A block (rb, kb) at (rb * k_blocks + kb) * mc * kc_max.
// Lives on the calling thread and is reused across calls (no page faults per call).
struct SharedA {
  enum : std::uint8_t { kEmpty = 0, kPacking = 1, kReady = 2 };
  std::vector<float> data;
  std::unique_ptr<std::atomic<std::uint8_t>[]> state;
  std::size_t state_cap = 0;

  void Reset(std::size_t floats, std::size_t blocks) {
    if (data.size() < floats) data.resize(floats);
    if (state_cap < blocks) {
      state.reset(new std::atomic<std::uint8_t>[blocks]);
      state_cap = blocks;
    }
    for (std::size_t i = 0; i < blocks; ++i) state[i].store(kEmpty, std::memory_order_relaxed);
  }
};

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
  const GemmOut one{out, packed, n};
  GemmPackedMulti(ks, pool, &one, 1, x, m, k);
}

void GemmPackedMulti(const GemmKernels& ks, ParallelForPool& pool, const GemmOut* outs, std::size_t count,
                     const float* x, std::size_t m, std::size_t k) {
  if (m == 0 || count == 0) return;
  if (k == 0) {
    for (std::size_t o = 0; o < count; ++o) std::fill(outs[o].out, outs[o].out + m * outs[o].n, 0.0f);
    return;
  }
  const std::size_t mr = ks.mr, nr = ks.nr;
  // Panels of every output, one after another: output o owns global panels [first[o], first[o + 1]).
  std::size_t first[kMaxGemmOuts + 1] = {0};
  MNEMO_KERNEL_CHECK(count <= kMaxGemmOuts);
  for (std::size_t o = 0; o < count; ++o) first[o + 1] = first[o] + CeilDiv(outs[o].n, nr);
  const std::size_t panels = first[count];
  if (panels == 0) return;
  // Even row blocks of whole strips: block rb takes strips [rb * strips / row_blocks, ...), so
  // 512 rows of 12-row strips become 96 + 5 x 84 (the last strip 8 rows) rather than 5 x 96 + 32.
  // The lanes take a row block's tasks together (ParallelFor hands out runs of tasks), so an odd
  // small block left the lanes up to a block apart at the end of a call.
  const std::size_t strips = CeilDiv(m, mr);
  const std::size_t row_blocks = CeilDiv(m, kMc);
  const std::size_t mc = CeilDiv(strips, row_blocks) * mr;  // the largest block, for the buffer
  // One strip of rows (decode): A is tiny, so no K blocking; each panel is then read start to
  // end in one sweep (blocking only moves where the exact fp32 partial sums are stored).
  const std::size_t kc_max = m <= mr ? k : KBlock(ks);
  const std::size_t k_blocks = CeilDiv(k, kc_max);
  const std::size_t target = pool.lanes() * kTasksPerLane;
  const std::size_t per_task =
      std::clamp<std::size_t>(CeilDiv(panels * row_blocks, target), 1, kMaxPanelsPerTask);
  const std::size_t panel_groups = CeilDiv(panels, per_task);
  const std::size_t tasks = row_blocks * panel_groups;
  // Tiny products run on the calling thread: waking workers costs more.
  const std::size_t task_flops = 2 * std::min(m, mc) * per_task * nr * k;
  const std::size_t grain = std::max<std::size_t>(1, (std::size_t{1} << 18) / std::max<std::size_t>(task_flops, 1));
  thread_local SharedA shared;
  shared.Reset(row_blocks * k_blocks * mc * kc_max, row_blocks * k_blocks);
  float* const a_all = shared.data.data();
  std::atomic<std::uint8_t>* const state = shared.state.get();
  pool.Run(tasks, grain, [&](std::size_t begin, std::size_t end) {
    thread_local std::vector<float> a_private;
    for (std::size_t t = begin; t < end; ++t) {
      // Row-block-major task order: neighbouring tasks share the rows of x.
      const std::size_t rb = t / panel_groups, pg = t % panel_groups;
      const std::size_t r0 = rb * strips / row_blocks * mr, rows = std::min(m, (rb + 1) * strips / row_blocks * mr) - r0;
      // Groups differ by at most one panel.
      const std::size_t p0 = pg * panels / panel_groups, p1 = (pg + 1) * panels / panel_groups;
      for (std::size_t kb = 0; kb < k_blocks; ++kb) {
        const std::size_t pc = kb * kc_max, kc = std::min(kc_max, k - pc);
        const std::size_t id = rb * k_blocks + kb;
        const float* a = a_all + id * mc * kc_max;
        std::uint8_t s = state[id].load(std::memory_order_acquire);
        if (s == SharedA::kEmpty && state[id].compare_exchange_strong(s, SharedA::kPacking, std::memory_order_acq_rel)) {
          PackA(a_all + id * mc * kc_max, x, k, r0, rows, pc, kc, mr);
          state[id].store(SharedA::kReady, std::memory_order_release);
        } else if (s != SharedA::kReady) {
          a_private.resize(mc * kc_max);
          PackA(a_private.data(), x, k, r0, rows, pc, kc, mr);
          a = a_private.data();
        }
        std::size_t o = 0;
        for (std::size_t p = p0; p < p1; ++p) {
          while (p >= first[o + 1]) ++o;
          const GemmOut& g = outs[o];
          const std::size_t lp = p - first[o];
          const float* b = g.packed + lp * k * nr + pc * nr;
          const std::size_t c0 = lp * nr, cols = std::min(nr, g.n - c0);
          for (std::size_t s2 = 0; s2 * mr < rows; ++s2) {
            const std::size_t r = std::min(mr, rows - s2 * mr);
            ks.by_rows[r](kc, a + s2 * kc * mr, b, g.out + (r0 + s2 * mr) * g.n + c0, g.n, cols, pc != 0);
          }
        }
      }
    }
  });
}

void MatmulPacked(float* out, const float* x, const float* packed, std::size_t m, std::size_t n, std::size_t k) {
  GemmPacked(ActiveGemmKernels(), KernelPool(), out, x, packed, m, n, k);
}

void MatmulPackedMulti(const GemmOut* outs, std::size_t count, const float* x, std::size_t m, std::size_t k) {
  GemmPackedMulti(ActiveGemmKernels(), KernelPool(), outs, count, x, m, k);
}

void Matmul(float* out, const float* x, const float* w, std::size_t m, std::size_t n, std::size_t k) {
  // Packing on the fly costs one pass over w; the engine packs its weights once instead.
  thread_local std::vector<float> packed;
  packed.resize(PackedWeightElems(n, k));
  PackWeight(packed.data(), w, n, k);
  MatmulPacked(out, x, packed.data(), m, n, k);
}

}  // namespace mnemo::kernels::cpu
