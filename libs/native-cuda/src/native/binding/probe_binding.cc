// Physical-limit probes and I/O facts:
//   probeMemcpy(bytes, iterations, pieceBytes = 0, dstRingPieces = 0): Promise<{ bytes, threads, memcpySeconds, kernelSeconds,
//     crcCopySeconds, crcStreamsCopySeconds }>
//   probeDirectIo(path, bytes, blockBytes, queueDepth, write, forcePread):
//     Promise<{ bytes, seconds, backend, backendReason, queueDepth }>
//   dropPageCache(path): Promise<void>
//   ioInfo(): { uringCompiled, uringAvailable, uringReason, crc32c }
//   crc32c(data: ArrayBuffer | ArrayBufferView, seed: number): number   (synchronous)
//   crc32cImplementations(): string[]   selectCrc32c(name: string): void   (A/B measurements)
#include <napi.h>

#include <mutex>
#include <string>

#include "binding/addon_state.h"
#include "binding/async_call.h"
#include "binding/int_arg.h"
#include "binding/registry.h"
#include "core/byte_copy.h"
#include "core/crc32c.h"
#include "core/pool/io_probes.h"

namespace mnemo::binding {
namespace {

Napi::Value ProbeMemcpyJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !IsInteger(info[0], 1, 1ull << 40) || !IsInteger(info[1], 1, 1000)) {
    ThrowStatus(env, Status::InvalidArgument("probeMemcpy(bytes, iterations)"));
  }
  const auto bytes = static_cast<uint64_t>(info[0].As<Napi::Number>().DoubleValue());
  const int iterations = info[1].As<Napi::Number>().Int32Value();
  MemcpyProbeShape shape;
  if (info.Length() >= 4) {
    if (!IsInteger(info[2], 0, 1ull << 40) || !IsInteger(info[3], 0, 1u << 20)) {
      ThrowStatus(env, Status::InvalidArgument("probeMemcpy pieceBytes and dstRingPieces must be integers >= 0"));
    }
    shape.piece_bytes = static_cast<uint64_t>(info[2].As<Napi::Number>().DoubleValue());
    shape.dst_ring_pieces = info[3].As<Napi::Number>().Uint32Value();
  }
  TaskQueue* pool = nullptr;
  ThrowIfError(env, State(env).Pool(&pool));
  AsyncCall* call = AsyncCall::Start(env, "mnemo.probeMemcpy");
  Napi::Promise promise = call->promise();
  // A thread of its own drives the measurement; the copies run on the copy pool.
  RunDetached(call, [pool, bytes, iterations, shape](AsyncCall::Resolver* resolver) {
    MemcpyProbeResult r;
    MNEMO_RETURN_IF_ERROR(ProbeMemcpy(*pool, bytes, iterations, &r, shape));
    *resolver = [r](Napi::Env e) -> Napi::Value {
      Napi::Object out = Napi::Object::New(e);
      out.Set("bytes", static_cast<double>(r.bytes));
      out.Set("threads", static_cast<double>(r.threads));
      auto list = [&e](const std::vector<double>& xs) {
        Napi::Array a = Napi::Array::New(e, xs.size());
        for (size_t i = 0; i < xs.size(); ++i) a.Set(static_cast<uint32_t>(i), xs[i]);
        return a;
      };
      out.Set("memcpySeconds", list(r.memcpy_seconds));
      out.Set("kernelSeconds", list(r.kernel_seconds));
      out.Set("crcCopySeconds", list(r.crc_copy_seconds));
      out.Set("crcStreamsCopySeconds", list(r.crc_streams_copy_seconds));
      return out;
    };
    return Status::Ok();
  });
  return promise;
}

