// The C ABI (native/include/hotspan.h) exercised through the table only, as a
// consumer addon would: the table comes from c_api_for() on a core tracer, and
// only the core's reading side (flush/snapshot/close) is used to check results.
// Runs under Release and ThreadSanitizer (many threads on purpose).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "record/c_api.h"
#include "check.h"
#include "record/clock.h"
#include "hotspan.h"
#include "record/span_record.h"
#include "record/tracer.h"

namespace {

using hotspan::FrozenSnapshot;
using hotspan::FrozenTimeline;
using hotspan::SpanRecord;
using hotspan::TimelineKind;
using hotspan::Tracer;

constexpr int kThreads = 8;

std::shared_ptr<Tracer> make_tracer() {
  hotspan::TracerOptions o;
  o.origin_ns = hotspan::clock::now_ns();
  return Tracer::create(o);
}

uint32_t intern(const hotspan_api_v1* api, const std::string& s) {
  uint32_t id = UINT32_MAX;
  CHECK_EQ(api->intern(api->tracer, s.data(), s.size(), &id), HOTSPAN_OK);
  return id;
}

void name_thread(const hotspan_api_v1* api, const std::string& s) {
  CHECK_EQ(api->set_thread_name(api->tracer, s.data(), s.size()), HOTSPAN_OK);
}

const FrozenTimeline* find_timeline(const FrozenSnapshot& snap, const std::string& name) {
  const FrozenTimeline* found = nullptr;
  for (const auto& t : snap.timelines) {
    if (t.name == name) {
      CHECK(found == nullptr);  // display names given here are unique
      found = &t;
    }
  }
  return found;
}

std::string thread_timeline_name(const std::string& thread_name) {
  return "native: " + thread_name;
}

// Nesting on one thread timeline: local ids unique, a root has no parent, a
// child's parent is on the same timeline, one level up, and encloses it.
// `cut` allows a missing parent: one still open when the tracer closed is
// never recorded, while its child may be.
void check_nesting(const FrozenTimeline& t, bool cut = false) {
  std::map<uint32_t, SpanRecord> by_id;  // copies: frozen records are read in place
  for (const SpanRecord r : t.records) {
    CHECK(r.local_id != 0);
    CHECK(by_id.emplace(r.local_id, r).second);
    CHECK(r.start_ns <= r.end_ns);
    CHECK_EQ(r.flags & hotspan::kFlagAsync, 0);
  }
  for (const auto& r : t.records) {
    if (r.depth == 0) {
      CHECK_EQ(r.parent_local, 0u);
      continue;
    }
    CHECK(r.parent_local != 0 && r.parent_local < r.local_id);
    auto it = by_id.find(r.parent_local);
    if (!cut) CHECK(it != by_id.end());
    if (it == by_id.end()) continue;
    const SpanRecord& p = it->second;
    CHECK_EQ(p.depth + 1, r.depth);
    CHECK(p.start_ns <= r.start_ns && r.end_ns <= p.end_ns);
  }
}

// ---- the table itself ----

void test_table_and_arguments() {
  auto tracer = make_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  CHECK(api != nullptr);
  CHECK_EQ(api->abi_version, static_cast<uint32_t>(HOTSPAN_ABI_VERSION));
  CHECK_EQ(api->struct_size, static_cast<uint32_t>(sizeof(hotspan_api_v1)));
  CHECK(hotspan::c_api_for(tracer) == api);  // idempotent per tracer
  CHECK(hotspan::c_api_for(nullptr) == nullptr);
  auto other = make_tracer();
  CHECK(hotspan::c_api_for(other) != api);

  // NULL context / out pointers.
  uint32_t id = 0;
  uint64_t token = 0;
  CHECK_EQ(api->intern(nullptr, "x", 1, &id), HOTSPAN_INVALID);
  CHECK_EQ(api->intern(api->tracer, nullptr, 1, &id), HOTSPAN_INVALID);
  CHECK_EQ(api->intern(api->tracer, "x", 1, nullptr), HOTSPAN_INVALID);
  CHECK_EQ(api->begin(nullptr, 0), HOTSPAN_INVALID);
  CHECK_EQ(api->end(nullptr), HOTSPAN_INVALID);
  CHECK_EQ(api->track(nullptr, "t", 1, 0, &id), HOTSPAN_INVALID);
  CHECK_EQ(api->track(api->tracer, "t", 1, 0, nullptr), HOTSPAN_INVALID);
  CHECK_EQ(api->async_begin(nullptr, 1, 0, &token), HOTSPAN_INVALID);
  CHECK_EQ(api->async_begin(api->tracer, 1, 0, nullptr), HOTSPAN_INVALID);
  CHECK_EQ(api->async_end(nullptr, 1), HOTSPAN_INVALID);
  CHECK_EQ(api->set_thread_name(nullptr, "n", 1), HOTSPAN_INVALID);
  CHECK_EQ(api->set_thread_name(api->tracer, nullptr, 1), HOTSPAN_INVALID);
  CHECK_EQ(api->flush_thread(nullptr), HOTSPAN_INVALID);
  CHECK(std::isnan(api->now_ms(nullptr)));
  // A pointer that is not a context at all.
  uint64_t junk[4] = {1, 2, 3, 4};
  CHECK_EQ(api->begin(junk, 0), HOTSPAN_INVALID);

  // Unknown ids.
  const uint32_t name = intern(api, "t.name");
  CHECK_EQ(api->begin(api->tracer, name + 1000), HOTSPAN_INVALID);
  CHECK_EQ(api->end(api->tracer), HOTSPAN_NO_OPEN_SPAN);
  CHECK_EQ(api->async_begin(api->tracer, 0xfffffu, name, &token), HOTSPAN_INVALID);
  uint32_t track = 0;
  CHECK_EQ(api->track(api->tracer, "t.track", 7, 0, &track), HOTSPAN_OK);
  CHECK_EQ(api->async_begin(api->tracer, track, name + 1000, &token), HOTSPAN_INVALID);
  CHECK_EQ(api->async_end(api->tracer, 0), HOTSPAN_INVALID);
  CHECK_EQ(api->async_end(api->tracer, (uint64_t{0xfffffu} << 32) | 7), HOTSPAN_INVALID);
  // An invalid begin changed nothing: one valid span nests at depth 0.
  CHECK_EQ(api->begin(api->tracer, name), HOTSPAN_OK);
  CHECK_EQ(api->end(api->tracer), HOTSPAN_OK);
  CHECK_EQ(api->end(api->tracer), HOTSPAN_NO_OPEN_SPAN);

  // Not NUL-terminated: only `len` bytes count; same string, same id.
  const char buf[] = {'t', '.', 'n', 'a', 'm', 'e', 'X', 'Y'};
  uint32_t again = 0;
  CHECK_EQ(api->intern(api->tracer, buf, 6, &again), HOTSPAN_OK);
  CHECK_EQ(again, name);
  CHECK_EQ(tracer->name_of(name), std::string("t.name"));

  // The clock: raw ns and ms on the tracer's axis.
  const int64_t a = api->now_ns();
  const double ms = api->now_ms(api->tracer);
  const int64_t b = api->now_ns();
  CHECK(a <= b);
  CHECK(hotspan::clock::to_ms(a, tracer->origin_ns()) <= ms);
  CHECK(ms <= hotspan::clock::to_ms(b, tracer->origin_ns()));

  tracer->flush();
  const FrozenSnapshot snap = tracer->freeze();
  size_t spans = 0;
  for (const auto& t : snap.timelines) {
    if (t.kind == TimelineKind::kNative) spans += t.records.size();
  }
  CHECK_EQ(spans, size_t{1});
}

// ---- nested spans from many threads ----

void test_nested_many_threads() {
  auto tracer = make_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  constexpr uint32_t kDepth = 4;
  std::vector<uint64_t> expected(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([api, i, &expected] {
      name_thread(api, "nest#" + std::to_string(i));
      std::vector<uint32_t> ids;
      for (uint32_t k = 0; k < kDepth; ++k) ids.push_back(intern(api, "nest.d" + std::to_string(k)));
      // Not a multiple of any batch size, and different per thread.
      const uint64_t target = 5000 + 37 * static_cast<uint64_t>(i);
      uint64_t done = 0;
      uint32_t shape = 0;
      while (done < target) {
        const uint32_t d = std::min<uint64_t>(1 + (shape++ % kDepth), target - done);
        for (uint32_t k = 0; k < d; ++k) CHECK_EQ(api->begin(api->tracer, ids[k]), HOTSPAN_OK);
        for (uint32_t k = 0; k < d; ++k) CHECK_EQ(api->end(api->tracer), HOTSPAN_OK);
        done += d;
      }
      CHECK_EQ(api->end(api->tracer), HOTSPAN_NO_OPEN_SPAN);
      expected[i] = done;
    });
  }
  for (auto& t : threads) t.join();
  tracer->flush();
  const FrozenSnapshot snap = tracer->freeze();

  std::map<uint32_t, uint32_t> depth_of_name;
  for (uint32_t k = 0; k < kDepth; ++k) {
    depth_of_name[tracer->intern("nest.d" + std::to_string(k))] = k;
  }
  uint64_t total = 0;
  std::set<uint32_t> ids;
  for (int i = 0; i < kThreads; ++i) {
    const FrozenTimeline* t = find_timeline(snap, thread_timeline_name("nest#" + std::to_string(i)));
    CHECK(t != nullptr);
    if (t == nullptr) continue;
    CHECK(t->kind == TimelineKind::kNative);
    CHECK(t->exited);  // the thread has exited; its records stay
    CHECK(ids.insert(t->id).second);
    CHECK_EQ(static_cast<uint64_t>(t->records.size()), expected[i]);
    check_nesting(*t);
    for (const auto& r : t->records) {
      auto it = depth_of_name.find(r.name);
      CHECK(it != depth_of_name.end());
      if (it != depth_of_name.end()) CHECK_EQ(static_cast<uint32_t>(r.depth), it->second);
    }
    total += t->records.size();
  }
  uint64_t all = 0;
  for (const auto& t : snap.timelines) all += t.records.size();
  CHECK_EQ(all, total);  // nothing landed anywhere else
}

// ---- names interned from many threads ----

void test_intern_many_threads() {
  auto tracer = make_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  constexpr int kShared = 300;
  std::vector<std::vector<uint32_t>> shared(kThreads, std::vector<uint32_t>(kShared));
  std::vector<std::vector<uint32_t>> own(kThreads, std::vector<uint32_t>(50));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < kShared; ++n) {
        const int k = (i % 2 == 0) ? n : kShared - 1 - n;  // opposite orders race
        shared[i][k] = intern(api, "shared." + std::to_string(k));
      }
      for (int n = 0; n < 50; ++n) {
        own[i][n] = intern(api, "own." + std::to_string(i) + "." + std::to_string(n));
        // An id interned on this thread is usable at once as a span name.
        CHECK_EQ(api->begin(api->tracer, own[i][n]), HOTSPAN_OK);
        CHECK_EQ(api->end(api->tracer), HOTSPAN_OK);
      }
    });
  }
  for (auto& t : threads) t.join();
  std::set<uint32_t> distinct;
  for (int k = 0; k < kShared; ++k) {
    for (int i = 1; i < kThreads; ++i) CHECK_EQ(shared[i][k], shared[0][k]);
    CHECK_EQ(tracer->name_of(shared[0][k]), "shared." + std::to_string(k));
    distinct.insert(shared[0][k]);
  }
  for (int i = 0; i < kThreads; ++i) {
    for (int n = 0; n < 50; ++n) {
      CHECK_EQ(tracer->name_of(own[i][n]), "own." + std::to_string(i) + "." + std::to_string(n));
      distinct.insert(own[i][n]);
    }
  }
  CHECK_EQ(distinct.size(), static_cast<size_t>(kShared + kThreads * 50));
  // An id interned on another thread (or through the core) is valid here too.
  const uint32_t late = tracer->intern("late.core.name");
  CHECK_EQ(api->begin(api->tracer, late), HOTSPAN_OK);
  CHECK_EQ(api->end(api->tracer), HOTSPAN_OK);
}

