// NUMA placement of host pool regions with the raw mbind/get_mempolicy syscalls (no libnuma,
// so nothing extra to install and the binding is testable on a one-node machine).
//
// The node list is read from sysfs; the root is a parameter so tests can present a fake
// multi-node layout (a folder with node0/, node1/, …).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace mnemo::numa {

inline constexpr const char* kSysfsNodeRoot = "/sys/devices/system/node";
// Node ids mbind accepts here (the mask below has this many bits).
inline constexpr int kMaxNodes = 1024;

// Ids of the entries named node<N> under `sysfs_root`, ascending; empty when the folder is
// missing (a kernel without NUMA support behaves like one node).
std::vector<int> ListNodes(const std::string& sysfs_root = kSysfsNodeRoot);

// Binds the pages of [addr, addr + bytes) to `node` (MPOL_BIND, strict). Call before the
// pages are first touched so they are allocated there. `addr` must be page aligned.
// kInvalidArgument for a node the kernel does not know; kUnsupported when the syscall is
// refused (no NUMA support, seccomp).
Status BindToNode(void* addr, size_t bytes, int node);

// The memory policy of the page at `addr`: *bound_node is the node when the policy is
// MPOL_BIND to exactly one node, else -1.
Status BoundNode(void* addr, int* bound_node);

}  // namespace mnemo::numa
