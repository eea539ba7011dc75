// Device timings (perf_device.h). Times are host wall clock around work that ends in a
// synchronisation: kernels and copies are enqueued back to back, so the wall time of N of them
// is the device's time for N (plus one launch latency, negligible at these sizes).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "dev_tensor.h"
#include "json_line.h"
#include "must.h"
#include "perf_device.h"

#ifdef MNEMO_WITH_CUDA
#include "core/cuda/cuda_runtime.h"
#include "kernels/cuda/cublas_loader.h"
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_kernels.h"
#include "tests/kernels_test_util.h"
#endif

namespace mnemo::check {

#ifdef MNEMO_WITH_CUDA
namespace {

namespace kc = kernels::cuda;
using Clock = std::chrono::steady_clock;

double Seconds(const std::function<void()>& fn) {
  const auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The timings run in bf16, the serving dtype.
struct DevBuf : Dev {
  explicit DevBuf(std::size_t elements) : Dev(kc::DType::kBF16, elements) {}
};

struct Pinned {
  void* p = nullptr;
  std::size_t bytes;
  explicit Pinned(std::size_t n) : bytes(n) {
    Must(cuda::PinnedHostAlloc(n, &p), "pinned alloc");
    std::memset(p, 1, n);  // fault the pages in before timing
  }
  ~Pinned() { cuda::PinnedHostFree(p); }
};

// Runs `fn` `reps` times after one warm-up and a sync; seconds per repetition.
double PerRep(int reps, const std::function<void()>& fn) {
  fn();
  Must(kc::Synchronize(), "sync");
  return Seconds([&] {
           for (int i = 0; i < reps; ++i) fn();
           Must(kc::Synchronize(), "sync");
         }) /
         reps;
}

// --- GEMM ----------------------------------------------------------------------------------

struct GemmShape {
  const char* name;
  int n, k;
};
// Llama-3.1-8B: d 4096, 32 q heads and 8 kv heads of 128, ffn 14336; q/k/v and gate/up fused.
const GemmShape kLlamaShapes[] = {{"qkv", 6144, 4096}, {"o", 4096, 4096}, {"gate_up", 28672, 4096}, {"down", 4096, 14336}};

void GemmPerf(const PerfOptions& o) {
  const std::vector<int> ms = o.quick ? std::vector<int>{1, 2048} : std::vector<int>{1, 16, 64, 512, 2048};
  std::vector<kc::GemmPath> paths = {kc::GemmPath::kTensorCore, kc::GemmPath::kTensorCoreInvariant, kc::GemmPath::kSimt};
  if (kc::Cublas().loaded) paths.insert(paths.begin(), kc::GemmPath::kCublas);
  test::Rng rng(7);
  for (const GemmShape& s : kLlamaShapes) {
    DevBuf w(static_cast<std::size_t>(s.n) * s.k);
    const std::vector<float> wh = rng.Floats(static_cast<std::size_t>(s.n) * s.k, -0.05f, 0.05f);
    Must(kc::Upload(*w, wh.data(), wh.size()), "upload w");
    for (int m : ms) {
      DevBuf x(static_cast<std::size_t>(m) * s.k), out(static_cast<std::size_t>(m) * s.n);
      const std::vector<float> xh = rng.Floats(static_cast<std::size_t>(m) * s.k);
      Must(kc::Upload(*x, xh.data(), xh.size()), "upload x");
      Must(kc::SetGemmPath(kc::GemmPath::kAuto), "gemm path");
      const kc::GemmPath engine_path = kc::EffectiveGemmPath(m);  // what the engine takes by default
      for (kc::GemmPath p : paths) {
        Must(kc::SetGemmPath(p), "gemm path");
        if (kc::EffectiveGemmPath(m) != p) continue;  // e.g. tensor-core at m <= 8 runs the SIMT kernel
        const double flops = 2.0 * m * s.n * s.k;
        // Keep each measurement near 50 ms of device time, at least 3 repetitions.
        const double once = PerRep(1, [&] { Must(kc::Matmul(*out, *x, *w, m, s.n, s.k), "matmul"); });
        const int reps = std::max(3, std::min(o.reps * 20, static_cast<int>(0.05 / std::max(once, 1e-6))));
        const double t = PerRep(reps, [&] { Must(kc::Matmul(*out, *x, *w, m, s.n, s.k), "matmul"); });
        JsonLine()
            .Str("kind", "gemm").Str("path", kc::GemmPathName(p)).Bool("engine_default", p == engine_path).Str("shape", s.name)
            .Num("m", m).Num("n", s.n).Num("k", s.k).Num("ms", t * 1e3).Num("tflops", flops / t / 1e12)
            .Num("gbs", 2.0 * (static_cast<double>(s.n) * s.k + static_cast<double>(m) * (s.k + s.n)) / t / 1e9)
            .Print();
      }
    }
  }
  Must(kc::SetGemmPath(kc::GemmPath::kAuto), "gemm path");
}

// A row's result alone, in a batch of 7 and in a batch of 300 (at different tile positions):
// bit-identical on a batch-invariant path.
void BatchInvariance() {
  const int n = 4096, k = 4096, big = 300, row = 137;
  test::Rng rng(11);
  DevBuf w(static_cast<std::size_t>(n) * k), x(static_cast<std::size_t>(big) * k), out(static_cast<std::size_t>(big) * n);
  const auto wh = rng.Floats(static_cast<std::size_t>(n) * k, -0.05f, 0.05f), xh = rng.Floats(static_cast<std::size_t>(big) * k);
  Must(kc::Upload(*w, wh.data(), wh.size()), "upload");
  Must(kc::Upload(*x, xh.data(), xh.size()), "upload");
  std::vector<kc::GemmPath> paths = {kc::GemmPath::kTensorCore, kc::GemmPath::kTensorCoreInvariant, kc::GemmPath::kSimt};
  if (kc::Cublas().loaded) paths.insert(paths.begin(), kc::GemmPath::kCublas);
  for (kc::GemmPath p : paths) {
    Must(kc::SetGemmPath(p), "gemm path");
    std::vector<float> full(static_cast<std::size_t>(big) * n);
    Must(kc::Matmul(*out, *x, *w, big, n, k), "matmul");
    Must(kc::Download(full.data(), *out, full.size()), "download");
    bool same = true;
    for (int m : {1, 7}) {
      // Rows [row - m + 1, row] as their own batch, so `row` is the batch's last row.
      const int first = row - m + 1;
      const std::vector<float> xs(xh.begin() + static_cast<std::ptrdiff_t>(first) * k,
                                  xh.begin() + static_cast<std::ptrdiff_t>(row + 1) * k);
      DevBuf xb(static_cast<std::size_t>(m) * k), ob(static_cast<std::size_t>(m) * n);
      Must(kc::Upload(*xb, xs.data(), xs.size()), "upload");
      Must(kc::Matmul(*ob, *xb, *w, m, n, k), "matmul");
      std::vector<float> part(static_cast<std::size_t>(m) * n);
      Must(kc::Download(part.data(), *ob, part.size()), "download");
      same = same && std::memcmp(part.data() + static_cast<std::size_t>(m - 1) * n,
                                 full.data() + static_cast<std::size_t>(row) * n, n * sizeof(float)) == 0;
    }
    JsonLine().Str("kind", "batch_invariance").Str("path", kc::GemmPathName(p)).Bool("identical", same).Print();
  }
  Must(kc::SetGemmPath(kc::GemmPath::kAuto), "gemm path");
}

// --- attention -----------------------------------------------------------------------------

void AttentionPerf(const PerfOptions& o) {
  const kernels::KvGeometry g{1, 8, 128, 16};  // one layer of Llama-3.1-8B's cache
  const int heads = 32;
  const std::vector<int> ctxs = o.quick ? std::vector<int>{1024, 8192} : std::vector<int>{1024, 4096, 16384, 32768};
  const int decode_seqs = 8, chunk = 512;
  const std::size_t max_blocks_total = static_cast<std::size_t>(decode_seqs) * (ctxs.back() / g.block_size) + 1;
  DevBuf cache(max_blocks_total * g.BlockElems());
  test::Rng rng(3);
  {
    // Fill the cache with values in [-1, 1] a slab at a time (no giant host array).
    const std::size_t slab = std::size_t{1} << 24;
    std::vector<float> h = rng.Floats(slab);
    kc::DeviceBuffer view = *cache;
    for (std::size_t off = 0; off < cache->elements; off += slab) {
      view.ptr = static_cast<char*>(cache->ptr) + off * 2;
      view.elements = std::min(slab, cache->elements - off);
      Must(kc::Upload(view, h.data(), view.elements), "fill cache");
    }
  }
  for (const char* mode : {"decode", "prefill"}) {
    const bool decode = std::strcmp(mode, "decode") == 0;
    for (int ctx : ctxs) {
      const int ns = decode ? decode_seqs : 1, qlen = decode ? 1 : std::min(chunk, ctx);
      const int per_seq = ctx / g.block_size;
      std::vector<int32_t> tables(static_cast<std::size_t>(ns) * per_seq), qs, lens(ns, ctx);
      for (std::size_t i = 0; i < tables.size(); ++i) tables[i] = static_cast<int32_t>(i + 1);
      for (int s = 0; s <= ns; ++s) qs.push_back(s * qlen);
      const std::size_t rows = static_cast<std::size_t>(ns) * qlen;
      DevBuf q(rows * heads * g.head_dim), out(rows * heads * g.head_dim);
      const auto qh = rng.Floats(rows * heads * g.head_dim);
      Must(kc::Upload(*q, qh.data(), qh.size()), "upload q");
      const kernels::AttentionBatch b{ns, qs.data(), lens.data(), tables.data(), per_seq};
      const float scale = 1.0f / std::sqrt(128.0f);
      const kc::AttentionPath engine_path = qlen >= 32 ? kc::AttentionPath::kFlash : kc::AttentionPath::kSplit;
      for (kc::AttentionPath p : {kc::AttentionPath::kSimple, kc::AttentionPath::kSplit, kc::AttentionPath::kFlash}) {
        kc::SetAttentionPath(p);
        auto run = [&] { Must(kc::PagedAttention(*out, *q, *cache, 0, heads, g, b, scale), "attn"); };
        const double once = PerRep(1, run);
        const int reps = std::max(2, std::min(o.reps * 10, static_cast<int>(0.1 / std::max(once, 1e-6))));
        const double t = PerRep(reps, run);
        const double kv_bytes = 2.0 * ns * ctx * g.TokenElems() * 2;
        JsonLine()
            .Str("kind", "attention").Str("path", kc::AttentionPathName(p)).Bool("engine_default", p == engine_path)
            .Str("mode", mode).Num("ctx", ctx).Num("seqs", ns).Num("q_rows", qlen)
            .Num("heads", heads).Num("kv_heads", g.num_kv_heads).Num("head_dim", g.head_dim)
            .Num("ms", t * 1e3).Num("kv_gbs", kv_bytes / t / 1e9)
            .Num("tflops", 4.0 * rows * heads * g.head_dim * (ctx - qlen / 2.0) / t / 1e12)
            .Print();
      }
      kc::SetAttentionPath(kc::AttentionPath::kAuto);
    }
  }
}

// --- copies --------------------------------------------------------------------------------

double CopySeconds(kc::CopyDirection dir, const DevBuf& dev, const Pinned& host, const std::vector<kc::CopyRange>& r,
                   kc::CopySubmit submit) {
  uint64_t ticket = 0;
  return Seconds([&] {
    Must(kc::CopyAsync(dir, *dev, host.p, host.bytes, r.data(), r.size(), submit, &ticket), "copy");
    Must(kc::WaitCopy(ticket), "wait");
  });
}

// Contiguous pieces of `size` bytes covering `total` bytes.
std::vector<kc::CopyRange> Pieces(std::size_t size, std::size_t total) {
  std::vector<kc::CopyRange> r;
  for (std::size_t off = 0; off + size <= total; off += size) r.push_back({off, off, size});
  return r;
}

const char* DirName(kc::CopyDirection d) { return d == kc::CopyDirection::kHostToDevice ? "h2d" : "d2h"; }

double Best(int reps, const std::function<double()>& fn) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) best = std::min(best, fn());
  return best;
}

void CopyPerf(const PerfOptions& o, const DevBuf& dev, const Pinned& host) {
  const std::size_t total = std::min<std::size_t>(host.bytes, dev->elements * 2);
  const int reps = o.quick ? 2 : 3;
  for (kc::CopyDirection dir : {kc::CopyDirection::kHostToDevice, kc::CopyDirection::kDeviceToHost}) {
    // One plain cudaMemcpyAsync of everything: the link's practical ceiling.
    const double plain = Best(reps, [&] { return CopySeconds(dir, dev, host, Pieces(total, total), kc::CopySubmit::kPerRange); });
    JsonLine().Str("kind", "copy_plain").Str("dir", DirName(dir)).Num("bytes", total).Num("gbs", total / plain / 1e9).Print();
    // The same bytes as 2 MiB ranges (one Llama-3.1-8B KV block each), batched and per range.
    const auto blocks = Pieces(std::size_t{2} << 20, total);
    for (kc::CopySubmit submit : {kc::CopySubmit::kBatched, kc::CopySubmit::kPerRange}) {
      double t = 0;
      std::string error;
      try {
        t = Best(reps, [&] { return CopySeconds(dir, dev, host, blocks, submit); });
      } catch (const std::exception& e) {
        error = e.what();
      }
      JsonLine l;
      l.Str("kind", "copy_ranges").Str("dir", DirName(dir)).Str("submit", submit == kc::CopySubmit::kBatched ? "batched" : "per-range")
          .Num("range_bytes", 2 << 20).Num("ranges", blocks.size());
      if (error.empty()) l.Num("gbs", blocks.size() * (2.0 * (1 << 20)) / t / 1e9);
      else l.Str("error", error);
      l.Print();
    }
    // Per-call cost against size: t(call) = dispatch + bytes / bandwidth.
    const std::vector<std::size_t> sizes = o.quick ? std::vector<std::size_t>{4096, 32768, 2 << 20}
                                                   : std::vector<std::size_t>{4096, 16384, 32768, 65536, 131072, 262144,
                                                                              524288, 1 << 20, 2 << 20, 8 << 20, 40 << 20};
    for (std::size_t size : sizes) {
      const std::size_t calls = std::min<std::size_t>(size <= 65536 ? 8192 : 2048, total / size);
      const auto r = Pieces(size, calls * size);
      const double t = Best(reps, [&] { return CopySeconds(dir, dev, host, r, kc::CopySubmit::kPerRange); });
      JsonLine().Str("kind", "copy_size").Str("dir", DirName(dir)).Num("bytes", size).Num("calls", calls)
          .Num("us_per_call", t / calls * 1e6).Num("gbs", size * calls / t / 1e9).Print();
    }
  }
}

// Swap-out and swap-in of 480 Llama-3.1-8B KV blocks (block-major, 2 MiB a block: 32 layers ×
// K|V × 16 tokens × 8 heads × 128 × bf16), grouped three ways. Device blocks are scattered for
// the per-block schemes (a fragmented cache) and contiguous runs of 20 for block groups.
void SwapPerf(const PerfOptions& o, const DevBuf& dev, const Pinned& host) {
  const kernels::KvGeometry g{32, 8, 128, 16};
  const std::size_t block_bytes = g.BlockElems() * 2, plane_bytes = g.PlaneElems() * 2;
  const std::size_t device_blocks = dev->elements * 2 / block_bytes;
  const std::size_t n = std::min<std::size_t>(o.quick ? 96 : 480, std::min(device_blocks, host.bytes / block_bytes));
  const std::size_t group = 20;
  test::Rng rng(5);
  std::vector<std::size_t> ids(device_blocks);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  for (std::size_t i = ids.size(); i > 1; --i) std::swap(ids[i - 1], ids[static_cast<std::size_t>(rng.Int(0, static_cast<int32_t>(i)))]);

  std::vector<kc::CopyRange> per_layer, per_block, groups;
  for (std::size_t b = 0; b < n; ++b) {
    const std::size_t d = ids[b] * block_bytes, h = b * block_bytes;
    per_block.push_back({d, h, block_bytes});
    for (std::size_t p = 0; p < static_cast<std::size_t>(g.num_layers) * 2; ++p)
      per_layer.push_back({d + p * plane_bytes, h + p * plane_bytes, plane_bytes});
  }
  for (std::size_t b = 0; b + group <= n; b += group) groups.push_back({b * block_bytes, b * block_bytes, group * block_bytes});
  struct Scheme {
    const char* name;
    const std::vector<kc::CopyRange>* ranges;
    kc::CopySubmit submit;
  };
  const Scheme schemes[] = {{"per-block-per-layer", &per_layer, kc::CopySubmit::kPerRange},
                            {"per-block-per-layer-batched", &per_layer, kc::CopySubmit::kBatched},
                            {"per-block", &per_block, kc::CopySubmit::kPerRange},
                            {"block-group-20", &groups, kc::CopySubmit::kPerRange}};
  for (kc::CopyDirection dir : {kc::CopyDirection::kDeviceToHost, kc::CopyDirection::kHostToDevice})
    for (const Scheme& s : schemes) {
      std::size_t bytes = 0;
      for (const auto& r : *s.ranges) bytes += r.bytes;
      JsonLine l;
      l.Str("kind", "swap").Str("dir", dir == kc::CopyDirection::kDeviceToHost ? "out" : "in").Str("scheme", s.name)
          .Num("blocks", n).Num("calls", s.ranges->size()).Num("bytes", bytes);
      try {
        const double t = Best(o.quick ? 2 : 3, [&] { return CopySeconds(dir, dev, host, *s.ranges, s.submit); });
        l.Num("ms", t * 1e3).Num("gbs", bytes / t / 1e9).Num("us_per_call", t / s.ranges->size() * 1e6);
      } catch (const std::exception& e) {
        l.Str("error", e.what());
      }
      l.Print();
    }
}

// Compute (a run of prefill GEMMs) and a 1 GiB host->device copy, alone, together on the two
// streams, and serialised (compute made to wait for the copy): the overlap the copy lane buys.
void OverlapPerf(const DevBuf& dev, const Pinned& host) {
  const int m = 2048, n = 14336, k = 4096;
  DevBuf x(static_cast<std::size_t>(m) * k), w(static_cast<std::size_t>(n) * k), out(static_cast<std::size_t>(m) * n);
  const std::size_t bytes = std::min<std::size_t>(std::size_t{1} << 30, std::min(host.bytes, dev->elements * 2));
  const auto r = Pieces(bytes, bytes);
  auto compute = [&](int reps) {
    for (int i = 0; i < reps; ++i) Must(kc::Matmul(*out, *x, *w, m, n, k), "matmul");
  };
  const double copy_alone = CopySeconds(kc::CopyDirection::kHostToDevice, dev, host, r, kc::CopySubmit::kPerRange);
  const double one = PerRep(3, [&] { compute(1); });
  const int reps = std::max(1, static_cast<int>(copy_alone / one));  // about as long as the copy
  const double compute_alone = Seconds([&] {
    compute(reps);
    Must(kc::Synchronize(), "sync");
  });
  auto both = [&](bool serialise) {
    return Seconds([&] {
      uint64_t ticket = 0;
      Must(kc::CopyAsync(kc::CopyDirection::kHostToDevice, *dev, host.p, host.bytes, r.data(), r.size(),
                         kc::CopySubmit::kPerRange, &ticket), "copy");
      if (serialise) Must(kc::ComputeWaitsFor(ticket), "wait");
      compute(reps);
      Must(kc::Synchronize(), "sync");
      Must(kc::WaitCopy(ticket), "wait");
    });
  };
  const double together = both(false), serial = both(true);
  const double overlap = (compute_alone + copy_alone - together) / std::min(compute_alone, copy_alone);
  JsonLine()
      .Str("kind", "overlap").Num("compute_ms", compute_alone * 1e3).Num("copy_ms", copy_alone * 1e3)
      .Num("together_ms", together * 1e3).Num("serialised_ms", serial * 1e3).Num("overlap_frac", overlap)
      .Print();
}

}  // namespace