// ---- thread names ----

void test_thread_names() {
  auto tracer = make_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  const uint32_t name = intern(api, "named");
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([api, name, i] {
      // Renaming wins; the name need not be NUL-terminated.
      name_thread(api, "first-" + std::to_string(i));
      const std::string final_name = "renamed-" + std::to_string(i) + "????";
      CHECK_EQ(api->set_thread_name(api->tracer, final_name.data(), final_name.size() - 4),
               HOTSPAN_OK);
      for (int n = 0; n <= i; ++n) {
        CHECK_EQ(api->begin(api->tracer, name), HOTSPAN_OK);
        CHECK_EQ(api->end(api->tracer), HOTSPAN_OK);
      }
    });
  }
  for (auto& t : threads) t.join();
  tracer->flush();
  const FrozenSnapshot snap = tracer->freeze();
  for (int i = 0; i < kThreads; ++i) {
    CHECK(find_timeline(snap, thread_timeline_name("first-" + std::to_string(i))) == nullptr);
    const FrozenTimeline* t =
        find_timeline(snap, thread_timeline_name("renamed-" + std::to_string(i)));
    CHECK(t != nullptr);
    if (t != nullptr) CHECK_EQ(t->records.size(), static_cast<size_t>(i + 1));
  }
}

// ---- async spans: begun on one thread, ended on another ----

