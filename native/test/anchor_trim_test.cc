// A ticks timeline's anchors in a long recording (timeline.h): bounded in
// overwrite steady state and charged to the budget, and trimming never
// changes the ns of a kept record, including a span that began long before
// the oldest kept chunk. Without a usable TSC (HOTSPAN_CLOCK=monotonic) the
// tracer records ns and keeps no anchors: the checks that need them are
// skipped, the rest still run.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <map>
#include <thread>
#include <memory>
#include <utility>
#include <vector>

#include "check.h"
#include "record/clock.h"
#include "read/record_cursor.h"
#include "test_util.h"
#include "record/thread_state.h"
#include "record/tracer.h"

using namespace hotspan;

namespace {

constexpr size_t kLimit = ChunkPool::kMinLimit;  // 37 chunks
constexpr uint64_t kChunksInLimit = kLimit / ChunkPool::kChunkBytes;

std::shared_ptr<Tracer> ticks_tracer() {
  TracerOptions o;
  o.origin_ns = clock::now_ns();
  o.time_unit = TimeUnit::kTicks;
  o.memory_limit = kLimit;
  o.on_full = FullPolicy::kOverwrite;
  return Tracer::create(o);
}

// An anchor ahead of the clock by 50 ns times the square of the kinks so
// far: the anchors then lie on a curve, not a line, so a record that moved
// to another segment (or is extrapolated) converts differently, by far
// more than rounding. Once the first kink is taken, the tracer's own
// anchors are refused (their ns would go backwards): a read must follow a
// kink, which then brackets the records before it.
int64_t g_kinks = 0;
void kink(Timeline& tl) {
  ++g_kinks;
  tl.add_anchor(clock::Anchor{clock::now_ticks_ordered(), clock::now_ns() + 50 * g_kinks * g_kinks});
}

// `chunks` chunks' worth of short spans, one level below what is open; with
// `kinks`, a kink after each chunk.
void record_chunks(ThreadState& st, uint32_t name, uint64_t chunks, bool kinks = false) {
  for (uint64_t c = 0; c < chunks; ++c) {
    for (uint64_t i = 0; i < kChunkRecords; ++i) {
      CHECK_EQ(begin(st, name, clock::now_ticks()), Status::kOk);
      CHECK_EQ(end(st, clock::now_ticks()), Status::kOk);
    }
    if (kinks) kink(*st.timeline);
  }
}

// Every record of the timeline, by local id.
using Times = std::map<uint32_t, std::pair<int64_t, int64_t>>;
Times read(const Tracer& t, uint32_t timeline) {
  const FrozenSnapshot snap = t.freeze();
  Times out;
  const FrozenTimeline* tl = test_util::find_timeline(snap, timeline);
  CHECK(tl != nullptr);
  if (tl == nullptr) return out;
  for (const SpanRecord r : tl->records) out[r.local_id] = {r.start_ns, r.end_ns};
  return out;
}

// memory_used() is the kept chunks plus what every timeline charged for its
// anchors, plus `long_spans` long-end entries (16 bytes each; short spans
// have no other side table).
void check_charged(const Tracer& t, size_t long_spans = 0) {
  size_t anchors = 0;
  for (const auto& tl : t.timelines()) anchors += tl->anchor_bytes();
  CHECK(t.memory_used() >= anchors);
  CHECK((t.memory_used() - anchors) % ChunkPool::kChunkBytes <= 16 * long_spans);
  CHECK(t.memory_used() <= t.memory_limit());
}

}  // namespace

// 3000 chunks (3M spans) through a 37-chunk budget: a new anchor with every
// chunk, so without trimming there would be over 3000 of them.
static void steady_state_is_bounded() {
  auto t = ticks_tracer();
  const uint32_t name = t->intern("op");
  auto st = t->attach_js_thread("main");
  Timeline& tl = *st->timeline;
  if (!tl.ticks()) {
    t->detach_thread(*st, t->now());
    return;
  }
  record_chunks(*st, name, 1000);
  const size_t after_1000 = tl.anchor_count();
  record_chunks(*st, name, 2000);
  const size_t after_3000 = tl.anchor_count();
  // The kept records need the anchors of about 37 chunks and of the few
  // kAnchorMs periods they span; a trim waits for four times what it kept,
  // at least 256. 1000 leaves room for a slow, loaded run.
  CHECK(after_1000 < 1000);
  CHECK(after_3000 < 1000);
  CHECK(tl.anchors_trimmed() >= 2000);
  CHECK(tl.anchor_bytes() > 0);
  check_charged(*t);
  const RecordCounts c = test_util::counts_of(*t, timeline_id(*st));
  CHECK_EQ(c.produced, c.kept + c.overwritten + c.released + c.dropped);
  CHECK(c.kept <= kChunksInLimit * kChunkRecords);
  t->detach_thread(*st, t->now());
}

