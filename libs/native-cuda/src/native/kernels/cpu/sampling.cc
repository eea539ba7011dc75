// Per-row reductions over logits used by sampling: argmax (greedy) and softmax.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/parallel_for.h"

namespace mnemo::kernels::cpu {

void Argmax(int32_t* out, const float* x, std::size_t rows, std::size_t n) {
  ParallelFor(rows, 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      const float* xr = x + r * n;
      std::size_t best = 0;
      float best_v = -std::numeric_limits<float>::infinity();
      bool found = false;
      for (std::size_t i = 0; i < n; ++i) {
        // Strict > keeps the lowest index on ties; NaN compares false and never wins.
        if (!found ? !std::isnan(xr[i]) : xr[i] > best_v) {
          best = i;
          best_v = xr[i];
          found = true;
        }
      }
      out[r] = static_cast<int32_t>(best);
    }
  });
}

void Softmax(float* out, const float* x, std::size_t rows, std::size_t n, float scale) {
  ParallelFor(rows, 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r) {
      const float* xr = x + r * n;
      float* o = out + r * n;
      float max_v = -std::numeric_limits<float>::infinity();
      for (std::size_t i = 0; i < n; ++i) max_v = std::max(max_v, xr[i] * scale);
      float lanes[kLanes] = {};
      for (std::size_t i = 0; i < n; ++i) {
        o[i] = std::exp(xr[i] * scale - max_v);
        lanes[i % kLanes] += o[i];
      }
      const float inv = 1.0f / CombineLanes(lanes);
      for (std::size_t i = 0; i < n; ++i) o[i] *= inv;
    }
  });
}

}  // namespace mnemo::kernels::cpu
