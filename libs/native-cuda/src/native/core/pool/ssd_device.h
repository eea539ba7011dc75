// An SSD pool device: a raw block device or one preallocated file, addressed by byte
// offsets that are multiples of its block size (LBA extents), read and written with
// O_DIRECT (Unified KV pooling §IV-B, KV-passthrough): no file per chunk and no filesystem
// call on the hot path, only reads and writes at offsets the caller's allocator chose.
//
// Threads: each device owns one worker thread that plans, submits and reaps all of its I/O
// (io_uring with up to queue_depth requests in flight, or pread/pwrite one at a time when
// io_uring is unavailable). Callers hand it batches from any thread; a batch's completion
// runs on the worker.
//
// Lifecycle: BeginClose() refuses new batches and lets the worker finish every batch
// already accepted (each completion runs), then exit; Close() also joins it. The destructor
// closes. A batch accepted before close always completes, so no caller is stranded.
// Never destroy a device from one of its own completions (the worker cannot join itself).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/io/io_backend.h"
#include "core/io/io_request.h"
#include "core/status.h"

namespace mnemo {

struct SsdOptions {
  std::string path;
  // Create the file with this size (fallocate), or grow an existing file to it; never
  // shrinks. 0: the path must exist and its size is used.
  uint64_t bytes = 0;
  // 0: detect (BLKSSZGET for block devices, statx dio_offset_align or st_blksize for files).
  // Otherwise a power of two that is a multiple of the detected size.
  uint32_t block_size = 0;
  uint32_t queue_depth = 64;                  // requests in flight, [1, 4096]
  size_t max_request_bytes = size_t{1} << 20;  // largest single request (SQE)
  bool force_pread = false;                    // skip io_uring (tests of the fallback)
};

// One unit of work for the worker. `done` is called exactly once, on the worker thread.
struct IoBatch {
  std::vector<IoSegment> segments;
  // A barrier: once every batch accepted before it has finished its I/O, fdatasync.
  bool flush = false;
  std::function<void(Status)> done;
};

struct SsdStats {
  uint32_t in_flight = 0;       // requests the kernel holds now (the queue-depth metric)
  uint32_t peak_in_flight = 0;  // the most ever in flight at once
  uint64_t queued_batches = 0;  // accepted, not yet completed
  uint64_t requests = 0;        // requests submitted since open (retries included)
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t errors = 0;          // failed requests
};

class SsdDevice {
 public:
  static Status Open(const SsdOptions& options, std::unique_ptr<SsdDevice>* out);
  ~SsdDevice();

  SsdDevice(const SsdDevice&) = delete;
  SsdDevice& operator=(const SsdDevice&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }  // usable bytes, a multiple of block_size()
  uint32_t block_size() const { return block_size_; }
  size_t mem_alignment() const { return mem_alignment_; }  // memory needs this for zero-copy
  size_t max_request_bytes() const { return max_request_bytes_; }
  uint32_t queue_depth() const { return backend_->depth(); }
  IoBackendKind backend() const { return backend_->kind(); }
  // Why the backend is pread (io_uring not compiled in, refused, or forced); empty for io_uring.
  const std::string& backend_reason() const { return backend_reason_; }
  bool block_device() const { return block_device_; }
  bool created() const { return created_; }  // this Open created the file

  // Alignment and bounds of one segment, as Submit checks them.
  Status CheckSegment(const IoSegment& segment) const;
  // Validates every segment (kMisaligned, kOutOfRange, kInvalidArgument) and queues the
  // batch; kClosed after BeginClose(). On error nothing is queued and `done` never runs.
  Status Submit(std::unique_ptr<IoBatch> batch);

  void BeginClose();
  void Close();
  bool closing() const { return closing_.load(std::memory_order_acquire); }

  SsdStats stats() const;

 private:
  struct BatchState;
  struct Pending {
    BatchState* batch;
    IoRequest* request;  // null: the batch is a flush barrier
  };

  SsdDevice() = default;
  void Run();
  void Expand(std::unique_ptr<IoBatch> batch, std::deque<Pending>* pending);
  bool Start(IoRequest* request);  // false: it failed at once (and was finished)
  void OnComplete(IoRequest* request, int64_t result);
  void FinishRequest(IoRequest* request, const Status& status);
  void FinishBatch(BatchState* batch);
  uint8_t* TakeBounce();

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint32_t block_size_ = 4096;
  size_t mem_alignment_ = 4096;
  size_t max_request_bytes_ = 0;
  bool block_device_ = false;
  bool created_ = false;
  std::unique_ptr<IoBackend> backend_;
  std::string backend_reason_;

  mutable std::mutex mu_;
  std::deque<std::unique_ptr<IoBatch>> queue_;  // guarded by mu_
  std::atomic<bool> closing_{false};            // written under mu_
  std::thread worker_;
  std::mutex join_mu_;

  // Worker-thread state.
  uint32_t in_flight_count_ = 0;
  std::vector<uint8_t*> bounce_free_;  // staging buffers of max_request_bytes_

  std::atomic<uint32_t> in_flight_{0};
  std::atomic<uint32_t> peak_in_flight_{0};
  std::atomic<uint64_t> queued_batches_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> bytes_read_{0};
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> errors_{0};
};

}  // namespace mnemo