// Snapshots every 8 chunks while two outer spans stay open across many
// budgets' worth of records, with a skewed anchor after each chunk (kink): each record converts to the same ns in every
// snapshot that holds it, while trims drop anchors in between. The inner
// outer span ends when its start lies far below every kept chunk's records
// and is then read in several snapshots; the outermost one is long in the
// stored sense too (its end in the long-end table) when the TSC is fast
// enough for the run to last 2^32 ticks, which it usually does not.
static void kept_records_convert_the_same() {
  auto t = ticks_tracer();
  const uint32_t name = t->intern("op");
  auto st = t->attach_js_thread("main");
  Timeline& tl = *st->timeline;
  const bool ticks = tl.ticks();
  const uint32_t id = timeline_id(*st);
  CHECK_EQ(begin(*st, name, clock::now_ticks()), Status::kOk);  // outermost, never ended here
  uint32_t inner = 0;
  Times prev;
  uint64_t trims_seen = 0;    // snapshot pairs with a trim between and records in common
  uint64_t trimmed_at_prev = 0;
  int inner_reads = 0;        // snapshots holding the inner span below every chunk
  for (int round = 0; round < 40; ++round) {
    if (round == 2) {
      CHECK_EQ(begin(*st, name, clock::now_ticks()), Status::kOk);
      inner = innermost_local(*st);
    }
    if (round == 23) {
      // More anchors than the last trim kept, at once: the next chunk tries
      // a trim while the inner span (ended three rounds ago, recycled in
      // two) is kept, and must leave the segment its start lies in as it is.
      const size_t burst = 4 * tl.anchor_count() + 256;  // kTrimGrowth, kTrimAnchors
      for (size_t k = 0; k < burst; ++k) kink(tl);
    }
    record_chunks(*st, name, 8, true);
    if (round == 20) {
      CHECK_EQ(end(*st, clock::now_ticks()), Status::kOk);  // the inner span
      kink(tl);
    }
    const Times now = read(*t, id);
    size_t common = 0;
    for (const auto& [local, times] : now) {
      const auto it = prev.find(local);
      if (it == prev.end()) continue;
      ++common;
      CHECK_EQ(times.first, it->second.first);
      CHECK_EQ(times.second, it->second.second);
    }
    const auto in = now.find(inner);
    if (inner != 0 && in != now.end()) {
      // Its start lies below every other kept record's.
      int64_t others = INT64_MAX;
      for (const auto& [local, times] : now) {
        if (local != inner) others = std::min(others, times.first);
      }
      CHECK(in->second.first < others);
      CHECK(in->second.first <= in->second.second);
      ++inner_reads;
    }
    const uint64_t trimmed = tl.anchors_trimmed();
    if (common != 0 && trimmed > trimmed_at_prev) ++trims_seen;
    trimmed_at_prev = trimmed;
    prev = now;
  }
  CHECK_EQ(end(*st, clock::now_ticks()), Status::kOk);  // the outermost
  kink(tl);
  // The outermost span: it began before any kept record; read twice.
  const Times a = read(*t, id);
  record_chunks(*st, name, 4, true);
  const Times b = read(*t, id);
  const uint32_t outer = 1;
  CHECK(a.count(outer) == 1 && b.count(outer) == 1);
  if (a.count(outer) == 1 && b.count(outer) == 1) {
    CHECK_EQ(a.at(outer).first, b.at(outer).first);
    CHECK_EQ(a.at(outer).second, b.at(outer).second);
  }
  CHECK(inner_reads >= 3);  // ended at round 20, recycled some 4 rounds later
  // The first at 256 anchors; the burst's attempt keeps all (the inner span).
  if (ticks) CHECK(trims_seen >= 1);
  check_charged(*t, 2);  // the two outer spans are long when the run lasts 2^32 ticks
  t->detach_thread(*st, t->now());
}

