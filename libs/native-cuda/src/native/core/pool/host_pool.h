// A host-memory pool device: one region of host memory, sized at open and addressed by
// byte offset (Unified KV pooling §IV: each host-memory module is a pool device). The
// region is never handed to JS as one ArrayBuffer; transfers name it as an operand.
//
// The region is an anonymous mapping aligned to 2 MiB (so transparent huge pages can back
// it and O_DIRECT can read into / write from any 4096-aligned offset), optionally bound to
// one NUMA node, committed at open (so the first put does not take page faults on the hot
// path) and page-locked with cudaHostRegister when asked (a CUDA device is present).
//
// Ownership: shared. Every in-flight transfer holds a reference, so closing the device (the
// owner dropping its reference) never frees memory a native thread is still copying.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/host_memory.h"
#include "core/status.h"

namespace mnemo {

struct HostPoolOptions {
  uint64_t bytes = 0;        // > 0
  int numa_node = -1;        // bind to this node; -1: no binding (first touch, by the opener)
  bool populate = true;      // commit every page at open
  bool huge_pages = true;    // madvise(MADV_HUGEPAGE): fewer TLB misses on large copies
  bool pin = false;          // try cudaHostRegister; on failure stay pageable (pin_error says why)
};

// Live regions in this process (all environments), for nativeStats().
struct HostPoolStats {
  size_t regions = 0;
  uint64_t bytes = 0;
};
HostPoolStats GetHostPoolStats();

class HostPool {
 public:
  // The region's base is aligned to this (and therefore to every O_DIRECT alignment).
  static constexpr size_t kAlignment = size_t{2} << 20;

  static Status Open(const HostPoolOptions& options, std::shared_ptr<HostPool>* out);
  ~HostPool();

  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;

  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  HostMemoryKind kind() const { return kind_; }
  int numa_node() const { return numa_node_; }
  // Why pinning was asked for and did not happen; empty otherwise.
  const std::string& pin_error() const { return pin_error_; }

 private:
  HostPool() = default;

  uint8_t* data_ = nullptr;     // [size_]
  uint64_t size_ = 0;
  uint8_t* mapping_ = nullptr;  // what munmap gets
  size_t mapping_bytes_ = 0;
  HostMemoryKind kind_ = HostMemoryKind::kPageable;
  int numa_node_ = -1;
  std::string pin_error_;
};

}  // namespace mnemo
