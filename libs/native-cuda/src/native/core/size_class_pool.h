// A cache of freed buffers by size class, for memory whose allocation is expensive or
// synchronising (cudaMalloc/cudaFree stall the whole device). Mechanism only: the caller gives
// the raw allocate/release functions and the byte cap; nothing here knows about CUDA.
//
// Size classes: powers of two up to 1 MiB, then four classes per doubling (at most 25% slack),
// so the buffers of a repeated forward pass (the same shapes every step, or shapes that vary
// with the batch) come back from the cache instead of from the allocator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace mnemo {

class SizeClassPool {
 public:
  using RawAlloc = std::function<Status(std::size_t bytes, void** out)>;
  using RawFree = std::function<void(void* ptr)>;

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t trims = 0;      // buffers handed back to the allocator (cap or pressure)
    std::size_t cached_bytes = 0;
    std::size_t live_bytes = 0;  // taken and not yet put back (class sizes)
  };

  SizeClassPool(RawAlloc alloc, RawFree free, std::size_t cap_bytes);
  ~SizeClassPool();
  SizeClassPool(const SizeClassPool&) = delete;
  SizeClassPool& operator=(const SizeClassPool&) = delete;

  // The class a request of `bytes` is served from (>= bytes, >= 256).
  static std::size_t ClassBytes(std::size_t bytes);

  // A buffer of at least `bytes`: a cached one of the same class, or a new one. When the raw
  // allocator fails, the cache is emptied and the allocation tried once more.
  Status Take(std::size_t bytes, void** out);
  // Gives back a buffer from Take; cached while the cache stays under its cap, else freed.
  void Put(void* ptr);
  // Frees every cached buffer (memory pressure, shutdown).
  void Trim();
  Stats stats() const;

 private:
  void TrimLocked();

  RawAlloc alloc_;
  RawFree free_;
  const std::size_t cap_;
  mutable std::mutex mu_;
  std::unordered_map<std::size_t, std::vector<void*>> cached_;  // class bytes -> buffers
  std::unordered_map<void*, std::size_t> live_;                 // ptr -> class bytes
  Stats stats_;
};

}  // namespace mnemo
