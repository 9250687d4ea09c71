// One thread's spans: nesting, ids, parents, depth, end without an open span,
// attributes, unknown names, the inline hot path.
#include <set>
#include <string>

#include "check.h"
#include "test_util.h"
#include "record/thread_state.h"
#include "record/tracer.h"

using namespace hotspan;
using test_util::find_local;
using test_util::find_timeline;

static void nesting_ids_parents_depth() {
  auto t = Tracer::create();
  const uint32_t outer = t->intern("outer"), mid = t->intern("mid"), leaf = t->intern("leaf");
  auto st = t->attach_js_thread("main");
  const uint32_t tid = timeline_id(*st);
  CHECK(tid >= 1);

  CHECK_EQ(begin(*st, outer, 100), Status::kOk);
  CHECK_EQ(begin(*st, mid, 110), Status::kOk);
  CHECK_EQ(open_depth(*st), size_t{2});
  CHECK_EQ(begin(*st, leaf, 120), Status::kOk);
  CHECK_EQ(end(*st, 130), Status::kOk);
  CHECK_EQ(begin(*st, leaf, 140), Status::kOk);
  CHECK_EQ(end(*st, 150, kFlagError), Status::kOk);
  CHECK_EQ(end(*st, 160), Status::kOk);
  CHECK_EQ(end(*st, 170), Status::kOk);
  CHECK_EQ(open_depth(*st), size_t{0});
  CHECK_EQ(begin(*st, outer, 200), Status::kOk);  // a second root
  CHECK_EQ(end(*st, 210), Status::kOk);

  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, tid);
  CHECK(tl != nullptr);
  if (tl == nullptr) return;
  CHECK_EQ(tl->name, std::string("main"));
  CHECK(tl->kind == TimelineKind::kJs);
  CHECK_EQ(tl->records.size(), size_t{5});  // holder: visible without flush
  // End order: leaf(3), leaf(4), mid(2), outer(1), outer(5).
  const uint32_t order[] = {3, 4, 2, 1, 5};
  for (size_t i = 0; i < 5 && i < tl->records.size(); ++i) CHECK_EQ(tl->records[i].local_id, order[i]);

  const auto r1 = find_local(*tl, 1);
  const auto r2 = find_local(*tl, 2);
  const auto r3 = find_local(*tl, 3);
  const auto r4 = find_local(*tl, 4);
  const auto r5 = find_local(*tl, 5);
  CHECK(r1 && r2 && r3 && r4 && r5);
  if (!(r1 && r2 && r3 && r4 && r5)) return;
  CHECK_EQ(r1->parent_local, 0u);
  CHECK_EQ(r1->depth, 0);
  CHECK_EQ(r1->name, outer);
  CHECK_EQ(r1->start_ns, 100);
  CHECK_EQ(r1->end_ns, 170);
  CHECK_EQ(r2->parent_local, 1u);
  CHECK_EQ(r2->depth, 1);
  CHECK_EQ(r3->parent_local, 2u);
  CHECK_EQ(r3->depth, 2);
  CHECK_EQ(r3->name, leaf);
  CHECK_EQ(r3->start_ns, 120);
  CHECK_EQ(r3->end_ns, 130);
  CHECK_EQ(r3->flags, 0);
  CHECK_EQ(r4->parent_local, 2u);
  CHECK_EQ(r4->flags, uint16_t{kFlagError});
  CHECK_EQ(r5->parent_local, 0u);
  CHECK_EQ(r5->depth, 0);
  CHECK_EQ(make_span_id(tid, 3), (static_cast<uint64_t>(tid) << 32) | 3u);
}

