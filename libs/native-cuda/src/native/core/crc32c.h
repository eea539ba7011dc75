// CRC32C (Castagnoli, reflected polynomial 0x82F63B78, init and final xor 0xFFFFFFFF): the
// checksum stored with every offloaded KV segment, so that a corrupt byte on any tier reads
// as a miss instead of wrong KV.
//
// The implementation is picked once, when the library loads: carry-less folding with
// VPCLMULQDQ on x86-64 cores with AVX-512 (core/crc32c_fold.h), else the SSE4.2 `crc32` instruction
// on x86-64, the ARMv8 CRC extension on arm64, else a slicing-by-8 table. The hardware paths
// run three independent streams per block and merge them with precomputed shift tables, so
// they are not limited by the instruction's 3-cycle latency.
//
// Known answer: Crc32c(0, "123456789", 9) == 0xE3069283.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace mnemo {

// Extends `crc` (a finished CRC32C of earlier bytes; 0 for none) with `length` bytes.
// Crc32c(Crc32c(0, a, n), a + n, m) == Crc32c(0, a, n + m).
uint32_t Crc32c(uint32_t crc, const void* data, size_t length);

// Copies `length` bytes from `src` to `dst` (not overlapping) and returns `crc` extended
// with them, reading each byte once: the hardware path feeds the CRC from the registers it
// copies through, so a checksummed copy costs about what the checksum alone costs.
uint32_t Crc32cCopy(uint32_t crc, void* dst, const void* src, size_t length);

// The CRC of A‖B from crc(A), crc(B) and |B|, in O(log |B|) without touching the bytes.
// Lets pieces of one range be checksummed by different threads and joined in order.
uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);

// "vpclmulqdq", "sse4.2", "armv8-crc" or "software": what Crc32c() runs on this machine.
const char* Crc32cImplementation();

// The implementations this CPU can run, fastest (the one picked at load) first.
std::vector<std::string> Crc32cImplementations();
// Makes `name` (one of Crc32cImplementations()) what Crc32c/Crc32cCopy run from now on, for
// every thread. Only for same-process A/B measurements and tests: every implementation gives
// the same answers, so switching mid-transfer is harmless. kInvalidArgument for other names.
[[nodiscard]] Status Crc32cSelect(const std::string& name);

// The portable table implementation (always available; used by tests to cross-check).
uint32_t Crc32cSoftware(uint32_t crc, const void* data, size_t length);
// Whether this CPU has the instruction Crc32cHardware() needs.
bool Crc32cHardwareAvailable();
// The hardware implementation. Only call when Crc32cHardwareAvailable().
uint32_t Crc32cHardware(uint32_t crc, const void* data, size_t length);
// Crc32cCopy on the `crc32` instruction streams (tests and same-process A/B probes).
uint32_t Crc32cHardwareCopy(uint32_t crc, void* dst, const void* src, size_t length);

}  // namespace mnemo
