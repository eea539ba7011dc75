// Plain descriptions of direct I/O on a pool device: what a caller asks for (IoSegment) and
// what the device's worker hands to the kernel (IoRequest: one SQE, many segments).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mnemo {

enum class IoOp : uint8_t {
  kRead,   // device → memory
  kWrite,  // memory → device
};

// One caller segment: device bytes [offset, +length) ↔ memory [mem, +length).
// Ownership: `mem` and `crc_out` are borrowed; the caller keeps them valid until the batch
// that carries the segment has completed.
struct IoSegment {
  IoOp op = IoOp::kRead;
  uint64_t offset = 0;  // device byte offset, a multiple of the device's block size
  uint8_t* mem = nullptr;
  uint64_t length = 0;  // a multiple of the device's block size
  // When set, receives the CRC32C of the segment's bytes: after they arrived (read) or as
  // they were sent (write). The segment must then fit in one request (max_request_bytes).
  uint32_t* crc_out = nullptr;
};

// A segment, or a piece of one, inside a request.
struct IoPart {
  uint8_t* mem = nullptr;
  size_t length = 0;
  uint32_t* crc_out = nullptr;
};

// One kernel operation over a contiguous device range.
struct IoRequest {
  IoOp op = IoOp::kRead;
  uint64_t offset = 0;  // device byte offset
  size_t length = 0;    // sum of parts' lengths
  std::vector<IoPart> parts;  // in device order
  // Memory the kernel sees: parts merged where they are contiguous in memory, or (bounce)
  // one aligned staging buffer the worker fills (write) or empties (read).
  std::vector<iovec> iov;
  bool bounce = false;  // some part's memory is not aligned for O_DIRECT
  uint8_t* staging = nullptr;  // the bounce buffer while the request runs (worker-owned)
  // Worker-owned progress: bytes done and the first iovec not yet fully transferred
  // (short reads/writes resume there).
  size_t done = 0;
  size_t iov_first = 0;
  void* owner = nullptr;  // the batch this request belongs to
};

// Groups segments into requests: sorted by device offset; runs that are contiguous on the
// device and of the same direction share one request (readv/writev) up to
// `max_request_bytes` and `max_iov` iovecs; parts contiguous in memory share an iovec.
// Segments longer than `max_request_bytes` are cut (lengths and cuts stay multiples of the
// block size because max_request_bytes is one). A request whose memory is not aligned to
// `mem_alignment` (address or length of any part) is marked bounce and gets no iovecs.
std::vector<IoRequest> PlanIoRequests(std::vector<IoSegment> segments, size_t max_request_bytes,
                                      size_t mem_alignment, size_t max_iov);

// Marks `bytes` more of `request` as transferred: advances `done` and the iovec cursor.
void AdvanceRequest(IoRequest* request, size_t bytes);

}  // namespace mnemo
