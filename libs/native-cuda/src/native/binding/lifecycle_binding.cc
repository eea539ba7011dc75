// Addon lifecycle and introspection: init, close, version, cudaInfo, stats.
#include <napi.h>

#include "binding/addon_state.h"
#include "binding/registry.h"
#include "core/host_memory.h"
#include "core/pool/host_pool.h"
#include "core/version.h"

namespace mnemo::binding {
namespace {

// init(errorClass: Function, threads: number): hands the addon the JS error class it throws
// (better-sqlite3 style) and sizes the pool. The TS wrapper calls it once at load.
Napi::Value Init(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsFunction() || !info[1].IsNumber()) {
    ThrowStatus(env, Status::InvalidArgument("init(errorClass: Function, threads: number)"));
  }
  AddonState& state = State(env);
  state.error_class = Napi::Persistent(info[0].As<Napi::Function>());
  const double threads = info[1].As<Napi::Number>().DoubleValue();
  if (!(threads >= 0 && threads <= 1024) || threads != static_cast<double>(static_cast<size_t>(threads))) {
    ThrowStatus(env, Status::InvalidArgument("threads must be an integer in [0, 1024]"));
  }
  state.set_thread_count(static_cast<size_t>(threads));
  return env.Undefined();
}

// close(): joins the native threads; later calls that need them fail with code 'closed'.
Napi::Value Close(const Napi::CallbackInfo& info) {
  State(info.Env()).Close();
  return info.Env().Undefined();
}

Napi::Value Version(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("version", kNativeVersion);
#ifdef MNEMO_WITH_CUDA
  out.Set("cuda", true);
#else
  out.Set("cuda", false);
#endif
  out.Set("abi", kNativeAbi);
  out.Set("napi", NAPI_VERSION);
  return out;
}

Napi::Value CudaInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const cuda::CudaInfo& cuda = State(env).Cuda();
  Napi::Object out = Napi::Object::New(env);
  out.Set("compiled", cuda.compiled);
  out.Set("deviceCount", cuda.device_count);
  out.Set("runtimeVersion", cuda.runtime_version);
  out.Set("driverVersion", cuda.driver_version);
  if (cuda.device_count == 0) {
    out.Set("error", cuda.error);
  } else {
    out.Set("error", env.Null());
  }
  Napi::Array devices = Napi::Array::New(env, cuda.devices.size());
  for (size_t i = 0; i < cuda.devices.size(); ++i) {
    const cuda::DeviceInfo& d = cuda.devices[i];
    Napi::Object dev = Napi::Object::New(env);
    dev.Set("ordinal", d.ordinal);
    dev.Set("name", d.name);
    dev.Set("computeCapability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor));
    dev.Set("totalMemory", static_cast<double>(d.total_memory));
    dev.Set("multiprocessors", d.multiprocessors);
    devices.Set(i, dev);
  }
  out.Set("devices", devices);
  return out;
}

Napi::Value Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  AddonState& state = State(env);
  const HostMemoryStats host = GetHostMemoryStats();
  Napi::Object out = Napi::Object::New(env);
  out.Set("hostBuffers", static_cast<double>(host.allocations));
  out.Set("hostBytes", static_cast<double>(host.bytes));
  const HostPoolStats pools = GetHostPoolStats();
  out.Set("poolRegions", static_cast<double>(pools.regions));
  out.Set("poolBytes", static_cast<double>(pools.bytes));
  out.Set("closed", state.closed());
  return out;
}

// externalMemory(): V8's running total of external memory (what AdjustExternalMemory moves
// and GC heuristics read; process.memoryUsage().external shows only ArrayBuffer stores).
Napi::Value ExternalMemory(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(Napi::MemoryManagement::AdjustExternalMemory(info.Env(), 0)));
}

MNEMO_REGISTER_FUNCTIONS(lifecycle,
                         {"init", Init},
                         {"close", Close},
                         {"version", Version},
                         {"cudaInfo", CudaInfo},
                         {"stats", Stats},
                         {"externalMemory", ExternalMemory});

}  // namespace
}  // namespace mnemo::binding
