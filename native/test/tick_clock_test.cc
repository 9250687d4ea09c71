// Record times as raw ticks (TimeUnit::kTicks), converted to CLOCK_MONOTONIC
// ns when read: accuracy against clock_gettime readings taken around each
// call, determinism across snapshots (a record converts to the same ns in
// every later snapshot), and the anchors under concurrent writers and readers
// (TSan build). Without an invariant TSC (or with HOTSPAN_CLOCK=monotonic)
// the same checks run against the identity conversion.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "record/c_api.h"
#include "check.h"
#include "record/clock.h"
#include "hotspan.h"
#include "test_util.h"
#include "record/tracer.h"
#include "write/chrome_json_writer.h"

namespace {

using hotspan::FrozenSnapshot;
using hotspan::FrozenTimeline;
using hotspan::SpanRecord;
using hotspan::Status;
using hotspan::TimeUnit;
using hotspan::Tracer;
namespace clock = hotspan::clock;

// Conversion error allowed outside the [before, after] clock_gettime bracket.
#if defined(__SANITIZE_THREAD__)
// Instrumented clock reads make every anchor bracket several times wider.
constexpr int64_t kSlackNs = 400;
#else
constexpr int64_t kSlackNs = 100;
#endif

std::shared_ptr<Tracer> ticks_tracer() {
  hotspan::TracerOptions o;
  o.origin_ns = clock::now_ns();
  o.time_unit = TimeUnit::kTicks;
  return Tracer::create(o);
}

void sleep_us(int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

// One span's clock_gettime brackets: begin's tick was read inside
// [b0, b1], end's inside [e0, e1].
struct Bracket {
  uint32_t timeline;
  uint32_t local;
  int64_t b0, b1, e0, e1;
};

struct Excess {
  int64_t worst = 0;  // largest distance outside a bracket (0: all inside)
  size_t checked = 0;
  void add(int64_t v, int64_t lo, int64_t hi) {
    ++checked;
    if (v < lo) worst = std::max(worst, lo - v);
    if (v > hi) worst = std::max(worst, v - hi);
  }
};

void check_brackets(const FrozenSnapshot& snap, const std::vector<Bracket>& all, Excess& ex) {
  for (const Bracket& b : all) {
    const FrozenTimeline* tl = test_util::find_timeline(snap, b.timeline);
    CHECK(tl != nullptr);
    if (tl == nullptr) continue;
    const auto r = test_util::find_local(*tl, b.local);
    CHECK(r.has_value());
    if (!r) continue;
    CHECK(r->start_ns >= b.b0 - kSlackNs && r->start_ns <= b.b1 + kSlackNs);
    CHECK(r->end_ns >= b.e0 - kSlackNs && r->end_ns <= b.e1 + kSlackNs);
    CHECK(r->start_ns <= r->end_ns);
    ex.add(r->start_ns, b.b0, b.b1);
    ex.add(r->end_ns, b.e0, b.e1);
  }
}

// Several threads (holder-less native threads and an attached "JS" thread),
// a track and the group timeline, over > 100 ms with sleeps of a few ms, so
// spans fall in many anchor segments (owner anchors every 5 ms, chunk
// anchors, reader anchors).
void accuracy_across_threads_and_sleeps() {
  auto t = ticks_tracer();
  const uint32_t name = t->intern("op");
  const uint32_t track = t->track("io", false);
  constexpr int kThreads = 4;
  std::vector<std::vector<Bracket>> per(kThreads + 2);
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&, k] {
      auto st = k == 0 ? t->attach_js_thread("js") : t->native_thread();
      CHECK(st != nullptr);
      if (!st) return;
      const uint32_t tl = hotspan::timeline_id(*st);
      const int64_t stop = clock::now_ns() + 130 * 1000000LL;
      for (int i = 0; clock::now_ns() < stop; ++i) {
        Bracket b{tl, 0, 0, 0, 0, 0};
        b.b0 = clock::now_ns();
        CHECK_EQ(hotspan::begin(*st, name, clock::now_ticks()), Status::kOk);
        b.b1 = clock::now_ns();
        b.local = hotspan::innermost_local(*st);
        if (i % 7 == 0) sleep_us(1000 + 700 * k);   // spans across anchor segments
        b.e0 = clock::now_ns();
        CHECK_EQ(hotspan::end(*st, clock::now_ticks()), Status::kOk);
        b.e1 = clock::now_ns();
        per[k].push_back(b);
        if (i % 5 == 0) sleep_us(2000 + 1500 * k);  // idle gaps past 5 ms too
      }
      if (k == 0) t->detach_thread(*st, t->now());
    });
  }
  // Async spans begun here and ended on another thread; groups.
  threads.emplace_back([&] {
    const int64_t stop = clock::now_ns() + 120 * 1000000LL;
    while (clock::now_ns() < stop) {
      Bracket b{track, 0, 0, 0, 0, 0};
      b.b0 = clock::now_ns();
      const uint64_t token = t->async_begin(track, name, clock::now_ticks());
      b.b1 = clock::now_ns();
      CHECK(token != 0);
      b.local = static_cast<uint32_t>(token);
      std::thread ender([&] {
        sleep_us(300);
        b.e0 = clock::now_ns();
        CHECK_EQ(t->async_end(token, clock::now_ticks()), Status::kOk);
        b.e1 = clock::now_ns();
      });
      ender.join();
      per[kThreads].push_back(b);
      sleep_us(3000);
    }
  });
  threads.emplace_back([&] {
    const int64_t stop = clock::now_ns() + 110 * 1000000LL;
    uint32_t local = 0;
    while (clock::now_ns() < stop) {
      Bracket b{0, ++local, 0, 0, 0, 0};
      b.b0 = clock::now_ns();
      CHECK_EQ(t->group_begin(name, clock::now_ticks()), Status::kOk);
      b.b1 = clock::now_ns();
      sleep_us(1500);
      b.e0 = clock::now_ns();
      CHECK_EQ(t->group_end(clock::now_ticks()), Status::kOk);
      b.e1 = clock::now_ns();
      per[kThreads + 1].push_back(b);
      sleep_us(6000);
    }
  });
  for (auto& th : threads) th.join();
  t->flush();
  const FrozenSnapshot snap = t->freeze();
  uint32_t groups_id = 0;
  for (const auto& tl : snap.timelines) {
    if (tl.kind == hotspan::TimelineKind::kGroups) groups_id = tl.id;
  }
  CHECK(groups_id != 0);
  std::vector<Bracket> all;
  for (auto& v : per) {
    for (Bracket b : v) {
      if (b.timeline == 0) b.timeline = groups_id;
      all.push_back(b);
    }
  }
  CHECK(all.size() > 100);
  Excess ex;
  check_brackets(snap, all, ex);
  std::printf("   tsc=%d: %zu timestamps, worst outside its clock_gettime bracket: %lld ns\n",
              clock::tsc_enabled() ? 1 : 0, ex.checked, static_cast<long long>(ex.worst));
}

