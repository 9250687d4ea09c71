// A consumer of a tracer's committed records: reads them incrementally, per
// timeline in commit order, as batches a core writer (PerfettoWriter,
// ChromeJsonWriter) or an exporter takes directly. Several cursors may read
// one tracer at once (up to ChunkPool::kMaxConsumers), each on its own thread.
//
// Memory: a batch pins the chunks it reads until it is dropped (or replaced
// by the next one). A chunk that every open cursor has read past and no
// reader pins is released: the budget may reuse it under either policy and
// the timeline counts its records as released, not lost (chunk_pool.h). A
// cursor that falls behind loses records to the budget's policy: under
// kOverwrite the chunks it has not read are recycled anyway (missed(), and
// the timeline counts them overwritten); under kDrop new records are dropped
// instead. A cursor starts at what the tracer holds in memory when it opens
// (and at the first record of a timeline made later), so per cursor:
//   records committed from its start = delivered + missed + passed + not read yet.
//
// Not thread-safe itself: one thread reads a cursor at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "record/tracer.h"

namespace hotspan {

class RecordCursor {
 public:
  // nullptr when every consumer slot is taken.
  static std::unique_ptr<RecordCursor> open(std::shared_ptr<const Tracer> tracer);
  // Gives up the consumer slot: chunks no longer wait for this cursor.
  ~RecordCursor();
  RecordCursor(const RecordCursor&) = delete;
  RecordCursor& operator=(const RecordCursor&) = delete;

  // Replaces `batch` with the records committed since the last call:
  // timelines with new records only (records in commit order; their
  // attributes and foreign parents), `names` the whole name table, no
  // counter series. At most max_records records (the rest come next time).
  // False (and an empty batch) when nothing is new.
  bool next(FrozenSnapshot& batch, uint64_t max_records = UINT64_MAX);
  // Passes over every record committed and not read yet, without copying or
  // pinning any (O(timelines), whatever waits): the chunks go back to the
  // budget as if read. Returns how many; records recycled before it are
  // missed(), as next() counts them.
  uint64_t pass();

  // Per timeline of the last batch (in its order): records [k, size) of it
  // no other cursor read before this one; those below k another did. A
  // record left out by several consumers is counted once tracer-wide by the
  // first to read it (Tracer::count_sampled_out).
  const std::vector<uint32_t>& first_read() const { return first_read_; }

  // Records handed out in batches, records recycled before this cursor read
  // them, and records it passed over (pass()), over every timeline.
  uint64_t delivered() const { return delivered_; }
  uint64_t missed() const { return missed_; }
  uint64_t passed() const { return passed_; }
  // Records already recycled when the cursor opened (before its start).
  uint64_t skipped() const { return skipped_; }

  // The read watermark after the last next() or pass(): every record of the
  // tracer (any timeline) that ended at or before it has been handed out.
  // Per timeline that is the end of the last record read from it, or no
  // bound (INT64_MAX) when nothing was left unread on it; the watermark is
  // the least of them. Records of one timeline commit in end order.
  int64_t read_through_ns() const { return read_through_ns_; }

 private:
  RecordCursor(std::shared_ptr<const Tracer> tracer, int slot);

  const std::shared_ptr<const Tracer> tracer_;
  const int slot_;
  // Per timeline (in the registry's order): the index of the next record to read.
  std::vector<uint64_t> next_;
  // Per timeline: the end of the last record read from it (INT64_MIN: none).
  std::vector<int64_t> last_end_;
  std::vector<uint32_t> first_read_;
  int64_t read_through_ns_ = INT64_MIN;
  size_t start_ = 0;  // the timeline a batch starts at
  uint64_t delivered_ = 0;
  uint64_t missed_ = 0;
  uint64_t passed_ = 0;
  uint64_t skipped_ = 0;
};

}  // namespace hotspan
