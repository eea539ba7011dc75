// Shared helpers of the kernel tests: seeded inputs, sentinel-guarded outputs, comparisons.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/check.h"

namespace mnemo::test {

// SplitMix64: tiny, seedable, identical on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float Uniform(float lo, float hi) { return lo + (hi - lo) * static_cast<float>(Next() >> 40) / 16777216.0f; }
  int32_t Int(int32_t lo, int32_t hi_exclusive) {
    return lo + static_cast<int32_t>(Next() % static_cast<uint64_t>(hi_exclusive - lo));
  }
  std::vector<float> Floats(std::size_t n, float lo = -1.0f, float hi = 1.0f) {
    std::vector<float> v(n);
    for (auto& x : v) x = Uniform(lo, hi);
    return v;
  }

 private:
  uint64_t state_;
};

// An output buffer followed by sentinel floats; Intact() says whether a kernel wrote past it.
class Guarded {
 public:
  static constexpr std::size_t kGuard = 64;
  static constexpr float kSentinel = -7.25e30f;
  explicit Guarded(std::size_t n, float fill = 0.0f) : n_(n), buf_(n + kGuard, kSentinel) {
    for (std::size_t i = 0; i < n; ++i) buf_[i] = fill;
  }
  float* data() { return buf_.data(); }
  const float* data() const { return buf_.data(); }
  float& operator[](std::size_t i) { return buf_[i]; }
  float operator[](std::size_t i) const { return buf_[i]; }
  std::size_t size() const { return n_; }
  bool Intact() const {
    for (std::size_t i = n_; i < buf_.size(); ++i)
      if (buf_[i] != kSentinel) return false;
    return true;
  }

 private:
  std::size_t n_;
  std::vector<float> buf_;
};

// Largest |a[i] - b[i]| (NaN counts as infinity).
inline double MaxAbsDiff(const float* a, const double* b, std::size_t n) {
  double worst = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
  }
  return worst;
}

inline bool BitEqual(const float* a, const float* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

// Case label for failure messages of parametrised tests.
inline std::string Label(const char* what, std::initializer_list<long long> params) {
  std::string s = what;
  for (long long p : params) s += " " + std::to_string(p);
  return s;
}

}  // namespace mnemo::test

// CHECK with a case label, so a parametrised failure names its parameters.
#define CHECK_CASE(cond, label)                                                            \
  do {                                                                                     \
    if (!(cond)) ::mnemo::test::Fail(__FILE__, __LINE__, std::string("CHECK(" #cond ") failed for ") + (label)); \
  } while (0)
