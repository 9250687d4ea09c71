// A mutex for short critical sections that two recording threads meet
// often: the chunk pool's (every chunk a writer fills, under a full
// overwrite budget, recycles one under it). It spins a little on try_lock
// before it blocks: the holder leaves within a few hundred nanoseconds, while
// blocking costs the waiter a futex sleep and a wake-up (microseconds, and a
// voluntary context switch), and the holder a futex wake on unlock. Still a
// std::mutex underneath, so a holder preempted mid-section costs a waiter
// only its spin, and sanitizers see an ordinary mutex. Where there are no
// threads (the WebAssembly build) it is Mutex, a no-op.
#pragma once

#include "record/platform_lock.h"
#include "record/spin_lock.h"

namespace hotspan {

#if HOTSPAN_THREADS
class SpinThenBlockMutex {
 public:
  // Tries before blocking, a pause between: ~1-2 µs of spinning at most.
  static constexpr int kSpins = 64;

  void lock() {
    for (int i = 0; i < kSpins; ++i) {
      if (mu_.try_lock()) return;
      cpu_relax();
    }
    mu_.lock();
  }
  bool try_lock() { return mu_.try_lock(); }
  void unlock() { mu_.unlock(); }

 private:
  Mutex mu_;
};
#else
using SpinThenBlockMutex = Mutex;
#endif

}  // namespace hotspan
