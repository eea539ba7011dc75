// Paged KV cache kernels on the GPU: writeKv, grouped-query paged attention (tile-wise
// online softmax, keys in position order), block copies.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "kernels/batch_check.h"
#include "kernels/cuda/cuda_attention_flash.cuh"
#include "kernels/cuda/cuda_attention_split.cuh"
#include "kernels/cuda/cuda_common.cuh"

namespace mnemo::kernels::cuda {
namespace {

constexpr int kAttnThreads = 128;  // keys per tile == threads per block
constexpr int kMaxHeadDim = 256;   // two output dims per thread

template <typename T>
__global__ void WriteKvKernel(T* cache, const T* k, const T* v, const int32_t* slots, std::size_t rows, int32_t layer,
                              KvGeometry g) {
  const std::size_t te = g.TokenElems();
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= rows * te) return;
  const std::size_t r = i / te, e = i - r * te;
  const int32_t slot = slots[r];
  if (slot < 0) return;
  const std::size_t block = static_cast<std::size_t>(slot) / g.block_size;
  const std::size_t offset = (static_cast<std::size_t>(slot) % g.block_size) * te + e;
  cache[g.PlaneOffset(block, layer, KvPart::kKey) + offset] = k[i];
  cache[g.PlaneOffset(block, layer, KvPart::kValue) + offset] = v[i];
}

// grid (rows, num_heads), kAttnThreads threads. For each tile of kAttnThreads keys: thread t
// scores key j0+t, the block takes the tile max, rescales the running sum and output, and
// thread d accumulates output dims d and d + kAttnThreads over the tile's keys in order.
template <typename T>
__global__ void __launch_bounds__(kAttnThreads)
    PagedAttentionKernel(T* out, const T* q, const T* cache, int32_t layer, int num_heads, KvGeometry g,
                         const int32_t* query_start, const int32_t* context_len, const int32_t* tables,
                         int32_t num_seqs, int32_t max_blocks, float scale) {
  __shared__ float q_s[kMaxHeadDim];
  __shared__ float p_s[kAttnThreads];
  __shared__ float red[32];
  const int row = blockIdx.x, head = blockIdx.y, t = threadIdx.x;
  const int hd = g.head_dim;
  const int kv_head = head / (num_heads / g.num_kv_heads);

  int lo = 0, hi = num_seqs - 1;  // sequence of this row: last s with query_start[s] <= row
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (query_start[mid] <= row) lo = mid; else hi = mid - 1;
  }
  const int seq = lo;
  const int q_len = query_start[seq + 1] - query_start[seq];
  const int pos = context_len[seq] - q_len + (row - query_start[seq]);
  const int32_t* table = tables + static_cast<std::size_t>(seq) * max_blocks;

  const std::size_t q_off = (static_cast<std::size_t>(row) * num_heads + head) * hd;
  for (int d = t; d < hd; d += kAttnThreads) q_s[d] = ToF(q[q_off + d]);
  __syncthreads();

  const std::size_t te = g.TokenElems();
  float run_max = -INFINITY, run_sum = 0.0f, acc0 = 0.0f, acc1 = 0.0f;
  for (int j0 = 0; j0 <= pos; j0 += kAttnThreads) {
    const int j = j0 + t;
    float s = -INFINITY;
    if (j <= pos) {
      const std::size_t blk = static_cast<std::size_t>(table[j / g.block_size]);
      const T* key = cache + g.PlaneOffset(blk, layer, KvPart::kKey) + (j % g.block_size) * te +
                     static_cast<std::size_t>(kv_head) * hd;
      float dot = 0.0f;
      for (int d = 0; d < hd; ++d) dot += q_s[d] * ToF(key[d]);
      s = dot * scale;
    }
    const float new_max = fmaxf(run_max, BlockMax(s, red));
    const float p = j <= pos ? expf(s - new_max) : 0.0f;
    const float corr = expf(run_max - new_max);  // 0 on the first tile (run_max = -inf)
    run_sum = run_sum * corr + BlockSum(p, red);
    run_max = new_max;
    p_s[t] = p;
    __syncthreads();
    acc0 *= corr;
    acc1 *= corr;
    const int tile = min(kAttnThreads, pos - j0 + 1);
    for (int u = 0; u < tile; ++u) {
      const int jj = j0 + u;
      const std::size_t blk = static_cast<std::size_t>(table[jj / g.block_size]);
      const T* val = cache + g.PlaneOffset(blk, layer, KvPart::kValue) + (jj % g.block_size) * te +
                     static_cast<std::size_t>(kv_head) * hd;
      const float pu = p_s[u];
      if (t < hd) acc0 += pu * ToF(val[t]);
      if (t + kAttnThreads < hd) acc1 += pu * ToF(val[t + kAttnThreads]);
    }
    __syncthreads();  // p_s is rewritten by the next tile
  }
  const float inv = 1.0f / run_sum;
  if (t < hd) out[q_off + t] = FromF<T>(acc0 * inv);
  if (t + kAttnThreads < hd) out[q_off + t + kAttnThreads] = FromF<T>(acc1 * inv);
}

