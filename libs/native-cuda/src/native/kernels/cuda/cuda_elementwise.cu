// Row-wise and element-wise CUDA kernels: embedding, RMSNorm, RoPE, SwiGLU, add, bias,
// argmax and softmax. fp32 arithmetic on 16-bit storage.
#include <vector>

#include "kernels/cuda/cuda_common.cuh"

namespace mnemo::kernels::cuda {
namespace {

constexpr unsigned kThreads = 256;

template <typename T>
__global__ void EmbeddingKernel(T* out, const T* table, const int32_t* ids, std::size_t rows, std::size_t dim) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= rows * dim) return;
  const std::size_t r = i / dim;
  out[i] = table[static_cast<std::size_t>(ids[r]) * dim + (i - r * dim)];
}

// One block per row.
template <typename T>
__global__ void RmsNormKernel(T* out, const T* x, const T* w, std::size_t dim, float eps) {
  __shared__ float red[32];
  const T* xr = x + blockIdx.x * dim;
  T* o = out + blockIdx.x * dim;
  float ss = 0.0f;
  for (std::size_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float v = ToF(xr[i]);
    ss += v * v;
  }
  const float inv = rsqrtf(BlockSum(ss, red) / static_cast<float>(dim) + eps);
  for (std::size_t i = threadIdx.x; i < dim; i += blockDim.x) o[i] = FromF<T>(ToF(w[i]) * (ToF(xr[i]) * inv));
}

// One thread per (row, head, i < head_dim/2) pair.
template <typename T>
__global__ void RopeKernel(T* x, const int32_t* pos, std::size_t rows, std::size_t heads, std::size_t hd, float theta) {
  const std::size_t half = hd / 2;
  const std::size_t t = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (t >= rows * heads * half) return;
  const std::size_t i = t % half, rh = t / half, r = rh / heads;
  const float inv_freq = 1.0f / powf(theta, static_cast<float>(2 * i) / static_cast<float>(hd));
  const float angle = static_cast<float>(pos[r]) * inv_freq;
  float s, c;
  sincosf(angle, &s, &c);  // precise version (no --use_fast_math): angles reach thousands of radians
  T* v = x + rh * hd;
  const float a = ToF(v[i]), b = ToF(v[i + half]);
  v[i] = FromF<T>(a * c - b * s);
  v[i + half] = FromF<T>(b * c + a * s);
}

// out[i] = Op::Apply(a[i], b[i]), computed in fp32.
template <typename T, typename Op>
__global__ void BinaryKernel(T* out, const T* a, const T* b, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = FromF<T>(Op::Apply(ToF(a[i]), ToF(b[i])));
}

struct SiluMulOp {
  __device__ __forceinline__ static float Apply(float g, float up) { return g / (1.0f + expf(-g)) * up; }
};
struct AddOp {
  __device__ __forceinline__ static float Apply(float a, float b) { return a + b; }
};

template <typename T>
__global__ void AddBiasKernel(T* out, const T* x, const T* bias, std::size_t rows, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < rows * n) out[i] = FromF<T>(ToF(x[i]) + ToF(bias[i % n]));
}

// One block per row; ties go to the lowest index, NaN never wins (as on the CPU).
template <typename T>
__global__ void ArgmaxKernel(int32_t* out, const T* x, std::size_t n) {
  __shared__ float best_v[kThreads];
  __shared__ int32_t best_i[kThreads];
  const T* xr = x + blockIdx.x * n;
  float bv = -INFINITY;
  int32_t bi = -1;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = ToF(xr[i]);
    if (!isnan(v) && (bi < 0 || v > bv)) {
      bv = v;
      bi = static_cast<int32_t>(i);
    }
  }
  best_v[threadIdx.x] = bv;
  best_i[threadIdx.x] = bi;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) {
      const float ov = best_v[threadIdx.x + stride];
      const int32_t oi = best_i[threadIdx.x + stride];
      const int32_t mi = best_i[threadIdx.x];
      if (oi >= 0 && (mi < 0 || ov > best_v[threadIdx.x] || (ov == best_v[threadIdx.x] && oi < mi))) {
        best_v[threadIdx.x] = ov;
        best_i[threadIdx.x] = oi;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = best_i[0] < 0 ? 0 : best_i[0];
}

template <typename T>
__global__ void SoftmaxKernel(T* out, const T* x, std::size_t n, float scale) {
  __shared__ float red[32];
  const T* xr = x + blockIdx.x * n;
  T* o = out + blockIdx.x * n;
  float mx = -INFINITY;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) mx = fmaxf(mx, ToF(xr[i]) * scale);
  mx = BlockMax(mx, red);
  float sum = 0.0f;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) sum += expf(ToF(xr[i]) * scale - mx);
  const float inv = 1.0f / BlockSum(sum, red);
  // Recomputing exp instead of storing it keeps out aliasable with x.
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) o[i] = FromF<T>(expf(ToF(xr[i]) * scale - mx) * inv);
}

}  // namespace

