// Records stored off a holder thread wait here until a holder drains them.
// Producers push one item per batch of records (not per record); the lock is
// a spin lock held for a push_back or a swap. A drain swaps the whole list out
// and commits outside the lock, so finalization never blocks a producer and a
// re-entrant drain cannot deadlock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "record/spin_lock.h"

namespace hotspan {

class Timeline;

class PendingQueue {
 public:
  // Records a non-holder thread stores before it pushes an item.
  static constexpr uint32_t kBatch = 256;

  PendingQueue();

  // `timeline` has `written` records stored, `records` of them new since its
  // previous push. Returns the records pending after this push.
  size_t push(Timeline* timeline, uint64_t written, uint32_t records);
  // Commits everything pushed so far. Timelines named by items must be alive
  // (the registry keeps every timeline for the tracer's lifetime).
  void drain();
  size_t records() const { return records_.load(std::memory_order_relaxed); }
  bool nonempty() const { return records() != 0; }

 private:
  static constexpr size_t kInitial = 256;
  struct Item {
    Timeline* timeline;
    uint64_t written;
    uint32_t records;
  };

  SpinLock lock_;
  std::vector<Item> items_;  // guarded by lock_
  // An empty buffer with capacity, swapped in by a drain so that producers
  // push without allocating in steady state. Guarded by lock_.
  std::vector<Item> spare_;
  // Updated under lock_ together with items_, so it never underflows.
  std::atomic<size_t> records_{0};
};

}  // namespace hotspan
