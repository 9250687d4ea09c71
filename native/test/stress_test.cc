// The multi-thread stress test: 8 producers (native threads on the enqueue
// path and extra threads attached as holders)
// record nested spans, async spans and groups, while a reader thread calls
// flush(), freeze() and stats() in a loop. Afterwards every record must be
// present exactly once with valid ids, parents and times. Run under TSan by
// run.sh, which also builds it with the timeline lock removed and requires
// that build to fail (the negative control).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "check.h"
#include "record/clock.h"
#include "test_util.h"
#include "record/tracer.h"
#include "read/stats.h"

using namespace hotspan;

namespace {

constexpr int kNative = 5;
constexpr int kHolders = 3;
constexpr int kProducers = kNative + kHolders;
constexpr uint64_t kSpansPerThread = 25'000 + 17;  // not a multiple of any batch or chunk
constexpr int kAsyncPerThread = 200;
constexpr int kGroupRounds = 100;  // nested pairs, recorded by holder 0
constexpr int kAttrsEvery = 61;

struct Produced {
  uint32_t timeline = 0;
  uint64_t spans = 0;
  uint64_t with_attrs = 0;
  bool holder = false;
};

struct Names {
  uint32_t root, child, leaf, async_op, group_outer, group_inner;
};

// Records exactly kSpansPerThread spans in trees of varying shape.
void record_spans(Tracer& t, ThreadState& st, const Names& nm, Produced& out,
                  uint32_t serial_track, uint32_t conc_track, int seed) {
  uint64_t done = 0;
  uint64_t counter = 0;
  int async_left = kAsyncPerThread;
  uint64_t open_async = 0;
  auto open = [&](uint32_t name) {
    ++counter;
    Status s;
    if (counter % kAttrsEvery == 0) {
      s = begin_with_attrs(st, name, clock::now_ns(),
                           "{\"n\":" + std::to_string(counter) + ",\"seed\":" + std::to_string(seed) + "}");
      if (s == Status::kOk) ++out.with_attrs;
    } else {
      s = begin(st, name, clock::now_ns());
    }
    CHECK_EQ(s, Status::kOk);
  };
  auto close = [&](uint16_t flags = 0) { CHECK_EQ(end(st, clock::now_ns(), flags), Status::kOk); };

  uint32_t shape = static_cast<uint32_t>(seed);
  while (done < kSpansPerThread) {
    const uint64_t left = kSpansPerThread - done;
    switch (shape++ % 4) {
      case 0: {  // a chain, depth 1..6
        const uint32_t d = static_cast<uint32_t>(std::min<uint64_t>(1 + shape % 6, left));
        for (uint32_t k = 0; k < d; ++k) open(k == 0 ? nm.root : nm.child);
        for (uint32_t k = 0; k < d; ++k) close(k == 0 && shape % 7 == 0 ? kFlagError : 0);
        done += d;
        break;
      }
      case 1: {  // root with up to 3 leaves
        const uint32_t leaves = static_cast<uint32_t>(std::min<uint64_t>(3, left - 1));
        open(nm.root);
        for (uint32_t k = 0; k < leaves; ++k) {
          open(nm.leaf);
          close();
        }
        close();
        done += 1 + leaves;
        break;
      }
      case 2: {  // root > child > 2 leaves
        if (left < 4) {
          open(nm.leaf);
          close();
          done += 1;
          break;
        }
        open(nm.root);
        open(nm.child);
        open(nm.leaf);
        close();
        open(nm.leaf);
        close();
        close();
        close();
        done += 4;
        break;
      }
      default: {  // a lone span, plus async work on the tracks
        open(nm.leaf);
        close();
        done += 1;
        if (async_left > 0) {
          // One async span open at a time, alternating between the tracks.
          if (open_async != 0) {
            CHECK_EQ(t.async_end(open_async, clock::now_ns()), Status::kOk);
            --async_left;
          }
          const uint32_t tr = (async_left % 2 == 0) ? serial_track : conc_track;
          open_async = async_left > 0 ? t.async_begin(tr, nm.async_op, clock::now_ns()) : 0;
          CHECK(async_left == 0 || open_async != 0);
        }
        break;
      }
    }
    // Give the reader (and the other producers) a turn now and then, so the
    // snapshots really interleave with recording on a 2-core machine.
    if ((shape % 256) == 0) std::this_thread::yield();
  }
  CHECK_EQ(async_left, 0);
  CHECK_EQ(open_async, uint64_t{0});
  CHECK_EQ(open_depth(st), size_t{0});
  out.spans = done;
}

// Cheap checks the reader can afford on every concurrent snapshot.
void check_snapshot_shape(const FrozenSnapshot& s, std::map<uint32_t, size_t>& last_counts) {
  for (const auto& tl : s.timelines) {
    size_t& last = last_counts[tl.id];
    CHECK(tl.records.size() >= last);  // committed only grows
    last = tl.records.size();
    for (const auto& r : tl.records) {
      if (!(r.start_ns <= r.end_ns && r.local_id != 0 && r.name < s.names.size() &&
            r.local_id <= kSpansPerThread + kAsyncPerThread + 2 * kGroupRounds)) {
        CHECK(!"corrupt record in a concurrent snapshot");
        return;
      }
    }
    if (tl.attrs.size() > tl.records.size()) CHECK(!"more attribute entries than records");
  }
}

}  // namespace

