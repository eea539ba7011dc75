// Split-context paged attention for decode-sized query counts (flash-decoding): one block per
// (query row, kv head, slice of the context). The block's kv head serves all G = heads /
// kv_heads query heads at once, so each key and value is read once for the group. Each half
// warp scores one key (16-byte loads, 8 elements a lane, a 16-lane reduction), the block keeps
// the slice's scores in shared memory, takes their max and sum, and accumulates the slice's
// values; a second kernel merges the slices' (max, sum, output) with the usual rescaling.
// Requirements checked by the caller: head_dim % 8 == 0, head_dim <= 256, G <= 16, 16-byte
// aligned cache and q.
#pragma once

#include "kernels/cuda/cuda_common.cuh"

namespace mnemo::kernels::cuda {

constexpr int kSplitThreads = 128;
constexpr int kSplitMaxGroup = 16;

MNEMO_HD inline int SplitSmemFloats(int group, int hd, int slice) {
  const int chunks = hd / 8;
  const int scores = group * (hd + slice);
  const int groups = kSplitThreads % chunks == 0 ? kSplitThreads / chunks : 0;
  return scores > groups * group * hd ? scores : groups * group * hd;
}

// Shared memory: q [G][hd] then scores [G][slice], floats; at least (128 / (hd / 8)) · G · hd
// floats, which the value phase reuses for its key groups' partial sums (SplitSmemFloats).
template <typename T>
__global__ void __launch_bounds__(kSplitThreads)
    SplitAttentionKernel(float* part_out, float* part_max, float* part_sum, const T* q, const T* cache, int32_t layer,
                         int num_heads, KvGeometry g, const int32_t* query_start, const int32_t* context_len,
                         const int32_t* tables, int32_t num_seqs, int32_t max_blocks, float scale, int slice,
                         int max_slices) {
  extern __shared__ __align__(16) float split_smem[];
  const int row = blockIdx.x, kvh = blockIdx.y, z = blockIdx.z, t = threadIdx.x;
  const int hd = g.head_dim, group = num_heads / g.num_kv_heads;
  float* q_s = split_smem;
  float* s_s = split_smem + group * hd;

  int lo = 0, hi = num_seqs - 1;  // this row's sequence: the last s with query_start[s] <= row
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (query_start[mid] <= row) lo = mid; else hi = mid - 1;
  }
  const int seq = lo;
  const int pos = context_len[seq] - (query_start[seq + 1] - query_start[seq]) + (row - query_start[seq]);
  const int k0 = z * slice, k1 = min(pos + 1, k0 + slice);
  const std::size_t part = (static_cast<std::size_t>(row) * num_heads + kvh * group) * max_slices + z;
  if (k0 >= k1) {  // this slice lies past the row's position
    for (int gi = t; gi < group; gi += kSplitThreads) {
      part_max[part + static_cast<std::size_t>(gi) * max_slices] = -INFINITY;
      part_sum[part + static_cast<std::size_t>(gi) * max_slices] = 0.0f;
    }
    return;
  }
  const int32_t* table = tables + static_cast<std::size_t>(seq) * max_blocks;
  for (int i = t; i < group * hd; i += kSplitThreads) {
    const int gi = i / hd, d = i - gi * hd;
    q_s[i] = ToF(q[(static_cast<std::size_t>(row) * num_heads + kvh * group + gi) * hd + d]);
  }
  __syncthreads();

