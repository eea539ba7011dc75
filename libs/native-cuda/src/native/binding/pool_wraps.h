// JS classes standing for native pool devices: HostPool (a host-memory region) and SsdPool
// (an SSD pool device with its worker). Instances come only from openHostPool/openSsdPool.
// Objects are type-tagged, so no other object (nor the other class) can pass for a device.
//
// Ownership: a wrap holds one shared reference to its device; close() drops it, and every
// in-flight call holds its own, so native memory and the worker outlive the last use. The
// environment clean-up hook closes what JS left open; the GC finalizer is the last resort.
#pragma once

#include <napi.h>

#include <cstdint>
#include <memory>

#include "binding/addon_state.h"
#include "binding/async_call.h"
#include "core/pool/host_pool.h"
#include "core/pool/ssd_device.h"

namespace mnemo::binding {

class HostPoolWrap : public Napi::ObjectWrap<HostPoolWrap> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit HostPoolWrap(const Napi::CallbackInfo& info);
  ~HostPoolWrap() override;
  void Finalize(Napi::BasicEnv env) override;

  const std::shared_ptr<HostPool>& pool() const { return pool_; }

 private:
  Napi::Value Info(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  static void OnTeardown(void* self);

  napi_env env_;
  std::shared_ptr<HostPool> pool_;
  int64_t accounted_ = 0;  // bytes reported to V8 as external memory
};

class SsdPoolWrap : public Napi::ObjectWrap<SsdPoolWrap> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit SsdPoolWrap(const Napi::CallbackInfo& info);
  ~SsdPoolWrap() override;

  const std::shared_ptr<SsdDevice>& device() const { return device_; }

 private:
  Napi::Value Info(const Napi::CallbackInfo& info);
  Napi::Value Stats(const Napi::CallbackInfo& info);
  Napi::Value Flush(const Napi::CallbackInfo& info);
  Napi::Value BeginClose(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  static void OnTeardown(void* self);

  napi_env env_;
  std::shared_ptr<SsdDevice> device_;
};

// Type tags of the two classes (random 128-bit values, fixed forever).
extern const napi_type_tag kHostPoolTag;
extern const napi_type_tag kSsdPoolTag;

enum class PoolObjectKind { kNone, kHost, kSsd };

struct PoolObject {
  PoolObjectKind kind = PoolObjectKind::kNone;
  // Null when the device was closed.
  std::shared_ptr<HostPool> host;
  std::shared_ptr<SsdDevice> ssd;
};

// What `value` is: one of our devices (possibly closed) or nothing of ours.
PoolObject ResolvePoolObject(Napi::Value value);

// The device an open handed over through `pending` (see NewPoolObject), taken out of the state;
// throws InvalidArgument(`misuse`) when JS called the class's constructor itself.
template <typename Device>
std::shared_ptr<Device> TakePending(Napi::Env env, std::shared_ptr<Device> AddonState::*pending, const char* misuse) {
  AddonState& state = State(env);
  std::shared_ptr<Device> device = std::move(state.*pending);
  (state.*pending).reset();
  if (!device) ThrowStatus(env, Status::InvalidArgument(misuse));
  return device;
}

// The resolve value of an open: a new instance of the class in `cls`, whose constructor takes
// `device` out of the state's `pending` slot (the only way instances are made).
template <typename Device>
AsyncCall::Resolver NewPoolObject(std::shared_ptr<Device> device, std::shared_ptr<Device> AddonState::*pending,
                                  Napi::FunctionReference AddonState::*cls) {
  return [device = std::move(device), pending, cls](Napi::Env env) -> Napi::Value {
    AddonState& s = State(env);
    s.*pending = device;
    return (s.*cls).New({});
  };
}

}  // namespace mnemo::binding