// A native thread records through the budget while a stream-like cursor
// and a snapshot reader freeze over and over, and the JS thread drains:
// trims, chunk scans and partial anchor copies race with the writer (under
// ThreadSanitizer in run.sh), and every record read converts in order.
static void trims_while_reading() {
  auto t = ticks_tracer();
  const uint32_t name = t->intern("op");
  std::atomic<bool> done{false};
  std::thread writer([&] {
    auto st = t->native_thread();
    CHECK(st != nullptr);
    if (!st) return;
    record_chunks(*st, name, 800);
    // A trim needs kTrimAnchors anchors, one a chunk the writer gets; while
    // the readers pin the kept chunks it gets none and drops (seen: 144 to
    // 211 anchors after 800 chunks, 4 runs in 40 on a loaded machine). So
    // it goes on until a trim has raced the readers, within a bound.
    for (int extra = 0; extra < 20000 && clock::tsc_enabled() && st->timeline->anchors_trimmed() == 0; ++extra) {
      record_chunks(*st, name, 1);
    }
    done.store(true);
  });
  auto cursor = RecordCursor::open(t);
  CHECK(cursor != nullptr);
  uint64_t batches = 0, snapshots = 0;
  auto check_records = [](const FrozenTimeline& tl) {
    for (const SpanRecord r : tl.records) CHECK(r.start_ns <= r.end_ns);
  };
  while (!done.load() || batches == 0) {
    t->flush();
    FrozenSnapshot batch;
    while (cursor && cursor->next(batch, 4096)) {
      ++batches;
      for (const FrozenTimeline& tl : batch.timelines) check_records(tl);
    }
    const FrozenSnapshot snap = t->freeze();
    ++snapshots;
    for (const FrozenTimeline& tl : snap.timelines) check_records(tl);
  }
  writer.join();
  CHECK(batches > 0);
  CHECK(snapshots > 0);
  uint64_t trimmed = 0;
  for (const auto& tl : t->timelines()) {
    CHECK(tl->anchor_count() < 1000);
    trimmed += tl->anchors_trimmed();
  }
  if (clock::tsc_enabled()) CHECK(trimmed > 0);
  check_charged(*t);
}

// Times given in ns (asyncFinish's, Timeline::tick_of_ns) near the clock,
// for about 50 ms: each reads back within 2 us of what was given (a few
// anchors' error; a rate calibrated over 200 us put such times tens of us
// off), and they add a few anchors per kAnchorMs and per chunk, not one a
// call (a fresh anchor for every given time past the last fails it: 55,573
// anchors for 55,516 spans).
static void given_times_take_few_anchors() {
  TracerOptions o;
  o.origin_ns = clock::now_ns();
  o.time_unit = TimeUnit::kTicks;
  auto t = Tracer::create(o);
  const uint32_t name = t->intern("given");
  const uint32_t track = t->track("given", false);
  struct Given {
    int64_t start, end;
  };
  std::vector<Given> given;
  const int64_t t0 = clock::now_ns();
  while (clock::now_ns() - t0 < 50'000'000) {
    const uint64_t tok = t->async_begin(track, name, clock::now_ticks());
    AsyncEndChanges c;
    c.has_start = true;
    c.start_ns = clock::now_ns() - 1000;
    c.has_end = true;
    c.end_ns = clock::now_ns();
    given.push_back(Given{c.start_ns, c.end_ns});
    CHECK_EQ(t->async_end(tok, clock::now_ticks(), 0, std::move(c)), Status::kOk);
  }
  const double elapsed_ms = static_cast<double>(clock::now_ns() - t0) / 1e6;
  t->flush();
  const FrozenSnapshot snap = t->freeze();
  const auto* tl = test_util::find_timeline(snap, track);
  CHECK(tl != nullptr);
  if (tl == nullptr) return;
  CHECK_EQ(tl->records.size(), given.size());
  int off = 0;
  for (size_t i = 0; i < given.size() && i < tl->records.size(); ++i) {
    const SpanRecord r = tl->records[static_cast<uint32_t>(i)];
    if (std::llabs(r.start_ns - given[i].start) > 2000 || std::llabs(r.end_ns - given[i].end) > 2000) ++off;
  }
  if (off != 0) {
    for (size_t i = 0, shown = 0; i < given.size() && shown < 8; ++i) {
      const SpanRecord r = tl->records[static_cast<uint32_t>(i)];
      const int64_t ds = r.start_ns - given[i].start, de = r.end_ns - given[i].end;
      if (std::llabs(ds) > 2000 || std::llabs(de) > 2000) {
        std::printf("   span %zu: start %+lld ns, end %+lld ns\n", i, static_cast<long long>(ds), static_cast<long long>(de));
        ++shown;
      }
    }
  }
  CHECK_EQ(off, 0);
  if (!clock::tsc_enabled()) return;
  size_t anchors = 0;
  // Every anchor the track took: those it holds and those trims dropped.
  for (const auto& x : t->timelines()) {
    if (x->id() == track) anchors = x->anchor_count() + x->anchors_trimmed();
  }
  // Per kAnchorMs (5 ms): the writer's own and one of given times; one per
  // 1024-record chunk; as many again for the steps that grow a short
  // segment (one cut short by a chunk's anchor) back to 5 ms, and a few to start.
  const double bound = 2 * elapsed_ms / 5 + 2 * static_cast<double>(given.size()) / 1024 + 24;
  std::printf("   %zu given spans in %.0f ms: %zu anchors (bound %.0f)\n", given.size(), elapsed_ms, anchors, bound);
  CHECK(static_cast<double>(anchors) <= bound);
}

int main() {
  given_times_take_few_anchors();
  steady_state_is_bounded();
  trims_while_reading();
  kept_records_convert_the_same();
  return check::result("anchor_trim_test");
}
