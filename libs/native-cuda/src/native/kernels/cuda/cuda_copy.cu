// The copy lane (cuda_copy.h): events tie it to the compute stream, tickets to the caller.
#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_copy.h"

namespace mnemo::kernels::cuda {
namespace {

struct Lane {
  std::mutex mu;
  uint64_t next = 1;
  std::unordered_map<uint64_t, cudaEvent_t> pending;
  std::vector<cudaEvent_t> spare;  // released events, reused (creating one is not free)
};

Lane& TheLane() {
  static Lane* lane = new Lane();  // leaked on purpose: no CUDA calls from static destructors
  return *lane;
}

Status TakeEvent(Lane& lane, cudaEvent_t* ev) {
  if (!lane.spare.empty()) {
    *ev = lane.spare.back();
    lane.spare.pop_back();
    return Status::Ok();
  }
  return FromCuda(cudaEventCreateWithFlags(ev, cudaEventDisableTiming), "cudaEventCreate");
}

Status CheckRanges(const DeviceBuffer& device, std::size_t host_bytes, const CopyRange* ranges, std::size_t count,
                   CopyDirection dir) {
  const std::size_t device_bytes = device.elements * 2;  // 16-bit storage
  std::vector<std::pair<std::size_t, std::size_t>> dst;
  dst.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const CopyRange& r = ranges[i];
    if (r.bytes == 0) continue;
    if (r.device_offset > device_bytes || r.bytes > device_bytes - r.device_offset)
      return Status::OutOfRange("copy range " + std::to_string(i) + " runs past the device buffer");
    if (r.host_offset > host_bytes || r.bytes > host_bytes - r.host_offset)
      return Status::OutOfRange("copy range " + std::to_string(i) + " runs past the host range");
    dst.emplace_back(dir == CopyDirection::kHostToDevice ? r.device_offset : r.host_offset, r.bytes);
  }
  std::sort(dst.begin(), dst.end());
  for (std::size_t i = 1; i < dst.size(); ++i)
    if (dst[i - 1].first + dst[i - 1].second > dst[i].first)
      return Status::RangeConflict("two copy ranges write the same bytes");
  return Status::Ok();
}

}  // namespace

Status CopyAsync(CopyDirection dir, const DeviceBuffer& device, void* host, std::size_t host_bytes,
                 const CopyRange* ranges, std::size_t count, CopySubmit submit, uint64_t* ticket) {
  MNEMO_RETURN_IF_ERROR(SameDtype({&device}));
  if (host == nullptr && host_bytes > 0) return Status::InvalidArgument("host range is null");
  MNEMO_RETURN_IF_ERROR(CheckRanges(device, host_bytes, ranges, count, dir));
  Lane& lane = TheLane();
  std::lock_guard<std::mutex> lock(lane.mu);
  cudaEvent_t after_compute = nullptr, done = nullptr;
  MNEMO_RETURN_IF_ERROR(TakeEvent(lane, &after_compute));
  // Recording on the compute stream needs no compute-lane lock: it only marks the stream's
  // current tail, and ops enqueued concurrently land on one side of it or the other.
  Status st = FromCuda(cudaEventRecord(after_compute, ComputeStream()), "cudaEventRecord(compute)");
  if (st.ok()) st = FromCuda(cudaStreamWaitEvent(CopyStream(), after_compute, 0), "cudaStreamWaitEvent(copy)");
  lane.spare.push_back(after_compute);  // reusable at once: the wait captured its state
  MNEMO_RETURN_IF_ERROR(st);

  char* dev = static_cast<char*>(device.ptr);
  char* hst = static_cast<char*>(host);
  const bool to_device = dir == CopyDirection::kHostToDevice;
  if (submit == CopySubmit::kBatched && count > 0) {
    std::vector<void*> dsts;
    std::vector<const void*> srcs;
    std::vector<std::size_t> sizes;
    for (std::size_t i = 0; i < count; ++i) {
      if (ranges[i].bytes == 0) continue;
      char* d = dev + ranges[i].device_offset;
      char* h = hst + ranges[i].host_offset;
      dsts.push_back(to_device ? static_cast<void*>(d) : h);
      srcs.push_back(to_device ? static_cast<const void*>(h) : d);
      sizes.push_back(ranges[i].bytes);
    }
    if (!dsts.empty()) {
      cudaMemcpyAttributes attr{};
      attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
      std::size_t attr_idx = 0;
      MNEMO_RETURN_IF_ERROR(FromCuda(cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), dsts.size(), &attr,
                                                          &attr_idx, 1, CopyStream()),
                                     "cudaMemcpyBatchAsync"));
    }
  } else {
    const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    for (std::size_t i = 0; i < count; ++i) {
      const CopyRange& r = ranges[i];
      if (r.bytes == 0) continue;
      void* d = to_device ? static_cast<void*>(dev + r.device_offset) : hst + r.host_offset;
      const void* s = to_device ? static_cast<const void*>(hst + r.host_offset) : dev + r.device_offset;
      MNEMO_RETURN_IF_ERROR(FromCuda(cudaMemcpyAsync(d, s, r.bytes, kind, CopyStream()), "cudaMemcpyAsync(copy lane)"));
    }
  }
  MNEMO_RETURN_IF_ERROR(TakeEvent(lane, &done));
  st = FromCuda(cudaEventRecord(done, CopyStream()), "cudaEventRecord(copy)");
  if (!st.ok()) {
    lane.spare.push_back(done);
    return st;
  }
  *ticket = lane.next++;
  lane.pending.emplace(*ticket, done);
  return Status::Ok();
}

