#include "core/cpu_budget.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

namespace mnemo {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t AffinityCpus() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<std::size_t>(n);
  }
#endif
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

std::optional<double> Tighter(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// The tightest quota from this process's cgroup up to the root of the mounted hierarchy.
std::optional<double> CgroupQuotaCpus() {
  std::optional<double> quota;
  std::string v2_path, v1_path;
  std::istringstream lines(ReadFile("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    // "hierarchy-id:controllers:path"; v2 is "0::path", v1 lists "cpu" among the controllers.
    const auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
    if (line.compare(0, c1, "0") == 0 && controllers.empty()) v2_path = path;
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');)
      if (name == "cpu") v1_path = path;
  }
  for (std::string dir = v2_path; !v2_path.empty();) {
    quota = Tighter(quota, ParseCpuMax(ReadFile("/sys/fs/cgroup" + dir + "/cpu.max")));
    if (dir.empty() || dir == "/") break;
    dir = dir.substr(0, dir.find_last_of('/'));
  }
  for (std::string dir = v1_path; !v1_path.empty();) {
    for (const char* root : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
      const std::string q = ReadFile(std::string(root) + dir + "/cpu.cfs_quota_us");
      const std::string p = ReadFile(std::string(root) + dir + "/cpu.cfs_period_us");
      if (!q.empty() && !p.empty()) quota = Tighter(quota, ParseCpuMax(q + " " + p));
    }
    if (dir.empty() || dir == "/") break;
    dir = dir.substr(0, dir.find_last_of('/'));
  }
  return quota;
}

}  // namespace

std::optional<double> ParseCpuMax(const std::string& text) {
  std::istringstream in(text);
  std::string quota;
  double period = 0;
  if (!(in >> quota >> period) || quota == "max" || !(period > 0)) return std::nullopt;
  char* end = nullptr;
  const double q = std::strtod(quota.c_str(), &end);
  // v1 writes -1 for "no limit".
  if (end == quota.c_str() || *end != '\0' || !(q > 0)) return std::nullopt;
  return q / period;
}

std::size_t CoresWithin(std::size_t affinity_cpus, std::optional<double> quota_cpus) {
  std::size_t cores = std::max<std::size_t>(affinity_cpus, 1);
  if (quota_cpus && *quota_cpus > 0) {
    const double rounded = std::ceil(*quota_cpus - 1e-9);
    cores = std::min(cores, static_cast<std::size_t>(std::max(1.0, rounded)));
  }
  return cores;
}

std::size_t UsableCores() {
  static const std::size_t cores = CoresWithin(AffinityCpus(), CgroupQuotaCpus());
  return cores;
}

ThreadBudget ThreadBudgetFor(std::size_t cores) {
  cores = std::max<std::size_t>(cores, 1);
  return {cores, std::clamp<std::size_t>(cores / 2, 1, 16)};
}

}  // namespace mnemo
