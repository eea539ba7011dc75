// Integer checks of the pool and probe bindings. Their TypeScript wrappers validate first,
// so a failed check is an assertion: callers throw one InvalidArgument naming the whole
// signature rather than a per-argument message (kernel_args.h's Size() is the throwing kind).
#pragma once

#include <napi.h>

#include <cmath>

namespace mnemo::binding {

// True when v is a number holding an integer in [lo, hi].
inline bool IsInteger(const Napi::Value& v, double lo, double hi) {
  if (!v.IsNumber()) return false;
  const double d = v.As<Napi::Number>().DoubleValue();
  return d >= lo && d <= hi && std::floor(d) == d;
}

}  // namespace mnemo::binding
