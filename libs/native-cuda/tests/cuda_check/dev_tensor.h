// A device tensor of the check harness, freed on scope exit: what the op checks and the
// device timings allocate their device memory through.
#pragma once

#ifdef MNEMO_WITH_CUDA
#include <cstddef>

#include "kernels/cuda/cuda_kernels.h"
#include "must.h"

namespace mnemo::check {

class Dev {
 public:
  Dev(kernels::cuda::DType dt, std::size_t n) { Must(kernels::cuda::Alloc(&buf_, n, dt), "alloc"); }
  Dev(kernels::cuda::DType dt, const float* src, std::size_t n) : Dev(dt, n) {
    Must(kernels::cuda::Upload(buf_, src, n), "upload");
  }
  ~Dev() { kernels::cuda::Free(&buf_); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  const kernels::cuda::DeviceBuffer& operator*() const { return buf_; }
  const kernels::cuda::DeviceBuffer* operator->() const { return &buf_; }
  void To(float* dst, std::size_t n) const { Must(kernels::cuda::Download(dst, buf_, n), "download"); }

 private:
  kernels::cuda::DeviceBuffer buf_;
};

}  // namespace mnemo::check
#endif
