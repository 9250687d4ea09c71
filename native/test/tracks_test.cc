// Async tracks: tokens, the serial rule, concurrent overlap, parents on other
// timelines, attributes, open spans, holder vs non-holder finalization.
#include <algorithm>
#include <thread>

#include "check.h"
#include "test_util.h"
#include "tracer.h"

using namespace hotspan;
using test_util::find_local;
using test_util::find_timeline;

static void serial_rule() {
  auto t = Tracer::create();
  const uint32_t op = t->intern("op");
  auto main = t->attach_js_thread("main");
  const uint32_t gpu = t->track("gpu0", true);
  CHECK(gpu != 0);
  CHECK_EQ(t->track("gpu0", true), gpu);  // idempotent by name

  // tunix's device-span test: previous span ends at 5, the next one is
  // requested at 4, so it starts at 5.
  const uint64_t a = t->async_begin(gpu, op, 1);
  const uint64_t b = t->async_begin(gpu, op, 4);
  CHECK(a != 0 && b != 0 && a != b);
  CHECK_EQ(static_cast<uint32_t>(a >> 32), gpu);
  CHECK_EQ(t->open_async(), size_t{2});
  CHECK_EQ(t->async_end(a, 5), Status::kOk);
  CHECK_EQ(t->async_end(b, 9), Status::kOk);
  // Requested after the previous end: keeps its own start.
  const uint64_t c = t->async_begin(gpu, op, 12);
  CHECK_EQ(t->async_end(c, 15), Status::kOk);
  CHECK_EQ(t->open_async(), size_t{0});

  const FrozenSnapshot s = t->freeze();  // main is a holder: committed at once
  const auto* tl = find_timeline(s, gpu);
  CHECK(tl != nullptr);
  if (!tl) return;
  CHECK(tl->kind == TimelineKind::kTrack);
  CHECK(tl->serial);
  CHECK_EQ(tl->name, std::string("track: gpu0"));
  CHECK_EQ(tl->records.size(), size_t{3});
  const auto ra = find_local(*tl, static_cast<uint32_t>(a));
  const auto rb = find_local(*tl, static_cast<uint32_t>(b));
  const auto rc = find_local(*tl, static_cast<uint32_t>(c));
  CHECK(ra && rb && rc);
  if (!(ra && rb && rc)) return;
  CHECK_EQ(ra->start_ns, 1);
  CHECK_EQ(ra->end_ns, 5);
  CHECK_EQ(rb->start_ns, 5);
  CHECK_EQ(rb->end_ns, 9);
  CHECK_EQ(rc->start_ns, 12);
  CHECK((rb->flags & kFlagAsync) != 0);
  CHECK_EQ(rb->depth, 0);
  (void)main;
}

static void serial_rule_either_call_order() {
  // The earlier span's end arrives after the later span began: same result.
  auto t = Tracer::create();
  const uint32_t op = t->intern("op");
  auto main = t->attach_js_thread("main");
  const uint32_t q = t->track("queue", true);
  const uint64_t a = t->async_begin(q, op, 1);
  CHECK_EQ(t->async_end(a, 5), Status::kOk);
  const uint64_t b = t->async_begin(q, op, 4);
  CHECK_EQ(t->async_end(b, 7), Status::kOk);
  // An end earlier than the previous end becomes zero-length there.
  const uint64_t c = t->async_begin(q, op, 2);
  CHECK_EQ(t->async_end(c, 6), Status::kOk);
  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, q);
  CHECK(tl && tl->records.size() == 3);
  if (!tl || tl->records.size() != 3) return;
  CHECK_EQ(tl->records[1].start_ns, 5);
  CHECK_EQ(tl->records[1].end_ns, 7);
  CHECK_EQ(tl->records[2].start_ns, 7);
  CHECK_EQ(tl->records[2].end_ns, 7);
  (void)main;
}

static void concurrent_overlap_kept() {
  auto t = Tracer::create();
  const uint32_t op = t->intern("fetch");
  auto main = t->attach_js_thread("main");
  const uint32_t net = t->track("net", false);
  CHECK(net != 0);
  const uint64_t a = t->async_begin(net, op, 1);
  const uint64_t b = t->async_begin(net, op, 4);
  CHECK_EQ(t->async_end(a, 5), Status::kOk);
  CHECK_EQ(t->async_end(b, 9), Status::kOk);
  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, net);
  CHECK(tl != nullptr);
  if (!tl) return;
  CHECK(!tl->serial);
  const auto rb = find_local(*tl, static_cast<uint32_t>(b));
  CHECK(rb && rb->start_ns == 4 && rb->end_ns == 9);  // overlaps a: kept
  (void)main;
}

