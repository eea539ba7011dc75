// Fixed-order reductions. Element i always lands in lane i % kLanes and the lanes are
// combined by the same pairwise tree, so a result depends only on the inputs and their
// length. The explicit lanes are also what lets GCC vectorise without -ffast-math
// (it may not reassociate a single running sum).
#pragma once

#include <cstddef>

namespace mnemo::kernels::cpu {

constexpr std::size_t kLanes = 8;

// Pairwise tree over the lanes: ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
inline float CombineLanes(float* acc) {
  for (std::size_t width = kLanes / 2; width > 0; width /= 2)
    for (std::size_t l = 0; l < width; ++l) acc[l] += acc[l + width];
  return acc[0];
}

inline float Dot(const float* a, const float* b, std::size_t n) {
  float acc[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  for (std::size_t l = 0; i + l < n; ++l) acc[l] += a[i + l] * b[i + l];
  return CombineLanes(acc);
}

inline float SumSquares(const float* a, std::size_t n) { return Dot(a, a, n); }

}  // namespace mnemo::kernels::cpu
