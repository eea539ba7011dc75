#include "binding/async_settle.h"

#include <memory>

#include "binding/addon_state.h"
#include "binding/teardown_gate.h"

namespace mnemo::binding {
namespace {

// JS-side state of one call. Ownership: the thread-safe function's finalizer deletes it on
// the JS thread after the last Release(), or during environment teardown.
struct Call {
  explicit Call(Napi::Env env) : deferred(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise::Deferred deferred;
  std::vector<Napi::ObjectReference> keep;
  std::shared_ptr<TeardownGate> gate = std::make_shared<TeardownGate>();
};

void Finalize(Napi::Env env, void*, Call* call) {
  napi_remove_env_cleanup_hook(env, TeardownGate::WaitOnTeardown, call->gate.get());
  call->gate->Wait();
  delete call;
}

void Settle(Napi::Env env, Napi::Function, Call* call, Status* result) {
  std::unique_ptr<Status> status(result);
  if (env == nullptr || call == nullptr || status == nullptr) return;
  try {
    if (status->ok()) {
      call->deferred.Resolve(env.Undefined());
    } else {
      call->deferred.Reject(MakeNativeError(env, *status).Value());
    }
  } catch (const Napi::Error&) {
    // The environment is terminating; nobody can observe the Promise any more.
  }
}

using Tsfn = Napi::TypedThreadSafeFunction<Call, Status, Settle>;

}  // namespace

Napi::Promise SettleOnQueue(Napi::Env env, TaskQueue& queue, const char* name, std::vector<Napi::Object> keep,
                            std::function<Status()> work) {
  auto owned = std::make_unique<Call>(env);
  Napi::Promise promise = owned->deferred.Promise();
  owned->keep.reserve(keep.size());
  for (Napi::Object& o : keep) owned->keep.push_back(Napi::Persistent(o));
  Call* call = owned.release();
  std::shared_ptr<TeardownGate> gate = call->gate;
  Tsfn tsfn = Tsfn::New(env, name, 0, 1, call, Finalize);
  napi_add_env_cleanup_hook(env, TeardownGate::WaitOnTeardown, gate.get());
  const Status queued = queue.Submit([tsfn, gate, work = std::move(work)]() mutable {
    Status result = Status::Ok();
    try {
      result = work();
    } catch (const std::exception& e) {
      result = Status::Internal(e.what());
    }
    auto* boxed = new Status(std::move(result));
    if (tsfn.NonBlockingCall(boxed) != napi_ok) {
      delete boxed;  // napi_closing: the environment is going away; nobody is left to settle
    } else {
      tsfn.Release();
    }
    gate->Finish();
  });
  if (!queued.ok()) {
    call->deferred.Reject(MakeNativeError(env, queued).Value());
    gate->Finish();
    tsfn.Release();
  }
  return promise;
}

}  // namespace mnemo::binding
