// Aligned host allocations for KV-cache staging buffers. Pinned (page-locked) memory makes
// host↔device copies truly asynchronous, so it is used whenever a CUDA device is present;
// otherwise plain aligned memory.
//
// Ownership: the caller owns the returned HostAllocation and frees it exactly once with
// FreeHost() (the addon does so from the ArrayBuffer finalizer).
#pragma once

#include <cstddef>

#include "core/status.h"

namespace mnemo {

enum class HostMemoryKind {
  kPageable,  // posix_memalign
  kPinned,    // cudaHostAlloc
};

const char* HostMemoryKindName(HostMemoryKind kind);

struct HostAllocation {
  void* data = nullptr;
  size_t bytes = 0;
  size_t alignment = 0;
  HostMemoryKind kind = HostMemoryKind::kPageable;
};

// The largest alignment accepted (1 GiB, a huge page).
inline constexpr size_t kMaxHostAlignment = size_t{1} << 30;

// Allocates `bytes` (> 0) aligned to `alignment` (a power of two in [8, kMaxHostAlignment]).
// kPinned falls back to nothing: it fails with the CUDA status, and the caller decides.
// Pinned memory larger-aligned than 4096 bytes is not offered (kInvalidArgument).
// The memory is zero-filled so that no stale heap bytes leak into JS. Pageable buffers of
// 4 MiB or more are aligned to 2 MiB (at least) and advised for transparent huge pages.
Status AllocateHost(size_t bytes, size_t alignment, HostMemoryKind kind, HostAllocation* out);

void FreeHost(const HostAllocation& allocation);

// Live allocations made through AllocateHost in this process (all environments).
struct HostMemoryStats {
  size_t allocations = 0;
  size_t bytes = 0;
};
HostMemoryStats GetHostMemoryStats();

}  // namespace mnemo
