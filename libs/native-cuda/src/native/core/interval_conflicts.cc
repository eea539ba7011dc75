#include "core/interval_conflicts.h"

#include <algorithm>
#include <string>

namespace mnemo {
namespace {

std::string RangeName(size_t i) { return "range " + std::to_string(i); }

}  // namespace

Status FindConflict(std::vector<AccessInterval> intervals) {
  intervals.erase(std::remove_if(intervals.begin(), intervals.end(),
                                 [](const AccessInterval& i) { return i.end <= i.begin; }),
                  intervals.end());
  std::sort(intervals.begin(), intervals.end(), [](const AccessInterval& a, const AccessInterval& b) {
    if (a.space != b.space) return a.space < b.space;
    return a.begin != b.begin ? a.begin < b.begin : a.write > b.write;
  });
  // Sweep in address order. Two intervals overlap iff the later-starting one begins before
  // the earlier one ends, so it is enough to remember the furthest-reaching write and read
  // seen so far in the current space: any interval starting below the furthest write end
  // overlaps a write; a write starting below the furthest read end overlaps a read.
  const AccessInterval* far_write = nullptr;
  const AccessInterval* far_read = nullptr;
  for (const AccessInterval& cur : intervals) {
    if (far_write != nullptr && far_write->space != cur.space) far_write = nullptr;
    if (far_read != nullptr && far_read->space != cur.space) far_read = nullptr;
    if (far_write != nullptr && cur.begin < far_write->end) {
      return Status::RangeConflict(RangeName(cur.range) + (cur.write ? " writes" : " reads") + " bytes that " +
                                   RangeName(far_write->range) + " writes");
    }
    if (cur.write && far_read != nullptr && cur.begin < far_read->end) {
      return Status::RangeConflict(RangeName(cur.range) + " writes bytes that " + RangeName(far_read->range) + " reads");
    }
    const AccessInterval*& far = cur.write ? far_write : far_read;
    if (far == nullptr || cur.end > far->end) far = &cur;
  }
  return Status::Ok();
}

}  // namespace mnemo
