// Shapes shared by the CPU and CUDA kernels (plain structs: no Node-API, no CUDA headers).
//
// Device KV cache, block-major (SwiftCache §3.4) so capacity grows/shrinks by whole blocks:
//   cache [num_blocks][num_layers][2 (K|V)][block_size][num_kv_heads][head_dim]
// A "plane" is one K (or V) slab of one layer inside one block: [block_size][kv_heads][head_dim].
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define MNEMO_HD __host__ __device__
#else
#define MNEMO_HD
#endif

namespace mnemo::kernels {

enum class KvPart : int { kKey = 0, kValue = 1 };

struct KvGeometry {
  int32_t num_layers;
  int32_t num_kv_heads;
  int32_t head_dim;
  int32_t block_size;  // tokens per block

  MNEMO_HD std::size_t TokenElems() const {
    return static_cast<std::size_t>(num_kv_heads) * static_cast<std::size_t>(head_dim);
  }
  MNEMO_HD std::size_t PlaneElems() const { return static_cast<std::size_t>(block_size) * TokenElems(); }
  MNEMO_HD std::size_t BlockElems() const { return static_cast<std::size_t>(num_layers) * 2 * PlaneElems(); }
  // Element offset of the K or V plane of `layer` in `block`.
  MNEMO_HD std::size_t PlaneOffset(std::size_t block, int32_t layer, KvPart part) const {
    return ((block * static_cast<std::size_t>(num_layers) + static_cast<std::size_t>(layer)) * 2 +
            static_cast<std::size_t>(part)) *
           PlaneElems();
  }
};

// Which rows of a packed batch belong to which sequence. All pointers are host memory on
// the CPU backend; the CUDA backend copies them to the device first. Borrowed, not owned.
struct AttentionBatch {
  int32_t num_seqs;
  const int32_t* query_start;   // [num_seqs + 1]
  const int32_t* context_len;   // [num_seqs]  tokens in cache, including this batch's rows
  const int32_t* block_tables;  // [num_seqs, max_blocks_per_seq]
  int32_t max_blocks_per_seq;
};

}  // namespace mnemo::kernels
