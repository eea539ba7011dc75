// Aligned (and, with a CUDA device, pinned) host buffers exposed as ArrayBuffers.
#include <napi.h>

#include <cmath>

#include "binding/addon_state.h"
#include "binding/host_buffer_registry.h"
#include "binding/registry.h"
#include "core/host_memory.h"

namespace mnemo::binding {
namespace {

HostMemoryKind PreferredKind(AddonState& state) {
  // Pinned only pays off (and only works) with a device to copy to.
  return state.Cuda().device_count > 0 ? HostMemoryKind::kPinned : HostMemoryKind::kPageable;
}

bool IsSizeValue(const Napi::Value& v) {
  if (!v.IsNumber()) return false;
  const double d = v.As<Napi::Number>().DoubleValue();
  return d >= 0 && d <= 9007199254740991.0 && std::floor(d) == d;
}

// allocHostBuffer(bytes: number, alignment: number): ArrayBuffer
// The ArrayBuffer owns the memory: its finalizer frees it when JS collects the buffer.
Napi::Value AllocHostBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // Assert: the TS wrapper validated these already.
  if (info.Length() < 2 || !IsSizeValue(info[0]) || !IsSizeValue(info[1])) {
    ThrowStatus(env, Status::InvalidArgument("allocHostBuffer(bytes: integer, alignment: integer)"));
  }
  AddonState& state = State(env);
  if (state.closed()) ThrowStatus(env, Status::Closed("the native addon was closed"));
  const auto bytes = static_cast<size_t>(info[0].As<Napi::Number>().DoubleValue());
  const auto alignment = static_cast<size_t>(info[1].As<Napi::Number>().DoubleValue());

  HostAllocation allocation;
  ThrowIfError(env, AllocateHost(bytes, alignment, PreferredKind(state), &allocation));
  // Ownership: the registry entry (dropped by the finalizer) and any in-flight batch share
  // the memory; see host_buffer_registry.h.
  RegisterHostBuffer(allocation).reset();
  return Napi::ArrayBuffer::New(
      env, allocation.data, allocation.bytes,
      [](Napi::Env, void* data) { UnregisterHostBuffer(data); });
}

// hostMemoryKind(): 'pinned' | 'pageable' — what allocHostBuffer hands out in this process.
Napi::Value HostMemoryKindOf(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), HostMemoryKindName(PreferredKind(State(info.Env()))));
}

Napi::Object InitMemory(Napi::Env env, Napi::Object exports) {
  exports.Set("allocHostBuffer", Napi::Function::New(env, AllocHostBuffer, "allocHostBuffer"));
  exports.Set("hostMemoryKind", Napi::Function::New(env, HostMemoryKindOf, "hostMemoryKind"));
  return exports;
}

}  // namespace
}  // namespace mnemo::binding

MNEMO_REGISTER_BINDING(memory, mnemo::binding::InitMemory);
