// Device buffers (alloc/free/upload/download) and the integer-argument scratch.
//
// Every device buffer, the per-step activations of a forward pass included, comes from a
// size-class cache: cudaMalloc and cudaFree synchronise the device, and a pass allocates and
// frees the same shapes every step. MNEMO_CUDA_POOL_BYTES caps what the cache keeps (default
// 1 GiB; 0 turns caching off); a failed cudaMalloc empties it and tries again.
#include <cstdlib>
#include <string>
#include <vector>

#include "core/size_class_pool.h"
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

std::size_t PoolCapBytes() {
  const char* v = std::getenv("MNEMO_CUDA_POOL_BYTES");
  if (v == nullptr || *v == '\0') return std::size_t{1} << 30;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return (end != nullptr && *end == '\0') ? static_cast<std::size_t>(n) : std::size_t{1} << 30;
}

SizeClassPool& DevicePool() {
  // Leaked on purpose, like the scratch: no cudaFree from static destructors at exit.
  static SizeClassPool* pool = new SizeClassPool(
      [](std::size_t bytes, void** out) {
        cudaError_t err = cudaMalloc(out, bytes);
        if (err == cudaErrorMemoryAllocation) {
          cudaGetLastError();  // clear it, so the next launch check does not report it again
          *out = nullptr;
          return Status::OutOfMemory("cudaMalloc of " + std::to_string(bytes) + " bytes failed");
        }
        return FromCuda(err, "cudaMalloc");
      },
      [](void* p) { cudaFree(p); },  // errors ignored: this also runs from finalizers at exit
      PoolCapBytes());
  return *pool;
}

}  // namespace

Status TakeScratch(std::size_t bytes, void** out) { return DevicePool().Take(bytes, out); }
void PutScratch(void* ptr) { DevicePool().Put(ptr); }

std::mutex& ComputeLane() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

namespace {

// Leaked on purpose, like the pool: destroying streams from static destructors races the
// runtime's teardown. Creation failures (no device) leave the stream null, the legacy
// default stream, so the first op reports the runtime's own error instead of crashing here.
cudaStream_t NewStream(int priority) {
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority) != cudaSuccess) {
    cudaGetLastError();
    s = nullptr;
  }
  return s;
}

}  // namespace

cudaStream_t ComputeStream() {
  static cudaStream_t s = NewStream(0);
  return s;
}

cudaStream_t CopyStream() {
  // Lower priority than compute (a larger number): a swap's copy engine work never delays a
  // kernel launch; the copies themselves run on the DMA engines either way.
  static cudaStream_t s = [] {
    int least = 0, greatest = 0;
    if (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess) cudaGetLastError();
    return NewStream(least);
  }();
  return s;
}

Status UploadInts(std::initializer_list<std::pair<const int32_t*, std::size_t>> arrays, const int32_t** device_out) {
  IntScratch& s = Scratch();
  std::size_t total = 0;
  for (const auto& a : arrays) total += a.second;
  if (total > s.capacity) {
    // cudaFree waits for the device, so kernels still reading the old scratch finish first.
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
  return FromCuda(cudaMemcpyAsync(s.ptr, s.host.data(), total * sizeof(int32_t), cudaMemcpyHostToDevice,
                                  ComputeStream()),
                  "cudaMemcpyAsync(int args)");
}

Status Synchronize() { return FromCuda(cudaStreamSynchronize(ComputeStream()), "cudaStreamSynchronize(compute)"); }

Status Alloc(DeviceBuffer* out, std::size_t elements, DType dtype) {
  std::lock_guard<std::mutex> lock(ComputeLane());
  *out = DeviceBuffer{nullptr, elements, dtype};
  const std::size_t bytes = (elements == 0 ? 1 : elements) * ElementSize(dtype);
  MNEMO_RETURN_IF_ERROR(DevicePool().Take(bytes, &out->ptr));
  // Stream-ordered, no device sync: a reused buffer is zeroed like a fresh one.
  return FromCuda(cudaMemsetAsync(out->ptr, 0, bytes, ComputeStream()), "cudaMemsetAsync");
}

void Free(DeviceBuffer* buf) {
  if (buf->ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(ComputeLane());
  // Compute work still reading the buffer is queued on ComputeStream() ahead of any later
  // use of it, so handing it back without a sync is safe. Copy-lane users (swaps) must be
  // waited for by their owner before the buffer is freed (cuda_swap.h says so).
  DevicePool().Put(buf->ptr);
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
  void* p = nullptr;
  MNEMO_RETURN_IF_ERROR(DevicePool().Take((n == 0 ? 1 : n) * sizeof(float), &p));
  *staging = static_cast<float*>(p);
  return Status::Ok();
}

// Staging goes back to the cache; the compute stream orders its reuse after the conversion.
struct FreeStaging {
  float* p;
  ~FreeStaging() { DevicePool().Put(p); }
};

// Runs `convert(staging)` under the compute lane with fp32 staging for n elements of `t`,
// which must hold them (`too_large` otherwise); nothing when n is 0.
template <typename Convert>
Status Converting(const DeviceBuffer& t, std::size_t n, const char* too_large, Convert&& convert) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&t}));
  if (n > t.elements) return Status::OutOfRange(too_large);
  if (n == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(ComputeLane());
  float* staging = nullptr;
  MNEMO_RETURN_IF_ERROR(WithStaging(n, &staging));
  FreeStaging guard{staging};
  return convert(staging);
}

}  // namespace

Status Upload(const DeviceBuffer& dst, const float* src, std::size_t n) {
  return Converting(dst, n, "upload larger than the tensor", [&](float* staging) {
    MNEMO_RETURN_IF_ERROR(
        FromCuda(cudaMemcpyAsync(staging, src, n * sizeof(float), cudaMemcpyHostToDevice, ComputeStream()),
                 "cudaMemcpyAsync(upload)"));
    MNEMO_DISPATCH_DTYPE(dst.dtype, FromFloatKernel<T><<<Blocks(n, 256), 256, 0, ComputeStream()>>>(static_cast<T*>(dst.ptr), staging, n));
    return LaunchStatus("upload convert");
  });
}

Status Download(float* dst, const DeviceBuffer& src, std::size_t n) {
  return Converting(src, n, "download larger than the tensor", [&](float* staging) {
    MNEMO_DISPATCH_DTYPE(src.dtype, ToFloatKernel<T><<<Blocks(n, 256), 256, 0, ComputeStream()>>>(staging, static_cast<const T*>(src.ptr), n));
    MNEMO_RETURN_IF_ERROR(LaunchStatus("download convert"));
    MNEMO_RETURN_IF_ERROR(FromCuda(
        cudaMemcpyAsync(dst, staging, n * sizeof(float), cudaMemcpyDeviceToHost, ComputeStream()),
        "cudaMemcpyAsync(download)"));
    // Download() synchronises: `dst` may be pinned, where the copy returns before it lands.
    return FromCuda(cudaStreamSynchronize(ComputeStream()), "cudaStreamSynchronize(download)");
  });
}

}  // namespace mnemo::kernels::cuda
