// Packed GEMM: batch, tile, K-block and thread invariance on every path this machine has,
// agreement with a float64 reference, packed vs unpacked, path-declared rounding (FMA or not).
#include <cmath>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "tests/kernels_cpu_test.h"


namespace {

std::vector<const kc::GemmKernels*> AvailablePaths() {
  std::vector<const kc::GemmKernels*> out;
  for (kc::CpuIsa isa : {kc::CpuIsa::kPortable, kc::CpuIsa::kAvx2Fma, kc::CpuIsa::kAvx512, kc::CpuIsa::kNeon})
    if (kc::CpuIsaAvailable(isa)) out.push_back(kc::GemmKernelsFor(isa));
  return out;
}

std::vector<float> Pack(const kc::GemmKernels& ks, const std::vector<float>& w, std::size_t n, std::size_t k) {
  std::vector<float> p(kc::PackedWeightElems(ks, n, k), -1.0f);
  kc::PackWeight(ks, p.data(), w.data(), n, k);
  return p;
}

// out[m, n] of the path `ks` on `pool`, with sentinels behind it.
Guarded Run(const kc::GemmKernels& ks, kc::ParallelForPool& pool, const std::vector<float>& x,
            const std::vector<float>& packed, std::size_t m, std::size_t n, std::size_t k) {
  Guarded out(m * n, 12345.0f);
  kc::GemmPacked(ks, pool, out.data(), x.data(), packed.data(), m, n, k);
  return out;
}

}  // namespace

MNEMO_TEST(kernels_cpu_gemm, active_path_is_available_and_portable_always_is) {
  CHECK(kc::CpuIsaAvailable(kc::CpuIsa::kPortable));
  CHECK(kc::CpuIsaAvailable(kc::ActiveCpuIsa()));
  CHECK_EQ(kc::ActiveGemmKernels().isa, kc::ActiveCpuIsa());
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) CHECK(kc::ActiveGemmKernels().fma);
#endif
}

// Row i of an m-row product equals row i of the 512-row product, bit for bit, for every m.
MNEMO_TEST(kernels_cpu_gemm, rows_are_bit_identical_for_every_m_up_to_512) {
  kc::ParallelForPool pool(2);
  Rng rng(7);
  const std::size_t M = 512, n = 37, k = 600;  // odd n: a padded panel; k > one K block (256, or 512 on AVX-512)
  auto x = rng.Floats(M * k), w = rng.Floats(n * k);
  for (const kc::GemmKernels* ks : AvailablePaths()) {
    const auto packed = Pack(*ks, w, n, k);
    const Guarded full = Run(*ks, pool, x, packed, M, n, k);
    CHECK(full.Intact());
    for (std::size_t m = 1; m <= M; ++m) {
      const Guarded part = Run(*ks, pool, x, packed, m, n, k);
      CHECK_CASE(part.Intact() && BitEqual(part.data(), full.data(), m * n), Label("isa m", {(long long)ks->isa, (long long)m}));
    }
  }
}

MNEMO_TEST(kernels_cpu_gemm, lanes_do_not_change_a_bit) {
  Rng rng(8);
  const std::size_t m = 203, n = 301, k = 519;
  auto x = rng.Floats(m * k), w = rng.Floats(n * k);
  kc::ParallelForPool one(1), two(2), five(5);
  for (const kc::GemmKernels* ks : AvailablePaths()) {
    const auto packed = Pack(*ks, w, n, k);
    const Guarded a = Run(*ks, one, x, packed, m, n, k);
    const Guarded b = Run(*ks, two, x, packed, m, n, k);
    const Guarded c = Run(*ks, five, x, packed, m, n, k);
    CHECK_CASE(BitEqual(a.data(), b.data(), m * n) && BitEqual(a.data(), c.data(), m * n), Label("isa", {(long long)ks->isa}));
  }
}

// |out - exact| <= k * 2^-23 * Σ|x·w| + 1e-30: the standard bound of a k-term fp32 sum.
MNEMO_TEST(kernels_cpu_gemm, matches_a_float64_reference_on_odd_shapes) {
  Rng rng(9);
  kc::ParallelForPool pool(3);
  for (const kc::GemmKernels* ks : AvailablePaths())
    for (std::size_t m : {1, 2, 7, 13, 97})
      for (std::size_t n : {1, 3, 16, 17, 33, 100})
        for (std::size_t k : {1, 5, 64, 255, 256, 257, 700}) {
          auto x = rng.Floats(m * k), w = rng.Floats(n * k);
          const Guarded out = Run(*ks, pool, x, Pack(*ks, w, n, k), m, n, k);
          bool ok = out.Intact();
          for (std::size_t i = 0; i < m && ok; ++i)
            for (std::size_t j = 0; j < n && ok; ++j) {
              double exact = 0, mag = 0;
              for (std::size_t p = 0; p < k; ++p) {
                exact += static_cast<double>(x[i * k + p]) * w[j * k + p];
                mag += std::fabs(static_cast<double>(x[i * k + p]) * w[j * k + p]);
              }
              ok = std::fabs(out[i * n + j] - exact) <= k * std::ldexp(1.0, -23) * mag + 1e-30;
            }
          CHECK_CASE(ok, Label("isa m n k", {(long long)ks->isa, (long long)m, (long long)n, (long long)k}));
        }
}

