// Paged KV kernels on the CPU: writeKv, copyBlocks and grouped-query paged attention against
// a naive non-paged attention, plus batch invariance of attention.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm_kernels.h"
#include "tests/kernels_cpu_test.h"

using mnemo::kernels::AttentionBatch;
using mnemo::kernels::KvGeometry;

namespace {

// Offset of (block, layer, part, token-in-block, kv_head) written out independently of
// KvGeometry, so a layout bug in the kernels cannot hide behind the same helper.
std::size_t CacheAt(const KvGeometry& g, int blk, int layer, int part, int tok, int head) {
  return ((((std::size_t)blk * g.num_layers + layer) * 2 + part) * g.block_size + tok) * g.num_kv_heads * g.head_dim +
         (std::size_t)head * g.head_dim;
}

struct Seq {
  int ctx, q_len;
  std::vector<float> k, v;       // [ctx][kv_heads][head_dim], contiguous (the naive view)
  std::vector<int32_t> blocks;   // physical block per logical block
};

// A cache with randomly scattered blocks holding every sequence's K/V for `layer`; all
// other contents are random so reading a wrong block or layer shows up.
struct PagedFixture {
  KvGeometry g;
  int layer;
  std::size_t num_blocks;
  std::vector<float> cache;
  std::vector<Seq> seqs;

  PagedFixture(const KvGeometry& geom, int layer_, const std::vector<std::pair<int, int>>& ctx_q, Rng& rng)
      : g(geom), layer(layer_) {
    std::size_t needed = 0;
    for (auto [ctx, q] : ctx_q) needed += (ctx + g.block_size - 1) / g.block_size;
    num_blocks = needed + 5;
    cache = rng.Floats(num_blocks * g.BlockElems(), -4.0f, 4.0f);
    std::vector<int32_t> perm(num_blocks);
    std::iota(perm.begin(), perm.end(), 0);
    for (std::size_t i = num_blocks - 1; i > 0; --i) std::swap(perm[i], perm[rng.Next() % (i + 1)]);
    std::size_t next = 0;
    const std::size_t te = g.TokenElems();
    for (auto [ctx, q] : ctx_q) {
      Seq s{ctx, q, rng.Floats(ctx * te), rng.Floats(ctx * te), {}};
      for (int b = 0; b < (ctx + g.block_size - 1) / g.block_size; ++b) s.blocks.push_back(perm[next++]);
      for (int t = 0; t < ctx; ++t)
        for (int h = 0; h < g.num_kv_heads; ++h) {
          const int blk = s.blocks[t / g.block_size], tok = t % g.block_size;
          std::copy_n(&s.k[t * te + h * g.head_dim], g.head_dim, &cache[CacheAt(g, blk, layer, 0, tok, h)]);
          std::copy_n(&s.v[t * te + h * g.head_dim], g.head_dim, &cache[CacheAt(g, blk, layer, 1, tok, h)]);
        }
      seqs.push_back(std::move(s));
    }
  }
};

// Host arrays behind an AttentionBatch over a subset of the fixture's sequences.
struct BatchArrays {
  std::vector<int32_t> query_start, context_len, tables;
  int32_t max_blocks;
  AttentionBatch View() const {
    return {(int32_t)context_len.size(), query_start.data(), context_len.data(), tables.data(), max_blocks};
  }
};

BatchArrays MakeBatch(const PagedFixture& f, const std::vector<int>& which, int extra_width = 3) {
  BatchArrays b;
  b.max_blocks = 0;
  for (int i : which) b.max_blocks = std::max<int32_t>(b.max_blocks, f.seqs[i].blocks.size());
  b.max_blocks += extra_width;  // padding columns must be ignored
  b.query_start.push_back(0);
  for (int i : which) {
    const Seq& s = f.seqs[i];
    b.query_start.push_back(b.query_start.back() + s.q_len);
    b.context_len.push_back(s.ctx);
    std::vector<int32_t> row(b.max_blocks, -1);
    std::copy(s.blocks.begin(), s.blocks.end(), row.begin());
    b.tables.insert(b.tables.end(), row.begin(), row.end());
  }
  return b;
}

// Naive causal GQA over the contiguous K/V of one sequence, in double.
void NaiveAttention(double* out, const float* q, const Seq& s, const KvGeometry& g, int heads, float scale) {
  const int hd = g.head_dim, group = heads / g.num_kv_heads;
  const std::size_t te = g.TokenElems();
  for (int i = 0; i < s.q_len; ++i) {
    const int pos = s.ctx - s.q_len + i;
    for (int h = 0; h < heads; ++h) {
      const int kvh = h / group;
      const float* qh = q + ((std::size_t)i * heads + h) * hd;
      std::vector<double> sc(pos + 1);
      double mx = -INFINITY;
      for (int j = 0; j <= pos; ++j) {
        double d = 0;
        for (int e = 0; e < hd; ++e) d += (double)qh[e] * s.k[j * te + kvh * hd + e];
        sc[j] = d * scale;
        mx = std::max(mx, sc[j]);
      }
      double sum = 0;
      for (auto& x : sc) sum += (x = std::exp(x - mx));
      double* o = out + ((std::size_t)i * heads + h) * hd;
      for (int e = 0; e < hd; ++e) {
        double acc = 0;
        for (int j = 0; j <= pos; ++j) acc += sc[j] * s.v[j * te + kvh * hd + e];
        o[e] = acc / sum;
      }
    }
  }
}

struct AttnCase { int head_dim, block_size, heads, kv_heads; };

std::vector<AttnCase> AttnCases() {
  std::vector<AttnCase> cases;
  for (int hd : {32, 64, 128})
    for (int bs : {16, 8})
      for (auto [h, kvh] : std::vector<std::pair<int, int>>{{4, 4}, {8, 2}, {6, 1}}) cases.push_back({hd, bs, h, kvh});
  return cases;
}

// (context length, query rows): single token, prefill, decode, chunked prefill, exact block.
const std::vector<std::pair<int, int>> kSeqs = {{1, 1}, {37, 37}, {50, 1}, {20, 5}, {16, 16}, {9, 1}};

}  // namespace

