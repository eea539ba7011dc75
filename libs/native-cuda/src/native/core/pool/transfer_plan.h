// Internal to the transfer engine: how a validated TransferBatch is cut into work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/io/io_request.h"
#include "core/pool/transfer.h"

namespace mnemo {

// A memory→memory piece; crc_out (when set) receives the CRC32C of its bytes.
struct CopySeg {
  const uint8_t* src;
  uint8_t* dst;
  size_t length;
  uint32_t* crc_out;
};

// One piece of a CRC range: filled by a fused copy/read, or computed from `data` in the
// second phase.
struct CrcPiece {
  const uint8_t* data = nullptr;
  uint64_t length = 0;
  uint32_t crc = 0;
};

struct CrcSpan {
  size_t first = 0;  // into TransferPlan::pieces
  size_t count = 0;
};

struct DeviceWork {
  SsdDevice* device = nullptr;
  std::vector<IoSegment> segments;  // each ≤ the device's max request, so a CRC is one part
};

// Invariant: `pieces` is not resized after planning (segments point into it).
struct TransferPlan {
  std::vector<std::vector<CopySeg>> shards;
  std::vector<DeviceWork> devices;
  std::vector<CrcPiece> pieces;
  std::vector<CrcSpan> crcs;    // one per CrcRange
  std::vector<size_t> phase2;   // pieces computed after the transfers
  size_t fused = 0;
};

// Plans a batch that ValidateTransfer accepted: memory ranges into at most `max_shards`
// shards of about equal bytes (none under min_shard_bytes unless the batch is), SSD ranges
// into per-device segments, and each CRC range into fused or second-phase pieces.
void PlanTransfer(const TransferBatch& batch, size_t max_shards, const TransferOptions& options,
                  TransferPlan* plan);

}  // namespace mnemo