// grid (pairs, chunks): copies whole blocks; only used when no pair depends on another.
template <typename T>
__global__ void CopyBlocksKernel(T* cache, const int32_t* src, const int32_t* dst, std::size_t block_elems) {
  const std::size_t s = static_cast<std::size_t>(src[blockIdx.x]) * block_elems;
  const std::size_t d = static_cast<std::size_t>(dst[blockIdx.x]) * block_elems;
  for (std::size_t i = blockIdx.y * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < block_elems;
       i += static_cast<std::size_t>(gridDim.y) * blockDim.x)
    cache[d + i] = cache[s + i];
}

}  // namespace

Status WriteKv(const DeviceBuffer& cache, const DeviceBuffer& k, const DeviceBuffer& v, const int32_t* slots,
               std::size_t rows, int32_t layer, const KvGeometry& geom) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&cache, &k, &v}));
  const std::size_t num_blocks = cache.elements / geom.BlockElems();
  if (layer < 0 || layer >= geom.num_layers) return Status::OutOfRange("layer out of range");
  for (std::size_t r = 0; r < rows; ++r)
    if (slots[r] >= 0 && static_cast<std::size_t>(slots[r]) >= num_blocks * geom.block_size)
      return Status::OutOfRange("slot out of range");
  if (rows == 0) return Status::Ok();
  std::lock_guard<std::mutex> lock(ComputeLane());
  const int32_t* d_slots;
  MNEMO_RETURN_IF_ERROR(UploadInts({{slots, rows}}, &d_slots));
  const std::size_t work = rows * geom.TokenElems();
  MNEMO_DISPATCH_DTYPE(cache.dtype, WriteKvKernel<T><<<Blocks(work, 256), 256, 0, ComputeStream()>>>(
                                        static_cast<T*>(cache.ptr), static_cast<const T*>(k.ptr),
                                        static_cast<const T*>(v.ptr), d_slots, rows, layer, geom));
  return LaunchStatus("writeKv");
}

namespace {

// kAuto first: the names list in the warning for an unknown MNEMO_CUDA_ATTENTION is in this order.
constexpr PathSetting<AttentionPath>::Named kAttentionPaths[] = {{AttentionPath::kAuto, "auto"},
                                                                 {AttentionPath::kSimple, "simple"},
                                                                 {AttentionPath::kSplit, "split"},
                                                                 {AttentionPath::kFlash, "flash"}};
PathSetting<AttentionPath> g_attn_path("MNEMO_CUDA_ATTENTION", kAttentionPaths);

int SmCount() {
  static const int sms = [] {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      cudaGetLastError();
      return 100;
    }
    return n;
  }();
  return sms;
}

bool Aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// A launch of the simple kernel: one block per (row, head).
Status SimpleAttention(const DeviceBuffer& out, const DeviceBuffer& q, const DeviceBuffer& cache, int32_t layer,
                       std::size_t num_heads, const KvGeometry& geom, const AttentionBatch& batch, float scale,
                       std::size_t rows, const int32_t* const* d) {
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(num_heads));
  MNEMO_DISPATCH_DTYPE(out.dtype, PagedAttentionKernel<T><<<grid, kAttnThreads, 0, ComputeStream()>>>(
                                      static_cast<T*>(out.ptr), static_cast<const T*>(q.ptr),
                                      static_cast<const T*>(cache.ptr), layer, static_cast<int>(num_heads), geom, d[0],
                                      d[1], d[2], batch.num_seqs, batch.max_blocks_per_seq, scale));
  return LaunchStatus("pagedAttention (simple)");
}

