// One timeline's records: fixed-size chunks from the tracer's ChunkPool,
// written by a single writer at a time (the owning thread, or whoever holds
// a track's mutex), and two watermarks. Records [0, written) were stored;
// [0, committed) are finalized, i.e. visible to readers. Under the overwrite
// policy the pool may take this timeline's oldest chunk back (recycle_front),
// so the records kept are [base, committed), base a multiple of
// kChunkRecords; records [0, base) are counted as overwritten. A committed
// record is never rewritten while a frozen snapshot pins its chunk, so a
// reader reads in place (freeze) while the writer fills slots past it.
//
// The mutex guards what another thread may touch: the chunk ring (grows
// once per kChunkRecords records, shrinks at a recycle), the attribute area
// (but its writer's append into its last block), the foreign-parent table, the display name and the exited flag. The
// owner's per-record path takes no lock.
//
// A ticks timeline (record times from clock::now_ticks) also keeps its
// (tick, ns) anchors under the mutex; freeze copies the ones its records
// need, and the frozen records convert to CLOCK_MONOTONIC ns when read.
// Anchors are appended at creation, with each new chunk, by the writer when
// its last anchor is older than kAnchorMs and it stored a record since
// (anchor_if_stale), and by a reader whenever a visible record lies past the
// last anchor. They are bounded and charged to the budget: each chunk keeps
// the lowest tick of its records (PoolChunk::low, folded in by freeze and by
// the trim), and when the anchors have grown fourfold since the last trim, a new
// chunk trims those below the lowest tick of every kept record
// (TickAnchors::trim_below), so a kept span that began long before the
// oldest chunk still converts as it did. What is left is at most about four
// times what the kept records need (at least kTrimAnchors); its heap bytes
// are charged to the pool.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "record/attr_area.h"
#include "record/attr_dict.h"
#include "record/chunk_pool.h"
#include "record/pending_queue.h"
#include "record/record_counts.h"
#include "record/span_record.h"
#include "record/stored_context.h"
#include "record/stored_span.h"
#include "record/tick_anchors.h"
#include "record/timeline_mutex.h"
#include "record/tracer.h"

namespace hotspan {

class Timeline {
 public:
  static constexpr uint32_t kChunkRecords = hotspan::kChunkRecords;  // 28 KiB per chunk

  static constexpr int64_t kAnchorMs = 5;  // longest anchor segment a writer leaves

  // ticks: record times are clock::now_ticks() values (converted when read);
  // else CLOCK_MONOTONIC ns or any caller-chosen ns (the identity). pool:
  // the tracer's budget; nullptr gives the timeline a pool of its own with
  // the largest limit (tests). dict: the tracer's attribute dictionary, for
  // attributes stored in the compact form (none: there are none).
  // `start` (ticks only): an anchor read before this timeline, appended ahead
  // of its own (TracerShared::start_anchor).
  Timeline(uint32_t id, TimelineKind kind, std::string name, bool serial = false,
           bool ticks = false, std::shared_ptr<ChunkPool> pool = nullptr,
           std::shared_ptr<const AttrDict> dict = nullptr, const clock::Anchor* start = nullptr);
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  uint32_t id() const { return id_; }
  TimelineKind kind() const { return kind_; }

  // ---- writer side (one writer at a time) ----
  // Appends a chunk from the pool for records from index `first` on and
  // returns its first slot; nullptr when the budget has none (the caller
  // drops its record and calls count_dropped). On a ticks timeline it also
  // appends an anchor; *anchor_due (if given) gets the new due tick.
  StoredSpan* append_chunk(uint64_t first, int64_t* anchor_due = nullptr);
  // `n`: records lost before they reached this timeline (imported_thread.h).
  void count_dropped(uint64_t n = 1) {
    dropped_.fetch_add(n, std::memory_order_relaxed);
    pool_->note_loss();
  }
  // Writer-side anchor upkeep: the tick past which the writer should call
  // anchor_if_stale (INT64_MAX for an ns timeline) ...
  int64_t anchor_due() const;
  // ... which appends an anchor unless one younger than kAnchorMs exists
  // (a reader may have added one), and returns the next due tick.
  int64_t anchor_if_stale(int64_t now);
  bool ticks() const { return ticks_; }
  // A time given in CLOCK_MONOTONIC ns (measured elsewhere: a span timed in
  // JS) as this timeline's record time: on a ticks timeline the inverse of
  // the conversion its readers apply (TickAnchors::to_tick), so it reads
  // back as given. A time past the last anchor is extrapolated from the last
  // segment only while the clock is no further past it than twice that
  // segment and kAnchorMs (off by a few anchors' error); else it gets a
  // fresh anchor first. So the anchors grow by a few per kAnchorMs, not one
  // a call, and a time is never extrapolated far from a short segment or
  // over a long idle. Identity on an ns timeline.
  // `now`: the caller's clock read (clock::now_ticks()), for the anchor's age.
  int64_t tick_of_ns(int64_t ns, int64_t now);
  // Appends an anchor the caller measured (tests: a skewed one gives the
  // segments distinct slopes, so a record that changed segment converts
  // differently). Dropped unless past the last in both tick and ns.
  void add_anchor(clock::Anchor a);
  // The anchors held, the bytes of them charged to the budget, and how many
  // trims dropped (tests).
  size_t anchor_count() const;
  size_t anchor_bytes() const;
  uint64_t anchors_trimmed() const;
  // Release: the record stores before it are visible to whoever reads `w`.
  void publish_written(uint64_t w) { written_.store(w, std::memory_order_release); }
  // Side tables, keyed by record index so snapshots can cut them at committed.
  // Charged to the budget (attributes by whole AttrArea blocks); attributes
  // that do not fit are refused (false: the caller drops the span whole), the
  // small entries are always taken. `attrs`: attr_slots or JSON text.
  bool add_attrs(uint64_t index, uint32_t local, std::string_view attrs);
  // add_attrs' common case, inline for the attribute span's end: the entry
  // fits the writer's block (no charge, no lock). false: nothing done, it
  // needs a new block (add_attrs).
  bool append_attrs(uint64_t index, uint32_t local, std::string_view attrs) {
    if (attrs_.need(index, attrs.size()) != 0) return false;
    attrs_.append(index, local, attrs.data(), attrs.size());
    return true;
  }
  void add_foreign_parent(uint64_t index, uint32_t local, uint64_t parent_span);
  // The stored trace context of the span at `index` (kFlagContext).
  void add_context(uint64_t index, uint32_t local, StoredContext context);
  // The end of the record at `index` whose duration did not fit (kLongSpan).
  void add_long_end(uint64_t index, int64_t end);

