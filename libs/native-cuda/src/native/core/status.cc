#include "core/status.h"

namespace mnemo {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid_argument";
    case StatusCode::kOutOfRange: return "out_of_range";
    case StatusCode::kRangeConflict: return "range_conflict";
    case StatusCode::kMisaligned: return "misaligned";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kOutOfMemory: return "out_of_memory";
    case StatusCode::kClosed: return "closed";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kCudaUnavailable: return "cuda_unavailable";
    case StatusCode::kCudaError: return "cuda_error";
    case StatusCode::kIoError: return "io_error";
    case StatusCode::kInternal: return "internal";
  }
  return "internal";  // unreachable for valid enumerators; -Wswitch flags missing cases
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace mnemo
