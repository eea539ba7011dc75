// openSsdPool(path, bytes, blockSize, queueDepth, maxRequestBytes, forcePread):
// Promise<SsdPool>, and the SsdPool class: info(), stats(), flush(), beginClose(), close().
#include <napi.h>

#include <string>

#include "binding/addon_state.h"
#include "binding/async_call.h"
#include "binding/int_arg.h"
#include "binding/pool_wraps.h"
#include "binding/registry.h"

namespace mnemo::binding {
namespace {

Napi::Value OpenSsdPool(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // Assert: the TS wrapper validated these already.
  if (info.Length() < 6 || !info[0].IsString() || !IsInteger(info[1], 0, 9007199254740991.0) ||
      !IsInteger(info[2], 0, 1 << 20) || !IsInteger(info[3], 1, 4096) || !IsInteger(info[4], 4096, 64 << 20) ||
      !info[5].IsBoolean()) {
    ThrowStatus(env, Status::InvalidArgument(
                         "openSsdPool(path, bytes, blockSize, queueDepth, maxRequestBytes, forcePread)"));
  }
  if (State(env).closed()) ThrowStatus(env, Status::Closed("the native addon was closed"));
  SsdOptions options;
  options.path = info[0].As<Napi::String>().Utf8Value();
  options.bytes = static_cast<uint64_t>(info[1].As<Napi::Number>().DoubleValue());
  options.block_size = info[2].As<Napi::Number>().Uint32Value();
  options.queue_depth = info[3].As<Napi::Number>().Uint32Value();
  options.max_request_bytes = info[4].As<Napi::Number>().Uint32Value();
  options.force_pread = info[5].As<Napi::Boolean>().Value();

  AsyncCall* call = AsyncCall::Start(env, "mnemo.openSsdPool");
  Napi::Promise promise = call->promise();
  // fallocate + fsync of a new file: not on the JS thread.
  RunDetached(call, [options](AsyncCall::Resolver* resolver) {
    std::unique_ptr<SsdDevice> opened;
    MNEMO_RETURN_IF_ERROR(SsdDevice::Open(options, &opened));
    *resolver = NewPoolObject(std::shared_ptr<SsdDevice>(std::move(opened)), &AddonState::pending_ssd,
                              &AddonState::ssd_pool_class);
    return Status::Ok();
  });
  return promise;
}

}  // namespace

Napi::Function SsdPoolWrap::Define(Napi::Env env) {
  return DefineClass(env, "SsdPool",
                     {InstanceMethod<&SsdPoolWrap::Info>("info"), InstanceMethod<&SsdPoolWrap::Stats>("stats"),
                      InstanceMethod<&SsdPoolWrap::Flush>("flush"), InstanceMethod<&SsdPoolWrap::BeginClose>("beginClose"),
                      InstanceMethod<&SsdPoolWrap::Close>("close")});
}

SsdPoolWrap::SsdPoolWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<SsdPoolWrap>(info), env_(info.Env()) {
  device_ = TakePending(info.Env(), &AddonState::pending_ssd, "SsdPool objects come from openSsdPool()");
  info.This().As<Napi::Object>().TypeTag(&kSsdPoolTag);
  napi_add_env_cleanup_hook(env_, OnTeardown, this);
}

SsdPoolWrap::~SsdPoolWrap() {
  napi_remove_env_cleanup_hook(env_, OnTeardown, this);
  // NOTE: when this drops the last reference the device joins its worker here, on the JS
  // thread; the worker only finishes batches already queued, so the wait is bounded.
  device_.reset();
}

void SsdPoolWrap::OnTeardown(void* self) {
  auto* wrap = static_cast<SsdPoolWrap*>(self);
  if (wrap->device_) wrap->device_->Close();
  wrap->device_.reset();
}

Napi::Value SsdPoolWrap::Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("closed", !device_ || device_->closing());
  if (!device_) return out;
  const SsdDevice& d = *device_;
  out.Set("path", d.path());
  out.Set("bytes", static_cast<double>(d.size()));
  out.Set("blockSize", d.block_size());
  out.Set("memoryAlignment", static_cast<double>(d.mem_alignment()));
  out.Set("maxRequestBytes", static_cast<double>(d.max_request_bytes()));
  out.Set("queueDepth", d.queue_depth());
  out.Set("backend", IoBackendName(d.backend()));
  out.Set("backendReason", d.backend_reason().empty() ? env.Null() : Napi::Value(Napi::String::New(env, d.backend_reason())));
  out.Set("blockDevice", d.block_device());
  out.Set("created", d.created());
  return out;
}

Napi::Value SsdPoolWrap::Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const SsdStats s = device_ ? device_->stats() : SsdStats{};
  Napi::Object out = Napi::Object::New(env);
  out.Set("inFlight", s.in_flight);
  out.Set("peakInFlight", s.peak_in_flight);
  out.Set("queuedBatches", static_cast<double>(s.queued_batches));
  out.Set("requests", static_cast<double>(s.requests));
  out.Set("bytesRead", static_cast<double>(s.bytes_read));
  out.Set("bytesWritten", static_cast<double>(s.bytes_written));
  out.Set("errors", static_cast<double>(s.errors));
  return out;
}

// flush(): Promise<void>, after every write accepted before it: fdatasync.
Napi::Value SsdPoolWrap::Flush(const Napi::CallbackInfo& info) {
  return PromiseCall(
      info.Env(), "mnemo.ssdFlush",
      [&](AsyncCall* call) {
        if (!device_ || device_->closing()) return Status::Closed("the SSD pool is closed");
        call->Keep(info.This());
        call->KeepAlive(device_);
        return Status::Ok();
      },
      [&](AsyncCall* call) {
        auto batch = std::make_unique<IoBatch>();
        batch->flush = true;
        batch->done = [call](Status s) { call->Complete(std::move(s)); };
        return device_->Submit(std::move(batch));
      });
}

// beginClose(): refuses new work at once; batches already accepted still complete.
Napi::Value SsdPoolWrap::BeginClose(const Napi::CallbackInfo& info) {
  if (device_) device_->BeginClose();
  return info.Env().Undefined();
}

// close(): beginClose(), then waits for the worker to drain and exit (blocking: the TS
// wrapper calls it once its in-flight Promises settled, so the wait is short).
Napi::Value SsdPoolWrap::Close(const Napi::CallbackInfo& info) {
  if (device_) device_->Close();
  device_.reset();
  return info.Env().Undefined();
}

namespace {

Napi::Object InitSsdPool(Napi::Env env, Napi::Object exports) {
  State(env).ssd_pool_class = Napi::Persistent(SsdPoolWrap::Define(env));
  SetFunctions(env, exports, {{"openSsdPool", OpenSsdPool}});
  return exports;
}

}  // namespace
}  // namespace mnemo::binding

MNEMO_REGISTER_BINDING(ssd_pool, mnemo::binding::InitSsdPool);
