#include "core/pool/host_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/cuda/cuda_runtime.h"
#include "core/pool/numa.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

namespace mnemo {
namespace {

std::atomic<size_t> g_regions{0};
std::atomic<uint64_t> g_bytes{0};

size_t PageSize() {
  const long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<size_t>(page) : 4096;
}

// Writes one byte per page: the fallback when MADV_POPULATE_WRITE is unknown (< 5.14).
void TouchPages(uint8_t* p, size_t bytes, size_t page) {
  for (size_t off = 0; off < bytes; off += page) {
    reinterpret_cast<volatile uint8_t*>(p)[off] = 0;
  }
}

}  // namespace

HostPoolStats GetHostPoolStats() {
  return {g_regions.load(std::memory_order_relaxed), g_bytes.load(std::memory_order_relaxed)};
}

Status HostPool::Open(const HostPoolOptions& options, std::shared_ptr<HostPool>* out) {
  out->reset();
  if (options.bytes == 0) return Status::InvalidArgument("host pool bytes must be > 0");
  const size_t page = PageSize();
  if (options.bytes > (uint64_t{1} << 46)) {
    return Status::InvalidArgument("host pool bytes must be at most 2^46");
  }
  const size_t rounded = (options.bytes + page - 1) / page * page;
  // Over-map by the alignment and trim, so the region starts on a 2 MiB boundary.
  const size_t mapping_bytes = rounded + kAlignment;
  void* raw = mmap(nullptr, mapping_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    return Status::OutOfMemory("mmap(" + std::to_string(mapping_bytes) + "): " + std::strerror(errno));
  }
  std::shared_ptr<HostPool> pool(new HostPool());
  pool->mapping_ = static_cast<uint8_t*>(raw);
  pool->mapping_bytes_ = mapping_bytes;
  const auto base = reinterpret_cast<uintptr_t>(raw);
  pool->data_ = reinterpret_cast<uint8_t*>((base + kAlignment - 1) / kAlignment * kAlignment);
  pool->size_ = options.bytes;
  // From here on the destructor unmaps; counters are adjusted now so it can decrement them.
  g_regions.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(options.bytes, std::memory_order_relaxed);

  if (options.huge_pages) {
    // Advisory: a kernel with THP off ignores it, which is fine.
    (void)madvise(pool->data_, rounded, MADV_HUGEPAGE);
  }
  if (options.numa_node >= 0) {
    MNEMO_RETURN_IF_ERROR(numa::BindToNode(pool->data_, rounded, options.numa_node));
    pool->numa_node_ = options.numa_node;
  }
  if (options.populate) {
    // NOTE: without this every first write to a page faults (≈0.25 µs per 4 KiB), which
    // would halve the bandwidth of the first puts into a fresh pool.
    if (madvise(pool->data_, rounded, MADV_POPULATE_WRITE) != 0) {
      if (errno == ENOMEM) {
        return Status::OutOfMemory("cannot commit " + std::to_string(rounded) + " bytes of host pool memory");
      }
      TouchPages(pool->data_, rounded, page);
    }
  }
  if (options.pin) {
    const Status pinned = cuda::RegisterHost(pool->data_, rounded);
    if (pinned.ok()) {
      pool->kind_ = HostMemoryKind::kPinned;
    } else {
      pool->pin_error_ = pinned.ToString();
    }
  }
  *out = std::move(pool);
  return Status::Ok();
}

HostPool::~HostPool() {
  if (mapping_ == nullptr) return;
  if (kind_ == HostMemoryKind::kPinned) cuda::UnregisterHost(data_);
  munmap(mapping_, mapping_bytes_);
  g_regions.fetch_sub(1, std::memory_order_relaxed);
  g_bytes.fetch_sub(size_, std::memory_order_relaxed);
}

}  // namespace mnemo
