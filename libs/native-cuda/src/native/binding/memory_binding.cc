// Aligned (and, with a CUDA device, pinned) host buffers exposed as ArrayBuffers.
#include <napi.h>

#include "binding/addon_state.h"
#include "binding/host_buffer_registry.h"
#include "binding/int_arg.h"
#include "binding/registry.h"
#include "core/host_memory.h"

namespace mnemo::binding {
namespace {

HostMemoryKind PreferredKind(AddonState& state) {
  // Pinned only pays off (and only works) with a device to copy to.
  return state.Cuda().device_count > 0 ? HostMemoryKind::kPinned : HostMemoryKind::kPageable;
}

// allocHostBuffer(bytes: number, alignment: number): ArrayBuffer
// The ArrayBuffer owns the memory: its finalizer frees it when JS collects the buffer,
// unless freeHostBuffer freed it earlier.
Napi::Value AllocHostBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // Assert: the TS wrapper validated these already.
  if (info.Length() < 2 || !IsInteger(info[0], 0, 9007199254740991.0) || !IsInteger(info[1], 0, 9007199254740991.0)) {
    ThrowStatus(env, Status::InvalidArgument("allocHostBuffer(bytes: integer, alignment: integer)"));
  }
  AddonState& state = State(env);
  if (state.closed()) ThrowStatus(env, Status::Closed("the native addon was closed"));
  const auto bytes = static_cast<size_t>(info[0].As<Napi::Number>().DoubleValue());
  const auto alignment = static_cast<size_t>(info[1].As<Napi::Number>().DoubleValue());

  HostAllocation allocation;
  ThrowIfError(env, AllocateHost(bytes, alignment, PreferredKind(state), &allocation));
  // Ownership: the registry entry (dropped by the finalizer or freeHostBuffer) and any
  // in-flight batch share the memory; see host_buffer_registry.h.
  const uint64_t id = RegisterHostBuffer(allocation);
  // NOTE: V8 already counts an external ArrayBuffer's bytes as external memory (and stops
  // counting them when it is detached), so no AdjustExternalMemory here: it would double.
  return Napi::ArrayBuffer::New(
      env, allocation.data, allocation.bytes,
      [](Napi::Env, void* data, uint64_t* hint) { UnregisterHostBuffer(data, reinterpret_cast<uintptr_t>(hint)); },
      reinterpret_cast<uint64_t*>(static_cast<uintptr_t>(id)));
}

// freeHostBuffer(buffer: ArrayBuffer): frees an allocHostBuffer buffer now instead of at GC.
// The ArrayBuffer is detached first (byteLength 0; views over it read nothing), so JS can
// never touch the freed memory; batches already in flight keep it until they finish.
Napi::Value FreeHostBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArrayBuffer()) {
    ThrowStatus(env, Status::InvalidArgument("freeHostBuffer(buffer: ArrayBuffer)"));
  }
  Napi::ArrayBuffer ab = info[0].As<Napi::ArrayBuffer>();
  void* data = ab.Data();
  if (data == nullptr || ab.ByteLength() == 0 || !FindHostBuffer(data)) {
    ThrowStatus(env, Status::InvalidArgument("not a live buffer from allocHostBuffer (freed already?)"));
  }
  ab.Detach();
  ReleaseHostBuffer(data);
  return env.Undefined();
}

// hostMemoryKind(): 'pinned' | 'pageable' — what allocHostBuffer hands out in this process.
Napi::Value HostMemoryKindOf(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), HostMemoryKindName(PreferredKind(State(info.Env()))));
}

MNEMO_REGISTER_FUNCTIONS(memory,
                         {"allocHostBuffer", AllocHostBuffer},
                         {"hostMemoryKind", HostMemoryKindOf},
                         {"freeHostBuffer", FreeHostBuffer});

}  // namespace
}  // namespace mnemo::binding
