// batchCopy(buffers: ArrayBuffer[], ranges: Float64Array): Promise<void>
//
// ranges: [n, 5] rows of (srcBuffer, srcOffset, dstBuffer, dstOffset, length), indices into
// `buffers`, offsets and lengths in bytes. The JS values are converted into a plain
// CopyBatch (the baton) on the JS thread; the copy runs on the native pool; the Promise
// settles on the JS thread through a thread-safe function.
#include <napi.h>

#include <cmath>
#include <condition_variable>
#include <mutex>
#include <memory>
#include <string>
#include <vector>

#include "binding/addon_state.h"
#include "binding/host_buffer_registry.h"
#include "binding/registry.h"
#include "core/copy_engine.h"

namespace mnemo::binding {
namespace {

constexpr size_t kRangeFields = 5;
constexpr double kMaxSafeInteger = 9007199254740991.0;

// Signals that the pool is done with a call: every byte copied and the thread-safe
// function no longer touched.
struct CompletionGate {
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

// JS-side state of one call. Ownership: the thread-safe function's finalizer deletes it,
// on the JS thread, after the last Release() — or earlier, when the environment is torn
// down with the copy still running (Node finalizes and frees every thread-safe function
// in its own clean-up hooks, which run before ours).
struct CopyCall {
  explicit CopyCall(Napi::Env env) : deferred(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise::Deferred deferred;
  // Keeps every ArrayBuffer alive while pool threads read/write its memory.
  std::vector<Napi::Reference<Napi::ArrayBuffer>> buffers;
  std::shared_ptr<CompletionGate> gate = std::make_shared<CompletionGate>();
};

// Environment teardown with this call in flight: Node runs clean-up hooks newest first, so
// this per-call hook (added after the call's thread-safe function was created) runs before
// Node deletes that function; waiting here means the pool has stopped touching it. Copies
// are finite memcpys that need nothing from the JS thread, so the wait is bounded.
// (External ArrayBuffers are freed even earlier, before any hook runs: allocHostBuffer
// memory is kept alive by the batch's shared owners instead, see host_buffer_registry.h.)
void WaitForCallOnTeardown(void* gate) { static_cast<CompletionGate*>(gate)->Wait(); }

// Runs on the JS thread, after the last Release() or during teardown.
void FinalizeCall(Napi::Env env, void*, CopyCall* call) {
  // Removing a hook that already ran is a no-op.
  napi_remove_env_cleanup_hook(env, WaitForCallOnTeardown, call->gate.get());
  call->gate->Wait();
  delete call;
}

void SettleOnJsThread(Napi::Env env, Napi::Function, CopyCall* call, Status* result) {
  std::unique_ptr<Status> status(result);
  // env is null when the environment is going away; nothing to settle then.
  if (env == nullptr || call == nullptr || status == nullptr) return;
  // No node-addon-api wrapper catches C++ exceptions here: a Node-API call that fails
  // (a worker being terminated has a pending termination exception) must not escape.
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

using CopyTsfn = Napi::TypedThreadSafeFunction<CopyCall, Status, SettleOnJsThread>;

// Converts the JS arguments into a CopyBatch. The wrapper validated them already, so these
// checks are assertions; they still fail cleanly rather than trust the caller.
Status ToBatch(const Napi::CallbackInfo& info, CopyBatch* batch, CopyCall* call) {
  if (info.Length() < 2 || !info[0].IsArray() || !info[1].IsTypedArray() ||
      info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
    return Status::InvalidArgument("batchCopy(buffers: ArrayBuffer[], ranges: Float64Array)");
  }
  Napi::Array buffers = info[0].As<Napi::Array>();
  const uint32_t buffer_count = buffers.Length();
  batch->buffers.reserve(buffer_count);
  call->buffers.reserve(buffer_count);
  for (uint32_t i = 0; i < buffer_count; ++i) {
    Napi::Value v = buffers.Get(i);
    if (!v.IsArrayBuffer()) {
      return Status::InvalidArgument("buffers[" + std::to_string(i) + "] is not an ArrayBuffer");
    }
    Napi::ArrayBuffer ab = v.As<Napi::ArrayBuffer>();
    batch->buffers.push_back({static_cast<uint8_t*>(ab.Data()), ab.ByteLength()});
    call->buffers.push_back(Napi::Persistent(ab));
  }

  Napi::Float64Array ranges = info[1].As<Napi::Float64Array>();
  const size_t values = ranges.ElementLength();
  if (values % kRangeFields != 0) {
    return Status::InvalidArgument("ranges length must be a multiple of 5");
  }
  const double* r = ranges.Data();
  batch->ranges.resize(values / kRangeFields);
  for (size_t i = 0; i < batch->ranges.size(); ++i, r += kRangeFields) {
    for (size_t f = 0; f < kRangeFields; ++f) {
      if (!(r[f] >= 0 && r[f] <= kMaxSafeInteger) || std::floor(r[f]) != r[f]) {
        return Status::InvalidArgument("ranges[" + std::to_string(i * kRangeFields + f) +
                                       "] is not a non-negative safe integer");
      }
    }
    if (r[0] >= buffer_count || r[2] >= buffer_count) {
      return Status::OutOfRange("range " + std::to_string(i) + ": buffer index out of range");
    }
    batch->ranges[i] = {static_cast<uint32_t>(r[0]), static_cast<uint64_t>(r[1]),
                        static_cast<uint32_t>(r[2]), static_cast<uint64_t>(r[3]),
                        static_cast<uint64_t>(r[4])};
  }
  return Status::Ok();
}

Napi::Value BatchCopy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // unique_ptr until the thread-safe function takes ownership (a JS exception thrown by a
  // getter during conversion must not leak the call).
  auto owned = std::make_unique<CopyCall>(env);
  Napi::Promise promise = owned->deferred.Promise();

  CopyBatch batch;
  CopyEngine* engine = nullptr;
  Status status = ToBatch(info, &batch, owned.get());
  if (status.ok()) status = State(env).Copy(&engine);
  if (!status.ok()) {
    owned->deferred.Reject(MakeNativeError(env, status).Value());
    return promise;
  }

  // One thread-safe function per call; the pool thread that finishes the batch posts the
  // result and releases it. It keeps the event loop alive while the copy is in flight.
  CopyCall* call = owned.release();
  std::shared_ptr<CompletionGate> gate = call->gate;
  CopyTsfn tsfn = CopyTsfn::New(env, "mnemo.batchCopy", 0, 1, call, FinalizeCall);
  // Added after the thread-safe function so that it runs before the function's own hook.
  // Ownership: the hook borrows the gate; FinalizeCall removes the hook before freeing it.
  napi_add_env_cleanup_hook(env, WaitForCallOnTeardown, gate.get());
  // allocHostBuffer memory stays allocated until the batch is done, even if its
  // ArrayBuffer is finalized first (environment teardown).
  std::vector<std::shared_ptr<HostAllocation>> buffer_owners;
  for (const CopyBuffer& b : batch.buffers) {
    if (auto owner = FindHostBuffer(b.data)) buffer_owners.push_back(std::move(owner));
  }
  status = engine->Submit(batch, [tsfn, gate, owners = std::move(buffer_owners)](Status result) mutable {
    auto* boxed = new Status(std::move(result));
    const napi_status posted = tsfn.NonBlockingCall(boxed);
    if (posted != napi_ok) {
      // napi_closing: the environment is shutting down and nobody is left to settle;
      // the call already dropped this thread's hold on the function.
      delete boxed;
    } else {
      tsfn.Release();
    }
    gate->Finish();
  });
  if (!status.ok()) {
    // Nothing was queued: settle now; Release() lets the finalizer free `call`.
    call->deferred.Reject(MakeNativeError(env, status).Value());
    gate->Finish();
    tsfn.Release();
  }
  return promise;
}

Napi::Object InitCopy(Napi::Env env, Napi::Object exports) {
  exports.Set("batchCopy", Napi::Function::New(env, BatchCopy, "batchCopy"));
  return exports;
}

}  // namespace
}  // namespace mnemo::binding

MNEMO_REGISTER_BINDING(copy, mnemo::binding::InitCopy);
