// Argument conversion shared by the kernel bindings: JS values → spans, sizes, geometry and
// attention batches, with assertions that throw NativeError('invalid_argument'). The same
// helpers read a direct call (CallbackInfo) and one entry of a submitted kernel list
// (an array `[op, ...args]`), so both paths check exactly the same rules.
#pragma once

#include <napi.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "binding/addon_state.h"
#include "kernels/kv_layout.h"

namespace mnemo::binding {

// Positional arguments: a call's own, or the elements of an array after `offset`.
class Args {
 public:
  Args(const Napi::CallbackInfo& info) : env_(info.Env()), info_(&info) {}  // NOLINT: implicit on purpose
  Args(Napi::Env env, Napi::Array list, uint32_t offset) : env_(env), list_(list), offset_(offset) {}

  Napi::Env Env() const { return env_; }
  size_t Length() const { return info_ ? info_->Length() : list_.Length() - offset_; }
  Napi::Value operator[](size_t i) const {
    if (info_) return (*info_)[i];
    return list_.Get(static_cast<uint32_t>(i + offset_));
  }

 private:
  Napi::Env env_;
  const Napi::CallbackInfo* info_ = nullptr;
  Napi::Array list_;
  uint32_t offset_ = 0;
};

[[noreturn]] inline void Invalid(Napi::Env env, const std::string& what) {
  ThrowStatus(env, Status::InvalidArgument(what));
}

inline void Need(Napi::Env env, bool ok, const char* what) {
  if (!ok) Invalid(env, what);
}

template <typename T>
struct Span {
  T* data;
  size_t size;
};

template <typename T, napi_typedarray_type kType>
Span<T> TypedArg(const Args& a, size_t i, const char* name) {
  Napi::Value v = i < a.Length() ? a[i] : a.Env().Undefined();
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != kType)
    Invalid(a.Env(), std::string(name) + (kType == napi_float32_array ? " must be a Float32Array" : " must be an Int32Array"));
  auto arr = v.As<Napi::TypedArrayOf<T>>();
  return {arr.Data(), arr.ElementLength()};
}

inline Span<float> F32(const Args& a, size_t i, const char* name) { return TypedArg<float, napi_float32_array>(a, i, name); }
inline Span<int32_t> I32(const Args& a, size_t i, const char* name) {
  return TypedArg<int32_t, napi_int32_array>(a, i, name);
}

inline double Num(const Args& a, size_t i, const char* name) {
  Napi::Value v = i < a.Length() ? a[i] : a.Env().Undefined();
  if (!v.IsNumber()) Invalid(a.Env(), std::string(name) + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

// A non-negative integer below 2^40 (no element count we handle is larger; keeps products
// of two sizes far from size_t overflow once checked with Mul()).
inline size_t Size(const Args& a, size_t i, const char* name) {
  const double d = Num(a, i, name);
  if (!(d >= 0 && d < 1099511627776.0 && std::floor(d) == d))
    Invalid(a.Env(), std::string(name) + " must be a non-negative integer");
  return static_cast<size_t>(d);
}

inline size_t Mul(Napi::Env env, size_t a, size_t b) {
  size_t r;
  if (__builtin_mul_overflow(a, b, &r)) Invalid(env, "size overflow");
  return r;
}

// geometry as four numbers starting at argument i: numLayers, numKvHeads, headDim, blockSize.
inline kernels::KvGeometry Geom(const Args& a, size_t i) {
  kernels::KvGeometry g{};
  g.num_layers = static_cast<int32_t>(Size(a, i, "numLayers"));
  g.num_kv_heads = static_cast<int32_t>(Size(a, i + 1, "numKvHeads"));
  g.head_dim = static_cast<int32_t>(Size(a, i + 2, "headDim"));
  g.block_size = static_cast<int32_t>(Size(a, i + 3, "blockSize"));
  Need(a.Env(), g.num_layers > 0 && g.num_kv_heads > 0 && g.head_dim > 0 && g.block_size > 0,
       "geometry values must be positive");
  Need(a.Env(), g.num_layers < (1 << 20) && g.num_kv_heads < (1 << 20) && g.head_dim < (1 << 20) && g.block_size < (1 << 20),
       "geometry values too large");
  return g;
}

// batch as five arguments starting at i: numSeqs, queryStart, contextLen, blockTables, maxBlocksPerSeq.
inline kernels::AttentionBatch Batch(const Args& a, size_t i) {
  Napi::Env env = a.Env();
  const size_t num_seqs = Size(a, i, "numSeqs");
  const auto qs = I32(a, i + 1, "queryStart");
  const auto ctx = I32(a, i + 2, "contextLen");
  const auto tables = I32(a, i + 3, "blockTables");
  const size_t max_blocks = Size(a, i + 4, "maxBlocksPerSeq");
  Need(env, num_seqs < INT32_MAX && max_blocks < INT32_MAX, "batch too large");
  Need(env, qs.size >= num_seqs + 1 && ctx.size >= num_seqs && tables.size >= Mul(env, num_seqs, max_blocks),
       "batch arrays shorter than numSeqs implies");
  return {static_cast<int32_t>(num_seqs), qs.data, ctx.data, tables.data, static_cast<int32_t>(max_blocks)};
}

}  // namespace mnemo::binding
