// Conflict detection for batches whose parts run concurrently: a byte written by one part
// and written or read by another (or by the same part) would make the result depend on
// thread timing. Bytes live in "spaces": process memory (absolute addresses, so aliasing
// buffers are caught) and each SSD device's byte range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"

namespace mnemo {

struct AccessInterval {
  uint64_t space = 0;  // 0: process memory; others: one per device
  uint64_t begin = 0;
  uint64_t end = 0;    // exclusive; empty intervals are ignored
  size_t range = 0;    // the caller's index, for the message
  bool write = false;
};

// kRangeConflict naming both ranges when a written byte is also written or read by another
// interval; reads may overlap reads. O(n log n).
Status FindConflict(std::vector<AccessInterval> intervals);

}  // namespace mnemo
