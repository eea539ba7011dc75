// Paged KV cache kernels on the CPU: write K/V rows, grouped-query causal attention over
// block tables, block copies.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/batch_check.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm_kernels.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/kernel_assert.h"

namespace mnemo::kernels::cpu {

void WriteKv(float* cache, std::size_t num_blocks, const float* k, const float* v, const int32_t* slots,
             std::size_t rows, int32_t layer, const KvGeometry& geom) {
  MNEMO_KERNEL_CHECK(layer >= 0 && layer < geom.num_layers);
  const std::size_t token = geom.TokenElems();
  const std::size_t bs = static_cast<std::size_t>(geom.block_size);
  for (std::size_t r = 0; r < rows; ++r)
    MNEMO_KERNEL_CHECK(slots[r] < 0 || static_cast<std::size_t>(slots[r]) < num_blocks * bs);
  ParallelFor(rows, std::max<std::size_t>(1, 4096 / token), [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      if (slots[r] < 0) continue;
      const std::size_t slot = static_cast<std::size_t>(slots[r]);
      const std::size_t block = slot / bs, offset = (slot % bs) * token;
      std::memcpy(cache + geom.PlaneOffset(block, layer, KvPart::kKey) + offset, k + r * token, token * sizeof(float));
      std::memcpy(cache + geom.PlaneOffset(block, layer, KvPart::kValue) + offset, v + r * token,
                  token * sizeof(float));
    }
  });
}

namespace {

// Query rows per attention tile: enough to reuse each key/value row from L1 several times,
// few enough that the tile's outputs ([rows][group][head_dim]) stay in L1 too.
constexpr std::size_t kTileRows = 8;

// Consecutive query rows of one sequence; row `row` + r is at position pos + r and attends to
// keys 0..pos + r.
struct Tile {
  int32_t seq, row, rows, pos;
};

// One implementation per machine (never per call): AVX-512 tiles where the GEMM path has
// AVX-512 (the same bits as AVX2, faster), AVX2 + FMA where it has that, else the portable one.
AttendFn ActiveAttend() {
  static const AttendFn fn = [] {
    const CpuIsa isa = ActiveCpuIsa();
    const AttendFn avx2 = Avx2Attend(), avx512 = Avx512Attend();
    if (isa == CpuIsa::kAvx512 && avx512 != nullptr) return avx512;
    return (isa == CpuIsa::kAvx2Fma || isa == CpuIsa::kAvx512) && avx2 != nullptr ? avx2 : PortableAttend;
  }();
  return fn;
}

}  // namespace

void ForEachKvHead(const AttendArgs& a, AttendFn one) {
  const std::size_t per_head = a.rows * a.group * (a.n_keys + a.rows - 1);
  for (std::size_t i = 0; i < a.kv_heads; ++i) {
    AttendArgs h = a;
    h.kv_heads = 1;
    h.key0 = a.key0 + i * a.head_dim;
    h.q = a.q + i * a.group * a.head_dim;
    h.out = a.out + i * a.group * a.head_dim;
    h.scores = a.scores + i * per_head;
    one(h);
  }
}

namespace {
void PortableAttendHead(const AttendArgs& a) {
  const std::size_t hd = a.head_dim, group = a.group, rows = a.rows;
  const std::size_t stride = a.n_keys + rows - 1;  // keys of the last row
  auto key = [&](std::size_t j) {
    return a.key0 + static_cast<std::size_t>(a.table[j / a.block_size]) * a.block_stride + (j % a.block_size) * a.token_stride;
  };
  auto score = [&](std::size_t r, std::size_t h) { return a.scores + (r * group + h) * stride; };
  for (std::size_t j = 0; j < stride; ++j) {
    const float* k = key(j);
    for (std::size_t r = j < a.n_keys ? 0 : j - a.n_keys + 1; r < rows; ++r)
      for (std::size_t h = 0; h < group; ++h) score(r, h)[j] = Dot(a.q + r * a.q_stride + h * hd, k, hd) * a.scale;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t n_keys = a.n_keys + r;
    for (std::size_t h = 0; h < group; ++h) {
      float* s = score(r, h);
      float max_s = -std::numeric_limits<float>::infinity();
      for (std::size_t j = 0; j < n_keys; ++j) max_s = std::max(max_s, s[j]);
      float lanes[kLanes] = {};
      for (std::size_t j = 0; j < n_keys; ++j) {
        s[j] = std::exp(s[j] - max_s);
        lanes[j % kLanes] += s[j];
      }
      const float denom = CombineLanes(lanes);
      // Fold the normalisation into the weights: one division per key instead of per output.
      for (std::size_t j = 0; j < n_keys; ++j) s[j] /= denom;
      float* o = a.out + r * a.q_stride + h * hd;
      std::fill(o, o + hd, 0.0f);
    }
  }
  for (std::size_t j = 0; j < stride; ++j) {
    const float* val = key(j) + a.value_offset;
    for (std::size_t r = j < a.n_keys ? 0 : j - a.n_keys + 1; r < rows; ++r)
      for (std::size_t h = 0; h < group; ++h) {
        const float p = score(r, h)[j];
        float* o = a.out + r * a.q_stride + h * hd;
        for (std::size_t d = 0; d < hd; ++d) o[d] += p * val[d];
      }
  }
}
}  // namespace

