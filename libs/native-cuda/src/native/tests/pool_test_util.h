// Helpers of the pool-device tests: aligned buffers, seeded bytes, synchronous batches, and
// the two I/O backends every SSD test runs on.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/pool/ssd_device.h"
#include "tests/check.h"

namespace mnemo::test {

// 4096-aligned, freed on scope exit.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t bytes) : bytes_(bytes) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, bytes == 0 ? 1 : bytes) != 0) Fail(__FILE__, __LINE__, "posix_memalign");
    data_ = static_cast<uint8_t*>(p);
    std::memset(data_, 0, bytes);
  }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  uint8_t* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  uint8_t* data_;
  size_t bytes_;
};

inline void FillRandom(uint8_t* p, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(rng());
}

// Submits and waits; the batch's own status, or the refusal.
inline Status RunBatch(SsdDevice& device, std::vector<IoSegment> segments, bool flush = false) {
  auto batch = std::make_unique<IoBatch>();
  batch->segments = std::move(segments);
  batch->flush = flush;
  auto finished = std::make_shared<std::promise<Status>>();
  std::future<Status> result = finished->get_future();
  batch->done = [finished](Status s) { finished->set_value(std::move(s)); };
  Status queued = device.Submit(std::move(batch));
  if (!queued.ok()) return queued;
  return result.get();
}

// Every SSD test runs on io_uring and on the pread fallback.
inline const bool kBackends[] = {false, true};  // force_pread

inline std::unique_ptr<SsdDevice> OpenDevice(const std::string& path, uint64_t bytes, bool force_pread,
                                             uint32_t queue_depth = 32, size_t max_request = size_t{1} << 20) {
  SsdOptions o;
  o.path = path;
  o.bytes = bytes;
  o.force_pread = force_pread;
  o.queue_depth = queue_depth;
  o.max_request_bytes = max_request;
  std::unique_ptr<SsdDevice> device;
  const Status s = SsdDevice::Open(o, &device);
  if (!s.ok()) Fail(__FILE__, __LINE__, "open " + path + ": " + s.ToString());
  // Where io_uring is compiled in it must be what runs, unless the kernel refuses it.
  if (!force_pread && UringCompiled() && device->backend() != IoBackendKind::kIoUring) {
    Fail(__FILE__, __LINE__, "io_uring compiled in but not used: " + device->backend_reason());
  }
  return device;
}

}  // namespace mnemo::test
