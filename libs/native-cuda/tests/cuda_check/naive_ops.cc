// NaiveOps: each op written from its definition in double precision, one loop nest, no
// blocking and no vector code: the reference the CPU kernels are checked against. Where the
// model's own semantics are fp32 (RoPE angles in transformers are fp32 products), the
// reference keeps that rounding and computes the rest in double.
#include <cmath>
#include <limits>
#include <vector>

#include "host_ops.h"

namespace mnemo::check {
namespace {

class NaiveOps final : public HostOps {
 public:
  std::string Name() const override { return "naive"; }

  void Embedding(float* out, const float* table, std::size_t, const int32_t* ids, std::size_t rows,
                 std::size_t dim) override {
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t d = 0; d < dim; ++d) out[r * dim + d] = table[static_cast<std::size_t>(ids[r]) * dim + d];
  }

  void RmsNorm(float* out, const float* x, const float* w, std::size_t rows, std::size_t dim, float eps) override {
    for (std::size_t r = 0; r < rows; ++r) {
      double ss = 0;
      for (std::size_t d = 0; d < dim; ++d) ss += static_cast<double>(x[r * dim + d]) * x[r * dim + d];
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(dim) + eps);
      for (std::size_t d = 0; d < dim; ++d) out[r * dim + d] = static_cast<float>(x[r * dim + d] * inv * w[d]);
    }
  }

