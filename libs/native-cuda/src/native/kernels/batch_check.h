// Host-side consistency check of an AttentionBatch against the cache, shared by both
// backends (the TS wrapper checks the same rules first and throws RangeError).
#pragma once

#include <cstddef>

#include "kernels/kv_layout.h"

namespace mnemo::kernels {

// Returns nullptr when the batch is consistent, else a reason. `rows` is the q/out row count.
inline const char* CheckAttentionBatch(const AttentionBatch& b, const KvGeometry& g, std::size_t num_blocks,
                                       std::size_t rows) {
  if (b.num_seqs < 0 || b.max_blocks_per_seq < 0) return "negative sizes";
  if (b.query_start[0] != 0) return "queryStart[0] must be 0";
  if (static_cast<std::size_t>(b.query_start[b.num_seqs]) != rows) return "queryStart[numSeqs] != rows";
  for (int32_t s = 0; s < b.num_seqs; ++s) {
    const int32_t q_len = b.query_start[s + 1] - b.query_start[s];
    const int32_t ctx = b.context_len[s];
    if (q_len < 0) return "queryStart not monotonic";
    if (ctx < q_len) return "contextLen shorter than the sequence's query rows";
    const int64_t blocks = (static_cast<int64_t>(ctx) + g.block_size - 1) / g.block_size;
    if (blocks > b.max_blocks_per_seq) return "contextLen needs more blocks than maxBlocksPerSeq";
    for (int64_t i = 0; i < blocks; ++i) {
      const int32_t blk = b.block_tables[static_cast<int64_t>(s) * b.max_blocks_per_seq + i];
      if (blk < 0 || static_cast<std::size_t>(blk) >= num_blocks) return "block id out of range";
    }
  }
  return nullptr;
}

}  // namespace mnemo::kernels