MNEMO_TEST(kernels_cpu, paged_attention_matches_naive) {
  Rng rng(11);
  for (const AttnCase& c : AttnCases()) {
    const KvGeometry g{3, c.kv_heads, c.head_dim, c.block_size};
    PagedFixture f(g, 1, kSeqs, rng);
    std::vector<int> all(kSeqs.size());
    std::iota(all.begin(), all.end(), 0);
    const BatchArrays b = MakeBatch(f, all);
    const std::size_t rows = b.query_start.back(), row_elems = (std::size_t)c.heads * c.head_dim;
    auto q = rng.Floats(rows * row_elems, -2.0f, 2.0f);
    const float scale = 1.0f / std::sqrt((float)c.head_dim);
    Guarded out(rows * row_elems, NAN);
    kc::PagedAttention(out.data(), q.data(), f.cache.data(), f.num_blocks, f.layer, c.heads, g, b.View(), scale);
    std::vector<double> ref(rows * row_elems);
    for (std::size_t s = 0; s < all.size(); ++s)
      NaiveAttention(ref.data() + b.query_start[s] * row_elems, q.data() + b.query_start[s] * row_elems, f.seqs[s], g,
                     c.heads, scale);
    const auto label = Label("hd bs heads kv", {c.head_dim, c.block_size, c.heads, c.kv_heads});
    CHECK_CASE(MaxAbsDiff(out.data(), ref.data(), ref.size()) <= 2e-5, label);
    CHECK_CASE(out.Intact(), label);
  }
}