void PortableAttend(const AttendArgs& a) { ForEachKvHead(a, PortableAttendHead); }

void PagedAttention(float* out, const float* q, const float* cache, std::size_t num_blocks, int32_t layer,
                    std::size_t num_heads, const KvGeometry& geom, const AttentionBatch& batch, float scale) {
  MNEMO_KERNEL_CHECK(layer >= 0 && layer < geom.num_layers);
  const std::size_t kv_heads = static_cast<std::size_t>(geom.num_kv_heads);
  MNEMO_KERNEL_CHECK(kv_heads > 0 && num_heads % kv_heads == 0);
  const std::size_t rows = static_cast<std::size_t>(batch.query_start[batch.num_seqs]);
  MNEMO_KERNEL_CHECK(CheckAttentionBatch(batch, geom, num_blocks, rows) == nullptr);
  const std::size_t group = num_heads / kv_heads;
  const std::size_t hd = static_cast<std::size_t>(geom.head_dim);
  const std::size_t row_elems = num_heads * hd;
  const AttendFn attend = ActiveAttend();

  // Work items are (tile, kv head) pairs: a tile is up to kTileRows consecutive rows of one
  // sequence (prefill and chunked prefill share each key and value row across the tile;
  // decode rows are tiles of one). Independent outputs, so any split is exact.
  std::vector<Tile> tiles;
  for (int32_t s = 0; s < batch.num_seqs; ++s) {
    const int32_t q0 = batch.query_start[s], q1 = batch.query_start[s + 1];
    for (int32_t r = q0; r < q1; r += static_cast<int32_t>(kTileRows))
      tiles.push_back({s, r, std::min<int32_t>(q1 - r, static_cast<int32_t>(kTileRows)),
                       batch.context_len[s] - (q1 - q0) + (r - q0)});
  }
  // Kv heads per item: all of them when there are enough tiles to keep every lane busy, so a
  // decode row walks its cache blocks once, reading whole token rows (every kv head's slice,
  // contiguous) instead of one strided slice per item; fewer when tiles are scarce (batch 1).
  std::size_t heads_per_item = kv_heads;
  while (heads_per_item > 1 &&
         (kv_heads % heads_per_item != 0 || tiles.size() * (kv_heads / heads_per_item) < 4 * CpuThreadCount()))
    --heads_per_item;
  const std::size_t head_groups = kv_heads / heads_per_item;
  ParallelFor(tiles.size() * head_groups, 1, [&](std::size_t begin, std::size_t end) {
    thread_local std::vector<float> scratch;
    for (std::size_t item = begin; item < end; ++item) {
      const Tile& t = tiles[item / head_groups];
      const std::size_t kvh = (item % head_groups) * heads_per_item;
      const std::size_t off = static_cast<std::size_t>(t.row) * row_elems + kvh * group * hd;
      AttendArgs a{};
      a.key0 = cache + geom.PlaneOffset(0, layer, KvPart::kKey) + kvh * hd;
      a.block_stride = geom.BlockElems();
      a.value_offset = geom.PlaneElems();
      a.token_stride = geom.TokenElems();
      a.block_size = static_cast<std::size_t>(geom.block_size);
      a.table = batch.block_tables + static_cast<std::size_t>(t.seq) * batch.max_blocks_per_seq;
      a.n_keys = static_cast<std::size_t>(t.pos) + 1;
      a.group = group;
      a.head_dim = hd;
      a.scale = scale;
      a.rows = static_cast<std::size_t>(t.rows);
      a.q_stride = row_elems;
      a.q = q + off;
      a.out = out + off;
      a.kv_heads = heads_per_item;
      scratch.resize(heads_per_item * a.rows * group * (a.n_keys + a.rows - 1));
      a.scores = scratch.data();
      attend(a);
    }
  });
}

void CopyBlocks(float* cache, std::size_t num_blocks, const int32_t* src, const int32_t* dst, std::size_t count,
                const KvGeometry& geom) {
  const std::size_t block_elems = geom.BlockElems();
  for (std::size_t i = 0; i < count; ++i) {
    MNEMO_KERNEL_CHECK(src[i] >= 0 && static_cast<std::size_t>(src[i]) < num_blocks);
    MNEMO_KERNEL_CHECK(dst[i] >= 0 && static_cast<std::size_t>(dst[i]) < num_blocks);
  }
  // Sequential on purpose: pairs apply in order (a dst may be a later src), and a block copy
  // is memory bound, so threads would buy little on the machines this path serves.
  for (std::size_t i = 0; i < count; ++i) {
    if (src[i] == dst[i]) continue;
    std::memcpy(cache + static_cast<std::size_t>(dst[i]) * block_elems,
                cache + static_cast<std::size_t>(src[i]) * block_elems, block_elems * sizeof(float));
  }
}

}  // namespace mnemo::kernels::cpu
