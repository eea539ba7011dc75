// mnemo_cuda_check: a test-backend-ops-style check of every kernel-contract op, plus device
// timings. Built from the addon's own kernel sources (no Node-API), so it runs where Node
// does not (the GPU machines).
//
//   mnemo_cuda_check [--cpu] [--device] [--perf] [--quick] [--require-device] [--shapes FILE]
//     --cpu     the CPU kernels against NaiveOps (double-precision definitions): runs anywhere
//     --device  the CUDA kernels against the CPU kernels, bf16 and f16 storage
//     --perf    device timings (perf_device.h)
// Output: one JSON line per op and check (summarize.mjs folds them into
// bench/results/engine-cuda.json). Exit 1 when a check fails, or when --require-device is
// given and no device is usable; a missing device is otherwise reported and skipped.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "check_cases.h"
#include "host_ops.h"
#include "json_line.h"
#include "perf_device.h"

namespace {

using namespace mnemo::check;

// Relative tolerances: fp32 kernels against double; 16-bit storage against fp32 (a few ulps
// of the stored output: bf16 keeps 8 significant bits, f16 11).
constexpr double kCpuRtol = 1e-4;
constexpr double kBf16Rtol = 1.6e-2;
constexpr double kF16Rtol = 2e-3;

bool Report(const std::vector<OpReport>& reports, const std::string& sut, const std::string& ref) {
  bool ok = true;
  for (const OpReport& r : reports) {
    JsonLine l;
    l.Str("kind", "op").Str("op", r.op).Str("sut", sut).Str("ref", ref).Num("cases", r.cases)
        .Num("worst", r.worst).Num("worst_abs", r.worst_abs).Num("rtol", r.rtol).Str("worst_case", r.worst_case)
        .Bool("pass", r.ok() && r.cases > 0);
    if (r.failed_to_run) l.Str("error", r.error);
    l.Print();
    ok = ok && r.ok() && r.cases > 0;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  bool cpu = false, device = false, perf = false, quick = false, require_device = false;
  std::string shapes_path = "libs/native-cuda/tests/cuda_check/shapes.txt";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cpu") cpu = true;
    else if (a == "--device") device = true;
    else if (a == "--perf") perf = true;
    else if (a == "--quick") quick = true;
    else if (a == "--require-device") require_device = true;
    else if (a == "--shapes" && i + 1 < argc) shapes_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--cpu] [--device] [--perf] [--quick] [--require-device] [--shapes FILE]\n", argv[0]);
      return 2;
    }
  }
  if (!cpu && !device && !perf) cpu = true;
  std::string error;
  const auto models = LoadShapes(shapes_path, &error);
  if (models.empty()) {
    std::fprintf(stderr, "mnemo_cuda_check: %s\n", error.c_str());
    return 2;
  }
  bool ok = true;
  try {
    if (cpu) {
      auto sut = MakeCpuOps();
      auto ref = MakeNaiveOps();
      ok = Report(RunChecks(*sut, *ref, models, {kCpuRtol, false, ""}), "cpu", "naive") && ok;
    }
    if (device) {
      for (const std::string dtype : {"bf16", "f16"}) {
        std::string why;
        auto sut = MakeCudaOps(dtype, &why);
        if (!sut) {
          JsonLine().Str("kind", "device_skipped").Str("reason", why).Print();
          if (require_device) ok = false;
          break;
        }
        auto ref = MakeCpuOps();
        const double rtol = dtype == "bf16" ? kBf16Rtol : kF16Rtol;
        ok = Report(RunChecks(*sut, *ref, models, {rtol, true, ""}), "cuda-" + dtype, "cpu") && ok;
        // Every attention path on its own (auto above picks one per batch).
        for (const char* path : {"simple", "split", "flash"}) {
          SetCudaAttentionPath(path);
          ok = Report(RunChecks(*sut, *ref, models, {rtol, true, "pagedAttention"}),
                      "cuda-" + dtype + "/attention-" + path, "cpu") && ok;
        }
        SetCudaAttentionPath("auto");
      }
    }
    if (perf && !RunDevicePerf({10, quick}) && require_device) ok = false;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mnemo_cuda_check: %s\n", e.what());
    return 1;
  }
  return ok ? 0 : 1;
}
