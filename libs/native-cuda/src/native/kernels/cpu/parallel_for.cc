#include "kernels/cpu/parallel_for.h"

#include <algorithm>
#include <atomic>
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
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &fn;
      job_n_ = n;
      job_chunk_ = chunk;
      next_.store(0, std::memory_order_relaxed);
      active_ = workers_.size();
      ++generation_;
    }
    wake_.notify_all();
    t_inside_pool = true;
    Drain(fn, n, chunk);
    t_inside_pool = false;
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return active_ == 0; });
    job_ = nullptr;
  }

 private:
  void Drain(const RangeFn& fn, std::size_t n, std::size_t chunk) {
    for (;;) {
      const std::size_t begin = next_.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= n) return;
      fn(begin, std::min(n, begin + chunk));
    }
  }

  void WorkerLoop() {
    t_inside_pool = true;
    std::size_t seen = 0;
    for (;;) {
      const RangeFn* fn;
      std::size_t n, chunk;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        fn = job_;
        n = job_n_;
        chunk = job_chunk_;
      }
      Drain(*fn, n, chunk);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (--active_ == 0) done_.notify_one();
      }
    }
  }

  const std::size_t size_;
  std::vector<std::thread> workers_;
  std::mutex submit_mu_;  // one job at a time
  std::mutex mu_;         // guards the job slot below
  std::condition_variable wake_, done_;
  bool stop_ = false;
  std::size_t generation_ = 0;
  const RangeFn* job_ = nullptr;
  std::size_t job_n_ = 0, job_chunk_ = 0, active_ = 0;
  std::atomic<std::size_t> next_{0};
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
