#include "core/crc32c_fold.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mnemo {

#if defined(__x86_64__)
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

// x^n mod P as a 33-bit reflected constant (bit j is x^(32 - j)): the form a carry-less
// product with a reflected 64-bit lane needs so the product lands aligned to the lane.
uint64_t XPowModP(unsigned n) {
  uint32_t r = 1u << 31;  // x^0, reflected (bit 31 is x^0)
  for (unsigned i = 0; i < n; ++i) r = (r & 1) ? (r >> 1) ^ kPoly : r >> 1;
  return static_cast<uint64_t>(r) << 1;
}

// Folding a 128-bit lane forward by D bits multiplies its low qword (the higher-degree half in
// reflected order) by x^(D+32) and its high qword by x^(D-32), both mod P.
struct FoldConstants {
  uint64_t lo;
  uint64_t hi;
};
FoldConstants ForDistance(unsigned bits) { return {XPowModP(bits + 32), XPowModP(bits - 32)}; }

struct Constants {
  FoldConstants by2048 = ForDistance(2048);  // four zmm accumulators, 256 bytes a step
  FoldConstants by512 = ForDistance(512);    // one zmm
  FoldConstants by128 = ForDistance(128);    // one xmm
};

const Constants& K() {
  static const Constants k;
  return k;
}

// Streaming stores skip the read-for-ownership of destination lines a copy will not reread
// soon; below this the lines are likelier to be used from cache next.
constexpr size_t kStreamingBytes = size_t{512} << 10;

#define MNEMO_FOLD_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,vpclmulqdq,pclmul,sse4.2")))

MNEMO_FOLD_TARGET inline __m512i Broadcast(const FoldConstants& c) {
  return _mm512_broadcast_i32x4(_mm_set_epi64x(static_cast<long long>(c.hi), static_cast<long long>(c.lo)));
}

MNEMO_FOLD_TARGET inline __m512i Fold512(__m512i acc, __m512i k, __m512i next) {
  // 0x96: three-way xor.
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(acc, k, 0x00), _mm512_clmulepi64_epi128(acc, k, 0x11),
                                   next, 0x96);
}

MNEMO_FOLD_TARGET inline __m128i Fold128(__m128i acc, __m128i k, __m128i next) {
  return _mm_ternarylogic_epi64(_mm_clmulepi64_si128(acc, k, 0x00), _mm_clmulepi64_si128(acc, k, 0x11), next, 0x96);
}

// `d` is null when only checksumming: it moves with `p` only when copying.
template <bool kCopy>
inline void Advance(const uint8_t*& p, uint8_t*& d, size_t& n, size_t by) {
  p += by;
  if constexpr (kCopy) d += by;
  n -= by;
}

// Loads 64 bytes at `p + at`; with kCopy also stores them to `d + at` (streaming when kStream).
template <bool kCopy, bool kStream>
MNEMO_FOLD_TARGET inline __m512i Take(const uint8_t* p, uint8_t* d, size_t at) {
  const __m512i v = _mm512_loadu_si512(p + at);
  if constexpr (kCopy) {
    if constexpr (kStream) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(d + at), v);
    } else {
      _mm512_storeu_si512(d + at, v);
    }
  }
  return v;
}

