// batchCopy(buffers: ArrayBuffer[], ranges: Float64Array): Promise<void>
//
// ranges: [n, 5] rows of (srcBuffer, srcOffset, dstBuffer, dstOffset, length), indices into
// `buffers`, offsets and lengths in bytes. The JS values are converted into a plain
// CopyBatch (the baton) on the JS thread; the copy runs on the native pool; the Promise
// settles on the JS thread through the call's thread-safe function (binding/async_call.h).
#include <napi.h>

#include <cmath>
#include <string>

#include "binding/addon_state.h"
#include "binding/async_call.h"
#include "binding/host_buffer_registry.h"
#include "binding/registry.h"
#include "core/copy_engine.h"

namespace mnemo::binding {
namespace {

constexpr size_t kRangeFields = 5;
constexpr double kMaxSafeInteger = 9007199254740991.0;

// Converts the JS arguments into a CopyBatch. The wrapper validated them already, so these
// checks are assertions; they still fail cleanly rather than trust the caller.
Status ToBatch(const Napi::CallbackInfo& info, CopyBatch* batch, AsyncCall* call) {
  if (info.Length() < 2 || !info[0].IsArray() || !info[1].IsTypedArray() ||
      info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
    return Status::InvalidArgument("batchCopy(buffers: ArrayBuffer[], ranges: Float64Array)");
  }
  Napi::Array buffers = info[0].As<Napi::Array>();
  const uint32_t buffer_count = buffers.Length();
  batch->buffers.reserve(buffer_count);
  for (uint32_t i = 0; i < buffer_count; ++i) {
    Napi::Value v = buffers.Get(i);
    if (!v.IsArrayBuffer()) {
      return Status::InvalidArgument("buffers[" + std::to_string(i) + "] is not an ArrayBuffer");
    }
    Napi::ArrayBuffer ab = v.As<Napi::ArrayBuffer>();
    batch->buffers.push_back({static_cast<uint8_t*>(ab.Data()), ab.ByteLength()});
    // Keeps the ArrayBuffer alive while pool threads read/write its memory; allocHostBuffer
    // memory stays allocated until the batch is done even if its ArrayBuffer is finalized
    // first (environment teardown frees external buffers before any hook runs).
    call->Keep(ab);
    if (auto owner = FindHostBuffer(ab.Data())) call->KeepAlive(std::move(owner));
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
  CopyBatch batch;
  return PromiseCall(
      env, "mnemo.batchCopy", [&](AsyncCall* call) { return ToBatch(info, &batch, call); },
      [&](AsyncCall* call) {
        CopyEngine* engine = nullptr;
        MNEMO_RETURN_IF_ERROR(State(env).Copy(&engine));
        // The pool thread that finishes the batch settles the Promise.
        return engine->Submit(batch, [call](Status result) { call->Complete(std::move(result)); });
      });
}

MNEMO_REGISTER_FUNCTIONS(copy, {"batchCopy", BatchCopy});

}  // namespace
}  // namespace mnemo::binding