static void end_without_open_span() {
  auto t = Tracer::create();
  const uint32_t n = t->intern("n");
  auto st = t->attach_js_thread("main");
  CHECK_EQ(end(*st, 5), Status::kNoOpenSpan);
  CHECK_EQ(begin(*st, n, 10), Status::kOk);
  CHECK_EQ(end(*st, 20), Status::kOk);
  CHECK_EQ(end(*st, 30), Status::kNoOpenSpan);
  CHECK_EQ(open_depth(*st), size_t{0});
  const FrozenSnapshot s = t->freeze();
  CHECK_EQ(test_util::committed_on(s, timeline_id(*st)), size_t{1});
  // Nothing was lost and the next span is unaffected.
  CHECK_EQ(begin(*st, n, 40), Status::kOk);
  CHECK_EQ(end(*st, 50), Status::kOk);
  CHECK_EQ(test_util::committed_on(t->freeze(), timeline_id(*st)), size_t{2});
}

static void unknown_name_is_invalid() {
  auto t = Tracer::create();
  auto st = t->attach_js_thread("main");
  CHECK_EQ(begin(*st, 0, 1), Status::kInvalid);  // no names yet
  t->intern("a");
  CHECK_EQ(begin(*st, 1, 1), Status::kInvalid);
  CHECK_EQ(open_depth(*st), size_t{0});
  CHECK_EQ(begin(*st, 0, 1), Status::kOk);
  CHECK_EQ(end(*st, 2), Status::kOk);
}

static void attributes_side_table() {
  auto t = Tracer::create();
  const uint32_t n = t->intern("q");
  auto st = t->attach_js_thread("main");
  CHECK_EQ(begin_with_attrs(*st, n, 1, R"({"table":"users","rows":3})"), Status::kOk);
  CHECK_EQ(begin(*st, n, 2), Status::kOk);
  CHECK_EQ(begin_with_attrs(*st, n, 3, R"({"inner":true})"), Status::kOk);
  CHECK_EQ(begin_with_attrs(*st, n, 4, ""), Status::kOk);  // empty: no blob
  CHECK_EQ(end(*st, 5), Status::kOk);
  CHECK_EQ(end(*st, 6), Status::kOk);
  CHECK_EQ(end(*st, 7), Status::kOk);
  CHECK_EQ(end(*st, 8), Status::kOk);
  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, timeline_id(*st));
  CHECK(tl != nullptr);
  if (!tl) return;
  CHECK_EQ(tl->attrs.size(), size_t{2});
  const std::string* a1 = test_util::attrs_of(*tl, 1);
  const std::string* a3 = test_util::attrs_of(*tl, 3);
  CHECK(a1 && *a1 == R"({"table":"users","rows":3})");
  CHECK(a3 && *a3 == R"({"inner":true})");
  CHECK(test_util::attrs_of(*tl, 2) == nullptr);
  CHECK(test_util::attrs_of(*tl, 4) == nullptr);
  for (const auto& r : tl->records) {
    const bool has = (r.flags & kFlagAttrs) != 0;
    CHECK_EQ(has, r.local_id == 1 || r.local_id == 3);
  }
}

static void many_spans_cross_chunks() {
  // More than a few chunks and a deep stack (past the initial capacity).
  auto t = Tracer::create();
  const uint32_t n = t->intern("n");
  auto st = t->attach_js_thread("main");
  constexpr int kDepth = 100, kRounds = 50;
  int64_t now = 0;
  for (int round = 0; round < kRounds; ++round) {
    for (int d = 0; d < kDepth; ++d) CHECK_EQ(fast::begin(*st, n, ++now), Status::kOk);
    for (int d = 0; d < kDepth; ++d) CHECK_EQ(fast::end(*st, ++now), Status::kOk);
  }
  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, timeline_id(*st));
  CHECK(tl != nullptr);
  if (!tl) return;
  CHECK_EQ(tl->records.size(), size_t{kDepth * kRounds});
  std::set<uint32_t> locals;
  for (const auto& r : tl->records) {
    locals.insert(r.local_id);
    CHECK(r.start_ns < r.end_ns);
    if (r.depth == 0) {
      CHECK_EQ(r.parent_local, 0u);
    } else {
      CHECK_EQ(r.parent_local, r.local_id - 1);  // each begin nests in the previous
    }
  }
  CHECK_EQ(locals.size(), tl->records.size());
}

