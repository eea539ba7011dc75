// How a pool device's worker thread talks to the kernel. Two backends behind one small
// interface: io_uring (asynchronous, many requests in flight) and pread/pwrite (one request
// at a time, synchronous; the fallback when liburing was missing at build time or
// io_uring_queue_init fails at run time).
//
// Threading: everything except Wake() is called only by the device's worker thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/io/io_request.h"
#include "core/status.h"

namespace mnemo {

enum class IoBackendKind : uint8_t {
  kIoUring,
  kPread,
};

const char* IoBackendName(IoBackendKind kind);

class IoBackend {
 public:
  using OnComplete = std::function<void(IoRequest* request, int64_t result)>;

  virtual ~IoBackend() = default;

  virtual IoBackendKind kind() const = 0;
  // Requests that may be in flight at once (prepared and not yet reported).
  virtual uint32_t depth() const = 0;

  // Queues the rest of `request` (from request->done, iovecs from iov_first) on `fd`.
  virtual void Prepare(int fd, IoRequest* request) = 0;
  // Hands everything prepared to the kernel.
  virtual Status Submit() = 0;
  // Blocks until at least one request finished or Wake() was called, then reports each
  // finished request once: `result` is bytes transferred (possibly short) or -errno.
  virtual Status Wait(const OnComplete& on_complete) = 0;
  // Any thread: makes the current or next Wait() return. Never lost.
  virtual void Wake() = 0;
};

// Whether liburing was found at build time (MNEMO_WITH_URING).
bool UringCompiled();

// io_uring with room for `depth` requests. kUnsupported (with the reason) when not compiled
// in or when the kernel refuses (io_uring_queue_init fails: old kernel, seccomp, sysctl).
Status MakeUringBackend(uint32_t depth, std::unique_ptr<IoBackend>* out);

std::unique_ptr<IoBackend> MakePreadBackend();

}  // namespace mnemo