Status SplitAttention(const DeviceBuffer& out, const DeviceBuffer& q, const DeviceBuffer& cache, int32_t layer,
                      std::size_t num_heads, const KvGeometry& geom, const AttentionBatch& batch, float scale,
                      std::size_t rows, const int32_t* const* d) {
  const int group = static_cast<int>(num_heads) / geom.num_kv_heads, hd = geom.head_dim;
  int max_ctx = 1;
  for (int32_t s = 0; s < batch.num_seqs; ++s) max_ctx = std::max(max_ctx, batch.context_len[s]);
  // The slice: as long as shared memory allows (scores of the group), halved until the grid
  // has a few blocks per multiprocessor.
  int slice = 1024;
  while (slice > 64 && SplitSmemFloats(group, hd, slice) * 4 > 40 * 1024) slice /= 2;
  while (slice > 64 && static_cast<long long>(rows) * geom.num_kv_heads * ((max_ctx + slice - 1) / slice) < 4LL * SmCount())
    slice /= 2;
  const int max_slices = (max_ctx + slice - 1) / slice;
  const std::size_t parts = rows * num_heads * static_cast<std::size_t>(max_slices);
  void* scratch = nullptr;
  MNEMO_RETURN_IF_ERROR(TakeScratch(parts * (static_cast<std::size_t>(hd) + 2) * sizeof(float), &scratch));
  // Kernels on the compute stream read it before any later op can take it again.
  struct Give { void* p; ~Give() { PutScratch(p); } } give{scratch};
  float* part_out = static_cast<float*>(scratch);
  float* part_max = part_out + parts * hd;
  float* part_sum = part_max + parts;
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(geom.num_kv_heads), static_cast<unsigned>(max_slices));
  const std::size_t smem = static_cast<std::size_t>(SplitSmemFloats(group, hd, slice)) * sizeof(float);
  MNEMO_DISPATCH_DTYPE(out.dtype, SplitAttentionKernel<T><<<grid, kSplitThreads, smem, ComputeStream()>>>(
                                      part_out, part_max, part_sum, static_cast<const T*>(q.ptr),
                                      static_cast<const T*>(cache.ptr), layer, static_cast<int>(num_heads), geom, d[0],
                                      d[1], d[2], batch.num_seqs, batch.max_blocks_per_seq, scale, slice, max_slices));
  MNEMO_RETURN_IF_ERROR(LaunchStatus("pagedAttention (split)"));
  const dim3 mgrid(static_cast<unsigned>(rows), static_cast<unsigned>(num_heads));
  const unsigned threads = static_cast<unsigned>((hd + 31) / 32 * 32);
  MNEMO_DISPATCH_DTYPE(out.dtype, MergeSlicesKernel<T><<<mgrid, threads, 0, ComputeStream()>>>(
                                      static_cast<T*>(out.ptr), part_out, part_max, part_sum,
                                      static_cast<int>(num_heads), hd, max_slices));
  return LaunchStatus("pagedAttention (merge)");
}

Status FlashAttention(const DeviceBuffer& out, const DeviceBuffer& q, const DeviceBuffer& cache, int32_t layer,
                      std::size_t num_heads, const KvGeometry& geom, const AttentionBatch& batch, float scale) {
  std::vector<int32_t> tile_seq, tile_row0;
  for (int32_t s = 0; s < batch.num_seqs; ++s)
    for (int32_t r = batch.query_start[s]; r < batch.query_start[s + 1]; r += kFlashRows) {
      tile_seq.push_back(s);
      tile_row0.push_back(r);
    }
  if (tile_seq.empty()) return Status::Ok();
  const std::size_t ns = static_cast<std::size_t>(batch.num_seqs);
  const int32_t* d[5];
  MNEMO_RETURN_IF_ERROR(UploadInts({{batch.query_start, ns + 1},
                                    {batch.context_len, ns},
                                    {batch.block_tables, ns * static_cast<std::size_t>(batch.max_blocks_per_seq)},
                                    {tile_seq.data(), tile_seq.size()},
                                    {tile_row0.data(), tile_row0.size()}},
                                   d));
  const FlashLayout lay = MakeFlashLayout(geom.head_dim);
  const dim3 grid(static_cast<unsigned>(tile_seq.size()), static_cast<unsigned>(num_heads));
  MNEMO_DISPATCH_DTYPE(out.dtype, {
    // Per storage type, once: the kernel's shared-memory limit, raised to what the largest
    // head_dim it takes (128) needs, so a smaller model's first call does not cap a later one.
    static std::once_flag once;
    std::call_once(once, [] {
      cudaFuncSetAttribute(FlashPrefillKernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(MakeFlashLayout(128).total));
    });
    FlashPrefillKernel<T><<<grid, kFlashThreads, lay.total, ComputeStream()>>>(
        static_cast<T*>(out.ptr), static_cast<const T*>(q.ptr), static_cast<const T*>(cache.ptr), layer,
        static_cast<int>(num_heads), geom, d[0], d[1], d[2], batch.max_blocks_per_seq, d[3], d[4], scale);
  });
  return LaunchStatus("pagedAttention (flash)");
}

}  // namespace

const char* AttentionPathName(AttentionPath path) { return g_attn_path.Name(path); }

AttentionPath RequestedAttentionPath() { return g_attn_path.Get(); }

void SetAttentionPath(AttentionPath path) { g_attn_path.Set(path); }