Status Embedding(const DeviceBuffer& out, const DeviceBuffer& table, const int32_t* ids, std::size_t rows,
                 std::size_t dim) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&out, &table}));
  if (rows * dim == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(ComputeLane());
  const int32_t* d_ids;
  MNEMO_RETURN_IF_ERROR(UploadInts({{ids, rows}}, &d_ids));
  MNEMO_DISPATCH_DTYPE(out.dtype, EmbeddingKernel<T><<<Blocks(rows * dim, kThreads), kThreads, 0, ComputeStream()>>>(
                                      static_cast<T*>(out.ptr), static_cast<const T*>(table.ptr), d_ids, rows, dim));
  return LaunchStatus("embedding");
}

Status RmsNorm(const DeviceBuffer& out, const DeviceBuffer& x, const DeviceBuffer& weight, std::size_t rows,
               std::size_t dim, float eps) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&out, &x, &weight}));
  if (rows == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(ComputeLane());
  MNEMO_DISPATCH_DTYPE(out.dtype, RmsNormKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, ComputeStream()>>>(
                                      static_cast<T*>(out.ptr), static_cast<const T*>(x.ptr),
                                      static_cast<const T*>(weight.ptr), dim, eps));
  return LaunchStatus("rmsnorm");
}

Status Rope(const DeviceBuffer& x, const int32_t* positions, std::size_t rows, std::size_t num_heads,
            std::size_t head_dim, float theta) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&x}));
  const std::size_t work = rows * num_heads * (head_dim / 2);
  if (work == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(ComputeLane());
  const int32_t* d_pos;
  MNEMO_RETURN_IF_ERROR(UploadInts({{positions, rows}}, &d_pos));
  MNEMO_DISPATCH_DTYPE(x.dtype, RopeKernel<T><<<Blocks(work, kThreads), kThreads, 0, ComputeStream()>>>(static_cast<T*>(x.ptr), d_pos, rows,
                                                                                    num_heads, head_dim, theta));
  return LaunchStatus("rope");
}

namespace {

template <typename Op>
Status Binary(const char* what, const DeviceBuffer& out, const DeviceBuffer& a, const DeviceBuffer& b, std::size_t n) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&out, &a, &b}));
  if (n == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(ComputeLane());
  MNEMO_DISPATCH_DTYPE(out.dtype, BinaryKernel<T, Op><<<Blocks(n, kThreads), kThreads, 0, ComputeStream()>>>(
                                      static_cast<T*>(out.ptr), static_cast<const T*>(a.ptr),
                                      static_cast<const T*>(b.ptr), n));
  return LaunchStatus(what);
}

}  // namespace

Status SiluMul(const DeviceBuffer& out, const DeviceBuffer& gate, const DeviceBuffer& up, std::size_t n) {
  return Binary<SiluMulOp>("siluMul", out, gate, up, n);
}

Status Add(const DeviceBuffer& out, const DeviceBuffer& a, const DeviceBuffer& b, std::size_t n) {
  return Binary<AddOp>("add", out, a, b, n);
}

Status AddBias(const DeviceBuffer& out, const DeviceBuffer& x, const DeviceBuffer& bias, std::size_t rows,
               std::size_t n) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&out, &x, &bias}));
  if (rows * n == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(ComputeLane());
  MNEMO_DISPATCH_DTYPE(out.dtype, AddBiasKernel<T><<<Blocks(rows * n, kThreads), kThreads, 0, ComputeStream()>>>(
                                      static_cast<T*>(out.ptr), static_cast<const T*>(x.ptr),
                                      static_cast<const T*>(bias.ptr), rows, n));
  return LaunchStatus("addBias");
}

Status Argmax(int32_t* out, const DeviceBuffer& x, std::size_t rows, std::size_t n) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&x}));
  if (rows == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(ComputeLane());
  void* scratch = nullptr;
  MNEMO_RETURN_IF_ERROR(TakeScratch(rows * sizeof(int32_t), &scratch));
  int32_t* d_out = static_cast<int32_t*>(scratch);
  // The stream is synchronised below before the buffer goes back.
  struct FreeOut { void* p; ~FreeOut() { PutScratch(p); } } guard{scratch};
  MNEMO_DISPATCH_DTYPE(x.dtype, ArgmaxKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, ComputeStream()>>>(
                                    d_out, static_cast<const T*>(x.ptr), n));
  MNEMO_RETURN_IF_ERROR(LaunchStatus("argmax"));
  MNEMO_RETURN_IF_ERROR(FromCuda(
      cudaMemcpyAsync(out, d_out, rows * sizeof(int32_t), cudaMemcpyDeviceToHost, ComputeStream()), "cudaMemcpyAsync(argmax)"));
  // `out` may be pinned memory, where the copy above returns before it lands.
  return FromCuda(cudaStreamSynchronize(ComputeStream()), "cudaStreamSynchronize(argmax)");
}

Status Softmax(const DeviceBuffer& out, const DeviceBuffer& x, std::size_t rows, std::size_t n, float scale) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&out, &x}));
  if (rows == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(ComputeLane());
  MNEMO_DISPATCH_DTYPE(out.dtype, SoftmaxKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, ComputeStream()>>>(
                                      static_cast<T*>(out.ptr), static_cast<const T*>(x.ptr), n, scale));
  return LaunchStatus("softmax");
}

}  // namespace mnemo::kernels::cuda
