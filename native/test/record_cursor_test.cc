// The consumer cursor (record_cursor.h): incremental reads in commit order,
// several cursors at once, chunks released once every cursor has read them
// (a drop-policy tracer whose consumer keeps up drops nothing), a lagging
// cursor's misses counted exactly, and a stress run (native writers, a
// holder, two cursors on their own threads) with exact counts, also under
// ThreadSanitizer in run.sh.
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "record/chunk_pool.h"
#include "read/record_cursor.h"
#include "test_util.h"
#include "record/thread_state.h"
#include "record/tracer.h"

using namespace hotspan;

namespace {

constexpr uint64_t kPerChunk = kChunkRecords;
constexpr size_t kLimit = ChunkPool::kMinLimit;
constexpr uint64_t kChunksInLimit = kLimit / ChunkPool::kChunkBytes;

std::shared_ptr<Tracer> make(FullPolicy policy) {
  TracerOptions o;
  o.memory_limit = kLimit;
  o.on_full = policy;
  return Tracer::create(o);
}

// Flat spans starting at their local id - 1 (local ids 1, 2, ...): `made`
// counts the spans the state has made so far.
void record(ThreadState& st, uint32_t name, uint64_t count, uint64_t& made) {
  for (uint64_t i = 0; i < count; ++i, ++made) {
    const auto at = static_cast<int64_t>(made);
    CHECK_EQ(begin(st, name, at), Status::kOk);
    CHECK_EQ(end(st, at + 1), Status::kOk);
  }
}

void check_sum(const RecordCounts& c) {
  CHECK_EQ(c.produced, c.kept + c.released + c.overwritten + c.dropped);
}

// Reads every batch the cursor has now; checks local ids follow on from
// `expect` per timeline (commit order, nothing twice); returns records read.
uint64_t read_all(RecordCursor& cur, std::vector<uint32_t>& expect_next, uint64_t& gaps) {
  FrozenSnapshot batch;
  uint64_t n = 0;
  while (cur.next(batch)) {
    for (const FrozenTimeline& tl : batch.timelines) {
      if (expect_next.size() < tl.id + 1) expect_next.resize(tl.id + 1, 1);
      uint32_t want = expect_next[tl.id];
      for (uint32_t i = 0; i < tl.records.size(); ++i) {
        const SpanRecord r = tl.records[i];
        // A chunk recycled under the cursor skips whole chunks forward.
        if (r.local_id != want) {
          CHECK(r.local_id > want);
          gaps += r.local_id - want;
        }
        CHECK(tl.records.local_id(i) == r.local_id);
        // Spans start at their local id - 1 and last 1 ns: a record read
        // from a chunk reused under the reader would not.
        CHECK_EQ(r.start_ns, static_cast<int64_t>(r.local_id) - 1);
        CHECK_EQ(r.end_ns, r.start_ns + 1);
        want = r.local_id + 1;
      }
      expect_next[tl.id] = want;
      n += tl.records.size();
    }
  }
  return n;
}

}  // namespace

static void reads_incrementally_in_order() {
  auto t = make(FullPolicy::kOverwrite);
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  uint64_t made = 0;
  record(*main, n, 10, made);
  auto a = RecordCursor::open(t);
  CHECK(a != nullptr);
  FrozenSnapshot batch;
  CHECK(a->next(batch));
  CHECK_EQ(batch.timelines.size(), size_t{1});
  CHECK_EQ(batch.timelines[0].records.size(), 10u);
  CHECK_EQ(batch.names.size(), t->name_count());
  CHECK(!a->next(batch));
  CHECK(batch.timelines.empty());
  // Across a chunk boundary: the next batch starts mid-chunk.
  record(*main, n, kPerChunk + 5, made);
  auto b = RecordCursor::open(t);  // a second cursor starts at what is kept
  CHECK(a->next(batch));
  CHECK_EQ(uint64_t{batch.timelines[0].records.size()}, kPerChunk + 5);
  CHECK_EQ(batch.timelines[0].records[0].local_id, 11u);
  CHECK_EQ(batch.timelines[0].records[kPerChunk + 4].local_id, static_cast<uint32_t>(kPerChunk + 15));
  CHECK(b->next(batch));
  CHECK_EQ(uint64_t{batch.timelines[0].records.size()}, kPerChunk + 15);
  CHECK_EQ(a->delivered(), kPerChunk + 15);
  CHECK_EQ(b->delivered(), kPerChunk + 15);
  CHECK_EQ(a->missed(), uint64_t{0});
}

