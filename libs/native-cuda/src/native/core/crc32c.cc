#include "core/crc32c.h"

#include "core/crc32c_fold.h"

#include <atomic>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#elif defined(__aarch64__)
#include <arm_acle.h>
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

namespace mnemo {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

// Bytes per stream in the three-stream hardware loop. LONG streams amortise the merge;
// SHORT ones keep medium inputs (a few KiB) off the single-stream tail.
constexpr size_t kLong = 8192;
constexpr size_t kShort = 256;

// a(x) * b(x) mod p(x), polynomials in reflected order (bit 31 is x^0).
uint32_t MultModP(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31;
  uint32_t p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;
  }
  return p;
}

struct Tables {
  uint32_t slice[8][256];     // slicing-by-8
  uint32_t x2n[32];           // x^(2^k) mod p
  uint32_t shift_long[4][256];   // appends kLong zero bytes to a raw register
  uint32_t shift_short[4][256];  // appends kShort zero bytes

  Tables() {
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
      slice[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; ++n) {
      for (int k = 1; k < 8; ++k) slice[k][n] = (slice[k - 1][n] >> 8) ^ slice[0][slice[k - 1][n] & 0xFF];
    }
    uint32_t p = 1u << 30;  // x^1
    x2n[0] = p;
    for (int k = 1; k < 32; ++k) x2n[k] = p = MultModP(p, p);
    FillShift(shift_long, X2nModP(kLong, 3));
    FillShift(shift_short, X2nModP(kShort, 3));
  }

  // x^(n * 2^k) mod p.
  uint32_t X2nModP(uint64_t n, unsigned k) const {
    uint32_t p = 1u << 31;  // x^0
    while (n != 0) {
      if (n & 1) p = MultModP(x2n[k & 31], p);
      n >>= 1;
      ++k;
    }
    return p;
  }

  // The operator is linear, so it is tabulated per byte of the register.
  static void FillShift(uint32_t (&table)[4][256], uint32_t op) {
    for (uint32_t n = 0; n < 256; ++n) {
      for (int k = 0; k < 4; ++k) table[k][n] = MultModP(op, n << (8 * k));
    }
  }
};

const Tables& T() {
  static const Tables tables;
  return tables;
}

inline uint32_t Shift(const uint32_t (&table)[4][256], uint32_t crc) {
  return table[0][crc & 0xFF] ^ table[1][(crc >> 8) & 0xFF] ^ table[2][(crc >> 16) & 0xFF] ^
         table[3][crc >> 24];
}

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);  // NOTE: the target is little-endian (x86-64, arm64)
  return v;
}

#if defined(__x86_64__)
#define MNEMO_CRC_TARGET __attribute__((target("sse4.2")))
#define MNEMO_CRC_U8(c, b) _mm_crc32_u8(static_cast<uint32_t>(c), (b))
#define MNEMO_CRC_U64(c, w) _mm_crc32_u64((c), (w))
#elif defined(__aarch64__)
#define MNEMO_CRC_TARGET __attribute__((target("+crc")))
#define MNEMO_CRC_U8(c, b) __crc32cb(static_cast<uint32_t>(c), (b))
#define MNEMO_CRC_U64(c, w) __crc32cd(static_cast<uint32_t>(c), (w))
#endif

#ifdef MNEMO_CRC_TARGET
// Three streams of `block` bytes each per round, merged with `shift` (appends `block`
// zero bytes). Works on the raw (inverted) register. kCopy: each 8-byte word is loaded once,
// stored to `d` and fed to the CRC; otherwise `d` is not touched.
template <bool kCopy>
MNEMO_CRC_TARGET inline void ThreeStreams(uint64_t& crc0, uint8_t*& d, const uint8_t*& p, size_t& n, size_t block,
                                          const uint32_t (&shift)[4][256]) {
  while (n >= 3 * block) {
    uint64_t crc1 = 0;
    uint64_t crc2 = 0;
    const uint8_t* end = p + block;
    do {
      const uint64_t w0 = Load64(p);
      const uint64_t w1 = Load64(p + block);
      const uint64_t w2 = Load64(p + 2 * block);
      if constexpr (kCopy) {
        std::memcpy(d, &w0, 8);
        std::memcpy(d + block, &w1, 8);
        std::memcpy(d + 2 * block, &w2, 8);
        d += 8;
      }
      crc0 = MNEMO_CRC_U64(crc0, w0);
      crc1 = MNEMO_CRC_U64(crc1, w1);
      crc2 = MNEMO_CRC_U64(crc2, w2);
      p += 8;
    } while (p < end);
    crc0 = Shift(shift, static_cast<uint32_t>(crc0)) ^ crc1;
    crc0 = Shift(shift, static_cast<uint32_t>(crc0)) ^ crc2;
    p += 2 * block;
    if constexpr (kCopy) d += 2 * block;
    n -= 3 * block;
  }
}

