// CPU kernels (dense ops) against naive double-precision references written here.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "tests/kernels_cpu_test.h"


namespace {

std::vector<double> NaiveMatmul(const std::vector<float>& x, const std::vector<float>& w, std::size_t m, std::size_t n,
                                std::size_t k) {
  std::vector<double> out(m * n, 0.0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t p = 0; p < k; ++p) out[i * n + j] += static_cast<double>(x[i * k + p]) * w[j * k + p];
  return out;
}

}  // namespace

MNEMO_TEST(kernels_cpu, matmul_matches_naive) {
  struct Shape { std::size_t m, n, k; };
  const Shape shapes[] = {{1, 1, 1}, {3, 5, 7}, {7, 33, 64}, {17, 50, 129}, {64, 96, 256}, {2, 300, 31}};
  Rng rng(1);
  for (const Shape& s : shapes) {
    auto x = rng.Floats(s.m * s.k), w = rng.Floats(s.n * s.k);
    Guarded out(s.m * s.n, NAN);
    kc::Matmul(out.data(), x.data(), w.data(), s.m, s.n, s.k);
    const auto ref = NaiveMatmul(x, w, s.m, s.n, s.k);
    const auto label = Label("m n k", {(long long)s.m, (long long)s.n, (long long)s.k});
    CHECK_CASE(MaxAbsDiff(out.data(), ref.data(), s.m * s.n) <= 2e-6 * std::sqrt((double)s.k) * 4, label);
    CHECK_CASE(out.Intact(), label);
  }
}

// The exactness tests of the engine rest on this: a row's result must not depend on the
// batch it is computed in (m, its tile position, the thread split).
MNEMO_TEST(kernels_cpu, matmul_row_is_batch_invariant) {
  const std::size_t n = 70, ks[] = {64, 100, 4096};
  Rng rng(2);
  for (std::size_t k : ks) {
    const std::size_t m = 37;
    auto x = rng.Floats(m * k), w = rng.Floats(n * k);
    Guarded all(m * n);
    kc::Matmul(all.data(), x.data(), w.data(), m, n, k);
    for (std::size_t r : {std::size_t{0}, std::size_t{5}, std::size_t{33}, m - 1}) {
      Guarded alone(n);
      kc::Matmul(alone.data(), x.data() + r * k, w.data(), 1, n, k);
      CHECK_CASE(BitEqual(alone.data(), all.data() + r * n, n), Label("alone vs 37, k row", {(long long)k, (long long)r}));
      // Same row inside a batch of 7 starting two rows earlier (different tile offset).
      if (r >= 2 && r + 5 <= m) {
        Guarded seven(7 * n);
        kc::Matmul(seven.data(), x.data() + (r - 2) * k, w.data(), 7, n, k);
        CHECK_CASE(BitEqual(seven.data() + 2 * n, all.data() + r * n, n), Label("7 vs 37, k row", {(long long)k, (long long)r}));
      }
    }
  }
}

MNEMO_TEST(kernels_cpu, rmsnorm_matches_naive_and_allows_alias) {
  Rng rng(3);
  for (std::size_t dim : {32, 64, 128, 4096}) {
    const std::size_t rows = 5;
    auto x = rng.Floats(rows * dim, -3.0f, 3.0f), w = rng.Floats(dim, 0.5f, 1.5f);
    Guarded out(rows * dim);
    kc::RmsNorm(out.data(), x.data(), w.data(), rows, dim, 1e-6f);
    std::vector<double> ref(rows * dim);
    for (std::size_t r = 0; r < rows; ++r) {
      double ss = 0;
      for (std::size_t i = 0; i < dim; ++i) ss += (double)x[r * dim + i] * x[r * dim + i];
      const double inv = 1.0 / std::sqrt(ss / dim + 1e-6);
      for (std::size_t i = 0; i < dim; ++i) ref[r * dim + i] = x[r * dim + i] * inv * w[i];
    }
    CHECK_CASE(MaxAbsDiff(out.data(), ref.data(), rows * dim) <= 1e-5, Label("dim", {(long long)dim}));
    CHECK(out.Intact());
    auto inplace = x;
    kc::RmsNorm(inplace.data(), inplace.data(), w.data(), rows, dim, 1e-6f);
    CHECK(BitEqual(inplace.data(), out.data(), rows * dim));
  }
}

MNEMO_TEST(kernels_cpu, rope_matches_rotate_half_reference) {
  Rng rng(4);
  for (std::size_t hd : {32, 64, 128}) {
    const std::size_t rows = 6, heads = 3;
    auto x = rng.Floats(rows * heads * hd);
    std::vector<int32_t> pos(rows);
    for (auto& p : pos) p = rng.Int(0, 8192);
    pos[0] = 0;
    Guarded y(rows * heads * hd);
    std::copy(x.begin(), x.end(), y.data());
    kc::Rope(y.data(), pos.data(), rows, heads, hd, 10000.0f);
    // Reference: transformers' rotate_half with the angle rounded to fp32 as it does.
    std::vector<double> ref(x.size());
    const std::size_t half = hd / 2;
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t i = 0; i < hd; ++i) {
          const std::size_t fi = i % half;
          const float inv = 1.0f / std::pow(10000.0f, (float)(2 * fi) / (float)hd);
          const double ang = (double)((float)pos[r] * inv);
          const float* v = x.data() + (r * heads + h) * hd;
          const double rot = i < half ? -(double)v[i + half] : (double)v[i - half];
          ref[(r * heads + h) * hd + i] = v[i] * std::cos(ang) + rot * std::sin(ang);
        }
    CHECK_CASE(MaxAbsDiff(y.data(), ref.data(), ref.size()) <= 2e-6, Label("head_dim", {(long long)hd}));
    CHECK(y.Intact());
    // Position 0 is the identity.
    CHECK(BitEqual(y.data(), x.data(), heads * hd));
  }
}