void test_async_cross_thread() {
  auto tracer = make_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  const uint32_t op = intern(api, "async.op");
  uint32_t conc = 0, serial = 0, again = 0;
  CHECK_EQ(api->track(api->tracer, "gpu0", 4, 0, &conc), HOTSPAN_OK);
  CHECK_EQ(api->track(api->tracer, "stream0", 7, 1, &serial), HOTSPAN_OK);
  CHECK_EQ(api->track(api->tracer, "gpu0", 4, 0, &again), HOTSPAN_OK);
  CHECK_EQ(again, conc);  // idempotent by name
  CHECK(conc != serial);

  constexpr int kPerProducer = 2000;
  constexpr int kProducers = 4;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<uint64_t> queue;
  int producers_left = kProducers;
  std::atomic<int> ended{0};

  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      const uint32_t track = (p % 2 == 0) ? conc : serial;
      for (int i = 0; i < kPerProducer; ++i) {
        uint64_t token = 0;
        CHECK_EQ(api->async_begin(api->tracer, track, op, &token), HOTSPAN_OK);
        CHECK(token != 0);
        std::lock_guard<std::mutex> lock(mu);
        queue.push_back(token);
        cv.notify_one();
      }
      std::lock_guard<std::mutex> lock(mu);
      --producers_left;
      cv.notify_all();
    });
  }
  std::vector<uint64_t> seen;
  std::mutex seen_mu;
  for (int c = 0; c < kProducers; ++c) {
    threads.emplace_back([&] {
      for (;;) {
        uint64_t token;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return producers_left == 0 || !queue.empty(); });
          if (queue.empty()) return;
          token = queue.front();
          queue.pop_front();
        }
        CHECK_EQ(api->async_end(api->tracer, token), HOTSPAN_OK);
        ended.fetch_add(1);
        std::lock_guard<std::mutex> lock(seen_mu);
        seen.push_back(token);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK_EQ(ended.load(), kProducers * kPerProducer);
  // Ending twice is an unknown token.
  CHECK_EQ(api->async_end(api->tracer, seen.front()), HOTSPAN_INVALID);

  tracer->flush();
  const FrozenSnapshot snap = tracer->freeze();
  size_t on_conc = 0, on_serial = 0;
  for (const auto& t : snap.timelines) {
    if (t.id != conc && t.id != serial) {
      for (const auto& r : t.records) CHECK(r.name != op);
      continue;
    }
    CHECK(t.kind == TimelineKind::kTrack);
    hotspan::SpanRecords rs;
    t.records.materialize(rs);
    for (const auto& r : rs) {
      CHECK_EQ(r.name, op);
      CHECK((r.flags & hotspan::kFlagAsync) != 0);
      CHECK(r.start_ns <= r.end_ns);
    }
    if (t.id == serial) {
      // Serial track: no span starts before the previous one ended (a late
      // end becomes zero-length at the previous end, hence the tie-break).
      std::sort(rs.begin(), rs.end(), [](const SpanRecord& a, const SpanRecord& b) {
        return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
      });
      for (size_t i = 1; i < rs.size(); ++i) CHECK(rs[i].start_ns >= rs[i - 1].end_ns);
      on_serial = rs.size();
    } else {
      on_conc = rs.size();
    }
  }
  CHECK_EQ(on_conc, static_cast<size_t>(kPerProducer * kProducers / 2));
  CHECK_EQ(on_serial, static_cast<size_t>(kPerProducer * kProducers / 2));
}

