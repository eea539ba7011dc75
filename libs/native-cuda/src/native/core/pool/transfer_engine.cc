#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/byte_copy.h"
#include "core/crc32c.h"
#include "core/pool/transfer.h"
#include "core/pool/transfer_plan.h"

namespace mnemo {
namespace {

// Shared by every task of one batch; the last executor to finish moves it on.
struct Job {
  TransferPlan plan;
  TransferDone done;
  TaskQueue* pool = nullptr;
  TransferOptions options;
  std::atomic<size_t> remaining{0};
  std::mutex mu;
  Status status;  // guarded by mu: the first failure

  void Fail(const Status& s) {
    std::lock_guard<std::mutex> lock(mu);
    if (status.ok()) status = s;
  }
  Status Result() {
    std::lock_guard<std::mutex> lock(mu);
    return status;
  }
};

// Pieces at least this long are bulk: copied with streaming stores.
constexpr size_t kStreamingBytes = size_t{512} << 10;

void CopySegment(const CopySeg& s) {
  if (s.crc_out == nullptr) {
    CopyBytes(s.dst, s.src, s.length, s.length >= kStreamingBytes ? CopyHint::kStreaming : CopyHint::kCached);
    return;
  }
  // One pass: every word is checksummed from the register it is copied through.
  *s.crc_out = Crc32cCopy(0, s.dst, s.src, s.length);
}

// Each CRC range's pieces joined, once every piece has its CRC.
TransferResult Combined(const TransferPlan& plan) {
  TransferResult result;
  result.fused_crcs = plan.fused;
  result.crcs.reserve(plan.crcs.size());
  for (const CrcSpan& span : plan.crcs) {
    uint32_t crc = 0;
    for (size_t k = span.first; k < span.first + span.count; ++k) {
      const CrcPiece& p = plan.pieces[k];
      crc = Crc32cCombine(crc, p.crc, p.length);
    }
    result.crcs.push_back(crc);
  }
  return result;
}

void Finish(const std::shared_ptr<Job>& job) {
  Status status = job->Result();
  TransferResult result;
  if (status.ok()) result = Combined(job->plan);
  job->done(std::move(status), std::move(result));
}

// Second phase: CRC ranges nothing tiled, computed now that every write landed.
void RunPhase2(const std::shared_ptr<Job>& job) {
  const std::vector<size_t>& todo = job->plan.phase2;
  if (!job->Result().ok() || todo.empty()) {
    Finish(job);
    return;
  }
  uint64_t total = 0;
  for (size_t k : todo) total += job->plan.pieces[k].length;
  const size_t tasks_wanted = std::max<size_t>(1, std::min<size_t>(job->pool->size(), todo.size()));
  const uint64_t target = (total + tasks_wanted - 1) / tasks_wanted;
  std::vector<std::pair<size_t, size_t>> groups;  // [first, last) into todo
  uint64_t in_group = 0;
  for (size_t i = 0; i < todo.size(); ++i) {
    if (groups.empty() || in_group >= target) {
      groups.push_back({i, i});
      in_group = 0;
    }
    groups.back().second = i + 1;
    in_group += job->plan.pieces[todo[i]].length;
  }
  job->remaining.store(groups.size(), std::memory_order_release);
  std::vector<TaskQueue::Task> tasks;
  for (const auto& [first, last] : groups) {
    tasks.emplace_back([job, first = first, last = last] {
      for (size_t i = first; i < last; ++i) {
        CrcPiece& p = job->plan.pieces[job->plan.phase2[i]];
        p.crc = Crc32c(0, p.data, p.length);
      }
      if (job->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish(job);
    });
  }
  const Status submitted = job->pool->SubmitAll(std::move(tasks));
  if (!submitted.ok()) {
    job->Fail(submitted);
    Finish(job);
  }
}

void ExecutorDone(const std::shared_ptr<Job>& job, const Status& status) {
  if (!status.ok()) job->Fail(status);
  // acq_rel: the thread that finishes last must see every other executor's writes (bytes
  // and piece CRCs) before it checksums or reports them.
  if (job->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) RunPhase2(job);
}

}  // namespace

Status SubmitTransfer(const TransferBatch& batch, TaskQueue& pool, TransferDone done, const TransferOptions& options) {
  MNEMO_RETURN_IF_ERROR(ValidateTransfer(batch));
  if (pool.closed()) return Status::Closed("thread pool is shut down");
  auto job = std::make_shared<Job>();
  job->done = std::move(done);
  job->pool = &pool;
  job->options = options;
  PlanTransfer(batch, pool.size(), options, &job->plan);

  std::vector<TaskQueue::Task> tasks;
  for (size_t s = 0; s < job->plan.shards.size(); ++s) {
    tasks.emplace_back([job, s] {
      for (const CopySeg& seg : job->plan.shards[s]) CopySegment(seg);
      ExecutorDone(job, Status::Ok());
    });
  }
  // Nothing to copy or move: one empty task still carries the completion to a pool thread.
  if (tasks.empty() && job->plan.devices.empty()) tasks.emplace_back([job] { ExecutorDone(job, Status::Ok()); });
  job->remaining.store(tasks.size() + job->plan.devices.size(), std::memory_order_release);

  // Devices first: their queues fill while the pool copies.
  for (DeviceWork& work : job->plan.devices) {
    auto batch_io = std::make_unique<IoBatch>();
    batch_io->segments = work.segments;
    batch_io->done = [job](Status s) { ExecutorDone(job, s); };
    const Status queued = work.device->Submit(std::move(batch_io));
    if (!queued.ok()) ExecutorDone(job, queued);
  }
  const size_t task_count = tasks.size();
  const Status submitted = pool.SubmitAll(std::move(tasks));
  if (!submitted.ok()) {
    for (size_t i = 0; i < task_count; ++i) ExecutorDone(job, submitted);
  }
  return Status::Ok();
}

Status ValidateInlineTransfer(const TransferBatch& batch) {
  MNEMO_RETURN_IF_ERROR(ValidateTransfer(batch));
  for (size_t i = 0; i < batch.ranges.size(); ++i) {
    const TransferRange& r = batch.ranges[i];
    if (batch.operands[r.src].kind != OperandKind::kMemory || batch.operands[r.dst].kind != OperandKind::kMemory) {
      return Status::InvalidArgument("range " + std::to_string(i) + " touches an SSD device: an inline transfer moves memory only");
    }
  }
  return Status::Ok();
}

Status RunTransferInline(const TransferBatch& batch, size_t lanes, const ParallelRun& parallel,
                         TransferResult* result, const TransferOptions& options) {
  // Checked again here (microseconds for a layer's ranges): the batch is borrowed until now.
  MNEMO_RETURN_IF_ERROR(ValidateInlineTransfer(batch));
  TransferPlan plan;
  PlanTransfer(batch, std::max<size_t>(1, lanes), options, &plan);
  parallel(plan.shards.size(), [&plan](size_t s) {
    for (const CopySeg& seg : plan.shards[s]) CopySegment(seg);
  });
  parallel(plan.phase2.size(), [&plan](size_t i) {
    CrcPiece& p = plan.pieces[plan.phase2[i]];
    p.crc = Crc32c(0, p.data, p.length);
  });
  *result = Combined(plan);
  return Status::Ok();
}

}  // namespace mnemo