MNEMO_TEST(kernels_cpu_gemm, unpacked_matmul_equals_packed_and_zero_k_gives_zeros) {
  Rng rng(10);
  const std::size_t m = 33, n = 70, k = 130;
  auto x = rng.Floats(m * k), w = rng.Floats(n * k);
  std::vector<float> packed(kc::PackedWeightElems(n, k));
  kc::PackWeight(packed.data(), w.data(), n, k);
  Guarded a(m * n), b(m * n);
  kc::Matmul(a.data(), x.data(), w.data(), m, n, k);
  kc::MatmulPacked(b.data(), x.data(), packed.data(), m, n, k);
  CHECK(a.Intact() && b.Intact() && BitEqual(a.data(), b.data(), m * n));
  Guarded z(m * n, 3.0f);
  kc::MatmulPacked(z.data(), x.data(), packed.data(), m, n, 0);
  for (std::size_t i = 0; i < m * n; ++i) CHECK_EQ(z[i], 0.0f);
  CHECK(z.Intact());
}

// Each path rounds the way it declares: (1 + 2^-13)(1 - 2^-13) = 1 - 2^-26 after a term of
// -1 gives -2^-26 when fused (one rounding) and 0 when the product is rounded to 1 first.
// All row counts of one path must agree, or a batch could mix fused and unfused elements.
MNEMO_TEST(kernels_cpu_gemm, every_row_variant_rounds_as_its_path_declares) {
  kc::ParallelForPool pool(1);
  const float e = std::ldexp(1.0f, -13);
  for (const kc::GemmKernels* ks : AvailablePaths())
    for (std::size_t m = 1; m <= ks->mr; ++m) {
      const std::size_t n = 1, k = 2;
      std::vector<float> x(m * k), w = {1.0f, 1.0f - e};
      for (std::size_t i = 0; i < m; ++i) x[i * k] = -1.0f, x[i * k + 1] = 1.0f + e;
      const Guarded out = Run(*ks, pool, x, Pack(*ks, w, n, k), m, n, k);
      const float want = ks->fma ? -std::ldexp(1.0f, -26) : 0.0f;
      for (std::size_t i = 0; i < m; ++i) CHECK_CASE(out[i] == want, Label("isa m i", {(long long)ks->isa, (long long)m, (long long)i}));
    }
}

// x is packed once per call into A blocks that every lane shares (the first task to need one
// packs it, a task racing it packs a private copy). Many lanes on few row blocks and small n
// (the k/v projection shape) race hardest; any torn or stale block would change bits here.
// Also covers uneven row counts around the row-block size and a second call reusing the buffer
// with a different m and k (stale blocks from the previous call must never be read).
MNEMO_TEST(kernels_cpu_gemm, shared_packed_x_is_exact_under_racing_lanes_and_reuse) {
  Rng rng(11);
  kc::ParallelForPool one(1), eight(8);
  for (const kc::GemmKernels* ks : AvailablePaths())
    for (std::size_t m : {1, 95, 96, 97, 191, 290, 512})
      for (std::size_t n : {17, 256}) {
        const std::size_t k = m % 2 ? 300 : 512;
        auto x = rng.Floats(m * k), w = rng.Floats(n * k);
        const auto packed = Pack(*ks, w, n, k);
        const Guarded want = Run(*ks, one, x, packed, m, n, k);
        for (int rep = 0; rep < 4; ++rep) {
          const Guarded got = Run(*ks, eight, x, packed, m, n, k);
          CHECK_CASE(got.Intact() && BitEqual(got.data(), want.data(), m * n),
                     Label("isa m n rep", {(long long)ks->isa, (long long)m, (long long)n, (long long)rep}));
        }
      }
}

// Products of one x in a single call (q|k|v, gate|up) give every output the bits of its own
// call, for odd widths (padded panels at each output's end), a zero-width output, and lanes.
MNEMO_TEST(kernels_cpu_gemm, multi_output_call_equals_separate_calls) {
  Rng rng(12);
  kc::ParallelForPool one(1), three(3);
  for (const kc::GemmKernels* ks : AvailablePaths())
    for (std::size_t m : {1, 8, 97, 300}) {
      const std::size_t k = 300;
      const std::size_t ns[] = {37, 0, 16, 100};
      auto x = rng.Floats(m * k);
      std::vector<std::vector<float>> packed;
      std::vector<Guarded> want, got;
      std::vector<kc::GemmOut> outs;
      for (std::size_t n : ns) packed.push_back(Pack(*ks, rng.Floats(n * k), n, k));
      for (std::size_t o = 0; o < 4; ++o) {
        want.push_back(Run(*ks, one, x, packed[o], m, ns[o], k));
        got.emplace_back(m * ns[o], 777.0f);
      }
      for (std::size_t o = 0; o < 4; ++o) outs.push_back({got[o].data(), packed[o].data(), ns[o]});
      kc::GemmPackedMulti(*ks, three, outs.data(), outs.size(), x.data(), m, k);
      for (std::size_t o = 0; o < 4; ++o)
        CHECK_CASE(got[o].Intact() && BitEqual(got[o].data(), want[o].data(), m * ns[o]),
                   Label("isa m out", {(long long)ks->isa, (long long)m, (long long)o}));
    }
}