// ---- flush_thread ----

void test_flush_thread() {
  auto tracer = make_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  const uint32_t name = intern(api, "ft");
  CHECK_EQ(api->flush_thread(api->tracer), HOTSPAN_OK);  // nothing recorded yet: fine
  std::mutex mu;
  std::condition_variable cv;
  bool published = false, release = false;
  std::thread th([&] {
    name_thread(api, "flusher");
    for (int i = 0; i < 10; ++i) {  // far below a batch
      CHECK_EQ(api->begin(api->tracer, name), HOTSPAN_OK);
      CHECK_EQ(api->end(api->tracer), HOTSPAN_OK);
    }
    CHECK_EQ(api->flush_thread(api->tracer), HOTSPAN_OK);
    std::unique_lock<std::mutex> lock(mu);
    published = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return published; });
  }
  // The thread is alive and has not hit a batch boundary: its spans were
  // published by flush_thread alone (either committed or queued).
  size_t visible = 0;
  const FrozenSnapshot snap = tracer->freeze();
  if (const FrozenTimeline* t = find_timeline(snap, thread_timeline_name("flusher"))) {
    visible = t->records.size();
  }
  CHECK(visible == 10 || tracer->pending() >= 10);
  tracer->flush();
  const FrozenSnapshot after = tracer->freeze();
  const FrozenTimeline* t = find_timeline(after, thread_timeline_name("flusher"));
  CHECK(t != nullptr && t->records.size() == 10);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  th.join();
}

// ---- close while threads still record ----