  const std::size_t te = g.TokenElems();
  const int sub = (t >> 4) & 1, lane = t & 15, chunks = hd / 8;
  // The loop bound is uniform across a warp (its two half warps take keys jw and jw + 1), so
  // every lane reaches the shuffles below.
  for (int jw = k0 + (t >> 5) * 2; jw < k1; jw += kSplitThreads / 16) {
    const int j = jw + sub;
    const bool valid = j < k1;
    float dot[kSplitMaxGroup];
#pragma unroll
    for (int gi = 0; gi < kSplitMaxGroup; ++gi) dot[gi] = 0.0f;
    const T* key = nullptr;
    if (valid) {
      const std::size_t blk = static_cast<std::size_t>(table[j / g.block_size]);
      key = cache + g.PlaneOffset(blk, layer, KvPart::kKey) + (j % g.block_size) * te + static_cast<std::size_t>(kvh) * hd;
    }
    for (int c = lane; valid && c < chunks; c += 16) {
      const uint4 raw = *reinterpret_cast<const uint4*>(key + c * 8);
      const T* kv = reinterpret_cast<const T*>(&raw);
      float kf[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) kf[e] = ToF(kv[e]);
#pragma unroll
      for (int gi = 0; gi < kSplitMaxGroup; ++gi) {
        if (gi >= group) break;
        const float* qq = q_s + gi * hd + c * 8;
#pragma unroll
        for (int e = 0; e < 8; ++e) dot[gi] += qq[e] * kf[e];
      }
    }
#pragma unroll
    for (int gi = 0; gi < kSplitMaxGroup; ++gi) {
      if (gi >= group) break;
      float v = dot[gi];
#pragma unroll
      for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o, 16);
      if (valid && lane == 0) s_s[gi * slice + (j - k0)] = v * scale;
    }
  }
  __syncthreads();

  // The slice's max and sum per query head: warp w handles heads w, w + 4, ...
  const int n = k1 - k0, warp = t >> 5, wl = t & 31;
  for (int gi = warp; gi < group; gi += kSplitThreads / 32) {
    float* s = s_s + gi * slice;
    float mx = -INFINITY;
    for (int i = wl; i < n; i += 32) mx = fmaxf(mx, s[i]);
    mx = WarpMax(mx);
    float sum = 0.0f;
    for (int i = wl; i < n; i += 32) {
      const float p = expf(s[i] - mx);
      s[i] = p;
      sum += p;
    }
    sum = WarpSum(sum);
    if (wl == 0) {
      part_max[part + static_cast<std::size_t>(gi) * max_slices] = mx;
      part_sum[part + static_cast<std::size_t>(gi) * max_slices] = sum;
    }
  }
  __syncthreads();

  // Values. Where 16-byte chunks of a row divide the block evenly, thread t owns chunk
  // t % chunks (8 dims) of every query head, for keys k0 + t / chunks + i · (128 / chunks):
  // each key's row is read as one coalesced run, several keys at a time; the key groups'
  // partial sums then meet in shared memory. Otherwise one dim per thread, key by key.
  if (kSplitThreads % chunks == 0 && group <= 8) {
    const int c = t % chunks, kg = t / chunks, groups = kSplitThreads / chunks;
    float acc[8 * 8];  // [gi][e], gi < group <= 8
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
    for (int j = k0 + kg; j < k1; j += groups) {
      const std::size_t blk = static_cast<std::size_t>(table[j / g.block_size]);
      const uint4 raw = *reinterpret_cast<const uint4*>(cache + g.PlaneOffset(blk, layer, KvPart::kValue) +
                                                        (j % g.block_size) * te + static_cast<std::size_t>(kvh) * hd + c * 8);
      const T* vv = reinterpret_cast<const T*>(&raw);
      float vf[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) vf[e] = ToF(vv[e]);
#pragma unroll
      for (int gi = 0; gi < 8; ++gi) {  // unrolled with constant indices, so acc stays in registers
        if (gi >= group) break;
        const float p = s_s[gi * slice + (j - k0)];
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[gi * 8 + e] += p * vf[e];
      }
    }
    __syncthreads();  // the scores are read; their space takes the key groups' sums
    float* red = split_smem;  // [groups][group][hd]
#pragma unroll
    for (int gi = 0; gi < 8; ++gi) {
      if (gi >= group) break;
#pragma unroll
      for (int e = 0; e < 8; ++e) red[(static_cast<std::size_t>(kg) * group + gi) * hd + c * 8 + e] = acc[gi * 8 + e];
    }
    __syncthreads();
    for (int i = t; i < group * hd; i += kSplitThreads) {
      float sum = 0.0f;
      for (int k = 0; k < groups; ++k) sum += red[static_cast<std::size_t>(k) * group * hd + i];
      const int gi = i / hd, d = i - gi * hd;
      part_out[(part + static_cast<std::size_t>(gi) * max_slices) * hd + d] = sum;
    }
    return;
  }
  float acc[2][kSplitMaxGroup];
#pragma unroll
  for (int a = 0; a < 2; ++a)
#pragma unroll
    for (int gi = 0; gi < kSplitMaxGroup; ++gi) acc[a][gi] = 0.0f;
  for (int j = k0; j < k1; ++j) {
    const std::size_t blk = static_cast<std::size_t>(table[j / g.block_size]);
    const T* val = cache + g.PlaneOffset(blk, layer, KvPart::kValue) + (j % g.block_size) * te +
                   static_cast<std::size_t>(kvh) * hd;
#pragma unroll
    for (int a = 0; a < 2; ++a) {
      const int d = t + a * kSplitThreads;
      if (d >= hd) break;
      const float v = ToF(val[d]);
#pragma unroll
      for (int gi = 0; gi < kSplitMaxGroup; ++gi) {
        if (gi >= group) break;
        acc[a][gi] += s_s[gi * slice + (j - k0)] * v;
      }
    }
  }
#pragma unroll
  for (int a = 0; a < 2; ++a) {
    const int d = t + a * kSplitThreads;
    if (d >= hd) break;
#pragma unroll
    for (int gi = 0; gi < kSplitMaxGroup; ++gi) {
      if (gi >= group) break;
      part_out[(part + static_cast<std::size_t>(gi) * max_slices) * hd + d] = acc[a][gi];
    }
  }
}

// grid (rows, heads), head_dim threads (rounded up to a warp): out = Σ_z e^{m_z - M} o_z / Σ_z e^{m_z - M} l_z.
template <typename T>
__global__ void MergeSlicesKernel(T* out, const float* part_out, const float* part_max, const float* part_sum,
                                  int num_heads, int hd, int max_slices) {
  const int row = blockIdx.x, head = blockIdx.y, d = threadIdx.x;
  const std::size_t base = (static_cast<std::size_t>(row) * num_heads + head) * max_slices;
  float mx = -INFINITY;
  for (int z = 0; z < max_slices; ++z)
    if (part_sum[base + z] > 0.0f) mx = fmaxf(mx, part_max[base + z]);
  if (d >= hd) return;
  float num = 0.0f, den = 0.0f;
  for (int z = 0; z < max_slices; ++z) {
    const float l = part_sum[base + z];
    if (!(l > 0.0f)) continue;
    const float w = expf(part_max[base + z] - mx);
    num += w * part_out[(base + z) * hd + d];
    den += w * l;
  }
  out[(static_cast<std::size_t>(row) * num_heads + head) * hd + d] = FromF<T>(num / den);
}

}  // namespace mnemo::kernels::cuda
