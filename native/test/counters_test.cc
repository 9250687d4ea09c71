// Counter series: samples from any thread, exact counts, refusals, the bound,
// and both writers' counter output (the vitest suite decodes them with their
// real consumers: test/counters.test.ts).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "write/chrome_json_writer.h"
#include "record/counter_store.h"
#include "write/perfetto_writer.h"
#include "record/tracer.h"

using namespace hotspan;

// Threads add to shared series at once: every sample is kept, each series
// in its threads' order (ThreadSanitizer checks the lock).
static void threads_exact() {
  auto t = Tracer::create();
  constexpr int kThreads = 4, kEach = 20000;
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&t, k] {
      const std::string own = "own " + std::to_string(k);
      for (int i = 0; i < kEach; ++i) {
        CHECK_EQ(t->counter("shared", i, static_cast<double>(k)), Status::kOk);
        CHECK_EQ(t->counter(own, i, static_cast<double>(i)), Status::kOk);
      }
    });
  }
  for (auto& th : threads) th.join();
  const FrozenSnapshot s = t->freeze();
  CHECK_EQ(s.counters.size(), size_t{kThreads + 1});
  for (const CounterSeries& c : s.counters) {
    CHECK_EQ(c.dropped, uint64_t{0});
    if (c.name == "shared") {
      CHECK_EQ(c.samples.size(), size_t{kThreads * kEach});
      std::vector<int> per(kThreads, 0);
      for (const CounterSample& x : c.samples) {
        const int k = static_cast<int>(x.value);
        CHECK_EQ(x.ns, static_cast<int64_t>(per[k]));  // each thread's samples in its order
        ++per[k];
      }
    } else {
      CHECK_EQ(c.samples.size(), size_t{kEach});
      for (int i = 0; i < kEach; ++i) CHECK_EQ(c.samples[i].value, static_cast<double>(i));
    }
  }
}

static void refusals_and_bound() {
  auto t = Tracer::create();
  CHECK_EQ(t->counter("x", 1, std::numeric_limits<double>::quiet_NaN()), Status::kInvalid);
  CHECK_EQ(t->counter("x", 1, std::numeric_limits<double>::infinity()), Status::kInvalid);
  CHECK(t->freeze().counters.empty());
  CounterStore store;
  for (size_t i = 0; i < CounterStore::kMaxSamples + 5; ++i) CHECK(store.add("full", static_cast<int64_t>(i), 1.0));
  const auto all = store.copy();
  CHECK_EQ(all.size(), size_t{1});
  CHECK_EQ(all[0].samples.size(), CounterStore::kMaxSamples);
  CHECK_EQ(all[0].dropped, uint64_t{5});
  t->close();
  CHECK_EQ(t->counter("x", 1, 1.0), Status::kClosed);
}

// The writers' counter output, byte for byte where it is short.
static void writers() {
  Snapshot s;
  s.counters.push_back(CounterSeries{"loop \"delay\"", {{1000000, 2.5}, {3000000, 0.1}}, 0});
  const ClockReadings clocks{0, 0, -1};
  std::string json;
  write_chrome_json(s, 0, clocks, json);
  CHECK(json.find("{\"name\":\"loop \\\"delay\\\"\",\"ph\":\"C\",\"ts\":1000,\"pid\":1,\"tid\":0,"
                  "\"args\":{\"value\":2.5}}") != std::string::npos);
  CHECK(json.find("\"ts\":3000,\"pid\":1,\"tid\":0,\"args\":{\"value\":0.1}}") != std::string::npos);
  std::string pb;
  write_perfetto(s, 0, clocks, pb);
  // The counter descriptor (TrackDescriptor.counter, field 8, empty) and the
  // first value's fixed64 (field 44) are in the bytes.
  CHECK(pb.find(std::string("\x42\x00", 2)) != std::string::npos);
  double v = 2.5;
  std::string fixed(8, '\0');
  std::memcpy(&fixed[0], &v, 8);
  CHECK(pb.find(std::string("\xE1\x02", 2) + fixed) != std::string::npos);
  CHECK(json.find("hotspan_counters_dropped") == std::string::npos);
  CHECK(pb.find("dropped") == std::string::npos);

  // A full series' drop count, with the counter, in both formats.
  s.counters[0].dropped = 7;
  s.counters.push_back(CounterSeries{"y", {{1000000, 1}}, 2});
  json.clear();
  write_chrome_json(s, 0, clocks, json);
  CHECK(json.find("\"},\"hotspan_counters_dropped\":{\"loop \\\"delay\\\"\":7,\"y\":2}}}\n") != std::string::npos);
  pb.clear();
  write_perfetto(s, 0, clocks, pb);
  CHECK(pb.find("7 samples dropped: the series was full") != std::string::npos);
  CHECK(pb.find("2 samples dropped: the series was full") != std::string::npos);
}

static size_t occurrences(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

// The incremental writers: a series continued over batches is one track
// (one descriptor, written again when its drop count grows), its drops summed.
static void incremental_writers() {
  Snapshot b1, b2;
  b1.counters.push_back(CounterSeries{"q", {{1000, 1.5}}, 3});
  b2.counters.push_back(CounterSeries{"q", {{2000, 2.5}}, 4});
  b2.counters.push_back(CounterSeries{"r", {{2000, 7}}, 0});
  const DocumentInfo doc{0, ClockReadings{0, 0, -1}, {}};
  std::string json;
  {
    ChromeJsonWriter w(doc, json);
    w.append(b1);
    w.append(b2, true);
    w.finish();
  }
  CHECK_EQ(occurrences(json, "\"ph\":\"C\""), size_t{3});
  CHECK(json.find("\"hotspan_counters_dropped\":{\"q\":7}}}\n") != std::string::npos);
  std::string pb;
  {
    PerfettoWriter w(doc, pb);
    w.append(b1);
    w.append(b2, true);
    w.finish();
  }
  // Descriptors: q (3 dropped), q again (7), r; three counter events.
  CHECK_EQ(occurrences(pb, std::string("\x42\x00", 2)), size_t{3});
  CHECK_EQ(occurrences(pb, "3 samples dropped"), size_t{1});
  CHECK_EQ(occurrences(pb, "7 samples dropped"), size_t{1});
  CHECK_EQ(occurrences(pb, std::string("\xE1\x02", 2)), size_t{3});
}

int main() {
  threads_exact();
  refusals_and_bound();
  writers();
  incremental_writers();
  return check::result("counters_test");
}