struct Tally {
  uint64_t ok_pairs = 0;        // spans whose end() returned OK
  uint64_t closed = 0;          // HOTSPAN_CLOSED answers
  uint64_t other = 0;           // anything else that is not OK
  uint64_t ok_after_closed = 0; // OK after the first CLOSED: must stay 0
  void note(hotspan_status s) {
    if (s == HOTSPAN_OK) {
      if (closed > 0) ++ok_after_closed;
    } else if (s == HOTSPAN_CLOSED) {
      ++closed;
    } else {
      ++other;
    }
  }
};

// Records chains of 2 nested spans until `stop`; keeps calling after close.
void record_until(const hotspan_api_v1* api, uint32_t outer, uint32_t inner,
                  const std::atomic<bool>& stop, Tally& tally, std::atomic<uint64_t>& progress) {
  while (!stop.load(std::memory_order_relaxed)) {
    const hotspan_status b1 = api->begin(api->tracer, outer);
    tally.note(b1);
    hotspan_status b2 = HOTSPAN_CLOSED;
    if (b1 == HOTSPAN_OK) {
      b2 = api->begin(api->tracer, inner);
      tally.note(b2);
    }
    if (b2 == HOTSPAN_OK) {
      const hotspan_status e = api->end(api->tracer);
      tally.note(e);
      if (e == HOTSPAN_OK) ++tally.ok_pairs;
    }
    if (b1 == HOTSPAN_OK) {
      const hotspan_status e = api->end(api->tracer);
      tally.note(e);
      if (e == HOTSPAN_OK) ++tally.ok_pairs;
    }
    progress.fetch_add(1, std::memory_order_relaxed);
    if (tally.closed > 0) std::this_thread::yield();
  }
}

void wait_progress(const std::atomic<uint64_t>& progress, uint64_t at_least) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (progress.load(std::memory_order_relaxed) < at_least &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(progress.load(std::memory_order_relaxed) >= at_least);
}

// A thread that records `n` spans, leaves one more open, then waits until
// `act` (close or destroy the tracer) ran on the main thread, and only then
// makes its first calls after it: those take the cached fast path.
struct Gated {
  std::mutex mu;
  std::condition_variable cv;
  int phase = 0;  // 1: recorded, 2: acted
  void set(int p) {
    std::lock_guard<std::mutex> lock(mu);
    phase = p;
    cv.notify_all();
  }
  void wait(int p) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return phase >= p; });
  }
};

template <typename Act>
void run_gated(const hotspan_api_v1* api, uint32_t name, const std::string& thread_name, int n,
               Act act) {
  Gated g;
  std::thread th([&] {
    name_thread(api, thread_name);
    for (int i = 0; i < n; ++i) {
      CHECK_EQ(api->begin(api->tracer, name), HOTSPAN_OK);
      CHECK_EQ(api->end(api->tracer), HOTSPAN_OK);
    }
    CHECK_EQ(api->begin(api->tracer, name), HOTSPAN_OK);  // left open
    g.set(1);
    g.wait(2);
    CHECK_EQ(api->begin(api->tracer, name), HOTSPAN_CLOSED);
    CHECK_EQ(api->end(api->tracer), HOTSPAN_CLOSED);
    CHECK_EQ(api->end(api->tracer), HOTSPAN_CLOSED);
    CHECK_EQ(api->begin(api->tracer, name), HOTSPAN_CLOSED);
    CHECK_EQ(api->flush_thread(api->tracer), HOTSPAN_CLOSED);
    CHECK_EQ(api->set_thread_name(api->tracer, "z", 1), HOTSPAN_CLOSED);
  });
  g.wait(1);
  act();
  g.set(2);
  th.join();
}

