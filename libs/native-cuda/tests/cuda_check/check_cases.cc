// Case generation and comparison for the kernel check (check_cases.h).
//
// Tolerance: element i passes when |got - want| <= rtol * (|want| + rms(want)). The rms term
// keeps elements near zero from demanding more relative precision than the storage type has.
// RoPE adds the error of its fp32 angle (position × one ulp), which two correct
// implementations may round differently at long positions.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "check_cases.h"
#include "tests/kernels_test_util.h"

namespace mnemo::check {
namespace {

using test::Rng;

struct Diff {
  double ratio = 0, abs = 0;
};

Diff Compare(const std::vector<float>& got, const std::vector<float>& want, double rtol) {
  Diff d;
  if (got.size() != want.size()) return {std::numeric_limits<double>::infinity(), 0};
  double ss = 0;
  for (float w : want) ss += static_cast<double>(w) * w;
  const double rms = want.empty() ? 0 : std::sqrt(ss / static_cast<double>(want.size()));
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(g) != std::isnan(w)) return {std::numeric_limits<double>::infinity(), d.abs};
    if (std::isnan(w)) continue;
    const double a = std::fabs(g - w);
    d.abs = std::max(d.abs, a);
    const double allowed = rtol * (std::fabs(w) + rms);
    const double r = a == 0 ? 0 : (allowed > 0 ? a / allowed : std::numeric_limits<double>::infinity());
    d.ratio = std::max(d.ratio, r);
  }
  return d;
}

class Runner {
 public:
  Runner(HostOps& sut, HostOps& ref, const CheckOptions& o) : sut_(sut), ref_(ref), opts_(o) {
    for (const std::string& op : ContractOps()) reports_[op].op = op;
  }

  // Runs one case: `body(ops, stored_inputs...)` writes an output; both sides get the
  // inputs as the backend under test stores them.
  void Case(const std::string& op, const std::string& label, double rtol,
            const std::function<std::vector<float>(HostOps&)>& body) {
    if (!opts_.only_op.empty() && op != opts_.only_op) return;
    OpReport& r = reports_[op];
    r.rtol = rtol;
    try {
      const std::vector<float> got = body(sut_);
      const std::vector<float> want = body(ref_);
      const Diff d = Compare(got, want, rtol);
      ++r.cases;
      if (d.ratio >= r.worst) {
        r.worst = d.ratio;
        r.worst_case = label;
      }
      r.worst_abs = std::max(r.worst_abs, d.abs);
    } catch (const std::exception& e) {
      r.failed_to_run = true;
      r.error = label + ": " + e.what();
    }
  }

  std::vector<float> Stored(std::vector<float> v) { return sut_.Stored(v); }
  const CheckOptions& opts() const { return opts_; }

  std::vector<OpReport> Reports() const {
    std::vector<OpReport> out;
    for (const std::string& op : ContractOps())
      if (opts_.only_op.empty() || op == opts_.only_op) out.push_back(reports_.at(op));
    return out;
  }

 private:
  HostOps& sut_;
  HostOps& ref_;
  CheckOptions opts_;
  std::map<std::string, OpReport> reports_;
};

std::string Label(const ModelShape& s, const std::string& what) { return s.name + " " + what; }

std::vector<float> AsFloats(const std::vector<int32_t>& v) { return std::vector<float>(v.begin(), v.end()); }

