// CUDA runtime implementation of core/cuda/cuda_runtime.h (compiled only with nvcc).
#include <cuda_runtime_api.h>

#include <string>

#include "core/cuda/cuda_runtime.h"

namespace mnemo::cuda {
namespace {

std::string ErrorText(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

}  // namespace

CudaInfo QueryCudaInfo() {
  CudaInfo info;
  info.compiled = true;
  cudaRuntimeGetVersion(&info.runtime_version);
  if (cudaDriverGetVersion(&info.driver_version) != cudaSuccess) info.driver_version = 0;

  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    info.error = ErrorText(err);
    // The runtime keeps the failure as its sticky "last error"; clear it so later calls
    // report their own results.
    cudaGetLastError();
    return info;
  }
  if (count == 0) {
    info.error = "no CUDA device";
    return info;
  }
  info.device_count = count;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    DeviceInfo dev;
    dev.ordinal = d;
    dev.name = prop.name;
    dev.compute_major = prop.major;
    dev.compute_minor = prop.minor;
    dev.total_memory = prop.totalGlobalMem;
    dev.multiprocessors = prop.multiProcessorCount;
    info.devices.push_back(std::move(dev));
  }
  return info;
}

namespace {

// The status of a pinning call (cudaHostAlloc, cudaHostRegister): a failure clears the
// sticky error, and running out of memory is told apart from other CUDA errors.
Status PinStatus(cudaError_t err) {
  if (err == cudaSuccess) return Status::Ok();
  cudaGetLastError();
  if (err == cudaErrorMemoryAllocation) return Status::OutOfMemory(ErrorText(err));
  return Status::CudaError(ErrorText(err));
}

}  // namespace

Status PinnedHostAlloc(size_t bytes, void** out) {
  *out = nullptr;
  // Portable: the memory counts as pinned for every device context, not just the current.
  const cudaError_t err = cudaHostAlloc(out, bytes, cudaHostAllocPortable);
  if (err != cudaSuccess) *out = nullptr;
  return PinStatus(err);
}

void PinnedHostFree(void* ptr) {
  if (ptr != nullptr) cudaFreeHost(ptr);
}

Status RegisterHost(void* ptr, size_t bytes) { return PinStatus(cudaHostRegister(ptr, bytes, cudaHostRegisterPortable)); }

void UnregisterHost(void* ptr) {
  if (ptr != nullptr && cudaHostUnregister(ptr) != cudaSuccess) cudaGetLastError();
}

}  // namespace mnemo::cuda
