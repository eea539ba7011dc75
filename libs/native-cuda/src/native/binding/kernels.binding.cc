// Transformer kernels of the reference engine: exports.kernels = { cpu, cuda, cpuThreads }.
//
// cpu.*  synchronous calls on Float32Array/Int32Array. No copies: the kernels work on the
//        typed arrays' memory directly, on the kernels' own parallel-for pool, and return
//        before JS runs again (so the arrays cannot be detached or collected meanwhile).
// cuda.* the same ops on device tensors (Napi::External<DeviceBuffer>, type-tagged), present
//        only when the addon was compiled with CUDA; ops are enqueued on the device in call
//        order, download() synchronises.
// The TypeScript wrappers (src/kernels/*-backend.ts) validate every argument and throw
// RangeError/TypeError; the checks here are assertions that fail with code
// 'invalid_argument' instead of corrupting memory.
#include <napi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "binding/addon_state.h"
#include "binding/registry.h"
#include "kernels/batch_check.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/kv_layout.h"
#ifdef MNEMO_WITH_CUDA
#include "kernels/cuda/cuda_kernels.h"
#endif

namespace mnemo::binding {
namespace {

using kernels::AttentionBatch;
using kernels::KvGeometry;

[[noreturn]] void Invalid(Napi::Env env, const std::string& what) { ThrowStatus(env, Status::InvalidArgument(what)); }

void Need(Napi::Env env, bool ok, const char* what) {
  if (!ok) Invalid(env, what);
}

template <typename T>
struct Span {
  T* data;
  size_t size;
};

template <typename T, napi_typedarray_type kType>
Span<T> TypedArg(const Napi::CallbackInfo& info, size_t i, const char* name) {
  if (i >= info.Length() || !info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != kType)
    Invalid(info.Env(), std::string(name) + (kType == napi_float32_array ? " must be a Float32Array" : " must be an Int32Array"));
  auto arr = info[i].As<Napi::TypedArrayOf<T>>();
  return {arr.Data(), arr.ElementLength()};
}

Span<float> F32(const Napi::CallbackInfo& info, size_t i, const char* name) {
  return TypedArg<float, napi_float32_array>(info, i, name);
}
Span<int32_t> I32(const Napi::CallbackInfo& info, size_t i, const char* name) {
  return TypedArg<int32_t, napi_int32_array>(info, i, name);
}

double Num(const Napi::CallbackInfo& info, size_t i, const char* name) {
  if (i >= info.Length() || !info[i].IsNumber()) Invalid(info.Env(), std::string(name) + " must be a number");
  return info[i].As<Napi::Number>().DoubleValue();
}

// A non-negative integer below 2^40 (no element count we handle is larger; keeps products
// of two sizes far from size_t overflow once checked with Mul()).
size_t Size(const Napi::CallbackInfo& info, size_t i, const char* name) {
  const double d = Num(info, i, name);
  if (!(d >= 0 && d < 1099511627776.0 && std::floor(d) == d))
    Invalid(info.Env(), std::string(name) + " must be a non-negative integer");
  return static_cast<size_t>(d);
}

size_t Mul(Napi::Env env, size_t a, size_t b) {
  size_t r;
  if (__builtin_mul_overflow(a, b, &r)) Invalid(env, "size overflow");
  return r;
}

// geometry as four numbers starting at argument i: numLayers, numKvHeads, headDim, blockSize.
KvGeometry Geom(const Napi::CallbackInfo& info, size_t i) {
  KvGeometry g{};
  g.num_layers = static_cast<int32_t>(Size(info, i, "numLayers"));
  g.num_kv_heads = static_cast<int32_t>(Size(info, i + 1, "numKvHeads"));
  g.head_dim = static_cast<int32_t>(Size(info, i + 2, "headDim"));
  g.block_size = static_cast<int32_t>(Size(info, i + 3, "blockSize"));
  Need(info.Env(), g.num_layers > 0 && g.num_kv_heads > 0 && g.head_dim > 0 && g.block_size > 0,
       "geometry values must be positive");
  return g;
}

// batch as five arguments starting at i: numSeqs, queryStart, contextLen, blockTables, maxBlocksPerSeq.
AttentionBatch Batch(const Napi::CallbackInfo& info, size_t i) {
  Napi::Env env = info.Env();
  const size_t num_seqs = Size(info, i, "numSeqs");
  const auto qs = I32(info, i + 1, "queryStart");
  const auto ctx = I32(info, i + 2, "contextLen");
  const auto tables = I32(info, i + 3, "blockTables");
  const size_t max_blocks = Size(info, i + 4, "maxBlocksPerSeq");
  Need(env, num_seqs < INT32_MAX && max_blocks < INT32_MAX, "batch too large");
  Need(env, qs.size >= num_seqs + 1 && ctx.size >= num_seqs && tables.size >= Mul(env, num_seqs, max_blocks),
       "batch arrays shorter than numSeqs implies");
  return {static_cast<int32_t>(num_seqs), qs.data, ctx.data, tables.data, static_cast<int32_t>(max_blocks)};
}

// --- cpu ---------------------------------------------------------------------------------

namespace kc = kernels::cpu;

Napi::Value CpuEmbedding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto out = F32(info, 0, "out");
  auto table = F32(info, 1, "table");
  auto ids = I32(info, 2, "ids");
  const size_t dim = Size(info, 3, "dim");
  Need(env, dim > 0 && out.size >= Mul(env, ids.size, dim), "embedding: out too small");
  const size_t vocab = table.size / dim;
  for (size_t r = 0; r < ids.size; ++r)
    Need(env, ids.data[r] >= 0 && static_cast<size_t>(ids.data[r]) < vocab, "embedding: id out of range");
  kc::Embedding(out.data, table.data, ids.data, ids.size, dim, vocab);
  return env.Undefined();
}

Napi::Value CpuRmsNorm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto out = F32(info, 0, "out");
  auto x = F32(info, 1, "x");
  auto w = F32(info, 2, "weight");
  const size_t rows = Size(info, 3, "rows"), dim = Size(info, 4, "dim");
  const float eps = static_cast<float>(Num(info, 5, "eps"));
  const size_t n = Mul(env, rows, dim);
  Need(env, dim > 0 && out.size >= n && x.size >= n && w.size >= dim, "rmsnorm: buffer too small");
  kc::RmsNorm(out.data, x.data, w.data, rows, dim, eps);
  return env.Undefined();
}

