#include "record/wake_signal.h"

#include <utility>

namespace hotspan {

void WakeSignal::set(std::function<void()> fn) {
  LockGuard<Mutex> lock(mu_);
  fn_ = std::move(fn);
}

void WakeSignal::clear() {
  LockGuard<Mutex> lock(mu_);
  fn_ = nullptr;
}

void WakeSignal::maybe_fire(size_t pending) {
  if (pending < high_water_) return;
  // The plain load first keeps producers off the cache line's exclusive state
  // while a wake is already outstanding.
  if (fired_.load(std::memory_order_relaxed)) return;
  if (fired_.exchange(true, std::memory_order_acq_rel)) return;
  LockGuard<Mutex> lock(mu_);
  if (fn_) fn_();
}

}  // namespace hotspan
