#include "core/pool/io_probes.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>

#include "core/byte_copy.h"
#include "core/copy_engine.h"
#include "core/crc32c.h"
#include "core/host_memory.h"
#include "core/pool/host_pool.h"
#include "core/pool/ssd_device.h"

namespace mnemo {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Frees an AllocateHost allocation on scope exit.
struct HostBuffer {
  HostAllocation a;
  ~HostBuffer() { FreeHost(a); }
};

}  // namespace

Status ProbeMemcpy(TaskQueue& pool, uint64_t bytes, int iterations, MemcpyProbeResult* out, const MemcpyProbeShape& shape) {
  *out = MemcpyProbeResult{};
  if (bytes == 0 || iterations < 1 || iterations > 1000) {
    return Status::InvalidArgument("memcpy probe needs bytes > 0 and iterations in [1, 1000]");
  }
  const uint64_t piece = shape.piece_bytes == 0 ? bytes : shape.piece_bytes;
  if (piece > bytes || bytes % piece != 0) {
    return Status::InvalidArgument("memcpy probe pieces must divide bytes");
  }
  const uint64_t pieces = bytes / piece;
  if (shape.dst_ring_pieces > pieces) {
    return Status::InvalidArgument("memcpy probe destination ring is larger than the copy");
  }
  HostPoolOptions o;
  o.bytes = bytes;
  std::shared_ptr<HostPool> src;
  std::shared_ptr<HostPool> dst;
  MNEMO_RETURN_IF_ERROR(HostPool::Open(o, &src));
  HostPoolOptions od;
  od.bytes = shape.dst_ring_pieces == 0 ? bytes : std::max<uint64_t>(piece * shape.dst_ring_pieces, HostPool::kAlignment);
  MNEMO_RETURN_IF_ERROR(HostPool::Open(od, &dst));
  std::memset(src->data(), 0x5A, bytes);
  const uint64_t min_shard = CopyEngine::kDefaultMinShardBytes;
  const size_t shards = static_cast<size_t>(std::max<uint64_t>(1, std::min<uint64_t>(pool.size(), (piece + min_shard - 1) / min_shard)));
  const uint64_t per = (piece + shards - 1) / shards;
  out->bytes = bytes;
  out->threads = shards;
  std::atomic<uint32_t> sink{0};  // keeps the CRCs live
  // One sharded copy of piece `k` with `kernel`, waited for.
  enum class Kernel { kGlibc, kCopy, kCrcCopy, kCrcStreamsCopy };
  auto run_piece = [&](Kernel kernel, uint64_t k) -> Status {
    std::mutex mu;
    std::condition_variable cv;
    size_t left = shards;
    const uint64_t src_at = k * piece;
    const uint64_t dst_at = shape.dst_ring_pieces == 0 ? src_at : (k % shape.dst_ring_pieces) * piece;
    std::vector<TaskQueue::Task> tasks;
    for (size_t i = 0; i < shards; ++i) {
      const uint64_t at = i * per;
      if (at >= piece) {
        std::lock_guard<std::mutex> lock(mu);
        --left;
        continue;
      }
      const size_t n = static_cast<size_t>(std::min<uint64_t>(per, piece - at));
      tasks.emplace_back([&, at, n] {
        uint8_t* d = dst->data() + dst_at + at;
        const uint8_t* s = src->data() + src_at + at;
        switch (kernel) {
          case Kernel::kGlibc: std::memcpy(d, s, n); break;
          case Kernel::kCopy: CopyBytes(d, s, n, CopyHint::kStreaming); break;
          case Kernel::kCrcCopy: sink.fetch_xor(Crc32cCopy(0, d, s, n), std::memory_order_relaxed); break;
          case Kernel::kCrcStreamsCopy: sink.fetch_xor(Crc32cHardwareCopy(0, d, s, n), std::memory_order_relaxed); break;
        }
        std::lock_guard<std::mutex> lock(mu);
        if (--left == 0) cv.notify_one();
      });
    }
    MNEMO_RETURN_IF_ERROR(pool.SubmitAll(std::move(tasks)));
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return left == 0; });
    return Status::Ok();
  };
  auto run = [&](Kernel kernel) -> Status {
    for (uint64_t k = 0; k < pieces; ++k) MNEMO_RETURN_IF_ERROR(run_piece(kernel, k));
    return Status::Ok();
  };
  const std::pair<Kernel, std::vector<double>*> kernels[] = {
      {Kernel::kGlibc, &out->memcpy_seconds},
      {Kernel::kCopy, &out->kernel_seconds},
      {Kernel::kCrcCopy, &out->crc_copy_seconds},
      {Kernel::kCrcStreamsCopy, &out->crc_streams_copy_seconds},
  };
  for (int i = -1; i < iterations; ++i) {  // i == -1: warm-up
    for (const auto& [kernel, times] : kernels) {
      const auto start = Clock::now();
      MNEMO_RETURN_IF_ERROR(run(kernel));
      if (i >= 0) times->push_back(Since(start));
    }
  }
  return Status::Ok();
}