Napi::Value CpuMatmul(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto out = F32(info, 0, "out");
  auto x = F32(info, 1, "x");
  auto w = F32(info, 2, "w");
  const size_t m = Size(info, 3, "m"), n = Size(info, 4, "n"), k = Size(info, 5, "k");
  Need(env, out.size >= Mul(env, m, n) && x.size >= Mul(env, m, k) && w.size >= Mul(env, n, k),
       "matmul: buffer too small");
  kc::Matmul(out.data, x.data, w.data, m, n, k);
  return env.Undefined();
}

Napi::Value CpuRope(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto x = F32(info, 0, "x");
  auto pos = I32(info, 1, "positions");
  const size_t rows = Size(info, 2, "rows"), heads = Size(info, 3, "numHeads"), hd = Size(info, 4, "headDim");
  const float theta = static_cast<float>(Num(info, 5, "theta"));
  Need(env, hd > 0 && hd % 2 == 0, "rope: headDim must be even");
  Need(env, pos.size >= rows && x.size >= Mul(env, rows, Mul(env, heads, hd)), "rope: buffer too small");
  kc::Rope(x.data, pos.data, rows, heads, hd, theta);
  return env.Undefined();
}

Napi::Value CpuSiluMul(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto out = F32(info, 0, "out");
  auto gate = F32(info, 1, "gate");
  auto up = F32(info, 2, "up");
  const size_t n = Size(info, 3, "n");
  Need(env, out.size >= n && gate.size >= n && up.size >= n, "siluMul: buffer too small");
  kc::SiluMul(out.data, gate.data, up.data, n);
  return env.Undefined();
}

Napi::Value CpuAdd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto out = F32(info, 0, "out");
  auto a = F32(info, 1, "a");
  auto b = F32(info, 2, "b");
  const size_t n = Size(info, 3, "n");
  Need(env, out.size >= n && a.size >= n && b.size >= n, "add: buffer too small");
  kc::Add(out.data, a.data, b.data, n);
  return env.Undefined();
}

Napi::Value CpuAddBias(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto out = F32(info, 0, "out");
  auto x = F32(info, 1, "x");
  auto bias = F32(info, 2, "bias");
  const size_t rows = Size(info, 3, "rows"), n = Size(info, 4, "n");
  const size_t total = Mul(env, rows, n);
  Need(env, out.size >= total && x.size >= total && bias.size >= n, "addBias: buffer too small");
  kc::AddBias(out.data, x.data, bias.data, rows, n);
  return env.Undefined();
}