void test_close_while_recording() {
  auto tracer = make_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  const uint32_t outer = intern(api, "close.outer");
  const uint32_t inner = intern(api, "close.inner");
  std::atomic<bool> stop{false};
  std::vector<Tally> tallies(kThreads);
  std::vector<std::atomic<uint64_t>> progress(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      name_thread(api, "closer#" + std::to_string(i));
      record_until(api, outer, inner, stop, tallies[i], progress[i]);
    });
  }
  for (int i = 0; i < kThreads; ++i) wait_progress(progress[i], 2000);

  tracer->flush();
  const FrozenSnapshot before = tracer->freeze();
  tracer->close();
  CHECK(tracer->closed());
  // Let every thread run on past the close.
  std::vector<uint64_t> at_close(kThreads);
  for (int i = 0; i < kThreads; ++i) at_close[i] = progress[i].load();
  for (int i = 0; i < kThreads; ++i) wait_progress(progress[i], at_close[i] + 200);

  // Every other entry point says closed too (this thread and a fresh one).
  uint32_t id = 0, track = 0;
  uint64_t token = 0;
  CHECK_EQ(api->intern(api->tracer, "late", 4, &id), HOTSPAN_CLOSED);
  CHECK_EQ(api->track(api->tracer, "late", 4, 0, &track), HOTSPAN_CLOSED);
  CHECK_EQ(api->async_begin(api->tracer, 1, outer, &token), HOTSPAN_CLOSED);
  CHECK_EQ(api->async_end(api->tracer, token + 1), HOTSPAN_CLOSED);
  CHECK_EQ(api->set_thread_name(api->tracer, "late", 4), HOTSPAN_CLOSED);
  CHECK_EQ(api->flush_thread(api->tracer), HOTSPAN_CLOSED);
  CHECK_EQ(api->begin(api->tracer, outer), HOTSPAN_CLOSED);
  CHECK_EQ(api->end(api->tracer), HOTSPAN_CLOSED);
  std::thread([api, outer] {
    CHECK_EQ(api->begin(api->tracer, outer), HOTSPAN_CLOSED);
    CHECK_EQ(api->end(api->tracer), HOTSPAN_CLOSED);
    CHECK(!std::isnan(api->now_ms(api->tracer)));
  }).join();

  stop.store(true);
  for (auto& t : threads) t.join();

  tracer->flush();  // a no-op once closed; must not crash
  const FrozenSnapshot after = tracer->freeze();
  for (int i = 0; i < kThreads; ++i) {
    const Tally& t = tallies[i];
    CHECK(t.closed > 0);
    CHECK_EQ(t.ok_after_closed, 0u);
    CHECK_EQ(t.other, 0u);
    const std::string name = thread_timeline_name("closer#" + std::to_string(i));
    const FrozenTimeline* b = find_timeline(before, name);
    const FrozenTimeline* a = find_timeline(after, name);
    CHECK(b != nullptr && a != nullptr);
    if (b == nullptr || a == nullptr) continue;
    CHECK(!b->records.empty());
    // Committed before close: all still there, unchanged.
    CHECK(a->records.size() >= b->records.size());
    CHECK(a->records.size() <= t.ok_pairs);
    for (size_t k = 0; k < b->records.size() && k < a->records.size(); ++k) {
      CHECK_EQ(a->records[k].local_id, b->records[k].local_id);
      CHECK_EQ(a->records[k].start_ns, b->records[k].start_ns);
      CHECK_EQ(a->records[k].end_ns, b->records[k].end_ns);
    }
    check_nesting(*a, true);
  }
}

// The first calls of a recording thread after close, with nothing else
// between: its records before close are kept (close finalizes what was
// stored), the span it left open is not recorded.
void test_close_gated() {
  auto tracer = make_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  const uint32_t name = intern(api, "gated");
  run_gated(api, name, "gated", 300, [&] { tracer->close(); });
  const FrozenSnapshot snap = tracer->freeze();
  const FrozenTimeline* t = find_timeline(snap, thread_timeline_name("gated"));
  CHECK(t != nullptr);
  if (t != nullptr) CHECK_EQ(t->records.size(), size_t{300});
}

// ---- calls after the Tracer object is gone ----

void test_after_tracer_destroyed() {
  auto tracer = make_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  const uint32_t outer = intern(api, "gone.outer");
  const uint32_t inner = intern(api, "gone.inner");
  std::weak_ptr<Tracer> watch = tracer;
  std::atomic<bool> stop{false};
  std::vector<Tally> tallies(kThreads);
  std::vector<std::atomic<uint64_t>> progress(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      name_thread(api, "gone#" + std::to_string(i));
      record_until(api, outer, inner, stop, tallies[i], progress[i]);
    });
  }
  for (int i = 0; i < kThreads; ++i) wait_progress(progress[i], 500);

  tracer.reset();  // no close(): the last owner lets go while threads record
  // Threads may briefly hold it through the table's weak reference; it must
  // still go away.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!watch.expired() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(watch.expired());
  std::vector<uint64_t> at_gone(kThreads);
  for (int i = 0; i < kThreads; ++i) at_gone[i] = progress[i].load();
  for (int i = 0; i < kThreads; ++i) wait_progress(progress[i], at_gone[i] + 200);

  uint32_t id = 0, track = 0;
  uint64_t token = 0;
  CHECK_EQ(api->intern(api->tracer, "x", 1, &id), HOTSPAN_CLOSED);
  CHECK_EQ(api->track(api->tracer, "x", 1, 1, &track), HOTSPAN_CLOSED);
  CHECK_EQ(api->async_begin(api->tracer, 1, outer, &token), HOTSPAN_CLOSED);
  CHECK_EQ(api->async_end(api->tracer, 5), HOTSPAN_CLOSED);
  CHECK_EQ(api->set_thread_name(api->tracer, "x", 1), HOTSPAN_CLOSED);
  CHECK_EQ(api->flush_thread(api->tracer), HOTSPAN_CLOSED);
  CHECK_EQ(api->begin(api->tracer, outer), HOTSPAN_CLOSED);
  CHECK_EQ(api->end(api->tracer), HOTSPAN_CLOSED);
  CHECK(api->now_ns() > 0);
  CHECK(!std::isnan(api->now_ms(api->tracer)));
  std::thread([api, inner] {
    CHECK_EQ(api->begin(api->tracer, inner), HOTSPAN_CLOSED);
    CHECK_EQ(api->set_thread_name(api->tracer, "y", 1), HOTSPAN_CLOSED);
  }).join();

  stop.store(true);
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    CHECK(tallies[i].ok_pairs > 0);
    CHECK(tallies[i].closed > 0);
    CHECK_EQ(tallies[i].ok_after_closed, 0u);
    CHECK_EQ(tallies[i].other, 0u);
  }
}

