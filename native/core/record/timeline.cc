#include "record/timeline.h"

#include <algorithm>
#include <new>
#include <utility>

#include "record/attr_slots.h"
#include "record/clock.h"
#include "record/platform_lock.h"

namespace hotspan {

namespace {

// Calls fn on the entries of an index-ordered deque with index in [begin, end):
// a consumer's batch starts past what earlier batches read, found by binary search.
template <class Entries, class Fn>
void each_between(const Entries& entries, uint64_t begin, uint64_t end, Fn&& fn) {
  auto it = std::lower_bound(entries.begin(), entries.end(), begin,
                             [](const auto& e, uint64_t index) { return e.index < index; });
  for (; it != entries.end() && it->index < end; ++it) fn(*it);
}

}  // namespace

Timeline::Timeline(uint32_t id, TimelineKind kind, std::string name, bool serial, bool ticks,
                   std::shared_ptr<ChunkPool> pool, std::shared_ptr<const AttrDict> dict,
                   const clock::Anchor* start)
    : id_(id),
      kind_(kind),
      serial_(serial),
      ticks_(ticks),
      anchor_interval_(ticks ? clock::ticks_for_ms(kAnchorMs) : INT64_MAX),
      pool_(pool ? std::move(pool)
                 : std::make_shared<ChunkPool>(ChunkPool::kMaxLimit, FullPolicy::kOverwrite)),
      ring_(16),
      dict_(std::move(dict)),
      name_(std::move(name)) {
  // No other thread sees us yet. append() keeps only anchors past the last.
  if (ticks_ && start != nullptr) anchors_.append(*start);
  if (ticks_) anchors_.append(clock::measure_anchor());
}  // its bytes are charged with the next anchor's (anchor_charge_locked)

Timeline::~Timeline() {
  // No reader is left (frozen records keep the timeline alive).
  for (size_t k = 0; k < ring_size_; ++k) pool_->free_chunk(ring_at(k));
  size_t side = 0;
  side += attrs_.held();
  for (const ContextEntry& c : contexts_) side += context_bytes(c);
  side += foreign_.size() * sizeof(ForeignEntry) + long_ends_.size() * sizeof(LongEntry);
  pool_->uncharge(side + anchors_charged_);
}

void Timeline::ring_push(PoolChunk* c) {
  if (ring_size_ == ring_.size()) {
    // Growth only: a timeline in steady state gives a chunk back for each
    // one it takes.
    std::vector<PoolChunk*> bigger(ring_.size() * 2);
    for (size_t k = 0; k < ring_size_; ++k) bigger[k] = ring_at(k);
    ring_.swap(bigger);
    ring_head_ = 0;
  }
  ring_[(ring_head_ + ring_size_) & (ring_.size() - 1)] = c;
  ++ring_size_;
}

StoredSpan* Timeline::append_chunk(uint64_t first, int64_t* anchor_due) {
  // Taken outside this timeline's lock: the pool may recycle this very
  // timeline's oldest chunk, and a reader waits only for the push.
  PoolChunk* c = pool_->acquire(*this, first);
  if (c == nullptr) return nullptr;
  std::ptrdiff_t charge = 0;
  {
    LockGuard<TimelineMutex> lock(mu_);
    c->low = INT64_MAX;
    ring_push(c);
    if (ticks_) {
      // Anchors are measured under the lock so they are appended in tick order.
      append_anchor_locked(clock::measure_anchor());
      trim_anchors_locked();
      charge = anchor_charge_locked();
    }
    if (anchor_due != nullptr) *anchor_due = due_locked();
  }
  settle_anchor_charge(charge);
  return c->records;
}

void Timeline::append_anchor_locked(clock::Anchor a) const {
  anchors_.append(a);
  written_at_anchor_ = written_.load(std::memory_order_relaxed);
}

int64_t Timeline::scan_locked(uint64_t upto, uint64_t top_from) const {
  const uint64_t kept_base = recycled_ * kChunkRecords;
  scanned_ = std::max(scanned_, kept_base);
  auto chunk_of = [&](uint64_t i) { return ring_at(static_cast<size_t>((i - kept_base) / kChunkRecords)); };
  auto chunk_end = [&](uint64_t i) { return std::min(upto, (i / kChunkRecords + 1) * kChunkRecords); };
  // The highest tick of [top_from, upto): a reader's bracket.
  int64_t top = INT64_MIN;
  each_between(long_ends_, top_from, upto, [&](const LongEntry& e) { top = std::max(top, e.end); });
  for (uint64_t i = top_from; i < upto; i = chunk_end(i)) {
    const StoredSpan* r = chunk_of(i)->records + i % kChunkRecords;
    for (const StoredSpan* e = r + (chunk_end(i) - i); r != e; ++r) {
      // By value: a reference to the packed (4-aligned) int64 is undefined.
      const int64_t start = r->start;
      // A long span's end is in the long-end table, taken above.
      top = std::max(top, r->duration != kLongSpan ? start + static_cast<int64_t>(r->duration) : start);
    }
  }
  // The lowest tick of each chunk's records from scanned_ on: the starts
  // (a stored end is never below its start), and the long ends, which a
  // caller-supplied time may put below it. The writer's cost per record for
  // a trim, so kept to a load and a min.
  for (uint64_t i = scanned_; i < upto; i = chunk_end(i)) {
    PoolChunk* c = chunk_of(i);
    const StoredSpan* r = c->records + i % kChunkRecords;
    const StoredSpan* e = r + (chunk_end(i) - i);
    int64_t low0 = c->low, low1 = INT64_MAX;
    for (; e - r >= 2; r += 2) {
      const int64_t s0 = r[0].start;
      const int64_t s1 = r[1].start;
      low0 = std::min(low0, s0);
      low1 = std::min(low1, s1);
    }
    if (r != e) low0 = std::min(low0, static_cast<int64_t>(r->start));
    c->low = std::min(low0, low1);
  }
  each_between(long_ends_, scanned_, upto, [&](const LongEntry& e) {
    PoolChunk* c = chunk_of(e.index);
    c->low = std::min(c->low, e.end);
  });
  scanned_ = std::max(scanned_, upto);
  return top;
}

int64_t Timeline::low_locked(size_t first, size_t count) const {
  int64_t low = INT64_MAX;
  for (size_t k = first; k < first + count; ++k) low = std::min(low, ring_at(k)->low);
  return low;
}

void Timeline::trim_anchors_locked() {
  // Amortized: a trim moves what it keeps and needs every kept record
  // scanned, so it waits until the anchors have grown kTrimGrowth-fold.
  if (anchors_.size() < trim_at_) return;
  // Every committed record is one a reader may already have converted:
  // its ticks must keep their segments. The scan catches up at most
  // kScanChunks chunks a time, so no chunk holds its writer longer than
  // that (it gains on the writer, and recycling skips what it has not
  // reached); the trim waits until it is done.
  const uint64_t committed = committed_.load(std::memory_order_acquire);
  const uint64_t from = std::max(scanned_, recycled_ * kChunkRecords);
  scan_locked(std::min(committed, from + kScanChunks * kChunkRecords), UINT64_MAX);
  if (scanned_ < committed) return;
  anchors_trimmed_ += anchors_.trim_below(low_locked(0, ring_size_));
  trim_at_ = std::max(kTrimAnchors, kTrimGrowth * anchors_.size());
}

std::ptrdiff_t Timeline::anchor_charge_locked() const {
  const size_t now = anchors_.bytes();
  const auto delta = static_cast<std::ptrdiff_t>(now) - static_cast<std::ptrdiff_t>(anchors_charged_);
  anchors_charged_ = now;
  return delta;
}

void Timeline::settle_anchor_charge(std::ptrdiff_t delta) const {
  // Always taken, as a foreign parent is: the anchors are what converts the
  // records the budget holds (under overwrite, charging recycles chunks).
  if (delta > 0) pool_->charge(static_cast<size_t>(delta), false);
  if (delta < 0) pool_->uncharge(static_cast<size_t>(-delta));
}

int64_t Timeline::tick_of_ns(int64_t ns, int64_t now) {
  if (!ticks_) return ns;
  std::ptrdiff_t charge = 0;
  int64_t tick;
  {
    LockGuard<TimelineMutex> lock(mu_);
    // Extrapolated over at most twice the last segment (off by at most about
    // twice its anchors' error) and kAnchorMs; past that, a fresh anchor,
    // whose segment is then twice as long: a short one grows to kAnchorMs in
    // a few steps, so given times add a few anchors per kAnchorMs, not one each.
    if (ns > anchors_.last_ns() &&
        now - anchors_.last_tick() > std::min(2 * anchors_.last_segment_ticks(), anchor_interval_)) {
      append_anchor_locked(clock::measure_anchor());
      charge = anchor_charge_locked();
    }
    tick = anchors_.to_tick(ns);
  }
  settle_anchor_charge(charge);
  return tick;
}

void Timeline::add_anchor(clock::Anchor a) {
  if (!ticks_) return;
  std::ptrdiff_t charge = 0;
  {
    LockGuard<TimelineMutex> lock(mu_);
    append_anchor_locked(a);
    charge = anchor_charge_locked();
  }
  settle_anchor_charge(charge);
}

size_t Timeline::anchor_count() const {
  LockGuard<TimelineMutex> lock(mu_);
  return anchors_.size();
}

size_t Timeline::anchor_bytes() const {
  LockGuard<TimelineMutex> lock(mu_);
  return anchors_charged_;
}

uint64_t Timeline::anchors_trimmed() const {
  LockGuard<TimelineMutex> lock(mu_);
  return anchors_trimmed_;
}

Recycled Timeline::recycle_front(PoolChunk& c, bool released_only) {
  LockGuard<TimelineMutex> lock(mu_);
  if (ring_size_ == 0 || ring_at(0) != &c) return Recycled::kNo;
  const uint64_t end = c.first + kChunkRecords;
  // The writer has stored the whole chunk and moved on (acquire: its stores
  // are done). Records it stored but no holder committed yet (a native thread
  // whose batch waits in the queue) are committed here and overwritten at
  // once: they are counted, and the JS thread need not drain for a native
  // thread to record in steady state.
  if (written_.load(std::memory_order_acquire) < end) return Recycled::kNo;
  // Acquire pairs with the last reader's release when it unpinned.
  if (c.pins.load(std::memory_order_acquire) != 0) return Recycled::kNo;
  const uint32_t consumers = pool_->consumers();
  bool released = consumers != 0;
  for (int k = 0; k < ChunkPool::kMaxConsumers; ++k) {
    if ((consumers & (1u << k)) != 0 && consumed_[k] < end) released = false;
  }
  if (released_only && !released) return Recycled::kNo;
  commit_up_to(end);
  if (!released) ++lost_chunks_;
  ring_head_ = (ring_head_ + 1) & (ring_.size() - 1);
  --ring_size_;
  ++recycled_;
  size_t side = attrs_.drop_below(end);
  while (!foreign_.empty() && foreign_.front().index < end) {
    side += sizeof(ForeignEntry);
    foreign_.pop_front();
  }
  while (!contexts_.empty() && contexts_.front().index < end) {
    side += context_bytes(contexts_.front());
    contexts_.pop_front();
  }
  while (!long_ends_.empty() && long_ends_.front().index < end) {
    side += sizeof(LongEntry);
    long_ends_.pop_front();
  }
  pool_->uncharge(side);
  return released ? Recycled::kReleased : Recycled::kLost;
}

uint64_t Timeline::start_consumer(int slot) {
  LockGuard<TimelineMutex> lock(mu_);
  consumed_[slot] = 0;
  return recycled_ * kChunkRecords;
}

RecordCounts Timeline::counts_locked(uint64_t committed) const {
  RecordCounts c;
  c.overwritten = lost_chunks_ * kChunkRecords;
  c.released = (recycled_ - lost_chunks_) * kChunkRecords;
  c.kept = committed - c.overwritten - c.released;
  c.dropped = dropped_.load(std::memory_order_relaxed);
  c.produced = committed + c.dropped;
  return c;
}

RecordCounts Timeline::counts() const {
  LockGuard<TimelineMutex> lock(mu_);
  return counts_locked(committed_.load(std::memory_order_acquire));
}

int64_t Timeline::due_locked() const {
  if (!ticks_) return INT64_MAX;
  const int64_t last = anchors_.last_tick();
  return last > INT64_MAX - anchor_interval_ ? INT64_MAX : last + anchor_interval_;
}

int64_t Timeline::anchor_due() const {
  if (!ticks_) return INT64_MAX;
  LockGuard<TimelineMutex> lock(mu_);
  return due_locked();
}

int64_t Timeline::anchor_if_stale(int64_t now) {
  if (!ticks_) return INT64_MAX;
  std::ptrdiff_t charge = 0;
  int64_t due;
  {
    LockGuard<TimelineMutex> lock(mu_);
    // A tick below the due one (another anchor came first, or this thread's
    // core lags the one that took it) needs nothing.
    due = due_locked();
    if (now >= due) {
      if (written_.load(std::memory_order_relaxed) == written_at_anchor_) {
        // Nothing stored since the last anchor (a budget full under the drop
        // policy): no anchor is needed yet; look again in kAnchorMs.
        return now > INT64_MAX - anchor_interval_ ? INT64_MAX : now + anchor_interval_;
      }
      append_anchor_locked(clock::measure_anchor());
      charge = anchor_charge_locked();
      due = due_locked();
    }
  }
  settle_anchor_charge(charge);
  return due;
}

bool Timeline::add_attrs(uint64_t index, uint32_t local, std::string_view attrs) {
  // The common case takes no lock: the writer appends to its block
  // (attr_area.h), which readers read only below its release store.
  if (append_attrs(index, local, attrs)) return true;
  const size_t block = attrs_.need(index, attrs.size());
  // A new block, charged outside the lock: making room may recycle this
  // timeline's chunks.
  if (!pool_->charge(block, true)) return false;
  LockGuard<TimelineMutex> lock(mu_);
  attrs_.add_block(block);
  attrs_.append(index, local, attrs.data(), attrs.size());
  return true;
}

void Timeline::add_foreign_parent(uint64_t index, uint32_t local, uint64_t parent_span) {
  pool_->charge(sizeof(ForeignEntry), false);
  LockGuard<TimelineMutex> lock(mu_);
  foreign_.push_back(ForeignEntry{index, local, parent_span});
}

void Timeline::add_context(uint64_t index, uint32_t local, StoredContext context) {
  ContextEntry entry{index, local, std::move(context)};
  // Small and bounded (the binding keeps tracestate to 512 bytes): always
  // taken, as a span's foreign parent is.
  pool_->charge(context_bytes(entry), false);
  LockGuard<TimelineMutex> lock(mu_);
  contexts_.push_back(std::move(entry));
}

void Timeline::add_long_end(uint64_t index, int64_t end) {
  pool_->charge(sizeof(LongEntry), false);
  LockGuard<TimelineMutex> lock(mu_);
  long_ends_.push_back(LongEntry{index, end});
}

void Timeline::commit_up_to(uint64_t w) {
  uint64_t cur = committed_.load(std::memory_order_relaxed);
  while (cur < w &&
         !committed_.compare_exchange_weak(cur, w, std::memory_order_release,
                                           std::memory_order_relaxed)) {
  }
}

void Timeline::set_name(std::string name) {
  LockGuard<TimelineMutex> lock(mu_);
  name_ = std::move(name);
}

std::string Timeline::name() const {
  LockGuard<TimelineMutex> lock(mu_);
  return name_;
}

void Timeline::mark_exited() {
  LockGuard<TimelineMutex> lock(mu_);
  exited_ = true;
}

uint64_t Timeline::freeze(std::shared_ptr<const Timeline> self, FrozenTimeline& out,
                          uint64_t from, int consumer, uint64_t limit, uint64_t* first_read) const {
  std::ptrdiff_t charge = 0;
  uint64_t base;
  {
    LockGuard<TimelineMutex> lock(mu_);
    base = freeze_locked(std::move(self), out, from, first_read, consumer, limit);
    if (ticks_) charge = anchor_charge_locked();
  }
  settle_anchor_charge(charge);
  return base;
}

uint64_t Timeline::pass(uint64_t from, int consumer, uint64_t* first) const {
  LockGuard<TimelineMutex> lock(mu_);
  const uint64_t committed = committed_.load(std::memory_order_acquire);
  const uint64_t kept_base = recycled_ * kChunkRecords;
  *first = std::min(std::max(from, kept_base), committed);
  if (consumer >= 0) consumed_[consumer] = committed;
  return committed;
}

uint64_t Timeline::freeze_locked(std::shared_ptr<const Timeline> self, FrozenTimeline& out,
                                 uint64_t from, uint64_t* first_read, int consumer, uint64_t limit) const {
  // Acquire pairs with the committer's release: the records below it (and
  // the side-table entries added before them) are complete.
  const uint64_t committed = committed_.load(std::memory_order_acquire);
  const uint64_t kept_base = recycled_ * kChunkRecords;  // committed >= it: only committed chunks recycle
  // The first record copied; records [kept_base, base) stay unpinned.
  const uint64_t base = std::min(std::max(from, kept_base), committed);
  const uint64_t n = committed - base > limit ? base + limit : committed;
  const size_t skip = static_cast<size_t>((base - kept_base) / kChunkRecords);
  if (consumer >= 0) consumed_[consumer] = n;
  if (first_read != nullptr) {
    *first_read = std::min(std::max(base, first_read_end_), n);
    first_read_end_ = std::max(first_read_end_, n);
  }
  out.id = id_;
  out.kind = kind_;
  out.serial = serial_;
  out.name = name_;
  out.exited = exited_;
  out.counts = counts_locked(committed);
  FrozenRecords& recs = out.records;
  // The kept window is bounded by the budget (ChunkPool::kMaxLimit), so it
  // fits the frozen records' 32-bit indices.
  recs.n_ = static_cast<uint32_t>(n - base);
  recs.offset_ = static_cast<uint32_t>(base % kChunkRecords);
  recs.ticks_ = ticks_;
  recs.hint_ = 0;
  // Records [base, n) are not rewritten while pinned, and the recycler checks
  // the pins under this lock: only the pointers are copied.
  const size_t used = (recs.offset_ + static_cast<size_t>(n - base) + kChunkRecords - 1) / kChunkRecords;
  std::vector<PoolChunk*> pinned(used);
  recs.chunks_.clear();
  recs.chunks_.reserve(used);
  for (size_t c = 0; c < used; ++c) {
    pinned[c] = ring_at(skip + c);
    pinned[c]->pins.fetch_add(1, std::memory_order_relaxed);
    recs.chunks_.push_back(pinned[c]->records);
  }
  recs.pins_ = std::make_shared<ChunkPins>(std::move(self), std::move(pinned));
  recs.long_ends_.clear();
  each_between(long_ends_, base, n, [&](const LongEntry& e) {
    recs.long_ends_.push_back(LongEnd{static_cast<uint32_t>(e.index - base), e.end});
  });
  if (ticks_ && n > base) {
    // Bracket every newly visible record: if one lies past the last anchor
    // (it was stored after that anchor), append an anchor taken now. Its
    // ordered tick read comes after the acquire load of `committed`, hence
    // after every visible record's tick on a shared invariant TSC.
    // The same pass folds the newly visible records into their chunks' low.
    const int64_t top = scan_locked(n, std::max(bracketed_, base));
    if (anchors_.size() < 2 || top >= anchors_.last_tick()) {
      clock::Anchor a = clock::measure_anchor();
      // Sanity: a TSC that disagrees slightly across cores could put a
      // record past "now"; clamp the anchor to it rather than extrapolate
      // past the end (which a later anchor would change). A tick far in the
      // future is not skew but a bogus caller-supplied time: not followed.
      if (a.tick <= top && top - a.tick < anchor_interval_) a.tick = top + 1;
      append_anchor_locked(a);
    }
    bracketed_ = std::max(bracketed_, n);
  }
  // After the bracket: the copy converts every record it can reach, with the
  // segments from the one holding the pinned chunks' lowest tick on (a
  // consumer's batch needs a few, not the whole history).
  if (ticks_) {
    recs.anchors_.assign_from(anchors_, n > base ? low_locked(skip, used) : INT64_MAX);
  } else {
    recs.anchors_ = TickAnchors();
  }
  out.attrs.clear();
  attrs_.each_between(base, n, [&](const AttrArea::Entry& a) {
    out.attrs.emplace_back(a.local, attr_slots::as_json(a.bytes, dict_.get()));
  });
  out.foreign_parents.clear();
  each_between(foreign_, base, n, [&](const ForeignEntry& f) { out.foreign_parents.emplace_back(f.local, f.parent); });
  out.contexts.clear();
  each_between(contexts_, base, n, [&](const ContextEntry& c) { out.contexts.emplace_back(c.local, c.context); });
  return base;
}

}  // namespace hotspan