MNEMO_TEST(kernels_cpu, paged_attention_is_batch_invariant) {
  Rng rng(12);
  for (const AttnCase& c : AttnCases()) {
    const KvGeometry g{2, c.kv_heads, c.head_dim, c.block_size};
    PagedFixture f(g, 0, kSeqs, rng);
    const std::size_t row_elems = (std::size_t)c.heads * c.head_dim;
    const float scale = 0.125f;
    const auto label = Label("hd bs heads kv", {c.head_dim, c.block_size, c.heads, c.kv_heads});
    std::vector<int> all(kSeqs.size());
    std::iota(all.begin(), all.end(), 0);
    const BatchArrays b = MakeBatch(f, all);
    const std::size_t rows = b.query_start.back();
    auto q = rng.Floats(rows * row_elems);
    std::vector<float> batched(rows * row_elems);
    kc::PagedAttention(batched.data(), q.data(), f.cache.data(), f.num_blocks, 0, c.heads, g, b.View(), scale);
    // Each sequence alone gives the same bits as inside the batch.
    for (std::size_t s = 0; s < all.size(); ++s) {
      const BatchArrays one = MakeBatch(f, {(int)s}, 0);
      const std::size_t n = (std::size_t)f.seqs[s].q_len * row_elems;
      std::vector<float> alone(n);
      kc::PagedAttention(alone.data(), q.data() + b.query_start[s] * row_elems, f.cache.data(), f.num_blocks, 0, c.heads,
                         g, one.View(), scale);
      CHECK_CASE(BitEqual(alone.data(), batched.data() + b.query_start[s] * row_elems, n), label);
    }
    // Row i of the 37-token prefill equals a decode step at the same position.
    Seq& prefill = f.seqs[1];
    for (int i : {0, 15, 16, 36}) {
      Seq decode = prefill;
      decode.ctx = i + 1;
      decode.q_len = 1;
      PagedFixture view = f;  // same cache; only the batch differs
      view.seqs = {decode};
      const BatchArrays d = MakeBatch(view, {0});
      std::vector<float> step(row_elems);
      const std::size_t row = b.query_start[1] + i;
      kc::PagedAttention(step.data(), q.data() + row * row_elems, f.cache.data(), f.num_blocks, 0, c.heads, g, d.View(),
                         scale);
      CHECK_CASE(BitEqual(step.data(), batched.data() + row * row_elems, row_elems), label + " prefill row");
    }
  }
}

MNEMO_TEST(kernels_cpu, write_kv_places_rows_and_skips_negative_slots) {
  Rng rng(13);
  for (int hd : {32, 64, 128})
    for (int bs : {16, 8}) {
      const KvGeometry g{3, 2, hd, bs};
      const std::size_t num_blocks = 6, te = g.TokenElems();
      Guarded cache(num_blocks * g.BlockElems());
      auto init = rng.Floats(cache.size());
      std::copy(init.begin(), init.end(), cache.data());
      const std::vector<int32_t> slots = {0, bs * 5 + bs - 1, -1, bs * 2 + 3, 1};
      auto k = rng.Floats(slots.size() * te), v = rng.Floats(slots.size() * te);
      kc::WriteKv(cache.data(), num_blocks, k.data(), v.data(), slots.data(), slots.size(), 2, g);
      std::vector<float> expect = init;
      for (std::size_t r = 0; r < slots.size(); ++r) {
        if (slots[r] < 0) continue;
        for (int h = 0; h < g.num_kv_heads; ++h) {
          std::copy_n(&k[r * te + h * hd], hd, &expect[CacheAt(g, slots[r] / bs, 2, 0, slots[r] % bs, h)]);
          std::copy_n(&v[r * te + h * hd], hd, &expect[CacheAt(g, slots[r] / bs, 2, 1, slots[r] % bs, h)]);
        }
      }
      const auto label = Label("hd bs", {hd, bs});
      CHECK_CASE(BitEqual(cache.data(), expect.data(), expect.size()), label);
      CHECK_CASE(cache.Intact(), label);
    }
}

MNEMO_TEST(kernels_cpu, copy_blocks_moves_all_layers_in_order) {
  Rng rng(14);
  const KvGeometry g{4, 2, 32, 16};
  const std::size_t num_blocks = 8, be = g.BlockElems();
  Guarded cache(num_blocks * be);
  auto init = rng.Floats(cache.size());
  std::copy(init.begin(), init.end(), cache.data());
  // Pairs apply in order: block 3 is copied to 5 before 5 is copied on to 7.
  const std::vector<int32_t> src = {3, 5, 0, 2}, dst = {5, 7, 1, 2};
  kc::CopyBlocks(cache.data(), num_blocks, src.data(), dst.data(), src.size(), g);
  std::vector<float> expect = init;
  for (std::size_t i = 0; i < src.size(); ++i)
    std::copy_n(expect.begin() + src[i] * be, be, expect.begin() + dst[i] * be);
  CHECK(BitEqual(cache.data(), expect.data(), expect.size()));
  CHECK(BitEqual(cache.data() + 7 * be, init.data() + 3 * be, be));
  CHECK(cache.Intact());
}

