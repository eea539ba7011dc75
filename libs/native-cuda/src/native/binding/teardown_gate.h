// The gate both asynchronous call paths (async_call.cc, async_settle.cc) wait on at teardown.
#pragma once

#include <condition_variable>
#include <mutex>

namespace mnemo::binding {

// Signals that native threads are done with a call: the work finished and the thread-safe
// function is no longer touched. Ownership: shared by the call and the thread that runs its
// work; the environment clean-up hook only borrows it and is removed before it is freed.
struct TeardownGate {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;

  void Finish() {
    std::lock_guard<std::mutex> lock(mu);
    finished = true;
    cv.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return finished; });
  }

  // The clean-up hook for teardown with a call in flight. Node runs clean-up hooks newest
  // first, so a hook added after the thread-safe function runs before Node deletes that
  // function. The work is finite native compute, copying or I/O, so the wait is bounded.
  static void WaitOnTeardown(void* gate) { static_cast<TeardownGate*>(gate)->Wait(); }
};

}  // namespace mnemo::binding
