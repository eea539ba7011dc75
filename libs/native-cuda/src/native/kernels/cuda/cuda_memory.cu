// Device buffers (alloc/free/upload/download) and the integer-argument scratch.
#include <vector>

#include "kernels/cuda/cuda_common.cuh"

namespace mnemo::kernels::cuda {

namespace {

struct IntScratch {
  int32_t* ptr = nullptr;
  std::size_t capacity = 0;  // elements
  std::vector<int32_t> host;
};

IntScratch& Scratch() {
  // Leaked on purpose: freeing device memory from a static destructor races the runtime's
  // own teardown at process exit.
  static IntScratch* s = new IntScratch();
  return *s;
}

std::size_t ElementSize(DType) { return 2; }  // both storage types are 16-bit

}  // namespace

std::mutex& OpMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

Status UploadInts(std::initializer_list<std::pair<const int32_t*, std::size_t>> arrays, const int32_t** device_out) {
  IntScratch& s = Scratch();
  std::size_t total = 0;
  for (const auto& a : arrays) total += a.second;
  if (total > s.capacity) {
    if (s.ptr) cudaFree(s.ptr);
    s.ptr = nullptr;
    s.capacity = 0;
    const std::size_t cap = total < 4096 ? 4096 : total * 2;
    MNEMO_RETURN_IF_ERROR(FromCuda(cudaMalloc(&s.ptr, cap * sizeof(int32_t)), "cudaMalloc(int scratch)"));
    s.capacity = cap;
  }
  s.host.clear();
  std::size_t i = 0;
  for (const auto& a : arrays) {
    device_out[i++] = s.ptr + s.host.size();
    s.host.insert(s.host.end(), a.first, a.first + a.second);
  }
  if (total == 0) return Status::Ok();
  return FromCuda(cudaMemcpy(s.ptr, s.host.data(), total * sizeof(int32_t), cudaMemcpyHostToDevice),
                  "cudaMemcpy(int args)");
}

Status Alloc(DeviceBuffer* out, std::size_t elements, DType dtype) {
  std::lock_guard<std::mutex> lock(OpMutex());
  *out = DeviceBuffer{nullptr, elements, dtype};
  const std::size_t bytes = (elements == 0 ? 1 : elements) * ElementSize(dtype);
  cudaError_t err = cudaMalloc(&out->ptr, bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear it, so the next launch check does not report it again
    out->ptr = nullptr;
    return Status::OutOfMemory("cudaMalloc of " + std::to_string(bytes) + " bytes failed");
  }
  MNEMO_RETURN_IF_ERROR(FromCuda(err, "cudaMalloc"));
  return FromCuda(cudaMemset(out->ptr, 0, bytes), "cudaMemset");
}

void Free(DeviceBuffer* buf) {
  if (buf->ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(OpMutex());
  cudaFree(buf->ptr);  // errors ignored: this also runs from finalizers at exit
  buf->ptr = nullptr;
}

namespace {

template <typename T>
__global__ void FromFloatKernel(T* dst, const float* src, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) dst[i] = FromF<T>(src[i]);
}

template <typename T>
__global__ void ToFloatKernel(float* dst, const T* src, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) dst[i] = ToF(src[i]);
}

// fp32 staging on the device so conversion runs there (one fp32 transfer, no host loop).
Status WithStaging(std::size_t n, float** staging) {
  return FromCuda(cudaMalloc(staging, (n == 0 ? 1 : n) * sizeof(float)), "cudaMalloc(staging)");
}

}  // namespace

Status Upload(const DeviceBuffer& dst, const float* src, std::size_t n) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&dst}));
  if (n > dst.elements) return Status::OutOfRange("upload larger than the tensor");
  if (n == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(OpMutex());
  float* staging = nullptr;
  MNEMO_RETURN_IF_ERROR(WithStaging(n, &staging));
  // cudaFree synchronises, so the staging buffer outlives the conversion kernel.
  struct FreeStaging { float* p; ~FreeStaging() { cudaFree(p); } } guard{staging};
  MNEMO_RETURN_IF_ERROR(
      FromCuda(cudaMemcpy(staging, src, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy(upload)"));
  MNEMO_DISPATCH_DTYPE(dst.dtype, FromFloatKernel<T><<<Blocks(n, 256), 256>>>(static_cast<T*>(dst.ptr), staging, n));
  return LaunchStatus("upload convert");
}

Status Download(float* dst, const DeviceBuffer& src, std::size_t n) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&src}));
  if (n > src.elements) return Status::OutOfRange("download larger than the tensor");
  if (n == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(OpMutex());
  float* staging = nullptr;
  MNEMO_RETURN_IF_ERROR(WithStaging(n, &staging));
  struct FreeStaging { float* p; ~FreeStaging() { cudaFree(p); } } guard{staging};
  MNEMO_DISPATCH_DTYPE(src.dtype, ToFloatKernel<T><<<Blocks(n, 256), 256>>>(staging, static_cast<const T*>(src.ptr), n));
  MNEMO_RETURN_IF_ERROR(LaunchStatus("download convert"));
  return FromCuda(cudaMemcpy(dst, staging, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy(download)");
}

}  // namespace mnemo::kernels::cuda
