// Batched transfers between any memory (JS buffers, host pool regions, aligned host
// buffers) and SSD pool devices, with CRC32C of chosen ranges, in one call.
//
// One batch holds many (src, dst, length) ranges. Memory→memory ranges run on the shared
// copy pool, split into shards; ranges touching an SSD device go to that device's worker
// (one per device), so a batch spanning several devices runs on all of them in parallel
// (Unified KV pooling §IV-C2). All ranges of a batch run concurrently: a byte written by one
// range and read or written by another refuses the batch (kRangeConflict); dependent steps
// (SSD → host pool, then host pool → device cache) are separate batches.
//
// CRC ranges name memory bytes and are computed over their contents once the batch's
// writes are done. A CRC range that is exactly tiled by the destinations (or sources) of
// some of the batch's ranges is fused: each piece is checksummed as it is copied (one pass,
// Crc32cCopy) or right after it is read from an SSD, and the pieces are joined with
// Crc32cCombine, so verification costs no second pass over memory. Other CRC ranges run as
// a second phase on the pool.
//
// Ownership: operand memory and devices are borrowed; the caller keeps them alive (and SSD
// devices open) until `done` has run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/copy_range.h"
#include "core/pool/ssd_device.h"
#include "core/status.h"
#include "core/task_queue.h"

namespace mnemo {

enum class OperandKind : uint8_t {
  kMemory,  // host memory: [data, +size)
  kSsd,     // an SSD pool device: byte offsets [0, device size)
};

struct TransferOperand {
  OperandKind kind = OperandKind::kMemory;
  uint8_t* data = nullptr;    // kMemory
  uint64_t size = 0;          // kMemory: bytes (kSsd: the device's size is used)
  SsdDevice* ssd = nullptr;   // kSsd
};

using TransferRange = CopyRange;

// CRC32C of operands[operand][offset, +length); memory operands only.
struct CrcRange {
  uint32_t operand = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct TransferBatch {
  std::vector<TransferOperand> operands;
  std::vector<TransferRange> ranges;
  std::vector<CrcRange> crcs;
};

struct TransferResult {
  std::vector<uint32_t> crcs;  // one per CrcRange, in order
  size_t fused_crcs = 0;       // how many were computed while copying/reading
};

struct TransferOptions {
  // NOTE: below ~256 KiB per thread the wake-up of another thread costs more than the copy.
  size_t min_shard_bytes = size_t{256} << 10;
  // Pieces of a CRC range computed in the second phase run in parallel at this size.
  size_t crc_piece_bytes = size_t{1} << 20;
};

using TransferDone = std::function<void(Status, TransferResult)>;

// Indices, kinds (SSD→SSD is refused), bounds (kOutOfRange), SSD alignment (kMisaligned),
// closed devices (kClosed) and conflicts (kRangeConflict). Zero-length ranges are checked
// for bounds and otherwise ignored.
Status ValidateTransfer(const TransferBatch& batch);

// Validates `batch` on the calling thread and starts it. On a non-OK return nothing ran
// and `done` is never called. On OK, `done` runs exactly once, on a pool or device worker
// thread, after every range and CRC finished; on failure the CRCs are empty.
// `pool` is borrowed and must outlive the batch.
Status SubmitTransfer(const TransferBatch& batch, TaskQueue& pool, TransferDone done,
                      const TransferOptions& options = {});

// ValidateTransfer, and no range may touch an SSD device (kInvalidArgument): what
// RunTransferInline accepts, for a caller that refuses a batch before queueing it.
Status ValidateInlineTransfer(const TransferBatch& batch);

// Runs `fn(i)` for every i in [0, n), spread over the caller's own threads; returns when all ran.
using ParallelRun = std::function<void(size_t n, const std::function<void(size_t)>& fn)>;

// Runs a memory-only batch to completion on the calling thread, its copy shards (at most
// `lanes`) and second-phase CRC pieces spread by `parallel`. For callers that already own the
// cores, such as the CPU kernels' lanes between two kernel batches: on a machine with as
// many lanes as cores, a copy thread beside them would take a core from one lane and leave
// the other waiting at its next barrier, costing the pass more than the copy itself.
// Results as SubmitTransfer; a batch ValidateInlineTransfer refuses is refused the same way
// and nothing is moved.
Status RunTransferInline(const TransferBatch& batch, size_t lanes, const ParallelRun& parallel,
                         TransferResult* result, const TransferOptions& options = {});

}  // namespace mnemo