// The C ABI on a ticks tracer reads ticks too; its records convert back.
void c_abi_ticks() {
  auto t = ticks_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(t);
  uint32_t name = 0;
  CHECK_EQ(api->intern(api->tracer, "c", 1, &name), HOTSPAN_OK);
  std::vector<Bracket> all;
  std::thread th([&] {
    for (int i = 0; i < 200; ++i) {
      Bracket b{0, static_cast<uint32_t>(i + 1), 0, 0, 0, 0};
      b.b0 = api->now_ns();
      CHECK_EQ(api->begin(api->tracer, name), HOTSPAN_OK);
      b.b1 = api->now_ns();
      if (i % 50 == 0) sleep_us(6000);
      b.e0 = api->now_ns();
      CHECK_EQ(api->end(api->tracer), HOTSPAN_OK);
      b.e1 = api->now_ns();
      all.push_back(b);
    }
    CHECK_EQ(api->flush_thread(api->tracer), HOTSPAN_OK);
  });
  th.join();
  t->flush();
  const FrozenSnapshot snap = t->freeze();
  const FrozenTimeline* native = nullptr;
  for (const auto& tl : snap.timelines) {
    if (tl.kind == hotspan::TimelineKind::kNative) native = &tl;
  }
  CHECK(native != nullptr);
  if (native == nullptr) return;
  for (Bracket& b : all) b.timeline = native->id;
  Excess ex;
  check_brackets(snap, all, ex);
  std::printf("   C ABI: worst outside bracket %lld ns\n", static_cast<long long>(ex.worst));
}