namespace {

// Finds the ticket's event; the caller holds lane.mu.
Status Find(Lane& lane, uint64_t ticket, cudaEvent_t* ev) {
  auto it = lane.pending.find(ticket);
  if (it == lane.pending.end()) return Status::NotFound("unknown or released copy ticket " + std::to_string(ticket));
  *ev = it->second;
  return Status::Ok();
}

void Release(Lane& lane, uint64_t ticket) {
  auto it = lane.pending.find(ticket);
  if (it == lane.pending.end()) return;
  lane.spare.push_back(it->second);
  lane.pending.erase(it);
}

}  // namespace

Status WaitCopy(uint64_t ticket) {
  Lane& lane = TheLane();
  cudaEvent_t ev;
  {
    std::lock_guard<std::mutex> lock(lane.mu);
    MNEMO_RETURN_IF_ERROR(Find(lane, ticket, &ev));
  }
  // Waiting without the lock: other threads keep submitting. Only this ticket's owner
  // releases it, so the event stays valid here.
  MNEMO_RETURN_IF_ERROR(FromCuda(cudaEventSynchronize(ev), "cudaEventSynchronize(copy)"));
  std::lock_guard<std::mutex> lock(lane.mu);
  Release(lane, ticket);
  return Status::Ok();
}

Status CopyDone(uint64_t ticket, bool* done) {
  Lane& lane = TheLane();
  std::lock_guard<std::mutex> lock(lane.mu);
  cudaEvent_t ev;
  MNEMO_RETURN_IF_ERROR(Find(lane, ticket, &ev));
  const cudaError_t err = cudaEventQuery(ev);
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    *done = false;
    return Status::Ok();
  }
  MNEMO_RETURN_IF_ERROR(FromCuda(err, "cudaEventQuery(copy)"));
  *done = true;
  Release(lane, ticket);
  return Status::Ok();
}

Status ComputeWaitsFor(uint64_t ticket) {
  Lane& lane = TheLane();
  std::lock_guard<std::mutex> lock(lane.mu);
  cudaEvent_t ev;
  MNEMO_RETURN_IF_ERROR(Find(lane, ticket, &ev));
  return FromCuda(cudaStreamWaitEvent(ComputeStream(), ev, 0), "cudaStreamWaitEvent(compute)");
}

std::size_t PendingCopies() {
  Lane& lane = TheLane();
  std::lock_guard<std::mutex> lock(lane.mu);
  return lane.pending.size();
}

}  // namespace mnemo::kernels::cuda
