// Batched transfers: device-cache layout ↔ host pool ↔ SSD round trips with fused CRCs,
// parallel reads from several devices, validation, concurrency, corruption detection.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <future>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "core/crc32c.h"
#include "core/pool/host_pool.h"
#include "core/pool/transfer.h"
#include "core/task_queue.h"
#include "tests/check.h"
#include "tests/pool_test_util.h"
#include "tests/temp_dir.h"

namespace mnemo {
namespace {

using test::AlignedBuffer;
using test::kBackends;
using test::OpenDevice;

constexpr uint64_t kMiB = 1 << 20;

struct Outcome {
  Status status;
  TransferResult result;
};

Outcome Run(const TransferBatch& batch, TaskQueue& pool, const TransferOptions& options = {}) {
  std::promise<Outcome> finished;
  std::future<Outcome> f = finished.get_future();
  const Status s = SubmitTransfer(batch, pool, [&finished](Status st, TransferResult r) {
    finished.set_value({std::move(st), std::move(r)});
  }, options);
  if (!s.ok()) return {s, {}};
  return f.get();
}

TransferOperand Mem(uint8_t* data, uint64_t size) { return {OperandKind::kMemory, data, size, nullptr}; }
TransferOperand Ssd(SsdDevice* d) { return {OperandKind::kSsd, nullptr, 0, d}; }

std::shared_ptr<HostPool> OpenPool(uint64_t bytes) {
  std::shared_ptr<HostPool> pool;
  HostPoolOptions o;
  o.bytes = bytes;
  CHECK(HostPool::Open(o, &pool).ok());
  return pool;
}

// A tiny engine geometry: the device cache is [block][layer][K|V][16][kv_heads][head_dim]
// floats; a chunk payload is [layer][K|V][16 * blocks][kv_heads][head_dim].
struct Geometry {
  size_t layers = 3, kv_heads = 2, head_dim = 8, block = 16, blocks_per_chunk = 16;
  size_t RowBytes() const { return kv_heads * head_dim * 4; }
  size_t PlaneBytes() const { return block * RowBytes(); }
  size_t BlockBytes() const { return layers * 2 * PlaneBytes(); }
  size_t LayerSegmentBytes() const { return 2 * blocks_per_chunk * PlaneBytes(); }
  size_t CacheOffset(size_t b, size_t l, size_t kv) const { return ((b * layers + l) * 2 + kv) * PlaneBytes(); }
  size_t PayloadOffset(size_t l, size_t kv, size_t i) const {
    return l * LayerSegmentBytes() + (kv * blocks_per_chunk + i) * PlaneBytes();
  }
};

// Ranges moving one chunk's blocks between the cache (operand c) and payload segments
// (operand p at `base`); gather when `to_payload`.
void ChunkRanges(const Geometry& g, const std::vector<size_t>& block_ids, uint32_t c, uint32_t p, uint64_t base,
                 bool to_payload, std::vector<TransferRange>* out) {
  for (size_t l = 0; l < g.layers; ++l) {
    for (size_t kv = 0; kv < 2; ++kv) {
      for (size_t i = 0; i < block_ids.size(); ++i) {
        const uint64_t cache = g.CacheOffset(block_ids[i], l, kv);
        const uint64_t payload = base + g.PayloadOffset(l, kv, i);
        out->push_back(to_payload ? TransferRange{c, cache, p, payload, g.PlaneBytes()}
                                  : TransferRange{p, payload, c, cache, g.PlaneBytes()});
      }
    }
  }
}

MNEMO_TEST(transfer, device_cache_to_host_pool_to_ssd_and_back_is_bit_exact_with_fused_crcs) {
  TaskQueue threads(3);
  const Geometry g;
  const size_t num_blocks = 40;
  for (bool pread : kBackends) {
    test::TempDir dir;
    auto ssd = OpenDevice(dir.File("p.bin"), 8 * kMiB, pread, 16, 64 * 1024);
    std::vector<uint8_t> cache(num_blocks * g.BlockBytes());
    test::FillRandom(cache.data(), cache.size(), 42);
    std::vector<size_t> blocks(g.blocks_per_chunk);
    std::iota(blocks.begin(), blocks.end(), 0);
    std::shuffle(blocks.begin(), blocks.end(), std::mt19937(9));
    for (size_t& b : blocks) b = (b * 7 + 3) % num_blocks;  // scattered over the cache
    auto host = OpenPool(4 * kMiB);
    const uint64_t base = 4096 * 3;

    // 1. Gather into the host pool, one CRC per layer segment (tiled by destinations).
    TransferBatch gather;
    gather.operands = {Mem(cache.data(), cache.size()), Mem(host->data(), host->size())};
    ChunkRanges(g, blocks, 0, 1, base, true, &gather.ranges);
    for (size_t l = 0; l < g.layers; ++l) gather.crcs.push_back({1, base + l * g.LayerSegmentBytes(), g.LayerSegmentBytes()});
    const Outcome put = Run(gather, threads);
    CHECK(put.status.ok());
    CHECK_EQ(put.result.fused_crcs, g.layers);
    for (size_t l = 0; l < g.layers; ++l) {
      CHECK_EQ(put.result.crcs[l], Crc32c(0, host->data() + base + l * g.LayerSegmentBytes(), g.LayerSegmentBytes()));
    }

    // 2. Host pool → SSD at aligned LBAs (layer segments in reverse order), CRCs on the way.
    TransferBatch to_ssd;
    to_ssd.operands = {Mem(host->data(), host->size()), Ssd(ssd.get())};
    const uint64_t lba0 = 1 * kMiB;
    for (size_t l = 0; l < g.layers; ++l) {
      const uint64_t seg = base + l * g.LayerSegmentBytes();
      to_ssd.ranges.push_back({0, seg, 1, lba0 + (g.layers - 1 - l) * g.LayerSegmentBytes(), g.LayerSegmentBytes()});
      to_ssd.crcs.push_back({0, seg, g.LayerSegmentBytes()});
    }
    const Outcome written = Run(to_ssd, threads);
    CHECK(written.status.ok());
    CHECK_EQ(written.result.fused_crcs, g.layers);
    CHECK(written.result.crcs == put.result.crcs);

    // 3. SSD → a second host pool, CRCs over what arrived.
    auto host2 = OpenPool(4 * kMiB);
    TransferBatch from_ssd;
    from_ssd.operands = {Ssd(ssd.get()), Mem(host2->data(), host2->size())};
    for (size_t l = 0; l < g.layers; ++l) {
      from_ssd.ranges.push_back({0, lba0 + (g.layers - 1 - l) * g.LayerSegmentBytes(), 1, l * g.LayerSegmentBytes(),
                                 g.LayerSegmentBytes()});
      from_ssd.crcs.push_back({1, l * g.LayerSegmentBytes(), g.LayerSegmentBytes()});
    }
    const Outcome read = Run(from_ssd, threads);
    CHECK(read.status.ok());
    CHECK(read.result.crcs == put.result.crcs);

    // 4. Scatter into a fresh cache at other block ids, verifying CRCs over the sources.
    std::vector<uint8_t> cache2(num_blocks * g.BlockBytes());
    std::vector<size_t> blocks2(blocks.size());
    for (size_t i = 0; i < blocks.size(); ++i) blocks2[i] = (blocks[i] + 11) % num_blocks;
    TransferBatch scatter;
    scatter.operands = {Mem(cache2.data(), cache2.size()), Mem(host2->data(), host2->size())};
    ChunkRanges(g, blocks2, 0, 1, 0, false, &scatter.ranges);
    for (size_t l = 0; l < g.layers; ++l) scatter.crcs.push_back({1, l * g.LayerSegmentBytes(), g.LayerSegmentBytes()});
    const Outcome got = Run(scatter, threads);
    CHECK(got.status.ok());
    CHECK_EQ(got.result.fused_crcs, g.layers);
    CHECK(got.result.crcs == put.result.crcs);
    for (size_t i = 0; i < blocks.size(); ++i) {
      for (size_t l = 0; l < g.layers; ++l) {
        for (size_t kv = 0; kv < 2; ++kv) {
          CHECK(std::memcmp(cache2.data() + g.CacheOffset(blocks2[i], l, kv), cache.data() + g.CacheOffset(blocks[i], l, kv),
                            g.PlaneBytes()) == 0);
        }
      }
    }
  }
}

MNEMO_TEST(transfer, crc_ranges_nothing_tiles_run_in_a_second_phase) {
  TaskQueue threads(2);
  std::vector<uint8_t> a(3 * kMiB + 5), b(3 * kMiB + 5);
  test::FillRandom(a.data(), a.size(), 1);
  TransferBatch batch;
  batch.operands = {Mem(a.data(), a.size()), Mem(b.data(), b.size())};
  batch.ranges = {{0, 0, 1, 0, 2 * kMiB}};
  batch.crcs = {{1, 0, 2 * kMiB}, {1, 1, 2 * kMiB}, {0, 100, 3 * kMiB - 95}, {1, 7, 0}};
  const Outcome out = Run(batch, threads);
  CHECK(out.status.ok());
  CHECK_EQ(out.result.fused_crcs, size_t{1});  // only the first is tiled
  CHECK_EQ(out.result.crcs[0], Crc32c(0, b.data(), 2 * kMiB));
  CHECK_EQ(out.result.crcs[1], Crc32c(0, b.data() + 1, 2 * kMiB));
  CHECK_EQ(out.result.crcs[2], Crc32c(0, a.data() + 100, 3 * kMiB - 95));
  CHECK_EQ(out.result.crcs[3], 0u);
  // A batch of CRCs alone.
  TransferBatch only;
  only.operands = {Mem(a.data(), a.size())};
  only.crcs = {{0, 3, 12345}};
  const Outcome crc = Run(only, threads);
  CHECK(crc.status.ok());
  CHECK_EQ(crc.result.crcs[0], Crc32c(0, a.data() + 3, 12345));
}

// A ParallelRun over real threads, one per item, so the shards really run side by side.
void Threaded(size_t n, const std::function<void(size_t)>& fn) {
  std::vector<std::thread> lanes;
  for (size_t i = 0; i < n; ++i) lanes.emplace_back([&fn, i] { fn(i); });
  for (std::thread& t : lanes) t.join();
}

MNEMO_TEST(transfer, inline_runs_scatter_and_crcs_on_the_callers_lanes_with_the_same_results) {
  const Geometry g;
  const size_t num_blocks = 40;
  std::vector<uint8_t> payload(g.layers * g.LayerSegmentBytes());
  test::FillRandom(payload.data(), payload.size(), 3);
  std::vector<size_t> blocks(g.blocks_per_chunk);
  for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = (i * 7 + 3) % num_blocks;
  for (size_t lanes : {size_t{1}, size_t{2}, size_t{5}}) {
    std::vector<uint8_t> cache(num_blocks * g.BlockBytes());
    TransferBatch scatter;
    scatter.operands = {Mem(cache.data(), cache.size()), Mem(payload.data(), payload.size())};
    ChunkRanges(g, blocks, 0, 1, 0, false, &scatter.ranges);
    for (size_t l = 0; l < g.layers; ++l) scatter.crcs.push_back({1, l * g.LayerSegmentBytes(), g.LayerSegmentBytes()});
    scatter.crcs.push_back({0, 5, 3 * g.PlaneBytes() + 1});  // tiled by nothing: second phase
    TransferOptions small;
    small.min_shard_bytes = 4096;  // several shards even at this size
    small.crc_piece_bytes = 1000;
    size_t items = 0;
    TransferResult r;
    const Status s = RunTransferInline(scatter, lanes, [&items](size_t n, const std::function<void(size_t)>& fn) {
      items += n;
      Threaded(n, fn);
    }, &r, small);
    CHECK(s.ok());
    CHECK(items > lanes);  // copies and CRC pieces both went through the caller's lanes
    CHECK_EQ(r.fused_crcs, g.layers);
    for (size_t l = 0; l < g.layers; ++l) CHECK_EQ(r.crcs[l], Crc32c(0, payload.data() + l * g.LayerSegmentBytes(), g.LayerSegmentBytes()));
    CHECK_EQ(r.crcs[g.layers], Crc32c(0, cache.data() + 5, 3 * g.PlaneBytes() + 1));
    for (size_t i = 0; i < blocks.size(); ++i) {
      for (size_t l = 0; l < g.layers; ++l) {
        for (size_t kv = 0; kv < 2; ++kv) {
          CHECK(std::memcmp(cache.data() + g.CacheOffset(blocks[i], l, kv), payload.data() + g.PayloadOffset(l, kv, i), g.PlaneBytes()) == 0);
        }
      }
    }
  }
}

MNEMO_TEST(transfer, inline_refuses_ssd_ranges_and_bad_batches_before_moving_anything) {
  test::TempDir dir;
  auto ssd = OpenDevice(dir.File("p.bin"), 4 * kMiB, true);
  std::vector<uint8_t> a(64 * 1024, 7), b(64 * 1024, 0);
  bool ran = false;
  const ParallelRun never = [&ran](size_t n, const std::function<void(size_t)>&) { ran = ran || n > 0; };
  TransferResult r;
  TransferBatch to_ssd;
  to_ssd.operands = {Mem(a.data(), a.size()), Ssd(ssd.get())};
  to_ssd.ranges = {{0, 0, 1, 0, 4096}};
  CHECK(RunTransferInline(to_ssd, 2, never, &r).code() == StatusCode::kInvalidArgument);
  TransferBatch conflict;
  conflict.operands = {Mem(a.data(), a.size()), Mem(b.data(), b.size())};
  conflict.ranges = {{0, 0, 1, 0, 100}, {0, 0, 1, 50, 100}};
  CHECK(RunTransferInline(conflict, 2, never, &r).code() == StatusCode::kRangeConflict);
  // What a caller checks before queueing the batch refuses the same batches.
  CHECK(ValidateInlineTransfer(to_ssd).code() == StatusCode::kInvalidArgument);
  CHECK(ValidateInlineTransfer(conflict).code() == StatusCode::kRangeConflict);
  CHECK(!ran);
  CHECK(b[60] == 0);
}

MNEMO_TEST(transfer, one_read_is_served_by_several_devices_in_parallel) {
  TaskQueue threads(2);
  for (bool pread : kBackends) {
    test::TempDir dir;
    auto d0 = OpenDevice(dir.File("a.bin"), 8 * kMiB, pread);
    auto d1 = OpenDevice(dir.File("b.bin"), 8 * kMiB, pread);
    auto host = OpenPool(8 * kMiB);
    test::FillRandom(host->data(), 8 * kMiB, 5);
    // Segments striped 3:1 over the two devices (the policy's choice; here fixed).
    const uint64_t seg = 256 * 1024;
    TransferBatch put;
    put.operands = {Mem(host->data(), host->size()), Ssd(d0.get()), Ssd(d1.get())};
    uint64_t at0 = 0, at1 = 0;
    std::vector<std::pair<uint32_t, uint64_t>> where;
    for (uint64_t i = 0; i < 16; ++i) {
      const bool second = i % 4 == 3;
      uint64_t& at = second ? at1 : at0;
      put.ranges.push_back({0, i * seg, second ? 2u : 1u, at, seg});
      where.push_back({second ? 2u : 1u, at});
      at += seg;
    }
    CHECK(Run(put, threads).status.ok());
    CHECK_EQ(d0->stats().bytes_written, 12 * seg);
    CHECK_EQ(d1->stats().bytes_written, 4 * seg);
    std::vector<uint8_t> back(16 * seg);
    TransferBatch get;
    get.operands = {Mem(back.data(), back.size()), Ssd(d0.get()), Ssd(d1.get())};
    for (uint64_t i = 0; i < 16; ++i) get.ranges.push_back({where[i].first, where[i].second, 0, i * seg, seg});
    get.crcs = {{0, 0, back.size()}};
    const Outcome out = Run(get, threads);
    CHECK(out.status.ok());
    CHECK_EQ(out.result.fused_crcs, size_t{1});
    CHECK(std::memcmp(back.data(), host->data(), back.size()) == 0);
    CHECK_EQ(out.result.crcs[0], Crc32c(0, host->data(), back.size()));
  }
}

MNEMO_TEST(transfer, refuses_bad_batches_before_moving_anything) {
  TaskQueue threads(2);
  test::TempDir dir;
  auto ssd = OpenDevice(dir.File("p.bin"), 4 * kMiB, false);
  auto ssd2 = OpenDevice(dir.File("q.bin"), 4 * kMiB, true);
  const uint64_t bs = ssd->block_size();
  AlignedBuffer mem(kMiB);
  test::FillRandom(mem.data(), mem.size(), 8);
  struct Case {
    const char* name;
    std::vector<TransferRange> ranges;
    std::vector<CrcRange> crcs;
    StatusCode code;
  };
  const std::vector<Case> cases = {
      {"ssd to ssd", {{1, 0, 2, 0, bs}}, {}, StatusCode::kInvalidArgument},
      {"misaligned device offset", {{0, 0, 1, bs / 2, bs}}, {}, StatusCode::kMisaligned},
      {"misaligned length", {{1, 0, 0, 0, bs - 1}}, {}, StatusCode::kMisaligned},
      {"read past the device end", {{1, 4 * kMiB - bs, 0, 0, 2 * bs}}, {}, StatusCode::kOutOfRange},
      {"memory past the end", {{0, kMiB - 8, 0, 0, 16}}, {}, StatusCode::kOutOfRange},
      {"operand index", {{0, 0, 9, 0, 1}}, {}, StatusCode::kOutOfRange},
      {"two writes to one block", {{0, 0, 1, 0, bs}, {0, bs, 1, 0, bs}}, {}, StatusCode::kRangeConflict},
      {"write over a device read", {{1, 0, 0, 0, bs}, {0, 2 * bs, 1, 0, bs}}, {}, StatusCode::kRangeConflict},
      {"memory write over a read", {{0, 0, 0, 100, 200}}, {}, StatusCode::kRangeConflict},
      {"crc over a device", {}, {{1, 0, bs}}, StatusCode::kInvalidArgument},
      {"crc past the end", {}, {{0, kMiB, 1}}, StatusCode::kOutOfRange},
  };
  for (const Case& c : cases) {
    TransferBatch batch;
    batch.operands = {Mem(mem.data(), mem.size()), Ssd(ssd.get()), Ssd(ssd2.get())};
    batch.ranges = c.ranges;
    batch.crcs = c.crcs;
    bool called = false;
    const Status s = SubmitTransfer(batch, threads, [&called](Status, TransferResult) { called = true; });
    if (s.code() != c.code) test::Fail(__FILE__, __LINE__, std::string(c.name) + ": got " + s.ToString());
    CHECK(!called);
  }
  CHECK_EQ(ssd->stats().requests, uint64_t{0});
  // Different devices are different spaces: the same offsets on two devices do not conflict.
  TransferBatch ok;
  ok.operands = {Mem(mem.data(), mem.size()), Ssd(ssd.get()), Ssd(ssd2.get())};
  ok.ranges = {{0, 0, 1, 0, bs}, {0, 0, 2, 0, bs}};
  CHECK(Run(ok, threads).status.ok());
  ssd2->Close();
  CHECK_EQ(Run(ok, threads).status.code(), StatusCode::kClosed);
}

MNEMO_TEST(transfer, a_corrupt_byte_on_the_device_changes_the_crc_read_back) {
  TaskQueue threads(2);
  test::TempDir dir;
  const std::string path = dir.File("p.bin");
  auto ssd = OpenDevice(path, 2 * kMiB, false);
  AlignedBuffer mem(64 * 1024);
  test::FillRandom(mem.data(), mem.size(), 13);
  TransferBatch put;
  put.operands = {Mem(mem.data(), mem.size()), Ssd(ssd.get())};
  put.ranges = {{0, 0, 1, kMiB, mem.size()}};
  put.crcs = {{0, 0, mem.size()}};
  const Outcome stored = Run(put, threads);
  CHECK(stored.status.ok());
  // Flip one bit behind the device's back (a buffered write; O_DIRECT reads see it).
  const int fd = open(path.c_str(), O_RDWR);
  CHECK(fd >= 0);
  uint8_t byte = 0;
  CHECK_EQ(pread(fd, &byte, 1, kMiB + 40000), ssize_t{1});
  byte ^= 0x10;
  CHECK_EQ(pwrite(fd, &byte, 1, kMiB + 40000), ssize_t{1});
  CHECK_EQ(fsync(fd), 0);
  close(fd);
  AlignedBuffer back(mem.size());
  TransferBatch get;
  get.operands = {Ssd(ssd.get()), Mem(back.data(), back.size())};
  get.ranges = {{0, kMiB, 1, 0, back.size()}};
  get.crcs = {{1, 0, back.size()}};
  const Outcome read = Run(get, threads);
  CHECK(read.status.ok());
  CHECK_NE(read.result.crcs[0], stored.result.crcs[0]);
}

MNEMO_TEST(transfer, concurrent_batches_from_many_threads) {
  TaskQueue threads(3);
  test::TempDir dir;
  auto ssd = OpenDevice(dir.File("p.bin"), 16 * kMiB, false, 16, 128 * 1024);
  auto host = OpenPool(16 * kMiB);
  test::FillRandom(host->data(), 8 * kMiB, 77);
  std::atomic<int> bad{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int round = 0; round < 8; ++round) {
        const uint64_t off = (t * 8 + round) * 256 * 1024;
        TransferBatch put;
        put.operands = {Mem(host->data(), host->size()), Ssd(ssd.get())};
        put.ranges = {{0, off, 1, off, 256 * 1024}};
        put.crcs = {{0, off, 256 * 1024}};
        const Outcome w = Run(put, threads);
        TransferBatch get;
        get.operands = {Ssd(ssd.get()), Mem(host->data(), host->size())};
        get.ranges = {{0, off, 1, 8 * kMiB + off, 256 * 1024}};
        get.crcs = {{1, 8 * kMiB + off, 256 * 1024}};
        const Outcome r = Run(get, threads);
        if (!w.status.ok() || !r.status.ok() || w.result.crcs != r.result.crcs) ++bad;
      }
    });
  }
  for (std::thread& c : callers) c.join();
  CHECK_EQ(bad.load(), 0);
  CHECK(std::memcmp(host->data(), host->data() + 8 * kMiB, 8 * kMiB) == 0);
}

