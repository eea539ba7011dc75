// The core's view of the CUDA runtime: device discovery and pinned host memory.
// Implemented by cuda_runtime.cu when nvcc was found (MNEMO_WITH_CUDA), otherwise by
// cuda_runtime_none.cc, which reports that CUDA was not compiled in. Nothing here needs a
// device to be present: without one the calls return kCudaUnavailable or a zero count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace mnemo::cuda {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  uint64_t total_memory = 0;  // bytes
  int multiprocessors = 0;
};

struct CudaInfo {
  bool compiled = false;       // MNEMO_WITH_CUDA
  int device_count = 0;        // 0 when none is usable
  int runtime_version = 0;     // e.g. 13000; 0 when not compiled
  int driver_version = 0;      // 0 when no driver
  std::string error;           // why device_count is 0, e.g. "cudaErrorInsufficientDriver: ..."
  std::vector<DeviceInfo> devices;
};

// Queries the runtime. Safe to call without a device or driver. Not cached.
CudaInfo QueryCudaInfo();

// Page-locked host memory (cudaHostAlloc). kCudaUnavailable when not compiled with CUDA,
// kCudaError when the runtime refuses (no device, no driver, out of pinned memory).
// On success *out is at least 4096-byte aligned.
Status PinnedHostAlloc(size_t bytes, void** out);
// Frees memory from PinnedHostAlloc; errors are ignored because this runs in finalizers,
// possibly after the CUDA runtime began unloading at process exit.
void PinnedHostFree(void* ptr);

// Page-locks existing host memory (cudaHostRegister, portable) so copies to and from a
// device run asynchronously. Same failure codes as PinnedHostAlloc.
Status RegisterHost(void* ptr, size_t bytes);
// Undoes RegisterHost; errors ignored for the same reason as PinnedHostFree.
void UnregisterHost(void* ptr);

}  // namespace mnemo::cuda
