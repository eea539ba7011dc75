// out[m, n] = x[m, k] · w[n, k]ᵀ on the GPU, fp32 accumulation, by one of four paths
// (GemmPath in cuda_kernels.h): cuBLAS when it can be loaded at run time (cublas_loader.h),
// the tensor-core WMMA kernel (cuda_gemm_tc.cuh), or the SIMT kernels below: a tiled GEMM
// and a warp-per-column kernel for decode-sized m (memory bound on w).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/cuda/cublas_loader.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_gemm_tc.cuh"

namespace mnemo::kernels::cuda {
namespace {

constexpr int kBm = 64, kBn = 64, kBk = 16;  // block tile; 256 threads, 4x4 outputs each
constexpr int kSkinnyM = 8;                  // m at or below this takes the warp-per-column kernel
constexpr int kSkinnyWarps = 8;

template <typename T>
__global__ void __launch_bounds__(256) TiledGemm(T* out, const T* x, const T* w, int m, int n, int k) {
  __shared__ float xs[kBk][kBm + 4];  // transposed: k outer, so the inner loop reads rows contiguously
  __shared__ float ws[kBk][kBn + 4];
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const int m0 = blockIdx.y * kBm, n0 = blockIdx.x * kBn;
  const int load_row = t / 4, load_k = (t % 4) * 4;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < k; k0 += kBk) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int kk = k0 + load_k + e;
      const int xr = m0 + load_row, wr = n0 + load_row;
      xs[load_k + e][load_row] = (xr < m && kk < k) ? ToF(x[static_cast<std::size_t>(xr) * k + kk]) : 0.0f;
      ws[load_k + e][load_row] = (wr < n && kk < k) ? ToF(w[static_cast<std::size_t>(wr) * k + kk]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBk; ++kk) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = xs[kk][ty * 4 + i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = ws[kk][tx * 4 + j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int r = m0 + ty * 4 + i, c = n0 + tx * 4 + j;
      if (r < m && c < n) out[static_cast<std::size_t>(r) * n + c] = FromF<T>(acc[i][j]);
    }
}

// One warp per output column: the warp streams w[col, :] once (coalesced) for all m rows.
template <typename T>
__global__ void SkinnyGemm(T* out, const T* x, const T* w, int m, int n, int k) {
  const int lane = threadIdx.x & 31;
  const int col = blockIdx.x * kSkinnyWarps + (threadIdx.x >> 5);
  if (col >= n) return;
  const T* wr = w + static_cast<std::size_t>(col) * k;
  float acc[kSkinnyM] = {};
  for (int p = lane; p < k; p += 32) {
    const float wv = ToF(wr[p]);
#pragma unroll
    for (int i = 0; i < kSkinnyM; ++i)
      if (i < m) acc[i] += ToF(x[static_cast<std::size_t>(i) * k + p]) * wv;
  }
#pragma unroll
  for (int i = 0; i < kSkinnyM; ++i) {
    if (i >= m) break;
    const float v = WarpSum(acc[i]);
    if (lane == 0) out[static_cast<std::size_t>(i) * n + col] = FromF<T>(v);
  }
}

// kAuto first: the names list in the warning for an unknown MNEMO_CUDA_GEMM is in this order.
constexpr PathSetting<GemmPath>::Named kGemmPaths[] = {{GemmPath::kAuto, "auto"},
                                                       {GemmPath::kCublas, "cublas"},
                                                       {GemmPath::kTensorCore, "tensor-core"},
                                                       {GemmPath::kTensorCoreInvariant, "tensor-core-invariant"},
                                                       {GemmPath::kSimt, "simt"}};
PathSetting<GemmPath> g_path("MNEMO_CUDA_GEMM", kGemmPaths);

bool TensorCoreFits(const DeviceBuffer& x, const DeviceBuffer& w, std::size_t k) {
  return k % 8 == 0 && reinterpret_cast<std::uintptr_t>(x.ptr) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(w.ptr) % 16 == 0;
}

}  // namespace

const char* GemmPathName(GemmPath path) { return g_path.Name(path); }

GemmPath RequestedGemmPath() { return g_path.Get(); }

Status SetGemmPath(GemmPath path) {
  if (path == GemmPath::kCublas && !Cublas().loaded)
    return Status::CudaUnavailable("cuBLAS not loaded: " + Cublas().error);
  g_path.Set(path);
  return Status::Ok();
}

GemmPath EffectiveGemmPath(std::size_t m) {
  GemmPath p = RequestedGemmPath();
  if (p == GemmPath::kCublas && !Cublas().loaded) p = GemmPath::kAuto;  // set by the environment
  if (p == GemmPath::kAuto) p = Cublas().loaded ? GemmPath::kCublas : GemmPath::kTensorCore;
  if (p == GemmPath::kTensorCore && m <= static_cast<std::size_t>(kSkinnyM)) return GemmPath::kSimt;
  return p;
}

Status Matmul(const DeviceBuffer& out, const DeviceBuffer& x, const DeviceBuffer& w, std::size_t m, std::size_t n,
              std::size_t k) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&out, &x, &w}));
  if (m == 0 || n == 0) return Status::Ok();
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) return Status::InvalidArgument("matmul dims exceed int32");
  std::lock_guard<std::mutex> lock(ComputeLane());
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const GemmPath path = EffectiveGemmPath(m);
  if (path == GemmPath::kCublas) return CublasGemm(out, x, w, mi, ni, ki, ComputeStream());
  if ((path == GemmPath::kTensorCore || path == GemmPath::kTensorCoreInvariant) && TensorCoreFits(x, w, k)) {
    const dim3 grid(Blocks(n, kTcBn), Blocks(m, kTcBm));
    MNEMO_DISPATCH_DTYPE(out.dtype, TensorCoreGemm<T><<<grid, kTcThreads, 0, ComputeStream()>>>(
                                        static_cast<T*>(out.ptr), static_cast<const T*>(x.ptr),
                                        static_cast<const T*>(w.ptr), mi, ni, ki));
    return LaunchStatus("matmul (tensor cores)");
  }
  if (m <= kSkinnyM && path != GemmPath::kTensorCoreInvariant) {
    MNEMO_DISPATCH_DTYPE(out.dtype, SkinnyGemm<T><<<Blocks(n, kSkinnyWarps), kSkinnyWarps * 32, 0, ComputeStream()>>>(
                                        static_cast<T*>(out.ptr), static_cast<const T*>(x.ptr),
                                        static_cast<const T*>(w.ptr), mi, ni, ki));
  } else {
    const dim3 grid(Blocks(n, kBn), Blocks(m, kBm));
    MNEMO_DISPATCH_DTYPE(out.dtype, TiledGemm<T><<<grid, 256, 0, ComputeStream()>>>(static_cast<T*>(out.ptr), static_cast<const T*>(x.ptr),
                                                                static_cast<const T*>(w.ptr), mi, ni, ki));
  }
  return LaunchStatus("matmul");
}

}  // namespace mnemo::kernels::cuda