MNEMO_TEST(transfer, device_close_with_transfers_in_flight_completes_them) {
  TaskQueue threads(2);
  for (bool pread : kBackends) {
    test::TempDir dir;
    auto ssd = OpenDevice(dir.File("p.bin"), 32 * kMiB, pread, 8, 256 * 1024);
    auto host = OpenPool(32 * kMiB);
    std::atomic<int> ok{0};
    std::atomic<int> done{0};
    for (int i = 0; i < 4; ++i) {
      TransferBatch put;
      put.operands = {Mem(host->data(), host->size()), Ssd(ssd.get())};
      put.ranges = {{0, i * 8 * kMiB, 1, i * 8 * kMiB, 8 * kMiB}};
      CHECK(SubmitTransfer(put, threads, [&](Status s, TransferResult) {
              if (s.ok()) ++ok;
              ++done;
            }).ok());
    }
    ssd->Close();
    // Completions run on the worker before Close() returns.
    CHECK_EQ(done.load(), 4);
    CHECK_EQ(ok.load(), 4);
  }
}

MNEMO_TEST(transfer, a_closed_pool_refuses_and_in_flight_work_finishes) {
  std::vector<uint8_t> a(8 * kMiB, 1), b(8 * kMiB);
  TaskQueue threads(2);
  TransferBatch batch;
  batch.operands = {Mem(a.data(), a.size()), Mem(b.data(), b.size())};
  batch.ranges = {{0, 0, 1, 0, a.size()}};
  std::promise<Status> finished;
  CHECK(SubmitTransfer(batch, threads, [&finished](Status s, TransferResult) { finished.set_value(s); }).ok());
  threads.Shutdown();
  CHECK(finished.get_future().get().ok());
  CHECK_EQ(b[a.size() - 1], 1);
  CHECK_EQ(Run(batch, threads).status.code(), StatusCode::kClosed);
}

}  // namespace
}  // namespace mnemo
