// cuBLAS through dlopen (see cublas_loader.h). Only the few entry points Matmul needs are
// declared here, with the ABI of cublas_api.h (stable since CUDA 11): the build machines
// have no cuBLAS headers.
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda/cublas_loader.h"
#include "kernels/cuda/cuda_common.cuh"

namespace mnemo::kernels::cuda {
namespace {

using Handle = void*;
// cublasOperation_t, cublasComputeType_t, cublasGemmAlgo_t values from cublas_api.h.
constexpr int kOpN = 0, kOpT = 1;
constexpr int kCompute32F = 68;
constexpr int kGemmDefault = -1;
constexpr int kStatusSuccess = 0;

using CreateFn = int (*)(Handle*);
using SetStreamFn = int (*)(Handle, cudaStream_t);
using GetVersionFn = int (*)(Handle, int*);
using GemmExFn = int (*)(Handle, int, int, int, int, int, const void*, const void*, cudaDataType, int, const void*,
                         cudaDataType, int, const void*, void*, cudaDataType, int, int, int);

struct Loaded {
  CublasInfo info;
  Handle handle = nullptr;
  SetStreamFn set_stream = nullptr;
  GemmExFn gemm = nullptr;
};

std::vector<std::string> Candidates() {
  std::vector<std::string> out;
  if (const char* p = std::getenv("MNEMO_CUBLAS_LIB"); p != nullptr && *p != '\0') out.emplace_back(p);
  const std::string major = std::to_string(CUDART_VERSION / 1000);
  out.push_back("libcublas.so." + major);
  return out;
}

Loaded* Load() {
  auto* l = new Loaded();  // leaked on purpose: the handle lives as long as the process
  std::string errors;
  void* lib = nullptr;
  for (const std::string& name : Candidates()) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) {
      l->info.library = name;
      break;
    }
    const char* e = dlerror();
    errors += (errors.empty() ? "" : "; ") + name + ": " + (e ? e : "not found");
  }
  if (lib == nullptr) {
    l->info.error = errors;
    return l;
  }
  auto create = reinterpret_cast<CreateFn>(dlsym(lib, "cublasCreate_v2"));
  auto version = reinterpret_cast<GetVersionFn>(dlsym(lib, "cublasGetVersion_v2"));
  l->set_stream = reinterpret_cast<SetStreamFn>(dlsym(lib, "cublasSetStream_v2"));
  l->gemm = reinterpret_cast<GemmExFn>(dlsym(lib, "cublasGemmEx"));
  if (!create || !version || !l->set_stream || !l->gemm) {
    l->info.error = l->info.library + " lacks cublasCreate_v2/cublasGemmEx";
    return l;
  }
  if (create(&l->handle) != kStatusSuccess) {
    l->info.error = "cublasCreate failed (no device?)";
    return l;
  }
  version(l->handle, &l->info.version);
  if (l->info.version / 10000 != CUDART_VERSION / 1000) {
    l->info.error = "cuBLAS " + std::to_string(l->info.version) + " does not match CUDA runtime " +
                    std::to_string(CUDART_VERSION);
    return l;
  }
  l->info.loaded = true;
  return l;
}

Loaded& Instance() {
  static Loaded* l = Load();
  return *l;
}

}  // namespace

const CublasInfo& Cublas() { return Instance().info; }

Status CublasGemm(const DeviceBuffer& out, const DeviceBuffer& x, const DeviceBuffer& w, int m, int n, int k,
                  void* stream) {
  Loaded& l = Instance();
  if (!l.info.loaded) return Status::CudaUnavailable("cuBLAS not loaded: " + l.info.error);
  const cudaDataType t = out.dtype == DType::kF16 ? CUDA_R_16F : CUDA_R_16BF;
  // Row-major out[m, n] = x[m, k] · w[n, k]ᵀ is column-major outᵀ[n, m] = w · xᵀ: w is a
  // column-major [k, n] matrix (transposed), x a column-major [k, m] one.
  const float alpha = 1.0f, beta = 0.0f;
  if (l.set_stream(l.handle, static_cast<cudaStream_t>(stream)) != kStatusSuccess)
    return Status::CudaError("cublasSetStream failed");
  const int st = l.gemm(l.handle, kOpT, kOpN, n, m, k, &alpha, w.ptr, t, k, x.ptr, t, k, &beta, out.ptr, t, n,
                        kCompute32F, kGemmDefault);
  if (st != kStatusSuccess) return Status::CudaError("cublasGemmEx failed with status " + std::to_string(st));
  return Status::Ok();
}

}  // namespace mnemo::kernels::cuda
