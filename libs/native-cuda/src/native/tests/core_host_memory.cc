// Aligned host allocation and the CUDA runtime facade without a device.
#include <cstdint>
#include <string>

#include "core/cuda/cuda_runtime.h"
#include "core/host_memory.h"
#include "tests/check.h"

namespace mnemo {
namespace {

MNEMO_TEST(host_memory, pageable_allocations_honour_alignment) {
  const HostMemoryStats before = GetHostMemoryStats();
  for (size_t alignment : {size_t{8}, size_t{64}, size_t{4096}, size_t{1} << 16, size_t{1} << 21}) {
    for (size_t bytes : {size_t{1}, size_t{100}, size_t{4096}, size_t{1} << 20}) {
      HostAllocation a;
      CHECK(AllocateHost(bytes, alignment, HostMemoryKind::kPageable, &a).ok());
      CHECK(a.data != nullptr);
      CHECK_EQ(reinterpret_cast<uintptr_t>(a.data) % alignment, uintptr_t{0});
      CHECK_EQ(a.bytes, bytes);
      CHECK_EQ(a.kind, HostMemoryKind::kPageable);
      // Zero-filled and writable end to end.
      const auto* p = static_cast<const uint8_t*>(a.data);
      CHECK_EQ(p[0], 0);
      CHECK_EQ(p[bytes - 1], 0);
      static_cast<uint8_t*>(a.data)[bytes - 1] = 0xFF;
      CHECK_EQ(GetHostMemoryStats().allocations, before.allocations + 1);
      CHECK_EQ(GetHostMemoryStats().bytes, before.bytes + bytes);
      FreeHost(a);
      CHECK_EQ(GetHostMemoryStats().allocations, before.allocations);
    }
  }
}

MNEMO_TEST(host_memory, large_pageable_buffers_are_huge_page_aligned) {
  HostAllocation a;
  CHECK(AllocateHost(size_t{4} << 20, 64, HostMemoryKind::kPageable, &a).ok());
  CHECK_EQ(reinterpret_cast<uintptr_t>(a.data) % (size_t{2} << 20), uintptr_t{0});
  CHECK(a.alignment >= (size_t{2} << 20));
  FreeHost(a);
}

MNEMO_TEST(host_memory, rejects_bad_sizes_and_alignments) {
  struct Case {
    size_t bytes;
    size_t alignment;
  };
  const Case cases[] = {{0, 64}, {64, 0}, {64, 3}, {64, 4}, {64, 48}, {64, kMaxHostAlignment * 2}};
  for (const Case& c : cases) {
    HostAllocation a;
    const Status s = AllocateHost(c.bytes, c.alignment, HostMemoryKind::kPageable, &a);
    CHECK_EQ(s.code(), StatusCode::kInvalidArgument);
    CHECK(a.data == nullptr);
  }
}

MNEMO_TEST(host_memory, huge_allocation_fails_with_out_of_memory) {
  HostAllocation a;
  const Status s = AllocateHost(SIZE_MAX / 2, 64, HostMemoryKind::kPageable, &a);
  CHECK_EQ(s.code(), StatusCode::kOutOfMemory);
  CHECK(a.data == nullptr);
}

MNEMO_TEST(host_memory, free_of_empty_allocation_is_a_no_op) { FreeHost(HostAllocation{}); }

MNEMO_TEST(cuda_runtime, reports_devices_or_why_there_are_none) {
  const cuda::CudaInfo info = cuda::QueryCudaInfo();
#ifdef MNEMO_WITH_CUDA
  CHECK(info.compiled);
  CHECK(info.runtime_version > 0);
#else
  CHECK(!info.compiled);
  CHECK_EQ(info.device_count, 0);
#endif
  CHECK(info.device_count >= 0);
  CHECK_EQ(info.devices.size(), static_cast<size_t>(info.device_count));
  if (info.device_count == 0) {
    CHECK(!info.error.empty());
  } else {
    CHECK(info.error.empty());
    CHECK(!info.devices[0].name.empty());
  }
}

MNEMO_TEST(cuda_runtime, pinned_allocation_without_a_device_fails_cleanly) {
  const cuda::CudaInfo info = cuda::QueryCudaInfo();
  HostAllocation a;
  const Status s = AllocateHost(1 << 20, 4096, HostMemoryKind::kPinned, &a);
  if (info.device_count > 0) {
    CHECK(s.ok());
    CHECK_EQ(reinterpret_cast<uintptr_t>(a.data) % 4096, uintptr_t{0});
    CHECK_EQ(a.kind, HostMemoryKind::kPinned);
    FreeHost(a);
    return;
  }
  CHECK(!s.ok());
  CHECK_EQ(s.group(), 3);  // a device-family error, not a crash or a bogus pointer
  CHECK(a.data == nullptr);
}

MNEMO_TEST(cuda_runtime, pinned_memory_refuses_alignment_above_a_page) {
  HostAllocation a;
  const Status s = AllocateHost(1 << 20, 1 << 16, HostMemoryKind::kPinned, &a);
  CHECK_EQ(s.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mnemo
