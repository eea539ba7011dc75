// Per-environment state of the addon and the JS error plumbing shared by every binding.
//
// Each Node environment (main thread, each worker_thread) that loads the addon gets its
// own AddonState, stored as Node-API instance data. An environment clean-up hook closes it
// (joins the pool threads) when the environment exits; the instance-data finalizer frees it.
#pragma once

#include <napi.h>

#include <memory>
#include <mutex>
#include <optional>

#include "core/copy_engine.h"
#include "core/cuda/cuda_runtime.h"
#include "core/pool/host_pool.h"
#include "core/pool/ssd_device.h"
#include "core/status.h"
#include "core/task_queue.h"

namespace mnemo::binding {

class AddonState {
 public:
  // The JS class thrown for native failures (see lifecycle_binding.cc `init`); called as
  // `new ErrorClass(message, code)`. Empty until init() ran; then plain Error + `code`.
  Napi::FunctionReference error_class;
  // Constructors of the pool device classes (pool_wraps.h); instances are only made by the
  // open functions, which hand the native device to the constructor through `pending_*`.
  Napi::FunctionReference host_pool_class;
  Napi::FunctionReference ssd_pool_class;
  std::shared_ptr<HostPool> pending_host_pool;
  std::shared_ptr<SsdDevice> pending_ssd;

  // Thread count for the pool; only effective before the pool's first use.
  void set_thread_count(size_t threads) { thread_count_ = threads; }

  // Lazily started pool for copies and I/O (JS thread only). kClosed after Close().
  Status Pool(TaskQueue** out);
  Status Copy(CopyEngine** out);
  // Lazily started one-thread queue that runs submitted kernel lists in order; that thread
  // is the calling lane of the kernels' parallel-for, so a running list uses exactly the
  // kernel pool's lanes and the JS thread stays free. kClosed after Close().
  Status Compute(TaskQueue** out);

  // Queried once, on first use: the first CUDA call loads the driver (slow on a GPU host).
  const cuda::CudaInfo& Cuda();

  // Stops accepting work, finishes queued work, joins threads. Idempotent.
  void Close();
  bool closed() const { return closed_; }

 private:
  bool closed_ = false;
  size_t thread_count_ = 0;  // 0: TaskQueue::DefaultThreadCount()
  std::unique_ptr<TaskQueue> pool_;
  std::unique_ptr<TaskQueue> compute_;
  std::unique_ptr<CopyEngine> copy_;
  std::once_flag cuda_once_;
  cuda::CudaInfo cuda_;
};

// Creates the state for `env` and registers its clean-up (called once by addon.cc).
void InstallAddonState(Napi::Env env);
AddonState& State(Napi::Env env);

// A JS error object for a non-OK status: instance of the registered error class, with
// `code` = StatusCodeName(status.code()).
Napi::Error MakeNativeError(Napi::Env env, const Status& status);

// Throws MakeNativeError(env, status) as a C++ exception (NAPI_CPP_EXCEPTIONS), which
// node-addon-api turns into a JS throw when the binding function returns.
[[noreturn]] void ThrowStatus(Napi::Env env, const Status& status);

// Throws unless `status` is OK.
inline void ThrowIfError(Napi::Env env, const Status& status) {
  if (!status.ok()) ThrowStatus(env, status);
}

}  // namespace mnemo::binding
