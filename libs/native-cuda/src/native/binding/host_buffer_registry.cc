#include "binding/host_buffer_registry.h"

#include <mutex>
#include <unordered_map>

namespace mnemo::binding {
namespace {

// Process-wide: every environment's allocations share one table (a pointer is unique).
struct Registry {
  std::mutex mu;
  std::unordered_map<const void*, std::shared_ptr<HostAllocation>> live;
};

Registry& Table() {
  // Leaked on purpose: finalizers may run during static destruction at process exit.
  static Registry* registry = new Registry();
  return *registry;
}

}  // namespace

std::shared_ptr<HostAllocation> RegisterHostBuffer(const HostAllocation& allocation) {
  std::shared_ptr<HostAllocation> shared(new HostAllocation(allocation), [](HostAllocation* a) {
    FreeHost(*a);
    delete a;
  });
  Registry& r = Table();
  std::lock_guard<std::mutex> lock(r.mu);
  r.live[allocation.data] = shared;
  return shared;
}

void UnregisterHostBuffer(const void* data) {
  std::shared_ptr<HostAllocation> last;  // released outside the lock
  Registry& r = Table();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.live.find(data);
  if (it == r.live.end()) return;
  last = std::move(it->second);
  r.live.erase(it);
}

std::shared_ptr<HostAllocation> FindHostBuffer(const void* data) {
  Registry& r = Table();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.live.find(data);
  return it == r.live.end() ? nullptr : it->second;
}

}  // namespace mnemo::binding
