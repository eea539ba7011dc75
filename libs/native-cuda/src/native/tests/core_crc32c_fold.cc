// The folded (VPCLMULQDQ) CRC32C against the table implementation: known answers, every
// length around the 64/256-byte fold boundaries, odd offsets and seeds, and the copying
// variant on both its cached and its streaming-store paths (with guards around the output).
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/crc32c.h"
#include "core/crc32c_fold.h"
#include "tests/check.h"
#include "tests/random_bytes.h"

namespace mnemo {
namespace {

using test::RandomBytes;

MNEMO_TEST(crc32c_fold, known_answers) {
  if (!Crc32cFoldAvailable()) SKIP("no AVX-512 VPCLMULQDQ on this CPU");
  CHECK_EQ(Crc32cFold(0, "123456789", 9), 0xE3069283u);
  std::vector<uint8_t> v(512, 0x00);
  CHECK_EQ(Crc32cFold(0, v.data(), 32), 0x8A9136AAu);
  CHECK_EQ(Crc32cFold(0, v.data(), v.size()), Crc32cSoftware(0, v.data(), v.size()));
  std::fill(v.begin(), v.end(), 0xFF);
  CHECK_EQ(Crc32cFold(0, v.data(), 32), 0x62A8AB43u);
  CHECK_EQ(Crc32cFold(0, v.data(), v.size()), Crc32cSoftware(0, v.data(), v.size()));
}

MNEMO_TEST(crc32c_fold, matches_software_on_every_length_offset_and_seed) {
  if (!Crc32cFoldAvailable()) SKIP("no AVX-512 VPCLMULQDQ on this CPU");
  const std::vector<uint8_t> data = RandomBytes(20000, 41);
  std::mt19937 rng(43);
  // Every length up to 1100 crosses each fold boundary (64, 256, 256 + k·64) with each tail.
  for (size_t length = 0; length <= 1100; ++length) {
    const size_t offset = rng() % 64;
    const uint32_t seed = length % 3 == 0 ? 0 : rng();
    CHECK_EQ(Crc32cFold(seed, data.data() + offset, length), Crc32cSoftware(seed, data.data() + offset, length));
  }
  for (int i = 0; i < 200; ++i) {
    const size_t offset = rng() % 64;
    const size_t length = rng() % (data.size() - offset);
    const uint32_t seed = rng();
    CHECK_EQ(Crc32cFold(seed, data.data() + offset, length), Crc32cSoftware(seed, data.data() + offset, length));
  }
}

// Copies through Crc32cFoldCopy into a guarded buffer and checks bytes, CRC and guards.
void CheckCopy(const std::vector<uint8_t>& data, size_t s_off, size_t d_off, size_t length, uint32_t seed) {
  constexpr size_t kGuard = 128;
  // 64-aligned storage so d_off alone decides the alignment (and so the streaming path).
  std::vector<uint8_t> raw(length + 2 * kGuard + 64, 0xEE);
  uint8_t* base = raw.data() + ((64 - (reinterpret_cast<uintptr_t>(raw.data()) & 63)) & 63);
  uint8_t* out = base + kGuard + d_off;
  CHECK_EQ(Crc32cFoldCopy(seed, out, data.data() + s_off, length), Crc32cSoftware(seed, data.data() + s_off, length));
  CHECK(std::memcmp(out, data.data() + s_off, length) == 0);
  for (uint8_t* g = raw.data(); g < out; ++g) CHECK_EQ(*g, 0xEE);
  for (uint8_t* g = out + length; g < raw.data() + raw.size(); ++g) CHECK_EQ(*g, 0xEE);
}

MNEMO_TEST(crc32c_fold, copy_copies_exactly_and_matches_small) {
  if (!Crc32cFoldAvailable()) SKIP("no AVX-512 VPCLMULQDQ on this CPU");
  const std::vector<uint8_t> data = RandomBytes(40000, 47);
  std::mt19937 rng(53);
  for (size_t length = 0; length <= 700; ++length) CheckCopy(data, rng() % 64, rng() % 64, length, length % 2 ? rng() : 0);
  for (int i = 0; i < 100; ++i) CheckCopy(data, rng() % 64, rng() % 64, rng() % 39000, rng());
}

MNEMO_TEST(crc32c_fold, copy_streams_large_aligned_destinations) {
  if (!Crc32cFoldAvailable()) SKIP("no AVX-512 VPCLMULQDQ on this CPU");
  // 1 MiB + odd tails: aligned destinations take the streaming-store path, others do not.
  const std::vector<uint8_t> data = RandomBytes((1 << 20) + 4096, 59);
  for (size_t d_off : {size_t{0}, size_t{64}, size_t{8}}) {
    for (size_t length : {size_t{1} << 20, (size_t{1} << 20) + 37, (size_t{512} << 10) + 64}) {
      CheckCopy(data, 3, d_off, length, 0x1234u);
    }
  }
}

MNEMO_TEST(crc32c_fold, selected_when_available) {
  if (!Crc32cFoldAvailable()) SKIP("no AVX-512 VPCLMULQDQ on this CPU");
  CHECK_EQ(std::string(Crc32cImplementation()), std::string("vpclmulqdq"));
  const std::vector<uint8_t> data = RandomBytes(100000, 61);
  std::vector<uint8_t> out(data.size());
  CHECK_EQ(Crc32cCopy(7, out.data(), data.data(), data.size()), Crc32cHardwareCopy(7, out.data(), data.data(), data.size()));
}

MNEMO_TEST(crc32c_fold, select_switches_implementations_and_refuses_unknown_ones) {
  const std::vector<std::string> names = Crc32cImplementations();
  CHECK(!names.empty());
  CHECK_EQ(names.front(), std::string(Crc32cImplementation()));
  CHECK_EQ(names.back(), std::string("software"));
  const std::vector<uint8_t> data = RandomBytes(70000, 67);
  const uint32_t want = Crc32cSoftware(0, data.data(), data.size());
  for (const std::string& name : names) {
    CHECK(Crc32cSelect(name).ok());
    CHECK_EQ(std::string(Crc32cImplementation()), name);
    CHECK_EQ(Crc32c(0, data.data(), data.size()), want);
  }
  CHECK_EQ(Crc32cSelect("crc64").code(), StatusCode::kInvalidArgument);
  CHECK_EQ(std::string(Crc32cImplementation()), names.back());
  CHECK(Crc32cSelect(names.front()).ok());
}

}  // namespace
}  // namespace mnemo
