// One range of a batched byte copy, the same for batchCopy (CopyEngine, whose slots are
// buffers) and transfer (the pool transfer engine, whose slots are operands):
// slots[src][src_offset, +length) → slots[dst][dst_offset, +length), offsets and length in bytes.
#pragma once

#include <cstdint>

namespace mnemo {

struct CopyRange {
  uint32_t src = 0;
  uint64_t src_offset = 0;
  uint32_t dst = 0;
  uint64_t dst_offset = 0;
  uint64_t length = 0;
};

}  // namespace mnemo