Napi::Value ProbeDirectIoJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 6 || !info[0].IsString() || !IsInteger(info[1], 1, 1ull << 50) ||
      !IsInteger(info[2], 512, 64 << 20) || !IsInteger(info[3], 1, 4096) || !info[4].IsBoolean() || !info[5].IsBoolean()) {
    ThrowStatus(env, Status::InvalidArgument("probeDirectIo(path, bytes, blockBytes, queueDepth, write, forcePread)"));
  }
  DirectIoProbeOptions o;
  o.path = info[0].As<Napi::String>().Utf8Value();
  o.bytes = static_cast<uint64_t>(info[1].As<Napi::Number>().DoubleValue());
  o.block_bytes = info[2].As<Napi::Number>().Uint32Value();
  o.queue_depth = info[3].As<Napi::Number>().Uint32Value();
  o.op = info[4].As<Napi::Boolean>().Value() ? IoOp::kWrite : IoOp::kRead;
  o.force_pread = info[5].As<Napi::Boolean>().Value();
  AsyncCall* call = AsyncCall::Start(env, "mnemo.probeDirectIo");
  Napi::Promise promise = call->promise();
  RunDetached(call, [o](AsyncCall::Resolver* resolver) {
    DirectIoProbeResult r;
    MNEMO_RETURN_IF_ERROR(ProbeDirectIo(o, &r));
    *resolver = [r](Napi::Env e) -> Napi::Value {
      Napi::Object out = Napi::Object::New(e);
      out.Set("bytes", static_cast<double>(r.bytes));
      out.Set("seconds", r.seconds);
      out.Set("backend", IoBackendName(r.backend));
      out.Set("backendReason", r.backend_reason.empty() ? e.Null() : Napi::Value(Napi::String::New(e, r.backend_reason)));
      out.Set("queueDepth", r.queue_depth);
      return out;
    };
    return Status::Ok();
  });
  return promise;
}

Napi::Value DropPageCacheJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) ThrowStatus(env, Status::InvalidArgument("dropPageCache(path)"));
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  AsyncCall* call = AsyncCall::Start(env, "mnemo.dropPageCache");
  Napi::Promise promise = call->promise();
  RunDetached(call, [path](AsyncCall::Resolver*) { return DropPageCache(path); });
  return promise;
}

// Whether io_uring works in this process: tried once (a ring of one entry).
const Status& UringProbe() {
  static std::once_flag once;
  static Status status;
  std::call_once(once, [] {
    std::unique_ptr<IoBackend> ring;
    status = MakeUringBackend(1, &ring);
  });
  return status;
}

Napi::Value IoInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Status& uring = UringProbe();
  Napi::Object out = Napi::Object::New(env);
  out.Set("uringCompiled", UringCompiled());
  out.Set("uringAvailable", uring.ok());
  out.Set("uringReason", uring.ok() ? env.Null() : Napi::Value(Napi::String::New(env, uring.message())));
  out.Set("crc32c", Crc32cImplementation());
  out.Set("copyKernel", CopyKernelName());
  return out;
}

Napi::Value Crc32cJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !IsInteger(info[1], 0, 4294967295.0)) {
    ThrowStatus(env, Status::InvalidArgument("crc32c(data, seed)"));
  }
  const uint8_t* data = nullptr;
  size_t length = 0;
  if (info[0].IsArrayBuffer()) {
    Napi::ArrayBuffer ab = info[0].As<Napi::ArrayBuffer>();
    data = static_cast<const uint8_t*>(ab.Data());
    length = ab.ByteLength();
  } else if (info[0].IsTypedArray()) {
    Napi::TypedArray t = info[0].As<Napi::TypedArray>();
    data = static_cast<const uint8_t*>(t.ArrayBuffer().Data()) + t.ByteOffset();
    length = t.ByteLength();
  } else if (info[0].IsDataView()) {
    Napi::DataView d = info[0].As<Napi::DataView>();
    data = static_cast<const uint8_t*>(d.ArrayBuffer().Data()) + d.ByteOffset();
    length = d.ByteLength();
  } else {
    ThrowStatus(env, Status::InvalidArgument("crc32c: data must be an ArrayBuffer or a view"));
  }
  const uint32_t seed = info[1].As<Napi::Number>().Uint32Value();
  return Napi::Number::New(env, length == 0 ? seed : Crc32c(seed, data, length));
}

Napi::Value Crc32cImplementationsJs(const Napi::CallbackInfo& info) {
  const std::vector<std::string> names = Crc32cImplementations();
  Napi::Array out = Napi::Array::New(info.Env(), names.size());
  for (size_t i = 0; i < names.size(); ++i) out.Set(static_cast<uint32_t>(i), names[i]);
  return out;
}

Napi::Value SelectCrc32cJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) ThrowStatus(env, Status::InvalidArgument("selectCrc32c(name)"));
  ThrowIfError(env, Crc32cSelect(info[0].As<Napi::String>().Utf8Value()));
  return env.Undefined();
}

MNEMO_REGISTER_FUNCTIONS(probes,
                         {"probeMemcpy", ProbeMemcpyJs},
                         {"probeDirectIo", ProbeDirectIoJs},
                         {"dropPageCache", DropPageCacheJs},
                         {"ioInfo", IoInfo},
                         {"crc32c", Crc32cJs},
                         {"crc32cImplementations", Crc32cImplementationsJs},
                         {"selectCrc32c", SelectCrc32cJs});

}  // namespace
}  // namespace mnemo::binding
