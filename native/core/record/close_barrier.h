// The ordering that makes a recording thread's "OK" exact when close() races
// it. end() stores its record, publishes `written`, then re-reads the state's
// status; close() sets every status, then reads `written` to commit. Without
// a StoreLoad barrier on both sides each could miss the other's store (x86
// allows exactly that reordering), and an end() could report OK for a record
// the closed trace never got. The barrier is asymmetric: close(), which is
// rare, pays for a process-wide membarrier(2); end() pays only a compiler
// barrier. Where membarrier is not available, end() falls back to a full fence.
#pragma once

#include <atomic>

namespace hotspan::close_barrier {

namespace detail {
extern std::atomic<bool> writer_fence;  // membarrier unavailable: writers fence
}

// Once per process, before the first tracer records (Tracer::create).
void prepare();

// Recording side: between publishing a record and re-reading the status.
inline void writer() {
  if (__builtin_expect(detail::writer_fence.load(std::memory_order_relaxed), 0)) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
}

// Closing side: between setting the statuses and reading what was written.
void closer();

}  // namespace hotspan::close_barrier
