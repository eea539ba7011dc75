#include "core/pool/transfer_plan.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/interval_conflicts.h"

namespace mnemo {
namespace {

constexpr size_t kNone = SIZE_MAX;

std::string RangeName(size_t i) { return "range " + std::to_string(i); }

uint64_t OperandSize(const TransferOperand& op) {
  return op.kind == OperandKind::kSsd ? op.ssd->size() : op.size;
}

Status CheckSide(const TransferBatch& batch, size_t i, uint32_t operand, uint64_t offset, uint64_t length,
                 const char* side) {
  if (operand >= batch.operands.size()) {
    return Status::OutOfRange(RangeName(i) + ": " + side + " operand " + std::to_string(operand) +
                              " out of range (have " + std::to_string(batch.operands.size()) + ")");
  }
  const TransferOperand& op = batch.operands[operand];
  const uint64_t size = OperandSize(op);
  // Written as subtractions so that offset + length cannot overflow.
  if (offset > size || length > size - offset) {
    return Status::OutOfRange(RangeName(i) + ": " + side + " [" + std::to_string(offset) + ", +" +
                              std::to_string(length) + ") exceeds operand " + std::to_string(operand) + " of " +
                              std::to_string(size) + " bytes");
  }
  if (op.kind == OperandKind::kSsd) {
    if (op.ssd->closing()) return Status::Closed(RangeName(i) + ": device " + op.ssd->path() + " is closed");
    const uint64_t block = op.ssd->block_size();
    if (offset % block != 0 || length % block != 0) {
      return Status::Misaligned(RangeName(i) + ": " + side + " [" + std::to_string(offset) + ", +" +
                                std::to_string(length) + ") on " + op.ssd->path() +
                                " is not a multiple of the block size " + std::to_string(block));
    }
  } else if (length > 0 && op.data == nullptr) {
    return Status::InvalidArgument(RangeName(i) + ": " + side + " operand has no memory");
  }
  return Status::Ok();
}

// Memory side of a range, as [begin, end) addresses.
struct MemInterval {
  uintptr_t begin;
  uintptr_t end;
  size_t range;
};

// The ranges whose intervals tile [a, e) exactly, in address order; empty when none do.
// `sorted` is ordered by begin. Destination intervals never overlap (validated), so the
// tiling is unique; sources may overlap, and the greedy walk may then miss a tiling, which
// only costs a second pass.
std::vector<size_t> FindTiling(const std::vector<MemInterval>& sorted, const std::vector<bool>& claimed,
                               uintptr_t a, uintptr_t e) {
  std::vector<size_t> chain;
  uintptr_t pos = a;
  while (pos < e) {
    auto it = std::lower_bound(sorted.begin(), sorted.end(), pos,
                               [](const MemInterval& m, uintptr_t p) { return m.begin < p; });
    while (it != sorted.end() && it->begin == pos && (it->end > e || claimed[it->range])) ++it;
    if (it == sorted.end() || it->begin != pos) return {};
    chain.push_back(it->range);
    pos = it->end;
  }
  return chain;
}

}  // namespace

Status ValidateTransfer(const TransferBatch& batch) {
  for (size_t o = 0; o < batch.operands.size(); ++o) {
    const TransferOperand& op = batch.operands[o];
    if (op.kind == OperandKind::kSsd && op.ssd == nullptr) {
      return Status::InvalidArgument("operand " + std::to_string(o) + " is an SSD without a device");
    }
  }
  std::vector<const SsdDevice*> devices;  // space of device d is d + 1
  auto space_of = [&](const TransferOperand& op) -> uint64_t {
    if (op.kind == OperandKind::kMemory) return 0;
    auto it = std::find(devices.begin(), devices.end(), op.ssd);
    if (it == devices.end()) {
      devices.push_back(op.ssd);
      return devices.size();
    }
    return static_cast<uint64_t>(it - devices.begin()) + 1;
  };
  std::vector<AccessInterval> intervals;
  intervals.reserve(batch.ranges.size() * 2);
  for (size_t i = 0; i < batch.ranges.size(); ++i) {
    const TransferRange& r = batch.ranges[i];
    MNEMO_RETURN_IF_ERROR(CheckSide(batch, i, r.src, r.src_offset, r.length, "source"));
    MNEMO_RETURN_IF_ERROR(CheckSide(batch, i, r.dst, r.dst_offset, r.length, "destination"));
    const TransferOperand& src = batch.operands[r.src];
    const TransferOperand& dst = batch.operands[r.dst];
    if (src.kind == OperandKind::kSsd && dst.kind == OperandKind::kSsd) {
      return Status::InvalidArgument(RangeName(i) + ": SSD to SSD is not supported; stage it through host memory");
    }
    if (r.length == 0) continue;
    const uint64_t src_base = src.kind == OperandKind::kMemory ? reinterpret_cast<uintptr_t>(src.data) : 0;
    const uint64_t dst_base = dst.kind == OperandKind::kMemory ? reinterpret_cast<uintptr_t>(dst.data) : 0;
    intervals.push_back({space_of(src), src_base + r.src_offset, src_base + r.src_offset + r.length, i, false});
    intervals.push_back({space_of(dst), dst_base + r.dst_offset, dst_base + r.dst_offset + r.length, i, true});
  }
  for (size_t c = 0; c < batch.crcs.size(); ++c) {
    const CrcRange& crc = batch.crcs[c];
    if (crc.operand >= batch.operands.size()) {
      return Status::OutOfRange("crc " + std::to_string(c) + ": operand out of range");
    }
    const TransferOperand& op = batch.operands[crc.operand];
    if (op.kind != OperandKind::kMemory) {
      return Status::InvalidArgument("crc " + std::to_string(c) + ": CRCs are taken over memory operands only");
    }
    if (crc.offset > op.size || crc.length > op.size - crc.offset) {
      return Status::OutOfRange("crc " + std::to_string(c) + ": [" + std::to_string(crc.offset) + ", +" +
                                std::to_string(crc.length) + ") exceeds operand " + std::to_string(crc.operand) +
                                " of " + std::to_string(op.size) + " bytes");
    }
    if (crc.length > 0 && op.data == nullptr) return Status::InvalidArgument("crc " + std::to_string(c) + ": no memory");
  }
  return FindConflict(std::move(intervals));
}

void PlanTransfer(const TransferBatch& batch, size_t max_shards, const TransferOptions& options, TransferPlan* plan) {
  const size_t n = batch.ranges.size();
  // Where each range's pieces went: shard/segment or device/segment, in range order.
  struct SegRef {
    bool device;
    size_t group;
    size_t index;
  };
  std::vector<std::vector<SegRef>> range_segs(n);

  // 1. Memory → memory ranges, cut into shards of about equal bytes.
  uint64_t total = 0;
  for (const TransferRange& r : batch.ranges) {
    if (batch.operands[r.src].kind == OperandKind::kMemory && batch.operands[r.dst].kind == OperandKind::kMemory) {
      total += r.length;
    }
  }
  if (total > 0) {
    const uint64_t min_bytes = std::max<size_t>(options.min_shard_bytes, 1);
    const uint64_t shards = std::max<uint64_t>(1, std::min<uint64_t>(max_shards, (total + min_bytes - 1) / min_bytes));
    const uint64_t target = (total + shards - 1) / shards;
    uint64_t in_shard = 0;
    plan->shards.emplace_back();
    for (size_t i = 0; i < n; ++i) {
      const TransferRange& r = batch.ranges[i];
      const TransferOperand& src = batch.operands[r.src];
      const TransferOperand& dst = batch.operands[r.dst];
      if (src.kind != OperandKind::kMemory || dst.kind != OperandKind::kMemory) continue;
      uint64_t done = 0;
      while (done < r.length) {
        if (in_shard >= target && plan->shards.size() < shards) {
          plan->shards.emplace_back();
          in_shard = 0;
        }
        // The last shard takes whatever remains (rounding), the others stop at `target`.
        const uint64_t room = plan->shards.size() < shards ? target - in_shard : r.length - done;
        const uint64_t take = std::min(r.length - done, room);
        plan->shards.back().push_back({src.data + r.src_offset + done, dst.data + r.dst_offset + done,
                                       static_cast<size_t>(take), nullptr});
        range_segs[i].push_back({false, plan->shards.size() - 1, plan->shards.back().size() - 1});
        in_shard += take;
        done += take;
      }
    }
  }

  // 2. Ranges touching an SSD: per-device segments no longer than one request.
  for (size_t i = 0; i < n; ++i) {
    const TransferRange& r = batch.ranges[i];
    const TransferOperand& src = batch.operands[r.src];
    const TransferOperand& dst = batch.operands[r.dst];
    if (r.length == 0 || (src.kind == OperandKind::kMemory && dst.kind == OperandKind::kMemory)) continue;
    const bool read = src.kind == OperandKind::kSsd;
    SsdDevice* device = read ? src.ssd : dst.ssd;
    auto it = std::find_if(plan->devices.begin(), plan->devices.end(),
                           [device](const DeviceWork& w) { return w.device == device; });
    if (it == plan->devices.end()) {
      plan->devices.push_back({device, {}});
      it = plan->devices.end() - 1;
    }
    const size_t group = static_cast<size_t>(it - plan->devices.begin());
    const uint64_t device_offset = read ? r.src_offset : r.dst_offset;
    uint8_t* mem = read ? dst.data + r.dst_offset : src.data + r.src_offset;
    const uint64_t step = device->max_request_bytes();
    for (uint64_t done = 0; done < r.length; done += step) {
      const uint64_t take = std::min(step, r.length - done);
      it->segments.push_back({read ? IoOp::kRead : IoOp::kWrite, device_offset + done, mem + done, take, nullptr});
      range_segs[i].push_back({true, group, it->segments.size() - 1});
    }
  }

  // 3. CRC ranges: fused where the batch's destinations (or sources) tile them.
  std::vector<MemInterval> dsts;
  std::vector<MemInterval> srcs;
  for (size_t i = 0; i < n; ++i) {
    const TransferRange& r = batch.ranges[i];
    if (r.length == 0) continue;
    const TransferOperand& src = batch.operands[r.src];
    const TransferOperand& dst = batch.operands[r.dst];
    if (dst.kind == OperandKind::kMemory) {
      const auto b = reinterpret_cast<uintptr_t>(dst.data) + r.dst_offset;
      dsts.push_back({b, b + r.length, i});
    }
    if (src.kind == OperandKind::kMemory) {
      const auto b = reinterpret_cast<uintptr_t>(src.data) + r.src_offset;
      srcs.push_back({b, b + r.length, i});
    }
  }
  auto by_begin = [](const MemInterval& a, const MemInterval& b) { return a.begin < b.begin; };
  std::sort(dsts.begin(), dsts.end(), by_begin);
  std::stable_sort(srcs.begin(), srcs.end(), by_begin);
  std::vector<bool> claimed(n, false);
  // Piece index per segment, resolved to pointers once `pieces` stops growing.
  std::vector<std::pair<SegRef, size_t>> links;
  for (const CrcRange& crc : batch.crcs) {
    CrcSpan span{plan->pieces.size(), 0};
    const uint8_t* base = batch.operands[crc.operand].data + crc.offset;
    const auto a = reinterpret_cast<uintptr_t>(base);
    std::vector<size_t> chain;
    if (crc.length > 0) {
      chain = FindTiling(dsts, claimed, a, a + crc.length);
      if (chain.empty()) chain = FindTiling(srcs, claimed, a, a + crc.length);
    }
    if (!chain.empty()) {
      ++plan->fused;
      for (size_t r : chain) {
        claimed[r] = true;
        for (const SegRef& ref : range_segs[r]) {
          const uint64_t len = ref.device ? plan->devices[ref.group].segments[ref.index].length
                                          : plan->shards[ref.group][ref.index].length;
          links.push_back({ref, plan->pieces.size()});
          plan->pieces.push_back({nullptr, len, 0});
        }
      }
    } else {
      const uint64_t step = std::max<size_t>(options.crc_piece_bytes, 1);
      for (uint64_t done = 0; done < crc.length; done += step) {
        plan->phase2.push_back(plan->pieces.size());
        plan->pieces.push_back({base + done, std::min<uint64_t>(step, crc.length - done), 0});
      }
    }
    span.count = plan->pieces.size() - span.first;
    plan->crcs.push_back(span);
  }
  for (const auto& [ref, piece] : links) {
    uint32_t* out = &plan->pieces[piece].crc;
    if (ref.device) {
      plan->devices[ref.group].segments[ref.index].crc_out = out;
    } else {
      plan->shards[ref.group][ref.index].crc_out = out;
    }
  }
}

}  // namespace mnemo
