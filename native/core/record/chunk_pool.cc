#include "record/chunk_pool.h"

#include <new>

#include "record/chunk_reserve.h"
#include "record/timeline.h"

namespace hotspan {

static_assert(ChunkPool::kChunkBytes == chunk_reserve::kChunkBytes, "a chunk fills its reserve block");

ChunkPool::ChunkPool(size_t limit_bytes, FullPolicy policy) : limit_(limit_bytes), policy_(policy) {}

ChunkPool::~ChunkPool() = default;

bool ChunkPool::reserve_bytes(size_t bytes) {
  size_t cur = used_.load(std::memory_order_relaxed);
  do {
    if (cur + bytes > limit_) return false;
  } while (!used_.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
  return true;
}

void ChunkPool::link_tail_locked(PoolChunk* c) {
  c->next = nullptr;
  c->prev = tail_;
  if (tail_ != nullptr) {
    tail_->next = c;
  } else {
    head_ = c;
  }
  tail_ = c;
}

void ChunkPool::unlink_locked(PoolChunk* c) {
  (c->prev != nullptr ? c->prev->next : head_) = c->next;
  (c->next != nullptr ? c->next->prev : tail_) = c->prev;
  c->prev = c->next = nullptr;
}

int ChunkPool::add_consumer() {
  uint32_t cur = consumers_.load(std::memory_order_relaxed);
  for (;;) {
    int slot = 0;
    while (slot < kMaxConsumers && (cur & (1u << slot)) != 0) ++slot;
    if (slot == kMaxConsumers) return -1;
    if (consumers_.compare_exchange_weak(cur, cur | (1u << slot), std::memory_order_acq_rel)) {
      return slot;
    }
  }
}

void ChunkPool::remove_consumer(int slot) {
  consumers_.fetch_and(~(1u << slot), std::memory_order_acq_rel);
}

PoolChunk* ChunkPool::recycle_locked(bool released_only) {
  int looked = 0;
  for (PoolChunk* c = head_; c != nullptr && looked < kScan; c = c->next, ++looked) {
    const Recycled r = c->owner->recycle_front(*c, released_only);
    if (r != Recycled::kNo) {
      unlink_locked(c);
      if (r == Recycled::kLost) note_loss();
      return c;
    }
  }
  return nullptr;
}

PoolChunk* ChunkPool::acquire(Timeline& tl, uint64_t first) {
  PoolChunk* c = nullptr;
  if (reserve_bytes(kChunkBytes)) {
    // Allocated outside the lock; only growth allocates, never a recycle.
    c = new PoolChunk;
    // Records are written before anyone reads them: no initialization.
    c->records = static_cast<StoredSpan*>(chunk_reserve::take());
  } else if (!may_recycle()) {
    return nullptr;
  }
  LockGuard<SpinThenBlockMutex> lock(mu_);
  if (c == nullptr && (c = recycle_locked(policy_ == FullPolicy::kDrop)) == nullptr) return nullptr;
  c->owner = &tl;
  c->first = first;
  link_tail_locked(c);
  return c;
}

bool ChunkPool::charge(size_t bytes, bool may_fail) {
  if (reserve_bytes(bytes)) return true;
  if (may_recycle()) {
    // Make room by freeing the oldest records' chunks (not reused: the
    // bytes go to the side table).
    LockGuard<SpinThenBlockMutex> lock(mu_);
    while (used_.load(std::memory_order_relaxed) + bytes > limit_) {
      PoolChunk* c = recycle_locked(policy_ == FullPolicy::kDrop);
      if (c == nullptr) break;
      ::operator delete(c->records);
      delete c;
      uncharge(kChunkBytes);
    }
  }
  if (reserve_bytes(bytes)) return true;
  if (may_fail) return false;
  used_.fetch_add(bytes, std::memory_order_relaxed);
  return true;
}

void ChunkPool::free_chunk(PoolChunk* c) {
  {
    LockGuard<SpinThenBlockMutex> lock(mu_);
    unlink_locked(c);
  }
  ::operator delete(c->records);
  delete c;
  uncharge(kChunkBytes);
}

}  // namespace hotspan