// Every record seen in `a` converts to the same times in the later `b`.
void check_same(const FrozenSnapshot& a, const FrozenSnapshot& b, size_t* compared) {
  for (const auto& ta : a.timelines) {
    const FrozenTimeline* tb = test_util::find_timeline(b, ta.id);
    CHECK(tb != nullptr);
    if (tb == nullptr) continue;
    CHECK(tb->records.size() >= ta.records.size());
    const size_t n = std::min(ta.records.size(), tb->records.size());
    for (size_t i = 0; i < n; ++i) {
      CHECK_EQ(ta.records[i].local_id, tb->records[i].local_id);
      CHECK_EQ(ta.records[i].start_ns, tb->records[i].start_ns);
      CHECK_EQ(ta.records[i].end_ns, tb->records[i].end_ns);
    }
    *compared += n;
  }
}

void determinism_across_snapshots() {
  auto t = ticks_tracer();
  const uint32_t name = t->intern("d");
  auto st = t->native_thread();
  CHECK(st != nullptr);
  for (int i = 0; i < 3000; ++i) {  // spans 3 chunks
    hotspan::begin(*st, name, clock::now_ticks());
    hotspan::end(*st, clock::now_ticks());
  }
  // The last record is stored after the newest anchor: the first snapshot
  // must add one above it, and later ones must not move it.
  t->flush();
  const FrozenSnapshot s1 = t->freeze();
  CHECK_EQ(s1.timelines.size(), size_t{1});
  CHECK_EQ(s1.timelines[0].records.size(), size_t{3000});
  sleep_us(12000);
  std::thread other([&] {
    auto o = t->native_thread();
    for (int i = 0; i < 10; ++i) {
      hotspan::begin(*o, name, clock::now_ticks());
      sleep_us(700);
      hotspan::end(*o, clock::now_ticks());
    }
    hotspan::publish(*o);
  });
  other.join();
  for (int i = 0; i < 50; ++i) {
    hotspan::begin(*st, name, clock::now_ticks());
    sleep_us(300);
    hotspan::end(*st, clock::now_ticks());
  }
  t->flush();
  const FrozenSnapshot s2 = t->freeze();
  sleep_us(7000);
  const FrozenSnapshot s3 = t->freeze();
  size_t compared = 0;
  check_same(s1, s2, &compared);
  check_same(s2, s3, &compared);
  check_same(s1, s3, &compared);
  CHECK(compared >= 3000 * 3);
  // The Chrome JSON writer reads its own snapshot: same times again.
  std::string a, b;
  hotspan::write_chrome_json(*t, a);
  sleep_us(6000);
  hotspan::write_chrome_json(*t, b);
  // The events; the metadata after them carries the clock readings of each write.
  CHECK(a.substr(0, a.find("\n],")) == b.substr(0, b.find("\n],")));
}

// Ticks that went backwards relative to the last anchor (or a thread whose
// core lags): converted by the segment below / extrapolation, never garbage.
void backwards_ticks_are_safe() {
  auto t = ticks_tracer();
  const uint32_t name = t->intern("b");
  auto st = t->native_thread();
  sleep_us(6000);
  const int64_t ms = clock::ticks_for_ms(1);
  const int64_t before = clock::now_ns();
  const int64_t now_tick = clock::now_ticks();
  CHECK_EQ(hotspan::begin(*st, name, now_tick), Status::kOk);
  CHECK_EQ(hotspan::begin(*st, name, now_tick - 2 * ms), Status::kOk);  // 2 ms "earlier"
  CHECK_EQ(hotspan::end(*st, now_tick - ms), Status::kOk);
  CHECK_EQ(hotspan::end(*st, clock::now_ticks()), Status::kOk);
  const int64_t after = clock::now_ns();
  t->flush();
  const FrozenSnapshot s = t->freeze();
  CHECK_EQ(s.timelines[0].records.size(), size_t{2});
  const SpanRecord& inner = s.timelines[0].records[0];
  const SpanRecord& outer = s.timelines[0].records[1];
  CHECK(inner.start_ns <= inner.end_ns);
  CHECK(outer.start_ns <= outer.end_ns);
  // About 2 ms and 1 ms before `before` (ticks_for_ms is a rough calibration).
  CHECK(inner.start_ns > before - 2200000 && inner.start_ns < before - 1800000);
  CHECK(inner.end_ns > before - 1200000 && inner.end_ns < before - 800000);
  CHECK(outer.start_ns >= before - kSlackNs && outer.end_ns <= after + kSlackNs);
}

