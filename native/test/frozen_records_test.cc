// Tracer::freeze: records read in place must be the records a snapshot
// copies, field for field, and give the writers and stats the same output;
// a frozen trace must stay readable after its tracer is gone; and freezing
// and reading while other threads record must be race-free (TSan build) and
// deterministic (a record reads the same in every later freeze).
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "write/chrome_json_writer.h"
#include "record/clock.h"
#include "write/perfetto_writer.h"
#include "read/stats.h"
#include "test_util.h"
#include "record/tracer.h"
#include "snapshot_builders.h"

namespace {

using hotspan::FrozenSnapshot;
using hotspan::Snapshot;
using hotspan::SpanRecord;
using hotspan::Status;
using hotspan::ThreadState;
using hotspan::Tracer;

std::shared_ptr<Tracer> make_tracer(hotspan::TimeUnit unit) {
  hotspan::TracerOptions o;
  o.origin_ns = hotspan::clock::now_ns();
  o.time_unit = unit;
  return Tracer::create(o);
}

bool same_record(const SpanRecord& a, const SpanRecord& b) {
  return a.start_ns == b.start_ns && a.end_ns == b.end_ns && a.local_id == b.local_id &&
         a.parent_local == b.parent_local && a.name == b.name && a.depth == b.depth &&
         a.flags == b.flags;
}

// Every kind of timeline and record: nested spans over several chunks, with
// attributes, long and negative durations (ns tracer), a native thread, a
// group and overlapping async spans.
void record_mix(Tracer& t, bool caller_times) {
  const uint32_t outer = t.intern("outer");
  const uint32_t inner = t.intern("inner");
  auto st = t.attach_js_thread("main");
  int64_t now = caller_times ? int64_t{1} << 34 : t.now();
  auto tick = [&](int64_t step) {
    now = caller_times ? now + step : t.now();
    return now;
  };
  CHECK_EQ(t.group_begin(outer, tick(1), R"({"phase":"load"})"), Status::kOk);
  for (uint32_t i = 0; i < 3000; ++i) {
    CHECK_EQ(hotspan::begin(*st, outer, tick(3)), Status::kOk);
    if (i % 5 == 0) {
      CHECK_EQ(hotspan::begin_with_attrs(*st, inner, tick(2), R"({"i":)" + std::to_string(i) + "}"),
               Status::kOk);
    } else {
      CHECK_EQ(hotspan::begin(*st, inner, tick(2)), Status::kOk);
    }
    // Caller-chosen times: some ends do not fit 32 bits, some come first.
    const int64_t inner_end = caller_times && i % 97 == 0   ? now + (int64_t{1} << 33)
                              : caller_times && i % 89 == 0 ? now - 5
                                                            : tick(7);
    CHECK_EQ(hotspan::end(*st, inner_end), Status::kOk);
    CHECK_EQ(hotspan::end(*st, tick(1), i % 11 == 0 ? hotspan::kFlagError : 0), Status::kOk);
  }
  const uint32_t gpu = t.track("gpu", false);
  const uint64_t a = t.async_begin(gpu, inner, tick(1));
  const uint64_t b = t.async_begin(gpu, outer, tick(1), R"({"k":"v"})");
  CHECK_EQ(t.async_end(a, tick(4)), Status::kOk);
  CHECK_EQ(t.async_end(b, tick(4)), Status::kOk);
  CHECK_EQ(t.group_end(tick(1)), Status::kOk);
  std::thread([&t, inner] {
    auto ns = t.native_thread();
    for (int i = 0; i < 1500; ++i) {
      CHECK_EQ(hotspan::begin(*ns, inner, t.now()), Status::kOk);
      CHECK_EQ(hotspan::end(*ns, t.now()), Status::kOk);
    }
  }).join();
  t.flush();
  t.detach_thread(*st, tick(1));
}

void check_same(const FrozenSnapshot& f, const Snapshot& s) {
  CHECK(f.names == s.names);
  CHECK_EQ(f.timelines.size(), s.timelines.size());
  if (f.timelines.size() != s.timelines.size()) return;
  size_t compared = 0;
  for (size_t i = 0; i < f.timelines.size(); ++i) {
    const auto& a = f.timelines[i];
    const auto& b = s.timelines[i];
    CHECK_EQ(a.id, b.id);
    CHECK(a.name == b.name && a.kind == b.kind && a.serial == b.serial && a.exited == b.exited);
    CHECK(a.attrs == b.attrs && a.foreign_parents == b.foreign_parents);
    CHECK_EQ(static_cast<size_t>(a.records.size()), b.records.size());
    if (a.records.size() != b.records.size()) continue;
    // Random access and iteration both.
    uint32_t k = 0;
    for (const SpanRecord& r : a.records) {
      if (!same_record(r, b.records[k]) || !same_record(a.records[k], b.records[k])) {
        check::fail(__FILE__, __LINE__, check::fmt("timeline %u record %u differs", a.id, k));
        return;
      }
      ++k;
      ++compared;
    }
  }
  CHECK(compared > 4000);
}

void check_outputs_match(const Tracer& t) {
  const FrozenSnapshot f = t.freeze();
  const Snapshot s = test_util::materialize(t.freeze());
  check_same(f, s);
  std::string pf, ps, jf, js;
  hotspan::write_perfetto(f, t.origin_ns(), hotspan_test::kTestClocks, pf);
  hotspan::write_perfetto(s, t.origin_ns(), hotspan_test::kTestClocks, ps);
  CHECK(!pf.empty() && pf == ps);
  hotspan::write_chrome_json(f, t.origin_ns(), hotspan_test::kTestClocks, jf);
  hotspan::write_chrome_json(s, t.origin_ns(), hotspan_test::kTestClocks, js);
  CHECK(!jf.empty() && jf == js);
  const auto rf = hotspan::compute_stats(f);
  const auto rs = hotspan::compute_stats(s);
  CHECK_EQ(rf.size(), rs.size());
  for (size_t i = 0; i < rf.size() && i < rs.size(); ++i) {
    CHECK(rf[i].name == rs[i].name && rf[i].count == rs[i].count && rf[i].total_ns == rs[i].total_ns &&
          rf[i].min_ns == rs[i].min_ns && rf[i].max_ns == rs[i].max_ns);
  }
}

// Caller-chosen ns: the frozen records must be exactly what was recorded,
// long and negative durations included, whatever chunk they sit in.
void frozen_records_are_the_recorded_ones() {
  auto t = make_tracer(hotspan::TimeUnit::kNs);
  const uint32_t n = t->intern("n");
  auto st = t->attach_js_thread("main");
  const uint32_t kSpans = 2 * 1024 + 77;
  auto start_of = [](uint32_t i) { return (int64_t{1} << 35) + int64_t{i} * 10; };
  auto end_of = [&](uint32_t i) {
    return i % 3 == 0 ? start_of(i) + (int64_t{1} << 32) + i : i % 3 == 1 ? start_of(i) - 1 : start_of(i) + 4;
  };
  for (uint32_t i = 0; i < kSpans; ++i) {
    CHECK_EQ(hotspan::begin(*st, n, start_of(i)), Status::kOk);
    CHECK_EQ(hotspan::end(*st, end_of(i)), Status::kOk);
  }
  const FrozenSnapshot f = t->freeze();
  const hotspan::FrozenTimeline* tl = nullptr;
  for (const auto& x : f.timelines) {
    if (x.id == hotspan::timeline_id(*st)) tl = &x;
  }
  CHECK(tl != nullptr && tl->records.size() == kSpans);
  if (tl == nullptr || tl->records.size() != kSpans) return;
  // Backwards, so no cached anchor segment or long-end position helps.
  for (uint32_t i = kSpans; i-- > 0;) {
    const SpanRecord r = tl->records[i];
    CHECK_EQ(r.start_ns, start_of(i));
    CHECK_EQ(r.end_ns, end_of(i));
    CHECK_EQ(tl->records.local_id(i), i + 1);
  }
  t->detach_thread(*st, 0);
}

void frozen_matches_snapshot_ns() {
  auto t = make_tracer(hotspan::TimeUnit::kNs);
  record_mix(*t, true);
  check_outputs_match(*t);
}

void frozen_matches_snapshot_ticks() {
  auto t = make_tracer(hotspan::TimeUnit::kTicks);
  record_mix(*t, false);
  check_outputs_match(*t);
}

// The frozen copy keeps the timelines (and their chunks) alive: written
// after the tracer was closed and destroyed, it gives the same bytes.
void frozen_outlives_its_tracer() {
  auto t = make_tracer(hotspan::TimeUnit::kTicks);
  record_mix(*t, false);
  const int64_t origin = t->origin_ns();
  const FrozenSnapshot f = t->freeze();
  std::string before, after;
  hotspan::write_perfetto(f, origin, hotspan_test::kTestClocks, before);
  t->close();
  t.reset();
  hotspan::write_perfetto(f, origin, hotspan_test::kTestClocks, after);
  CHECK(!before.empty() && before == after);
}

// Counts passes or arrivals; waiters block until it reaches a value. The
// reader and the writers meet at it, so how their work interleaves is set by
// the test, not by the scheduler.
class Counter {
 public:
  void add() {
    std::lock_guard<std::mutex> lock(mu_);
    ++value_;
    cv_.notify_all();
  }
  void wait_for(int at_least) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return value_ >= at_least; });
  }
  // Lets every waiter through (a failed reader must not leave writers blocked).
  void open() {
    std::lock_guard<std::mutex> lock(mu_);
    value_ = 1 << 30;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int value_ = 0;
};

