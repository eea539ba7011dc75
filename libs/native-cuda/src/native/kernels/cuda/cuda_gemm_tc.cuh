// Tensor-core GEMM (WMMA, fp32 accumulation) for out[m, n] = x[m, k] · w[n, k]ᵀ, used by
// Matmul (cuda_matmul.cu) when cuBLAS is not loaded or not wanted.
//
// Tile: 128 × 128 outputs per block, k in steps of 32, eight warps each owning 64 × 32
// (4 × 2 fragments of 16 × 16). Both operands are staged in shared memory in two buffers
// filled with cp.async (sm_80+), so the next k step loads while this one multiplies.
// w's [n, k] rows are exactly WMMA's column-major B operand, so no transpose is needed.
//
// Every output element is accumulated over k in the same order (k steps ascending, 16 at a
// time) whatever m is and wherever the row sits in its tile: a row's result does not depend
// on the batch around it (the batch-invariant path, kTensorCoreInvariant, relies on this).
//
// Requirements checked by the caller: k % 8 == 0 and 16-byte aligned x and w (each
// cp.async moves 16 bytes of one row); other shapes take the SIMT kernel.
#pragma once

#include <mma.h>

#include "kernels/cuda/cuda_common.cuh"

namespace mnemo::kernels::cuda {

constexpr int kTcBm = 128, kTcBn = 128, kTcBk = 32;
constexpr int kTcLd = kTcBk + 8;  // padded row of a stage, in elements (a multiple of 8, as WMMA needs)
constexpr int kTcThreads = 256;

__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
#else
  // Pre-Ampere: a plain 16-byte load, zero-filled past src_bytes (which is 0 or 16 here).
  *static_cast<uint4*>(smem) = src_bytes > 0 ? *static_cast<const uint4*>(gmem) : make_uint4(0, 0, 0, 0);
#endif
}
__device__ __forceinline__ void CpAsyncCommit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int N>
__device__ __forceinline__ void CpAsyncWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

template <typename T>
__global__ void __launch_bounds__(kTcThreads) TensorCoreGemm(T* out, const T* x, const T* w, int m, int n, int k) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  namespace wmma = nvcuda::wmma;
  // [stage][A rows 0..127 | B rows 0..127][kTcLd]
  __shared__ __align__(128) T smem[2][(kTcBm + kTcBn) * kTcLd];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int wm = warp >> 2, wn = warp & 3;
  const int m0 = blockIdx.y * kTcBm, n0 = blockIdx.x * kTcBn;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  auto load_stage = [&](int stage, int k0) {
    T* a = smem[stage];
    T* b = a + kTcBm * kTcLd;
    // 128 rows × 4 chunks of 8 elements, for A and for B: 2 + 2 chunks per thread.
    for (int c = threadIdx.x; c < kTcBm * 4; c += kTcThreads) {
      const int row = c >> 2, kc = (c & 3) * 8, gk = k0 + kc;
      const int ar = m0 + row, br = n0 + row;
      const bool a_ok = ar < m && gk < k, b_ok = br < n && gk < k;
      CpAsync16(a + row * kTcLd + kc, a_ok ? x + static_cast<std::size_t>(ar) * k + gk : x, a_ok ? 16 : 0);
      CpAsync16(b + row * kTcLd + kc, b_ok ? w + static_cast<std::size_t>(br) * k + gk : w, b_ok ? 16 : 0);
    }
    CpAsyncCommit();
  };

  const int steps = (k + kTcBk - 1) / kTcBk;
  load_stage(0, 0);
  for (int s = 0; s < steps; ++s) {
    if (s + 1 < steps) {
      load_stage((s + 1) & 1, (s + 1) * kTcBk);
      CpAsyncWait<1>();
    } else {
      CpAsyncWait<0>();
    }
    __syncthreads();
    const T* a = smem[s & 1];
    const T* b = a + kTcBm * kTcLd;
#pragma unroll
    for (int kk = 0; kk < kTcBk; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa[4];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb[2];
#pragma unroll
      for (int i = 0; i < 4; ++i) wmma::load_matrix_sync(fa[i], a + (wm * 64 + i * 16) * kTcLd + kk, kTcLd);
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], b + (wn * 32 + j * 16) * kTcLd + kk, kTcLd);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();  // this stage is refilled by the load issued at the top of step s + 1
  }

  // Epilogue through a 16 × 16 fp32 scratch per warp (in the now idle stage buffers), so
  // edge tiles are clipped and the storage type converted element by element.
  float* scratch = reinterpret_cast<float*>(&smem[0][0]) + warp * 256;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const int r0 = m0 + wm * 64 + i * 16, c0 = n0 + wn * 32 + j * 16;
      for (int e = lane; e < 256; e += 32) {
        const int r = r0 + (e >> 4), c = c0 + (e & 15);
        if (r < m && c < n) out[static_cast<std::size_t>(r) * n + c] = FromF<T>(scratch[e]);
      }
      __syncwarp();
    }
#endif
}

}  // namespace mnemo::kernels::cuda
