#include "core/pool/ssd_device.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "core/crc32c.h"

namespace mnemo {
namespace {

constexpr uint32_t kMaxQueueDepth = 4096;
constexpr size_t kMaxIov = 256;  // well under IOV_MAX (1024)
constexpr size_t kMaxRequestBytes = size_t{64} << 20;

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// Block size and memory alignment O_DIRECT needs on a file: statx(STATX_DIOALIGN) where the
// kernel reports it (6.1+), else st_blksize, which is always a safe (larger) choice.
void FileDirectIoAlignment(int fd, const struct stat& st, uint32_t* block, size_t* mem) {
  *block = st.st_blksize > 0 ? static_cast<uint32_t>(st.st_blksize) : 4096;
  *mem = *block;
#if defined(STATX_DIOALIGN)
  struct statx sx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN) != 0 &&
      sx.stx_dio_offset_align > 0 && sx.stx_dio_mem_align > 0) {
    *block = sx.stx_dio_offset_align;
    *mem = sx.stx_dio_mem_align;
  }
#endif
}

// Preallocates [0, bytes): real blocks, so writes on the hot path never allocate.
Status Preallocate(int fd, uint64_t bytes) {
  if (fallocate(fd, 0, 0, static_cast<off_t>(bytes)) == 0) return Status::Ok();
  if (errno != EOPNOTSUPP) {
    const int err = errno;
    if (err == ENOSPC) return Status::OutOfMemory(Errno("fallocate: no space for " + std::to_string(bytes) + " bytes", err));
    return Status::IoError(Errno("fallocate", err));
  }
  // A filesystem without fallocate: glibc emulates it by writing.
  const int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (err != 0) return Status::IoError(Errno("posix_fallocate", err));
  return Status::Ok();
}

}  // namespace

struct SsdDevice::BatchState {
  std::unique_ptr<IoBatch> batch;
  std::vector<IoRequest> requests;
  size_t remaining = 0;
  Status status;
};

Status SsdDevice::Open(const SsdOptions& o, std::unique_ptr<SsdDevice>* out) {
  out->reset();
  if (o.path.empty()) return Status::InvalidArgument("path must not be empty");
  if (o.queue_depth < 1 || o.queue_depth > kMaxQueueDepth) {
    return Status::InvalidArgument("queue depth must be in [1, 4096], got " + std::to_string(o.queue_depth));
  }
  if (o.block_size != 0 && (!IsPowerOfTwo(o.block_size) || o.block_size < 512 || o.block_size > (1u << 20))) {
    return Status::InvalidArgument("block size must be a power of two in [512, 2^20], got " + std::to_string(o.block_size));
  }
  if (o.max_request_bytes < 4096 || o.max_request_bytes > kMaxRequestBytes) {
    return Status::InvalidArgument("max request bytes must be in [4096, 64 MiB]");
  }

  std::unique_ptr<SsdDevice> dev(new SsdDevice());
  dev->path_ = o.path;
  struct stat st {};
  const bool exists = stat(o.path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) return Status::IoError(Errno("stat " + o.path, errno));
  if (!exists && o.bytes == 0) return Status::NotFound(o.path + " does not exist (give bytes to create it)");
  const int flags = O_RDWR | O_DIRECT | O_CLOEXEC | (exists ? 0 : O_CREAT | O_EXCL);
  dev->fd_ = open(o.path.c_str(), flags, 0600);
  if (dev->fd_ < 0) {
    const int err = errno;
    if (err == EINVAL) return Status::Unsupported(o.path + ": the filesystem refuses O_DIRECT (tmpfs?)");
    if (err == ENOENT) return Status::NotFound(Errno("open " + o.path, err));
    return Status::IoError(Errno("open " + o.path, err));
  }
  dev->created_ = !exists;
  if (fstat(dev->fd_, &st) != 0) return Status::IoError(Errno("fstat " + o.path, errno));

  uint64_t size = 0;
  uint32_t block = 4096;
  size_t mem = 4096;
  if (S_ISBLK(st.st_mode)) {
    dev->block_device_ = true;
    int logical = 0;
    if (ioctl(dev->fd_, BLKGETSIZE64, &size) != 0) return Status::IoError(Errno("BLKGETSIZE64", errno));
    if (ioctl(dev->fd_, BLKSSZGET, &logical) != 0 || logical <= 0) return Status::IoError(Errno("BLKSSZGET", errno));
    block = static_cast<uint32_t>(logical);
    mem = block;
    if (o.bytes > size) {
      return Status::InvalidArgument(o.path + " holds " + std::to_string(size) + " bytes, asked for " + std::to_string(o.bytes));
    }
  } else if (S_ISREG(st.st_mode)) {
    FileDirectIoAlignment(dev->fd_, st, &block, &mem);
    size = static_cast<uint64_t>(st.st_size);
    if (o.bytes > size) {
      const Status grown = Preallocate(dev->fd_, o.bytes);
      if (!grown.ok()) {
        if (dev->created_) unlink(o.path.c_str());
        return grown;
      }
      // The size must survive a crash for a warm restart to find the data.
      if (fsync(dev->fd_) != 0) return Status::IoError(Errno("fsync " + o.path, errno));
      size = o.bytes;
    }
  } else {
    return Status::InvalidArgument(o.path + " is neither a regular file nor a block device");
  }
  if (o.block_size != 0) {
    if (o.block_size % block != 0) {
      return Status::InvalidArgument("block size " + std::to_string(o.block_size) + " is not a multiple of the device's " +
                                     std::to_string(block));
    }
    block = o.block_size;
  }
  dev->block_size_ = block;
  dev->mem_alignment_ = std::max<size_t>(mem, 1);
  dev->size_ = size / block * block;
  dev->max_request_bytes_ = std::max<size_t>(block, o.max_request_bytes / block * block);

  if (o.force_pread) {
    dev->backend_reason_ = "pread forced by option";
  } else {
    const Status uring = MakeUringBackend(o.queue_depth, &dev->backend_);
    if (!uring.ok()) dev->backend_reason_ = uring.message();
  }
  if (!dev->backend_) dev->backend_ = MakePreadBackend();

  SsdDevice* raw = dev.get();
  dev->worker_ = std::thread([raw] { raw->Run(); });
  *out = std::move(dev);
  return Status::Ok();
}

