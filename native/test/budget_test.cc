// The memory budget (chunk_pool.h): the drop and overwrite policies, exact
// counts per timeline, side tables charged, and readers' pins: a frozen
// snapshot's chunks are never recycled under it. The concurrent case (native
// threads writing through overwrite while a reader freezes and checks every
// record, under ThreadSanitizer in run.sh) is budget_stress().
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "test_util.h"
#include "record/thread_state.h"
#include "record/tracer.h"

using namespace hotspan;

namespace {

constexpr uint64_t kPerChunk = kChunkRecords;
constexpr size_t kLimit = ChunkPool::kMinLimit;
constexpr uint64_t kChunksInLimit = kLimit / ChunkPool::kChunkBytes;  // 36

std::shared_ptr<Tracer> make(FullPolicy policy, size_t limit = kLimit) {
  TracerOptions o;
  o.memory_limit = limit;
  o.on_full = policy;
  return Tracer::create(o);
}

// Flat spans with times that encode the local id, so a reader can tell a
// record from the one that should be in its slot.
void record(ThreadState& st, uint32_t name, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    const auto at = static_cast<int64_t>(10 * (open_depth(st) + i));
    CHECK_EQ(begin(st, name, at), Status::kOk);
    CHECK_EQ(end(st, at + 5), Status::kOk);
  }
}

void check_sum(const RecordCounts& c) {
  CHECK_EQ(c.produced, c.kept + c.overwritten + c.dropped);
}

}  // namespace

static void drop_keeps_the_oldest() {
  auto t = make(FullPolicy::kDrop);
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  const uint64_t total = 3 * kChunksInLimit * kPerChunk;
  record(*main, n, total);
  const RecordCounts c = test_util::counts_of(*t, timeline_id(*main));
  check_sum(c);
  CHECK_EQ(c.produced, total);
  CHECK_EQ(c.overwritten, uint64_t{0});
  CHECK_EQ(c.kept, kChunksInLimit * kPerChunk);
  CHECK_EQ(c.dropped, total - c.kept);
  CHECK(t->memory_used() <= t->memory_limit());
  CHECK(t->lost_any());
  const FrozenSnapshot s = t->freeze();
  const auto* tl = test_util::find_timeline(s, timeline_id(*main));
  CHECK_EQ(uint64_t{tl->records.size()}, c.kept);
  CHECK_EQ(tl->counts.dropped, c.dropped);
  // The first records are the ones kept.
  CHECK_EQ(tl->records[0].local_id, 1u);
  CHECK_EQ(tl->records[tl->records.size() - 1].local_id, static_cast<uint32_t>(c.kept));
}

static void overwrite_keeps_the_newest() {
  auto t = make(FullPolicy::kOverwrite);
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  CHECK(!t->lost_any());
  const uint64_t total = 5 * kChunksInLimit * kPerChunk + 123;
  record(*main, n, total);
  const RecordCounts c = test_util::counts_of(*t, timeline_id(*main));
  check_sum(c);
  CHECK_EQ(c.produced, total);
  CHECK_EQ(c.dropped, uint64_t{0});
  CHECK_EQ(c.overwritten % kPerChunk, uint64_t{0});  // whole chunks
  CHECK(c.kept > (kChunksInLimit - 1) * kPerChunk);
  CHECK(t->memory_used() <= t->memory_limit());
  CHECK(t->lost_any());
  const FrozenSnapshot s = t->freeze();
  const auto* tl = test_util::find_timeline(s, timeline_id(*main));
  CHECK_EQ(uint64_t{tl->records.size()}, c.kept);
  // The kept window is the newest records, in order, each intact.
  for (uint32_t i = 0; i < tl->records.size(); ++i) {
    const SpanRecord r = tl->records[i];
    if (r.local_id != static_cast<uint32_t>(c.overwritten + i + 1) || r.end_ns != r.start_ns + 5) {
      CHECK(false);
      break;
    }
  }
}