bool RunDevicePerf(const PerfOptions& o) {
  const cuda::CudaInfo info = cuda::QueryCudaInfo();
  if (info.device_count == 0) {
    JsonLine().Str("kind", "perf_skipped").Str("reason", "no CUDA device: " + info.error).Print();
    return false;
  }
  const auto& d = info.devices[0];
  const auto& cb = kc::Cublas();
  JsonLine()
      .Str("kind", "device").Str("name", d.name).Num("cc", d.compute_major * 10 + d.compute_minor)
      .Num("sms", d.multiprocessors).Num("memory_gb", d.total_memory / 1e9).Num("runtime", info.runtime_version)
      .Num("driver", info.driver_version).Bool("cublas", cb.loaded).Str("cublas_library", cb.library)
      .Num("cublas_version", cb.version).Str("cublas_error", cb.error)
      .Str("gemm_path_prefill", kc::GemmPathName(kc::EffectiveGemmPath(2048)))
      .Str("gemm_path_decode", kc::GemmPathName(kc::EffectiveGemmPath(1)))
      .Print();
  auto step = [](const char* name, const std::function<void()>& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      JsonLine().Str("kind", "perf_error").Str("step", name).Str("error", e.what()).Print();
    }
  };
  step("gemm", [&] { GemmPerf(o); });
  step("batch_invariance", [] { BatchInvariance(); });
  step("attention", [&] { AttentionPerf(o); });
  step("copies", [&] {
    const std::size_t bytes = std::size_t{1} << 30;
    DevBuf dev(bytes / 2);
    Pinned host(bytes);
    CopyPerf(o, dev, host);
    SwapPerf(o, dev, host);
    OverlapPerf(dev, host);
  });
  return true;
}

#else

bool RunDevicePerf(const PerfOptions&) {
  JsonLine().Str("kind", "perf_skipped").Str("reason", "the harness was built without CUDA (nvcc not found)").Print();
  return false;
}

#endif

}  // namespace mnemo::check
