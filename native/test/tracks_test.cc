// Async tracks: tokens, the serial rule, concurrent overlap, parents on other
// timelines, attributes, open spans, holder vs non-holder finalization.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "record/async_fast.h"
#include "check.h"
#include "test_util.h"
#include "record/tracer.h"

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

// A track made as_named is the timeline `name` itself (hotspan/auto's), and
// its own track: the same name as a user's track does not reach it.
static void named_track_apart_from_user_track() {
  auto t = Tracer::create();
  auto main = t->attach_js_thread("main");
  const uint32_t user = t->track("http server", false);
  const uint32_t named = t->track("http server", false, true);
  CHECK(user != 0 && named != 0 && user != named);
  CHECK_EQ(t->track("http server", false, true), named);  // idempotent by name
  CHECK_EQ(t->track("http server", true, true), uint32_t{0});  // the other kind
  const FrozenSnapshot s = t->freeze();
  const auto* u = find_timeline(s, user);
  const auto* n = find_timeline(s, named);
  CHECK(u != nullptr && n != nullptr);
  if (!u || !n) return;
  CHECK_EQ(u->name, std::string("track: http server"));
  CHECK_EQ(n->name, std::string("http server"));
  CHECK(n->kind == TimelineKind::kTrack);
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

// A tracer with a JS thread and an "http" track, and that thread's caller
// cache (a binding's), for the fast-call cases below.
struct FastFixture {
  std::shared_ptr<Tracer> t = Tracer::create();
  uint32_t op = t->intern("op");
  std::shared_ptr<ThreadState> main = t->attach_js_thread("main");
  uint32_t tr = t->track("http", false);
  AsyncCaller c{0, nullptr, main.get()};
};

// The binding's inline async calls (async_fast.h) record what the Tracer
// calls record, and leave every case they do not take to them untouched.
static void fast_calls_match_tracer_calls() {
  FastFixture fx;
  auto& [t, op, main, tr, c] = fx;
  // No track cached yet: declined; the Tracer call fills the cache.
  CHECK_EQ(fast::async_begin(c, tr, op, 1), uint64_t{0});
  const uint64_t a = t->async_begin(tr, op, 1, {}, 0, &c);
  CHECK(a != 0);
  // A name interned after the state last read the count is known to the fast call.
  const uint32_t late = t->intern("late");
  const uint64_t b = fast::async_begin(c, tr, late, 2);
  CHECK(b != 0 && b != a);
  CHECK_EQ(static_cast<uint32_t>(b >> 32), tr);
  CHECK_EQ(fast::async_begin(c, tr, late + 1, 3), uint64_t{0});  // unknown name
  CHECK_EQ(t->open_async(), size_t{2});
  // The track has no chunk yet: declined (the Tracer call takes one).
  CHECK(!fast::async_end(c, a, 9, 0));
  CHECK_EQ(t->async_end(a, 9, 0, &c), Status::kOk);
  CHECK(fast::async_end(c, b, 7, kFlagError));
  CHECK(!fast::async_end(c, b, 8, 0));  // ended already
  CHECK(!fast::async_end(c, b + 1, 8, 0));  // never begun
  CHECK(!fast::async_end(c, 0, 8, 0));
  const uint64_t e = fast::async_begin(c, tr, op, 20);
  CHECK(e != 0 && fast::async_end(c, e, 21, 0));
  // The timeline has no attribute block yet: declined (the Tracer call adds one).
  const uint64_t first = fast::async_begin(c, tr, op, 22, R"({"method":"PUT"})");
  CHECK(first != 0 && !fast::async_end(c, first, 23, 0));
  CHECK_EQ(t->async_end(first, 23, 0, &c), Status::kOk);
  const uint64_t f = fast::async_begin(c, tr, op, 24, R"({"method":"GET"})");
  CHECK(f != 0 && fast::async_end(c, f, 25, 0));
  CHECK_EQ(t->open_async(), size_t{0});
  const FrozenSnapshot s = t->freeze();  // main is a holder: committed at once
  const auto* tl = find_timeline(s, tr);
  CHECK(tl && tl->records.size() == 5);
  if (!tl) return;
  const auto re = find_local(*tl, static_cast<uint32_t>(e));
  CHECK(re && re->start_ns == 20 && re->end_ns == 21 && re->flags == kFlagAsync);
  const auto rf = find_local(*tl, static_cast<uint32_t>(f));
  CHECK(rf && rf->start_ns == 24 && rf->end_ns == 25 && rf->flags == (kFlagAsync | kFlagAttrs));
  const std::string* fa = test_util::attrs_of(*tl, static_cast<uint32_t>(f));
  CHECK(fa && *fa == R"({"method":"GET"})");
  CHECK(test_util::attrs_of(*tl, static_cast<uint32_t>(e)) == nullptr);
  const auto ra = find_local(*tl, static_cast<uint32_t>(a));
  const auto rb = find_local(*tl, static_cast<uint32_t>(b));
  CHECK(ra && rb);
  if (!(ra && rb)) return;
  CHECK_EQ(ra->start_ns, 1);
  CHECK_EQ(ra->end_ns, 9);
  CHECK_EQ(ra->flags, uint16_t{kFlagAsync});
  CHECK_EQ(rb->start_ns, 2);
  CHECK_EQ(rb->end_ns, 7);
  CHECK_EQ(rb->name, late);
  CHECK_EQ(rb->flags, uint16_t{kFlagAsync | kFlagError});
  CHECK_EQ(rb->parent_local, 0u);
  CHECK_EQ(rb->depth, 0);

  // Closed: the state is not live, nothing is begun or ended.
  const uint64_t d = fast::async_begin(c, tr, op, 30);
  CHECK(d != 0);
  t->close();
  CHECK_EQ(fast::async_begin(c, tr, op, 31), uint64_t{0});
  CHECK(!fast::async_end(c, d, 32, 0));
}

static void fast_end_declines_what_it_does_not_store() {
  FastFixture fx;
  auto& [t, op, main, tr, c] = fx;
  const uint32_t gpu = t->track("gpu", true);
  // Each stays open after the declined end, and the Tracer call ends it.
  const uint64_t with_attrs = t->async_begin(tr, op, 1, R"({"url":"/x"})", 0, &c);
  const uint64_t child = t->async_begin(tr, op, 2, {}, with_attrs, &c);
  CHECK(!fast::async_end(c, with_attrs, 3, 0));  // no chunk yet
  CHECK(!fast::async_end(c, child, 3, 0));
  CHECK_EQ(t->open_async(), size_t{2});
  CHECK_EQ(t->async_end(child, 4, 0, &c), Status::kOk);
  CHECK(!fast::async_end(c, child, 4, 0));  // the Tracer call ended it
  CHECK(!fast::async_end(c, with_attrs, 5, 0));  // no attribute block yet
  CHECK_EQ(t->async_end(with_attrs, 5, 0, &c), Status::kOk);
  // Now the chunk and the block have room: an attribute span begun by the Tracer call ends inline.
  const uint64_t later = t->async_begin(tr, op, 6, R"({"url":"/y"})", 0, &c);
  CHECK(fast::async_end(c, later, 7, 0));
  // Serial: the rule is end()'s. The cache now holds gpu.
  const uint64_t g1 = t->async_begin(gpu, op, 6, {}, 0, &c);
  const uint64_t g2 = fast::async_begin(c, gpu, op, 7);
  CHECK(g1 != 0 && g2 != 0);
  CHECK(!fast::async_end(c, g1, 9, 0));
  CHECK_EQ(t->async_end(g1, 9, 0, &c), Status::kOk);
  CHECK_EQ(t->async_end(g2, 8, 0, &c), Status::kOk);  // ends (8) before the previous end (9): zero-length at 9
  // A token of another track than the cached one.
  const uint64_t other = t->async_begin(tr, op, 10);
  CHECK(!fast::async_end(c, other, 11, 0));
  CHECK_EQ(t->async_end(other, 11), Status::kOk);
  CHECK_EQ(t->open_async(), size_t{0});
  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, tr);
  const auto* gl = find_timeline(s, gpu);
  CHECK(tl && tl->records.size() == 4);
  CHECK(gl && gl->records.size() == 2);
  if (!(tl && gl)) return;
  const auto rc = find_local(*tl, static_cast<uint32_t>(child));
  CHECK(rc && rc->parent_local == static_cast<uint32_t>(with_attrs));
  const std::string* at = test_util::attrs_of(*tl, static_cast<uint32_t>(with_attrs));
  CHECK(at && *at == R"({"url":"/x"})");
  const std::string* lt = test_util::attrs_of(*tl, static_cast<uint32_t>(later));
  CHECK(lt && *lt == R"({"url":"/y"})");
  const auto r2 = find_local(*gl, static_cast<uint32_t>(g2));
  CHECK(r2 && r2->start_ns == 9 && r2->end_ns == 9);
}

