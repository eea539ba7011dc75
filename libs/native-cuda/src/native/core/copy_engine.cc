#include "core/copy_engine.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>

#include "core/byte_copy.h"
#include "core/interval_conflicts.h"

namespace mnemo {
namespace {

std::string RangeName(size_t i) { return "range " + std::to_string(i); }

Status CheckBounds(const CopyBatch& batch, size_t i) {
  const CopyRange& r = batch.ranges[i];
  const size_t n = batch.buffers.size();
  if (r.src >= n || r.dst >= n) {
    return Status::OutOfRange(RangeName(i) + ": buffer index out of range (have " +
                              std::to_string(n) + " buffers)");
  }
  const CopyBuffer& src = batch.buffers[r.src];
  const CopyBuffer& dst = batch.buffers[r.dst];
  // Written as subtractions so that offset + length cannot overflow.
  if (r.src_offset > src.size || r.length > src.size - r.src_offset) {
    return Status::OutOfRange(RangeName(i) + ": source [" + std::to_string(r.src_offset) + ", +" +
                              std::to_string(r.length) + ") exceeds buffer " +
                              std::to_string(r.src) + " of " + std::to_string(src.size) +
                              " bytes");
  }
  if (r.dst_offset > dst.size || r.length > dst.size - r.dst_offset) {
    return Status::OutOfRange(RangeName(i) + ": destination [" + std::to_string(r.dst_offset) +
                              ", +" + std::to_string(r.length) + ") exceeds buffer " +
                              std::to_string(r.dst) + " of " + std::to_string(dst.size) +
                              " bytes");
  }
  if (r.length > 0 && (src.data == nullptr || dst.data == nullptr)) {
    return Status::InvalidArgument(RangeName(i) + ": null buffer");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateCopyBatch(const CopyBatch& batch) {
  std::vector<AccessInterval> intervals;
  intervals.reserve(batch.ranges.size() * 2);
  for (size_t i = 0; i < batch.ranges.size(); ++i) {
    MNEMO_RETURN_IF_ERROR(CheckBounds(batch, i));
    const CopyRange& r = batch.ranges[i];
    if (r.length == 0) continue;
    const auto src = reinterpret_cast<uintptr_t>(batch.buffers[r.src].data) + r.src_offset;
    const auto dst = reinterpret_cast<uintptr_t>(batch.buffers[r.dst].data) + r.dst_offset;
    intervals.push_back({0, src, src + r.length, i, false});
    intervals.push_back({0, dst, dst + r.length, i, true});
  }
  return FindConflict(std::move(intervals));
}

std::vector<CopyShard> PlanCopyShards(const CopyBatch& batch, size_t max_shards,
                                      size_t min_shard_bytes) {
  size_t total = 0;
  for (const CopyRange& r : batch.ranges) total += r.length;
  const size_t min_bytes = std::max<size_t>(min_shard_bytes, 1);
  size_t shards = std::max<size_t>(1, std::min(max_shards, (total + min_bytes - 1) / min_bytes));
  const size_t target = std::max<size_t>(1, (total + shards - 1) / shards);

  std::vector<CopyShard> out(1);
  for (const CopyRange& r : batch.ranges) {
    const uint8_t* src = batch.buffers[r.src].data + r.src_offset;
    uint8_t* dst = batch.buffers[r.dst].data + r.dst_offset;
    size_t left = r.length;
    while (left > 0) {
      if (out.back().bytes >= target && out.size() < shards) out.emplace_back();
      CopyShard& shard = out.back();
      // The last shard takes whatever remains (rounding), the others stop at `target`.
      const size_t room = out.size() < shards ? target - shard.bytes : left;
      const size_t take = std::min(left, room);
      shard.segments.push_back({src, dst, take});
      shard.bytes += take;
      src += take;
      dst += take;
      left -= take;
    }
  }
  return out;
}

void RunCopyShard(const CopyShard& shard) {
  for (const CopySegment& s : shard.segments) {
    // Bulk pieces bypass the caches; small ones are likely read again soon.
    CopyBytes(s.dst, s.src, s.length, s.length >= (size_t{512} << 10) ? CopyHint::kStreaming : CopyHint::kCached);
  }
}

Status CopyEngine::Submit(const CopyBatch& batch, Completion done) {
  MNEMO_RETURN_IF_ERROR(ValidateCopyBatch(batch));
  // Shared by the shard tasks; the task that finishes last runs the completion.
  struct Job {
    std::vector<CopyShard> shards;
    std::atomic<size_t> remaining{0};
    Completion done;
  };
  auto job = std::make_shared<Job>();
  job->shards = PlanCopyShards(batch, pool_.size(), min_shard_bytes_);
  job->remaining.store(job->shards.size());
  job->done = std::move(done);

  std::vector<TaskQueue::Task> tasks;
  tasks.reserve(job->shards.size());
  for (size_t i = 0; i < job->shards.size(); ++i) {
    tasks.emplace_back([job, i] {
      RunCopyShard(job->shards[i]);
      // acq_rel: the completing thread must see every other shard's writes before it
      // reports completion (and the JS side then reads the destination bytes).
      if (job->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        job->done(Status::Ok());
      }
    });
  }
  return pool_.SubmitAll(std::move(tasks));
}

Status CopyEngine::CopySync(const CopyBatch& batch) {
  MNEMO_RETURN_IF_ERROR(ValidateCopyBatch(batch));
  for (const CopyShard& shard : PlanCopyShards(batch, 1, 1)) RunCopyShard(shard);
  return Status::Ok();
}

}  // namespace mnemo
