#include "binding/addon_state.h"

namespace mnemo::binding {

Status AddonState::Pool(TaskQueue** out) {
  if (closed_) return Status::Closed("the native addon was closed");
  if (!pool_) pool_ = std::make_unique<TaskQueue>(thread_count_, "mnemo-copy");
  *out = pool_.get();
  return Status::Ok();
}

Status AddonState::Copy(CopyEngine** out) {
  TaskQueue* pool = nullptr;
  MNEMO_RETURN_IF_ERROR(Pool(&pool));
  if (!copy_) copy_ = std::make_unique<CopyEngine>(*pool);
  *out = copy_.get();
  return Status::Ok();
}

Status AddonState::Compute(TaskQueue** out) {
  if (closed_) return Status::Closed("the native addon was closed");
  if (!compute_) compute_ = std::make_unique<TaskQueue>(1, "mnemo-compute");
  *out = compute_.get();
  return Status::Ok();
}

const cuda::CudaInfo& AddonState::Cuda() {
  std::call_once(cuda_once_, [this] { cuda_ = cuda::QueryCudaInfo(); });
  return cuda_;
}

void AddonState::Close() {
  closed_ = true;
  // Shutdown drains: every queued shard runs, so every in-flight batch still settles its
  // Promise (through its thread-safe function) after close() returns.
  if (pool_) pool_->Shutdown();
  if (compute_) compute_->Shutdown();
}

void InstallAddonState(Napi::Env env) {
  auto* state = new AddonState();
  // Ownership: Node-API owns `state` from here and deletes it when the environment is torn
  // down; the clean-up hook below only joins threads, so the two cannot double-free.
  env.SetInstanceData<AddonState>(state);
  env.AddCleanupHook([state] { state->Close(); });
}

AddonState& State(Napi::Env env) {
  AddonState* state = env.GetInstanceData<AddonState>();
  // Assert: addon.cc installs the state before any binding can run.
  if (state == nullptr) {
    throw Napi::Error::New(env, "mnemo native addon state missing (module not initialised)");
  }
  return *state;
}

Napi::Error MakeNativeError(Napi::Env env, const Status& status) {
  const char* code = StatusCodeName(status.code());
  AddonState* state = env.GetInstanceData<AddonState>();
  if (state != nullptr && !state->error_class.IsEmpty()) {
    Napi::Object err = state->error_class.New(
        {Napi::String::New(env, status.message()), Napi::String::New(env, code)});
    return Napi::Error(env, err);
  }
  Napi::Error err = Napi::Error::New(env, status.message());
  err.Set("code", Napi::String::New(env, code));
  return err;
}

void ThrowStatus(Napi::Env env, const Status& status) { throw MakeNativeError(env, status); }

}  // namespace mnemo::binding
