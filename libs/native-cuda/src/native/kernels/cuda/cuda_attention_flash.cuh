// Tensor-core paged attention for prefill chunks (flash attention over the paged cache): one
// block per (64 query rows of one sequence, query head). For each 64-key tile of the context,
// in position order: S = Q Kᵀ on tensor cores (WMMA, fp32 accumulation), an online softmax per
// row (running max and sum in shared memory, causal mask by position), P in the storage type,
// and O = O · correction + P V, with O kept in fp32 in shared memory. Four warps, each owning 16
// of the tile's rows, so the softmax and O updates of a row never leave its warp.
// Requirements checked by the caller: head_dim % 16 == 0, head_dim <= 128, 16-byte aligned
// cache and q, and the dynamic shared memory of FlashLayout (about 114 KiB at head_dim 128).
#pragma once

#include <mma.h>

#include "kernels/cuda/cuda_common.cuh"

namespace mnemo::kernels::cuda {

constexpr int kFlashRows = 64, kFlashKeys = 64, kFlashThreads = 128;

// Byte offsets of the kernel's shared buffers (each 128-byte aligned), the same on host and device.
struct FlashLayout {
  int ldq, lds, ldp;  // leading dimensions: q/k/v tiles (elements), scores (floats), probabilities (elements)
  unsigned q, k, v, s, p, o, tmp, m, l, corr, total;
};

MNEMO_HD inline unsigned FlashAlign(unsigned x) { return (x + 127u) / 128u * 128u; }

MNEMO_HD inline FlashLayout MakeFlashLayout(int hd) {
  FlashLayout L{};
  L.ldq = hd + 8;
  L.lds = kFlashKeys + 4;
  L.ldp = kFlashKeys + 8;
  unsigned off = 0;
  L.q = off, off = FlashAlign(off + kFlashRows * L.ldq * 2);
  L.k = off, off = FlashAlign(off + kFlashKeys * L.ldq * 2);
  L.v = off, off = FlashAlign(off + kFlashKeys * L.ldq * 2);
  L.s = off, off = FlashAlign(off + kFlashRows * L.lds * 4);
  L.p = off, off = FlashAlign(off + kFlashRows * L.ldp * 2);
  L.o = off, off = FlashAlign(off + kFlashRows * hd * 4);
  L.tmp = off, off = FlashAlign(off + (kFlashThreads / 32) * 256 * 4);
  L.m = off, off = FlashAlign(off + kFlashRows * 4);
  L.l = off, off = FlashAlign(off + kFlashRows * 4);
  L.corr = off, off = FlashAlign(off + kFlashRows * 4);
  L.total = off;
  return L;
}

__device__ __forceinline__ void FlashCpAsync16(void* smem, const void* gmem, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(gmem), "r"(src_bytes));
#endif
}

// One warp's 16 × 16 fp32 tile acc = A · B over `depth` (a multiple of 16), in 16-deep steps:
// A's 16 rows start at `a` (row-major, leading dimension lda); B's k-th 16-deep slice starts at
// b + k * b_step (leading dimension ldb, in BLayout). Both products of the kernel are this one.
template <typename T, typename BLayout>
__device__ __forceinline__ void FlashMma(nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float>& acc,
                                         const T* a, int lda, const T* b, int ldb, int b_step, int depth) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  namespace wmma = nvcuda::wmma;
  wmma::fill_fragment(acc, 0.0f);
  for (int kk = 0; kk < depth; kk += 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, T, BLayout> fb;
    wmma::load_matrix_sync(fa, a + kk, lda);
    wmma::load_matrix_sync(fb, b + kk * b_step, ldb);
    wmma::mma_sync(acc, fa, fb, acc);
  }
#endif
}