Status ProbeDirectIo(const DirectIoProbeOptions& o, DirectIoProbeResult* out) {
  *out = DirectIoProbeResult{};
  if (o.bytes == 0 || o.block_bytes == 0 || o.bytes % o.block_bytes != 0) {
    return Status::InvalidArgument("direct I/O probe needs bytes > 0, a multiple of block bytes > 0");
  }
  SsdOptions so;
  so.path = o.path;
  so.bytes = o.op == IoOp::kWrite ? o.bytes : 0;
  so.queue_depth = o.queue_depth;
  so.max_request_bytes = o.block_bytes;
  so.force_pread = o.force_pread;
  std::unique_ptr<SsdDevice> device;
  MNEMO_RETURN_IF_ERROR(SsdDevice::Open(so, &device));
  if (o.block_bytes % device->block_size() != 0) {
    return Status::Misaligned("block bytes must be a multiple of the device block size " +
                              std::to_string(device->block_size()));
  }
  if (o.bytes > device->size()) {
    return Status::OutOfRange(o.path + " holds " + std::to_string(device->size()) + " bytes, probe wants " +
                              std::to_string(o.bytes));
  }
  // Requests cycle through queue_depth buffers: content does not matter, only the traffic.
  // Huge-page host pool memory, as the pool's own transfers use: O_DIRECT pins the pages of
  // every request, and pinning 4 KiB pages costs measurably more.
  const uint64_t slots = std::min<uint64_t>(o.bytes / o.block_bytes, device->queue_depth());
  HostPoolOptions ho;
  // At least one whole huge page, or a small buffer (queue depth 1) would get 4 KiB pages.
  ho.bytes = std::max<uint64_t>(slots * o.block_bytes, HostPool::kAlignment);
  std::shared_ptr<HostPool> buf;
  MNEMO_RETURN_IF_ERROR(HostPool::Open(ho, &buf));
  std::memset(buf->data(), 0xA5, ho.bytes);
  auto batch = std::make_unique<IoBatch>();
  const uint64_t blocks = o.bytes / o.block_bytes;
  batch->segments.reserve(blocks);
  for (uint64_t b = 0; b < blocks; ++b) {
    batch->segments.push_back({o.op, b * o.block_bytes, buf->data() + (b % slots) * o.block_bytes,
                               o.block_bytes, nullptr});
  }
  std::promise<Status> finished;
  batch->done = [&finished](Status s) { finished.set_value(std::move(s)); };
  const auto start = Clock::now();
  MNEMO_RETURN_IF_ERROR(device->Submit(std::move(batch)));
  MNEMO_RETURN_IF_ERROR(finished.get_future().get());
  out->seconds = Since(start);
  out->bytes = o.bytes;
  out->backend = device->backend();
  out->backend_reason = device->backend_reason();
  out->queue_depth = device->queue_depth();
  device->Close();
  return Status::Ok();
}

Status DropPageCache(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound(path + " does not exist");
    return Status::IoError("open " + path + ": " + std::strerror(err));
  }
  Status status;
  // Dirty pages are not dropped: write them back first.
  if (fdatasync(fd) != 0) status = Status::IoError("fdatasync " + path + ": " + std::strerror(errno));
  const int advised = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  if (status.ok() && advised != 0) status = Status::IoError("posix_fadvise " + path + ": " + std::strerror(advised));
  close(fd);
  return status;
}

}  // namespace mnemo
