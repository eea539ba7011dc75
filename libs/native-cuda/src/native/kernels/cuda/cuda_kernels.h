// CUDA backend of the reference-engine kernels: fp16 or bf16 storage, fp32 accumulation.
// Host-callable API in plain C++ (no CUDA headers), implemented by the .cu files of this
// folder, which are compiled only when nvcc was found (MNEMO_WITH_CUDA); callers guard with
// that macro. Shapes and semantics are those of kernels/cpu/cpu_kernels.h.
//
// Execution: every op is enqueued on the compute stream (a non-blocking stream of its own), so
// ops run in call order; Download(), Argmax() and Synchronize() wait for it. Copies that
// should overlap compute (swaps, tier copies) go on a separate copy stream (cuda_copy.h) and
// meet the compute stream only through events. Integer arguments (ids, positions, slots,
// batch tables) are host pointers; each call copies them into a device scratch area on the
// compute stream before launching.
// Thread safety: compute-lane calls are serialised by the compute lane's mutex (the scratch
// is shared); copy-lane calls never take it.
// Batch invariance: only the `tensor-core-invariant` GEMM path promises it (one kernel for
// every m, a fixed k order per element); cuBLAS and the m <= 8 SIMT kernel of the other
// paths choose kernels by shape, so a row's result may change with the batch it sits in.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "kernels/kv_layout.h"

namespace mnemo::kernels::cuda {

enum class DType : int { kF16 = 0, kBF16 = 1 };

// A device allocation of `elements` values of `dtype`. Owned by whoever called Alloc; release
// with Free exactly once (Free nulls ptr, so a second Free is a no-op).
struct DeviceBuffer {
  void* ptr = nullptr;
  std::size_t elements = 0;
  DType dtype = DType::kF16;
};

Status Alloc(DeviceBuffer* out, std::size_t elements, DType dtype);  // zero-filled

// Waits until every op enqueued on the compute stream so far has finished.
Status Synchronize();

// How Matmul computes. kAuto: cuBLAS when it could be loaded (cublas_loader.h), else the
// tensor-core kernel (SIMT below m = 9). The environment variable MNEMO_CUDA_GEMM
// (auto | cublas | tensor-core | tensor-core-invariant | simt) picks the initial path.
enum class GemmPath : int { kAuto = 0, kCublas = 1, kTensorCore = 2, kTensorCoreInvariant = 3, kSimt = 4 };
const char* GemmPathName(GemmPath path);
// Fails with kCudaUnavailable when `path` is kCublas and cuBLAS could not be loaded.
Status SetGemmPath(GemmPath path);
GemmPath RequestedGemmPath();
// The path a Matmul of m rows takes now (never kAuto).
GemmPath EffectiveGemmPath(std::size_t m);
void Free(DeviceBuffer* buf);
// Converts n floats (round to nearest even) into dst[0, n).
Status Upload(const DeviceBuffer& dst, const float* src, std::size_t n);
// Synchronises, then converts src[0, n) into n floats.
Status Download(float* dst, const DeviceBuffer& src, std::size_t n);

Status Embedding(const DeviceBuffer& out, const DeviceBuffer& table, const int32_t* ids, std::size_t rows,
                 std::size_t dim);
Status RmsNorm(const DeviceBuffer& out, const DeviceBuffer& x, const DeviceBuffer& weight, std::size_t rows,
               std::size_t dim, float eps);
Status Matmul(const DeviceBuffer& out, const DeviceBuffer& x, const DeviceBuffer& w, std::size_t m, std::size_t n,
              std::size_t k);
Status Rope(const DeviceBuffer& x, const int32_t* positions, std::size_t rows, std::size_t num_heads,
            std::size_t head_dim, float theta);
Status SiluMul(const DeviceBuffer& out, const DeviceBuffer& gate, const DeviceBuffer& up, std::size_t n);
Status Add(const DeviceBuffer& out, const DeviceBuffer& a, const DeviceBuffer& b, std::size_t n);
Status AddBias(const DeviceBuffer& out, const DeviceBuffer& x, const DeviceBuffer& bias, std::size_t rows,
               std::size_t n);
// cache [num_blocks, num_layers, 2, block_size, kv_heads, head_dim]; num_blocks derives from its size.
Status WriteKv(const DeviceBuffer& cache, const DeviceBuffer& k, const DeviceBuffer& v, const int32_t* slots,
               std::size_t rows, int32_t layer, const KvGeometry& geom);
// How PagedAttention computes (MNEMO_CUDA_ATTENTION picks the initial path: auto | simple |
// split | flash). kSimple: one block per (query row, head) walking every key. kSplit: the
// context split into slices, one block per (row, kv head, slice), slices merged after
// (flash-decoding). kFlash: tensor-core tiles of 64 query rows × 64 keys with an online softmax
// (prefill chunks). kAuto: flash for batches with a query run of 32 rows or more, split
// otherwise. A path a shape does not fit (head_dim, alignment, group size) falls back:
// flash → split → simple. Results agree within the storage type's tolerance, not bit for bit.
enum class AttentionPath : int { kAuto = 0, kSimple = 1, kSplit = 2, kFlash = 3 };
const char* AttentionPathName(AttentionPath path);
void SetAttentionPath(AttentionPath path);
AttentionPath RequestedAttentionPath();

// head_dim <= 256. The batch's arrays are host memory.
Status PagedAttention(const DeviceBuffer& out, const DeviceBuffer& q, const DeviceBuffer& cache, int32_t layer,
                      std::size_t num_heads, const KvGeometry& geom, const AttentionBatch& batch, float scale);
Status CopyBlocks(const DeviceBuffer& cache, const int32_t* src, const int32_t* dst, std::size_t count,
                  const KvGeometry& geom);
// out: host array [rows].
Status Argmax(int32_t* out, const DeviceBuffer& x, std::size_t rows, std::size_t n);
Status Softmax(const DeviceBuffer& out, const DeviceBuffer& x, std::size_t rows, std::size_t n, float scale);

}  // namespace mnemo::kernels::cuda
