// Request planning of pool-device I/O: coalescing, cuts, bounce detection.
#include <cstdint>
#include <vector>

#include "core/io/io_request.h"
#include "tests/check.h"

namespace mnemo {
namespace {

constexpr size_t kBlock = 4096;

// 4096-aligned fake memory: the planner only looks at addresses.
uint8_t* At(uintptr_t offset) { return reinterpret_cast<uint8_t*>(uintptr_t{1} << 30) + offset; }

MNEMO_TEST(io_plan, contiguous_segments_share_one_request_and_one_iovec) {
  std::vector<IoSegment> segs;
  // Given out of order: the planner sorts by device offset.
  for (int i = 7; i >= 0; --i) segs.push_back({IoOp::kWrite, i * kBlock, At(i * kBlock), kBlock, nullptr});
  const std::vector<IoRequest> reqs = PlanIoRequests(segs, 1 << 20, 512, 256);
  CHECK_EQ(reqs.size(), size_t{1});
  CHECK_EQ(reqs[0].offset, uint64_t{0});
  CHECK_EQ(reqs[0].length, 8 * kBlock);
  CHECK_EQ(reqs[0].parts.size(), size_t{8});
  CHECK_EQ(reqs[0].iov.size(), size_t{1});
  CHECK(!reqs[0].bounce);
}

MNEMO_TEST(io_plan, scattered_memory_becomes_iovecs_of_one_request) {
  std::vector<IoSegment> segs;
  for (int i = 0; i < 5; ++i) segs.push_back({IoOp::kRead, i * kBlock, At((10 - 2 * i) * kBlock), kBlock, nullptr});
  const std::vector<IoRequest> reqs = PlanIoRequests(segs, 1 << 20, 512, 256);
  CHECK_EQ(reqs.size(), size_t{1});
  CHECK_EQ(reqs[0].iov.size(), size_t{5});
  CHECK(reqs[0].iov[0].iov_base == At(10 * kBlock));
}

MNEMO_TEST(io_plan, gaps_directions_and_limits_start_new_requests) {
  const std::vector<IoSegment> segs = {
      {IoOp::kRead, 0, At(0), kBlock, nullptr},
      {IoOp::kRead, 2 * kBlock, At(kBlock), kBlock, nullptr},      // gap on the device
      {IoOp::kWrite, 3 * kBlock, At(2 * kBlock), kBlock, nullptr},  // other direction
  };
  CHECK_EQ(PlanIoRequests(segs, 1 << 20, 512, 256).size(), size_t{3});
  // max_iov = 2: the third scattered part needs a new request.
  std::vector<IoSegment> scattered;
  for (int i = 0; i < 3; ++i) scattered.push_back({IoOp::kRead, i * kBlock, At(i * 2 * kBlock), kBlock, nullptr});
  const std::vector<IoRequest> reqs = PlanIoRequests(scattered, 1 << 20, 512, 2);
  CHECK_EQ(reqs.size(), size_t{2});
  CHECK_EQ(reqs[0].iov.size(), size_t{2});
}

MNEMO_TEST(io_plan, long_segments_are_cut_at_the_request_size) {
  const std::vector<IoSegment> segs = {{IoOp::kWrite, 0, At(0), 10 * kBlock, nullptr}};
  const std::vector<IoRequest> reqs = PlanIoRequests(segs, 4 * kBlock, 512, 256);
  CHECK_EQ(reqs.size(), size_t{3});
  CHECK_EQ(reqs[0].length, 4 * kBlock);
  CHECK_EQ(reqs[2].offset, uint64_t{8 * kBlock});
  CHECK_EQ(reqs[2].length, 2 * kBlock);
  CHECK(reqs[1].iov[0].iov_base == At(4 * kBlock));
}

MNEMO_TEST(io_plan, a_segment_that_fits_a_request_is_never_split) {
  uint32_t crc = 0;
  const std::vector<IoSegment> segs = {
      {IoOp::kRead, 0, At(0), 3 * kBlock, nullptr},
      {IoOp::kRead, 3 * kBlock, At(3 * kBlock), 2 * kBlock, &crc},
  };
  const std::vector<IoRequest> reqs = PlanIoRequests(segs, 4 * kBlock, 512, 256);
  CHECK_EQ(reqs.size(), size_t{2});
  CHECK_EQ(reqs[1].parts.size(), size_t{1});
  CHECK(reqs[1].parts[0].crc_out == &crc);
}

MNEMO_TEST(io_plan, unaligned_memory_is_bounced) {
  const std::vector<IoSegment> segs = {
      {IoOp::kRead, 0, At(0), kBlock, nullptr},
      {IoOp::kRead, kBlock, At(2 * kBlock) + 8, kBlock, nullptr},
  };
  const std::vector<IoRequest> reqs = PlanIoRequests(segs, 1 << 20, 512, 256);
  CHECK_EQ(reqs.size(), size_t{1});
  CHECK(reqs[0].bounce);
  CHECK(reqs[0].iov.empty());
  CHECK_EQ(reqs[0].parts.size(), size_t{2});
}

MNEMO_TEST(io_plan, advance_moves_the_iovec_cursor) {
  std::vector<IoSegment> segs;
  for (int i = 0; i < 3; ++i) segs.push_back({IoOp::kRead, i * kBlock, At(i * 2 * kBlock), kBlock, nullptr});
  IoRequest r = PlanIoRequests(segs, 1 << 20, 512, 256)[0];
  AdvanceRequest(&r, kBlock + 512);
  CHECK_EQ(r.done, kBlock + 512);
  CHECK_EQ(r.iov_first, size_t{1});
  CHECK(r.iov[1].iov_base == At(2 * kBlock) + 512);
  CHECK_EQ(r.iov[1].iov_len, kBlock - 512);
}

}  // namespace
}  // namespace mnemo