static void tokens_and_errors() {
  auto t = Tracer::create();
  const uint32_t op = t->intern("op");
  auto main = t->attach_js_thread("main");
  const uint32_t tr = t->track("t", false);
  CHECK_EQ(t->async_begin(9999, op, 1), uint64_t{0});   // unknown track
  CHECK_EQ(t->async_begin(tr, op + 1, 1), uint64_t{0});  // unknown name
  // A thread timeline is not a track.
  CHECK_EQ(t->async_begin(timeline_id(*main), op, 1), uint64_t{0});
  const uint64_t a = t->async_begin(tr, op, 1, R"({"url":"/x"})");
  auto open = t->open_async_spans();
  CHECK_EQ(open.size(), size_t{1});
  if (!open.empty()) {
    CHECK_EQ(open[0].first, a);
    CHECK_EQ(open[0].second, op);
  }
  CHECK_EQ(t->async_end(a + 1, 2), Status::kInvalid);  // never begun
  CHECK_EQ(t->async_end(0, 2), Status::kInvalid);
  CHECK_EQ(t->async_end(a, 3, kFlagError), Status::kOk);
  CHECK_EQ(t->async_end(a, 4), Status::kInvalid);  // ended twice
  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, tr);
  CHECK(tl && tl->records.size() == 1);
  if (tl && tl->records.size() == 1) {
    CHECK_EQ(tl->records[0].flags, uint16_t{kFlagAsync | kFlagError | kFlagAttrs});
    const std::string* at = test_util::attrs_of(*tl, static_cast<uint32_t>(a));
    CHECK(at && *at == R"({"url":"/x"})");
  }
}

static void parent_on_another_timeline() {
  auto t = Tracer::create();
  const uint32_t op = t->intern("op");
  auto main = t->attach_js_thread("main");
  const uint32_t tr = t->track("t", false);
  CHECK_EQ(begin(*main, op, 1), Status::kOk);
  const uint64_t parent = make_span_id(timeline_id(*main), 1);
  const uint64_t a = t->async_begin(tr, op, 2, {}, parent);
  const uint64_t b = t->async_begin(tr, op, 3, {}, a);  // parent on the same track
  CHECK_EQ(end(*main, 4), Status::kOk);
  CHECK_EQ(t->async_end(b, 5), Status::kOk);
  CHECK_EQ(t->async_end(a, 6), Status::kOk);
  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, tr);
  CHECK(tl != nullptr);
  if (!tl) return;
  const auto ra = find_local(*tl, static_cast<uint32_t>(a));
  const auto rb = find_local(*tl, static_cast<uint32_t>(b));
  CHECK(ra && rb);
  if (!(ra && rb)) return;
  CHECK((ra->flags & kFlagParentElsewhere) != 0);
  CHECK_EQ(ra->parent_local, 1u);
  CHECK_EQ(tl->foreign_parents.size(), size_t{1});
  if (!tl->foreign_parents.empty()) {
    CHECK_EQ(tl->foreign_parents[0].first, static_cast<uint32_t>(a));
    CHECK_EQ(tl->foreign_parents[0].second, parent);
  }
  CHECK_EQ(rb->flags & kFlagParentElsewhere, 0);
  CHECK_EQ(rb->parent_local, static_cast<uint32_t>(a));
}

static void ended_off_holder_waits_for_drain() {
  auto t = Tracer::create();
  const uint32_t op = t->intern("op");
  auto main = t->attach_js_thread("main");
  const uint32_t tr = t->track("io", false);
  const uint64_t a = t->async_begin(tr, op, 1);  // begun on the holder
  std::thread([&] { CHECK_EQ(t->async_end(a, 2), Status::kOk); }).join();  // ended off it
  CHECK_EQ(test_util::committed_on(t->freeze(), tr), size_t{0});
  CHECK_EQ(t->pending(), size_t{1});
  // The holder's next end() drains the queue (piggy-back).
  CHECK_EQ(begin(*main, op, 3), Status::kOk);
  CHECK_EQ(end(*main, 4), Status::kOk);
  CHECK_EQ(test_util::committed_on(t->freeze(), tr), size_t{1});
  CHECK_EQ(t->pending(), size_t{0});

  // Ended on the holder thread: visible at once.
  const uint64_t b = t->async_begin(tr, op, 5);
  CHECK_EQ(t->async_end(b, 6), Status::kOk);
  CHECK_EQ(test_util::committed_on(t->freeze(), tr), size_t{2});

  // Begun and ended off the holder; flush() finalizes it.
  std::thread([&] {
    const uint64_t c = t->async_begin(tr, op, 7);
    CHECK_EQ(t->async_end(c, 8), Status::kOk);
  }).join();
  CHECK_EQ(test_util::committed_on(t->freeze(), tr), size_t{2});
  t->flush();
  CHECK_EQ(test_util::committed_on(t->freeze(), tr), size_t{3});
}

static void tracks_across_threads() {
  auto t = Tracer::create();
  const uint32_t op = t->intern("op");
  const uint32_t tr = t->track("shared", true);
  constexpr int kThreads = 4, kEach = 500;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < kEach; ++k) {
        const int64_t now = i * 100000 + k * 10;
        const uint64_t tok = t->async_begin(tr, op, now);
        CHECK(tok != 0);
        CHECK_EQ(t->async_end(tok, now + 5), Status::kOk);
      }
    });
  }
  for (auto& th : threads) th.join();
  t->flush();
  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, tr);
  CHECK(tl && tl->records.size() == size_t{kThreads * kEach});
  if (!tl) return;
  // Serial: in record order, every span starts at or after the previous end.
  for (size_t i = 1; i < tl->records.size(); ++i) {
    CHECK(tl->records[i].start_ns >= tl->records[i - 1].end_ns);
    CHECK(tl->records[i].start_ns <= tl->records[i].end_ns);
  }
}

int main() {
  RUN_TEST(serial_rule);
  RUN_TEST(serial_rule_either_call_order);
  RUN_TEST(concurrent_overlap_kept);
  RUN_TEST(tokens_and_errors);
  RUN_TEST(parent_on_another_timeline);
  RUN_TEST(ended_off_holder_waits_for_drain);
  RUN_TEST(tracks_across_threads);
  return check::result("tracks_test");
}
