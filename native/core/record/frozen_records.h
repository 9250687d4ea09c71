// A timeline's kept committed records, read where they are stored. Freezing
// a timeline (Timeline::freeze) copies only what may still change under its
// lock: the chunk pointers, the long-end entries and the tick anchors from
// the segment holding its records' lowest tick on (tick_anchors.h). The
// records themselves are not rewritten while the frozen copy pins their
// chunks (chunk_pool.h: the overwrite policy skips pinned chunks), and the
// pins keep the timeline alive. So a
// writer reads a trace of any size without first copying it (a snapshot of
// 10M spans would be 320 MB), and the caller's thread is held only for the
// pointer copy.
//
// Records come out as a snapshot hands them out: SpanRecord, times in ns.
// Not thread-safe: one reader at a time (it caches the last anchor segment).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

#include "record/huge_pages.h"
#include "record/span_record.h"
#include "record/stored_span.h"
#include "record/tick_anchors.h"

namespace hotspan {

class ChunkPins;  // chunk_pool.h

using SpanRecords = std::vector<SpanRecord, HugePageAllocator<SpanRecord>>;

class FrozenRecords {
 public:
  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = SpanRecord;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = SpanRecord;
    const_iterator(const FrozenRecords* r, uint32_t i) : r_(r), i_(i) {}
    SpanRecord operator*() const { return (*r_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }

   private:
    const FrozenRecords* r_;
    uint32_t i_;
  };

  uint32_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, n_}; }

  // Record i (< size()), converted to ns exactly as every snapshot converts it.
  SpanRecord operator[](uint32_t i) const {
    const StoredSpan& s = stored(i);
    int64_t start = s.start;
    int64_t end = stored_end(s, i);
    if (ticks_) {
      start = anchors_.to_ns(start, hint_);
      end = anchors_.to_ns(end, hint_);
    }
    return SpanRecord{start, end, s.local_id, s.parent_local, s.name, s.depth, s.flags};
  }
  // Fields that need no conversion.
  uint32_t local_id(uint32_t i) const { return stored(i).local_id; }

  // Every record, in order: what a Snapshot holds.
  void materialize(SpanRecords& out) const;

 private:
  friend class Timeline;

  const StoredSpan& stored(uint32_t i) const {
    const uint32_t k = i + offset_;
    return chunks_[k / kChunkRecords][k % kChunkRecords];
  }
  // The end of record i (whose stored form is s) in stored units.
  int64_t stored_end(const StoredSpan& s, uint32_t i) const {
    return s.duration != kLongSpan ? s.start + static_cast<int64_t>(s.duration) : long_end(s, i);
  }
  int64_t long_end(const StoredSpan& s, uint32_t i) const;

  std::shared_ptr<const ChunkPins> pins_;  // keeps the chunks unrecycled and alive
  std::vector<const StoredSpan*> chunks_;
  std::vector<LongEnd> long_ends_;  // entries below n_ (frozen indices), in index order
  TickAnchors anchors_;             // a ticks timeline's, bracketing every record
  bool ticks_ = false;
  uint32_t n_ = 0;
  uint32_t offset_ = 0;  // slot of record 0 in chunks_[0] (a consumer's batch starts mid-chunk)
  mutable size_t hint_ = 0;  // the last anchor segment used
};

}  // namespace hotspan