// ---- one thread, several tracers (the per-thread cache is keyed per table) ----

void test_destroyed_gated() {
  auto tracer = make_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  const uint32_t name = intern(api, "gated");
  run_gated(api, name, "gated", 300, [&] { tracer.reset(); });
  CHECK(tracer == nullptr);
}

void test_two_tracers_one_thread() {
  auto t1 = make_tracer();
  auto t2 = make_tracer();
  const hotspan_api_v1* a1 = hotspan::c_api_for(t1);
  const hotspan_api_v1* a2 = hotspan::c_api_for(t2);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([=] {
      name_thread(a1, "two#" + std::to_string(i));
      name_thread(a2, "two#" + std::to_string(i));
      const uint32_t n1 = intern(a1, "one");
      const uint32_t n2 = intern(a2, "two");
      for (int k = 0; k < 1000; ++k) {
        // Interleaved and crossing: spans nest per (thread, tracer).
        CHECK_EQ(a1->begin(a1->tracer, n1), HOTSPAN_OK);
        CHECK_EQ(a2->begin(a2->tracer, n2), HOTSPAN_OK);
        CHECK_EQ(a1->end(a1->tracer), HOTSPAN_OK);
        CHECK_EQ(a2->end(a2->tracer), HOTSPAN_OK);
      }
      CHECK_EQ(a1->end(a1->tracer), HOTSPAN_NO_OPEN_SPAN);
      CHECK_EQ(a2->end(a2->tracer), HOTSPAN_NO_OPEN_SPAN);
    });
  }
  for (auto& t : threads) t.join();
  // Closing one leaves the other working on the same thread.
  t1->flush();
  t1->close();
  std::thread([=] {
    const uint32_t n2 = intern(a2, "two");
    CHECK_EQ(a1->begin(a1->tracer, 0), HOTSPAN_CLOSED);
    CHECK_EQ(a2->begin(a2->tracer, n2), HOTSPAN_OK);
    CHECK_EQ(a1->end(a1->tracer), HOTSPAN_CLOSED);
    CHECK_EQ(a2->end(a2->tracer), HOTSPAN_OK);
  }).join();
  t2->flush();
  const FrozenSnapshot s2 = t2->freeze();
  size_t n = 0;
  for (const auto& t : s2.timelines) n += t.records.size();
  CHECK_EQ(n, size_t{4 * 1000 + 1});
  const FrozenSnapshot s1 = t1->freeze();
  n = 0;
  for (const auto& t : s1.timelines) n += t.records.size();
  CHECK_EQ(n, size_t{4 * 1000});
}

// One long-lived thread meets many tracers, most of them closed soon after:
// its cache drops what is closed without losing what is live.
// A thread_local made before the thread's first hotspan call is destroyed
// after hotspan's per-thread lists (PerThreadList): calls from its
// destructor must be answered HOTSPAN_CLOSED without touching them, and what
// the thread recorded before still reaches the tracer.
struct LateResults {
  bool ran = false;
  hotspan_status begin = HOTSPAN_OK, end = HOTSPAN_OK, flush = HOTSPAN_OK;
};
LateResults g_late;

struct LateCaller {
  const hotspan_api_v1* api = nullptr;
  uint32_t name = 0;
  ~LateCaller() {
    if (api == nullptr) return;
    g_late.begin = api->begin(api->tracer, name);
    g_late.end = api->end(api->tracer);
    g_late.flush = api->flush_thread(api->tracer);
    g_late.ran = true;
  }
};
thread_local LateCaller t_late;