Napi::Value CpuWriteKv(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto cache = F32(info, 0, "cache");
  auto k = F32(info, 1, "k");
  auto v = F32(info, 2, "v");
  auto slots = I32(info, 3, "slots");
  const size_t layer = Size(info, 4, "layer");
  const KvGeometry g = Geom(info, 5);
  Need(env, layer < static_cast<size_t>(g.num_layers), "writeKv: layer out of range");
  const size_t rows_elems = Mul(env, slots.size, g.TokenElems());
  Need(env, k.size >= rows_elems && v.size >= rows_elems, "writeKv: k/v too small");
  const size_t num_blocks = cache.size / g.BlockElems();
  for (size_t r = 0; r < slots.size; ++r)
    Need(env, slots.data[r] < 0 || static_cast<size_t>(slots.data[r]) < num_blocks * g.block_size,
         "writeKv: slot out of range");
  kc::WriteKv(cache.data, num_blocks, k.data, v.data, slots.data, slots.size, static_cast<int32_t>(layer), g);
  return env.Undefined();
}

Napi::Value CpuPagedAttention(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto out = F32(info, 0, "out");
  auto q = F32(info, 1, "q");
  auto cache = F32(info, 2, "cache");
  const size_t layer = Size(info, 3, "layer"), heads = Size(info, 4, "numHeads");
  const KvGeometry g = Geom(info, 5);
  const AttentionBatch b = Batch(info, 9);
  const float scale = static_cast<float>(Num(info, 14, "scale"));
  Need(env, layer < static_cast<size_t>(g.num_layers), "pagedAttention: layer out of range");
  Need(env, heads > 0 && heads % g.num_kv_heads == 0, "pagedAttention: numHeads must be a multiple of numKvHeads");
  const size_t num_blocks = cache.size / g.BlockElems();
  const size_t rows = b.num_seqs > 0 ? static_cast<size_t>(std::max(0, b.query_start[b.num_seqs])) : 0;
  if (b.num_seqs == 0) return env.Undefined();
  if (const char* why = kernels::CheckAttentionBatch(b, g, num_blocks, rows)) Invalid(env, why);
  const size_t elems = Mul(env, rows, Mul(env, heads, g.head_dim));
  Need(env, out.size >= elems && q.size >= elems, "pagedAttention: q/out too small");
  kc::PagedAttention(out.data, q.data, cache.data, num_blocks, static_cast<int32_t>(layer), heads, g, b, scale);
  return env.Undefined();
}

Napi::Value CpuCopyBlocks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto cache = F32(info, 0, "cache");
  auto src = I32(info, 1, "src");
  auto dst = I32(info, 2, "dst");
  const KvGeometry g = Geom(info, 3);
  Need(env, src.size == dst.size, "copyBlocks: src and dst differ in length");
  const size_t num_blocks = cache.size / g.BlockElems();
  for (size_t i = 0; i < src.size; ++i)
    Need(env, src.data[i] >= 0 && dst.data[i] >= 0 && static_cast<size_t>(src.data[i]) < num_blocks &&
                  static_cast<size_t>(dst.data[i]) < num_blocks,
         "copyBlocks: block id out of range");
  kc::CopyBlocks(cache.data, num_blocks, src.data, dst.data, src.size, g);
  return env.Undefined();
}

Napi::Value CpuArgmax(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto out = I32(info, 0, "out");
  auto x = F32(info, 1, "x");
  const size_t rows = Size(info, 2, "rows"), n = Size(info, 3, "n");
  Need(env, n > 0 && n <= INT32_MAX && out.size >= rows && x.size >= Mul(env, rows, n), "argmax: buffer too small");
  kc::Argmax(out.data, x.data, rows, n);
  return env.Undefined();
}

Napi::Value CpuSoftmax(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto out = F32(info, 0, "out");
  auto x = F32(info, 1, "x");
  const size_t rows = Size(info, 2, "rows"), n = Size(info, 3, "n");
  const float scale = static_cast<float>(Num(info, 4, "scale"));
  const size_t total = Mul(env, rows, n);
  Need(env, out.size >= total && x.size >= total, "softmax: buffer too small");
  kc::Softmax(out.data, x.data, rows, n, scale);
  return env.Undefined();
}

Napi::Value CpuThreads(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(kc::CpuThreadCount()));
}

