// Host pool devices: alignment, commitment, NUMA binding (raw syscalls), accounting.
#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/pool/host_pool.h"
#include "core/pool/numa.h"
#include "tests/check.h"
#include "tests/temp_dir.h"

namespace mnemo {
namespace {

MNEMO_TEST(numa, lists_node_folders_of_a_fake_sysfs_tree) {
  test::TempDir dir;
  for (const char* name : {"node3", "node0", "node1", "nodeX", "node", "possible", "has_cpu"}) {
    std::filesystem::create_directory(dir.File(name));
  }
  const std::vector<int> nodes = numa::ListNodes(dir.path());
  CHECK_EQ(nodes.size(), size_t{3});
  CHECK_EQ(nodes[0], 0);
  CHECK_EQ(nodes[1], 1);
  CHECK_EQ(nodes[2], 3);
  CHECK(numa::ListNodes(dir.File("missing")).empty());
}

MNEMO_TEST(numa, this_machine_has_at_least_node_0) {
  const std::vector<int> nodes = numa::ListNodes();
  if (nodes.empty()) SKIP("kernel without NUMA sysfs");
  CHECK_EQ(nodes.front(), 0);
}

MNEMO_TEST(host_pool, region_is_aligned_committed_and_writable) {
  const HostPoolStats before = GetHostPoolStats();
  std::shared_ptr<HostPool> pool;
  CHECK(HostPool::Open({3 * 1000 * 1000 + 7, -1, true, true, false}, &pool).ok());
  CHECK_EQ(reinterpret_cast<uintptr_t>(pool->data()) % HostPool::kAlignment, uintptr_t{0});
  CHECK_EQ(pool->size(), uint64_t{3 * 1000 * 1000 + 7});
  CHECK_EQ(pool->kind(), HostMemoryKind::kPageable);
  CHECK_EQ(pool->numa_node(), -1);
  CHECK(pool->pin_error().empty());
  CHECK_EQ(pool->data()[0], 0);
  CHECK_EQ(pool->data()[pool->size() - 1], 0);
  std::memset(pool->data(), 0x7C, pool->size());
  CHECK_EQ(GetHostPoolStats().regions, before.regions + 1);
  CHECK_EQ(GetHostPoolStats().bytes, before.bytes + pool->size());
  pool.reset();
  CHECK_EQ(GetHostPoolStats().regions, before.regions);
  CHECK_EQ(GetHostPoolStats().bytes, before.bytes);
}

MNEMO_TEST(host_pool, binds_to_a_numa_node_before_touching_pages) {
  const std::vector<int> nodes = numa::ListNodes();
  if (nodes.empty()) SKIP("kernel without NUMA sysfs");
  std::shared_ptr<HostPool> pool;
  const Status s = HostPool::Open({4 << 20, nodes.back(), true, true, false}, &pool);
  if (s.code() == StatusCode::kUnsupported) SKIP("mbind refused here: " + s.message());
  CHECK(s.ok());
  CHECK_EQ(pool->numa_node(), nodes.back());
  int bound = -2;
  CHECK(numa::BoundNode(pool->data(), &bound).ok());
  CHECK_EQ(bound, nodes.back());
  CHECK(numa::BoundNode(pool->data() + (3 << 20), &bound).ok());
  CHECK_EQ(bound, nodes.back());
}

MNEMO_TEST(host_pool, unbound_region_reports_no_binding) {
  std::shared_ptr<HostPool> pool;
  CHECK(HostPool::Open({1 << 20, -1, true, false, false}, &pool).ok());
  int bound = -2;
  const Status s = numa::BoundNode(pool->data(), &bound);
  if (s.code() == StatusCode::kUnsupported) SKIP("get_mempolicy refused here");
  CHECK(s.ok());
  CHECK_EQ(bound, -1);
}

MNEMO_TEST(host_pool, refuses_an_unknown_node_and_zero_bytes) {
  std::shared_ptr<HostPool> pool;
  const HostPoolStats before = GetHostPoolStats();
  CHECK_EQ(HostPool::Open({1 << 20, numa::kMaxNodes - 1, true, true, false}, &pool).code(), StatusCode::kInvalidArgument);
  CHECK_EQ(HostPool::Open({1 << 20, numa::kMaxNodes, true, true, false}, &pool).code(), StatusCode::kInvalidArgument);
  CHECK_EQ(HostPool::Open({0, -1, true, true, false}, &pool).code(), StatusCode::kInvalidArgument);
  CHECK(pool == nullptr);
  CHECK_EQ(GetHostPoolStats().regions, before.regions);
}

MNEMO_TEST(host_pool, pinning_without_a_device_stays_pageable_and_says_why) {
  std::shared_ptr<HostPool> pool;
  CHECK(HostPool::Open({1 << 20, -1, true, true, true}, &pool).ok());
  if (pool->kind() == HostMemoryKind::kPinned) {
    CHECK(pool->pin_error().empty());
  } else {
    CHECK(!pool->pin_error().empty());
  }
}

}  // namespace
}  // namespace mnemo
