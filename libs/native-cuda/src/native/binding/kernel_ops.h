// The argument lists of the kernel ops that both backends export, read and checked once so
// kernels.cpu and kernels.cuda assert the very same rules — the ones the TypeScript validator
// (src/kernels/kernel-args.validator.ts) applies to both first. A backend names its tensors
// through `Tensors`: Read(args, i, name) returns one (a Float32Array span on the CPU, a device
// buffer on CUDA) and Elems(t) counts its elements; everything else is host memory.
#pragma once

#include <napi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "binding/kernel_args.h"
#include "kernels/batch_check.h"
#include "kernels/kv_layout.h"

namespace mnemo::binding {

template <typename Tensors>
struct KernelOps {
  using T = decltype(Tensors::Read(std::declval<const Args&>(), 0, ""));

  // Every tensor in `ts` holds at least `n` elements.
  template <typename... Ts>
  static void NeedElems(Napi::Env env, size_t n, const char* what, const Ts&... ts) {
    if (((Tensors::Elems(ts) < n) || ...)) Invalid(env, std::string(what) + ": buffer too small");
  }

  // Whole blocks of `g` in `cache` (what the validator's cacheBlocks() requires it to hold).
  static size_t Blocks(const T& cache, const kernels::KvGeometry& g) { return Tensors::Elems(cache) / g.BlockElems(); }

  static void NeedLayer(Napi::Env env, size_t layer, const kernels::KvGeometry& g, const char* what) {
    if (layer >= static_cast<size_t>(g.num_layers)) Invalid(env, std::string(what) + ": layer out of range");
  }

  struct Embedding {
    T out, table;
    Span<int32_t> ids;
    size_t dim, vocab;
  };
  static Embedding ReadEmbedding(const Args& a) {
    Napi::Env env = a.Env();
    Embedding e{Tensors::Read(a, 0, "out"), Tensors::Read(a, 1, "table"), I32(a, 2, "ids"), Size(a, 3, "dim"), 0};
    Need(env, e.dim > 0, "embedding: dim must be positive");
    NeedElems(env, Mul(env, e.ids.size, e.dim), "embedding", e.out);
    e.vocab = Tensors::Elems(e.table) / e.dim;
    for (size_t r = 0; r < e.ids.size; ++r)
      Need(env, e.ids.data[r] >= 0 && static_cast<size_t>(e.ids.data[r]) < e.vocab, "embedding: id out of range");
    return e;
  }

  struct RmsNorm {
    T out, x, w;
    size_t rows, dim;
    float eps;
  };
  static RmsNorm ReadRmsNorm(const Args& a) {
    Napi::Env env = a.Env();
    RmsNorm r{Tensors::Read(a, 0, "out"), Tensors::Read(a, 1, "x"),      Tensors::Read(a, 2, "weight"),
              Size(a, 3, "rows"),         Size(a, 4, "dim"),             static_cast<float>(Num(a, 5, "eps"))};
    Need(env, r.dim > 0, "rmsnorm: dim must be positive");
    NeedElems(env, Mul(env, r.rows, r.dim), "rmsnorm", r.out, r.x);
    NeedElems(env, r.dim, "rmsnorm", r.w);
    return r;
  }

  struct Matmul {
    T out, x, w;
    size_t m, n, k;
  };
  static Matmul ReadMatmul(const Args& a) {
    Napi::Env env = a.Env();
    Matmul p{Tensors::Read(a, 0, "out"), Tensors::Read(a, 1, "x"), Tensors::Read(a, 2, "w"),
             Size(a, 3, "m"),            Size(a, 4, "n"),          Size(a, 5, "k")};
    NeedElems(env, Mul(env, p.m, p.n), "matmul", p.out);
    NeedElems(env, Mul(env, p.m, p.k), "matmul", p.x);
    NeedElems(env, Mul(env, p.n, p.k), "matmul", p.w);
    return p;
  }

  struct Rope {
    T x;
    Span<int32_t> pos;
    size_t rows, heads, head_dim;
    float theta;
  };
  static Rope ReadRope(const Args& a) {
    Napi::Env env = a.Env();
    Rope r{Tensors::Read(a, 0, "x"),   I32(a, 1, "positions"), Size(a, 2, "rows"), Size(a, 3, "numHeads"),
           Size(a, 4, "headDim"), static_cast<float>(Num(a, 5, "theta"))};
    Need(env, r.head_dim > 0 && r.head_dim % 2 == 0, "rope: headDim must be even");
    Need(env, r.pos.size >= r.rows, "rope: positions too short");
    NeedElems(env, Mul(env, r.rows, Mul(env, r.heads, r.head_dim)), "rope", r.x);
    return r;
  }

  // siluMul and add: out, a, b of n elements each.
  struct Binary {
    T out, x, y;
    size_t n;
  };
  static Binary ReadBinary(const Args& a) {
    Binary b{Tensors::Read(a, 0, "out"), Tensors::Read(a, 1, "a"), Tensors::Read(a, 2, "b"), Size(a, 3, "n")};
    NeedElems(a.Env(), b.n, "elementwise", b.out, b.x, b.y);
    return b;
  }

