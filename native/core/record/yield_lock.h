// A lock for critical sections that are short and almost never contended
// (an async track: one JS thread begins and ends nearly all its spans).
// Uncontended it costs one atomic exchange to take and one store to release,
// against a pthread mutex's lock and unlock calls. A waiter spins briefly,
// then yields its core, so a holder that was descheduled or is taking a new
// chunk is not starved by spinning waiters (unlike SpinLock, spin_lock.h,
// which is for sections of a few instructions only).
#pragma once

#include <atomic>

#include "record/platform_lock.h"
#include "record/spin_lock.h"

namespace hotspan {

class YieldLock {
 public:
  void lock() noexcept {
    while (held_.exchange(true, std::memory_order_acquire)) wait();
  }
  bool try_lock() noexcept { return !held_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  // Until the lock looks free (a plain load: no cache-line ping-pong).
  void wait() noexcept {
    for (int spins = 0; held_.load(std::memory_order_relaxed); ++spins) {
      if (spins < 64) {
        cpu_relax();
      } else {
        yield_now();
      }
    }
  }

  std::atomic<bool> held_{false};
};

}  // namespace hotspan
