// transfer(operands: Operand[], ranges: Float64Array, crcs: Float64Array, onCompute?: boolean):
//   Promise<{ crcs: Uint32Array, fusedCrcs: number }>
//
// onCompute: a memory-only batch runs on the compute queue, between two kernel batches, its
// copies spread over the CPU kernel lanes (RunTransferInline), instead of on the copy pool.
// operands: ArrayBuffer | ArrayBufferView (its bytes) | HostPool | SsdPool.
// ranges: [n, 5] rows of (src, srcOffset, dst, dstOffset, length); crcs: [m, 3] rows of
// (operand, offset, length). The JS values are converted into a plain TransferBatch (the
// baton) on the JS thread; the work runs on the copy pool and the devices' workers.
#include <napi.h>

#include <cmath>
#include <string>

#include "binding/addon_state.h"
#include "binding/async_call.h"
#include "binding/host_buffer_registry.h"
#include "binding/pool_wraps.h"
#include "binding/registry.h"
#include "core/pool/transfer.h"
#include "kernels/cpu/parallel_for.h"

namespace mnemo::binding {
namespace {

constexpr double kMaxSafeInteger = 9007199254740991.0;

// Memory of an ArrayBuffer or a view; keeps allocHostBuffer memory alive through `call`.
Status MemoryOperand(Napi::Value v, AsyncCall* call, TransferOperand* out) {
  Napi::ArrayBuffer ab;
  size_t offset = 0;
  size_t length = 0;
  if (v.IsArrayBuffer()) {
    ab = v.As<Napi::ArrayBuffer>();
    length = ab.ByteLength();
  } else if (v.IsTypedArray()) {
    Napi::TypedArray t = v.As<Napi::TypedArray>();
    ab = t.ArrayBuffer();
    offset = t.ByteOffset();
    length = t.ByteLength();
  } else if (v.IsDataView()) {
    Napi::DataView d = v.As<Napi::DataView>();
    ab = d.ArrayBuffer();
    offset = d.ByteOffset();
    length = d.ByteLength();
  } else {
    return Status::InvalidArgument("not memory");
  }
  auto* base = static_cast<uint8_t*>(ab.Data());
  call->Keep(v);
  if (auto owner = FindHostBuffer(base)) call->KeepAlive(std::move(owner));
  *out = {OperandKind::kMemory, base == nullptr ? nullptr : base + offset, length, nullptr};
  return Status::Ok();
}

Status ToOperands(Napi::Array operands, AsyncCall* call, TransferBatch* batch) {
  const uint32_t n = operands.Length();
  batch->operands.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    Napi::Value v = operands.Get(i);
    const std::string which = "operands[" + std::to_string(i) + "]";
    const PoolObject pool = ResolvePoolObject(v);
    if (pool.kind == PoolObjectKind::kHost) {
      if (!pool.host) return Status::Closed(which + " is a closed host pool");
      call->Keep(v);
      call->KeepAlive(pool.host);
      batch->operands[i] = {OperandKind::kMemory, pool.host->data(), pool.host->size(), nullptr};
    } else if (pool.kind == PoolObjectKind::kSsd) {
      if (!pool.ssd) return Status::Closed(which + " is a closed SSD pool");
      call->Keep(v);
      call->KeepAlive(pool.ssd);
      batch->operands[i] = {OperandKind::kSsd, nullptr, pool.ssd->size(), pool.ssd.get()};
    } else if (!MemoryOperand(v, call, &batch->operands[i]).ok()) {
      return Status::InvalidArgument(which + " is not an ArrayBuffer, a view, a HostPool or an SsdPool");
    }
  }
  return Status::Ok();
}

// Rows of `fields` non-negative safe integers.
Status ToRows(Napi::Value v, size_t fields, const char* name, std::vector<double>* out) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
    return Status::InvalidArgument(std::string(name) + " must be a Float64Array");
  }
  Napi::Float64Array a = v.As<Napi::Float64Array>();
  if (a.ElementLength() % fields != 0) {
    return Status::InvalidArgument(std::string(name) + " length must be a multiple of " + std::to_string(fields));
  }
  out->assign(a.Data(), a.Data() + a.ElementLength());
  for (size_t i = 0; i < out->size(); ++i) {
    const double d = (*out)[i];
    if (!(d >= 0 && d <= kMaxSafeInteger) || std::floor(d) != d) {
      return Status::InvalidArgument(std::string(name) + "[" + std::to_string(i) + "] is not a non-negative safe integer");
    }
  }
  return Status::Ok();
}

