// One timeline's records: fixed-size chunks written by a single writer at a
// time (the owning thread, or whoever holds a track's mutex), and two
// watermarks. Records [0, written) are stored; [0, committed) are finalized,
// i.e. visible to readers. A record is never rewritten once stored, so a
// reader reads [0, committed) in place (freeze) while the writer fills slots
// past it.
//
// The mutex guards what another thread may touch: the chunk list (grows
// once per kChunkRecords records), the attribute and foreign-parent side
// tables, the display name and the exited flag. The owner's per-record path
// takes no lock.
//
// A ticks timeline (record times from clock::now_ticks) also keeps its
// (tick, ns) anchors under the mutex; freeze copies them, and the frozen
// records convert to CLOCK_MONOTONIC ns when read. Anchors are appended at
// creation, with each new chunk, by the writer when its last anchor is older
// than kAnchorMs (anchor_if_stale), and by a reader whenever a visible record
// lies past the last anchor.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "span_record.h"
#include "stored_span.h"
#include "tick_anchors.h"
#include "timeline_mutex.h"
#include "tracer.h"

namespace hotspan {

class Timeline {
 public:
  static constexpr uint32_t kChunkRecords = hotspan::kChunkRecords;  // 28 KiB per chunk

  static constexpr int64_t kAnchorMs = 5;  // longest anchor segment a writer leaves

  // ticks: record times are clock::now_ticks() values (converted when read);
  // else CLOCK_MONOTONIC ns or any caller-chosen ns (the identity).
  Timeline(uint32_t id, TimelineKind kind, std::string name, bool serial = false,
           bool ticks = false);
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  uint32_t id() const { return id_; }
  TimelineKind kind() const { return kind_; }

  // ---- writer side (one writer at a time) ----
  // Appends a fresh chunk and returns its first slot. On a ticks timeline it
  // also appends an anchor; *anchor_due (if given) gets the new due tick.
  StoredSpan* append_chunk(int64_t* anchor_due = nullptr);
  // Writer-side anchor upkeep: the tick past which the writer should call
  // anchor_if_stale (INT64_MAX for an ns timeline) ...
  int64_t anchor_due() const;
  // ... which appends an anchor unless one younger than kAnchorMs exists
  // (a reader may have added one), and returns the next due tick.
  int64_t anchor_if_stale(int64_t now);
  bool ticks() const { return ticks_; }
  // Release: the record stores before it are visible to whoever reads `w`.
  void publish_written(uint32_t w) { written_.store(w, std::memory_order_release); }
  // Side tables, keyed by record index so snapshots can cut them at committed.
  void add_attrs(uint32_t index, uint32_t local, std::string json);
  void add_foreign_parent(uint32_t index, uint32_t local, uint64_t parent_span);
  // The end of the record at `index` whose duration did not fit (kLongSpan).
  void add_long_end(uint32_t index, int64_t end);

  // ---- commit side ----
  // Only the sole writer of an owner-written timeline may store directly: its
  // value is the newest `written`, never below what any other committer saw.
  void commit_owner(uint32_t w) { committed_.store(w, std::memory_order_release); }
  // Any thread: raise committed to at least w (CAS-max, never lowers it).
  void commit_up_to(uint32_t w);
  // Commits every stored record (catches partial batches).
  void sweep() { commit_up_to(written_.load(std::memory_order_acquire)); }
  uint32_t written() const { return written_.load(std::memory_order_acquire); }
  uint32_t committed() const { return committed_.load(std::memory_order_acquire); }

  // ---- cross-thread state ----
  void set_name(std::string name);
  void mark_exited();
  // Committed records (read in place through `self`, this timeline, which
  // out keeps alive), their side-table entries, name, kind, exited flag. On a
  // ticks timeline, first makes sure the last anchor lies at or past every
  // visible record (appending one if not), so the same record converts
  // identically in every later copy.
  void freeze(std::shared_ptr<const Timeline> self, FrozenTimeline& out) const;

 private:
  struct Chunk {
    StoredSpan records[kChunkRecords];
  };
  // Chunks live in chunk_reserve memory (::operator new), pages pre-touched.
  struct ChunkFree {
    void operator()(Chunk* chunk) const;
  };
  struct AttrEntry {
    uint32_t index;
    uint32_t local;
    std::string json;
  };
  struct ForeignEntry {
    uint32_t index;
    uint32_t local;
    uint64_t parent;
  };

  const uint32_t id_;
  const TimelineKind kind_;
  const bool serial_;
  const bool ticks_;
  const int64_t anchor_interval_;  // kAnchorMs in ticks
  std::atomic<uint32_t> written_{0};
  std::atomic<uint32_t> committed_{0};

  mutable TimelineMutex mu_;
  std::vector<std::unique_ptr<Chunk, ChunkFree>> chunks_;  // guarded by mu_
  std::vector<AttrEntry> attrs_;                // guarded by mu_, index order
  std::vector<ForeignEntry> foreign_;           // guarded by mu_, index order
  std::vector<LongEnd> long_ends_;              // guarded by mu_, index order
  std::string name_;                            // guarded by mu_
  bool exited_ = false;                         // guarded by mu_
  // Readers append too, hence mutable. Guarded by mu_.
  mutable TickAnchors anchors_;
  mutable uint32_t bracketed_ = 0;  // records [0, bracketed_) lie below the last anchor

  int64_t due_locked() const;
};

// A writer's position in its timeline's current chunk.
struct ChunkCursor {
  StoredSpan* slot = nullptr;
  StoredSpan* end = nullptr;
  uint32_t written = 0;  // records stored so far (the writer's own copy)

  StoredSpan* next(Timeline& tl, int64_t* anchor_due = nullptr) {
    if (slot == end) {
      slot = tl.append_chunk(anchor_due);
      end = slot + Timeline::kChunkRecords;
    }
    return slot++;
  }
};

}  // namespace hotspan
