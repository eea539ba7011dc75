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
#include "binding/kernel_ops.h"
#include "binding/registry.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/machine_probe.h"
#include "kernels/cpu/parallel_for.h"

namespace mnemo::binding {
namespace {

namespace kc = kernels::cpu;
using Bound = std::function<void()>;

// Host tensors: the Float32Arrays of the call.
struct HostTensors {
  static Span<float> Read(const Args& a, size_t i, const char* name) { return F32(a, i, name); }
  static size_t Elems(const Span<float>& t) { return t.size; }
};
using HostOps = KernelOps<HostTensors>;

Bound BindEmbedding(const Args& a) {
  const auto e = HostOps::ReadEmbedding(a);
  return [=] { kc::Embedding(e.out.data, e.table.data, e.ids.data, e.ids.size, e.dim, e.vocab); };
}

Bound BindRmsNorm(const Args& a) {
  const auto r = HostOps::ReadRmsNorm(a);
  return [=] { kc::RmsNorm(r.out.data, r.x.data, r.w.data, r.rows, r.dim, r.eps); };
}

Bound BindMatmul(const Args& a) {
  const auto p = HostOps::ReadMatmul(a);
  return [=] { kc::Matmul(p.out.data, p.x.data, p.w.data, p.m, p.n, p.k); };
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
  const auto r = HostOps::ReadRope(a);
  return [=] { kc::Rope(r.x.data, r.pos.data, r.rows, r.heads, r.head_dim, r.theta); };
}

template <void (*Op)(float*, const float*, const float*, std::size_t)>
Bound BindBinary(const Args& a) {
  const auto b = HostOps::ReadBinary(a);
  return [=] { Op(b.out.data, b.x.data, b.y.data, b.n); };
}

Bound BindAddBias(const Args& a) {
  const auto b = HostOps::ReadAddBias(a);
  return [=] { kc::AddBias(b.out.data, b.x.data, b.bias.data, b.rows, b.n); };
}

Bound BindWriteKv(const Args& a) {
  const auto w = HostOps::ReadWriteKv(a);
  return [=] {
    kc::WriteKv(w.cache.data, w.num_blocks, w.k.data, w.v.data, w.slots.data, w.slots.size, static_cast<int32_t>(w.layer), w.g);
  };
}

Bound BindPagedAttention(const Args& a) {
  const auto p = HostOps::ReadPagedAttention(a);
  if (p.b.num_seqs == 0) return [] {};
  return [=] {
    kc::PagedAttention(p.out.data, p.q.data, p.cache.data, p.num_blocks, static_cast<int32_t>(p.layer), p.heads, p.g, p.b, p.scale);
  };
}

Bound BindCopyBlocks(const Args& a) {
  const auto c = HostOps::ReadCopyBlocks(a);
  return [=] { kc::CopyBlocks(c.cache.data, c.num_blocks, c.src.data, c.dst.data, c.src.size, c.g); };
}

Bound BindArgmax(const Args& a) {
  const auto m = HostOps::ReadArgmax(a);
  return [=] { kc::Argmax(m.out.data, m.x.data, m.rows, m.n); };
}

Bound BindSoftmax(const Args& a) {
  const auto s = HostOps::ReadSoftmax(a);
  return [=] { kc::Softmax(s.out.data, s.x.data, s.rows, s.n, s.scale); };
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