// Prefill over a long cached prefix runs in tiles of query rows that share each key and value
// row; every row must still equal a decode step at its position, bit for bit, whatever tile it
// falls in (first, middle, last, a short tail tile) and for query counts that are not a
// multiple of the tile. Also against the naive float64 attention.
MNEMO_TEST(kernels_cpu, tiled_prefill_over_a_long_prefix_equals_decode_row_by_row) {
  Rng rng(13);
  for (const AttnCase& c : {AttnCase{64, 16, 8, 4}, AttnCase{32, 8, 6, 1}, AttnCase{12, 16, 4, 2}}) {
    const KvGeometry g{1, c.kv_heads, c.head_dim, c.block_size};
    for (int q_len : {1, 7, 8, 9, 21}) {
      PagedFixture f(g, 0, {{300 + q_len, q_len}}, rng);
      const BatchArrays b = MakeBatch(f, {0});
      const std::size_t row_elems = (std::size_t)c.heads * c.head_dim;
      auto q = rng.Floats(q_len * row_elems, -2.0f, 2.0f);
      const float scale = 1.0f / std::sqrt((float)c.head_dim);
      Guarded prefill(q_len * row_elems, NAN);
      kc::PagedAttention(prefill.data(), q.data(), f.cache.data(), f.num_blocks, 0, c.heads, g, b.View(), scale);
      const auto label = Label("hd heads kv q_len", {c.head_dim, c.heads, c.kv_heads, q_len});
      CHECK_CASE(prefill.Intact(), label);
      std::vector<double> ref(q_len * row_elems);
      NaiveAttention(ref.data(), q.data(), f.seqs[0], g, c.heads, scale);
      CHECK_CASE(MaxAbsDiff(prefill.data(), ref.data(), ref.size()) <= 2e-5, label);
      for (int i = 0; i < q_len; ++i) {
        PagedFixture view = f;
        view.seqs[0].ctx = 300 + i + 1;
        view.seqs[0].q_len = 1;
        const BatchArrays d = MakeBatch(view, {0});
        std::vector<float> step(row_elems);
        kc::PagedAttention(step.data(), q.data() + i * row_elems, f.cache.data(), f.num_blocks, 0, c.heads, g, d.View(),
                           scale);
        CHECK_CASE(BitEqual(step.data(), prefill.data() + i * row_elems, row_elems), label + " row " + std::to_string(i));
      }
    }
  }
}

