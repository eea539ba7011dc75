// The kernel contract's ops seen from the host, so one set of cases runs on any backend:
// NaiveOps (double-precision loops written from the op's definition), CpuOps (the addon's
// CPU kernels) and CudaOps (the addon's CUDA kernels: upload, run, download). Every array is
// host memory; in-place ops (rope, writeKv, copyBlocks) update the host array they are given.
// Stored() says how a backend holds an input (identity on the CPU, rounded to 16 bits on
// the GPU): both sides of a comparison start from the stored values, so what is left is the
// op's own error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kv_layout.h"

namespace mnemo::check {

using kernels::AttentionBatch;
using kernels::KvGeometry;

class HostOps {
 public:
  virtual ~HostOps() = default;
  virtual std::string Name() const = 0;
  virtual std::vector<float> Stored(const std::vector<float>& v) { return v; }

  virtual void Embedding(float* out, const float* table, std::size_t vocab, const int32_t* ids, std::size_t rows,
                         std::size_t dim) = 0;
  virtual void RmsNorm(float* out, const float* x, const float* w, std::size_t rows, std::size_t dim, float eps) = 0;
  virtual void Matmul(float* out, const float* x, const float* w, std::size_t m, std::size_t n, std::size_t k) = 0;
  // packWeight followed by matmulPacked, as the engine calls them.
  virtual void PackedMatmul(float* out, const float* x, const float* w, std::size_t m, std::size_t n,
                            std::size_t k) = 0;
  virtual void Rope(float* x, const int32_t* pos, std::size_t rows, std::size_t heads, std::size_t head_dim,
                    float theta) = 0;
  virtual void SiluMul(float* out, const float* gate, const float* up, std::size_t n) = 0;
  virtual void Add(float* out, const float* a, const float* b, std::size_t n) = 0;
  virtual void AddBias(float* out, const float* x, const float* bias, std::size_t rows, std::size_t n) = 0;
  // cache [num_blocks, num_layers, 2, block_size, kv_heads, head_dim]
  virtual void WriteKv(float* cache, std::size_t num_blocks, const float* k, const float* v, const int32_t* slots,
                       std::size_t rows, int32_t layer, const KvGeometry& g) = 0;
  virtual void PagedAttention(float* out, const float* q, const float* cache, std::size_t num_blocks, int32_t layer,
                              std::size_t heads, const KvGeometry& g, const AttentionBatch& b, float scale) = 0;
  virtual void CopyBlocks(float* cache, std::size_t num_blocks, const int32_t* src, const int32_t* dst,
                          std::size_t count, const KvGeometry& g) = 0;
  virtual void Argmax(int32_t* out, const float* x, std::size_t rows, std::size_t n) = 0;
  virtual void Softmax(float* out, const float* x, std::size_t rows, std::size_t n, float scale) = 0;
};

std::unique_ptr<HostOps> MakeNaiveOps();
std::unique_ptr<HostOps> MakeCpuOps();
// nullptr with *why set when CUDA is not compiled in or no device is usable.
// dtype: "bf16" or "f16".
std::unique_ptr<HostOps> MakeCudaOps(const std::string& dtype, std::string* why);
// Forces the CUDA backend's attention path ("auto", "simple", "split", "flash"); false without CUDA.
bool SetCudaAttentionPath(const std::string& name);

}  // namespace mnemo::check
