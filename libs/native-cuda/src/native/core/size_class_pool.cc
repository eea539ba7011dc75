#include "core/size_class_pool.h"

#include <utility>

namespace mnemo {

SizeClassPool::SizeClassPool(RawAlloc alloc, RawFree free, std::size_t cap_bytes)
    : alloc_(std::move(alloc)), free_(std::move(free)), cap_(cap_bytes) {}

SizeClassPool::~SizeClassPool() { Trim(); }

std::size_t SizeClassPool::ClassBytes(std::size_t bytes) {
  constexpr std::size_t kMin = 256;
  constexpr std::size_t kPow2Limit = std::size_t{1} << 20;
  if (bytes <= kMin) return kMin;
  std::size_t p = kMin;
  while (p < bytes && p < kPow2Limit) p <<= 1;
  if (p >= bytes) return p;
  // Above 1 MiB: quarter steps between consecutive powers of two.
  while (p * 2 < bytes) p <<= 1;
  const std::size_t step = p / 4;
  return p + ((bytes - p + step - 1) / step) * step;
}

Status SizeClassPool::Take(std::size_t bytes, void** out) {
  const std::size_t cls = ClassBytes(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cached_.find(cls);
  if (it != cached_.end() && !it->second.empty()) {
    *out = it->second.back();
    it->second.pop_back();
    stats_.cached_bytes -= cls;
    stats_.hits++;
  } else {
    Status s = alloc_(cls, out);
    if (s.code() == StatusCode::kOutOfMemory && stats_.cached_bytes > 0) {
      TrimLocked();
      s = alloc_(cls, out);
    }
    if (!s.ok()) return s;
    stats_.misses++;
  }
  live_[*out] = cls;
  stats_.live_bytes += cls;
  return Status::Ok();
}

void SizeClassPool::Put(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) {
    // Not from this pool: the caller's mistake must not corrupt the cache; free it directly.
    free_(ptr);
    return;
  }
  const std::size_t cls = it->second;
  live_.erase(it);
  stats_.live_bytes -= cls;
  if (stats_.cached_bytes + cls > cap_) {
    free_(ptr);
    stats_.trims++;
    return;
  }
  cached_[cls].push_back(ptr);
  stats_.cached_bytes += cls;
}

void SizeClassPool::Trim() {
  std::lock_guard<std::mutex> lock(mu_);
  TrimLocked();
}

void SizeClassPool::TrimLocked() {
  for (auto& [cls, list] : cached_) {
    for (void* p : list) {
      free_(p);
      stats_.trims++;
    }
    list.clear();
  }
  stats_.cached_bytes = 0;
}

SizeClassPool::Stats SizeClassPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace mnemo
