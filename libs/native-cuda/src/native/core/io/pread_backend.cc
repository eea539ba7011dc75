// The synchronous fallback: one preadv/pwritev at a time on the worker thread.
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <utility>

#include "core/io/io_backend.h"

namespace mnemo {
namespace {

class PreadBackend final : public IoBackend {
 public:
  IoBackendKind kind() const override { return IoBackendKind::kPread; }
  uint32_t depth() const override { return 1; }

  void Prepare(int fd, IoRequest* request) override { ready_.emplace_back(fd, request); }

  Status Submit() override { return Status::Ok(); }

  Status Wait(const OnComplete& on_complete) override {
    if (ready_.empty()) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return woken_; });
      woken_ = false;
      return Status::Ok();
    }
    auto [fd, r] = ready_.front();
    ready_.pop_front();
    const iovec* iov = r->iov.data() + r->iov_first;
    const int count = static_cast<int>(r->iov.size() - r->iov_first);
    const off_t offset = static_cast<off_t>(r->offset + r->done);
    const ssize_t n = r->op == IoOp::kRead ? preadv(fd, iov, count, offset) : pwritev(fd, iov, count, offset);
    on_complete(r, n < 0 ? -static_cast<int64_t>(errno) : static_cast<int64_t>(n));
    return Status::Ok();
  }

  void Wake() override {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
    cv_.notify_one();
  }

 private:
  std::deque<std::pair<int, IoRequest*>> ready_;  // worker thread only
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;  // guarded by mu_
};

}  // namespace

const char* IoBackendName(IoBackendKind kind) {
  switch (kind) {
    case IoBackendKind::kIoUring: return "io_uring";
    case IoBackendKind::kPread: return "pread";
  }
  return "pread";
}

std::unique_ptr<IoBackend> MakePreadBackend() { return std::make_unique<PreadBackend>(); }

}  // namespace mnemo