  // ---- commit side ----
  // Only the sole writer of an owner-written timeline may store directly: its
  // value is the newest `written`, never below what any other committer saw.
  void commit_owner(uint64_t w) { committed_.store(w, std::memory_order_release); }
  // Any thread: raise committed to at least w (CAS-max, never lowers it).
  void commit_up_to(uint64_t w);
  // Commits every stored record (catches partial batches).
  void sweep() { commit_up_to(written_.load(std::memory_order_acquire)); }
  uint64_t written() const { return written_.load(std::memory_order_acquire); }
  uint64_t committed() const { return committed_.load(std::memory_order_acquire); }
  // This timeline's item in the tracer's pending queue (PendingQueue only,
  // under its lock).
  QueueSlot& queue_slot() { return queue_slot_; }

  // ---- the pool's side (called under the pool's mutex) ----
  // Gives up `c` if it is this timeline's oldest chunk, filled by its writer
  // and pinned by no reader (committing its records if a holder has not):
  // its records and their side-table entries count as released when every
  // active consumer had read them, else as overwritten (refused when
  // released_only).
  Recycled recycle_front(PoolChunk& c, bool released_only);
  // Committed records and drops: produced = kept + released + overwritten + dropped.
  RecordCounts counts() const;

  // ---- consumers (record_cursor.h; slots from the pool) ----
  // A new consumer in `slot` (which its last user may have left anywhere):
  // nothing read yet. Returns the first record kept, where it starts.
  uint64_t start_consumer(int slot);

  // ---- cross-thread state ----
  void set_name(std::string name);
  std::string name() const;
  void mark_exited();
  // Committed records (read in place through `self`, this timeline, which
  // out keeps alive), their side-table entries, name, kind, exited flag. On a
  // ticks timeline, first makes sure the last anchor lies at or past every
  // visible record (appending one if not), so the same record converts
  // identically in every later copy. `from`: only records from that index
  // on (a consumer's next batch). Returns the index of out.records[0]:
  // above `from` when records in between were recycled.
  // consumer >= 0: that consumer slot has now read up to the copy's end
  // (its chunks are released once the copy unpins them).
  // `limit`: at most that many records. `first_read` (a consumer's):
  // the index from which no consumer had read the copy's records before
  // (those below it another consumer read first), so a record is counted
  // once over every consumer (TraceKeep's sampled_out_first).
  uint64_t freeze(std::shared_ptr<const Timeline> self, FrozenTimeline& out, uint64_t from = 0,
                  int consumer = -1, uint64_t limit = UINT64_MAX, uint64_t* first_read = nullptr) const;
  // A consumer that gives up what it has not read (an exporter past its
  // deadline): consumer slot `consumer` has now read every committed record,
  // none copied. Returns the committed end; *first is where the records
  // passed over begin (above `from` when records in between were recycled).
  uint64_t pass(uint64_t from, int consumer, uint64_t* first) const;

 private:
  struct ForeignEntry {
    uint64_t index;
    uint32_t local;
    uint64_t parent;
  };
  struct ContextEntry {
    uint64_t index;
    uint32_t local;
    StoredContext context;
  };
  static size_t context_bytes(const ContextEntry& c) {
    return sizeof(ContextEntry) + c.context.tracestate.capacity();
  }
  struct LongEntry {
    uint64_t index;
    int64_t end;
  };

