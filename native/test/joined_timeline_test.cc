// A joined thread's timeline id (record/registry.h): the tracer's own
// timelines are numbered from 1, below kFirstJoinedTimeline; a joined
// thread's takes the explicit tracer-wide id it was given, in the instance
// that records its spans and in the one that imports them, so both derive
// the same span ids. Ids outside the range, or taken, are refused.
#include "check.h"
#include "record/imported_thread.h"
#include "record/registry.h"
#include "record/span_ids.h"
#include "record/thread_state.h"
#include "record/trace_id.h"
#include "record/tracer.h"
#include "test_util.h"

using namespace hotspan;
using test_util::find_timeline;
using test_util::salted;

static void own_ids_stay_below_the_joined_range() {
  auto t = salted(7);
  auto main = t->attach_js_thread("main");
  CHECK_EQ(timeline_id(*main), 1u);
  auto joined = t->import_thread("worker 1", kFirstJoinedTimeline + 3);
  CHECK(joined != nullptr);
  if (joined == nullptr) return;
  CHECK_EQ(joined->timeline_id(), kFirstJoinedTimeline + 3);
  // The tracer's next own timeline is numbered after its own, not after the joined one.
  const uint32_t track = t->track("io", false);
  CHECK_EQ(track, 2u);
  CHECK_EQ(t->track("io", false), track);  // found again by name
}

static void refused_ids() {
  auto t = salted(7);
  t->attach_js_thread("main");
  CHECK(t->import_thread("low", 5) == nullptr);
  CHECK(t->import_thread("low", kFirstJoinedTimeline - 1) == nullptr);
  CHECK(t->import_thread("high", kTimelineIdLimit) == nullptr);  // its span ids would not be exact in JS
  CHECK(t->import_thread("first", kFirstJoinedTimeline) != nullptr);
  CHECK(t->import_thread("again", kFirstJoinedTimeline) == nullptr);  // taken
  t->close();
  CHECK(t->import_thread("late", kFirstJoinedTimeline + 1) == nullptr);
}

static void both_instances_derive_the_same_ids() {
  const uint64_t salt = 0x5eed5eed12345678ull;
  const uint32_t id = kFirstJoinedTimeline + 1;
  // The worker's own instance: its thread numbered with the tracer-wide id.
  auto worker = salted(salt);
  const uint32_t n = worker->intern("work");
  auto st = worker->attach_js_thread("worker", id);
  CHECK(st != nullptr);
  if (st == nullptr) return;
  CHECK_EQ(timeline_id(*st), id);
  CHECK_EQ(begin(*st, n, 10), Status::kOk);
  CHECK_EQ(end(*st, 20), Status::kOk);
  worker->flush();
  const FrozenSnapshot ws = worker->freeze();
  const auto* wtl = find_timeline(ws, id);
  CHECK(wtl != nullptr && wtl->records.size() == 1);
  if (wtl == nullptr || wtl->records.size() != 1) return;
  std::vector<std::vector<SpanIds>> wids;
  resolve_span_ids(ws, salt, wids);

  // The owner imports the span under the same id: the same wire span id.
  auto owner = salted(salt);
  owner->attach_js_thread("main");
  auto imported = owner->import_thread("worker", id);
  CHECK(imported != nullptr);
  if (imported == nullptr) return;
  CHECK(imported->add_name(0, "work"));
  ImportedSpan span;
  span.start_ns = 10;
  span.end_ns = 20;
  span.local = wtl->records[0].local_id;
  span.depth = 0;
  span.name = 0;
  CHECK_EQ(imported->add(span, "", nullptr, 0), Status::kOk);
  owner->flush();
  const FrozenSnapshot os = owner->freeze();
  std::vector<std::vector<SpanIds>> oids;
  resolve_span_ids(os, salt, oids);
  bool found = false;
  for (size_t k = 0; k < os.timelines.size(); ++k) {
    if (os.timelines[k].id != id) continue;
    CHECK_EQ(os.timelines[k].records.size(), 1u);
    if (os.timelines[k].records.size() != 1) continue;
    found = true;
    const size_t w = static_cast<size_t>(wtl - ws.timelines.data());
    CHECK_EQ(oids[k][0].span, wids[w][0].span);
    CHECK_EQ(oids[k][0].span, trace_id::wire_span_id(salt, make_span_id(id, span.local)));
  }
  CHECK(found);
}

int main() {
  RUN_TEST(own_ids_stay_below_the_joined_range);
  RUN_TEST(refused_ids);
  RUN_TEST(both_instances_derive_the_same_ids);
  return check::result("joined_timeline_test");
}
