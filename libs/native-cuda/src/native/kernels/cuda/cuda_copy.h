// The copy lane: host <-> device copies of byte ranges on the copy stream, apart from the
// compute stream, so swaps and tier copies overlap kernels (FastSwitch §3.2). Mechanism only:
// which ranges move, how they are grouped and when is the caller's (kv-core's) choice.
//
// Ordering. A copy starts after every op enqueued on the compute stream before the call
// (an event recorded there, waited for on the copy stream): a swap-out reads what the kernels
// wrote. Compute ops enqueued after the call do not wait for the copy unless the caller asks
// (ComputeWaitsFor): a swap-in's blocks must not be read before they land.
// Tickets. Each call returns a ticket (an event recorded after its copies). WaitCopy blocks
// the calling thread; CopyDone polls. Either releases the ticket once the copy is done.
// Ownership. The host range and the device buffer are borrowed until the ticket is done:
// neither may be freed or reused before. Host memory should be pinned (PinnedHostAlloc or
// RegisterHost); pageable memory works but the driver stages it and nothing overlaps.
// Thread safety: one mutex for the ticket table; never takes the compute lane's mutex.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "kernels/cuda/cuda_kernels.h"

namespace mnemo::kernels::cuda {

enum class CopyDirection : int { kDeviceToHost = 0, kHostToDevice = 1 };

// How the ranges are handed to the driver. kPerRange: one cudaMemcpyAsync per range (what a
// per-block swap costs in dispatch). kBatched: one cudaMemcpyBatchAsync for all of them.
enum class CopySubmit : int { kPerRange = 0, kBatched = 1 };

struct CopyRange {
  std::size_t device_offset;  // bytes into the device buffer
  std::size_t host_offset;    // bytes into the host range
  std::size_t bytes;
};

// Enqueues the ranges; *ticket identifies the copy. Ranges are checked against both sizes
// first (kOutOfRange, nothing enqueued). Destination ranges must not overlap each other
// (kRangeConflict): the batched submit gives no order among them.
Status CopyAsync(CopyDirection dir, const DeviceBuffer& device, void* host, std::size_t host_bytes,
                 const CopyRange* ranges, std::size_t count, CopySubmit submit, uint64_t* ticket);
Status WaitCopy(uint64_t ticket);
Status CopyDone(uint64_t ticket, bool* done);
// Compute ops enqueued after this call start only once the ticket's copies are done.
Status ComputeWaitsFor(uint64_t ticket);
// Tickets not yet released (tests and leak checks).
std::size_t PendingCopies();

}  // namespace mnemo::kernels::cuda