template <typename T>
__global__ void __launch_bounds__(kFlashThreads)
    FlashPrefillKernel(T* out, const T* q, const T* cache, int32_t layer, int num_heads, KvGeometry g,
                       const int32_t* query_start, const int32_t* context_len, const int32_t* tables,
                       int32_t max_blocks, const int32_t* tile_seq, const int32_t* tile_row0, float scale) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  namespace wmma = nvcuda::wmma;
  extern __shared__ __align__(128) unsigned char flash_smem[];
  const int hd = g.head_dim;
  const FlashLayout L = MakeFlashLayout(hd);
  T* qs = reinterpret_cast<T*>(flash_smem + L.q);
  T* ks = reinterpret_cast<T*>(flash_smem + L.k);
  T* vs = reinterpret_cast<T*>(flash_smem + L.v);
  float* ss = reinterpret_cast<float*>(flash_smem + L.s);
  T* ps = reinterpret_cast<T*>(flash_smem + L.p);
  float* os = reinterpret_cast<float*>(flash_smem + L.o);
  float* tmp = reinterpret_cast<float*>(flash_smem + L.tmp);
  float* mi = reinterpret_cast<float*>(flash_smem + L.m);
  float* li = reinterpret_cast<float*>(flash_smem + L.l);
  float* corr = reinterpret_cast<float*>(flash_smem + L.corr);

  const int t = threadIdx.x, warp = t >> 5, lane = t & 31;
  const int head = blockIdx.y, seq = tile_seq[blockIdx.x], r0 = tile_row0[blockIdx.x];
  const int q_start = query_start[seq], q_len = query_start[seq + 1] - q_start;
  const int rows_here = min(kFlashRows, q_start + q_len - r0);
  const int first_pos = context_len[seq] - q_len + (r0 - q_start);
  const int last_pos = first_pos + rows_here - 1;
  const int kvh = head / (num_heads / g.num_kv_heads);
  const int32_t* table = tables + static_cast<std::size_t>(seq) * max_blocks;
  const std::size_t te = g.TokenElems();
  const int chunks = hd / 8;
  const uint4 zero = make_uint4(0, 0, 0, 0);
  for (int i = t; i < kFlashRows * chunks; i += kFlashThreads) {
    const int r = i / chunks, c = i - r * chunks;
    const uint4 v = r < rows_here ? *reinterpret_cast<const uint4*>(q + (static_cast<std::size_t>(r0 + r) * num_heads + head) * hd + c * 8) : zero;
    *reinterpret_cast<uint4*>(qs + r * L.ldq + c * 8) = v;
  }
  for (int i = t; i < kFlashRows * hd; i += kFlashThreads) os[i] = 0.0f;
  for (int i = t; i < kFlashRows; i += kFlashThreads) {
    mi[i] = -INFINITY;
    li[i] = 0.0f;
  }
  __syncthreads();

  const int tiles = last_pos / kFlashKeys + 1;
  for (int kt = 0; kt < tiles; ++kt) {
    const int j0 = kt * kFlashKeys;
    // Every thread issues all its 16-byte copies at once (cp.async, zero-filled past the last
    // visible key) and waits once: one round trip to memory per tile instead of one per copy.
    for (int i = t; i < kFlashKeys * chunks; i += kFlashThreads) {
      const int jj = i / chunks, c = i - jj * chunks, j = j0 + jj;
      const bool visible = j <= last_pos;
      const T* kp = cache;
      const T* vp = cache;
      if (visible) {
        const std::size_t blk = static_cast<std::size_t>(table[j / g.block_size]);
        const std::size_t in_block = (j % g.block_size) * te + static_cast<std::size_t>(kvh) * hd + c * 8;
        kp = cache + g.PlaneOffset(blk, layer, KvPart::kKey) + in_block;
        vp = cache + g.PlaneOffset(blk, layer, KvPart::kValue) + in_block;
      }
      FlashCpAsync16(ks + jj * L.ldq + c * 8, kp, visible ? 16 : 0);
      FlashCpAsync16(vs + jj * L.ldq + c * 8, vp, visible ? 16 : 0);
    }
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();

    // S = Q Kᵀ for this warp's 16 rows: K's [key][dim] rows are WMMA's column-major Kᵀ.
    for (int n = 0; n < kFlashKeys / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      FlashMma<T, wmma::col_major>(acc, qs + (warp * 16) * L.ldq, L.ldq, ks + (n * 16) * L.ldq, L.ldq, 1, hd);
      wmma::store_matrix_sync(ss + (warp * 16) * L.lds + n * 16, acc, L.lds, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax of the warp's rows; each lane holds keys lane and lane + 32.
    for (int rr = 0; rr < 16; ++rr) {
      const int r = warp * 16 + rr;
      const int pos = r < rows_here ? first_pos + r : -1;
      const float s0 = j0 + lane <= pos ? ss[r * L.lds + lane] * scale : -INFINITY;
      const float s1 = j0 + lane + 32 <= pos ? ss[r * L.lds + lane + 32] * scale : -INFINITY;
      const float m_old = mi[r];
      const float m_new = fmaxf(m_old, WarpMax(fmaxf(s0, s1)));
      const bool none = m_new == -INFINITY;  // a padding row, or no key visible yet
      const float p0 = none ? 0.0f : expf(s0 - m_new), p1 = none ? 0.0f : expf(s1 - m_new);
      const float sum = WarpSum(p0 + p1);
      ps[r * L.ldp + lane] = FromF<T>(p0);
      ps[r * L.ldp + lane + 32] = FromF<T>(p1);
      if (lane == 0) {
        const float c = none ? 1.0f : expf(m_old - m_new);
        corr[r] = c;
        li[r] = li[r] * c + sum;
        mi[r] = m_new;
      }
    }
    __syncwarp();

    // O = O · corr + P V, one 16 × 16 output fragment at a time through the warp's scratch.
    float* wt = tmp + warp * 256;
    for (int nf = 0; nf < hd / 16; ++nf) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      FlashMma<T, wmma::row_major>(acc, ps + (warp * 16) * L.ldp, L.ldp, vs + nf * 16, L.ldq, L.ldq, kFlashKeys);
      wmma::store_matrix_sync(wt, acc, 16, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 256; e += 32) {
        const int r = warp * 16 + (e >> 4);
        float* o = os + r * hd + nf * 16 + (e & 15);
        *o = *o * corr[r] + wt[e];
      }
      __syncwarp();
    }
    __syncthreads();  // the next tile overwrites ks and vs
  }

  for (int i = t; i < rows_here * hd; i += kFlashThreads) {
    const int r = i / hd, d = i - r * hd;
    out[(static_cast<std::size_t>(r0 + r) * num_heads + head) * hd + d] = FromF<T>(os[r * hd + d] / li[r]);
  }
#endif
}

}  // namespace mnemo::kernels::cuda