int main() {
  TracerOptions opts;
  opts.wake_high_water = 4096;
  auto t = Tracer::create(opts);
  Names nm{t->intern("root"), t->intern("child"), t->intern("leaf"), t->intern("async.op"),
           t->intern("group.outer"), t->intern("group.inner")};
  const uint32_t serial_track = t->track("gpu0", true);
  const uint32_t conc_track = t->track("net", false);

  std::atomic<int> wakes{0};
  std::atomic<bool> wake_flag{false};
  t->set_wake([&] {
    wakes.fetch_add(1, std::memory_order_relaxed);
    wake_flag.store(true, std::memory_order_release);
  });

  std::vector<Produced> produced(kProducers);
  std::atomic<int> running{kProducers};
  std::atomic<bool> start{false};

  // Reader: flush and snapshot concurrently with the producers.
  std::atomic<uint64_t> reader_iterations{0};
  std::thread reader([&] {
    std::map<uint32_t, size_t> last_counts;
    uint64_t i = 0;
    while (running.load(std::memory_order_acquire) > 0) {
      ++i;
      // Two snapshots back to back, then a drain (as the wake would ask).
      check_snapshot_shape(t->freeze(), last_counts);
      check_snapshot_shape(t->freeze(), last_counts);
      if (wake_flag.exchange(false, std::memory_order_acq_rel) || i % 2 == 0) t->flush();
      if (i % 16 == 0) {
        const auto rows = hotspan::compute_stats(t->freeze());
        CHECK(rows.size() <= t->name_count());
      }
      (void)t->pending();
      (void)t->open_async();
      if (i == 1) start.store(true, std::memory_order_release);  // producers go after one pass
    }
    reader_iterations.store(i);
  });

  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    const bool holder = p >= kNative;
    producers.emplace_back([&, p, holder] {
      while (!start.load(std::memory_order_acquire)) std::this_thread::yield();
      Produced& out = produced[p];
      out.holder = holder;
      if (holder) {
        // An extra "JS" thread: a holder, finalizing and draining itself.
        auto st = t->attach_js_thread("worker " + std::to_string(p));
        out.timeline = timeline_id(*st);
        if (p == kNative) {
          for (int g = 0; g < kGroupRounds; ++g) {
            CHECK_EQ(t->group_begin(nm.group_outer, clock::now_ns()), Status::kOk);
            CHECK_EQ(t->group_begin(nm.group_inner, clock::now_ns()), Status::kOk);
            CHECK_EQ(t->group_end(clock::now_ns()), Status::kOk);
            CHECK_EQ(t->group_end(clock::now_ns()), Status::kOk);
          }
        }
        record_spans(*t, *st, nm, out, serial_track, conc_track, p);
        t->detach_thread(*st, clock::now_ns());  // env cleanup
      } else {
        auto st = t->native_thread();
        CHECK(st != nullptr);
        if (!st) return;
        out.timeline = timeline_id(*st);
        t->set_thread_name(*st, "producer#" + std::to_string(p));
        record_spans(*t, *st, nm, out, serial_track, conc_track, p);
        if (p % 2 == 0) CHECK_EQ(publish(*st), Status::kOk);
        // Thread exit publishes the rest and marks the timeline exited.
      }
    });
  }
  for (auto& th : producers) th.join();
  running.store(0, std::memory_order_release);
  reader.join();

  t->flush();
  CHECK_EQ(t->pending(), size_t{0});
  CHECK_EQ(t->open_async(), size_t{0});
  CHECK_EQ(t->open_groups(), size_t{0});
  const FrozenSnapshot s = t->freeze();

  std::unordered_map<uint32_t, const FrozenTimeline*> by_id;
  for (const auto& tl : s.timelines) by_id[tl.id] = &tl;

  // Exact per-thread counts and attribute counts.
  uint64_t total_expected = 0;
  std::set<uint32_t> producer_timelines;
  for (int p = 0; p < kProducers; ++p) {
    const Produced& pr = produced[p];
    CHECK_EQ(pr.spans, kSpansPerThread);
    CHECK(producer_timelines.insert(pr.timeline).second);
    auto it = by_id.find(pr.timeline);
    CHECK(it != by_id.end());
    if (it == by_id.end()) continue;
    const FrozenTimeline& tl = *it->second;
    CHECK_EQ(tl.records.size(), pr.spans);
    CHECK_EQ(tl.attrs.size(), pr.with_attrs);
    CHECK(tl.exited);
    CHECK(tl.kind == (pr.holder ? TimelineKind::kJs : TimelineKind::kNative));
    if (!pr.holder) CHECK_EQ(tl.name, "native: producer#" + std::to_string(p));
    total_expected += pr.spans;
  }

  // Every span id once; parents on the same timeline, one level up, enclosing.
  std::set<uint64_t> span_ids;
  uint64_t thread_records = 0, serial_records = 0, conc_records = 0, group_records = 0;
  for (const auto& tl : s.timelines) {
    std::unordered_map<uint32_t, SpanRecord> local;  // copies: frozen records are read in place
    local.reserve(tl.records.size());
    for (const SpanRecord r : tl.records) {
      CHECK(span_ids.insert(make_span_id(tl.id, r.local_id)).second);
      CHECK(local.emplace(r.local_id, r).second);
      CHECK(r.start_ns <= r.end_ns);
      CHECK(r.name < s.names.size());
    }
    if (tl.kind == TimelineKind::kTrack) {
      (tl.id == serial_track ? serial_records : conc_records) += tl.records.size();
      if (tl.serial) {
        for (size_t i = 1; i < tl.records.size(); ++i) {
          CHECK(tl.records[i].start_ns >= tl.records[i - 1].end_ns);
        }
      }
      continue;
    }
    if (tl.kind == TimelineKind::kGroups) group_records += tl.records.size();
    if (producer_timelines.count(tl.id)) thread_records += tl.records.size();
    for (const auto& r : tl.records) {
      CHECK_EQ(r.flags & (kFlagAbandoned | kFlagAsync | kFlagParentElsewhere), 0);
      if (r.depth == 0) {
        CHECK_EQ(r.parent_local, 0u);
        continue;
      }
      auto it = local.find(r.parent_local);
      CHECK(it != local.end());
      if (it == local.end()) continue;
      const SpanRecord& parent = it->second;
      CHECK_EQ(parent.depth + 1, static_cast<int>(r.depth));
      CHECK(parent.start_ns <= r.start_ns && r.end_ns <= parent.end_ns);
    }
  }
  CHECK_EQ(thread_records, total_expected);
  CHECK_EQ(total_expected, kSpansPerThread * kProducers);
  CHECK_EQ(serial_records, uint64_t{kProducers * kAsyncPerThread / 2});
  CHECK_EQ(conc_records, uint64_t{kProducers * kAsyncPerThread / 2});
  CHECK_EQ(group_records, uint64_t{2 * kGroupRounds});

  const auto rows = hotspan::compute_stats(t->freeze());
  uint64_t counted = 0;
  for (const auto& row : rows) counted += row.count;
  CHECK_EQ(counted, thread_records + serial_records + conc_records + group_records);

  std::printf("stress: %llu spans on %d threads, %llu reader iterations, %d wakes\n",
              static_cast<unsigned long long>(thread_records), kProducers,
              static_cast<unsigned long long>(reader_iterations.load()), wakes.load());
  CHECK(reader_iterations.load() > 0);
  return check::result("stress_test");
}
