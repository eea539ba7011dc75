// SSD pool devices on a preallocated file: create/reopen, alignment and bounds, round trips
// (zero-copy and bounced), coalescing, concurrency, close with I/O in flight — on io_uring
// and on the pread fallback.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "core/crc32c.h"
#include "core/pool/ssd_device.h"
#include "tests/check.h"
#include "tests/pool_test_util.h"
#include "tests/temp_dir.h"

namespace mnemo {
namespace {

using test::AlignedBuffer;
using test::kBackends;
using test::OpenDevice;
using test::RunBatch;

constexpr uint64_t kMiB = 1 << 20;

MNEMO_TEST(ssd_device, creates_a_preallocated_file_and_reopens_it_without_truncating) {
  for (bool pread : kBackends) {
    test::TempDir dir;
    const std::string path = dir.File("pool.bin");
    AlignedBuffer out(64 * 1024);
    test::FillRandom(out.data(), out.size(), 1);
    {
      auto dev = OpenDevice(path, 8 * kMiB, pread);
      CHECK(dev->created());
      CHECK_EQ(dev->size(), 8 * kMiB);
      CHECK(!dev->block_device());
      CHECK_EQ(dev->size() % dev->block_size(), uint64_t{0});
      CHECK(RunBatch(*dev, {{IoOp::kWrite, 5 * kMiB, out.data(), out.size(), nullptr}}).ok());
    }
    struct stat st {};
    CHECK_EQ(stat(path.c_str(), &st), 0);
    CHECK_EQ(static_cast<uint64_t>(st.st_size), 8 * kMiB);
    CHECK(st.st_blocks * 512 >= static_cast<blkcnt_t>(8 * kMiB));  // preallocated, not sparse
    // Reopen: size kept (bytes 0 = as it is, a smaller size never shrinks it), data kept.
    for (uint64_t bytes : {uint64_t{0}, 4 * kMiB}) {
      auto dev = OpenDevice(path, bytes, pread);
      CHECK(!dev->created());
      CHECK_EQ(dev->size(), 8 * kMiB);
      AlignedBuffer in(out.size());
      CHECK(RunBatch(*dev, {{IoOp::kRead, 5 * kMiB, in.data(), in.size(), nullptr}}).ok());
      CHECK(std::memcmp(in.data(), out.data(), out.size()) == 0);
    }
    // Growing keeps the old bytes too.
    auto dev = OpenDevice(path, 12 * kMiB, pread);
    CHECK_EQ(dev->size(), 12 * kMiB);
    AlignedBuffer in(out.size());
    CHECK(RunBatch(*dev, {{IoOp::kRead, 5 * kMiB, in.data(), in.size(), nullptr}}).ok());
    CHECK(std::memcmp(in.data(), out.data(), out.size()) == 0);
  }
}

MNEMO_TEST(ssd_device, refuses_bad_paths_and_options) {
  test::TempDir dir;
  std::unique_ptr<SsdDevice> dev;
  SsdOptions o;
  o.path = dir.File("missing.bin");
  CHECK_EQ(SsdDevice::Open(o, &dev).code(), StatusCode::kNotFound);
  o.path = dir.path();  // a directory
  o.bytes = kMiB;
  CHECK(!SsdDevice::Open(o, &dev).ok());
  o.path = dir.File("x.bin");
  o.queue_depth = 0;
  CHECK_EQ(SsdDevice::Open(o, &dev).code(), StatusCode::kInvalidArgument);
  o.queue_depth = 8;
  o.block_size = 3000;
  CHECK_EQ(SsdDevice::Open(o, &dev).code(), StatusCode::kInvalidArgument);
  CHECK(dev == nullptr);
}

MNEMO_TEST(ssd_device, refuses_misaligned_and_out_of_range_io_queueing_nothing) {
  for (bool pread : kBackends) {
    test::TempDir dir;
    auto dev = OpenDevice(dir.File("p.bin"), 4 * kMiB, pread);
    const uint64_t bs = dev->block_size();
    AlignedBuffer buf(kMiB);
    CHECK_EQ(RunBatch(*dev, {{IoOp::kRead, bs / 2, buf.data(), bs, nullptr}}).code(), StatusCode::kMisaligned);
    CHECK_EQ(RunBatch(*dev, {{IoOp::kWrite, 0, buf.data(), bs + 1, nullptr}}).code(), StatusCode::kMisaligned);
    CHECK_EQ(RunBatch(*dev, {{IoOp::kRead, 4 * kMiB - bs, buf.data(), 2 * bs, nullptr}}).code(), StatusCode::kOutOfRange);
    CHECK_EQ(RunBatch(*dev, {{IoOp::kRead, 4 * kMiB, buf.data(), bs, nullptr}}).code(), StatusCode::kOutOfRange);
    // One bad segment refuses the whole batch: the good one is not written.
    test::FillRandom(buf.data(), bs, 4);
    CHECK_EQ(RunBatch(*dev, {{IoOp::kWrite, 0, buf.data(), bs, nullptr}, {IoOp::kWrite, 8 * kMiB, buf.data(), bs, nullptr}}).code(),
             StatusCode::kOutOfRange);
    AlignedBuffer back(bs);
    CHECK(RunBatch(*dev, {{IoOp::kRead, 0, back.data(), bs, nullptr}}).ok());
    CHECK(std::all_of(back.data(), back.data() + bs, [](uint8_t b) { return b == 0; }));
    CHECK_EQ(dev->stats().queued_batches, uint64_t{0});
    CHECK_EQ(dev->stats().errors, uint64_t{0});
  }
}

MNEMO_TEST(ssd_device, round_trips_scattered_segments_zero_copy_and_bounced) {
  for (bool pread : kBackends) {
    test::TempDir dir;
    auto dev = OpenDevice(dir.File("p.bin"), 16 * kMiB, pread, 16, 256 * 1024);
    const size_t bs = dev->block_size();
    const size_t n = 300;
    AlignedBuffer src(n * 4 * bs + 64);
    test::FillRandom(src.data(), src.size(), 7);
    std::vector<IoSegment> writes;
    std::vector<uint32_t> write_crcs(n);
    for (size_t i = 0; i < n; ++i) {
      const size_t len = (1 + i % 4) * bs;
      // Odd segments come from memory 8 bytes off alignment: those requests bounce.
      uint8_t* mem = src.data() + i * bs % (src.size() - 4 * bs - 8) / bs * bs + (i % 2 ? 8 : 0);
      writes.push_back({IoOp::kWrite, (n - i) * 8 * bs, mem, len, &write_crcs[i]});
    }
    CHECK(RunBatch(*dev, writes).ok());
    AlignedBuffer dst(n * 4 * bs + 8 * n);
    std::vector<IoSegment> reads;
    std::vector<uint32_t> read_crcs(n);
    size_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      reads.push_back({IoOp::kRead, writes[i].offset, dst.data() + at + (i % 3 == 0 ? 4 : 0), writes[i].length, &read_crcs[i]});
      at += writes[i].length + 4;
    }
    CHECK(RunBatch(*dev, reads).ok());
    for (size_t i = 0; i < n; ++i) {
      CHECK(std::memcmp(reads[i].mem, writes[i].mem, writes[i].length) == 0);
      CHECK_EQ(write_crcs[i], Crc32c(0, writes[i].mem, writes[i].length));
      CHECK_EQ(read_crcs[i], write_crcs[i]);
    }
    const SsdStats s = dev->stats();
    CHECK_EQ(s.bytes_written, s.bytes_read);
    CHECK_EQ(s.in_flight, 0u);
    CHECK_EQ(s.errors, uint64_t{0});
  }
}

MNEMO_TEST(ssd_device, coalesces_adjacent_segments_into_few_large_requests) {
  for (bool pread : kBackends) {
    test::TempDir dir;
    auto dev = OpenDevice(dir.File("p.bin"), 8 * kMiB, pread, 32, kMiB);
    const size_t bs = dev->block_size();
    const size_t n = 4 * kMiB / bs;
    AlignedBuffer mem(4 * kMiB);
    test::FillRandom(mem.data(), mem.size(), 2);
    std::vector<IoSegment> segs;
    for (size_t i = 0; i < n; ++i) segs.push_back({IoOp::kWrite, i * bs, mem.data() + i * bs, bs, nullptr});
    CHECK(RunBatch(*dev, segs).ok());
    CHECK_EQ(dev->stats().requests, uint64_t{4});  // 4 MiB in 1 MiB requests, not n
  }
}

MNEMO_TEST(ssd_device, io_uring_keeps_many_requests_in_flight) {
  if (!UringCompiled()) SKIP("built without liburing");
  test::TempDir dir;
  auto dev = OpenDevice(dir.File("p.bin"), 32 * kMiB, false, 16, 64 * 1024);
  AlignedBuffer mem(32 * kMiB);
  test::FillRandom(mem.data(), mem.size(), 3);
  CHECK(RunBatch(*dev, {{IoOp::kWrite, 0, mem.data(), mem.size(), nullptr}}).ok());
  CHECK_EQ(dev->queue_depth(), 16u);
  CHECK(dev->stats().peak_in_flight > 1);
  CHECK(dev->stats().peak_in_flight <= 16);
}

MNEMO_TEST(ssd_device, concurrent_batches_from_many_threads_land_where_they_should) {
  for (bool pread : kBackends) {
    test::TempDir dir;
    auto dev = OpenDevice(dir.File("p.bin"), 16 * kMiB, pread, 8, 128 * 1024);
    const size_t bs = dev->block_size();
    constexpr int kThreads = 4;
    constexpr int kBatches = 12;
    const size_t slice = 16 * kMiB / kThreads;
    std::vector<std::unique_ptr<AlignedBuffer>> mems;
    for (int t = 0; t < kThreads; ++t) {
      mems.push_back(std::make_unique<AlignedBuffer>(slice));
      test::FillRandom(mems[t]->data(), slice, 100 + t);
    }
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        const size_t per = slice / kBatches / bs * bs;
        for (int b = 0; b < kBatches; ++b) {
          const uint64_t off = t * slice + b * per;
          if (!RunBatch(*dev, {{IoOp::kWrite, off, mems[t]->data() + b * per, per, nullptr}}).ok()) ++failures;
        }
      });
    }
    for (std::thread& th : threads) th.join();
    CHECK_EQ(failures.load(), 0);
    AlignedBuffer back(16 * kMiB);
    CHECK(RunBatch(*dev, {{IoOp::kRead, 0, back.data(), back.size(), nullptr}}).ok());
    const size_t per = slice / kBatches / bs * bs;
    for (int t = 0; t < kThreads; ++t) {
      CHECK(std::memcmp(back.data() + t * slice, mems[t]->data(), per * kBatches) == 0);
    }
  }
}

