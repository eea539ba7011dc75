// The copy kernel under transfers and the memcpy probe.
//
// NOTE: glibc's memcpy uses `rep movsb` for mid-sized copies (a few KiB to about 1 MiB); on
// AMD Zen that runs at a quarter of its speed when source and destination are misaligned
// relative to each other, which is the normal case for JS ArrayBuffers (their data starts 16
// bytes into a page). The kernel here aligns the destination and moves 128 bytes per step
// with unaligned vector loads, so any alignment runs at full speed; large copies whose
// destination is not read back soon use non-temporal stores, which skip the read-for-
// ownership of every destination line.
#pragma once

#include <cstddef>

namespace mnemo {

enum class CopyHint {
  kCached,     // the destination is read again soon (a CRC right after, a small piece)
  kStreaming,  // bulk data nobody reads soon: bypass the caches
};

void CopyBytes(void* dst, const void* src, size_t length, CopyHint hint);

// "avx2" or "memcpy": the kernel picked when the library loaded.
const char* CopyKernelName();

}  // namespace mnemo
