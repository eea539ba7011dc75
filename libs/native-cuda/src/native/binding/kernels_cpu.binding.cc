// CPU kernels of the reference engine: exports.kernels.cpu.
//
// Every op is bound in two steps: Bind* converts and checks the JS arguments on the JS thread
// and returns the kernel call as a closure over raw pointers. A direct call (`cpu.matmul(…)`)
// runs the closure at once, before JS runs again. `cpu.run(list)` binds every entry of a list
// `[[op, ...args], …]` first — a bad entry throws and nothing runs — then runs the closures
// in order on the addon's compute thread and settles a Promise; the typed arrays of the list
// stay referenced until then. The TypeScript wrapper (src/kernels/cpu-backend.ts) validates
// first and throws RangeError/TypeError; the checks here are assertions that fail with code
// 'invalid_argument' instead of corrupting memory.
#include <napi.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "binding/addon_state.h"
#include "binding/async_settle.h"
#include "binding/kernel_args.h"
#include "binding/registry.h"
#include "kernels/batch_check.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/machine_probe.h"
#include "kernels/cpu/parallel_for.h"

namespace mnemo::binding {
namespace {

namespace kc = kernels::cpu;
using kernels::AttentionBatch;
using kernels::KvGeometry;
using Bound = std::function<void()>;

Bound BindEmbedding(const Args& a) {
  Napi::Env env = a.Env();
  auto out = F32(a, 0, "out");
  auto table = F32(a, 1, "table");
  auto ids = I32(a, 2, "ids");
  const size_t dim = Size(a, 3, "dim");
  Need(env, dim > 0 && out.size >= Mul(env, ids.size, dim), "embedding: out too small");
  const size_t vocab = table.size / dim;
  for (size_t r = 0; r < ids.size; ++r)
    Need(env, ids.data[r] >= 0 && static_cast<size_t>(ids.data[r]) < vocab, "embedding: id out of range");
  return [=] { kc::Embedding(out.data, table.data, ids.data, ids.size, dim, vocab); };
}

Bound BindRmsNorm(const Args& a) {
  Napi::Env env = a.Env();
  auto out = F32(a, 0, "out");
  auto x = F32(a, 1, "x");
  auto w = F32(a, 2, "weight");
  const size_t rows = Size(a, 3, "rows"), dim = Size(a, 4, "dim");
  const float eps = static_cast<float>(Num(a, 5, "eps"));
  const size_t n = Mul(env, rows, dim);
  Need(env, dim > 0 && out.size >= n && x.size >= n && w.size >= dim, "rmsnorm: buffer too small");
  return [=] { kc::RmsNorm(out.data, x.data, w.data, rows, dim, eps); };
}

Bound BindMatmul(const Args& a) {
  Napi::Env env = a.Env();
  auto out = F32(a, 0, "out");
  auto x = F32(a, 1, "x");
  auto w = F32(a, 2, "w");
  const size_t m = Size(a, 3, "m"), n = Size(a, 4, "n"), k = Size(a, 5, "k");
  Need(env, out.size >= Mul(env, m, n) && x.size >= Mul(env, m, k) && w.size >= Mul(env, n, k),
       "matmul: buffer too small");
  return [=] { kc::Matmul(out.data, x.data, w.data, m, n, k); };
}

// w: a weight packed by packWeight for the same n, k (exactly packedElems(n, k) floats).
struct PackedProduct {
  kc::GemmOut out;
  const float* x;
  std::size_t x_size, out_size, w_size, m, k;
};

PackedProduct ParseMatmulPacked(const Args& a) {
  Napi::Env env = a.Env();
  auto out = F32(a, 0, "out");
  auto x = F32(a, 1, "x");
  auto w = F32(a, 2, "w");
  const size_t m = Size(a, 3, "m"), n = Size(a, 4, "n"), k = Size(a, 5, "k");
  Need(env, out.size >= Mul(env, m, n) && x.size >= Mul(env, m, k), "matmulPacked: buffer too small");
  Need(env, w.size == kc::PackedWeightElems(n, k), "matmulPacked: w is not a weight packed for this n, k");
  return {{out.data, w.data, n}, x.data, x.size, out.size, w.size, m, k};
}

Bound BindMatmulPacked(const Args& a) {
  const PackedProduct p = ParseMatmulPacked(a);
  return [=] { kc::MatmulPacked(p.out.out, p.x, p.out.packed, p.m, p.out.n, p.k); };
}

bool Overlap(const float* a, std::size_t na, const float* b, std::size_t nb) { return a < b + nb && b < a + na; }

// Consecutive matmulPacked entries of a list that read the same x (q, k, v of a layer; gate
// and up) run as one GemmPackedMulti: x packed once, one fork-join. Only when it cannot change
// what the list computes: same x, m and k, and no output overlaps x or another output.
class ProductFuser {
 public:
  // Adds p to the pending group, or returns false when it cannot join it (flush first).
  bool TryAdd(const PackedProduct& p) {
    if (Overlap(p.out.out, p.out_size, p.x, p.x_size)) return group_.empty() ? (group_.push_back(p), true) : false;
    if (group_.empty()) return group_.push_back(p), true;
    const PackedProduct& h = group_.front();
    if (group_.size() == kc::kMaxGemmOuts || p.x != h.x || p.m != h.m || p.k != h.k) return false;
    for (const PackedProduct& q : group_)
      if (Overlap(p.out.out, p.out_size, q.out.out, q.out_size) || Overlap(q.out.out, q.out_size, p.x, p.x_size) ||
          Overlap(q.out.out, q.out_size, p.out.packed, p.w_size) || Overlap(p.out.out, p.out_size, q.out.packed, q.w_size))
        return false;
    group_.push_back(p);
    return true;
  }

