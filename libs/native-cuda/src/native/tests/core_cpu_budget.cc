// Usable cores: cgroup quota parsing, capping by affinity, the split between the two pools.
#include <thread>

#include "core/cpu_budget.h"
#include "tests/check.h"

namespace mnemo {
namespace {

MNEMO_TEST(cpu_budget, parses_cgroup_cpu_max) {
  CHECK(!ParseCpuMax("max 100000").has_value());
  CHECK(!ParseCpuMax("max 100000\n").has_value());
  CHECK(!ParseCpuMax("").has_value());
  CHECK(!ParseCpuMax("garbage").has_value());
  CHECK(!ParseCpuMax("-1 100000").has_value());  // cgroup v1 "no limit"
  CHECK(!ParseCpuMax("100000 0").has_value());
  CHECK_NEAR(*ParseCpuMax("150000 100000\n"), 1.5, 1e-12);
  CHECK_NEAR(*ParseCpuMax("200000 100000"), 2.0, 1e-12);
  CHECK_NEAR(*ParseCpuMax("50000 100000"), 0.5, 1e-12);
}

MNEMO_TEST(cpu_budget, quota_rounds_up_and_affinity_caps) {
  CHECK_EQ(CoresWithin(8, std::nullopt), size_t{8});
  CHECK_EQ(CoresWithin(8, 1.5), size_t{2});
  CHECK_EQ(CoresWithin(8, 2.0), size_t{2});
  CHECK_EQ(CoresWithin(8, 0.5), size_t{1});
  CHECK_EQ(CoresWithin(2, 16.0), size_t{2});
  CHECK_EQ(CoresWithin(0, std::nullopt), size_t{1});
}

MNEMO_TEST(cpu_budget, pools_are_sized_together) {
  CHECK_EQ(ThreadBudgetFor(1).kernel_lanes, size_t{1});
  CHECK_EQ(ThreadBudgetFor(1).task_threads, size_t{1});
  CHECK_EQ(ThreadBudgetFor(2).kernel_lanes, size_t{2});
  CHECK_EQ(ThreadBudgetFor(2).task_threads, size_t{1});
  CHECK_EQ(ThreadBudgetFor(16).task_threads, size_t{8});
  CHECK_EQ(ThreadBudgetFor(64).task_threads, size_t{16});
  CHECK_EQ(ThreadBudgetFor(0).kernel_lanes, size_t{1});
}

MNEMO_TEST(cpu_budget, usable_cores_is_positive_and_within_the_machine) {
  const size_t n = UsableCores();
  CHECK(n >= 1);
  const unsigned hw = std::thread::hardware_concurrency();
  if (hw > 0) CHECK(n <= hw);
}

}  // namespace
}  // namespace mnemo
