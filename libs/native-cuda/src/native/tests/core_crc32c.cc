// CRC32C: known answers (RFC 3720 vectors), hardware vs software agreement on random data of
// odd lengths and offsets, extension and combination.
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/crc32c.h"
#include "tests/check.h"
#include "tests/random_bytes.h"

namespace mnemo {
namespace {

using test::RandomBytes;

using CrcFn = uint32_t (*)(uint32_t, const void*, size_t);

void CheckKnownAnswers(CrcFn fn) {
  const char* digits = "123456789";
  CHECK_EQ(fn(0, digits, 9), 0xE3069283u);
  CHECK_EQ(fn(0, nullptr, 0), 0u);
  std::vector<uint8_t> v(32, 0x00);
  CHECK_EQ(fn(0, v.data(), v.size()), 0x8A9136AAu);
  std::fill(v.begin(), v.end(), 0xFF);
  CHECK_EQ(fn(0, v.data(), v.size()), 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) v[i] = static_cast<uint8_t>(i);
  CHECK_EQ(fn(0, v.data(), v.size()), 0x46DD794Eu);
  for (int i = 0; i < 32; ++i) v[i] = static_cast<uint8_t>(31 - i);
  CHECK_EQ(fn(0, v.data(), v.size()), 0x113FDB5Cu);
}

MNEMO_TEST(crc32c, known_answers_software) { CheckKnownAnswers(Crc32cSoftware); }

MNEMO_TEST(crc32c, known_answers_selected) { CheckKnownAnswers(Crc32c); }

MNEMO_TEST(crc32c, known_answers_hardware) {
  if (!Crc32cHardwareAvailable()) SKIP("no CRC32C instruction on this CPU");
  CheckKnownAnswers(Crc32cHardware);
}

MNEMO_TEST(crc32c, selects_hardware_when_the_cpu_has_it) {
  const std::string impl = Crc32cImplementation();
  CHECK_EQ(impl == "software", !Crc32cHardwareAvailable());
}

MNEMO_TEST(crc32c, hardware_matches_software_on_odd_lengths_and_offsets) {
  if (!Crc32cHardwareAvailable()) SKIP("no CRC32C instruction on this CPU");
  // Long enough to run both the 3×8 KiB and 3×256 B stream loops plus every tail.
  const std::vector<uint8_t> data = RandomBytes(3 * 3 * 8192 + 4096, 17);
  std::mt19937 rng(5);
  for (int i = 0; i < 400; ++i) {
    const size_t offset = rng() % 64;
    const size_t length = i < 100 ? static_cast<size_t>(i) : rng() % (data.size() - offset);
    const uint32_t seed = i % 3 == 0 ? 0 : rng();
    CHECK_EQ(Crc32cHardware(seed, data.data() + offset, length), Crc32cSoftware(seed, data.data() + offset, length));
  }
}

MNEMO_TEST(crc32c, extending_equals_one_pass) {
  const std::vector<uint8_t> data = RandomBytes(100000, 3);
  const uint32_t whole = Crc32c(0, data.data(), data.size());
  for (size_t cut : {size_t{0}, size_t{1}, size_t{7}, size_t{4097}, size_t{99999}, data.size()}) {
    CHECK_EQ(Crc32c(Crc32c(0, data.data(), cut), data.data() + cut, data.size() - cut), whole);
  }
}

MNEMO_TEST(crc32c, combine_joins_pieces_in_order) {
  const std::vector<uint8_t> data = RandomBytes(70001, 9);
  const uint32_t whole = Crc32c(0, data.data(), data.size());
  std::mt19937 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    uint32_t joined = 0;
    size_t at = 0;
    while (at < data.size()) {
      const size_t n = std::min<size_t>(data.size() - at, 1 + rng() % 9000);
      joined = Crc32cCombine(joined, Crc32c(0, data.data() + at, n), n);
      at += n;
    }
    CHECK_EQ(joined, whole);
  }
  CHECK_EQ(Crc32cCombine(0x12345678u, 0, 0), 0x12345678u);
}

MNEMO_TEST(crc32c, copying_checksum_copies_exactly_and_matches) {
  const std::vector<uint8_t> data = RandomBytes(3 * 3 * 8192 + 5000, 23);
  std::vector<uint8_t> out(data.size() + 128);
  std::mt19937 rng(29);
  for (int i = 0; i < 300; ++i) {
    const size_t s_off = rng() % 64;
    const size_t d_off = rng() % 64;
    const size_t length = i < 80 ? static_cast<size_t>(i) : rng() % (data.size() - s_off);
    const uint32_t seed = i % 2 ? rng() : 0;
    std::fill(out.begin(), out.end(), 0xEE);
    CHECK_EQ(Crc32cCopy(seed, out.data() + d_off, data.data() + s_off, length), Crc32cSoftware(seed, data.data() + s_off, length));
    CHECK(std::memcmp(out.data() + d_off, data.data() + s_off, length) == 0);
    for (size_t k = 0; k < d_off; ++k) CHECK_EQ(out[k], 0xEE);
    for (size_t k = d_off + length; k < out.size(); ++k) CHECK_EQ(out[k], 0xEE);
  }
}

MNEMO_TEST(crc32c, a_flipped_bit_changes_the_crc) {
  std::vector<uint8_t> data = RandomBytes(1 << 16, 21);
  const uint32_t before = Crc32c(0, data.data(), data.size());
  for (size_t pos : {size_t{0}, size_t{12345}, data.size() - 1}) {
    for (int bit = 0; bit < 8; ++bit) {
      data[pos] ^= static_cast<uint8_t>(1 << bit);
      CHECK_NE(Crc32c(0, data.data(), data.size()), before);
      data[pos] ^= static_cast<uint8_t>(1 << bit);
    }
  }
  CHECK_EQ(Crc32c(0, data.data(), data.size()), before);
}

}  // namespace
}  // namespace mnemo
