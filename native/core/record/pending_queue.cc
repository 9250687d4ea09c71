#include "record/pending_queue.h"

#include <utility>

#include "record/platform_lock.h"
#include "record/timeline.h"

namespace hotspan {

PendingQueue::PendingQueue() = default;

size_t PendingQueue::push(Timeline* timeline, uint64_t written, uint32_t records) {
  LockGuard<SpinLock> lock(lock_);
  // Room for a batch made on the first push, not with the tracer: a tracer
  // only a holder thread records into never queues, and one made and closed
  // at once holds 12 KiB less.
  if (items_.capacity() == 0) items_.reserve(kInitial);
  QueueSlot& slot = timeline->queue_slot();
  if (slot.epoch == epoch_) {
    // Not drained since: raise its item (written counts may come out of
    // order from a track's writers; the drain commits the highest).
    Item& it = items_[slot.index];
    if (written > it.written) it.written = written;
    it.records += records;
  } else {
    slot.epoch = epoch_;
    slot.index = static_cast<uint32_t>(items_.size());
    items_.push_back(Item{timeline, written, records});
  }
  return records_.fetch_add(records, std::memory_order_relaxed) + records;
}

size_t PendingQueue::items() const {
  LockGuard<SpinLock> lock(lock_);
  return items_.size();
}

void PendingQueue::drain() {
  std::vector<Item> batch;
  {
    LockGuard<SpinLock> lock(lock_);
    if (items_.empty()) return;
    batch.swap(items_);
    items_.swap(spare_);
    ++epoch_;
    size_t n = 0;
    for (const Item& it : batch) n += it.records;
    records_.fetch_sub(n, std::memory_order_relaxed);
  }
  // The spin lock's release/acquire orders each item after its records were
  // stored; CAS-max keeps concurrent drains and sweeps from lowering it.
  for (const Item& it : batch) it.timeline->commit_up_to(it.written);
  batch.clear();
  {
    LockGuard<SpinLock> lock(lock_);
    if (spare_.capacity() < batch.capacity()) spare_.swap(batch);
  }
  // `batch` (whichever buffer is left) is freed here, outside the lock.
}

}  // namespace hotspan
