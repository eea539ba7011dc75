// Physical-limit probes for the tier benchmarks: what plain memcpy and raw O_DIRECT
// sequential I/O achieve on this machine, measured with the same threads and the same
// io_uring path the pool devices use, so a benchmark can report "fraction of the limit"
// from one run. Each call blocks its thread for the duration of the measurement.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/io/io_backend.h"
#include "core/status.h"
#include "core/task_queue.h"

namespace mnemo {

struct MemcpyProbeResult {
  uint64_t bytes = 0;
  size_t threads = 0;                  // shards the copy was split into (the pool's threads)
  std::vector<double> memcpy_seconds;  // glibc memcpy, one per iteration after a warm-up
  std::vector<double> kernel_seconds;  // the transfers' copy kernel (byte_copy.h), streaming
  // Checksumming copies (not limits: a same-process A/B of the CRC32C kernels a get pays):
  std::vector<double> crc_copy_seconds;          // Crc32cCopy, the selected implementation
  std::vector<double> crc_streams_copy_seconds;  // Crc32cHardwareCopy, the crc32-instruction streams
};

// Copies `bytes` between two committed, huge-page-backed, 2 MiB-aligned buffers (the best
// case host memory offers) `iterations` times on `pool`, split the way transfers are split,
// with glibc's memcpy and with the transfers' own kernel (interleaved): the faster of the
// two is the host tiers' physical limit. The checksumming copies run interleaved with them.
//
// Shaped like a tier's copies (so a tier's fraction of the limit compares like with like):
// `piece_bytes` > 0 copies the `bytes` as consecutive pieces of that size, each split over the
// threads and finished before the next starts (a get's one transfer per layer); `dst_ring_pieces`
// > 0 lands the pieces in that many piece-sized destination buffers in turn (a get's reused
// layer payloads) instead of a destination as large as the source. 0, 0: one copy of `bytes`.
struct MemcpyProbeShape {
  uint64_t piece_bytes = 0;
  uint32_t dst_ring_pieces = 0;
};
Status ProbeMemcpy(TaskQueue& pool, uint64_t bytes, int iterations, MemcpyProbeResult* out,
                   const MemcpyProbeShape& shape = {});

struct DirectIoProbeOptions {
  std::string path;
  uint64_t bytes = 0;            // read or written from offset 0
  uint32_t block_bytes = 1 << 20;  // one request per block
  uint32_t queue_depth = 32;
  IoOp op = IoOp::kRead;
  bool force_pread = false;
};

struct DirectIoProbeResult {
  double seconds = 0;
  uint64_t bytes = 0;
  IoBackendKind backend = IoBackendKind::kPread;
  std::string backend_reason;
  uint32_t queue_depth = 0;
};

// Sequential O_DIRECT I/O over [0, bytes) of `path` in blocks of block_bytes with up to
// queue_depth requests in flight, through an SsdDevice (same worker and backend), from
// huge-page host pool memory (what the pool's transfers use). A write
// probe creates or grows the file and overwrites [0, bytes). NOTE: a read probe must run on
// blocks that were written: fallocated but unwritten extents read as zeros without any
// device I/O and would report an impossible speed.
Status ProbeDirectIo(const DirectIoProbeOptions& options, DirectIoProbeResult* out);

// fdatasync, then POSIX_FADV_DONTNEED over the whole file: its next buffered read comes from
// the device (the cold file-per-chunk baseline).
Status DropPageCache(const std::string& path);

}  // namespace mnemo
