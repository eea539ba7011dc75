// CRC32C by carry-less multiplication (VPCLMULQDQ on 512-bit registers): the input is folded
// 256 bytes per step into four accumulators, so throughput is bounded by loads, not by the
// `crc32` instruction (one 8-byte word per cycle per core at best, three streams needed to
// reach it). On cores with AVX-512 this runs well above memory bandwidth, which is what lets a
// checksummed copy cost about what a plain copy costs.
//
// Internal to core/crc32c.cc: callers use Crc32c() / Crc32cCopy(), which pick this path when
// the CPU has it (Crc32cImplementation() then reports "vpclmulqdq").
#pragma once

#include <cstddef>
#include <cstdint>

namespace mnemo {

// Whether this CPU (and OS: zmm state enabled) can run the folded paths.
bool Crc32cFoldAvailable();

// Same contract as Crc32c / Crc32cCopy. Only call when Crc32cFoldAvailable().
uint32_t Crc32cFold(uint32_t crc, const void* data, size_t length);
uint32_t Crc32cFoldCopy(uint32_t crc, void* dst, const void* src, size_t length);

}  // namespace mnemo