Napi::Object CpuExports(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("embedding", Napi::Function::New(env, CpuEmbedding, "embedding"));
  o.Set("rmsnorm", Napi::Function::New(env, CpuRmsNorm, "rmsnorm"));
  o.Set("matmul", Napi::Function::New(env, CpuMatmul, "matmul"));
  o.Set("rope", Napi::Function::New(env, CpuRope, "rope"));
  o.Set("siluMul", Napi::Function::New(env, CpuSiluMul, "siluMul"));
  o.Set("add", Napi::Function::New(env, CpuAdd, "add"));
  o.Set("addBias", Napi::Function::New(env, CpuAddBias, "addBias"));
  o.Set("writeKv", Napi::Function::New(env, CpuWriteKv, "writeKv"));
  o.Set("pagedAttention", Napi::Function::New(env, CpuPagedAttention, "pagedAttention"));
  o.Set("copyBlocks", Napi::Function::New(env, CpuCopyBlocks, "copyBlocks"));
  o.Set("argmax", Napi::Function::New(env, CpuArgmax, "argmax"));
  o.Set("softmax", Napi::Function::New(env, CpuSoftmax, "softmax"));
  o.Set("threads", Napi::Function::New(env, CpuThreads, "threads"));
  return o;
}


// --- cuda --------------------------------------------------------------------------------

#ifdef MNEMO_WITH_CUDA
namespace kd = kernels::cuda;

// Marks externals created by alloc() so a foreign External is rejected instead of misread.
constexpr napi_type_tag kDeviceTensorTag = {0x6d6e656d6f6b6e6cULL, 0x6465766963657431ULL};

kd::DeviceBuffer& Buf(const Napi::CallbackInfo& info, size_t i, const char* name) {
  if (i >= info.Length() || !info[i].IsExternal() || !info[i].As<Napi::External<kd::DeviceBuffer>>().CheckTypeTag(&kDeviceTensorTag))
    Invalid(info.Env(), std::string(name) + " must be a device tensor handle");
  kd::DeviceBuffer* b = info[i].As<Napi::External<kd::DeviceBuffer>>().Data();
  if (b->ptr == nullptr) ThrowStatus(info.Env(), Status::Closed(std::string(name) + " was freed"));
  return *b;
}

void NeedElems(Napi::Env env, const kd::DeviceBuffer& b, size_t n, const char* what) {
  if (b.elements < n) Invalid(env, std::string(what) + ": tensor too small");
}

// alloc(elements, dtype: 'f16' | 'bf16'): External. Ownership: the External owns the
// DeviceBuffer; free() releases the device memory early, the finalizer releases the rest.
Napi::Value CudaAlloc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const size_t elements = Size(info, 0, "elements");
  Need(env, info.Length() > 1 && info[1].IsString(), "dtype must be 'f16' or 'bf16'");
  const std::string dtype = info[1].As<Napi::String>().Utf8Value();
  Need(env, dtype == "f16" || dtype == "bf16", "dtype must be 'f16' or 'bf16'");
  auto* buf = new kd::DeviceBuffer();
  const Status st = kd::Alloc(buf, elements, dtype == "f16" ? kd::DType::kF16 : kd::DType::kBF16);
  if (!st.ok()) {
    delete buf;
    ThrowStatus(env, st);
  }
  auto ext = Napi::External<kd::DeviceBuffer>::New(env, buf, [](Napi::Env, kd::DeviceBuffer* b) {
    kd::Free(b);
    delete b;
  });
  ext.TypeTag(&kDeviceTensorTag);
  return ext;
}

Napi::Value CudaFree(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Need(env, info.Length() > 0 && info[0].IsExternal() &&
                info[0].As<Napi::External<kd::DeviceBuffer>>().CheckTypeTag(&kDeviceTensorTag),
       "free: not a device tensor handle");
  kd::Free(info[0].As<Napi::External<kd::DeviceBuffer>>().Data());
  return env.Undefined();
}

Napi::Value CudaUpload(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& dst = Buf(info, 0, "dst");
  auto src = F32(info, 1, "src");
  ThrowIfError(env, kd::Upload(dst, src.data, src.size));
  return env.Undefined();
}

Napi::Value CudaDownload(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& src = Buf(info, 0, "src");
  const size_t n = Size(info, 1, "elements");
  auto out = Napi::Float32Array::New(env, n);
  ThrowIfError(env, kd::Download(out.Data(), src, n));
  return out;
}