// The folded part: consumes a multiple of 64 bytes (at least 256) and returns the raw CRC
// register for them, `raw` being the register before. The caller finishes the tail.
template <bool kCopy, bool kStream>
MNEMO_FOLD_TARGET uint32_t FoldBlocks(uint32_t raw, const uint8_t*& p, uint8_t*& d, size_t& n) {
  const Constants& k = K();
  __m512i x0 = Take<kCopy, kStream>(p, d, 0);
  __m512i x1 = Take<kCopy, kStream>(p, d, 64);
  __m512i x2 = Take<kCopy, kStream>(p, d, 128);
  __m512i x3 = Take<kCopy, kStream>(p, d, 192);
  // The running register joins the first four message bytes (the CRC is linear).
  x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(raw))));
  Advance<kCopy>(p, d, n, 256);
  const __m512i k2048 = Broadcast(k.by2048);
  while (n >= 256) {
    x0 = Fold512(x0, k2048, Take<kCopy, kStream>(p, d, 0));
    x1 = Fold512(x1, k2048, Take<kCopy, kStream>(p, d, 64));
    x2 = Fold512(x2, k2048, Take<kCopy, kStream>(p, d, 128));
    x3 = Fold512(x3, k2048, Take<kCopy, kStream>(p, d, 192));
    Advance<kCopy>(p, d, n, 256);
  }
  const __m512i k512 = Broadcast(k.by512);
  __m512i x = Fold512(x0, k512, x1);
  x = Fold512(x, k512, x2);
  x = Fold512(x, k512, x3);
  while (n >= 64) {
    x = Fold512(x, k512, Take<kCopy, kStream>(p, d, 0));
    Advance<kCopy>(p, d, n, 64);
  }
  const __m128i k128 = _mm_set_epi64x(static_cast<long long>(k.by128.hi), static_cast<long long>(k.by128.lo));
  __m128i r = _mm512_castsi512_si128(x);
  r = Fold128(r, k128, _mm512_extracti32x4_epi32(x, 1));
  r = Fold128(r, k128, _mm512_extracti32x4_epi32(x, 2));
  r = Fold128(r, k128, _mm512_extracti32x4_epi32(x, 3));
  // The folded 128 bits stand for the whole message so far: reducing them is running the
  // CRC over them from a zero register.
  uint64_t crc = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(r)));
  crc = _mm_crc32_u64(crc, static_cast<uint64_t>(_mm_extract_epi64(r, 1)));
  return static_cast<uint32_t>(crc);
}

template <bool kCopy>
MNEMO_FOLD_TARGET uint32_t Tail(uint32_t raw, const uint8_t* p, uint8_t* d, size_t n) {
  uint64_t c = raw;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if constexpr (kCopy) std::memcpy(d, &w, 8);
    c = _mm_crc32_u64(c, w);
    Advance<kCopy>(p, d, n, 8);
  }
  while (n > 0) {
    if constexpr (kCopy) *d++ = *p;  // NOTE: d is null without kCopy: never moved
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  return static_cast<uint32_t>(c);
}

template <bool kCopy, bool kStream>
MNEMO_FOLD_TARGET uint32_t Run(uint32_t crc, uint8_t* d, const uint8_t* p, size_t n) {
  uint32_t raw = ~crc;
  if (n >= 256) raw = FoldBlocks<kCopy, kStream>(raw, p, d, n);
  // Streaming stores are weakly ordered: fence so the bytes are visible to whichever thread
  // learns of the copy's completion next.
  if constexpr (kStream) _mm_sfence();
  return ~Tail<kCopy>(raw, p, d, n);
}

}  // namespace

bool Crc32cFoldAvailable() {
  // libgcc checks XCR0 for the AVX-512 state before reporting avx512f.
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq") &&
         __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2");
}

uint32_t Crc32cFold(uint32_t crc, const void* data, size_t length) {
  return Run<false, false>(crc, nullptr, static_cast<const uint8_t*>(data), length);
}

uint32_t Crc32cFoldCopy(uint32_t crc, void* dst, const void* src, size_t length) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  if (length >= kStreamingBytes && (reinterpret_cast<uintptr_t>(d) & 63) == 0) return Run<true, true>(crc, d, s, length);
  return Run<true, false>(crc, d, s, length);
}

#else

bool Crc32cFoldAvailable() { return false; }
uint32_t Crc32cFold(uint32_t, const void*, size_t) { __builtin_trap(); }
uint32_t Crc32cFoldCopy(uint32_t, void*, const void*, size_t) { __builtin_trap(); }

#endif

}  // namespace mnemo
