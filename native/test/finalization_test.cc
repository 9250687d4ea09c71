// Both finalization paths with a fake holder: the test's main thread is
// attached with attach_js_thread (a holder); std::threads use native_thread()
// (non-holders). Plus piggy-back drain, flush, wake, detach, exit.
#include <atomic>
#include <thread>

#include "check.h"
#include "record/pending_queue.h"
#include "test_util.h"
#include "thread_gate.h"
#include "record/tracer.h"

using namespace hotspan;
using test_util::committed_on;
using test_util::StepThread;

namespace {

// Records `count` flat spans on the calling thread's native state; returns its timeline.
uint32_t record_native(Tracer& t, uint32_t name, int count) {
  auto st = t.native_thread();
  CHECK(st != nullptr);
  if (!st) return 0;
  for (int i = 0; i < count; ++i) {
    CHECK_EQ(begin(*st, name, 2 * i), Status::kOk);
    CHECK_EQ(end(*st, 2 * i + 1), Status::kOk);
  }
  return timeline_id(*st);
}

void holder_tick(ThreadState& main, uint32_t name) {
  CHECK_EQ(begin(main, name, 0), Status::kOk);
  CHECK_EQ(end(main, 1), Status::kOk);
}

}  // namespace

static void holder_records_visible_at_once() {
  auto t = Tracer::create();
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  CHECK_EQ(t->attach_js_thread("again"), main);  // one state per (tracer, thread)
  for (int i = 0; i < 3; ++i) holder_tick(*main, n);
  CHECK_EQ(committed_on(t->freeze(), timeline_id(*main)), size_t{3});
  CHECK_EQ(t->pending(), size_t{0});
}

static void non_holder_invisible_until_drain() {
  auto t = Tracer::create();
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  constexpr int kSpans = int{PendingQueue::kBatch} + 44;  // one full batch plus a partial one
  static_assert(kSpans > int{PendingQueue::kBatch} && kSpans < 2 * int{PendingQueue::kBatch});
  // One push per chunk a native thread fills: the pending count below is a chunk's.
  static_assert(PendingQueue::kBatch == kChunkRecords);
  StepThread worker;
  uint32_t tl = 0;
  worker.run([&] { tl = record_native(*t, n, kSpans); });
  CHECK(tl != 0);
  const FrozenSnapshot s0 = t->freeze();
  CHECK_EQ(committed_on(s0, tl), size_t{0});
  CHECK_EQ(t->pending(), size_t{PendingQueue::kBatch});
  const auto* tl0 = test_util::find_timeline(s0, tl);
  CHECK(tl0 && tl0->kind == TimelineKind::kNative && !tl0->exited);
  CHECK(tl0 && tl0->name == "native 1");

  // The holder's next end() drains the queued batch (piggy-back)...
  holder_tick(*main, n);
  CHECK_EQ(committed_on(t->freeze(), tl), size_t{PendingQueue::kBatch});
  CHECK_EQ(t->pending(), size_t{0});
  // ...and flush() also sweeps the partial batch.
  t->flush();
  CHECK_EQ(committed_on(t->freeze(), tl), size_t{kSpans});

  // Thread exit publishes the rest and marks the timeline exited.
  worker.run([&] { record_native(*t, n, 10); });
  CHECK_EQ(committed_on(t->freeze(), tl), size_t{kSpans});
  worker.stop();
  CHECK_EQ(t->pending(), size_t{10});
  holder_tick(*main, n);
  const FrozenSnapshot s1 = t->freeze();
  CHECK_EQ(committed_on(s1, tl), size_t{kSpans + 10});
  const auto* tl1 = test_util::find_timeline(s1, tl);
  CHECK(tl1 && tl1->exited);
}

