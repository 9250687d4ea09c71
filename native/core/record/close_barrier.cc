#include "record/close_barrier.h"

#include "record/platform_lock.h"

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace hotspan::close_barrier {

namespace detail {
std::atomic<bool> writer_fence{true};  // until prepare() proved membarrier works
}

namespace {
#if defined(__linux__)
long membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }
#endif
}  // namespace

void prepare() {
  static OnceFlag once;
  call_once(once, [] {
#if defined(__linux__)
    const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
        membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0) {
      detail::writer_fence.store(false, std::memory_order_relaxed);
    }
#endif
  });
}

void closer() {
#if defined(__linux__)
  if (!detail::writer_fence.load(std::memory_order_relaxed)) {
    // Registered in prepare(): every running thread of the process passes a
    // full barrier before this returns.
    if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  }
#endif
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace hotspan::close_barrier
