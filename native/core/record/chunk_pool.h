// A tracer's memory budget: every record chunk and every side-table entry
// (attributes, foreign parents, long ends) of its timelines is charged here.
// Under the limit a chunk comes fresh (pages pre-touched by chunk_reserve).
// At the limit the policy decides:
//   kOverwrite: the oldest committed chunk of any timeline is taken from its
//     timeline and handed to the writer as it is (no page fault, no
//     allocation): the flight recorder.
//   kDrop: no chunk; the writer drops (and counts) its record.
// Either way nothing is lost uncounted: the timeline counts what it dropped
// and what was recycled out of it (record_counts.h).
//
// Consumers (record_cursor.h: a stream, an exporter) read committed records
// as they commit. A chunk every active consumer has read past is released:
// recycling it loses nothing (counted as released, not overwritten), and
// that is allowed under either policy, so a drop-policy tracer that streams
// keeps recording while its consumers keep up. A chunk some consumer has not
// read is recycled only under kOverwrite (that consumer misses its records,
// counted as overwritten); under kDrop new records are dropped instead.
//
// Readers are safe because a chunk is recycled only when no frozen snapshot
// pins it (ChunkPins, taken by Timeline::freeze under the timeline's lock,
// which the recycler also takes). A pinned chunk, or one its writer has not
// filled yet, is skipped (a filled one whose records wait in the pending
// queue is committed and recycled: counted as overwritten); when nothing in the first kScan chunks can be recycled
// the record is dropped and counted rather than the budget exceeded.
//
// Live chunks form one list in acquisition order (oldest first), guarded by
// mu_. Lock order: a track's mutex, then mu_, then a timeline's mutex (the
// recycler takes the victim's). A writer calls acquire() without holding
// its own timeline's lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "record/memory_limit.h"
#include "record/platform_lock.h"
#include "record/spin_mutex.h"
#include "record/stored_span.h"

namespace hotspan {

class Timeline;

// What Timeline::recycle_front did with a chunk.
enum class Recycled : uint8_t {
  kNo,        // kept (not the oldest, not filled, pinned, or unread under kDrop)
  kReleased,  // every consumer had read it: nothing lost
  kLost,      // its records are gone unread: overwritten
};

struct PoolChunk {
  StoredSpan* records = nullptr;  // kChunkRecords, chunk_reserve memory
  // Frozen snapshots reading this chunk. The recycler needs 0 (acquire),
  // checked under the owner's lock, under which freeze pins.
  std::atomic<uint32_t> pins{0};
  // The lowest tick among the records of it that its owner's anchor upkeep
  // has scanned (INT64_MAX: none); guarded by the owner's lock.
  int64_t low = INT64_MAX;
  // Guarded by the pool's mutex:
  Timeline* owner = nullptr;
  uint64_t first = 0;  // the owner's index of records[0]
  PoolChunk* prev = nullptr;
  PoolChunk* next = nullptr;
};

// The chunks one frozen timeline reads, pinned until the last copy of the
// frozen records goes. Keeps the timeline (hence the chunks) alive.
class ChunkPins {
 public:
  ChunkPins(std::shared_ptr<const void> owner, std::vector<PoolChunk*> chunks)
      : owner_(std::move(owner)), chunks_(std::move(chunks)) {}
  ~ChunkPins() {
    // Release: this reader's loads of the records happen before a recycler
    // that sees the count drop rewrites them.
    for (PoolChunk* c : chunks_) c->pins.fetch_sub(1, std::memory_order_release);
  }
  ChunkPins(const ChunkPins&) = delete;
  ChunkPins& operator=(const ChunkPins&) = delete;

 private:
  std::shared_ptr<const void> owner_;
  std::vector<PoolChunk*> chunks_;
};

class ChunkPool {
 public:
  static constexpr size_t kChunkBytes = sizeof(StoredSpan) * kChunkRecords;
  static constexpr size_t kMinLimit = memory_limit::kMin;
  static constexpr size_t kMaxLimit = memory_limit::kMax;
  static constexpr int kScan = 32;  // live chunks looked at per recycle attempt
  static constexpr int kMaxConsumers = 8;

  ChunkPool(size_t limit_bytes, FullPolicy policy);
  ~ChunkPool();  // every chunk must have been freed by its timeline
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;

  size_t limit() const { return limit_; }
  FullPolicy policy() const { return policy_; }
  // Chunk bytes held plus side-table bytes charged.
  size_t used() const { return used_.load(std::memory_order_relaxed); }
  // Set at the first record dropped or overwritten (the one-time warning).
  void note_loss() {
    if (!lost_.load(std::memory_order_relaxed)) lost_.store(true, std::memory_order_relaxed);
  }
  bool lost() const { return lost_.load(std::memory_order_relaxed); }

  // Consumer slots (bit k: slot k is in use). add_consumer returns -1 when
  // all kMaxConsumers are taken. Timelines read the mask when recycling.
  int add_consumer();
  void remove_consumer(int slot);
  uint32_t consumers() const { return consumers_.load(std::memory_order_acquire); }

  // A chunk for `tl`, whose record `first` goes to its slot 0; nullptr when
  // the budget is full and nothing can be recycled (the caller drops).
  PoolChunk* acquire(Timeline& tl, uint64_t first);
  // Side-table bytes. may_fail: false (and nothing charged) when they do not
  // fit even after recycling; else charged regardless (small, rare entries).
  bool charge(size_t bytes, bool may_fail);
  void uncharge(size_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }
  // A timeline going away frees its chunks.
  void free_chunk(PoolChunk* c);

 private:
  bool reserve_bytes(size_t bytes);
  // Under mu_: takes the oldest recyclable chunk from its timeline, or
  // nullptr; released_only: only chunks every consumer has read.
  PoolChunk* recycle_locked(bool released_only);
  // Whether a full budget may recycle at all: always under kOverwrite, and
  // under kDrop when a consumer may have released chunks.
  bool may_recycle() const { return policy_ == FullPolicy::kOverwrite || consumers() != 0; }
  void link_tail_locked(PoolChunk* c);
  void unlink_locked(PoolChunk* c);

  const size_t limit_;
  const FullPolicy policy_;
  std::atomic<size_t> used_{0};
  std::atomic<bool> lost_{false};
  std::atomic<uint32_t> consumers_{0};
  // Spins before it blocks: with several writers recycling under a full
  // overwrite budget, each chunk a thread fills takes it once.
  SpinThenBlockMutex mu_;
  PoolChunk* head_ = nullptr;  // oldest; guarded by mu_
  PoolChunk* tail_ = nullptr;  // guarded by mu_
};

}  // namespace hotspan
