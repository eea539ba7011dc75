// cuBLAS, loaded at run time when it is there. The CUDA homes Mnemo builds on ship only the
// runtime, and the addon must never need more than the driver, so cuBLAS is dlopen'ed, never
// linked: MNEMO_CUBLAS_LIB names the library (e.g. the libcublas.so.13 inside PyTorch's
// `nvidia-cublas` wheel), else the loader tries the sonames of this build's CUDA major. A
// library of another major is refused (its runtime would not match ours).
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"
#include "kernels/cuda/cuda_kernels.h"

namespace mnemo::kernels::cuda {

struct CublasInfo {
  bool loaded = false;
  std::string library;  // the path or soname that loaded
  int version = 0;      // cublasGetVersion, e.g. 130100
  std::string error;    // why it is not loaded
};

// Loads on first call (thread-safe); later calls return the same answer.
const CublasInfo& Cublas();

// out[m, n] = x[m, k] · w[n, k]ᵀ with cuBLAS on `stream` (a cudaStream_t), fp32 accumulation.
// Callers hold the compute lane. kCudaUnavailable when cuBLAS is not loaded.
Status CublasGemm(const DeviceBuffer& out, const DeviceBuffer& x, const DeviceBuffer& w, int m, int n, int k,
                  void* stream);

}  // namespace mnemo::kernels::cuda
