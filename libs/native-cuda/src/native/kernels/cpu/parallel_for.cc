#include "kernels/cpu/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "core/cpu_budget.h"

namespace mnemo::kernels::cpu {
namespace {
thread_local bool t_inside_pool = false;
}  // namespace

// Fork-join protocol. A job is published in `slot_` = [generation:31][closed:1][entered:32].
// A worker joins a job by incrementing `entered` while the slot is open and of the job's
// generation; the caller, once it has drained the items itself, closes the slot and waits
// only for the workers that entered. So a worker that the OS has not scheduled yet (common
// on a loaded, shared machine) costs the caller nothing: it finds the slot closed and goes
// back to waiting, and the caller has done its share of the items meanwhile. Both sides spin
// briefly before sleeping, because kernels of one layer arrive back to back and a futex wake
// costs more than most of them.
class ParallelForPool::Impl {
 public:
  explicit Impl(std::size_t lanes) : size_(std::max<std::size_t>(lanes, 1)) {
    for (std::size_t i = 1; i < size_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }

  std::size_t size() const { return size_; }

  void Run(std::size_t n, std::size_t grain, const RangeFn& fn) {
    if (n == 0) return;
    grain = std::max<std::size_t>(grain, 1);
    // Small jobs, single-lane pools and nested calls run inline: waking workers costs more
    // than a few microseconds of work.
    if (size_ == 1 || n <= grain || t_inside_pool) {
      fn(0, n);
      return;
    }
    std::lock_guard<std::mutex> serial(submit_mu_);
    // About 4 chunks per lane so uneven items (attention over different context lengths)
    // balance out; chunk boundaries never affect results.
    const std::size_t chunk = std::max(grain, (n + size_ * 4 - 1) / (size_ * 4));
    job_ = &fn;
    job_n_ = n;
    job_chunk_ = chunk;
    next_.store(0, std::memory_order_relaxed);
    finished_.store(0, std::memory_order_relaxed);
    generation_ = (generation_ + 1) & kGenMask;
    // Release: a worker that enters this generation sees the job fields above.
    slot_.store(generation_ << kGenShift, std::memory_order_release);
    {
      std::lock_guard<std::mutex> lock(mu_);  // orders the notify after a sleeper's check
    }
    wake_.notify_all();
    t_inside_pool = true;
    Drain(fn, n, chunk);
    t_inside_pool = false;
    const std::uint64_t entered = slot_.fetch_or(kClosed, std::memory_order_acq_rel) & kCountMask;
    auto all_done = [&] { return finished_.load(std::memory_order_acquire) >= entered; };
    if (!SpinUntil(all_done)) {
      std::unique_lock<std::mutex> lock(mu_);
      done_.wait(lock, all_done);
    }
    job_ = nullptr;
  }

 private:
  static constexpr int kGenShift = 33;
  static constexpr std::uint64_t kGenMask = (std::uint64_t{1} << 31) - 1;
  static constexpr std::uint64_t kClosed = std::uint64_t{1} << 32;
  static constexpr std::uint64_t kCountMask = kClosed - 1;
  // NOTE: long enough to bridge the gap between two kernels of a layer (a few microseconds
  // of bookkeeping on the caller), short enough not to steal a shared core from neighbours.
  static constexpr auto kSpin = std::chrono::microseconds(50);

  template <typename Pred>
  static bool SpinUntil(Pred&& done) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (;;) {
      for (int i = 0; i < 64; ++i) {
        if (done()) return true;
        CpuRelax();
      }
      if (std::chrono::steady_clock::now() >= until) return done();
      // A lane that shares its core with the other lane (or a neighbour) hands it over
      // rather than burning the slice the other one needs to finish.
      std::this_thread::yield();
    }
  }

  static void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  void Drain(const RangeFn& fn, std::size_t n, std::size_t chunk) {
    for (;;) {
      const std::size_t begin = next_.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= n) return;
      fn(begin, std::min(n, begin + chunk));
    }
  }

  // Joins the job of generation `gen` if its slot is still open; false when the caller has
  // already closed it (or moved on to a later job, which the next wait will see).
  bool Enter(std::uint64_t gen) {
    std::uint64_t cur = slot_.load(std::memory_order_acquire);
    while ((cur >> kGenShift) == gen && (cur & kClosed) == 0)
      if (slot_.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel, std::memory_order_acquire)) return true;
    return false;
  }

  void WorkerLoop() {
    t_inside_pool = true;
    std::uint64_t seen = 0;
    auto published = [&] { return (slot_.load(std::memory_order_acquire) >> kGenShift) != seen; };
    for (;;) {
      if (!SpinUntil(published)) {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || published(); });
        if (stop_) return;
      }
      seen = slot_.load(std::memory_order_acquire) >> kGenShift;
      if (!Enter(seen)) continue;
      Drain(*job_, job_n_, job_chunk_);
      finished_.fetch_add(1, std::memory_order_acq_rel);
      {
        std::lock_guard<std::mutex> lock(mu_);  // the caller checks finished_ under it
      }
      done_.notify_one();
    }
  }

  const std::size_t size_;
  std::vector<std::thread> workers_;
  std::mutex submit_mu_;  // one job at a time
  std::mutex mu_;         // sleeping and waking only; the job itself is lock-free
  std::condition_variable wake_, done_;
  bool stop_ = false;
  std::uint64_t generation_ = 0;  // the caller's copy (under submit_mu_)
  std::atomic<std::uint64_t> slot_{0};
  // Written by the caller before the slot's release store, read by workers after Enter.
  const RangeFn* job_ = nullptr;
  std::size_t job_n_ = 0, job_chunk_ = 0;
  std::atomic<std::size_t> next_{0}, finished_{0};
};

ParallelForPool::ParallelForPool(std::size_t lanes) : impl_(std::make_unique<Impl>(lanes)) {}
ParallelForPool::~ParallelForPool() = default;
std::size_t ParallelForPool::lanes() const { return impl_->size(); }
void ParallelForPool::Run(std::size_t n, std::size_t grain, const RangeFn& fn) { impl_->Run(n, grain, fn); }

namespace {

std::size_t LanesFromEnv() {
  if (const char* env = std::getenv("MNEMO_CPU_THREADS")) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v > 0) return static_cast<std::size_t>(std::min(v, 1024L));
  }
  return ThreadBudgetFor(UsableCores()).kernel_lanes;
}

}  // namespace

ParallelForPool& KernelPool() {
  // Leaked on purpose: joining threads from a static destructor during process exit (or
  // addon unload) races with the runtime tearing down; the OS reclaims them.
  static ParallelForPool* pool = new ParallelForPool(LanesFromEnv());
  return *pool;
}

std::size_t CpuThreadCount() { return KernelPool().lanes(); }

}  // namespace mnemo::kernels::cpu