Status ToBatch(const Napi::CallbackInfo& info, AsyncCall* call, TransferBatch* batch) {
  if (info.Length() < 3 || !info[0].IsArray()) {
    return Status::InvalidArgument("transfer(operands: Operand[], ranges: Float64Array, crcs: Float64Array)");
  }
  MNEMO_RETURN_IF_ERROR(ToOperands(info[0].As<Napi::Array>(), call, batch));
  std::vector<double> r;
  MNEMO_RETURN_IF_ERROR(ToRows(info[1], 5, "ranges", &r));
  std::vector<double> c;
  MNEMO_RETURN_IF_ERROR(ToRows(info[2], 3, "crcs", &c));
  const double n = static_cast<double>(batch->operands.size());
  for (size_t i = 0; i < r.size(); i += 5) {
    if (r[i] >= n || r[i + 2] >= n) return Status::OutOfRange("range " + std::to_string(i / 5) + ": operand out of range");
    batch->ranges.push_back({static_cast<uint32_t>(r[i]), static_cast<uint64_t>(r[i + 1]), static_cast<uint32_t>(r[i + 2]),
                             static_cast<uint64_t>(r[i + 3]), static_cast<uint64_t>(r[i + 4])});
  }
  for (size_t i = 0; i < c.size(); i += 3) {
    if (c[i] >= n) return Status::OutOfRange("crc " + std::to_string(i / 3) + ": operand out of range");
    batch->crcs.push_back({static_cast<uint32_t>(c[i]), static_cast<uint64_t>(c[i + 1]), static_cast<uint64_t>(c[i + 2])});
  }
  return Status::Ok();
}

Napi::Object ResultObject(Napi::Env e, const TransferResult& result) {
  Napi::Object out = Napi::Object::New(e);
  Napi::Uint32Array crcs = Napi::Uint32Array::New(e, result.crcs.size());
  for (size_t i = 0; i < result.crcs.size(); ++i) crcs[i] = result.crcs[i];
  out.Set("crcs", crcs);
  out.Set("fusedCrcs", static_cast<double>(result.fused_crcs));
  return out;
}

void Settle(AsyncCall* call, Status s, TransferResult result) {
  if (!s.ok()) {
    call->Complete(std::move(s));
    return;
  }
  call->Complete(Status::Ok(), [result = std::move(result)](Napi::Env e) -> Napi::Value { return ResultObject(e, result); });
}

// The kernel lanes as a ParallelRun: the compute queue's thread is one of them.
void OnKernelLanes(size_t n, const std::function<void(size_t)>& fn) {
  kernels::cpu::ParallelFor(n, 1, [&fn](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) fn(i);
  });
}

// Validated now (a bad batch rejects without queueing), run when the compute queue gets to it.
Status SubmitOnCompute(TransferBatch batch, TaskQueue& compute, AsyncCall* call) {
  MNEMO_RETURN_IF_ERROR(ValidateInlineTransfer(batch));
  return compute.Submit([batch = std::move(batch), call] {
    TransferResult result;
    const Status s = RunTransferInline(batch, kernels::cpu::KernelPool().lanes(), OnKernelLanes, &result);
    Settle(call, s, std::move(result));
  });
}

Napi::Value Transfer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TransferBatch batch;
  return PromiseCall(
      env, "mnemo.transfer", [&](AsyncCall* call) { return ToBatch(info, call, &batch); },
      [&](AsyncCall* call) -> Status {
        if (info.Length() > 3 && info[3].ToBoolean().Value()) {
          TaskQueue* compute = nullptr;
          MNEMO_RETURN_IF_ERROR(State(env).Compute(&compute));
          return SubmitOnCompute(std::move(batch), *compute, call);
        }
        TaskQueue* pool = nullptr;
        MNEMO_RETURN_IF_ERROR(State(env).Pool(&pool));
        return SubmitTransfer(batch, *pool, [call](Status s, TransferResult result) { Settle(call, std::move(s), std::move(result)); });
      });
}

MNEMO_REGISTER_FUNCTIONS(transfer, {"transfer", Transfer});

}  // namespace
}  // namespace mnemo::binding
