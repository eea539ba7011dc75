// Physical-limit probes: they measure something plausible and refuse bad arguments.
#include <sys/stat.h>

#include <string>

#include "core/pool/io_probes.h"
#include "core/task_queue.h"
#include "tests/check.h"
#include "tests/temp_dir.h"

namespace mnemo {
namespace {

MNEMO_TEST(io_probes, memcpy_probe_times_every_iteration) {
  TaskQueue threads(2);
  MemcpyProbeResult r;
  CHECK(ProbeMemcpy(threads, 8 << 20, 3, &r).ok());
  CHECK_EQ(r.memcpy_seconds.size(), size_t{3});
  CHECK_EQ(r.kernel_seconds.size(), size_t{3});
  CHECK_EQ(r.bytes, uint64_t{8 << 20});
  CHECK(r.threads >= 1 && r.threads <= 2);
  for (double s : r.memcpy_seconds) CHECK(s > 0 && s < 10);
  for (double s : r.kernel_seconds) CHECK(s > 0 && s < 10);
  CHECK_EQ(ProbeMemcpy(threads, 0, 1, &r).code(), StatusCode::kInvalidArgument);
}

MNEMO_TEST(io_probes, memcpy_probe_copies_in_pieces_into_a_ring) {
  TaskQueue threads(2);
  MemcpyProbeResult r;
  MemcpyProbeShape shape;
  shape.piece_bytes = 2 << 20;
  shape.dst_ring_pieces = 3;
  CHECK(ProbeMemcpy(threads, 8 << 20, 2, &r, shape).ok());
  CHECK_EQ(r.memcpy_seconds.size(), size_t{2});
  CHECK_EQ(r.crc_copy_seconds.size(), size_t{2});
  CHECK_EQ(r.bytes, uint64_t{8 << 20});
  for (double s : r.memcpy_seconds) CHECK(s > 0 && s < 10);
  shape.piece_bytes = 3 << 20;  // does not divide 8 MiB
  CHECK_EQ(ProbeMemcpy(threads, 8 << 20, 1, &r, shape).code(), StatusCode::kInvalidArgument);
  shape.piece_bytes = 4 << 20;
  shape.dst_ring_pieces = 3;  // more buffers than pieces
  CHECK_EQ(ProbeMemcpy(threads, 8 << 20, 1, &r, shape).code(), StatusCode::kInvalidArgument);
}

MNEMO_TEST(io_probes, direct_io_probe_writes_then_reads_through_the_device_path) {
  for (bool pread : {false, true}) {
    test::TempDir dir;
    const std::string path = dir.File("probe.bin");
    DirectIoProbeOptions o;
    o.path = path;
    o.bytes = 8 << 20;
    o.block_bytes = 256 * 1024;
    o.queue_depth = 8;
    o.op = IoOp::kWrite;
    o.force_pread = pread;
    DirectIoProbeResult w;
    CHECK(ProbeDirectIo(o, &w).ok());
    CHECK(w.seconds > 0);
    CHECK_EQ(w.bytes, o.bytes);
    CHECK_EQ(w.backend == IoBackendKind::kPread, pread || !UringCompiled());
    o.op = IoOp::kRead;
    DirectIoProbeResult r;
    CHECK(ProbeDirectIo(o, &r).ok());
    CHECK(r.seconds > 0);
    o.bytes = 16 << 20;  // more than the file holds
    CHECK_EQ(ProbeDirectIo(o, &r).code(), StatusCode::kOutOfRange);
    o.bytes = 1000;
    CHECK_EQ(ProbeDirectIo(o, &r).code(), StatusCode::kInvalidArgument);
    CHECK(DropPageCache(path).ok());
    CHECK_EQ(DropPageCache(dir.File("missing")).code(), StatusCode::kNotFound);
  }
}

}  // namespace
}  // namespace mnemo