SsdDevice::~SsdDevice() {
  Close();
  for (uint8_t* b : bounce_free_) std::free(b);
  if (fd_ >= 0) close(fd_);
}

Status SsdDevice::CheckSegment(const IoSegment& s) const {
  if (s.op != IoOp::kRead && s.op != IoOp::kWrite) return Status::InvalidArgument("unknown I/O direction");
  if (s.offset % block_size_ != 0 || s.length % block_size_ != 0) {
    return Status::Misaligned("device range [" + std::to_string(s.offset) + ", +" + std::to_string(s.length) +
                              ") is not a multiple of the block size " + std::to_string(block_size_));
  }
  if (s.offset > size_ || s.length > size_ - s.offset) {
    return Status::OutOfRange("device range [" + std::to_string(s.offset) + ", +" + std::to_string(s.length) +
                              ") exceeds the device's " + std::to_string(size_) + " bytes");
  }
  if (s.length > 0 && s.mem == nullptr) return Status::InvalidArgument("null memory");
  if (s.crc_out != nullptr && s.length > max_request_bytes_) {
    return Status::InvalidArgument("a segment with a CRC must fit in one request (" +
                                   std::to_string(max_request_bytes_) + " bytes)");
  }
  return Status::Ok();
}

Status SsdDevice::Submit(std::unique_ptr<IoBatch> batch) {
  for (const IoSegment& s : batch->segments) MNEMO_RETURN_IF_ERROR(CheckSegment(s));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_.load(std::memory_order_relaxed)) return Status::Closed(path_ + " is closed");
    queue_.push_back(std::move(batch));
    queued_batches_.fetch_add(1, std::memory_order_relaxed);
  }
  backend_->Wake();
  return Status::Ok();
}

void SsdDevice::BeginClose() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_.store(true, std::memory_order_release);
  }
  backend_->Wake();
}

void SsdDevice::Close() {
  if (!backend_) return;  // Open failed before the worker started
  BeginClose();
  std::lock_guard<std::mutex> lock(join_mu_);
  if (worker_.joinable()) worker_.join();
}

SsdStats SsdDevice::stats() const {
  SsdStats s;
  s.in_flight = in_flight_.load(std::memory_order_relaxed);
  s.peak_in_flight = peak_in_flight_.load(std::memory_order_relaxed);
  s.queued_batches = queued_batches_.load(std::memory_order_relaxed);
  s.requests = requests_.load(std::memory_order_relaxed);
  s.bytes_read = bytes_read_.load(std::memory_order_relaxed);
  s.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  s.errors = errors_.load(std::memory_order_relaxed);
  return s;
}

// ---- worker thread ------------------------------------------------------------------------

