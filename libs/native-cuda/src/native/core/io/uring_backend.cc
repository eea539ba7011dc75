// io_uring backend (liburing). Compiled only when CMake found liburing (MNEMO_WITH_URING);
// otherwise MakeUringBackend reports why it is unavailable and devices use pread.
#include "core/io/io_backend.h"

#ifdef MNEMO_WITH_URING

#include <liburing.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mnemo {
namespace {

// user_data of the eventfd poll; requests are heap pointers, never 1.
constexpr uint64_t kWakeTag = 1;

std::string Errno(const char* what, int err) { return std::string(what) + ": " + std::strerror(err); }

class UringBackend final : public IoBackend {
 public:
  ~UringBackend() override {
    if (ring_ready_) io_uring_queue_exit(&ring_);
    if (wake_fd_ >= 0) close(wake_fd_);
  }

  static Status Create(uint32_t depth, std::unique_ptr<IoBackend>* out) {
    const int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd < 0) return Status::Unsupported(Errno("eventfd", errno));
    std::unique_ptr<UringBackend> b(new UringBackend(depth, wake_fd));
    // +1: the eventfd poll that lets Wake() interrupt a wait is always armed.
    const int ret = io_uring_queue_init(depth + 1, &b->ring_, 0);
    if (ret < 0) {
      close(wake_fd);
      b->wake_fd_ = -1;
      b->ring_ready_ = false;
      return Status::Unsupported(Errno("io_uring_queue_init", -ret));
    }
    b->ring_ready_ = true;
    b->ArmWake();
    MNEMO_RETURN_IF_ERROR(b->Submit());
    *out = std::move(b);
    return Status::Ok();
  }

  IoBackendKind kind() const override { return IoBackendKind::kIoUring; }
  uint32_t depth() const override { return depth_; }

  void Prepare(int fd, IoRequest* r) override {
    io_uring_sqe* sqe = Sqe();
    const iovec* iov = r->iov.data() + r->iov_first;
    const unsigned count = static_cast<unsigned>(r->iov.size() - r->iov_first);
    const uint64_t offset = r->offset + r->done;
    if (r->op == IoOp::kRead) {
      io_uring_prep_readv(sqe, fd, iov, count, offset);
    } else {
      io_uring_prep_writev(sqe, fd, iov, count, offset);
    }
    io_uring_sqe_set_data(sqe, r);
  }

  Status Submit() override {
    for (;;) {
      const int ret = io_uring_submit(&ring_);
      if (ret >= 0) return Status::Ok();
      if (ret != -EINTR) return Status::IoError(Errno("io_uring_submit", -ret));
    }
  }

  Status Wait(const OnComplete& on_complete) override {
    io_uring_cqe* cqe = nullptr;
    int ret;
    do {
      ret = io_uring_wait_cqe(&ring_, &cqe);
    } while (ret == -EINTR);
    if (ret < 0) return Status::IoError(Errno("io_uring_wait_cqe", -ret));
    unsigned head;
    unsigned seen = 0;
    bool rearm = false;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      const auto tag = reinterpret_cast<uint64_t>(io_uring_cqe_get_data(cqe));
      if (tag == kWakeTag) {
        uint64_t drained;
        // Resets the counter; EAGAIN (already drained) is fine.
        (void)!read(wake_fd_, &drained, sizeof drained);
        rearm = true;
      } else {
        on_complete(reinterpret_cast<IoRequest*>(tag), cqe->res);
      }
    }
    io_uring_cq_advance(&ring_, seen);
    if (rearm) {
      ArmWake();
      return Submit();
    }
    return Status::Ok();
  }

  void Wake() override {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
  }

 private:
  UringBackend(uint32_t depth, int wake_fd) : depth_(depth), wake_fd_(wake_fd) {}

  io_uring_sqe* Sqe() {
    // The ring has depth + 1 entries and at most depth requests + the poll are in flight,
    // so a free SQE exists once pending ones are flushed.
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    while (sqe == nullptr) {
      Submit().IgnoreError();  // a failure resurfaces from the next Submit()/Wait()
      sqe = io_uring_get_sqe(&ring_);
    }
    return sqe;
  }

  void ArmWake() {
    io_uring_sqe* sqe = Sqe();
    io_uring_prep_poll_add(sqe, wake_fd_, POLLIN);
    io_uring_sqe_set_data(sqe, reinterpret_cast<void*>(kWakeTag));
  }

  io_uring ring_{};
  bool ring_ready_ = false;
  uint32_t depth_;
  int wake_fd_;
};

}  // namespace

bool UringCompiled() { return true; }

Status MakeUringBackend(uint32_t depth, std::unique_ptr<IoBackend>* out) {
  return UringBackend::Create(depth, out);
}

}  // namespace mnemo

#else  // !MNEMO_WITH_URING

namespace mnemo {

bool UringCompiled() { return false; }

Status MakeUringBackend(uint32_t depth, std::unique_ptr<IoBackend>* out) {
  out->reset();
  return Status::Unsupported("built without liburing (liburing-dev was not found at build time)");
}

}  // namespace mnemo

#endif  // MNEMO_WITH_URING
