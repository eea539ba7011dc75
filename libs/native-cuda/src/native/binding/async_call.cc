#include "binding/async_call.h"

#include <thread>

#include "binding/addon_state.h"
#include "binding/teardown_gate.h"

namespace mnemo::binding {

struct AsyncCall::Settlement {
  Status status;
  Resolver resolver;
};

AsyncCall::AsyncCall(Napi::Env env)
    : deferred_(Napi::Promise::Deferred::New(env)), gate_(std::make_shared<TeardownGate>()) {}

AsyncCall* AsyncCall::Start(Napi::Env env, const char* name) {
  auto* call = new AsyncCall(env);
  napi_value resource_name;
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &resource_name);
  const napi_status created = napi_create_threadsafe_function(
      env, nullptr, nullptr, resource_name, 0, 1, call,
      [](napi_env e, void* data, void*) { Finalize(Napi::Env(e), static_cast<AsyncCall*>(data)); }, call,
      [](napi_env e, napi_value, void* context, void* data) {
        Settle(Napi::Env(e), static_cast<AsyncCall*>(context), static_cast<Settlement*>(data));
      },
      &call->tsfn_);
  if (created != napi_ok) {
    delete call;
    throw Napi::Error::New(env, "mnemo: cannot create a thread-safe function");
  }
  // Added after the thread-safe function so that it runs before the function's own hook.
  // Ownership: the hook borrows the gate; Finalize removes the hook before freeing it.
  napi_add_env_cleanup_hook(env, TeardownGate::WaitOnTeardown, call->gate_.get());
  return call;
}

void AsyncCall::Keep(Napi::Value value) {
  if (value.IsObject()) refs_.push_back(Napi::Persistent(value.As<Napi::Object>()));
}

void AsyncCall::Complete(Status status, Resolver resolver) {
  // Copies: once the gate opens, the JS thread may delete this call.
  std::shared_ptr<TeardownGate> gate = gate_;
  napi_threadsafe_function tsfn = tsfn_;
  auto* settlement = new Settlement{std::move(status), std::move(resolver)};
  if (napi_call_threadsafe_function(tsfn, settlement, napi_tsfn_nonblocking) != napi_ok) {
    // napi_closing: the environment is shutting down and nobody is left to settle; the call
    // already dropped this thread's hold on the function.
    delete settlement;
  } else {
    napi_release_threadsafe_function(tsfn, napi_tsfn_release);
  }
  gate->Finish();
}

void AsyncCall::Abandon(const Status& status) {
  Napi::Env env = deferred_.Env();
  deferred_.Reject(MakeNativeError(env, status).Value());
  std::shared_ptr<TeardownGate> gate = gate_;
  gate->Finish();
  napi_release_threadsafe_function(tsfn_, napi_tsfn_release);
}

void AsyncCall::Settle(Napi::Env env, AsyncCall* call, Settlement* settlement) {
  std::unique_ptr<Settlement> owned(settlement);
  // env is null when the environment is going away; nothing to settle then.
  if (env == nullptr || call == nullptr || settlement == nullptr) return;
  // No node-addon-api wrapper catches C++ exceptions here: a Node-API call that fails (a
  // worker being terminated has a pending termination exception) must not escape.
  try {
    if (owned->status.ok()) {
      call->deferred_.Resolve(owned->resolver ? owned->resolver(env) : env.Undefined());
    } else {
      call->deferred_.Reject(MakeNativeError(env, owned->status).Value());
    }
  } catch (const Napi::Error&) {
    // The environment is terminating; nobody can observe the Promise any more.
  }
}

void AsyncCall::Finalize(Napi::Env env, AsyncCall* call) {
  // Removing a hook that already ran is a no-op.
  napi_remove_env_cleanup_hook(env, TeardownGate::WaitOnTeardown, call->gate_.get());
  call->gate_->Wait();
  delete call;
}

void RunDetached(AsyncCall* call, std::function<Status(AsyncCall::Resolver*)> work) {
  // Detached: the call's gate (waited for at teardown) is what bounds the thread's life
  // relative to the environment.
  std::thread([call, work = std::move(work)] {
    AsyncCall::Resolver resolver;
    Status status = work(&resolver);
    call->Complete(std::move(status), std::move(resolver));
  }).detach();
}

}  // namespace mnemo::binding