static void max_depth_is_refused() {
  auto t = Tracer::create();
  const uint32_t n = t->intern("n");
  auto st = t->attach_js_thread("main");
  size_t ok = 0;
  while (begin(*st, n, 1) == Status::kOk) ++ok;
  CHECK_EQ(ok, size_t{ThreadState::kMaxDepth} + 1);  // depths 0..65535
  CHECK_EQ(begin(*st, n, 1), Status::kInvalid);
  CHECK_EQ(end(*st, 2), Status::kOk);
  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, timeline_id(*st));
  CHECK(tl && tl->records.size() == 1 && tl->records[0].depth == ThreadState::kMaxDepth);
}

// A record keeps its end as a 32-bit duration; longer spans, and ends before
// their start (caller-chosen times), keep the end in a side table. Every end
// must come back exact, across chunk boundaries and in a second snapshot.
static int64_t long_test_duration(uint32_t i) {
  switch (i % 7) {
    case 0: return int64_t{0xFFFFFFFE};          // the largest that fits
    case 1: return int64_t{0xFFFFFFFF};          // the first that does not
    case 2: return (int64_t{1} << 40) + i;       // hours
    case 3: return -static_cast<int64_t>(i) - 1;  // ends before it starts
    default: return i;
  }
}

static void long_spans_keep_their_ends() {
  auto t = Tracer::create();
  const uint32_t n = t->intern("n");
  auto st = t->attach_js_thread("main");
  const uint32_t tid = timeline_id(*st);
  const uint32_t kSpans = 3 * 1024 + 5;
  auto record = [&](uint32_t from, uint32_t to) {
    for (uint32_t i = from; i < to; ++i) {
      const int64_t start = int64_t{1} << 33 | (int64_t{i} * 1000);
      CHECK_EQ(begin(*st, n, start), Status::kOk);
      CHECK_EQ(end(*st, start + long_test_duration(i)), Status::kOk);
    }
  };
  auto check_all = [&](uint32_t count) {
    const FrozenSnapshot s = t->freeze();
    const auto* tl = find_timeline(s, tid);
    CHECK(tl && tl->records.size() == count);
    if (!tl || tl->records.size() != count) return;
    for (uint32_t i = 0; i < count; ++i) {
      const SpanRecord& r = tl->records[i];
      const int64_t start = int64_t{1} << 33 | (int64_t{i} * 1000);
      CHECK_EQ(r.start_ns, start);
      CHECK_EQ(r.end_ns, start + long_test_duration(i));
      CHECK_EQ(r.local_id, i + 1);
    }
  };
  record(0, 1500);
  check_all(1500);
  record(1500, kSpans);
  check_all(kSpans);

  // The group track and an async track store through the same record.
  CHECK_EQ(t->group_begin(n, 10), Status::kOk);
  CHECK_EQ(t->group_end(10 + (int64_t{1} << 35)), Status::kOk);
  const uint32_t track = t->track("jobs", false);
  const uint64_t tok = t->async_begin(track, n, 20);
  CHECK_EQ(t->async_end(tok, 20 + (int64_t{1} << 36)), Status::kOk);
  t->flush();
  const FrozenSnapshot s = t->freeze();
  size_t seen = 0;
  for (const auto& tl : s.timelines) {
    if (tl.kind == TimelineKind::kGroups && tl.records.size() == 1) {
      CHECK_EQ(tl.records[0].end_ns, 10 + (int64_t{1} << 35));
      ++seen;
    }
    if (tl.id == track && tl.records.size() == 1) {
      CHECK_EQ(tl.records[0].end_ns, 20 + (int64_t{1} << 36));
      ++seen;
    }
  }
  CHECK_EQ(seen, size_t{2});
}

int main() {
  RUN_TEST(nesting_ids_parents_depth);
  RUN_TEST(end_without_open_span);
  RUN_TEST(unknown_name_is_invalid);
  RUN_TEST(attributes_side_table);
  RUN_TEST(many_spans_cross_chunks);
  RUN_TEST(max_depth_is_refused);
  RUN_TEST(long_spans_keep_their_ends);
  return check::result("spans_test");
}
