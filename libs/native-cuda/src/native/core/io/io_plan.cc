#include <algorithm>

#include "core/io/io_request.h"

namespace mnemo {
namespace {

bool Aligned(const uint8_t* p, size_t length, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0 && length % alignment == 0;
}

void AddPart(IoRequest* r, const IoPart& part, size_t mem_alignment) {
  r->parts.push_back(part);
  r->length += part.length;
  if (!Aligned(part.mem, part.length, mem_alignment)) r->bounce = true;
  if (r->bounce) {
    r->iov.clear();
    return;
  }
  if (!r->iov.empty()) {
    iovec& last = r->iov.back();
    if (static_cast<uint8_t*>(last.iov_base) + last.iov_len == part.mem) {
      last.iov_len += part.length;
      return;
    }
  }
  r->iov.push_back({part.mem, part.length});
}

}  // namespace

std::vector<IoRequest> PlanIoRequests(std::vector<IoSegment> segments, size_t max_request_bytes,
                                      size_t mem_alignment, size_t max_iov) {
  std::stable_sort(segments.begin(), segments.end(),
                   [](const IoSegment& a, const IoSegment& b) { return a.offset < b.offset; });
  std::vector<IoRequest> out;
  for (const IoSegment& s : segments) {
    uint64_t done = 0;
    while (done < s.length) {
      IoRequest* cur = out.empty() ? nullptr : &out.back();
      uint8_t* mem = s.mem + done;
      const uint64_t offset = s.offset + done;
      const uint64_t left = s.length - done;
      // A segment is only cut when it is longer than a whole request: one that would fit in
      // a fresh request starts one rather than straddling two (its CRC stays one part's).
      const uint64_t room = cur == nullptr ? 0 : max_request_bytes - cur->length;
      const bool fits = left <= room || (left > max_request_bytes && room > 0);
      const bool joins = cur != nullptr && cur->op == s.op && cur->offset + cur->length == offset && fits;
      // A part that cannot merge into the last iovec needs a new one.
      const bool needs_iov = cur == nullptr || cur->bounce || cur->iov.empty() ||
                             static_cast<uint8_t*>(cur->iov.back().iov_base) + cur->iov.back().iov_len != mem;
      if (!joins || (needs_iov && !cur->bounce && cur->iov.size() >= max_iov)) {
        out.emplace_back();
        cur = &out.back();
        cur->op = s.op;
        cur->offset = offset;
      }
      const size_t take = static_cast<size_t>(std::min<uint64_t>(left, max_request_bytes - cur->length));
      AddPart(cur, {mem, take, take == s.length ? s.crc_out : nullptr}, mem_alignment);
      done += take;
    }
  }
  return out;
}

void AdvanceRequest(IoRequest* r, size_t bytes) {
  r->done += bytes;
  while (bytes > 0 && r->iov_first < r->iov.size()) {
    iovec& v = r->iov[r->iov_first];
    if (bytes >= v.iov_len) {
      bytes -= v.iov_len;
      v.iov_len = 0;
      ++r->iov_first;
    } else {
      v.iov_base = static_cast<uint8_t*>(v.iov_base) + bytes;
      v.iov_len -= bytes;
      bytes = 0;
    }
  }
}

}  // namespace mnemo
