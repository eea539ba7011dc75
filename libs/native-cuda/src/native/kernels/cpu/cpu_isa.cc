#include "kernels/cpu/cpu_isa.h"

#include <initializer_list>

#include "kernels/cpu/gemm_kernels.h"

namespace mnemo::kernels::cpu {
namespace {

bool CpuSupports(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kPortable:
      return true;
#if defined(__x86_64__) && defined(__GNUC__)
    case CpuIsa::kAvx2Fma:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case CpuIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#endif
#if defined(__aarch64__)
    case CpuIsa::kNeon:
      return true;  // Advanced SIMD is mandatory on arm64.
#endif
    default:
      return false;
  }
}

CpuIsa Detect() {
  for (CpuIsa isa : {CpuIsa::kAvx512, CpuIsa::kAvx2Fma, CpuIsa::kNeon})
    if (CpuIsaAvailable(isa)) return isa;
  return CpuIsa::kPortable;
}

}  // namespace

const char* CpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kPortable:
      return "portable";
    case CpuIsa::kAvx2Fma:
      return "avx2-fma";
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kNeon:
      return "neon";
  }
  return "unknown";
}

bool CpuIsaAvailable(CpuIsa isa) { return GemmKernelsFor(isa) != nullptr && CpuSupports(isa); }

CpuIsa ActiveCpuIsa() {
  static const CpuIsa isa = Detect();
  return isa;
}

}  // namespace mnemo::kernels::cpu