static void exiting_thread_abandons_open_spans() {
  auto t = Tracer::create();
  const uint32_t n = t->intern("n");
  uint32_t tl = 0;
  std::thread([&] {
    auto st = t->native_thread();
    tl = timeline_id(*st);
    CHECK_EQ(begin(*st, n, 1), Status::kOk);
    CHECK_EQ(begin(*st, n, 2), Status::kOk);
    CHECK_EQ(end(*st, 3), Status::kOk);
    CHECK_EQ(begin(*st, n, 4), Status::kOk);  // two left open at exit
  }).join();
  t->flush();
  const FrozenSnapshot s = t->freeze();
  const auto* r = test_util::find_timeline(s, tl);
  CHECK(r && r->records.size() == 3 && r->exited);
  if (!r || r->records.size() != 3) return;
  CHECK_EQ(r->records[0].flags, 0);
  CHECK_EQ(r->records[1].flags, uint16_t{kFlagAbandoned});
  CHECK_EQ(r->records[1].local_id, 3u);
  CHECK_EQ(r->records[2].flags, uint16_t{kFlagAbandoned});
  CHECK_EQ(r->records[2].local_id, 1u);
}

static void native_state_is_cached_per_tracer() {
  auto t1 = Tracer::create();
  auto t2 = Tracer::create();
  std::thread([&] {
    auto a = t1->native_thread();
    CHECK(a != nullptr);
    CHECK_EQ(t1->native_thread(), a);
    auto b = t2->native_thread();
    CHECK(b != nullptr && b != a);
    CHECK_EQ(t1->native_thread(), a);
    t1->set_thread_name(*a, "encoder#3");
  }).join();
  const FrozenSnapshot s = t1->freeze();
  CHECK_EQ(s.timelines.size(), size_t{1});
  if (!s.timelines.empty()) CHECK_EQ(s.timelines[0].name, std::string("native: encoder#3"));
}

static void publish_queues_a_partial_batch() {
  auto t = Tracer::create();
  const uint32_t n = t->intern("n");
  auto main = t->attach_js_thread("main");
  StepThread worker;
  uint32_t tl = 0;
  worker.run([&] {
    tl = record_native(*t, n, 10);
    CHECK_EQ(publish(*t->native_thread()), Status::kOk);
  });
  CHECK_EQ(t->pending(), size_t{10});
  holder_tick(*main, n);
  CHECK_EQ(committed_on(t->freeze(), tl), size_t{10});
  CHECK_EQ(publish(*main), Status::kOk);  // holder: nothing to do
}

static void holder_of_one_tracer_only() {
  auto a = Tracer::create();
  auto b = Tracer::create();
  const uint32_t na = a->intern("n");
  const uint32_t nb = b->intern("n");
  auto main_a = a->attach_js_thread("main");
  const uint32_t tr = b->track("t", false);
  // This thread holds a's env, not b's: b's record waits for a drain.
  CHECK_EQ(b->async_end(b->async_begin(tr, nb, 1), 2), Status::kOk);
  CHECK_EQ(committed_on(b->freeze(), tr), size_t{0});
  holder_tick(*main_a, na);  // drains a's queue only
  CHECK_EQ(committed_on(b->freeze(), tr), size_t{0});
  b->flush();
  CHECK_EQ(committed_on(b->freeze(), tr), size_t{1});
}

static void wake_fires_once_per_crossing() {
  TracerOptions opts;
  opts.wake_high_water = 2 * PendingQueue::kBatch;
  auto t = Tracer::create(opts);
  const uint32_t n = t->intern("n");
  std::atomic<int> wakes{0};
  t->set_wake([&] { wakes.fetch_add(1); });
  auto one_batch_thread = [&] {
    std::thread([&] { record_native(*t, n, PendingQueue::kBatch); }).join();
  };
  one_batch_thread();
  CHECK_EQ(wakes.load(), 0);  // one batch pending: below high water
  one_batch_thread();
  CHECK_EQ(wakes.load(), 1);  // two: crossed
  one_batch_thread();
  one_batch_thread();
  CHECK_EQ(wakes.load(), 1);  // coalesced until a drain
  CHECK_EQ(t->pending(), size_t{4 * PendingQueue::kBatch});
  t->flush();
  CHECK_EQ(t->pending(), size_t{0});
  one_batch_thread();
  CHECK_EQ(wakes.load(), 1);
  one_batch_thread();
  CHECK_EQ(wakes.load(), 2);  // re-armed by the drain
  t->close();
  std::thread([&] { CHECK(t->native_thread() == nullptr); }).join();
  CHECK_EQ(wakes.load(), 2);
}