void CheckModel(Runner& run, const ModelShape& s, Rng& rng) {
  const bool big = s.d_model >= 2048;
  const bool large = run.opts().large;
  const double rtol = run.opts().rtol;
  const int q_dim = s.heads * s.head_dim, kv_dim = s.kv_heads * s.head_dim;
  // Vocabulary-sized tables are capped: a gather or a row reduction does not change with
  // more rows, and the full Llama table would be 2 GiB of fp32 per copy.
  const std::size_t vocab_rows = std::min<std::size_t>(s.vocab, large ? 32768 : 8192);

  {  // embedding
    const std::size_t rows = 9, dim = s.d_model;
    const auto table = run.Stored(rng.Floats(vocab_rows * dim));
    std::vector<int32_t> ids(rows);
    for (auto& id : ids) id = rng.Int(0, static_cast<int32_t>(vocab_rows));
    ids[0] = 0;
    ids[rows - 1] = static_cast<int32_t>(vocab_rows - 1);
    run.Case("embedding", Label(s, "rows=9"), 0, [&](HostOps& o) {
      std::vector<float> out(rows * dim);
      o.Embedding(out.data(), table.data(), vocab_rows, ids.data(), rows, dim);
      return out;
    });
  }
  {  // rmsnorm
    const std::size_t rows = 7, dim = s.d_model;
    const auto x = run.Stored(rng.Floats(rows * dim, -3, 3));
    const auto w = run.Stored(rng.Floats(dim, 0.5f, 1.5f));
    run.Case("rmsnorm", Label(s, "rows=7"), rtol, [&](HostOps& o) {
      std::vector<float> out(rows * dim);
      o.RmsNorm(out.data(), x.data(), w.data(), rows, dim, 1e-5f);
      return out;
    });
  }
  {  // matmul, packWeight + matmulPacked: every projection of the model
    struct Proj { const char* name; int n, k; };
    const Proj projs[] = {{"q", q_dim, s.d_model}, {"kv", kv_dim, s.d_model}, {"o", s.d_model, q_dim},
                          {"gate", s.ffn, s.d_model}, {"down", s.d_model, s.ffn},
                          {"lm_head", static_cast<int>(vocab_rows), s.d_model}};
    std::vector<int> ms = big ? std::vector<int>{1, 5} : std::vector<int>{1, 5, 17};
    if (large) ms = {1, 5, 17, 130, 300};
    for (const Proj& p : projs) {
      const std::size_t n = p.n, k = p.k;
      const auto w = run.Stored(rng.Floats(n * k));
      for (int m : ms) {
        const auto x = run.Stored(rng.Floats(static_cast<std::size_t>(m) * k));
        const std::string label = Label(s, std::string(p.name) + " m=" + std::to_string(m));
        run.Case("matmul", label, rtol, [&](HostOps& o) {
          std::vector<float> out(static_cast<std::size_t>(m) * n);
          o.Matmul(out.data(), x.data(), w.data(), m, n, k);
          return out;
        });
        if (m == 1 || m == ms.back()) {
          for (const char* op : {"packWeight", "matmulPacked"})
            run.Case(op, label, rtol, [&](HostOps& o) {
              std::vector<float> out(static_cast<std::size_t>(m) * n);
              o.PackedMatmul(out.data(), x.data(), w.data(), m, n, k);
              return out;
            });
        }
      }
    }
  }
  {  // rope over q and k heads, positions up to the model's context
    const std::size_t rows = 6;
    std::vector<int32_t> pos = {0, 1, 17, s.max_ctx / 2, s.max_ctx - 2, s.max_ctx - 1};
    const double angle_err = static_cast<double>(s.max_ctx) * std::ldexp(1.0, -23);  // two ulps of an fp32 angle
    for (int heads : {s.heads, s.kv_heads}) {
      const std::size_t n = rows * heads * s.head_dim;
      const auto x = run.Stored(rng.Floats(n, -2, 2));
      run.Case("rope", Label(s, "heads=" + std::to_string(heads)), rtol + angle_err, [&](HostOps& o) {
        std::vector<float> v = x;
        o.Rope(v.data(), pos.data(), rows, heads, s.head_dim, s.rope_theta);
        return v;
      });
    }
  }
  {  // siluMul, add: an ffn activation of three rows; addBias over a fused qkv row
    const std::size_t n = 3 * static_cast<std::size_t>(s.ffn);
    const auto a = run.Stored(rng.Floats(n, -8, 8)), b = run.Stored(rng.Floats(n, -2, 2));
    run.Case("siluMul", Label(s, "n=" + std::to_string(n)), rtol, [&](HostOps& o) {
      std::vector<float> out(n);
      o.SiluMul(out.data(), a.data(), b.data(), n);
      return out;
    });
    run.Case("add", Label(s, "n=" + std::to_string(n)), rtol, [&](HostOps& o) {
      std::vector<float> out(n);
      o.Add(out.data(), a.data(), b.data(), n);
      return out;
    });
    const std::size_t rows = 3, cols = q_dim + 2 * kv_dim;
    const auto x = run.Stored(rng.Floats(rows * cols)), bias = run.Stored(rng.Floats(cols));
    run.Case("addBias", Label(s, "n=" + std::to_string(cols)), rtol, [&](HostOps& o) {
      std::vector<float> out(rows * cols);
      o.AddBias(out.data(), x.data(), bias.data(), rows, cols);
      return out;
    });
  }
  // The paged cache: the model's KV geometry, 16-token blocks.
  const KvGeometry g{std::min(s.layers, large ? s.layers : 4), s.kv_heads, s.head_dim, 16};
  {  // writeKv: rows into scattered slots, one padding row (-1)
    const std::size_t blocks = 7, rows = 20;
    const auto cache = run.Stored(rng.Floats(blocks * g.BlockElems()));
    const auto k = run.Stored(rng.Floats(rows * g.TokenElems())), v = run.Stored(rng.Floats(rows * g.TokenElems()));
    std::vector<int32_t> slots(rows);
    for (std::size_t r = 0; r < rows; ++r) slots[r] = static_cast<int32_t>((r * 5 + 3) % (blocks * g.block_size));
    slots[4] = -1;
    for (int32_t layer : {0, g.num_layers - 1})
      run.Case("writeKv", Label(s, "layer=" + std::to_string(layer)), 0, [&](HostOps& o) {
        std::vector<float> c = cache;
        o.WriteKv(c.data(), blocks, k.data(), v.data(), slots.data(), rows, layer, g);
        return c;
      });
  }
  {  // pagedAttention: a decode row, a prefill chunk and a longer prefix, blocks shuffled
    std::vector<int32_t> ctx = {19, 64, 150}, qlen = {1, 5, 16};
    if (large) {  // a long decode context and a prefill chunk crossing several 64-row tiles
      ctx.insert(ctx.end(), {2100, 700});
      qlen.insert(qlen.end(), {3, 150});
    }
    const int32_t ns = static_cast<int32_t>(ctx.size());
    int32_t max_blocks = 0;
    for (int32_t c : ctx) max_blocks = std::max(max_blocks, (c + g.block_size - 1) / g.block_size);
    const std::size_t blocks = static_cast<std::size_t>(ns) * max_blocks + 1;
    std::vector<int32_t> ids(blocks - 1);
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i + 1);
    for (std::size_t i = ids.size(); i > 1; --i) std::swap(ids[i - 1], ids[static_cast<std::size_t>(rng.Int(0, static_cast<int32_t>(i)))]);
    std::vector<int32_t> tables(static_cast<std::size_t>(ns) * max_blocks, 0), qs = {0};
    for (std::size_t i = 0; i < tables.size(); ++i) tables[i] = ids[i];
    for (int32_t q : qlen) qs.push_back(qs.back() + q);
    const std::size_t rows = static_cast<std::size_t>(qs.back());
    const auto cache = run.Stored(rng.Floats(blocks * g.BlockElems(), -2, 2));
    const auto q = run.Stored(rng.Floats(rows * s.heads * s.head_dim, -2, 2));
    const AttentionBatch b{ns, qs.data(), ctx.data(), tables.data(), max_blocks};
    const int32_t layer = g.num_layers - 1;
    run.Case("pagedAttention", Label(s, "ctx up to " + std::to_string(ctx.back())), rtol, [&](HostOps& o) {
      std::vector<float> out(rows * s.heads * s.head_dim);
      o.PagedAttention(out.data(), q.data(), cache.data(), blocks, layer, s.heads, g, b,
                       1.0f / std::sqrt(static_cast<float>(s.head_dim)));
      return out;
    });
  }
  {  // copyBlocks: independent pairs (one launch on the GPU) and a chain (pair by pair)
    const std::size_t blocks = 9;
    const auto cache = run.Stored(rng.Floats(blocks * g.BlockElems()));
    const std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> sets = {
        {{0, 2, 4}, {5, 6, 7}}, {{0, 1, 2}, {1, 2, 3}}, {{3, 3}, {3, 8}}};
    for (const auto& [src, dst] : sets)
      run.Case("copyBlocks", Label(s, "pairs=" + std::to_string(src.size())), 0, [&](HostOps& o) {
        std::vector<float> c = cache;
        o.CopyBlocks(c.data(), blocks, src.data(), dst.data(), src.size(), g);
        return c;
      });
  }
  {  // argmax and softmax over vocabulary rows; a row of ties and a row with NaN
    const std::size_t rows = 4, n = s.vocab;
    auto x = rng.Floats(rows * n, -10, 10);
    for (std::size_t j = 0; j < n; ++j) x[n + j] = 1.0f;
    x[2 * n + 5] = std::numeric_limits<float>::quiet_NaN();
    x = run.Stored(x);
    run.Case("argmax", Label(s, "n=" + std::to_string(n)), 0, [&](HostOps& o) {
      std::vector<int32_t> out(rows);
      o.Argmax(out.data(), x.data(), rows, n);
      return AsFloats(out);
    });
    std::vector<float> y(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
    y.insert(y.end(), x.begin() + static_cast<std::ptrdiff_t>(3 * n), x.end());
    run.Case("softmax", Label(s, "n=" + std::to_string(n)), rtol, [&](HostOps& o) {
      std::vector<float> out(2 * n);
      o.Softmax(out.data(), y.data(), 2, n, 1.0f / 0.7f);
      return out;
    });
  }
}

}  // namespace

