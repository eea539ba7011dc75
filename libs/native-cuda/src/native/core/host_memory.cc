#include "core/host_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/cuda/cuda_runtime.h"

namespace mnemo {
namespace {

constexpr size_t kPinnedAlignment = 4096;  // what cudaHostAlloc guarantees (a page)
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugeBufferBytes = size_t{4} << 20;

std::atomic<size_t> g_live_allocations{0};
std::atomic<size_t> g_live_bytes{0};

bool IsPowerOfTwo(size_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

const char* HostMemoryKindName(HostMemoryKind kind) {
  switch (kind) {
    case HostMemoryKind::kPageable: return "pageable";
    case HostMemoryKind::kPinned: return "pinned";
  }
  return "pageable";
}

Status AllocateHost(size_t bytes, size_t alignment, HostMemoryKind kind, HostAllocation* out) {
  *out = HostAllocation{};
  if (bytes == 0) return Status::InvalidArgument("bytes must be > 0");
  if (!IsPowerOfTwo(alignment) || alignment < sizeof(void*) || alignment > kMaxHostAlignment) {
    return Status::InvalidArgument("alignment must be a power of two in [8, 2^30], got " +
                                   std::to_string(alignment));
  }
  void* data = nullptr;
  switch (kind) {
    case HostMemoryKind::kPinned: {
      if (alignment > kPinnedAlignment) {
        return Status::InvalidArgument("pinned memory is aligned to at most 4096 bytes");
      }
      MNEMO_RETURN_IF_ERROR(cuda::PinnedHostAlloc(bytes, &data));
      if (reinterpret_cast<uintptr_t>(data) % alignment != 0) {
        cuda::PinnedHostFree(data);
        return Status::Internal("cudaHostAlloc returned memory below the requested alignment");
      }
      break;
    }
    case HostMemoryKind::kPageable: {
      // Large buffers get huge-page alignment and advice: streaming copies and O_DIRECT
      // (which pins every page of a request) pay per 4 KiB page, dearly so in a VM.
      const bool huge = bytes >= kHugeBufferBytes;
      if (huge) alignment = std::max(alignment, kHugePage);
      if (posix_memalign(&data, alignment, bytes) != 0) {
        return Status::OutOfMemory("posix_memalign(" + std::to_string(alignment) + ", " +
                                   std::to_string(bytes) + ") failed");
      }
      // Advisory: a kernel with THP off ignores it.
      if (huge) (void)madvise(data, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
      break;
    }
  }
  std::memset(data, 0, bytes);
  *out = HostAllocation{data, bytes, alignment, kind};
  g_live_allocations.fetch_add(1, std::memory_order_relaxed);
  g_live_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return Status::Ok();
}

void FreeHost(const HostAllocation& allocation) {
  if (allocation.data == nullptr) return;
  g_live_allocations.fetch_sub(1, std::memory_order_relaxed);
  g_live_bytes.fetch_sub(allocation.bytes, std::memory_order_relaxed);
  switch (allocation.kind) {
    case HostMemoryKind::kPinned: cuda::PinnedHostFree(allocation.data); return;
    case HostMemoryKind::kPageable: std::free(allocation.data); return;
  }
}

HostMemoryStats GetHostMemoryStats() {
  return {g_live_allocations.load(std::memory_order_relaxed),
          g_live_bytes.load(std::memory_order_relaxed)};
}

}  // namespace mnemo