static void slots_run_out_and_come_back() {
  auto t = make(FullPolicy::kOverwrite);
  std::vector<std::unique_ptr<RecordCursor>> all;
  for (int i = 0; i < ChunkPool::kMaxConsumers; ++i) {
    all.push_back(RecordCursor::open(t));
    CHECK(all.back() != nullptr);
  }
  CHECK(RecordCursor::open(t) == nullptr);
  all.pop_back();
  CHECK(RecordCursor::open(t) != nullptr);
}

// Drop policy: a consumer that keeps up releases chunks, so nothing drops,
// and the counts call them released (not lost: no warning).
static void drop_with_a_consumer_keeps_recording() {
  auto t = make(FullPolicy::kDrop);
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  uint64_t made = 0;
  auto cur = RecordCursor::open(t);
  std::vector<uint32_t> expect;
  uint64_t gaps = 0, read = 0;
  const uint64_t total = 5 * kChunksInLimit * kPerChunk;
  for (uint64_t done = 0; done < total; done += kPerChunk) {
    record(*main, n, kPerChunk, made);
    read += read_all(*cur, expect, gaps);
  }
  const RecordCounts c = test_util::counts_of(*t, timeline_id(*main));
  check_sum(c);
  CHECK_EQ(c.produced, total);
  CHECK_EQ(c.dropped, uint64_t{0});
  CHECK_EQ(c.overwritten, uint64_t{0});
  CHECK(c.released > 0);
  CHECK_EQ(read, total);
  CHECK_EQ(gaps, uint64_t{0});
  CHECK(!t->lost_any());
  CHECK(t->memory_used() <= t->memory_limit());
  // Without a consumer the same tracer drops again.
  cur.reset();
  record(*main, n, 2 * kChunksInLimit * kPerChunk, made);
  CHECK(test_util::counts_of(*t, timeline_id(*main)).dropped > 0);
}

// Drop policy, a consumer that never reads: its unread chunks are not
// recycled, so new records drop (counted).
static void drop_with_a_stalled_consumer_drops() {
  auto t = make(FullPolicy::kDrop);
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  uint64_t made = 0;
  auto cur = RecordCursor::open(t);
  record(*main, n, 3 * kChunksInLimit * kPerChunk, made);
  const RecordCounts c = test_util::counts_of(*t, timeline_id(*main));
  check_sum(c);
  CHECK_EQ(c.released, uint64_t{0});
  CHECK_EQ(c.kept, kChunksInLimit * kPerChunk);
  std::vector<uint32_t> expect;
  uint64_t gaps = 0;
  CHECK_EQ(read_all(*cur, expect, gaps), c.kept);
}

// Overwrite policy, a cursor that lags: the chunks it did not read are
// recycled, it skips them and counts them missed, exactly.
static void overwrite_lagging_cursor_counts_misses() {
  auto t = make(FullPolicy::kOverwrite);
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  uint64_t made = 0;
  auto cur = RecordCursor::open(t);
  std::vector<uint32_t> expect;
  uint64_t gaps = 0;
  uint64_t read = read_all(*cur, expect, gaps);
  record(*main, n, 10, made);
  read += read_all(*cur, expect, gaps);
  record(*main, n, 4 * kChunksInLimit * kPerChunk, made);
  read += read_all(*cur, expect, gaps);
  const RecordCounts c = test_util::counts_of(*t, timeline_id(*main));
  check_sum(c);
  CHECK(c.overwritten > 0);
  CHECK_EQ(cur->missed(), gaps);
  CHECK_EQ(read, cur->delivered());
  CHECK_EQ(read + cur->missed(), c.produced);
  // The first ten were read before any recycle: released, not lost.
  CHECK(t->lost_any());
}