  void Matmul(float* out, const float* x, const float* w, std::size_t m, std::size_t n, std::size_t k) override {
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double acc = 0;
        for (std::size_t p = 0; p < k; ++p) acc += static_cast<double>(x[i * k + p]) * w[j * k + p];
        out[i * n + j] = static_cast<float>(acc);
      }
  }

  void PackedMatmul(float* out, const float* x, const float* w, std::size_t m, std::size_t n,
                    std::size_t k) override {
    Matmul(out, x, w, m, n, k);
  }

  void Rope(float* x, const int32_t* pos, std::size_t rows, std::size_t heads, std::size_t hd, float theta) override {
    const std::size_t half = hd / 2;
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t i = 0; i < half; ++i) {
        const float inv = 1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(hd));
        const double angle = static_cast<float>(pos[r]) * inv;  // fp32 product, as transformers computes it
        const double c = std::cos(angle), s = std::sin(angle);
        for (std::size_t h = 0; h < heads; ++h) {
          float* v = x + (r * heads + h) * hd;
          const double a = v[i], b = v[i + half];
          v[i] = static_cast<float>(a * c - b * s);
          v[i + half] = static_cast<float>(b * c + a * s);
        }
      }
  }

  void SiluMul(float* out, const float* gate, const float* up, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) {
      const double g = gate[i];
      out[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
    }
  }

  void Add(float* out, const float* a, const float* b, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<double>(a[i]) + b[i]);
  }

  void AddBias(float* out, const float* x, const float* bias, std::size_t rows, std::size_t n) override {
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t j = 0; j < n; ++j) out[r * n + j] = static_cast<float>(static_cast<double>(x[r * n + j]) + bias[j]);
  }

  void WriteKv(float* cache, std::size_t, const float* k, const float* v, const int32_t* slots, std::size_t rows,
               int32_t layer, const KvGeometry& g) override {
    const std::size_t te = g.TokenElems();
    for (std::size_t r = 0; r < rows; ++r) {
      if (slots[r] < 0) continue;
      const std::size_t blk = static_cast<std::size_t>(slots[r]) / g.block_size;
      const std::size_t off = (static_cast<std::size_t>(slots[r]) % g.block_size) * te;
      for (std::size_t e = 0; e < te; ++e) {
        cache[g.PlaneOffset(blk, layer, kernels::KvPart::kKey) + off + e] = k[r * te + e];
        cache[g.PlaneOffset(blk, layer, kernels::KvPart::kValue) + off + e] = v[r * te + e];
      }
    }
  }

  void PagedAttention(float* out, const float* q, const float* cache, std::size_t, int32_t layer, std::size_t heads,
                      const KvGeometry& g, const AttentionBatch& b, float scale) override {
    const std::size_t hd = g.head_dim, te = g.TokenElems();
    const std::size_t group = heads / g.num_kv_heads;
    for (int32_t s = 0; s < b.num_seqs; ++s) {
      const int32_t q0 = b.query_start[s], q1 = b.query_start[s + 1];
      const int32_t* table = b.block_tables + static_cast<std::size_t>(s) * b.max_blocks_per_seq;
      for (int32_t row = q0; row < q1; ++row) {
        const int32_t pos = b.context_len[s] - (q1 - q0) + (row - q0);
        for (std::size_t h = 0; h < heads; ++h) {
          const std::size_t kvh = h / group;
          const float* qv = q + (static_cast<std::size_t>(row) * heads + h) * hd;
          std::vector<double> score(static_cast<std::size_t>(pos) + 1);
          double mx = -std::numeric_limits<double>::infinity();
          for (int32_t j = 0; j <= pos; ++j) {
            const std::size_t blk = static_cast<std::size_t>(table[j / g.block_size]);
            const float* key = cache + g.PlaneOffset(blk, layer, kernels::KvPart::kKey) + (j % g.block_size) * te + kvh * hd;
            double dot = 0;
            for (std::size_t d = 0; d < hd; ++d) dot += static_cast<double>(qv[d]) * key[d];
            score[j] = dot * scale;
            mx = std::max(mx, score[j]);
          }
          double sum = 0;
          for (double& sc : score) sum += (sc = std::exp(sc - mx));
          for (std::size_t d = 0; d < hd; ++d) {
            double acc = 0;
            for (int32_t j = 0; j <= pos; ++j) {
              const std::size_t blk = static_cast<std::size_t>(table[j / g.block_size]);
              const float* val = cache + g.PlaneOffset(blk, layer, kernels::KvPart::kValue) + (j % g.block_size) * te + kvh * hd;
              acc += score[j] * val[d];
            }
            out[(static_cast<std::size_t>(row) * heads + h) * hd + d] = static_cast<float>(acc / sum);
          }
        }
      }
    }
  }

  void CopyBlocks(float* cache, std::size_t, const int32_t* src, const int32_t* dst, std::size_t count,
                  const KvGeometry& g) override {
    const std::size_t be = g.BlockElems();
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t e = 0; e < be; ++e) cache[static_cast<std::size_t>(dst[i]) * be + e] = cache[static_cast<std::size_t>(src[i]) * be + e];
  }

  void Argmax(int32_t* out, const float* x, std::size_t rows, std::size_t n) override {
    for (std::size_t r = 0; r < rows; ++r) {
      int32_t best = -1;
      for (std::size_t j = 0; j < n; ++j) {
        const float v = x[r * n + j];
        if (!std::isnan(v) && (best < 0 || v > x[r * n + best])) best = static_cast<int32_t>(j);
      }
      out[r] = best < 0 ? 0 : best;
    }
  }

  void Softmax(float* out, const float* x, std::size_t rows, std::size_t n, float scale) override {
    for (std::size_t r = 0; r < rows; ++r) {
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (std::size_t j = 0; j < n; ++j) mx = std::max(mx, static_cast<double>(x[r * n + j]) * scale);
      for (std::size_t j = 0; j < n; ++j) sum += std::exp(static_cast<double>(x[r * n + j]) * scale - mx);
      std::vector<double> o(n);
      for (std::size_t j = 0; j < n; ++j) o[j] = std::exp(static_cast<double>(x[r * n + j]) * scale - mx) / sum;
      for (std::size_t j = 0; j < n; ++j) out[r * n + j] = static_cast<float>(o[j]);
    }
  }
};

}  // namespace

std::unique_ptr<HostOps> MakeNaiveOps() { return std::make_unique<NaiveOps>(); }

}  // namespace mnemo::check