MNEMO_TEST(ssd_device, close_with_io_in_flight_completes_everything_then_refuses) {
  for (bool pread : kBackends) {
    test::TempDir dir;
    auto dev = OpenDevice(dir.File("p.bin"), 32 * kMiB, pread, 8, 256 * 1024);
    AlignedBuffer mem(32 * kMiB);
    std::atomic<int> completed{0};
    std::atomic<int> ok{0};
    for (int b = 0; b < 8; ++b) {
      auto batch = std::make_unique<IoBatch>();
      batch->segments.push_back({IoOp::kWrite, b * 4 * kMiB, mem.data() + b * 4 * kMiB, 4 * kMiB, nullptr});
      batch->done = [&](Status s) {
        if (s.ok()) ++ok;
        ++completed;
      };
      CHECK(dev->Submit(std::move(batch)).ok());
    }
    dev->Close();
    CHECK_EQ(completed.load(), 8);
    CHECK_EQ(ok.load(), 8);
    CHECK(dev->closing());
    CHECK_EQ(RunBatch(*dev, {{IoOp::kRead, 0, mem.data(), kMiB, nullptr}}).code(), StatusCode::kClosed);
    dev->Close();  // idempotent
  }
}

MNEMO_TEST(ssd_device, flush_runs_after_earlier_batches_and_empty_batches_complete) {
  for (bool pread : kBackends) {
    test::TempDir dir;
    auto dev = OpenDevice(dir.File("p.bin"), 4 * kMiB, pread);
    AlignedBuffer mem(kMiB);
    CHECK(RunBatch(*dev, {{IoOp::kWrite, 0, mem.data(), kMiB, nullptr}}).ok());
    CHECK(RunBatch(*dev, {}, true).ok());
    CHECK(RunBatch(*dev, {}).ok());
  }
}

}  // namespace
}  // namespace mnemo
