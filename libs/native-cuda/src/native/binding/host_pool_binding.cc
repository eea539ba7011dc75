// openHostPool(bytes, numaNode, populate, hugePages): Promise<HostPool>, numaNodes(), and
// the HostPool class: info(), close().
#include <napi.h>

#include "binding/addon_state.h"
#include "binding/async_call.h"
#include "binding/int_arg.h"
#include "binding/pool_wraps.h"
#include "binding/registry.h"
#include "core/pool/numa.h"

namespace mnemo::binding {
namespace {

Napi::Value OpenHostPool(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // Assert: the TS wrapper validated these already.
  if (info.Length() < 4 || !IsInteger(info[0], 1, 9007199254740991.0) || !IsInteger(info[1], -1, numa::kMaxNodes - 1) ||
      !info[2].IsBoolean() || !info[3].IsBoolean()) {
    ThrowStatus(env, Status::InvalidArgument("openHostPool(bytes, numaNode, populate, hugePages)"));
  }
  AddonState& state = State(env);
  if (state.closed()) ThrowStatus(env, Status::Closed("the native addon was closed"));
  HostPoolOptions options;
  options.bytes = static_cast<uint64_t>(info[0].As<Napi::Number>().DoubleValue());
  options.numa_node = info[1].As<Napi::Number>().Int32Value();
  options.populate = info[2].As<Napi::Boolean>().Value();
  options.huge_pages = info[3].As<Napi::Boolean>().Value();
  // Pinned only pays off (and only works) with a device to copy to.
  options.pin = state.Cuda().device_count > 0;

  AsyncCall* call = AsyncCall::Start(env, "mnemo.openHostPool");
  Napi::Promise promise = call->promise();
  // Committing a large region takes a while (page faults): not on the JS thread.
  RunDetached(call, [options](AsyncCall::Resolver* resolver) {
    std::shared_ptr<HostPool> pool;
    MNEMO_RETURN_IF_ERROR(HostPool::Open(options, &pool));
    *resolver = NewPoolObject(std::move(pool), &AddonState::pending_host_pool, &AddonState::host_pool_class);
    return Status::Ok();
  });
  return promise;
}

Napi::Value NumaNodes(const Napi::CallbackInfo& info) {
  const std::vector<int> nodes = numa::ListNodes();
  Napi::Array out = Napi::Array::New(info.Env(), nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) out.Set(static_cast<uint32_t>(i), nodes[i]);
  return out;
}

}  // namespace

Napi::Function HostPoolWrap::Define(Napi::Env env) {
  return DefineClass(env, "HostPool",
                     {InstanceMethod<&HostPoolWrap::Info>("info"), InstanceMethod<&HostPoolWrap::Close>("close")});
}

HostPoolWrap::HostPoolWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<HostPoolWrap>(info), env_(info.Env()) {
  pool_ = TakePending(info.Env(), &AddonState::pending_host_pool, "HostPool objects come from openHostPool()");
  info.This().As<Napi::Object>().TypeTag(&kHostPoolTag);
  accounted_ = static_cast<int64_t>(pool_->size());
  Napi::MemoryManagement::AdjustExternalMemory(info.Env(), accounted_);
  napi_add_env_cleanup_hook(env_, OnTeardown, this);
}

HostPoolWrap::~HostPoolWrap() { napi_remove_env_cleanup_hook(env_, OnTeardown, this); }

void HostPoolWrap::Finalize(Napi::BasicEnv env) {
  if (accounted_ != 0) Napi::MemoryManagement::AdjustExternalMemory(env, -accounted_);
  accounted_ = 0;
}

void HostPoolWrap::OnTeardown(void* self) { static_cast<HostPoolWrap*>(self)->pool_.reset(); }

Napi::Value HostPoolWrap::Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("closed", !pool_);
  if (pool_) {
    out.Set("bytes", static_cast<double>(pool_->size()));
    out.Set("kind", HostMemoryKindName(pool_->kind()));
    out.Set("numaNode", pool_->numa_node() >= 0 ? Napi::Value(Napi::Number::New(env, pool_->numa_node())) : env.Null());
    out.Set("pinError", pool_->pin_error().empty() ? env.Null() : Napi::Value(Napi::String::New(env, pool_->pin_error())));
  }
  return out;
}

// close(): later transfers naming this pool fail with `closed`; the memory is freed as soon
// as the transfers already in flight are done with it.
Napi::Value HostPoolWrap::Close(const Napi::CallbackInfo& info) {
  pool_.reset();
  if (accounted_ != 0) Napi::MemoryManagement::AdjustExternalMemory(info.Env(), -accounted_);
  accounted_ = 0;
  return info.Env().Undefined();
}

namespace {

Napi::Object InitHostPool(Napi::Env env, Napi::Object exports) {
  State(env).host_pool_class = Napi::Persistent(HostPoolWrap::Define(env));
  SetFunctions(env, exports, {{"openHostPool", OpenHostPool}, {"numaNodes", NumaNodes}});
  return exports;
}

}  // namespace
}  // namespace mnemo::binding

MNEMO_REGISTER_BINDING(host_pool, mnemo::binding::InitHostPool);