// pass(): a lagging cursor gives up what waits without reading it. Every
// record is then delivered, missed or passed, exactly; nothing is read
// twice; the chunks passed go back to a drop budget as if read (a tracer
// whose only cursor passed keeps recording without dropping).
static void pass_counts_what_it_gives_up() {
  auto t = make(FullPolicy::kDrop);
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  uint64_t made = 0;
  auto cur = RecordCursor::open(t);
  std::vector<uint32_t> expect;
  uint64_t gaps = 0;
  record(*main, n, 10, made);
  uint64_t read = read_all(*cur, expect, gaps);
  CHECK_EQ(read, uint64_t{10});
  record(*main, n, (kChunksInLimit - 1) * kPerChunk, made);
  const uint64_t passed = cur->pass();
  CHECK_EQ(passed, (kChunksInLimit - 1) * kPerChunk);
  CHECK_EQ(cur->passed(), passed);
  CHECK_EQ(cur->pass(), uint64_t{0});  // nothing new
  // The chunks passed are free to reuse: all but the one being written are
  // filled again, none dropped (without pass() marking them read, a drop
  // budget would drop nearly all of these).
  record(*main, n, (kChunksInLimit - 1) * kPerChunk, made);
  RecordCounts c = test_util::counts_of(*t, timeline_id(*main));
  check_sum(c);
  CHECK_EQ(c.dropped, uint64_t{0});
  CHECK(c.released > 0);
  read += read_all(*cur, expect, gaps);
  CHECK_EQ(read + cur->missed() + passed, c.produced);
}

// Native writers on an overwrite budget, a holder flushing, two cursors on
// their own threads: every record each cursor gets is the right one, in
// order, and per cursor delivered + missed = produced exactly.
static void cursor_stress() {
  auto t = make(FullPolicy::kOverwrite);
  constexpr int kThreads = 3;
  constexpr uint64_t kSpans = 200000;
  const uint32_t name = t->intern("w");
  auto c1 = RecordCursor::open(t);
  auto c2 = RecordCursor::open(t);
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w) {
    threads.emplace_back([&] {
      auto st = t->native_thread();
      for (uint64_t i = 0; i < kSpans; ++i) {
        CHECK_EQ(begin(*st, name, static_cast<int64_t>(i)), Status::kOk);
        CHECK_EQ(end(*st, static_cast<int64_t>(i) + 1), Status::kOk);
      }
      publish(*st);
      running.fetch_sub(1);
    });
  }
  std::thread holder([&] {
    while (running.load() > 0) {
      t->flush();
      std::this_thread::yield();
    }
    t->flush();
  });
  struct Reader {
    std::vector<uint32_t> expect;
    uint64_t gaps = 0, read = 0;
  } r1, r2;
  std::atomic<bool> stop{false};
  auto reader = [&](RecordCursor& cur, Reader& r) {
    while (!stop.load()) r.read += read_all(cur, r.expect, r.gaps);
  };
  std::thread t1([&] { reader(*c1, r1); });
  std::thread t2([&] { reader(*c2, r2); });
  for (auto& th : threads) th.join();
  holder.join();
  stop.store(true);
  t1.join();
  t2.join();
  r1.read += read_all(*c1, r1.expect, r1.gaps);
  r2.read += read_all(*c2, r2.expect, r2.gaps);
  RecordCounts sum;
  for (const TimelineCounts& c : t->counts()) {
    check_sum(c.counts);
    sum += c.counts;
  }
  const uint64_t produced = sum.produced;
  CHECK_EQ(produced, uint64_t{kThreads} * kSpans);
  CHECK_EQ(r1.read, c1->delivered());
  CHECK_EQ(r2.read, c2->delivered());
  // Dropped records never reached a timeline's committed range.
  CHECK_EQ(c1->delivered() + c1->missed(), produced - sum.dropped);
  CHECK_EQ(c2->delivered() + c2->missed(), produced - sum.dropped);
  CHECK(r1.gaps >= c1->missed());
  CHECK(r2.gaps >= c2->missed());
  CHECK(t->memory_used() <= t->memory_limit());
}

int main() {
  reads_incrementally_in_order();
  slots_run_out_and_come_back();
  drop_with_a_consumer_keeps_recording();
  drop_with_a_stalled_consumer_drops();
  overwrite_lagging_cursor_counts_misses();
  pass_counts_what_it_gives_up();
  cursor_stress();
  return check::result("record_cursor_test");
}