// Many spans open at once (the ring's slots taken: begins fall back and grow
// it) and more records than a chunk holds (ends fall back for a new chunk):
// every span recorded exactly once, whichever call took it.
static void fast_calls_with_fallbacks_count_exactly() {
  FastFixture fx;
  auto& [t, op, main, tr, c] = fx;
  constexpr int kOpen = 700, kRounds = 40;
  size_t fast_begins = 0, fast_ends = 0;
  std::vector<uint64_t> open(kOpen);
  // Every other span carries attributes, enough of them to fill several of
  // the timeline's attribute blocks (an end whose entry does not fit falls back).
  std::unordered_map<uint32_t, std::string> given;
  int64_t now = 1;
  for (int r = 0; r < kRounds; ++r) {
    for (size_t k = 0; k < open.size(); ++k) {
      uint64_t& tok = open[k];
      const std::string attrs =
          k % 2 == 0 ? std::string() : R"({"url":"/orders/)" + std::to_string(now) + R"(","pad":")" + std::string(k % 97, 'x') + R"("})";
      tok = fast::async_begin(c, tr, op, now, attrs);
      if (tok != 0) ++fast_begins;
      else tok = t->async_begin(tr, op, now, attrs, 0, &c);
      if (!attrs.empty()) given[static_cast<uint32_t>(tok)] = attrs;
      CHECK(tok != 0);
      ++now;
    }
    for (const uint64_t tok : open) {
      if (fast::async_end(c, tok, now, 0)) ++fast_ends;
      else CHECK_EQ(t->async_end(tok, now, 0, &c), Status::kOk);
      ++now;
    }
  }
  CHECK_EQ(t->open_async(), size_t{0});
  // Both paths were taken (the check would pass trivially otherwise).
  CHECK(fast_begins > 0 && fast_begins < size_t{kOpen * kRounds});
  CHECK(fast_ends > 0 && fast_ends < size_t{kOpen * kRounds});
  const FrozenSnapshot s = t->freeze();
  const auto* tl = find_timeline(s, tr);
  CHECK(tl && tl->records.size() == size_t{kOpen * kRounds});
  if (!tl) return;
  std::vector<uint32_t> locals;
  for (const SpanRecord rec : tl->records) {
    CHECK(rec.start_ns < rec.end_ns);
    CHECK_EQ((rec.flags & kFlagAttrs) != 0, given.count(rec.local_id) == 1);
    locals.push_back(rec.local_id);
  }
  std::sort(locals.begin(), locals.end());
  CHECK(std::adjacent_find(locals.begin(), locals.end()) == locals.end());
  // Each span's attributes, exactly, once.
  CHECK_EQ(tl->attrs.size(), given.size());
  for (const auto& [local, text] : tl->attrs) {
    const auto it = given.find(local);
    CHECK(it != given.end() && it->second == text);
  }
}

