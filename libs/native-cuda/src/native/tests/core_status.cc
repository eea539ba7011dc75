// Status: codes, groups, wire names.
#include <string>

#include "core/status.h"
#include "tests/check.h"

namespace mnemo {
namespace {

Status FailsWith(StatusCode code) { return Status(code, "because"); }

Status Chain(StatusCode first, bool* reached_end) {
  MNEMO_RETURN_IF_ERROR(FailsWith(first));
  *reached_end = true;
  return Status::Ok();
}

MNEMO_TEST(status, default_is_ok) {
  const Status s;
  CHECK(s.ok());
  CHECK_EQ(s.code(), StatusCode::kOk);
  CHECK_EQ(s.group(), 0);
  CHECK_EQ(s.ToString(), std::string("ok"));
}

MNEMO_TEST(status, codes_are_grouped_by_hundreds) {
  struct Case {
    Status status;
    StatusCode code;
    int group;
    const char* name;
  };
  const Case cases[] = {
      {Status::InvalidArgument("x"), StatusCode::kInvalidArgument, 1, "invalid_argument"},
      {Status::OutOfRange("x"), StatusCode::kOutOfRange, 1, "out_of_range"},
      {Status::RangeConflict("x"), StatusCode::kRangeConflict, 1, "range_conflict"},
      {Status::Misaligned("x"), StatusCode::kMisaligned, 1, "misaligned"},
      {Status::NotFound("x"), StatusCode::kNotFound, 1, "not_found"},
      {Status::OutOfMemory("x"), StatusCode::kOutOfMemory, 2, "out_of_memory"},
      {Status::Closed("x"), StatusCode::kClosed, 2, "closed"},
      {Status::Unsupported("x"), StatusCode::kUnsupported, 2, "unsupported"},
      {Status::CudaUnavailable("x"), StatusCode::kCudaUnavailable, 3, "cuda_unavailable"},
      {Status::CudaError("x"), StatusCode::kCudaError, 3, "cuda_error"},
      {Status::IoError("x"), StatusCode::kIoError, 3, "io_error"},
      {Status::Internal("x"), StatusCode::kInternal, 9, "internal"},
  };
  for (const Case& c : cases) {
    CHECK(!c.status.ok());
    CHECK_EQ(c.status.code(), c.code);
    CHECK_EQ(c.status.group(), c.group);
    CHECK_EQ(std::string(StatusCodeName(c.code)), std::string(c.name));
    CHECK_EQ(c.status.ToString(), std::string(c.name) + ": x");
  }
}

MNEMO_TEST(status, return_if_error_stops_at_the_first_failure) {
  bool reached = false;
  const Status s = Chain(StatusCode::kOutOfRange, &reached);
  CHECK(!reached);
  CHECK_EQ(s.code(), StatusCode::kOutOfRange);
  CHECK_EQ(s.message(), std::string("because"));
  reached = false;
  CHECK(Chain(StatusCode::kOk, &reached).ok());
  CHECK(reached);
}

}  // namespace
}  // namespace mnemo