// A span longer than a record's 32-bit duration (5 s: past 2^32 ticks or ns)
// keeps its end tick in a side table: that end converts to the same ns as
// the end of a short span closed at the same tick.
void long_span_end_converts() {
  auto t = ticks_tracer();
  const uint32_t name = t->intern("l");
  auto st = t->native_thread();
  const int64_t end_tick = clock::now_ticks();
  CHECK_EQ(hotspan::begin(*st, name, end_tick - clock::ticks_for_ms(5000)), Status::kOk);
  CHECK_EQ(hotspan::begin(*st, name, end_tick - 1), Status::kOk);
  CHECK_EQ(hotspan::end(*st, end_tick), Status::kOk);
  CHECK_EQ(hotspan::end(*st, end_tick), Status::kOk);
  t->flush();
  const FrozenSnapshot s = t->freeze();
  CHECK_EQ(s.timelines[0].records.size(), size_t{2});
  if (s.timelines[0].records.size() != 2) return;
  const SpanRecord& short_span = s.timelines[0].records[0];
  const SpanRecord& long_span = s.timelines[0].records[1];
  CHECK_EQ(long_span.end_ns, short_span.end_ns);
  const int64_t length = long_span.end_ns - long_span.start_ns;
  CHECK(length > 4500000000 && length < 5500000000);  // ticks_for_ms is a rough calibration
}

// Writers on several threads (holder, native, track, groups) while readers
// snapshot concurrently: under TSan, the anchors are guarded; and each
// reader's consecutive snapshots agree on every record both contain.
void concurrent_readers() {
  auto t = ticks_tracer();
  const uint32_t name = t->intern("c");
  const uint32_t track = t->track("q", true);
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int k = 0; k < 3; ++k) {
    writers.emplace_back([&, k] {
      auto st = k == 0 ? t->attach_js_thread("js") : t->native_thread();
      for (int i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        hotspan::begin(*st, name, clock::now_ticks());
        hotspan::end(*st, clock::now_ticks());
        if (i % 64 == 0) {
          hotspan::publish(*st);
          if (k == 1) {
            const uint64_t tok = t->async_begin(track, name, clock::now_ticks());
            t->async_end(tok, clock::now_ticks());
          } else if (k == 2) {
            t->group_begin(name, clock::now_ticks());
            t->group_end(clock::now_ticks());
          }
          sleep_us(200);
        }
      }
      if (k == 0) t->detach_thread(*st, t->now());
    });
  }
  std::vector<std::thread> readers;
  std::atomic<size_t> compared{0};
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      FrozenSnapshot prev = t->freeze();
      const int64_t t0 = clock::now_ns();
      while (clock::now_ns() - t0 < 150 * 1000000LL) {
        if (r == 0) t->flush();
        FrozenSnapshot cur = t->freeze();
        size_t n = 0;
        check_same(prev, cur, &n);
        compared.fetch_add(n);
        prev = std::move(cur);
        sleep_us(1000);
      }
    });
  }
  for (auto& th : readers) th.join();
  stop.store(true);
  for (auto& th : writers) th.join();
  CHECK(compared.load() > 0);
}

// A kNs tracer stores and returns the caller's ns unchanged (synthetic times).
void ns_unit_is_identity() {
  auto t = Tracer::create();
  CHECK(t->time_unit() == TimeUnit::kNs);
  const uint32_t name = t->intern("n");
  auto st = t->native_thread();
  CHECK_EQ(hotspan::begin(*st, name, 4), Status::kOk);
  CHECK_EQ(hotspan::end(*st, 5), Status::kOk);
  t->flush();
  const FrozenSnapshot s = t->freeze();
  CHECK_EQ(s.timelines[0].records[0].start_ns, int64_t{4});
  CHECK_EQ(s.timelines[0].records[0].end_ns, int64_t{5});
}

}  // namespace

int main() {
  std::printf("   invariant TSC in use: %s\n", clock::tsc_enabled() ? "yes" : "no");
  RUN_TEST(ns_unit_is_identity);
  RUN_TEST(accuracy_across_threads_and_sleeps);
  RUN_TEST(c_abi_ticks);
  RUN_TEST(determinism_across_snapshots);
  RUN_TEST(backwards_ticks_are_safe);
  RUN_TEST(long_span_end_converts);
  RUN_TEST(concurrent_readers);
  return check::result("tick_clock_test");
}
