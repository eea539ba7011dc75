// Status values for the native core: every fallible core call returns a Status (never a bool,
// never an exception across the core's boundary). Codes are grouped by hundreds so a caller
// can branch on the family: 1xx caller errors, 2xx resource/lifecycle, 3xx device, 9xx bugs.
// The binding maps Code() to the JS error `code` through StatusCodeName().
#pragma once

#include <string>
#include <utility>

namespace mnemo {

enum class StatusCode : int {
  kOk = 0,
  // 1xx: the caller passed something wrong.
  kInvalidArgument = 100,
  kOutOfRange = 101,
  kRangeConflict = 102,  // ranges of one batch overlap where they must not
  kMisaligned = 103,     // direct I/O offset, length or memory not aligned as the device needs
  kNotFound = 104,       // a path that must exist does not
  // 2xx: resources and lifecycle.
  kOutOfMemory = 200,
  kClosed = 201,  // the object (or the addon) was closed
  kUnsupported = 202,  // the platform refuses what was asked (O_DIRECT on tmpfs, no io_uring)
  // 3xx: device.
  kCudaUnavailable = 300,  // not compiled with CUDA, or no usable device
  kCudaError = 301,
  kIoError = 302,  // a read or write failed on the device (errno in the message)
  // 9xx: broken invariant inside the native code.
  kInternal = 900,
};

// Stable wire name of a code; also the JS `NativeError.code`.
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status RangeConflict(std::string m) { return {StatusCode::kRangeConflict, std::move(m)}; }
  static Status Misaligned(std::string m) { return {StatusCode::kMisaligned, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status OutOfMemory(std::string m) { return {StatusCode::kOutOfMemory, std::move(m)}; }
  static Status Closed(std::string m) { return {StatusCode::kClosed, std::move(m)}; }
  static Status CudaUnavailable(std::string m) { return {StatusCode::kCudaUnavailable, std::move(m)}; }
  static Status CudaError(std::string m) { return {StatusCode::kCudaError, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // Family of the code: 0 ok, 1 caller, 2 resource, 3 device, 9 internal.
  int group() const { return static_cast<int>(code_) / 100; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

  // Explicitly discards a Status where ignoring it is the intended behaviour.
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

}  // namespace mnemo

// Returns early from the enclosing function when `expr` yields a non-OK Status.
#define MNEMO_RETURN_IF_ERROR(expr)               \
  do {                                            \
    ::mnemo::Status mnemo_status_ = (expr);       \
    if (!mnemo_status_.ok()) return mnemo_status_; \
  } while (0)
