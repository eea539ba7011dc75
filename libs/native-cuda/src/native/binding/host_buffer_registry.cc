#include "binding/host_buffer_registry.h"

#include <mutex>
#include <unordered_map>

namespace mnemo::binding {
namespace {

struct Entry {
  std::shared_ptr<HostAllocation> allocation;
  uint64_t id = 0;
};

// Process-wide: every environment's allocations share one table (a pointer is unique).
struct Registry {
  std::mutex mu;
  std::unordered_map<const void*, Entry> live;
  uint64_t next_id = 1;
};

Registry& Table() {
  // Leaked on purpose: finalizers may run during static destruction at process exit.
  static Registry* registry = new Registry();
  return *registry;
}

}  // namespace

uint64_t RegisterHostBuffer(const HostAllocation& allocation) {
  std::shared_ptr<HostAllocation> shared(new HostAllocation(allocation), [](HostAllocation* a) {
    FreeHost(*a);
    delete a;
  });
  Registry& r = Table();
  std::lock_guard<std::mutex> lock(r.mu);
  const uint64_t id = r.next_id++;
  r.live[allocation.data] = {std::move(shared), id};
  return id;
}

void UnregisterHostBuffer(const void* data, uint64_t id) {
  std::shared_ptr<HostAllocation> last;  // released outside the lock
  Registry& r = Table();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.live.find(data);
  if (it == r.live.end() || it->second.id != id) return;
  last = std::move(it->second.allocation);
  r.live.erase(it);
}

bool ReleaseHostBuffer(const void* data) {
  std::shared_ptr<HostAllocation> last;  // released outside the lock
  Registry& r = Table();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.live.find(data);
  if (it == r.live.end()) return false;
  last = std::move(it->second.allocation);
  r.live.erase(it);
  return true;
}

std::shared_ptr<HostAllocation> FindHostBuffer(const void* data) {
  Registry& r = Table();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.live.find(data);
  return it == r.live.end() ? nullptr : it->second.allocation;
}

}  // namespace mnemo::binding