// Writers on 2 threads record in phases while a reader freezes and reads
// everything: each freeze sees a prefix of each timeline, every record of it
// complete, reading the same as in the previous freeze. Under TSan a record
// read before its publication would be reported. Gates make the interleaving
// fixed: freeze p starts once every writer has published phase p, and a
// writer starts phase p + 2 only after freeze p + 1 has started, so freeze p
// sees between p and p + 1 phases of each writer while they keep recording.
void freeze_while_recording() {
  auto t = make_tracer(hotspan::TimeUnit::kTicks);
  const uint32_t n = t->intern("work");
  constexpr int kWriters = 2;
  constexpr int kPhases = 5;
  constexpr uint32_t kPerPhase = 4000;
  Counter published;  // writer phases published
  Counter started;    // freezes started
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&] {
      auto st = t->native_thread();
      for (int phase = 1; phase <= kPhases; ++phase) {
        for (uint32_t i = 0; i < kPerPhase; ++i) {
          CHECK_EQ(hotspan::begin(*st, n, t->now()), Status::kOk);
          CHECK_EQ(hotspan::end(*st, t->now()), Status::kOk);
          if (i % 256 == 0) hotspan::publish(*st);
        }
        hotspan::publish(*st);
        published.add();
        started.wait_for(phase);
      }
    });
  }
  std::vector<std::vector<SpanRecord>> seen;  // by timeline index, what the last freeze read
  bool ok = true;
  for (int phase = 1; phase <= kPhases && ok; ++phase) {
    published.wait_for(kWriters * phase);
    started.add();
    t->flush();
    const FrozenSnapshot f = t->freeze();
    size_t total = 0;
    if (seen.size() < f.timelines.size()) seen.resize(f.timelines.size());
    for (size_t i = 0; i < f.timelines.size(); ++i) {
      const auto& recs = f.timelines[i].records;
      total += recs.size();
      std::vector<SpanRecord>& prev = seen[i];
      if (recs.size() < prev.size()) {
        check::fail(__FILE__, __LINE__, "a timeline shrank between freezes");
        ok = false;
        break;
      }
      for (uint32_t k = 0; k < recs.size() && ok; ++k) {
        const SpanRecord r = recs[k];
        if (r.local_id != k + 1 || r.end_ns < r.start_ns || (k < prev.size() && !same_record(r, prev[k]))) {
          check::fail(__FILE__, __LINE__, check::fmt("record %u of timeline %zu is wrong", k, i));
          ok = false;
        }
        if (k >= prev.size()) prev.push_back(r);
      }
    }
    // A prefix of every writer: at least `phase` phases, at most one more.
    CHECK(total >= size_t{kWriters} * kPerPhase * phase);
    CHECK(total <= size_t{kWriters} * kPerPhase * (phase + 1));
  }
  started.open();
  for (auto& w : writers) w.join();
  t->flush();
  size_t total = 0;
  for (const auto& tl : t->freeze().timelines) total += tl.records.size();
  CHECK_EQ(total, size_t{kWriters} * kPerPhase * kPhases);
}

}  // namespace

int main() {
  RUN_TEST(frozen_records_are_the_recorded_ones);
  RUN_TEST(frozen_matches_snapshot_ns);
  RUN_TEST(frozen_matches_snapshot_ticks);
  RUN_TEST(frozen_outlives_its_tracer);
  RUN_TEST(freeze_while_recording);
  return check::result("frozen_records_test");
}
