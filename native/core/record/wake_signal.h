// The coalesced wake-up: when the pending queue passes its high-water mark, a
// producer calls the callback once; the next drain re-arms it. The callback
// (the binding's non-blocking threadsafe function) runs under a leaf mutex of
// its own, so clear() can guarantee no call is in flight once it returns. It
// must not call set_wake() or close() on the same tracer.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>

#include "record/platform_lock.h"

namespace hotspan {

class WakeSignal {
 public:
  explicit WakeSignal(size_t high_water) : high_water_(high_water) {}

  void set(std::function<void()> fn);
  void clear();  // waits for a call in flight
  // Producer side, with no other lock held: `pending` records now queued.
  void maybe_fire(size_t pending);
  // Drain side: the next crossing fires again.
  void rearm() { fired_.store(false, std::memory_order_release); }

 private:
  const size_t high_water_;
  std::atomic<bool> fired_{false};
  Mutex mu_;
  std::function<void()> fn_;  // guarded by mu_
};

}  // namespace hotspan
