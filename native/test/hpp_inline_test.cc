// hotspan.hpp's inline path (the area the C ABI lends a native thread,
// hotspan.h HOTSPAN_AREA_VERSION): spans stored by the header itself, with no
// call per span, must be exactly the spans the call path would have stored.
// Exact counts across threads under each budget policy (produced = kept +
// overwritten + dropped, nothing else), nesting shared with the call path,
// readers snapshotting while writers store, close() racing writers, thread
// exit with a span open, and an older (smaller) table that gets the calls.
// Runs under Release and ThreadSanitizer, where a record published without
// its release store is a reported race.
#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "hotspan.hpp"
#include "record/c_api.h"
#include "record/clock.h"
#include "record/span_record.h"
#include "record/tracer.h"

namespace {

using hotspan::FrozenSnapshot;
using hotspan::RecordCounts;
using hotspan::TimelineKind;
using hotspan::Tracer;

constexpr int kThreads = 4;

std::shared_ptr<Tracer> make_tracer(hotspan::TimeUnit unit, size_t limit = hotspan::memory_limit::kDefault,
                                    hotspan::FullPolicy full = hotspan::FullPolicy::kOverwrite) {
  hotspan::TracerOptions o;
  o.origin_ns = hotspan::clock::now_ns();
  o.time_unit = unit;
  o.memory_limit = limit;
  o.on_full = full;
  return Tracer::create(o);
}

RecordCounts total(const std::shared_ptr<Tracer>& tracer) {
  RecordCounts c;
  for (const auto& t : tracer->counts()) c += t.counts;
  return c;
}

// Threads start together on a flag, then run `body`.
template <class Body>
void gated(int threads, Body body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      body(i);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  go.store(true);
  for (auto& t : pool) t.join();
}

// Whether the calling thread holds a lent area for the attached table.
bool area_lent() { return hotspan::detail::area_for(hotspan::detail::current()) != nullptr; }

// Three nested scopes per iteration: outer > mid > inner.
void nested(int n) {
  for (int i = 0; i < n; ++i) {
    HOTSPAN_SCOPE("inline.outer");
    {
      HOTSPAN_SCOPE("inline.mid");
      HOTSPAN_SCOPE("inline.inner");
    }
  }
}

// Every record of a native timeline is whole and in its place: a name of
// the three, depth by name, parent by depth, a nonzero local id.
uint64_t check_records(const std::shared_ptr<Tracer>& tracer, const FrozenSnapshot& snap) {
  const uint32_t outer = tracer->intern("inline.outer");
  const uint32_t mid = tracer->intern("inline.mid");
  const uint32_t inner = tracer->intern("inline.inner");
  uint64_t n = 0;
  for (const auto& t : snap.timelines) {
    if (t.kind != TimelineKind::kNative) continue;
    for (const auto& r : t.records) {
      ++n;
      const uint32_t want_depth = r.name == outer ? 0 : r.name == mid ? 1 : r.name == inner ? 2 : 99;
      CHECK_EQ(uint32_t{r.depth}, want_depth);
      CHECK(r.local_id != 0);
      CHECK((r.depth == 0) == (r.parent_local == 0));
      CHECK(r.end_ns >= r.start_ns);
      CHECK_EQ(uint32_t{r.flags}, 0u);
    }
  }
  return n;
}

void exact_counts(hotspan::TimeUnit unit, size_t limit, hotspan::FullPolicy full, int per_thread) {
  auto tracer = make_tracer(unit, limit, full);
  CHECK(hotspan::attach(hotspan::c_api_for(tracer)) == hotspan::Attach::kOk);
  std::atomic<int> lent{0};
  gated(kThreads, [&](int) {
    nested(per_thread);
    lent.fetch_add(area_lent());
  });
  CHECK_EQ(lent.load(), kThreads);  // the spans took the inline path
  tracer->flush();
  const RecordCounts c = total(tracer);
  const uint64_t made = uint64_t{kThreads} * per_thread * 3;
  CHECK_EQ(c.produced, made);
  CHECK_EQ(c.kept + c.overwritten + c.dropped + c.released, made);
  const FrozenSnapshot snap = tracer->freeze();
  CHECK_EQ(check_records(tracer, snap), c.kept);
  if (full == hotspan::FullPolicy::kDrop) CHECK_EQ(c.overwritten, uint64_t{0});
  if (full == hotspan::FullPolicy::kOverwrite) CHECK_EQ(c.dropped, uint64_t{0});
  hotspan::detach();
}

void test_exact_counts_roomy() {
  exact_counts(hotspan::TimeUnit::kTicks, hotspan::memory_limit::kDefault, hotspan::FullPolicy::kOverwrite, 20000);
  exact_counts(hotspan::TimeUnit::kNs, hotspan::memory_limit::kDefault, hotspan::FullPolicy::kOverwrite, 20000);
}

// 1 MiB is 37 chunks: most spans are overwritten or dropped, at chunk
// boundaries the inline path hands over to the call.
void test_exact_counts_full_budget() {
  exact_counts(hotspan::TimeUnit::kTicks, hotspan::memory_limit::kMin, hotspan::FullPolicy::kOverwrite, 40000);
  exact_counts(hotspan::TimeUnit::kTicks, hotspan::memory_limit::kMin, hotspan::FullPolicy::kDrop, 40000);
}

// Inline scopes and the table's begin/end nest on one stack.
void test_mixed_with_calls() {
  auto tracer = make_tracer(hotspan::TimeUnit::kTicks);
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  CHECK(hotspan::attach(api) == hotspan::Attach::kOk);
  const uint32_t call_name = tracer->intern("call.span");
  std::thread t([&] {
    for (int i = 0; i < 1000; ++i) {
      CHECK_EQ(api->begin(api->tracer, call_name), HOTSPAN_OK);  // depth 0
      {
        HOTSPAN_SCOPE("inline.mid");  // depth 1, inline
        CHECK_EQ(api->begin(api->tracer, call_name), HOTSPAN_OK);  // depth 2
        CHECK_EQ(api->end(api->tracer), HOTSPAN_OK);
      }
      CHECK_EQ(api->end(api->tracer), HOTSPAN_OK);
    }
    CHECK(area_lent());
    CHECK_EQ(api->end(api->tracer), HOTSPAN_NO_OPEN_SPAN);
  });
  t.join();
  tracer->flush();
  const FrozenSnapshot snap = tracer->freeze();
  const uint32_t mid = tracer->intern("inline.mid");
  uint64_t n = 0;
  for (const auto& tl : snap.timelines) {
    if (tl.kind != TimelineKind::kNative) continue;
    for (const auto& r : tl.records) {
      ++n;
      CHECK_EQ(uint32_t{r.depth}, r.name == mid ? 1u : (r.depth == 0 ? 0u : 2u));
      CHECK(r.name == mid || r.name == call_name);
      CHECK((r.depth == 0) == (r.parent_local == 0));
    }
  }
  CHECK_EQ(n, uint64_t{3000});
  hotspan::detach();
}

// A reader freezing while writers store inline: every record it sees is
// whole (TSan: the release store is what orders the record before it).
void test_readers_while_writing() {
  auto tracer = make_tracer(hotspan::TimeUnit::kTicks);
  CHECK(hotspan::attach(hotspan::c_api_for(tracer)) == hotspan::Attach::kOk);
  std::atomic<int> done{0};
  std::thread reader([&] {
    while (done.load() < kThreads) {
      tracer->flush();  // sweeps: commits what `written` says is stored
      check_records(tracer, tracer->freeze());
    }
  });
  gated(kThreads, [&](int) {
    nested(5000);
    done.fetch_add(1);
  });
  reader.join();
  tracer->flush();
  CHECK_EQ(total(tracer).produced, uint64_t{kThreads} * 5000 * 3);
  hotspan::detach();
}

// close() racing inline writers: afterwards nothing more is stored, every
// record stored is counted.
void test_close_racing() {
  for (int round = 0; round < 5; ++round) {
    auto tracer = make_tracer(hotspan::TimeUnit::kTicks);
    CHECK(hotspan::attach(hotspan::c_api_for(tracer)) == hotspan::Attach::kOk);
    std::atomic<int> started{0};
    std::atomic<uint64_t> recorded{0};
    std::atomic<bool> closed{false};
    std::thread closer([&] {
      while (started.load() < kThreads) std::this_thread::yield();
      tracer->close();
      closed.store(true);
    });
    gated(kThreads, [&](int) {
      static const hotspan::Name kSite("close.site");
      uint64_t mine = 0;
      bool once = false;
      // Until the close is seen, then a little more: all of it after close
      // must record nothing.
      for (int after = 0; after < 100;) {
        hotspan::Scope s(kSite);
        mine += s.recording();
        if (!once) {
          once = true;
          started.fetch_add(1);
        }
        if (closed.load()) ++after;
      }
      recorded.fetch_add(mine);
    });
    closer.join();
    const RecordCounts c = total(tracer);
    CHECK(c.produced <= recorded.load());
    CHECK_EQ(c.kept + c.overwritten + c.dropped + c.released, c.produced);
    hotspan::detach();
  }
}

// Records stored inline but not yet queued (fewer than a batch) are seen by
// a flush() while their thread still runs: flush() commits up to the
// timeline's `written`, which only the header's release store advances.
void test_flush_sees_unbatched() {
  auto tracer = make_tracer(hotspan::TimeUnit::kTicks);
  CHECK(hotspan::attach(hotspan::c_api_for(tracer)) == hotspan::Attach::kOk);
  std::atomic<int> step{0};
  std::thread t([&] {
    nested(10);  // 30 records, well under a batch
    CHECK(area_lent());
    step.store(1);
    while (step.load() != 2) std::this_thread::yield();
    nested(5);
  });
  while (step.load() != 1) std::this_thread::yield();
  tracer->flush();
  CHECK_EQ(check_records(tracer, tracer->freeze()), uint64_t{30});
  CHECK_EQ(total(tracer).produced, uint64_t{30});
  step.store(2);
  t.join();
  tracer->flush();
  CHECK_EQ(check_records(tracer, tracer->freeze()), uint64_t{45});
  hotspan::detach();
}

// A thread that exits with a span open (begun inline, never ended: a
// thread_local's scope ends after the cache): abandoned, stored, counted.
void test_thread_exit_with_open_span() {
  auto tracer = make_tracer(hotspan::TimeUnit::kTicks);
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  CHECK(hotspan::attach(api) == hotspan::Attach::kOk);
  std::thread t([&] {
    static const hotspan::Name kOpen("inline.outer");
    // Begun inline, never destroyed (ended by the thread's exit); built in
    // static storage, not on the heap, so LeakSanitizer has nothing to report.
    alignas(hotspan::Scope) static unsigned char storage[sizeof(hotspan::Scope)];
    auto* open = new (storage) hotspan::Scope(kOpen);
    CHECK(open->recording());
    CHECK(area_lent());
    nested(10);
  });
  t.join();
  tracer->flush();
  const FrozenSnapshot snap = tracer->freeze();
  uint64_t abandoned = 0, n = 0;
  for (const auto& tl : snap.timelines) {
    if (tl.kind != TimelineKind::kNative) continue;
    CHECK(tl.exited);
    for (const auto& r : tl.records) {
      ++n;
      abandoned += (r.flags & hotspan::kFlagAbandoned) != 0;
    }
  }
  CHECK_EQ(n, uint64_t{31});
  CHECK_EQ(abandoned, uint64_t{1});
  hotspan::detach();
}

// A table without the appended entries (an older hotspan): attach()
// accepts it and every span goes through its calls.
void test_older_table_gets_calls() {
  auto tracer = make_tracer(hotspan::TimeUnit::kTicks);
  static hotspan_api_v1 older;
  older = *hotspan::c_api_for(tracer);
  older.struct_size = static_cast<uint32_t>(HOTSPAN_API_V1_BASE_SIZE);
  older.area_version = 0;
  older.thread_area = nullptr;
  older.area_settle = nullptr;
  CHECK(hotspan::attach(&older) == hotspan::Attach::kOk);
  std::thread t([] {
    nested(100);
    CHECK(!area_lent());
  });
  t.join();
  tracer->flush();
  CHECK_EQ(total(tracer).produced, uint64_t{300});
  older.struct_size = static_cast<uint32_t>(HOTSPAN_API_V1_BASE_SIZE - 1);
  CHECK(hotspan::attach(&older) == hotspan::Attach::kTableSize);
  hotspan::detach();
}

}  // namespace

int main() {
  RUN_TEST(test_exact_counts_roomy);
  RUN_TEST(test_exact_counts_full_budget);
  RUN_TEST(test_mixed_with_calls);
  RUN_TEST(test_readers_while_writing);
  RUN_TEST(test_close_racing);
  RUN_TEST(test_flush_sees_unbatched);
  RUN_TEST(test_thread_exit_with_open_span);
  RUN_TEST(test_older_table_gets_calls);
  return check_report("hpp_inline_test");
}
