// Which vector instruction set the CPU kernels run with, chosen once per process by CPUID.
//
// NOTE: results depend on the path (an FMA rounds once where mul + add rounds twice), so the
// choice is a pure function of the machine: no environment override, and every kernel of one
// process takes the same path. A given machine therefore always produces the same bits, and
// every path of one machine either fuses multiply-adds everywhere or nowhere.
#pragma once

#include <cstddef>

namespace mnemo::kernels::cpu {

enum class CpuIsa : int {
  kPortable = 0,  // plain C++ (mul then add, no FMA): any CPU
  kAvx2Fma = 1,   // x86-64 AVX2 + FMA3
  kAvx512 = 2,    // x86-64 AVX-512F (+ FMA), only when the compiler can emit it
  kNeon = 3,      // arm64 Advanced SIMD (vfmaq)
};

const char* CpuIsaName(CpuIsa isa);

// The best path both this CPU and this build support. Fixed at first call.
CpuIsa ActiveCpuIsa();

// Whether `isa` could run here (compiled in and supported by the CPU); for tests that
// exercise every available path.
bool CpuIsaAvailable(CpuIsa isa);

}  // namespace mnemo::kernels::cpu