void test_calls_from_a_later_thread_local_destructor() {
  auto tracer = make_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  const uint32_t n = intern(api, "late");
  std::thread([&] {
    t_late.api = api;  // constructed before hotspan's lists: destroyed after them
    t_late.name = n;
    CHECK_EQ(api->begin(api->tracer, n), HOTSPAN_OK);
    CHECK_EQ(api->end(api->tracer), HOTSPAN_OK);
  }).join();
  CHECK(g_late.ran);
  CHECK_EQ(g_late.begin, HOTSPAN_CLOSED);
  CHECK_EQ(g_late.end, HOTSPAN_CLOSED);
  CHECK_EQ(g_late.flush, HOTSPAN_CLOSED);
  tracer->flush();
  size_t late = 0;
  for (const auto& t : tracer->freeze().timelines) {
    for (const SpanRecord r : t.records) late += r.name == n;
  }
  CHECK_EQ(late, size_t{1});
}

void test_many_tracers_one_thread() {
  constexpr int kTracers = 40;
  std::vector<std::shared_ptr<Tracer>> tracers;
  std::vector<const hotspan_api_v1*> apis;
  for (int i = 0; i < kTracers; ++i) {
    tracers.push_back(make_tracer());
    apis.push_back(hotspan::c_api_for(tracers.back()));
  }
  std::thread([&] {
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < kTracers; ++i) {
        const hotspan_api_v1* api = apis[i];
        const bool keep = i % 5 == 0;
        if (round > 0 && !keep) {
          CHECK_EQ(api->begin(api->tracer, 0), HOTSPAN_CLOSED);
          CHECK_EQ(api->end(api->tracer), HOTSPAN_CLOSED);
          continue;
        }
        const uint32_t name = intern(api, "many");
        CHECK_EQ(api->begin(api->tracer, name), HOTSPAN_OK);
        CHECK_EQ(api->end(api->tracer), HOTSPAN_OK);
        if (round == 0 && !keep) {
          tracers[i]->close();
          if (i % 2 == 1) tracers[i].reset();  // and some are destroyed too
        }
      }
    }
  }).join();
  for (int i = 0; i < kTracers; ++i) {
    if (!tracers[i]) continue;
    tracers[i]->flush();
    const FrozenSnapshot snap = tracers[i]->freeze();
    size_t n = 0, timelines = 0;
    for (const auto& t : snap.timelines) {
      if (t.kind != TimelineKind::kNative) continue;
      ++timelines;
      n += t.records.size();
    }
    CHECK_EQ(timelines, size_t{1});  // one thread, one timeline, across rounds
    CHECK_EQ(n, size_t{i % 5 == 0 ? 3u : 1u});
  }
}

}  // namespace

// What JS refuses, the C ABI refuses too (issue 16, finding 6).
void test_refuses_what_js_refuses() {
  auto tracer = make_tracer();
  const hotspan_api_v1* api = hotspan::c_api_for(tracer);
  uint32_t id = 0, track = 0;
  CHECK_EQ(api->intern(api->tracer, "x", 0, &id), HOTSPAN_INVALID);
  CHECK_EQ(api->track(api->tracer, "q", 0, 0, &track), HOTSPAN_INVALID);
  CHECK_EQ(api->set_thread_name(api->tracer, "t", 0), HOTSPAN_INVALID);
  // A name used by a concurrent track is not a serial track, and back.
  CHECK_EQ(api->track(api->tracer, "conc", 4, 0, &track), HOTSPAN_OK);
  uint32_t again = 0;
  CHECK_EQ(api->track(api->tracer, "conc", 4, 1, &again), HOTSPAN_INVALID);
  CHECK_EQ(api->track(api->tracer, "conc", 4, 0, &again), HOTSPAN_OK);
  CHECK_EQ(again, track);
  CHECK_EQ(api->track(api->tracer, "ser", 3, 1, &track), HOTSPAN_OK);
  CHECK_EQ(api->track(api->tracer, "ser", 3, 0, &again), HOTSPAN_INVALID);
  // Nothing was created by the refusals.
  tracer->flush();
  const FrozenSnapshot snap = tracer->freeze();
  for (const auto& t : snap.timelines) CHECK(t.name != "track: " && t.name != "native: ");
}

int main() {
  RUN_TEST(test_table_and_arguments);
  RUN_TEST(test_refuses_what_js_refuses);
  RUN_TEST(test_nested_many_threads);
  RUN_TEST(test_intern_many_threads);
  RUN_TEST(test_thread_names);
  RUN_TEST(test_async_cross_thread);
  RUN_TEST(test_flush_thread);
  RUN_TEST(test_close_while_recording);
  RUN_TEST(test_close_gated);
  RUN_TEST(test_after_tracer_destroyed);
  RUN_TEST(test_destroyed_gated);
  RUN_TEST(test_two_tracers_one_thread);
  RUN_TEST(test_many_tracers_one_thread);
  RUN_TEST(test_calls_from_a_later_thread_local_destructor);
  return check_report("c_api_test");
}