void SsdDevice::Run() {
  pthread_setname_np(pthread_self(), "mnemo-ssd");
  std::deque<Pending> pending;
  const IoBackend::OnComplete on_complete = [this](IoRequest* r, int64_t result) { OnComplete(r, result); };
  for (;;) {
    std::deque<std::unique_ptr<IoBatch>> fresh;
    bool closing;
    {
      std::lock_guard<std::mutex> lock(mu_);
      fresh.swap(queue_);
      // Read under the same lock as the queue: once closing, nothing can be queued later.
      closing = closing_.load(std::memory_order_relaxed);
    }
    for (std::unique_ptr<IoBatch>& b : fresh) Expand(std::move(b), &pending);

    std::vector<IoRequest*> started;
    while (in_flight_count_ < backend_->depth() && !pending.empty()) {
      const Pending head = pending.front();
      if (head.request == nullptr) {
        // A flush waits for everything before it.
        if (in_flight_count_ > 0) break;
        pending.pop_front();
        if (fdatasync(fd_) != 0) head.batch->status = Status::IoError(Errno("fdatasync " + path_, errno));
        FinishBatch(head.batch);
        continue;
      }
      pending.pop_front();
      if (Start(head.request)) started.push_back(head.request);
    }
    Status submitted = backend_->Submit();
    // Checksums of outgoing writes are taken while the device works on them.
    for (IoRequest* r : started) {
      if (r->op != IoOp::kWrite) continue;
      for (const IoPart& p : r->parts) {
        if (p.crc_out != nullptr) *p.crc_out = Crc32c(0, p.mem, p.length);
      }
    }
    if (in_flight_count_ == 0 && pending.empty()) {
      if (closing) return;
    }
    if (submitted.ok()) submitted = backend_->Wait(on_complete);
    if (!submitted.ok()) {
      // The ring itself failed (never seen in practice): back off rather than spin.
      errors_.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

void SsdDevice::Expand(std::unique_ptr<IoBatch> batch, std::deque<Pending>* pending) {
  auto* state = new BatchState();
  const bool flush = batch->flush;
  state->requests = PlanIoRequests(batch->segments, max_request_bytes_, mem_alignment_, kMaxIov);
  state->batch = std::move(batch);
  state->remaining = state->requests.size();
  if (flush) {
    pending->push_back({state, nullptr});
    return;
  }
  if (state->remaining == 0) {
    FinishBatch(state);
    return;
  }
  for (IoRequest& r : state->requests) {
    r.owner = state;
    pending->push_back({state, &r});
  }
}

uint8_t* SsdDevice::TakeBounce() {
  if (!bounce_free_.empty()) {
    uint8_t* b = bounce_free_.back();
    bounce_free_.pop_back();
    return b;
  }
  void* p = nullptr;
  if (posix_memalign(&p, std::max<size_t>(mem_alignment_, 4096), max_request_bytes_) != 0) return nullptr;
  return static_cast<uint8_t*>(p);
}

bool SsdDevice::Start(IoRequest* r) {
  if (r->bounce && r->staging == nullptr) {
    uint8_t* staging = TakeBounce();
    if (staging == nullptr) {
      FinishRequest(r, Status::OutOfMemory("no memory for an O_DIRECT staging buffer"));
      return false;
    }
    r->staging = staging;
    r->iov.assign(1, {staging, r->length});
    if (r->op == IoOp::kWrite) {
      size_t at = 0;
      for (const IoPart& p : r->parts) {
        std::memcpy(staging + at, p.mem, p.length);
        at += p.length;
      }
    }
  }
  ++in_flight_count_;
  in_flight_.store(in_flight_count_, std::memory_order_relaxed);
  if (in_flight_count_ > peak_in_flight_.load(std::memory_order_relaxed)) {
    peak_in_flight_.store(in_flight_count_, std::memory_order_relaxed);
  }
  requests_.fetch_add(1, std::memory_order_relaxed);
  backend_->Prepare(fd_, r);
  return true;
}

void SsdDevice::OnComplete(IoRequest* r, int64_t result) {
  --in_flight_count_;
  in_flight_.store(in_flight_count_, std::memory_order_relaxed);
  if (result == -EINTR || result == -EAGAIN) {
    (void)Start(r);  // retried as is
    return;
  }
  const char* verb = r->op == IoOp::kRead ? "read" : "write";
  if (result < 0) {
    FinishRequest(r, Status::IoError(Errno(std::string(verb) + " at " + std::to_string(r->offset + r->done) + " on " + path_,
                                           static_cast<int>(-result))));
    return;
  }
  if (result == 0) {
    FinishRequest(r, Status::IoError(std::string(verb) + " at " + std::to_string(r->offset + r->done) + " on " + path_ +
                                     " made no progress"));
    return;
  }
  AdvanceRequest(r, static_cast<size_t>(result));
  if (r->done < r->length) {
    (void)Start(r);  // a short transfer continues where it stopped
    return;
  }
  FinishRequest(r, Status::Ok());
}

void SsdDevice::FinishRequest(IoRequest* r, const Status& status) {
  auto* state = static_cast<BatchState*>(r->owner);
  uint8_t* staging = r->staging;
  r->staging = nullptr;
  if (status.ok()) {
    if (r->op == IoOp::kRead) {
      size_t at = 0;
      for (const IoPart& p : r->parts) {
        if (staging != nullptr) std::memcpy(p.mem, staging + at, p.length);
        if (p.crc_out != nullptr) *p.crc_out = Crc32c(0, p.mem, p.length);
        at += p.length;
      }
      bytes_read_.fetch_add(r->length, std::memory_order_relaxed);
    } else {
      bytes_written_.fetch_add(r->length, std::memory_order_relaxed);
    }
  } else {
    errors_.fetch_add(1, std::memory_order_relaxed);
    if (state->status.ok()) state->status = status;
  }
  if (staging != nullptr) bounce_free_.push_back(staging);
  if (--state->remaining == 0) FinishBatch(state);
}

void SsdDevice::FinishBatch(BatchState* state) {
  queued_batches_.fetch_sub(1, std::memory_order_relaxed);
  std::unique_ptr<BatchState> owned(state);
  if (owned->batch->done) owned->batch->done(owned->status);
}

}  // namespace mnemo
