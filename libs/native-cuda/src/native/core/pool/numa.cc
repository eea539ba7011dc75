#include "core/pool/numa.h"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mnemo::numa {
namespace {

// From <linux/mempolicy.h>; spelled out so no libnuma header is needed.
constexpr int kMpolBind = 2;
constexpr unsigned kMpolMfStrict = 1 << 0;
constexpr unsigned long kMpolFAddr = 1 << 1;

constexpr size_t kBitsPerWord = 8 * sizeof(unsigned long);
constexpr size_t kMaskWords = kMaxNodes / kBitsPerWord;
// The kernel reads maxnode - 1 bits (a historical off-by-one that libnuma also follows).
constexpr unsigned long kMaxNode = kMaxNodes + 1;

}  // namespace

std::vector<int> ListNodes(const std::string& sysfs_root) {
  std::vector<int> nodes;
  DIR* dir = opendir(sysfs_root.c_str());
  if (dir == nullptr) return nodes;
  while (const dirent* e = readdir(dir)) {
    const char* name = e->d_name;
    if (std::strncmp(name, "node", 4) != 0 || name[4] == '\0') continue;
    char* end = nullptr;
    const long id = std::strtol(name + 4, &end, 10);
    if (*end != '\0' || id < 0 || id >= kMaxNodes) continue;
    nodes.push_back(static_cast<int>(id));
  }
  closedir(dir);
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

Status BindToNode(void* addr, size_t bytes, int node) {
  if (node < 0 || node >= kMaxNodes) {
    return Status::InvalidArgument("NUMA node must be in [0, " + std::to_string(kMaxNodes) +
                                   "), got " + std::to_string(node));
  }
  unsigned long mask[kMaskWords] = {};
  mask[node / kBitsPerWord] = 1ul << (node % kBitsPerWord);
  if (syscall(SYS_mbind, addr, bytes, kMpolBind, mask, kMaxNode, kMpolMfStrict) == 0) {
    return Status::Ok();
  }
  const int err = errno;
  const std::string what = "mbind(node " + std::to_string(node) + "): " + std::strerror(err);
  if (err == EINVAL) return Status::InvalidArgument(what + " (no such node?)");
  if (err == ENOSYS || err == EPERM) return Status::Unsupported(what);
  return Status::Internal(what);
}

Status BoundNode(void* addr, int* bound_node) {
  *bound_node = -1;
  int mode = -1;
  unsigned long mask[kMaskWords] = {};
  if (syscall(SYS_get_mempolicy, &mode, mask, kMaxNode, addr, kMpolFAddr) != 0) {
    const int err = errno;
    return Status::Unsupported(std::string("get_mempolicy: ") + std::strerror(err));
  }
  if (mode != kMpolBind) return Status::Ok();
  int found = -1;
  for (size_t w = 0; w < kMaskWords; ++w) {
    for (size_t b = 0; b < kBitsPerWord; ++b) {
      if ((mask[w] >> b) & 1) {
        if (found >= 0) return Status::Ok();  // bound to several nodes
        found = static_cast<int>(w * kBitsPerWord + b);
      }
    }
  }
  *bound_node = found;
  return Status::Ok();
}

}  // namespace mnemo::numa