static void overwrite_takes_the_oldest_of_any_timeline() {
  auto t = make(FullPolicy::kOverwrite);
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  // A track written first, then only the JS thread: the track's chunks are
  // the oldest and go first.
  const uint32_t track = t->track("io", false);
  for (int i = 0; i < 3 * int{kPerChunk}; ++i) {
    const uint64_t tok = t->async_begin(track, n, 10 * i);
    CHECK_EQ(t->async_end(tok, 10 * i + 1), Status::kOk);
  }
  record(*main, n, kChunksInLimit * kPerChunk);
  const RecordCounts tc = test_util::counts_of(*t, track);
  const RecordCounts mc = test_util::counts_of(*t, timeline_id(*main));
  check_sum(tc);
  check_sum(mc);
  CHECK_EQ(tc.produced, 3 * kPerChunk);
  CHECK(tc.overwritten >= 2 * kPerChunk);
  CHECK_EQ(mc.overwritten, uint64_t{0});
  CHECK_EQ(mc.dropped + tc.dropped, uint64_t{0});
}

static void pinned_chunks_are_not_recycled() {
  auto t = make(FullPolicy::kOverwrite);
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  const uint32_t id = timeline_id(*main);
  record(*main, n, kChunksInLimit * kPerChunk);
  {
    const FrozenSnapshot s = t->freeze();
    const auto* tl = test_util::find_timeline(s, id);
    const uint32_t kept = tl->records.size();
    const SpanRecord first = tl->records[0];
    // Every chunk is pinned: nothing can be recycled, the new records drop.
    record(*main, n, 2 * kPerChunk);
    const RecordCounts c = test_util::counts_of(*t, id);
    check_sum(c);
    CHECK_EQ(c.overwritten, uint64_t{0});
    CHECK(c.dropped >= kPerChunk);
    CHECK_EQ(tl->records.size(), kept);
    CHECK_EQ(tl->records[0].local_id, first.local_id);
    CHECK_EQ(tl->records[0].start_ns, first.start_ns);
  }
  // Unpinned: overwriting resumes.
  record(*main, n, 2 * kPerChunk);
  const RecordCounts c = test_util::counts_of(*t, id);
  check_sum(c);
  CHECK(c.overwritten >= kPerChunk);
}

static void attributes_are_charged_and_dropped_whole() {
  auto t = make(FullPolicy::kDrop);
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  const std::string blob = "{\"k\":\"" + std::string(4000, 'x') + "\"}";
  uint64_t produced = 0;
  for (int i = 0; i < 1000; ++i) {
    CHECK_EQ(begin_with_attrs(*main, n, 10 * i, blob), Status::kOk);
    CHECK_EQ(end(*main, 10 * i + 1), Status::kOk);
    ++produced;
  }
  const RecordCounts c = test_util::counts_of(*t, timeline_id(*main));
  check_sum(c);
  CHECK_EQ(c.produced, produced);
  CHECK(c.dropped > 0);
  CHECK(t->memory_used() <= t->memory_limit());
  // Every kept span kept its attributes.
  const FrozenSnapshot s = t->freeze();
  const auto* tl = test_util::find_timeline(s, timeline_id(*main));
  CHECK_EQ(tl->attrs.size(), size_t{tl->records.size()});
  CHECK_EQ(open_depth(*main), size_t{0});
}

static void overwrite_frees_attribute_memory() {
  auto t = make(FullPolicy::kOverwrite);
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  const std::string blob = "{\"k\":\"" + std::string(200, 'y') + "\"}";
  const uint64_t total = 20000;
  for (uint64_t i = 0; i < total; ++i) {
    CHECK_EQ(begin_with_attrs(*main, n, 10 * i, blob), Status::kOk);
    CHECK_EQ(end(*main, 10 * i + 1), Status::kOk);
  }
  const RecordCounts c = test_util::counts_of(*t, timeline_id(*main));
  check_sum(c);
  CHECK_EQ(c.produced, total);
  CHECK(c.overwritten > 0);
  CHECK(t->memory_used() <= t->memory_limit());
  const FrozenSnapshot s = t->freeze();
  const auto* tl = test_util::find_timeline(s, timeline_id(*main));
  CHECK_EQ(tl->attrs.size(), size_t{tl->records.size()});
  if (!tl->attrs.empty()) CHECK_EQ(tl->attrs[0].first, tl->records[0].local_id);
}

