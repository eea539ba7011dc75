// One asynchronous native call seen from JS: a Promise that a native thread settles through
// a thread-safe function, references that keep JS objects (buffers, devices) alive while
// native threads use them, and native owners (host buffers, pool regions, devices) that keep
// native memory alive even if the JS side lets go first.
//
// Ownership: Start() returns a call owned by its thread-safe function. Complete() must be
// called exactly once (from any thread), or Abandon() on the JS thread when no work was
// started. The call is deleted on the JS thread once the Promise settled — or during
// environment teardown, after the work finished: a per-call clean-up hook waits for it,
// because Node deletes thread-safe functions in its own clean-up hooks, and frees external
// ArrayBuffers even before any hook runs.
#pragma once

#include <napi.h>

#include <functional>
#include <memory>
#include <vector>

#include "core/status.h"

namespace mnemo::binding {

struct TeardownGate;

class AsyncCall {
 public:
  // Produces the resolve value on the JS thread (undefined when null).
  using Resolver = std::function<Napi::Value(Napi::Env)>;

  static AsyncCall* Start(Napi::Env env, const char* name);

  Napi::Promise promise() const { return deferred_.Promise(); }
  // JS thread, before the work starts: keep `value` (an object) referenced until settled.
  void Keep(Napi::Value value);
  // JS thread, before the work starts: keep a native owner alive until settled.
  void KeepAlive(std::shared_ptr<void> owner) { owners_.push_back(std::move(owner)); }

  // Any thread, exactly once: settles the Promise with `resolver`'s value or the error.
  void Complete(Status status, Resolver resolver = nullptr);
  // JS thread, instead of Complete() when nothing was started: rejects now.
  void Abandon(const Status& status);

 private:
  struct Settlement;

  explicit AsyncCall(Napi::Env env);
  static void Settle(Napi::Env env, AsyncCall* call, Settlement* settlement);
  static void Finalize(Napi::Env env, AsyncCall* call);

  Napi::Promise::Deferred deferred_;
  std::vector<Napi::ObjectReference> refs_;
  std::vector<std::shared_ptr<void>> owners_;
  std::shared_ptr<TeardownGate> gate_;
  napi_threadsafe_function tsfn_ = nullptr;
};

// Converts a call's JS arguments with `read` (returning a Status). A getter that throws while
// they are read becomes InvalidArgument instead of escaping, so the caller can still Abandon()
// the call it started.
template <typename Read>
Status ReadArgs(Read&& read) {
  try {
    return read();
  } catch (const Napi::Error& e) {
    return Status::InvalidArgument(e.Message());
  }
}

// A Promise-returning call: `read(call)` converts the arguments (as ReadArgs), then
// `submit(call)` hands the work over, which completes `call` later. A failure of either
// rejects the Promise at once, since then nothing will complete it.
template <typename Read, typename Submit>
Napi::Value PromiseCall(Napi::Env env, const char* name, Read&& read, Submit&& submit) {
  AsyncCall* call = AsyncCall::Start(env, name);
  Napi::Promise promise = call->promise();
  Status status = ReadArgs([&] { return read(call); });
  if (status.ok()) status = submit(call);
  if (!status.ok()) call->Abandon(status);
  return promise;
}

// Runs `work` on a new thread of its own (not libuv's pool), then completes `call` with its
// status and resolver. For rare, blocking work: opening devices, probes.
void RunDetached(AsyncCall* call, std::function<Status(AsyncCall::Resolver*)> work);

}  // namespace mnemo::binding