MNEMO_TEST(kernels_cpu, elementwise_ops_match_naive) {
  Rng rng(5);
  const std::size_t n = 70001;  // large enough to be split across threads, odd tail
  auto a = rng.Floats(n, -8.0f, 8.0f), b = rng.Floats(n);
  Guarded out(n);
  kc::SiluMul(out.data(), a.data(), b.data(), n);
  std::vector<double> ref(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = a[i] / (1.0 + std::exp(-(double)a[i])) * b[i];
  CHECK(MaxAbsDiff(out.data(), ref.data(), n) <= 1e-5);
  CHECK(out.Intact());

  Guarded sum(n);
  kc::Add(sum.data(), a.data(), b.data(), n);
  for (std::size_t i = 0; i < n; ++i) CHECK_EQ(sum[i], a[i] + b[i]);
  CHECK(sum.Intact());

  const std::size_t rows = 7, cols = 129;
  auto x = rng.Floats(rows * cols), bias = rng.Floats(cols);
  Guarded biased(rows * cols);
  kc::AddBias(biased.data(), x.data(), bias.data(), rows, cols);
  for (std::size_t i = 0; i < rows * cols; ++i) CHECK_EQ(biased[i], x[i] + bias[i % cols]);
  CHECK(biased.Intact());
}

MNEMO_TEST(kernels_cpu, embedding_gathers_rows) {
  Rng rng(6);
  const std::size_t vocab = 50, dim = 48;
  auto table = rng.Floats(vocab * dim);
  const std::vector<int32_t> ids = {0, 49, 7, 7, 13};
  Guarded out(ids.size() * dim);
  kc::Embedding(out.data(), table.data(), ids.data(), ids.size(), dim, vocab);
  for (std::size_t r = 0; r < ids.size(); ++r)
    CHECK(BitEqual(out.data() + r * dim, table.data() + ids[r] * dim, dim));
  CHECK(out.Intact());
}

MNEMO_TEST(kernels_cpu, argmax_prefers_lowest_index_and_skips_nan) {
  const std::vector<float> x = {1, 3, 3, 2,  NAN, -1, -5, -1,  NAN, NAN, NAN, NAN};
  std::vector<int32_t> out(3, -9);
  kc::Argmax(out.data(), x.data(), 3, 4);
  CHECK_EQ(out[0], 1);
  CHECK_EQ(out[1], 1);
  CHECK_EQ(out[2], 0);
}

MNEMO_TEST(kernels_cpu, softmax_matches_naive) {
  Rng rng(7);
  const std::size_t rows = 3, n = 1000;
  auto x = rng.Floats(rows * n, -20.0f, 20.0f);
  Guarded out(rows * n);
  kc::Softmax(out.data(), x.data(), rows, n, 0.5f);
  std::vector<double> ref(rows * n);
  for (std::size_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, s = 0;
    for (std::size_t i = 0; i < n; ++i) mx = std::max(mx, 0.5 * x[r * n + i]);
    for (std::size_t i = 0; i < n; ++i) s += std::exp(0.5 * x[r * n + i] - mx);
    for (std::size_t i = 0; i < n; ++i) ref[r * n + i] = std::exp(0.5 * x[r * n + i] - mx) / s;
  }
  CHECK(MaxAbsDiff(out.data(), ref.data(), rows * n) <= 1e-6);
  CHECK(out.Intact());
}

// SwiGLU runs 8 elements at a time with a vector exp where the machine has one: an element's
// bits must not depend on where the range holding it starts or ends (thread chunks, an odd
// tail), and the function must hold over the whole float range (exp of large |g| neither
// overflows nor turns a finite result into NaN).
MNEMO_TEST(kernels_cpu, silu_mul_is_position_invariant_and_holds_at_extremes) {
  Rng rng(6);
  std::vector<float> g = rng.Floats(4099, -12.0f, 12.0f), u = rng.Floats(4099);
  const std::vector<float> extremes = {0.0f, -0.0f, 1e-30f, -1e-30f, 20.0f, -20.0f, 87.0f, -87.0f, 88.5f, -88.5f,
                                       100.0f, -100.0f, 1e30f, -1e30f};
  for (std::size_t i = 0; i < extremes.size(); ++i) g[i * 7] = extremes[i];
  const std::size_t n = g.size();
  std::vector<float> whole(n);
  kc::SiluMul(whole.data(), g.data(), u.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const double ref = g[i] / (1.0 + std::exp(-(double)g[i])) * u[i];
    CHECK_CASE(std::isfinite(whole[i]) && std::abs(whole[i] - ref) <= 1e-5 * std::max(1.0, std::abs(ref)),
               Label("i", {(long long)i}));
  }
  for (std::size_t start : {0, 1, 5, 8, 13})
    for (std::size_t len : {1, 3, 8, 9, 31}) {
      Guarded part(len);
      kc::SiluMul(part.data(), g.data() + start, u.data() + start, len);
      CHECK_CASE(BitEqual(part.data(), whole.data() + start, len), Label("start len", {(long long)start, (long long)len}));
      CHECK(part.Intact());
    }
  // In place (the engine writes the product over gate).
  std::vector<float> inplace = g;
  kc::SiluMul(inplace.data(), inplace.data(), u.data(), n);
  CHECK(BitEqual(inplace.data(), whole.data(), n));
}
