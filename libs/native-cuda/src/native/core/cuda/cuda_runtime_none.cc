// Fallback for builds without nvcc: CUDA is reported as not compiled in.
#ifndef MNEMO_WITH_CUDA

#include "core/cuda/cuda_runtime.h"

namespace mnemo::cuda {

CudaInfo QueryCudaInfo() {
  CudaInfo info;
  info.error = "built without CUDA (nvcc was not found at build time)";
  return info;
}

Status PinnedHostAlloc(size_t bytes, void** out) {
  *out = nullptr;
  return Status::CudaUnavailable("built without CUDA");
}

void PinnedHostFree(void* ptr) {}

Status RegisterHost(void* ptr, size_t bytes) { return Status::CudaUnavailable("built without CUDA"); }

void UnregisterHost(void* ptr) {}

}  // namespace mnemo::cuda

#endif  // MNEMO_WITH_CUDA
