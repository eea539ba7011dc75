#include "binding/async_settle.h"

#include <condition_variable>
#include <memory>
#include <mutex>

#include "binding/addon_state.h"

namespace mnemo::binding {
namespace {

// Signals that the queue is done with a call: the work finished and the thread-safe
// function is no longer touched.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  void Finish() {
    std::lock_guard<std::mutex> lock(mu);
    finished = true;
    cv.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return finished; });
  }
};

// JS-side state of one call. Ownership: the thread-safe function's finalizer deletes it on
// the JS thread after the last Release(), or during environment teardown.
struct Call {
  explicit Call(Napi::Env env) : deferred(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise::Deferred deferred;
  std::vector<Napi::ObjectReference> keep;
  std::shared_ptr<Gate> gate = std::make_shared<Gate>();
};

// Teardown with the call in flight: Node runs clean-up hooks newest first, so this hook
// (added after the thread-safe function) runs before Node deletes that function. The work is
// finite native compute or copying, so the wait is bounded.
void WaitOnTeardown(void* gate) { static_cast<Gate*>(gate)->Wait(); }

void Finalize(Napi::Env env, void*, Call* call) {
  napi_remove_env_cleanup_hook(env, WaitOnTeardown, call->gate.get());
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
  std::shared_ptr<Gate> gate = call->gate;
  Tsfn tsfn = Tsfn::New(env, name, 0, 1, call, Finalize);
  napi_add_env_cleanup_hook(env, WaitOnTeardown, gate.get());
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
