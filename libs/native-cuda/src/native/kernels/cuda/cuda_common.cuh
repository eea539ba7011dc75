// Internals shared by the CUDA kernel files: storage-type conversions, dtype dispatch,
// block reductions, error mapping and the integer-argument scratch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// A kernel path setting (GemmPath, AttentionPath) and the paths' names: what the process
// stored with Set*, else environment variable `var` read on first use — unset or empty is
// kAuto, a path's name that path, anything else kAuto with a warning. Constant-initialised
// from a static table, so it is ready before any static constructor could ask.
template <typename Path>
class PathSetting {
 public:
  struct Named {
    Path path;
    const char* name;
  };

  template <std::size_t N>
  constexpr PathSetting(const char* var, const Named (&names)[N]) : var_(var), names_(names), count_(N) {}

  const char* Name(Path path) const {
    for (std::size_t i = 0; i < count_; ++i)
      if (names_[i].path == path) return names_[i].name;
    return "unknown";
  }

  Path Get() {
    int p = slot_.load();
    if (p == kUnread) {
      int expected = kUnread;
      slot_.compare_exchange_strong(expected, static_cast<int>(FromEnv()));
      p = slot_.load();
    }
    return static_cast<Path>(p);
  }
  void Set(Path path) { slot_.store(static_cast<int>(path)); }

 private:
  static constexpr int kUnread = -1;

  Path FromEnv() const {
    const char* v = std::getenv(var_);
    if (v == nullptr || *v == '\0') return Path::kAuto;
    std::string choices;
    for (std::size_t i = 0; i < count_; ++i) {
      if (std::strcmp(v, names_[i].name) == 0) return names_[i].path;
      choices += (i == 0 ? "" : "|") + std::string(names_[i].name);
    }
    std::fprintf(stderr, "mnemo: %s=%s is not one of %s; using auto\n", var_, v, choices.c_str());
    return Path::kAuto;
  }

  const char* var_;
  const Named* names_;
  std::size_t count_;
  std::atomic<int> slot_{kUnread};
};

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
// `warp_reduce` is the warp's reduction, `identity` what a missing warp contributes.
template <typename WarpReduce>
__device__ __forceinline__ float BlockReduce(float v, float* shared, float identity, WarpReduce warp_reduce) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_reduce(v);
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < warps ? shared[lane] : identity;
  return warp_reduce(v);
}
__device__ __forceinline__ float BlockSum(float v, float* shared) {
  return BlockReduce(v, shared, 0.0f, [](float x) { return WarpSum(x); });
}
__device__ __forceinline__ float BlockMax(float v, float* shared) {
  return BlockReduce(v, shared, -INFINITY, [](float x) { return WarpMax(x); });
}

inline unsigned Blocks(std::size_t n, unsigned threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace mnemo::kernels::cuda