// Two JS-like threads, each with its own caller cache, on one track: the
// track's lock covers the inline calls (TSan in the native suite).
static void fast_calls_across_threads() {
  auto t = Tracer::create();
  const uint32_t op = t->intern("op");
  const uint32_t tr = t->track("shared", false);
  constexpr int kThreads = 2, kEach = 3000;
  std::vector<std::thread> threads;
  std::atomic<size_t> fast_n{0};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto state = t->attach_js_thread("js");
      AsyncCaller c;
      c.state = state.get();
      for (int k = 0; k < kEach; ++k) {
        const int64_t now = i * 100000 + k * 10;
        uint64_t tok = fast::async_begin(c, tr, op, now);
        if (tok == 0) tok = t->async_begin(tr, op, now, {}, 0, &c);
        CHECK(tok != 0);
        if (fast::async_end(c, tok, now + 5, 0)) fast_n.fetch_add(1, std::memory_order_relaxed);
        else CHECK_EQ(t->async_end(tok, now + 5, 0, &c), Status::kOk);
      }
      t->detach_thread(*state, i * 100000 + kEach * 10);
    });
  }
  for (auto& th : threads) th.join();
  t->flush();
  CHECK(fast_n.load() > 0);
  const FrozenSnapshot s = t->freeze();
  CHECK_EQ(test_util::committed_on(s, tr), size_t{kThreads * kEach});
}

int main() {
  RUN_TEST(serial_rule);
  RUN_TEST(named_track_apart_from_user_track);
  RUN_TEST(serial_rule_either_call_order);
  RUN_TEST(concurrent_overlap_kept);
  RUN_TEST(tokens_and_errors);
  RUN_TEST(parent_on_another_timeline);
  RUN_TEST(ended_off_holder_waits_for_drain);
  RUN_TEST(tracks_across_threads);
  RUN_TEST(fast_calls_match_tracer_calls);
  RUN_TEST(fast_end_declines_what_it_does_not_store);
  RUN_TEST(fast_calls_with_fallbacks_count_exactly);
  RUN_TEST(fast_calls_across_threads);
  return check::result("tracks_test");
}
