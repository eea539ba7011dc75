// CUDA kernels of the reference engine: exports.kernels.cuda, the same ops as kernels.cpu on
// device tensors (Napi::External<DeviceBuffer>, type-tagged); null when the addon was built
// without nvcc. Ops are enqueued on the device in call order; download() synchronises.
// The TypeScript wrapper (src/kernels/cuda-backend.ts) validates every argument first; the
// checks here are assertions that fail with code 'invalid_argument'.
#include <napi.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "binding/addon_state.h"
#include "binding/kernel_args.h"
#include "binding/registry.h"
#include "kernels/kv_layout.h"
#ifdef MNEMO_WITH_CUDA
#include "kernels/cuda/cuda_kernels.h"
#endif

namespace mnemo::binding {
namespace {

using kernels::AttentionBatch;
using kernels::KvGeometry;

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

// Every tensor in `bufs` holds at least `n` elements.
template <typename... Bufs>
void NeedElems(Napi::Env env, size_t n, const char* what, const Bufs&... bufs) {
  if (((bufs.elements < n) || ...)) Invalid(env, std::string(what) + ": tensor too small");
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
  NeedElems(env, Mul(env, ids.size, dim), "embedding", out);
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
  NeedElems(env, n, "rmsnorm", out, x);
  NeedElems(env, dim, "rmsnorm", w);
  ThrowIfError(env, kd::RmsNorm(out, x, w, rows, dim, static_cast<float>(Num(info, 5, "eps"))));
  return env.Undefined();
}

Napi::Value CudaMatmul(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& out = Buf(info, 0, "out");
  auto& x = Buf(info, 1, "x");
  auto& w = Buf(info, 2, "w");
  const size_t m = Size(info, 3, "m"), n = Size(info, 4, "n"), k = Size(info, 5, "k");
  NeedElems(env, Mul(env, m, n), "matmul", out);
  NeedElems(env, Mul(env, m, k), "matmul", x);
  NeedElems(env, Mul(env, n, k), "matmul", w);
  ThrowIfError(env, kd::Matmul(out, x, w, m, n, k));
  return env.Undefined();
}

Napi::Value CudaRope(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& x = Buf(info, 0, "x");
  auto pos = I32(info, 1, "positions");
  const size_t rows = Size(info, 2, "rows"), heads = Size(info, 3, "numHeads"), hd = Size(info, 4, "headDim");
  Need(env, hd > 0 && hd % 2 == 0 && pos.size >= rows, "rope: bad headDim or positions");
  NeedElems(env, Mul(env, rows, Mul(env, heads, hd)), "rope", x);
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
  NeedElems(env, n, "elementwise", out, a, b);
  ThrowIfError(env, Op(out, a, b, n));
  return env.Undefined();
}

Napi::Value CudaAddBias(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& out = Buf(info, 0, "out");
  auto& x = Buf(info, 1, "x");
  auto& bias = Buf(info, 2, "bias");
  const size_t rows = Size(info, 3, "rows"), n = Size(info, 4, "n");
  NeedElems(env, Mul(env, rows, n), "addBias", out, x);
  NeedElems(env, n, "addBias", bias);
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
  NeedElems(env, Mul(env, slots.size, g.TokenElems()), "writeKv", k, v);
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
  NeedElems(env, Mul(env, rows, Mul(env, heads, g.head_dim)), "pagedAttention", out, q);
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
  NeedElems(env, Mul(env, rows, n), "argmax", x);
  ThrowIfError(env, kd::Argmax(out.data, x, rows, n));
  return env.Undefined();
}

Napi::Value CudaSoftmax(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto& out = Buf(info, 0, "out");
  auto& x = Buf(info, 1, "x");
  const size_t rows = Size(info, 2, "rows"), n = Size(info, 3, "n");
  NeedElems(env, Mul(env, rows, n), "softmax", out, x);
  ThrowIfError(env, kd::Softmax(out, x, rows, n, static_cast<float>(Num(info, 4, "scale"))));
  return env.Undefined();
}

Napi::Value CudaExports(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  SetFunctions(env, o, {{"alloc", CudaAlloc},
                        {"free", CudaFree},
                        {"upload", CudaUpload},
                        {"download", CudaDownload},
                        {"embedding", CudaEmbedding},
                        {"rmsnorm", CudaRmsNorm},
                        {"matmul", CudaMatmul},
                        {"rope", CudaRope},
                        {"siluMul", CudaBinary<kd::SiluMul>},
                        {"add", CudaBinary<kd::Add>},
                        {"addBias", CudaAddBias},
                        {"writeKv", CudaWriteKv},
                        {"pagedAttention", CudaPagedAttention},
                        {"copyBlocks", CudaCopyBlocks},
                        {"argmax", CudaArgmax},
                        {"softmax", CudaSoftmax}});
  return o;
}
#else
// Built without nvcc: kernels.cuda is null and the TS side reports why.
Napi::Value CudaExports(Napi::Env env) { return env.Null(); }
#endif

// Runs after kernels_cpu (registry order is by name), which created exports.kernels.
Napi::Object InitCudaKernels(Napi::Env env, Napi::Object exports) {
  exports.Get("kernels").As<Napi::Object>().Set("cuda", CudaExports(env));
  return exports;
}

}  // namespace
}  // namespace mnemo::binding

MNEMO_REGISTER_BINDING(kernels_cuda, mnemo::binding::InitCudaKernels);