// Both stream sizes, then what is left 8 bytes and then one byte at a time; returns the
// finished (uninverted) CRC.
template <bool kCopy>
MNEMO_CRC_TARGET inline uint32_t Streams(uint64_t crc0, uint8_t* d, const uint8_t* p, size_t n) {
  const Tables& t = T();
  ThreeStreams<kCopy>(crc0, d, p, n, kLong, t.shift_long);
  ThreeStreams<kCopy>(crc0, d, p, n, kShort, t.shift_short);
  while (n >= 8) {
    const uint64_t w = Load64(p);
    if constexpr (kCopy) {
      std::memcpy(d, &w, 8);
      d += 8;
    }
    crc0 = MNEMO_CRC_U64(crc0, w);
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    if constexpr (kCopy) *d++ = *p;
    crc0 = MNEMO_CRC_U8(crc0, *p++);
    --n;
  }
  return ~static_cast<uint32_t>(crc0);
}

MNEMO_CRC_TARGET uint32_t HardwareCopyImpl(uint32_t crc, void* dst, const void* src, size_t length) {
  return Streams<true>(~crc, static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), length);
}

MNEMO_CRC_TARGET uint32_t HardwareImpl(uint32_t crc, const void* data, size_t length) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t n = length;
  uint64_t crc0 = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    crc0 = MNEMO_CRC_U8(crc0, *p++);
    --n;
  }
  return Streams<false>(crc0, nullptr, p, n);
}
#endif

bool DetectHardware() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("sse4.2");
#elif defined(__aarch64__)
  return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#else
  return false;
#endif
}

using CrcFn = uint32_t (*)(uint32_t, const void*, size_t);

using CrcCopyFn = uint32_t (*)(uint32_t, void*, const void*, size_t);

uint32_t SoftwareCopy(uint32_t crc, void* dst, const void* src, size_t length) {
  std::memcpy(dst, src, length);
  return Crc32cSoftware(crc, dst, length);
}

struct Selected {
  CrcFn fn;
  CrcCopyFn copy;
  const char* name;
};

const Selected kFold = {Crc32cFold, Crc32cFoldCopy, "vpclmulqdq"};
#ifdef MNEMO_CRC_TARGET
#if defined(__x86_64__)
const Selected kStreams = {HardwareImpl, HardwareCopyImpl, "sse4.2"};
#else
const Selected kStreams = {HardwareImpl, HardwareCopyImpl, "armv8-crc"};
#endif
#endif
const Selected kSoftware = {Crc32cSoftware, SoftwareCopy, "software"};

// Fastest first.
std::vector<const Selected*> Available() {
  std::vector<const Selected*> out;
  // Folding beats the crc32 instruction streams several times over where it exists.
  if (Crc32cFoldAvailable()) out.push_back(&kFold);
#ifdef MNEMO_CRC_TARGET
  if (DetectHardware()) out.push_back(&kStreams);
#endif
  out.push_back(&kSoftware);
  return out;
}

// Chosen when the library loads (static initialisation), never per call; Crc32cSelect
// changes it only for same-process A/B measurements.
std::atomic<const Selected*> g_selected{Available().front()};

const Selected& Current() { return *g_selected.load(std::memory_order_relaxed); }

}  // namespace

uint32_t Crc32cSoftware(uint32_t crc, const void* data, size_t length) {
  const Tables& t = T();
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (length > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = (c >> 8) ^ t.slice[0][(c ^ *p++) & 0xFF];
    --length;
  }
  while (length >= 8) {
    const uint64_t w = Load64(p) ^ c;
    c = t.slice[7][w & 0xFF] ^ t.slice[6][(w >> 8) & 0xFF] ^ t.slice[5][(w >> 16) & 0xFF] ^
        t.slice[4][(w >> 24) & 0xFF] ^ t.slice[3][(w >> 32) & 0xFF] ^ t.slice[2][(w >> 40) & 0xFF] ^
        t.slice[1][(w >> 48) & 0xFF] ^ t.slice[0][w >> 56];
    p += 8;
    length -= 8;
  }
  while (length > 0) {
    c = (c >> 8) ^ t.slice[0][(c ^ *p++) & 0xFF];
    --length;
  }
  return ~c;
}

bool Crc32cHardwareAvailable() {
#ifdef MNEMO_CRC_TARGET
  return DetectHardware();
#else
  return false;
#endif
}

uint32_t Crc32cHardware(uint32_t crc, const void* data, size_t length) {
#ifdef MNEMO_CRC_TARGET
  return HardwareImpl(crc, data, length);
#else
  return Crc32cSoftware(crc, data, length);
#endif
}

uint32_t Crc32c(uint32_t crc, const void* data, size_t length) {
  return Current().fn(crc, data, length);
}

uint32_t Crc32cCopy(uint32_t crc, void* dst, const void* src, size_t length) {
  return Current().copy(crc, dst, src, length);
}

uint32_t Crc32cHardwareCopy(uint32_t crc, void* dst, const void* src, size_t length) {
#ifdef MNEMO_CRC_TARGET
  return HardwareCopyImpl(crc, dst, src, length);
#else
  return SoftwareCopy(crc, dst, src, length);
#endif
}

uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
  return MultModP(T().X2nModP(length_b, 3), crc_a) ^ crc_b;
}

const char* Crc32cImplementation() { return Current().name; }

std::vector<std::string> Crc32cImplementations() {
  std::vector<std::string> out;
  for (const Selected* s : Available()) out.emplace_back(s->name);
  return out;
}

Status Crc32cSelect(const std::string& name) {
  for (const Selected* s : Available()) {
    if (name == s->name) {
      g_selected.store(s, std::memory_order_relaxed);
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("CRC32C implementation '" + name + "' is not available on this CPU");
}

}  // namespace mnemo
