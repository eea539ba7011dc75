// The transfers' copy kernel: exact bytes for every relative alignment, length and hint,
// never a byte outside the destination.
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/byte_copy.h"
#include "tests/check.h"

namespace mnemo {
namespace {

MNEMO_TEST(byte_copy, copies_exactly_at_every_alignment_and_length) {
  std::mt19937 rng(1);
  std::vector<uint8_t> src(1 << 20);
  for (auto& b : src) b = static_cast<uint8_t>(rng());
  std::vector<uint8_t> dst(src.size() + 256);
  std::vector<size_t> lengths;
  for (size_t n = 0; n < 1200; n += 7) lengths.push_back(n);
  for (size_t n : {size_t{4095}, size_t{4096}, size_t{65537}, size_t{300000}, size_t{(1 << 20) - 64}}) lengths.push_back(n);
  for (CopyHint hint : {CopyHint::kCached, CopyHint::kStreaming}) {
    for (size_t s_off : {size_t{0}, size_t{3}, size_t{16}, size_t{33}}) {
      for (size_t d_off : {size_t{0}, size_t{1}, size_t{16}, size_t{40}}) {
        for (size_t n : lengths) {
          if (s_off + n > src.size()) continue;
          std::memset(dst.data(), 0xEE, dst.size());
          CopyBytes(dst.data() + 64 + d_off, src.data() + s_off, n, hint);
          CHECK(std::memcmp(dst.data() + 64 + d_off, src.data() + s_off, n) == 0);
          // Sentinels on both sides are untouched.
          for (size_t i = 0; i < 64 + d_off; ++i) CHECK_EQ(dst[i], 0xEE);
          for (size_t i = 64 + d_off + n; i < std::min(dst.size(), 64 + d_off + n + 64); ++i) CHECK_EQ(dst[i], 0xEE);
        }
      }
    }
  }
  const std::string name = CopyKernelName();
  CHECK(name == "avx2" || name == "memcpy");
}

}  // namespace
}  // namespace mnemo
