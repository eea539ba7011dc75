// Batched host-memory copies: one call moves many (src, dst, length) ranges, split across
// the native thread pool. This is the mechanism under `batchCopy` in the addon; it knows
// nothing about JS.
//
// Ownership: CopyBuffer pointers are borrowed. The caller keeps every buffer alive and
// unmoved until the completion passed to CopyEngine::Submit has run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/copy_range.h"
#include "core/status.h"
#include "core/task_queue.h"

namespace mnemo {

// A borrowed byte buffer.
struct CopyBuffer {
  uint8_t* data = nullptr;
  size_t size = 0;  // bytes
};

struct CopyBatch {
  std::vector<CopyBuffer> buffers;
  std::vector<CopyRange> ranges;
};

// A resolved piece of work: plain pointers, ready for memcpy.
struct CopySegment {
  const uint8_t* src;
  uint8_t* dst;
  size_t length;
};

// The segments one pool task copies.
struct CopyShard {
  std::vector<CopySegment> segments;
  size_t bytes = 0;
};

// Checks indices and bounds of every range, then conflicts: a destination byte that is
// written twice, or written by one range while another range (or the same one) reads it,
// would make the result depend on thread timing, so such a batch is refused with
// kRangeConflict. Conflicts are found by address, so aliasing buffers (the same memory
// passed twice) are caught too. Reads may overlap reads. Zero-length ranges are ignored.
// O(n log n) in the number of ranges.
Status ValidateCopyBatch(const CopyBatch& batch);

// Splits a validated batch into at most `max_shards` shards of roughly equal bytes, none
// smaller than `min_shard_bytes` unless the batch itself is. Long ranges are cut across
// shards so one huge range still uses every thread. Always returns at least one shard.
std::vector<CopyShard> PlanCopyShards(const CopyBatch& batch, size_t max_shards,
                                      size_t min_shard_bytes);

void RunCopyShard(const CopyShard& shard);

class CopyEngine {
 public:
  using Completion = std::function<void(Status)>;

  // NOTE: below ~256 KiB per thread the wake-up of another thread costs more than the copy.
  static constexpr size_t kDefaultMinShardBytes = 256 * 1024;

  // `pool` is borrowed and must outlive every submitted batch.
  explicit CopyEngine(TaskQueue& pool, size_t min_shard_bytes = kDefaultMinShardBytes)
      : pool_(pool), min_shard_bytes_(min_shard_bytes) {}

  // Validates `batch` on the calling thread, then copies it on the pool. On a non-OK
  // return nothing was queued and `done` is never called. On OK, `done` runs exactly once,
  // on a pool thread, after every byte was copied.
  Status Submit(const CopyBatch& batch, Completion done);

  // Validates and copies on the calling thread (tests, tiny batches).
  static Status CopySync(const CopyBatch& batch);

 private:
  TaskQueue& pool_;
  size_t min_shard_bytes_;
};

}  // namespace mnemo
