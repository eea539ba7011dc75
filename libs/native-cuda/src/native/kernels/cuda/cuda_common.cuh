// Internals shared by the CUDA kernel files: storage-type conversions, dtype dispatch,
// block reductions, error mapping and the integer-argument scratch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>

#include "core/status.h"
#include "kernels/cuda/cuda_kernels.h"

namespace mnemo::kernels::cuda {

__device__ __forceinline__ float ToF(__half v) { return __half2float(v); }
__device__ __forceinline__ float ToF(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T FromF(float v);
template <> __device__ __forceinline__ __half FromF<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 FromF<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

inline Status FromCuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::Ok();
  return Status::CudaError(std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

// Checks the launch just made (configuration errors surface here; faults at the next sync).
inline Status LaunchStatus(const char* what) { return FromCuda(cudaGetLastError(), what); }

inline Status SameDtype(std::initializer_list<const DeviceBuffer*> bufs) {
  const DType d = (*bufs.begin())->dtype;
  for (const DeviceBuffer* b : bufs) {
    if (b->dtype != d) return Status::InvalidArgument("tensors of one op must share a dtype");
    if (b->ptr == nullptr) return Status::InvalidArgument("tensor was freed");
  }
  return Status::Ok();
}

// Runs `body` with T bound to the storage type of `dtype`.
#define MNEMO_DISPATCH_DTYPE(dtype, ...)           \
  do {                                             \
    if ((dtype) == DType::kF16) {                  \
      using T = __half;                            \
      __VA_ARGS__;                                 \
    } else {                                       \
      using T = __nv_bfloat16;                     \
      __VA_ARGS__;                                 \
    }                                              \
  } while (0)

// The compute lane: every kernel and every compute-side copy (uploads, downloads, integer
// arguments) is enqueued on ComputeStream() under ComputeLane(), so ops run in call order and
// share one integer scratch. Copies that may overlap compute (swaps, tier copies:
// cuda_swap.h) run on CopyStream() and never take this lock; they meet the compute lane only
// through events. Both are non-blocking streams: nothing here uses the legacy default stream,
// which would serialise them again.
std::mutex& ComputeLane();
cudaStream_t ComputeStream();
cudaStream_t CopyStream();

// Short-lived device scratch from the same size-class cache as every device buffer (no
// cudaMalloc/cudaFree, which synchronise the device, on a per-step path).
Status TakeScratch(std::size_t bytes, void** out);
void PutScratch(void* ptr);

// Copies a few host int32 arrays into one device scratch area with a single transfer and
// returns their device addresses. Valid until the next call; callers hold ComputeLane().
// NOTE: the copy is enqueued on ComputeStream() behind earlier kernels, so overwriting the
// scratch never races a kernel still reading the previous call's values; a pageable source
// is staged by the driver before the call returns, so the host side may be reused at once.
Status UploadInts(std::initializer_list<std::pair<const int32_t*, std::size_t>> arrays, const int32_t** device_out);

__device__ __forceinline__ float WarpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float WarpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Block-wide reductions; blockDim.x must be a multiple of 32 (<= 1024). `shared` holds 32
// floats. Every thread gets the result. Contains __syncthreads: call from all threads.
__device__ __forceinline__ float BlockSum(float v, float* shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = WarpSum(v);
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < warps ? shared[lane] : 0.0f;
  return WarpSum(v);
}
__device__ __forceinline__ float BlockMax(float v, float* shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = WarpMax(v);
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < warps ? shared[lane] : -INFINITY;
  return WarpMax(v);
}

inline unsigned Blocks(std::size_t n, unsigned threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace mnemo::kernels::cuda