// Decode rows run a loop nest of their own (8 keys per reduction, all heads of a kv head per
// value row, column chunks in registers over blocks of keys). A batch of decode steps must
// equal the tiled prefill rows at the same positions bit for bit, for every group size (pairs
// of heads and an odd one out), head dims that split into 32- and 8-column chunks, and
// positions on both sides of the 8-key and 64-key boundaries.
MNEMO_TEST(kernels_cpu, batched_decode_equals_tiled_prefill_for_every_group_and_head_dim) {
  Rng rng(21);
  constexpr int kRows = 9;
  for (int hd : {8, 24, 40, 64, 128})
    for (int group : {1, 2, 3, 5}) {
      const KvGeometry g{1, 2, hd, 16};
      const int heads = group * g.num_kv_heads;
      PagedFixture f(g, 0, {{137, kRows}, {70, kRows}, {kRows, kRows}}, rng);
      const BatchArrays b = MakeBatch(f, {0, 1, 2});
      const std::size_t row_elems = (std::size_t)heads * hd, rows = b.query_start.back();
      auto q = rng.Floats(rows * row_elems, -2.0f, 2.0f);
      const float scale = 1.0f / std::sqrt((float)hd);
      std::vector<float> prefill(rows * row_elems);
      kc::PagedAttention(prefill.data(), q.data(), f.cache.data(), f.num_blocks, 0, heads, g, b.View(), scale);
      PagedFixture view = f;
      view.seqs.clear();
      for (const Seq& s : f.seqs)
        for (int i = 0; i < s.q_len; ++i) {
          Seq step = s;
          step.ctx = s.ctx - s.q_len + i + 1;
          step.q_len = 1;
          view.seqs.push_back(step);
        }
      std::vector<int> all(view.seqs.size());
      std::iota(all.begin(), all.end(), 0);
      const BatchArrays d = MakeBatch(view, all);
      Guarded decode(rows * row_elems, NAN);
      kc::PagedAttention(decode.data(), q.data(), f.cache.data(), f.num_blocks, 0, heads, g, d.View(), scale);
      const auto label = Label("hd group", {hd, group});
      CHECK_CASE(decode.Intact(), label);
      CHECK_CASE(BitEqual(decode.data(), prefill.data(), prefill.size()), label);
      std::vector<double> ref(kRows * row_elems);
      NaiveAttention(ref.data(), q.data(), f.seqs[0], g, heads, scale);
      CHECK_CASE(MaxAbsDiff(decode.data(), ref.data(), ref.size()) <= 2e-5, label);
    }
}

// A call over several consecutive kv heads (decode items read whole token rows that way) must
// give, head by head, the bits of one call per head: for the portable and the vector path, a
// decode row and a prefill tile, head counts that are and are not the whole of the kv heads,
// and a context that is not a multiple of 8 keys.
MNEMO_TEST(kernels_cpu, attend_over_several_kv_heads_equals_one_call_per_head) {
  Rng rng(31);
  std::vector<std::pair<const char*, kc::AttendFn>> paths = {{"portable", kc::PortableAttend}};
  if (kc::Avx2Attend() != nullptr) paths.push_back({"avx2", kc::Avx2Attend()});
  for (auto [name, attend] : paths)
    for (int hd : {24, 64})
      for (int group : {1, 2, 3})
        for (int rows : {1, 5}) {
          const KvGeometry g{2, 5, hd, 16};
          const int ctx = 203;
          PagedFixture f(g, 1, {{ctx, rows}}, rng);
          const std::size_t row_elems = (std::size_t)group * g.num_kv_heads * hd;
          auto q = rng.Floats(rows * row_elems, -2.0f, 2.0f);
          auto base = [&](float* out, float* scores, std::size_t first, std::size_t count) {
            kc::AttendArgs a{};
            a.key0 = f.cache.data() + g.PlaneOffset(0, f.layer, mnemo::kernels::KvPart::kKey) + first * hd;
            a.block_stride = g.BlockElems();
            a.value_offset = g.PlaneElems();
            a.token_stride = g.TokenElems();
            a.block_size = g.block_size;
            a.table = f.seqs[0].blocks.data();
            a.n_keys = ctx - rows + 1;
            a.group = group;
            a.head_dim = hd;
            a.scale = 0.3f;
            a.rows = rows;
            a.q_stride = row_elems;
            a.q = q.data() + first * group * hd;
            a.out = out + first * group * hd;
            a.scores = scores;
            a.kv_heads = count;
            return a;
          };
          const std::size_t per_head = (std::size_t)rows * group * ctx;
          for (std::size_t first : {0, 1})
            for (std::size_t count : {2, 4}) {
              if (first + count > (std::size_t)g.num_kv_heads) continue;
              Guarded together(rows * row_elems, NAN), apart(rows * row_elems, NAN);
              std::vector<float> scores(count * per_head);
              attend(base(together.data(), scores.data(), first, count));
              for (std::size_t h = first; h < first + count; ++h) attend(base(apart.data(), scores.data(), h, 1));
              const auto label = std::string(name) + Label(" hd group rows first count", {hd, group, rows, (int)first, (int)count});
              CHECK_CASE(BitEqual(together.data(), apart.data(), together.size()), label);
              CHECK_CASE(together.Intact(), label);
            }
        }
}