  const uint32_t id_;
  const TimelineKind kind_;
  const bool serial_;
  const bool ticks_;
  const int64_t anchor_interval_;  // kAnchorMs in ticks
  const std::shared_ptr<ChunkPool> pool_;
  // Cache lines: `written_` is stored by the writer with every record; no
  // other thread stores to its line. `committed_` is stored by whoever
  // commits (a drain on the holder's thread, the recycler on another
  // writer's, the writer itself when it holds), and the mutex is taken by
  // readers and the recycler: on the line of `written_` each of those would
  // take the writer's line away from it in the middle of its records.
  alignas(64) std::atomic<uint64_t> written_{0};
  alignas(64) std::atomic<uint64_t> committed_{0};
  std::atomic<uint64_t> dropped_{0};
  QueueSlot queue_slot_;  // guarded by the tracer's pending queue lock

  mutable TimelineMutex mu_;
  // The kept chunks, oldest first: a ring that grows by doubling and so
  // does not allocate in steady state. Guarded by mu_.
  std::vector<PoolChunk*> ring_;
  size_t ring_head_ = 0;
  size_t ring_size_ = 0;
  uint64_t recycled_ = 0;                       // chunks given back; guarded by mu_
  uint64_t lost_chunks_ = 0;                    // of those, unread by some consumer; guarded by mu_
  mutable uint64_t consumed_[ChunkPool::kMaxConsumers] = {};  // guarded by mu_
  mutable uint64_t first_read_end_ = 0;  // records below it some consumer has read (freeze); guarded by mu_
  const std::shared_ptr<const AttrDict> dict_;  // renders the compact form at freeze
  AttrArea attrs_;  // index order; the writer appends without mu_ (attr_area.h), the rest under it
  std::deque<ForeignEntry> foreign_;            // guarded by mu_, index order
  std::deque<ContextEntry> contexts_;           // guarded by mu_, index order
  std::deque<LongEntry> long_ends_;             // guarded by mu_, index order
  std::string name_;                            // guarded by mu_
  bool exited_ = false;                         // guarded by mu_
  // Readers append too, hence mutable. Guarded by mu_.
  mutable TickAnchors anchors_;
  mutable uint64_t bracketed_ = 0;  // records [0, bracketed_) lie below the last anchor
  mutable uint64_t scanned_ = 0;    // kept records below it are in their chunk's low
  mutable uint64_t written_at_anchor_ = 0;  // written_ when the last anchor was appended
  mutable size_t anchors_charged_ = 0;      // anchor bytes charged to the pool
  size_t trim_at_ = kTrimAnchors;           // anchor count that makes a new chunk trim
  uint64_t anchors_trimmed_ = 0;
  // A trim waits for this many anchors, and then for four times what the
  // last one kept: the scan it needs reads each record for a fraction of a
  // load (the writer pays it), and what it keeps is 0.3% of the chunks'
  // memory (24 bytes against a 28 KiB chunk) plus the kAnchorMs ones.
  static constexpr size_t kTrimAnchors = 256;
  static constexpr size_t kTrimGrowth = 4;
  static constexpr uint64_t kScanChunks = 4;  // records a new chunk scans for a trim, in chunks

  void append_anchor_locked(clock::Anchor a) const;
  // Folds the kept records [scanned_, upto) into their chunks' low, and
  // returns the highest tick of records [top_from, upto) (INT64_MIN: none).
  int64_t scan_locked(uint64_t upto, uint64_t top_from) const;
  // The lowest tick of the scanned records of ring chunks [first, first + count).
  int64_t low_locked(size_t first, size_t count) const;
  void trim_anchors_locked();
  uint64_t freeze_locked(std::shared_ptr<const Timeline> self, FrozenTimeline& out, uint64_t from, uint64_t* first_read,
                         int consumer, uint64_t limit) const;
  // The anchor bytes not yet charged (negative: to uncharge), now counted as
  // charged: the caller settles them outside the lock (charging may recycle).
  std::ptrdiff_t anchor_charge_locked() const;
  void settle_anchor_charge(std::ptrdiff_t delta) const;

  int64_t due_locked() const;
  PoolChunk* ring_at(size_t k) const { return ring_[(ring_head_ + k) & (ring_.size() - 1)]; }
  void ring_push(PoolChunk* c);
  RecordCounts counts_locked(uint64_t committed) const;
};

// A writer's position in its timeline's current chunk.
struct ChunkCursor {
  StoredSpan* slot = nullptr;
  StoredSpan* end = nullptr;
  uint64_t written = 0;  // records stored so far (the writer's own copy)

  // Makes `slot` writable: false when the budget gives no chunk (the caller
  // drops the record; the next call tries again).
  bool ready(Timeline& tl, int64_t* anchor_due = nullptr) {
    if (slot != end) return true;
    slot = tl.append_chunk(written, anchor_due);
    end = slot == nullptr ? nullptr : slot + Timeline::kChunkRecords;
    return slot != nullptr;
  }
};

}  // namespace hotspan