Napi::Value CudaEmbedding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& out = Buf(info, 0, "out");
  auto& table = Buf(info, 1, "table");
  auto ids = I32(info, 2, "ids");
  const size_t dim = Size(info, 3, "dim");
  Need(env, dim > 0, "embedding: dim must be positive");
  NeedElems(env, out, Mul(env, ids.size, dim), "embedding");
  const size_t vocab = table.elements / dim;
  for (size_t r = 0; r < ids.size; ++r)
    Need(env, ids.data[r] >= 0 && static_cast<size_t>(ids.data[r]) < vocab, "embedding: id out of range");
  ThrowIfError(env, kd::Embedding(out, table, ids.data, ids.size, dim));
  return env.Undefined();
}

Napi::Value CudaRmsNorm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& out = Buf(info, 0, "out");
  auto& x = Buf(info, 1, "x");
  auto& w = Buf(info, 2, "weight");
  const size_t rows = Size(info, 3, "rows"), dim = Size(info, 4, "dim");
  const size_t n = Mul(env, rows, dim);
  NeedElems(env, out, n, "rmsnorm");
  NeedElems(env, x, n, "rmsnorm");
  NeedElems(env, w, dim, "rmsnorm");
  ThrowIfError(env, kd::RmsNorm(out, x, w, rows, dim, static_cast<float>(Num(info, 5, "eps"))));
  return env.Undefined();
}

Napi::Value CudaMatmul(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& out = Buf(info, 0, "out");
  auto& x = Buf(info, 1, "x");
  auto& w = Buf(info, 2, "w");
  const size_t m = Size(info, 3, "m"), n = Size(info, 4, "n"), k = Size(info, 5, "k");
  NeedElems(env, out, Mul(env, m, n), "matmul");
  NeedElems(env, x, Mul(env, m, k), "matmul");
  NeedElems(env, w, Mul(env, n, k), "matmul");
  ThrowIfError(env, kd::Matmul(out, x, w, m, n, k));
  return env.Undefined();
}

Napi::Value CudaRope(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& x = Buf(info, 0, "x");
  auto pos = I32(info, 1, "positions");
  const size_t rows = Size(info, 2, "rows"), heads = Size(info, 3, "numHeads"), hd = Size(info, 4, "headDim");
  Need(env, hd > 0 && hd % 2 == 0 && pos.size >= rows, "rope: bad headDim or positions");
  NeedElems(env, x, Mul(env, rows, Mul(env, heads, hd)), "rope");
  ThrowIfError(env, kd::Rope(x, pos.data, rows, heads, hd, static_cast<float>(Num(info, 5, "theta"))));
  return env.Undefined();
}

template <Status (*Op)(const kd::DeviceBuffer&, const kd::DeviceBuffer&, const kd::DeviceBuffer&, size_t)>
Napi::Value CudaBinary(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& out = Buf(info, 0, "out");
  auto& a = Buf(info, 1, "a");
  auto& b = Buf(info, 2, "b");
  const size_t n = Size(info, 3, "n");
  NeedElems(env, out, n, "elementwise");
  NeedElems(env, a, n, "elementwise");
  NeedElems(env, b, n, "elementwise");
  ThrowIfError(env, Op(out, a, b, n));
  return env.Undefined();
}

Napi::Value CudaAddBias(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& out = Buf(info, 0, "out");
  auto& x = Buf(info, 1, "x");
  auto& bias = Buf(info, 2, "bias");
  const size_t rows = Size(info, 3, "rows"), n = Size(info, 4, "n");
  NeedElems(env, out, Mul(env, rows, n), "addBias");
  NeedElems(env, x, Mul(env, rows, n), "addBias");
  NeedElems(env, bias, n, "addBias");
  ThrowIfError(env, kd::AddBias(out, x, bias, rows, n));
  return env.Undefined();
}

Napi::Value CudaWriteKv(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& cache = Buf(info, 0, "cache");
  auto& k = Buf(info, 1, "k");
  auto& v = Buf(info, 2, "v");
  auto slots = I32(info, 3, "slots");
  const size_t layer = Size(info, 4, "layer");
  const KvGeometry g = Geom(info, 5);
  NeedElems(env, k, Mul(env, slots.size, g.TokenElems()), "writeKv");
  NeedElems(env, v, Mul(env, slots.size, g.TokenElems()), "writeKv");
  Need(env, layer < static_cast<size_t>(g.num_layers), "writeKv: layer out of range");
  ThrowIfError(env, kd::WriteKv(cache, k, v, slots.data, slots.size, static_cast<int32_t>(layer), g));
  return env.Undefined();
}