Status PagedAttention(const DeviceBuffer& out, const DeviceBuffer& q, const DeviceBuffer& cache, int32_t layer,
                      std::size_t num_heads, const KvGeometry& geom, const AttentionBatch& batch, float scale) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&out, &q, &cache}));
  if (geom.head_dim > kMaxHeadDim) return Status::InvalidArgument("head_dim above 256 is not supported on cuda");
  if (geom.num_kv_heads <= 0 || num_heads % geom.num_kv_heads != 0)
    return Status::InvalidArgument("num_heads must be a multiple of num_kv_heads");
  if (layer < 0 || layer >= geom.num_layers) return Status::OutOfRange("layer out of range");
  const std::size_t rows = batch.num_seqs > 0 ? static_cast<std::size_t>(batch.query_start[batch.num_seqs]) : 0;
  if (const char* why = CheckAttentionBatch(batch, geom, cache.elements / geom.BlockElems(), rows))
    return Status::InvalidArgument(why);
  if (rows == 0) return Status::Ok();

  int longest_run = 0;
  for (int32_t s = 0; s < batch.num_seqs; ++s)
    longest_run = std::max(longest_run, batch.query_start[s + 1] - batch.query_start[s]);
  const int hd = geom.head_dim, group = static_cast<int>(num_heads) / geom.num_kv_heads;
  const bool aligned = Aligned16(q.ptr) && Aligned16(cache.ptr) && Aligned16(out.ptr);
  const bool split_fits = aligned && hd % 8 == 0 && group <= kSplitMaxGroup;
  const bool flash_fits = aligned && hd % 16 == 0 && hd <= 128;
  AttentionPath path = RequestedAttentionPath();
  if (path == AttentionPath::kAuto) path = longest_run >= 32 ? AttentionPath::kFlash : AttentionPath::kSplit;
  if (path == AttentionPath::kFlash && !flash_fits) path = AttentionPath::kSplit;
  if (path == AttentionPath::kSplit && !split_fits) path = AttentionPath::kSimple;

  std::lock_guard<std::mutex> lock(ComputeLane());
  if (path == AttentionPath::kFlash) return FlashAttention(out, q, cache, layer, num_heads, geom, batch, scale);
  const std::size_t ns = static_cast<std::size_t>(batch.num_seqs);
  const int32_t* d[3];
  MNEMO_RETURN_IF_ERROR(UploadInts({{batch.query_start, ns + 1},
                                    {batch.context_len, ns},
                                    {batch.block_tables, ns * static_cast<std::size_t>(batch.max_blocks_per_seq)}},
                                   d));
  if (path == AttentionPath::kSplit) return SplitAttention(out, q, cache, layer, num_heads, geom, batch, scale, rows, d);
  return SimpleAttention(out, q, cache, layer, num_heads, geom, batch, scale, rows, d);
}

Status CopyBlocks(const DeviceBuffer& cache, const int32_t* src, const int32_t* dst, std::size_t count,
                  const KvGeometry& geom) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&cache}));
  const std::size_t num_blocks = cache.elements / geom.BlockElems();
  for (std::size_t i = 0; i < count; ++i)
    if (src[i] < 0 || dst[i] < 0 || static_cast<std::size_t>(src[i]) >= num_blocks ||
        static_cast<std::size_t>(dst[i]) >= num_blocks)
      return Status::OutOfRange("block id out of range");
  if (count == 0) return Status::Ok();
  // Pairs apply in order. One launch is only equivalent when no pair reads or writes a
  // block another pair writes; otherwise copy pair by pair.
  std::unordered_set<int32_t> written;
  bool independent = true;
  for (std::size_t i = 0; i < count && independent; ++i) independent = written.insert(dst[i]).second;
  for (std::size_t i = 0; i < count && independent; ++i) independent = src[i] == dst[i] || !written.count(src[i]);
  std::lock_guard<std::mutex> lock(ComputeLane());
  const std::size_t be = geom.BlockElems(), bytes = be * 2;
  if (!independent) {
    for (std::size_t i = 0; i < count; ++i) {
      if (src[i] == dst[i]) continue;
      char* base = static_cast<char*>(cache.ptr);
      MNEMO_RETURN_IF_ERROR(FromCuda(cudaMemcpyAsync(base + dst[i] * bytes, base + src[i] * bytes, bytes,
                                                     cudaMemcpyDeviceToDevice, ComputeStream()),
                                     "cudaMemcpyAsync(copyBlocks)"));
    }
    return Status::Ok();
  }
  const int32_t* d[2];
  MNEMO_RETURN_IF_ERROR(UploadInts({{src, count}, {dst, count}}, d));
  const dim3 grid(static_cast<unsigned>(count), static_cast<unsigned>(std::min<std::size_t>(64, Blocks(be, 256))));
  MNEMO_DISPATCH_DTYPE(cache.dtype, CopyBlocksKernel<T><<<grid, 256, 0, ComputeStream()>>>(static_cast<T*>(cache.ptr), d[0], d[1], be));
  return LaunchStatus("copyBlocks");
}

}  // namespace mnemo::kernels::cuda