  // The pending group as one bound call (none when empty).
  void Flush(std::vector<Bound>& ops) {
    if (group_.empty()) return;
    std::vector<kc::GemmOut> outs;
    for (const PackedProduct& p : group_) outs.push_back(p.out);
    const PackedProduct h = group_.front();
    group_.clear();
    if (outs.size() == 1) {
      ops.push_back([=] { kc::MatmulPacked(h.out.out, h.x, h.out.packed, h.m, h.out.n, h.k); });
      return;
    }
    ops.push_back([outs = std::move(outs), h] { kc::MatmulPackedMulti(outs.data(), outs.size(), h.x, h.m, h.k); });
  }

 private:
  std::vector<PackedProduct> group_;
};

Bound BindPackWeight(const Args& a) {
  Napi::Env env = a.Env();
  auto out = F32(a, 0, "out");
  auto w = F32(a, 1, "w");
  const size_t n = Size(a, 2, "n"), k = Size(a, 3, "k");
  Need(env, w.size >= Mul(env, n, k), "packWeight: w too small");
  Need(env, out.size == kc::PackedWeightElems(n, k), "packWeight: out must hold packedElems(n, k) floats");
  return [=] { kc::PackWeight(out.data, w.data, n, k); };
}

Bound BindRope(const Args& a) {
  Napi::Env env = a.Env();
  auto x = F32(a, 0, "x");
  auto pos = I32(a, 1, "positions");
  const size_t rows = Size(a, 2, "rows"), heads = Size(a, 3, "numHeads"), hd = Size(a, 4, "headDim");
  const float theta = static_cast<float>(Num(a, 5, "theta"));
  Need(env, hd > 0 && hd % 2 == 0, "rope: headDim must be even");
  Need(env, pos.size >= rows && x.size >= Mul(env, rows, Mul(env, heads, hd)), "rope: buffer too small");
  return [=] { kc::Rope(x.data, pos.data, rows, heads, hd, theta); };
}

template <void (*Op)(float*, const float*, const float*, std::size_t)>
Bound BindBinary(const Args& a) {
  Napi::Env env = a.Env();
  auto out = F32(a, 0, "out");
  auto x = F32(a, 1, "a");
  auto y = F32(a, 2, "b");
  const size_t n = Size(a, 3, "n");
  Need(env, out.size >= n && x.size >= n && y.size >= n, "elementwise: buffer too small");
  return [=] { Op(out.data, x.data, y.data, n); };
}

Bound BindAddBias(const Args& a) {
  Napi::Env env = a.Env();
  auto out = F32(a, 0, "out");
  auto x = F32(a, 1, "x");
  auto bias = F32(a, 2, "bias");
  const size_t rows = Size(a, 3, "rows"), n = Size(a, 4, "n");
  const size_t total = Mul(env, rows, n);
  Need(env, out.size >= total && x.size >= total && bias.size >= n, "addBias: buffer too small");
  return [=] { kc::AddBias(out.data, x.data, bias.data, rows, n); };
}

Bound BindWriteKv(const Args& a) {
  Napi::Env env = a.Env();
  auto cache = F32(a, 0, "cache");
  auto k = F32(a, 1, "k");
  auto v = F32(a, 2, "v");
  auto slots = I32(a, 3, "slots");
  const size_t layer = Size(a, 4, "layer");
  const KvGeometry g = Geom(a, 5);
  Need(env, layer < static_cast<size_t>(g.num_layers), "writeKv: layer out of range");
  const size_t rows_elems = Mul(env, slots.size, g.TokenElems());
  Need(env, k.size >= rows_elems && v.size >= rows_elems, "writeKv: k/v too small");
  const size_t num_blocks = cache.size / g.BlockElems();
  for (size_t r = 0; r < slots.size; ++r)
    Need(env, slots.data[r] < 0 || static_cast<size_t>(slots.data[r]) < num_blocks * g.block_size,
         "writeKv: slot out of range");
  return [=] { kc::WriteKv(cache.data, num_blocks, k.data, v.data, slots.data, slots.size, static_cast<int32_t>(layer), g); };
}

Bound BindPagedAttention(const Args& a) {
  Napi::Env env = a.Env();
  auto out = F32(a, 0, "out");
  auto q = F32(a, 1, "q");
  auto cache = F32(a, 2, "cache");
  const size_t layer = Size(a, 3, "layer"), heads = Size(a, 4, "numHeads");
  const KvGeometry g = Geom(a, 5);
  const AttentionBatch b = Batch(a, 9);
  const float scale = static_cast<float>(Num(a, 14, "scale"));
  Need(env, layer < static_cast<size_t>(g.num_layers), "pagedAttention: layer out of range");
  Need(env, heads > 0 && heads % g.num_kv_heads == 0, "pagedAttention: numHeads must be a multiple of numKvHeads");
  if (b.num_seqs == 0) return [] {};
  const size_t num_blocks = cache.size / g.BlockElems();
  const size_t rows = static_cast<size_t>(std::max(0, b.query_start[b.num_seqs]));
  if (const char* why = kernels::CheckAttentionBatch(b, g, num_blocks, rows)) Invalid(env, why);
  const size_t elems = Mul(env, rows, Mul(env, heads, g.head_dim));
  Need(env, out.size >= elems && q.size >= elems, "pagedAttention: q/out too small");
  return [=] { kc::PagedAttention(out.data, q.data, cache.data, num_blocks, static_cast<int32_t>(layer), heads, g, b, scale); };
}

Bound BindCopyBlocks(const Args& a) {
  Napi::Env env = a.Env();
  auto cache = F32(a, 0, "cache");
  auto src = I32(a, 1, "src");
  auto dst = I32(a, 2, "dst");
  const KvGeometry g = Geom(a, 3);
  Need(env, src.size == dst.size, "copyBlocks: src and dst differ in length");
  const size_t num_blocks = cache.size / g.BlockElems();
  for (size_t i = 0; i < src.size; ++i)
    Need(env, src.data[i] >= 0 && dst.data[i] >= 0 && static_cast<size_t>(src.data[i]) < num_blocks &&
                  static_cast<size_t>(dst.data[i]) < num_blocks,
         "copyBlocks: block id out of range");
  return [=] { kc::CopyBlocks(cache.data, num_blocks, src.data, dst.data, src.size, g); };
}

Bound BindArgmax(const Args& a) {
  Napi::Env env = a.Env();
  auto out = I32(a, 0, "out");
  auto x = F32(a, 1, "x");
  const size_t rows = Size(a, 2, "rows"), n = Size(a, 3, "n");
  Need(env, n > 0 && n <= INT32_MAX && out.size >= rows && x.size >= Mul(env, rows, n), "argmax: buffer too small");
  return [=] { kc::Argmax(out.data, x.data, rows, n); };
}

Bound BindSoftmax(const Args& a) {
  Napi::Env env = a.Env();
  auto out = F32(a, 0, "out");
  auto x = F32(a, 1, "x");
  const size_t rows = Size(a, 2, "rows"), n = Size(a, 3, "n");
  const float scale = static_cast<float>(Num(a, 4, "scale"));
  const size_t total = Mul(env, rows, n);
  Need(env, out.size >= total && x.size >= total, "softmax: buffer too small");
  return [=] { kc::Softmax(out.data, x.data, rows, n, scale); };
}

using BindFn = Bound (*)(const Args&);

// The op table: the names here are the keys of the TypeScript kernel contract
// (src/kernels/kernel.contract.ts). Both the direct functions and run() come from it.
const std::map<std::string, BindFn>& Ops() {
  static const std::map<std::string, BindFn> ops = {
      {"embedding", BindEmbedding},
      {"rmsnorm", BindRmsNorm},
      {"matmul", BindMatmul},
      {"matmulPacked", BindMatmulPacked},
      {"packWeight", BindPackWeight},
      {"rope", BindRope},
      {"siluMul", BindBinary<kc::SiluMul>},
      {"add", BindBinary<kc::Add>},
      {"addBias", BindAddBias},
      {"writeKv", BindWriteKv},
      {"pagedAttention", BindPagedAttention},
      {"copyBlocks", BindCopyBlocks},
      {"argmax", BindArgmax},
      {"softmax", BindSoftmax},
  };
  return ops;
}

// A direct call binds and runs at once. Its data is the op's BindFn in Ops() (static, never
// mutated, so the pointer outlives every function made from it).
Napi::Value Direct(const Napi::CallbackInfo& info) {
  (*static_cast<const BindFn*>(info.Data()))(Args(info))();
  return info.Env().Undefined();
}

// run(list: Array<[op: string, ...args]>): Promise<void>
Napi::Value Run(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Need(env, info.Length() >= 1 && info[0].IsArray(), "run(list: Array<[op, ...args]>)");
  Napi::Array list = info[0].As<Napi::Array>();
  std::vector<Bound> ops;
  std::vector<Napi::Object> keep;
  ProductFuser fuser;
  ops.reserve(list.Length());
  for (uint32_t i = 0; i < list.Length(); ++i) {
    Napi::Value entry = list.Get(i);
    Need(env, entry.IsArray() && entry.As<Napi::Array>().Length() >= 1, "run: every entry must be [op, ...args]");
    Napi::Array call = entry.As<Napi::Array>();
    Napi::Value name = call.Get(0u);
    Need(env, name.IsString(), "run: an entry's op must be a string");
    const auto it = Ops().find(name.As<Napi::String>().Utf8Value());
    if (it == Ops().end()) Invalid(env, "run: unknown op " + name.As<Napi::String>().Utf8Value());
    if (it->second == BindMatmulPacked) {
      const PackedProduct p = ParseMatmulPacked(Args(env, call, 1));
      if (!fuser.TryAdd(p)) {
        fuser.Flush(ops);
        fuser.TryAdd(p);
      }
    } else {
      fuser.Flush(ops);
      ops.push_back(it->second(Args(env, call, 1)));
    }
    for (uint32_t j = 1; j < call.Length(); ++j) {
      Napi::Value v = call.Get(j);
      if (v.IsTypedArray()) keep.push_back(v.As<Napi::Object>());
    }
  }
  fuser.Flush(ops);
  TaskQueue* queue = nullptr;
  ThrowIfError(env, State(env).Compute(&queue));
  return SettleOnQueue(env, *queue, "mnemo.kernels.run", std::move(keep), [ops = std::move(ops)] {
    for (const Bound& op : ops) op();
    return Status::Ok();
  });
}

Napi::Value PackedElems(const Napi::CallbackInfo& info) {
  const size_t n = Size(info, 0, "n"), k = Size(info, 1, "k");
  Mul(info.Env(), n + 64, k);
  return Napi::Number::New(info.Env(), static_cast<double>(kc::PackedWeightElems(n, k)));
}

Napi::Value Threads(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(kc::CpuThreadCount()));
}

Napi::Value Isa(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  const kc::GemmKernels& ks = kc::ActiveGemmKernels();
  o.Set("name", kc::CpuIsaName(ks.isa));
  o.Set("fma", ks.fma);
  o.Set("mr", static_cast<double>(ks.mr));
  o.Set("nr", static_cast<double>(ks.nr));
  return o;
}

// peakGflops(seconds): blocks the calling thread; for benchmarks.
Napi::Value PeakGflops(const Napi::CallbackInfo& info) {
  const double seconds = Num(info, 0, "seconds");
  Need(info.Env(), seconds > 0 && seconds <= 60, "seconds must be in (0, 60]");
  return Napi::Number::New(info.Env(), kc::MeasurePeakGflops(kc::KernelPool(), kc::ActiveGemmKernels(), seconds));
}

// memReadGbs(bytes, reps): blocks the calling thread; for benchmarks.
Napi::Value MemReadGbs(const Napi::CallbackInfo& info) {
  const size_t bytes = Size(info, 0, "bytes"), reps = Size(info, 1, "reps");
  Need(info.Env(), bytes <= (size_t{1} << 34) && reps >= 1 && reps <= 100, "bytes <= 16 GiB, reps in [1, 100]");
  return Napi::Number::New(info.Env(), kc::MeasureReadGbs(kc::KernelPool(), bytes, static_cast<int>(reps)));
}

Napi::Object CpuExports(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  for (const auto& [name, bind] : Ops())
    o.Set(name, Napi::Function::New(env, Direct, name.c_str(), const_cast<BindFn*>(&bind)));
  SetFunctions(env, o, {{"run", Run},
                        {"packedElems", PackedElems},
                        {"threads", Threads},
                        {"isa", Isa},
                        {"peakGflops", PeakGflops},
                        {"memReadGbs", MemReadGbs}});
  return o;
}

// Runs before kernels_cuda (registry order is by name) and creates exports.kernels.
Napi::Object InitCpuKernels(Napi::Env env, Napi::Object exports) {
  Napi::Object k = Napi::Object::New(env);
  k.Set("cpu", CpuExports(env));
  exports.Set("kernels", k);
  return exports;
}

}  // namespace
}  // namespace mnemo::binding

MNEMO_REGISTER_BINDING(kernels_cpu, mnemo::binding::InitCpuKernels);
