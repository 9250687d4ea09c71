// A lock that never yields or sleeps, for critical sections of a few
// instructions (the pending queue): a producer on a native thread must not be
// parked behind a drainer, and Mutex may futex-sleep.
#pragma once

#include <atomic>

namespace hotspan {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield");
#endif
}

class SpinLock {
 public:
  void lock() noexcept {
    while (flag_.test_and_set(std::memory_order_acquire)) cpu_relax();
  }
  void unlock() noexcept { flag_.clear(std::memory_order_release); }

 private:
  std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

}  // namespace hotspan