Napi::Value CudaPagedAttention(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& out = Buf(info, 0, "out");
  auto& q = Buf(info, 1, "q");
  auto& cache = Buf(info, 2, "cache");
  const size_t layer = Size(info, 3, "layer"), heads = Size(info, 4, "numHeads");
  const KvGeometry g = Geom(info, 5);
  const AttentionBatch b = Batch(info, 9);
  if (b.num_seqs == 0) return env.Undefined();
  const size_t rows = static_cast<size_t>(std::max(0, b.query_start[b.num_seqs]));
  NeedElems(env, out, Mul(env, rows, Mul(env, heads, g.head_dim)), "pagedAttention");
  NeedElems(env, q, Mul(env, rows, Mul(env, heads, g.head_dim)), "pagedAttention");
  ThrowIfError(env, kd::PagedAttention(out, q, cache, static_cast<int32_t>(layer), heads, g, b,
                                       static_cast<float>(Num(info, 14, "scale"))));
  return env.Undefined();
}

Napi::Value CudaCopyBlocks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& cache = Buf(info, 0, "cache");
  auto src = I32(info, 1, "src");
  auto dst = I32(info, 2, "dst");
  const KvGeometry g = Geom(info, 3);
  Need(env, src.size == dst.size, "copyBlocks: src and dst differ in length");
  ThrowIfError(env, kd::CopyBlocks(cache, src.data, dst.data, src.size, g));
  return env.Undefined();
}

Napi::Value CudaArgmax(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto out = I32(info, 0, "out");
  auto& x = Buf(info, 1, "x");
  const size_t rows = Size(info, 2, "rows"), n = Size(info, 3, "n");
  Need(env, n > 0 && n <= INT32_MAX && out.size >= rows, "argmax: bad sizes");
  NeedElems(env, x, Mul(env, rows, n), "argmax");
  ThrowIfError(env, kd::Argmax(out.data, x, rows, n));
  return env.Undefined();
}

Napi::Value CudaSoftmax(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& out = Buf(info, 0, "out");
  auto& x = Buf(info, 1, "x");
  const size_t rows = Size(info, 2, "rows"), n = Size(info, 3, "n");
  NeedElems(env, out, Mul(env, rows, n), "softmax");
  NeedElems(env, x, Mul(env, rows, n), "softmax");
  ThrowIfError(env, kd::Softmax(out, x, rows, n, static_cast<float>(Num(info, 4, "scale"))));
  return env.Undefined();
}

Napi::Value CudaExports(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("alloc", Napi::Function::New(env, CudaAlloc, "alloc"));
  o.Set("free", Napi::Function::New(env, CudaFree, "free"));
  o.Set("upload", Napi::Function::New(env, CudaUpload, "upload"));
  o.Set("download", Napi::Function::New(env, CudaDownload, "download"));
  o.Set("embedding", Napi::Function::New(env, CudaEmbedding, "embedding"));
  o.Set("rmsnorm", Napi::Function::New(env, CudaRmsNorm, "rmsnorm"));
  o.Set("matmul", Napi::Function::New(env, CudaMatmul, "matmul"));
  o.Set("rope", Napi::Function::New(env, CudaRope, "rope"));
  o.Set("siluMul", Napi::Function::New(env, CudaBinary<kd::SiluMul>, "siluMul"));
  o.Set("add", Napi::Function::New(env, CudaBinary<kd::Add>, "add"));
  o.Set("addBias", Napi::Function::New(env, CudaAddBias, "addBias"));
  o.Set("writeKv", Napi::Function::New(env, CudaWriteKv, "writeKv"));
  o.Set("pagedAttention", Napi::Function::New(env, CudaPagedAttention, "pagedAttention"));
  o.Set("copyBlocks", Napi::Function::New(env, CudaCopyBlocks, "copyBlocks"));
  o.Set("argmax", Napi::Function::New(env, CudaArgmax, "argmax"));
  o.Set("softmax", Napi::Function::New(env, CudaSoftmax, "softmax"));
  return o;
}
#else
// Built without nvcc: kernels.cuda is null and the TS side reports why.
Napi::Value CudaExports(Napi::Env env) { return env.Null(); }
#endif

Napi::Object InitKernels(Napi::Env env, Napi::Object exports) {
  Napi::Object k = Napi::Object::New(env);
  k.Set("cpu", CpuExports(env));
  k.Set("cuda", CudaExports(env));
  exports.Set("kernels", k);
  return exports;
}

}  // namespace
}  // namespace mnemo::binding

MNEMO_REGISTER_BINDING(kernels, mnemo::binding::InitKernels);
