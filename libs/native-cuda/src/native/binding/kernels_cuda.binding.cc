// CUDA kernels of the reference engine: exports.kernels.cuda, the same ops as kernels.cpu on
// device tensors (Napi::External<DeviceBuffer>, type-tagged); null when the addon was built
// without nvcc. Ops are enqueued on the device in call order; download() synchronises.
// The TypeScript wrapper (src/kernels/cuda-backend.ts) validates every argument first; the
// checks here are assertions that fail with code 'invalid_argument'.
#include <napi.h>

#include <cstdint>
#include <functional>
#include <string>

#include "binding/addon_state.h"
#include "binding/kernel_args.h"
#include "binding/kernel_ops.h"
#include "binding/registry.h"
#include "kernels/kv_layout.h"
#ifdef MNEMO_WITH_CUDA
#include "kernels/cuda/cuda_kernels.h"
#endif

namespace mnemo::binding {
namespace {

// --- cuda --------------------------------------------------------------------------------

#ifdef MNEMO_WITH_CUDA
namespace kd = kernels::cuda;

// Marks externals created by alloc() so a foreign External is rejected instead of misread.
constexpr napi_type_tag kDeviceTensorTag = {0x6d6e656d6f6b6e6cULL, 0x6465766963657431ULL};

kd::DeviceBuffer& Buf(const Args& a, size_t i, const char* name) {
  if (i >= a.Length() || !a[i].IsExternal() || !a[i].As<Napi::External<kd::DeviceBuffer>>().CheckTypeTag(&kDeviceTensorTag))
    Invalid(a.Env(), std::string(name) + " must be a device tensor handle");
  kd::DeviceBuffer* b = a[i].As<Napi::External<kd::DeviceBuffer>>().Data();
  if (b->ptr == nullptr) ThrowStatus(a.Env(), Status::Closed(std::string(name) + " was freed"));
  return *b;
}

// Device tensors: the device buffers behind the call's handles.
struct DeviceTensors {
  static std::reference_wrapper<const kd::DeviceBuffer> Read(const Args& a, size_t i, const char* name) { return Buf(a, i, name); }
  static size_t Elems(const kd::DeviceBuffer& t) { return t.elements; }
};
using DeviceOps = KernelOps<DeviceTensors>;

// An op enqueues on the device and returns its status; the direct function throws it.
template <Status (*Op)(const Args&)>
Napi::Value Enqueue(const Napi::CallbackInfo& info) {
  ThrowIfError(info.Env(), Op(info));
  return info.Env().Undefined();
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

Status CudaEmbedding(const Args& a) {
  const auto e = DeviceOps::ReadEmbedding(a);
  return kd::Embedding(e.out, e.table, e.ids.data, e.ids.size, e.dim);
}

Status CudaRmsNorm(const Args& a) {
  const auto r = DeviceOps::ReadRmsNorm(a);
  return kd::RmsNorm(r.out, r.x, r.w, r.rows, r.dim, r.eps);
}

Status CudaMatmul(const Args& a) {
  const auto p = DeviceOps::ReadMatmul(a);
  return kd::Matmul(p.out, p.x, p.w, p.m, p.n, p.k);
}

Status CudaRope(const Args& a) {
  const auto r = DeviceOps::ReadRope(a);
  return kd::Rope(r.x, r.pos.data, r.rows, r.heads, r.head_dim, r.theta);
}

template <Status (*Op)(const kd::DeviceBuffer&, const kd::DeviceBuffer&, const kd::DeviceBuffer&, size_t)>
Status CudaBinary(const Args& a) {
  const auto b = DeviceOps::ReadBinary(a);
  return Op(b.out, b.x, b.y, b.n);
}

Status CudaAddBias(const Args& a) {
  const auto b = DeviceOps::ReadAddBias(a);
  return kd::AddBias(b.out, b.x, b.bias, b.rows, b.n);
}

Status CudaWriteKv(const Args& a) {
  const auto w = DeviceOps::ReadWriteKv(a);
  return kd::WriteKv(w.cache, w.k, w.v, w.slots.data, w.slots.size, static_cast<int32_t>(w.layer), w.g);
}

Status CudaPagedAttention(const Args& a) {
  const auto p = DeviceOps::ReadPagedAttention(a);
  if (p.b.num_seqs == 0) return Status::Ok();
  return kd::PagedAttention(p.out, p.q, p.cache, static_cast<int32_t>(p.layer), p.heads, p.g, p.b, p.scale);
}

Status CudaCopyBlocks(const Args& a) {
  const auto c = DeviceOps::ReadCopyBlocks(a);
  return kd::CopyBlocks(c.cache, c.src.data, c.dst.data, c.src.size, c.g);
}

Status CudaArgmax(const Args& a) {
  const auto m = DeviceOps::ReadArgmax(a);
  return kd::Argmax(m.out.data, m.x, m.rows, m.n);
}

Status CudaSoftmax(const Args& a) {
  const auto s = DeviceOps::ReadSoftmax(a);
  return kd::Softmax(s.out, s.x, s.rows, s.n, s.scale);
}

Napi::Value CudaExports(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  SetFunctions(env, o, {{"alloc", CudaAlloc},
                        {"free", CudaFree},
                        {"upload", CudaUpload},
                        {"download", CudaDownload},
                        {"embedding", Enqueue<CudaEmbedding>},
                        {"rmsnorm", Enqueue<CudaRmsNorm>},
                        {"matmul", Enqueue<CudaMatmul>},
                        {"rope", Enqueue<CudaRope>},
                        {"siluMul", Enqueue<CudaBinary<kd::SiluMul>>},
                        {"add", Enqueue<CudaBinary<kd::Add>>},
                        {"addBias", Enqueue<CudaAddBias>},
                        {"writeKv", Enqueue<CudaWriteKv>},
                        {"pagedAttention", Enqueue<CudaPagedAttention>},
                        {"copyBlocks", Enqueue<CudaCopyBlocks>},
                        {"argmax", Enqueue<CudaArgmax>},
                        {"softmax", Enqueue<CudaSoftmax>}});
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
