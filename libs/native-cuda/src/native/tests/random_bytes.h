// Seeded random bytes for tests: the same seed gives the same bytes on every run and machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace mnemo::test {

inline std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

}  // namespace mnemo::test
