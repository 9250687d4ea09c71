#include "timeline.h"

#include <algorithm>
#include <mutex>
#include <new>
#include <utility>

#include "attr_slots.h"
#include "chunk_reserve.h"
#include "clock.h"

namespace hotspan {

Timeline::Timeline(uint32_t id, TimelineKind kind, std::string name, bool serial, bool ticks)
    : id_(id),
      kind_(kind),
      serial_(serial),
      ticks_(ticks),
      anchor_interval_(ticks ? clock::ticks_for_ms(kAnchorMs) : INT64_MAX),
      name_(std::move(name)) {
  chunks_.reserve(16);
  if (ticks_) anchors_.append(clock::measure_anchor());  // no other thread sees us yet
}

Timeline::~Timeline() = default;

void Timeline::ChunkFree::operator()(Chunk* chunk) const {
  chunk->~Chunk();
  ::operator delete(chunk);
}

StoredSpan* Timeline::append_chunk(int64_t* anchor_due) {
  // Allocated outside the lock: a reader copying a snapshot waits only for
  // the push_back.
  static_assert(sizeof(Chunk) == chunk_reserve::kChunkBytes, "a chunk fills its reserve block");
  // Default-init: the records are written before anyone reads them.
  std::unique_ptr<Chunk, ChunkFree> chunk(new (chunk_reserve::take()) Chunk);
  StoredSpan* first = chunk->records;
  std::lock_guard<TimelineMutex> lock(mu_);
  chunks_.push_back(std::move(chunk));
  // Anchors are measured under the lock so they are appended in tick order.
  if (ticks_) anchors_.append(clock::measure_anchor());
  if (anchor_due != nullptr) *anchor_due = due_locked();
  return first;
}

int64_t Timeline::due_locked() const {
  if (!ticks_) return INT64_MAX;
  const int64_t last = anchors_.last_tick();
  return last > INT64_MAX - anchor_interval_ ? INT64_MAX : last + anchor_interval_;
}

int64_t Timeline::anchor_due() const {
  if (!ticks_) return INT64_MAX;
  std::lock_guard<TimelineMutex> lock(mu_);
  return due_locked();
}

int64_t Timeline::anchor_if_stale(int64_t now) {
  if (!ticks_) return INT64_MAX;
  std::lock_guard<TimelineMutex> lock(mu_);
  // A tick below the due one (another anchor came first, or this thread's
  // core lags the one that took it) needs nothing.
  if (now >= due_locked()) anchors_.append(clock::measure_anchor());
  return due_locked();
}

void Timeline::add_attrs(uint32_t index, uint32_t local, std::string json) {
  std::lock_guard<TimelineMutex> lock(mu_);
  attrs_.push_back(AttrEntry{index, local, std::move(json)});
}

void Timeline::add_foreign_parent(uint32_t index, uint32_t local, uint64_t parent_span) {
  std::lock_guard<TimelineMutex> lock(mu_);
  foreign_.push_back(ForeignEntry{index, local, parent_span});
}

void Timeline::add_long_end(uint32_t index, int64_t end) {
  std::lock_guard<TimelineMutex> lock(mu_);
  long_ends_.push_back(LongEnd{index, end});
}

void Timeline::commit_up_to(uint32_t w) {
  uint32_t cur = committed_.load(std::memory_order_relaxed);
  while (cur < w &&
         !committed_.compare_exchange_weak(cur, w, std::memory_order_release,
                                           std::memory_order_relaxed)) {
  }
}

void Timeline::set_name(std::string name) {
  std::lock_guard<TimelineMutex> lock(mu_);
  name_ = std::move(name);
}

void Timeline::mark_exited() {
  std::lock_guard<TimelineMutex> lock(mu_);
  exited_ = true;
}

void Timeline::freeze(std::shared_ptr<const Timeline> self, FrozenTimeline& out) const {
  std::lock_guard<TimelineMutex> lock(mu_);
  // Acquire pairs with the committer's release: the records below it (and
  // the side-table entries added before them) are complete.
  const uint32_t n = committed_.load(std::memory_order_acquire);
  out.id = id_;
  out.kind = kind_;
  out.serial = serial_;
  out.name = name_;
  out.exited = exited_;
  FrozenRecords& recs = out.records;
  recs.owner_ = std::move(self);
  recs.n_ = n;
  recs.ticks_ = ticks_;
  recs.hint_ = 0;
  // Records [0, n) are never rewritten and their chunks never move or go
  // before this timeline does: only the pointers are copied.
  const size_t used = (static_cast<size_t>(n) + kChunkRecords - 1) / kChunkRecords;
  recs.chunks_.clear();
  recs.chunks_.reserve(used);
  for (size_t c = 0; c < used; ++c) recs.chunks_.push_back(chunks_[c]->records);
  recs.long_ends_.clear();
  for (const LongEnd& e : long_ends_) {
    if (e.index >= n) break;  // entries are in index order
    recs.long_ends_.push_back(e);
  }
  if (ticks_ && n > 0) {
    // Bracket every newly visible record: if one lies past the last anchor
    // (it was stored after that anchor), append an anchor taken now. Its
    // ordered tick read comes after the acquire load of `committed`, hence
    // after every visible record's tick on a shared invariant TSC.
    int64_t top = INT64_MIN;
    for (uint32_t i = bracketed_; i < n; ++i) {
      const StoredSpan& r = recs.stored(i);
      // By value: a reference to the packed (4-aligned) int64 is undefined.
      const int64_t start = r.start;
      top = std::max(top, std::max(start, recs.stored_end(r, i)));
    }
    if (anchors_.size() < 2 || top >= anchors_.last_tick()) {
      clock::Anchor a = clock::measure_anchor();
      // Sanity: a TSC that disagrees slightly across cores could put a
      // record past "now"; clamp the anchor to it rather than extrapolate
      // past the end (which a later anchor would change). A tick far in the
      // future is not skew but a bogus caller-supplied time: not followed.
      if (a.tick <= top && top - a.tick < anchor_interval_) a.tick = top + 1;
      anchors_.append(a);
    }
    bracketed_ = n;
  }
  // After the bracket: the copy converts every record it can reach.
  recs.anchors_ = ticks_ ? anchors_ : TickAnchors();
  out.attrs.clear();
  for (const AttrEntry& a : attrs_) {
    if (a.index >= n) break;
    out.attrs.emplace_back(a.local, attr_slots::as_json(a.json));
  }
  out.foreign_parents.clear();
  for (const ForeignEntry& f : foreign_) {
    if (f.index >= n) break;
    out.foreign_parents.emplace_back(f.local, f.parent);
  }
}

}  // namespace hotspan