// Native threads (non-holders, committed by drains) write through the
// overwrite policy while a reader freezes and checks every record it sees
// and a holder drains. Every record read must be the one its index names
// (a recycled chunk under a reader would show another thread's or a later
// record, and ThreadSanitizer reports the write against the read).
static void budget_stress() {
  auto t = make(FullPolicy::kOverwrite);
  constexpr int kThreads = 3;
  constexpr uint64_t kSpans = 300000;
  std::vector<uint32_t> names;
  for (int i = 0; i < kThreads; ++i) names.push_back(t->intern("w" + std::to_string(i)));
  std::atomic<int> running{kThreads};
  std::vector<uint32_t> ids(kThreads);
  std::vector<std::thread> writers;
  for (int w = 0; w < kThreads; ++w) {
    writers.emplace_back([&, w] {
      auto st = t->native_thread();
      ids[w] = timeline_id(*st);
      for (uint64_t i = 0; i < kSpans; ++i) {
        const auto at = static_cast<int64_t>(10 * (i + 1));
        CHECK_EQ(begin(*st, names[w], at), Status::kOk);
        CHECK_EQ(end(*st, at + 3), Status::kOk);
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
  });
  uint64_t reads = 0;
  while (running.load() > 0 || reads == 0) {
    // The writers are done but this thread never read (a loaded machine):
    // the holder may have stopped before their last batches, and recycling
    // commits only what it takes, so commit the rest or nothing is ever kept.
    if (running.load() == 0) t->flush();
    const FrozenSnapshot s = t->freeze();
    for (const FrozenTimeline& tl : s.timelines) {
      check_sum(tl.counts);
      CHECK_EQ(uint64_t{tl.records.size()}, tl.counts.kept);
      // One writer per timeline, one name per writer; local ids rise (by
      // more than one across a dropped span) and the times encode them.
      const uint32_t name = tl.records.empty() ? 0 : tl.records[0].name;
      uint64_t prev = tl.counts.overwritten;
      for (uint32_t i = 0; i < tl.records.size(); ++i) {
        const SpanRecord r = tl.records[i];
        if (r.local_id <= prev || r.start_ns != int64_t{10} * r.local_id ||
            r.end_ns != r.start_ns + 3 || r.name != name) {
          check::fail(__FILE__, __LINE__,
                      check::fmt("timeline %u record %u: local %u after %llu", tl.id, i, r.local_id,
                                 static_cast<unsigned long long>(prev)));
          break;
        }
        prev = r.local_id;
        ++reads;
      }
    }
  }
  for (auto& th : writers) th.join();
  holder.join();
  t->flush();
  uint64_t overwritten = 0;
  for (int w = 0; w < kThreads; ++w) {
    const RecordCounts c = test_util::counts_of(*t, ids[w]);
    check_sum(c);
    CHECK_EQ(c.produced, kSpans);
    overwritten += c.overwritten;
  }
  CHECK(overwritten > 0);
  CHECK(reads > 0);
  CHECK(t->memory_used() <= t->memory_limit());
}

int main() {
  drop_keeps_the_oldest();
  overwrite_keeps_the_newest();
  overwrite_takes_the_oldest_of_any_timeline();
  pinned_chunks_are_not_recycled();
  attributes_are_charged_and_dropped_whole();
  overwrite_frees_attribute_memory();
  budget_stress();
  return check::result("budget_test");
}