const std::vector<std::string>& ContractOps() {
  static const std::vector<std::string> ops = {"embedding", "rmsnorm", "matmul", "matmulPacked", "packWeight",
                                               "rope", "siluMul", "add", "addBias", "writeKv",
                                               "pagedAttention", "copyBlocks", "argmax", "softmax"};
  return ops;
}

std::vector<ModelShape> LoadShapes(const std::string& path, std::string* error) {
  std::ifstream in(path);
  std::vector<ModelShape> out;
  if (!in) {
    *error = "cannot read " + path;
    return out;
  }
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    ModelShape s;
    int bias = 0;
    if (!(ls >> s.name >> s.layers >> s.d_model >> s.heads >> s.kv_heads >> s.head_dim >> s.ffn >> s.vocab >>
          s.max_ctx >> s.rope_theta >> bias) ||
        s.heads % s.kv_heads != 0 || s.head_dim % 2 != 0) {
      *error = path + ":" + std::to_string(lineno) + ": not a model shape: " + line;
      return {};
    }
    s.qkv_bias = bias != 0;
    out.push_back(s);
  }
  if (out.empty()) *error = path + " lists no model";
  return out;
}

std::vector<OpReport> RunChecks(HostOps& sut, HostOps& ref, const std::vector<ModelShape>& models,
                                const CheckOptions& opts) {
  Runner run(sut, ref, opts);
  Rng rng(20261127);
  for (const ModelShape& s : models) CheckModel(run, s, rng);
  return run.Reports();
}

}  // namespace mnemo::check