// A worker's JS thread with two spans open (started at 1 and 2), about to
// be detached as its env is torn down.
struct TwoOpen {
  std::shared_ptr<Tracer> t;
  std::shared_ptr<ThreadState> main;
  uint32_t tl;
  uint32_t n;
};

static TwoOpen two_open_spans(const char* thread_name) {
  TwoOpen o{Tracer::create(), nullptr, 0, 0};
  o.n = o.t->intern("n");
  o.main = o.t->attach_js_thread(thread_name);
  o.tl = timeline_id(*o.main);
  CHECK_EQ(begin(*o.main, o.n, 1), Status::kOk);
  CHECK_EQ(begin(*o.main, o.n, 2), Status::kOk);
  return o;
}

static void detach_abandons_and_retires() {
  auto [t, main, tl, n] = two_open_spans("worker 2");
  CHECK_EQ(begin(*main, n, 3), Status::kOk);
  CHECK_EQ(end(*main, 4), Status::kOk);
  t->detach_thread(*main, 10);
  const FrozenSnapshot s = t->freeze();
  const auto* r = test_util::find_timeline(s, tl);
  CHECK(r && r->records.size() == 3 && r->exited);
  if (r && r->records.size() == 3) {
    CHECK_EQ(r->records[1].flags, uint16_t{kFlagAbandoned});
    CHECK_EQ(r->records[1].end_ns, 10);
    CHECK_EQ(r->records[2].local_id, 1u);
  }
  CHECK_EQ(begin(*main, n, 11), Status::kInvalid);
  CHECK_EQ(end(*main, 12), Status::kInvalid);
  // No longer a holder: a track record now waits for a drain.
  const uint32_t tr = t->track("t", false);
  CHECK_EQ(t->async_end(t->async_begin(tr, n, 1), 2), Status::kOk);
  CHECK_EQ(committed_on(t->freeze(), tr), size_t{0});
  // Attaching again gives a fresh timeline.
  auto again = t->attach_js_thread("worker 2");
  CHECK(again != main && timeline_id(*again) != tl);
}

// Spans still open at detach (worker teardown) are often long: an end past
// a record's 32-bit duration goes through the side table on the abandon
// path too.
static void detach_keeps_long_abandoned_ends() {
  auto [t, main, tl, n] = two_open_spans("worker 3");
  const int64_t at = int64_t{1} << 33;
  t->detach_thread(*main, at);
  const FrozenSnapshot s = t->freeze();
  const auto* r = test_util::find_timeline(s, tl);
  CHECK(r && r->records.size() == 2);
  if (!r || r->records.size() != 2) return;
  for (const SpanRecord& rec : r->records) {
    CHECK_EQ(rec.end_ns, at);
    CHECK_EQ(rec.flags, uint16_t{kFlagAbandoned});
  }
  CHECK_EQ(r->records[0].start_ns, 2);
  CHECK_EQ(r->records[1].start_ns, 1);
}

int main() {
  RUN_TEST(holder_records_visible_at_once);
  RUN_TEST(non_holder_invisible_until_drain);
  RUN_TEST(exiting_thread_abandons_open_spans);
  RUN_TEST(native_state_is_cached_per_tracer);
  RUN_TEST(publish_queues_a_partial_batch);
  RUN_TEST(holder_of_one_tracer_only);
  RUN_TEST(wake_fires_once_per_crossing);
  RUN_TEST(detach_abandons_and_retires);
  RUN_TEST(detach_keeps_long_abandoned_ends);
  return check::result("finalization_test");
}
