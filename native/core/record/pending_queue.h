// Records stored off a holder thread wait here until a holder drains them.
// Producers push once per batch of records (not per record): one chunk's
// worth, so a native thread touches the queue's shared lines once per chunk
// it fills, not several times (with two threads recording, each push takes
// the lock's and the count's lines from the other core). The lock is a
// spin lock held for a push_back, an update or a swap. A drain swaps the
// whole list out and commits outside the lock, so finalization never blocks
// a producer and a re-entrant drain cannot deadlock.
//
// One item per timeline between two drains: a push for a timeline that
// already has an item since the last drain raises that item (its written
// count, its records) in place. Committing up to the highest written count
// is what the separate items would have done (commit_up_to is a max), and
// the record count is the same sum, so pending() and the wake are unchanged;
// but the queue stays as small as the set of timelines that recorded, however
// long no holder drains (native threads recording while the JS thread is
// busy), and a producer never grows it (no allocation, no page fault) while
// another producer spins on the lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "record/spin_lock.h"
#include "record/stored_span.h"

namespace hotspan {

class Timeline;

// Where a timeline's item is in the queue. Written only under the queue's
// lock, by whoever pushes for the timeline; each Timeline has one.
struct QueueSlot {
  uint64_t epoch = 0;  // the queue's epoch when the item was pushed (0: none yet)
  uint32_t index = 0;  // the item's index in the queue's list then
};

class PendingQueue {
 public:
  // Records a non-holder thread stores before it pushes an item: a chunk's
  // (a thread's pushes then fall on its chunk boundaries).
  static constexpr uint32_t kBatch = kChunkRecords;

  PendingQueue();

  // `timeline` has `written` records stored, `records` of them new since its
  // previous push. Returns the records pending after this push.
  size_t push(Timeline* timeline, uint64_t written, uint32_t records);
  // Items held (one per timeline pushed since the last drain): tests.
  size_t items() const;
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
    uint64_t records;  // a sum over pushes: one timeline's may pass 2^32 between drains
  };

  mutable SpinLock lock_;
  std::vector<Item> items_;  // guarded by lock_
  // Bumped by every drain that takes items: a QueueSlot of an older epoch
  // names no item. Guarded by lock_.
  uint64_t epoch_ = 1;
  // An empty buffer with capacity, swapped in by a drain so that producers
  // push without allocating in steady state. Guarded by lock_.
  std::vector<Item> spare_;
  // Updated under lock_ together with items_, so it never underflows.
  std::atomic<size_t> records_{0};
};

}  // namespace hotspan