  struct AddBias {
    T out, x, bias;
    size_t rows, n;
  };
  static AddBias ReadAddBias(const Args& a) {
    Napi::Env env = a.Env();
    AddBias b{Tensors::Read(a, 0, "out"), Tensors::Read(a, 1, "x"), Tensors::Read(a, 2, "bias"), Size(a, 3, "rows"),
              Size(a, 4, "n")};
    NeedElems(env, Mul(env, b.rows, b.n), "addBias", b.out, b.x);
    NeedElems(env, b.n, "addBias", b.bias);
    return b;
  }

  struct WriteKv {
    T cache, k, v;
    Span<int32_t> slots;
    size_t layer;
    kernels::KvGeometry g;
    size_t num_blocks;
  };
  // A negative slot is a padding row the kernel skips.
  static WriteKv ReadWriteKv(const Args& a) {
    Napi::Env env = a.Env();
    WriteKv w{Tensors::Read(a, 0, "cache"), Tensors::Read(a, 1, "k"), Tensors::Read(a, 2, "v"), I32(a, 3, "slots"),
              Size(a, 4, "layer"),          Geom(a, 5),               0};
    NeedLayer(env, w.layer, w.g, "writeKv");
    NeedElems(env, Mul(env, w.slots.size, w.g.TokenElems()), "writeKv", w.k, w.v);
    w.num_blocks = Blocks(w.cache, w.g);
    for (size_t r = 0; r < w.slots.size; ++r)
      Need(env, w.slots.data[r] < 0 || static_cast<size_t>(w.slots.data[r]) < w.num_blocks * w.g.block_size,
           "writeKv: slot out of range");
    return w;
  }

  struct PagedAttention {
    T out, q, cache;
    size_t layer, heads;
    kernels::KvGeometry g;
    kernels::AttentionBatch b;
    float scale;
    size_t num_blocks;
  };
  // An empty batch (b.num_seqs == 0) passes unchecked beyond its arguments: there is nothing to run.
  static PagedAttention ReadPagedAttention(const Args& a) {
    Napi::Env env = a.Env();
    PagedAttention p{Tensors::Read(a, 0, "out"),
                     Tensors::Read(a, 1, "q"),
                     Tensors::Read(a, 2, "cache"),
                     Size(a, 3, "layer"),
                     Size(a, 4, "numHeads"),
                     Geom(a, 5),
                     Batch(a, 9),
                     static_cast<float>(Num(a, 14, "scale")),
                     0};
    NeedLayer(env, p.layer, p.g, "pagedAttention");
    Need(env, p.heads > 0 && p.heads % p.g.num_kv_heads == 0, "pagedAttention: numHeads must be a multiple of numKvHeads");
    if (p.b.num_seqs == 0) return p;
    p.num_blocks = Blocks(p.cache, p.g);
    const size_t rows = static_cast<size_t>(std::max(0, p.b.query_start[p.b.num_seqs]));
    if (const char* why = kernels::CheckAttentionBatch(p.b, p.g, p.num_blocks, rows)) Invalid(env, why);
    NeedElems(env, Mul(env, rows, Mul(env, p.heads, p.g.head_dim)), "pagedAttention", p.out, p.q);
    return p;
  }

  struct CopyBlocks {
    T cache;
    Span<int32_t> src, dst;
    kernels::KvGeometry g;
    size_t num_blocks;
  };
  static CopyBlocks ReadCopyBlocks(const Args& a) {
    Napi::Env env = a.Env();
    CopyBlocks c{Tensors::Read(a, 0, "cache"), I32(a, 1, "src"), I32(a, 2, "dst"), Geom(a, 3), 0};
    Need(env, c.src.size == c.dst.size, "copyBlocks: src and dst differ in length");
    c.num_blocks = Blocks(c.cache, c.g);
    for (size_t i = 0; i < c.src.size; ++i)
      Need(env, c.src.data[i] >= 0 && c.dst.data[i] >= 0 && static_cast<size_t>(c.src.data[i]) < c.num_blocks &&
                    static_cast<size_t>(c.dst.data[i]) < c.num_blocks,
           "copyBlocks: block id out of range");
    return c;
  }

  // argmax's out is host memory on both backends.
  struct Argmax {
    Span<int32_t> out;
    T x;
    size_t rows, n;
  };
  static Argmax ReadArgmax(const Args& a) {
    Napi::Env env = a.Env();
    Argmax m{I32(a, 0, "out"), Tensors::Read(a, 1, "x"), Size(a, 2, "rows"), Size(a, 3, "n")};
    Need(env, m.n > 0 && m.n <= INT32_MAX && m.out.size >= m.rows, "argmax: bad sizes");
    NeedElems(env, Mul(env, m.rows, m.n), "argmax", m.x);
    return m;
  }

  struct Softmax {
    T out, x;
    size_t rows, n;
    float scale;
  };
  static Softmax ReadSoftmax(const Args& a) {
    Softmax s{Tensors::Read(a, 0, "out"), Tensors::Read(a, 1, "x"), Size(a, 2, "rows"), Size(a, 3, "n"),
              static_cast<float>(Num(a, 4, "scale"))};
    NeedElems(a.Env(), Mul(a.Env(), s.rows, s.n), "softmax", s.out, s.x);
    return s;
  }
};

}  // namespace mnemo::binding
