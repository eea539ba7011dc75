#include "core/byte_copy.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mnemo {
namespace {

// Below this the vector loop's set-up costs more than memcpy's own small-size paths.
constexpr size_t kVectorMin = 512;

#if defined(__x86_64__)
template <bool kStream>
__attribute__((target("avx2"))) void CopyAvx2(uint8_t* d, const uint8_t* s, size_t n) {
  const size_t head = (32 - (reinterpret_cast<uintptr_t>(d) & 31)) & 31;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (size_t i = n / 128; i > 0; --i) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 64));
    const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 96));
    auto* out = reinterpret_cast<__m256i*>(d);
    if constexpr (kStream) {
      _mm256_stream_si256(out, a);
      _mm256_stream_si256(out + 1, b);
      _mm256_stream_si256(out + 2, c);
      _mm256_stream_si256(out + 3, e);
    } else {
      _mm256_store_si256(out, a);
      _mm256_store_si256(out + 1, b);
      _mm256_store_si256(out + 2, c);
      _mm256_store_si256(out + 3, e);
    }
    s += 128;
    d += 128;
  }
  // Streaming stores are weakly ordered: fence so the bytes are visible to whichever thread
  // learns of the copy's completion next.
  if constexpr (kStream) _mm_sfence();
  std::memcpy(d, s, n % 128);
}

bool HasAvx2() { return __builtin_cpu_supports("avx2"); }
#else
bool HasAvx2() { return false; }
#endif

const bool g_avx2 = HasAvx2();

}  // namespace

void CopyBytes(void* dst, const void* src, size_t length, CopyHint hint) {
#if defined(__x86_64__)
  if (g_avx2 && length >= kVectorMin) {
    auto* d = static_cast<uint8_t*>(dst);
    const auto* s = static_cast<const uint8_t*>(src);
    if (hint == CopyHint::kStreaming) {
      CopyAvx2<true>(d, s, length);
    } else {
      CopyAvx2<false>(d, s, length);
    }
    return;
  }
#endif
  std::memcpy(dst, src, length);
}

const char* CopyKernelName() { return g_avx2 ? "avx2" : "memcpy"; }

}  // namespace mnemo
