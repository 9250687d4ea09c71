// Micro-benchmark of the Perfetto writer (not a ctest):
//   perfetto_bench [spans]   (default 1000000)
// The json_bench workload: spans over 4 thread timelines (nested, in end
// order as the core stores them) and one concurrent track, ~10% with
// attributes; reports the best of 5 runs as spans/s, MB/s and bytes/span.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "perfetto_writer.h"
#include "snapshot_builders.h"

using namespace hotspan;

int main(int argc, char** argv) {
  size_t spans = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  Snapshot s;
  s.names = {"db.query", "http.request", "parse", "render.template", "cache.get", "fs.readFile",
             "json.stringify", "auth.check"};
  std::mt19937_64 rng(1);
  const int64_t origin = 864000123456789;
  for (uint32_t t = 1; t <= 5; ++t) {
    SnapshotTimeline tl;
    tl.id = t;
    tl.name = t == 5 ? "track: io" : "worker " + std::to_string(t);
    tl.kind = t == 5 ? TimelineKind::kTrack : TimelineKind::kJs;
    size_t n = spans / 5 + (t == 1 ? spans % 5 : 0);
    int64_t now = origin + 1000;
    // Pairs: a parent containing one child (child stored first: end order).
    for (uint32_t local = 1; local + 1 <= n; local += 2) {
      SpanRecord parent{}, child{};
      parent.start_ns = now;
      child.start_ns = now + 50;
      child.end_ns = child.start_ns + 100 + static_cast<int64_t>(rng() % 50000);
      parent.end_ns = child.end_ns + 40;
      now = parent.end_ns + 37;
      parent.local_id = local;
      child.local_id = local + 1;
      child.parent_local = tl.kind == TimelineKind::kTrack ? 0 : local;
      child.depth = tl.kind == TimelineKind::kTrack ? 0 : 1;
      parent.name = static_cast<uint32_t>(rng() % s.names.size());
      child.name = static_cast<uint32_t>(rng() % s.names.size());
      if (local % 10 == 1) {
        child.flags |= kFlagAttrs;
        tl.attrs.emplace_back(local + 1, "{\"rows\":12,\"table\":\"users\"}");
      }
      tl.records.push_back(child);
      tl.records.push_back(parent);
    }
    s.timelines.push_back(std::move(tl));
  }
  size_t total = 0;
  for (const auto& tl : s.timelines) total += tl.records.size();

  double best = 1e30;
  size_t bytes = 0;
  for (int run = 0; run < 5; ++run) {
    std::string out;
    auto t0 = std::chrono::steady_clock::now();
    write_perfetto(s, origin, hotspan_test::kTestClocks, out);
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    bytes = out.size();
  }
  std::printf("perfetto: %zu spans, %.1f MB (%.1f bytes/span), best %.1f ms: %.2f M spans/s, %.0f MB/s\n", total,
              bytes / 1e6, static_cast<double>(bytes) / total, best * 1e3, total / best / 1e6, bytes / best / 1e6);

  // Streamed in 1 MiB blocks to a sink that only counts: the formatting
  // alone, without faulting in a buffer for the whole document.
  struct Count : BlockSink {
    Count() : BlockSink(1 << 20) {}
    void take(const char*, size_t n) override { bytes += n; }
    size_t bytes = 0;
  };
  double best_stream = 1e30;
  for (int run = 0; run < 5; ++run) {
    Count sink;
    auto t0 = std::chrono::steady_clock::now();
    write_perfetto(s, origin, hotspan_test::kTestClocks, sink);
    auto t1 = std::chrono::steady_clock::now();
    best_stream = std::min(best_stream, std::chrono::duration<double>(t1 - t0).count());
  }
  std::printf("perfetto streamed: best %.1f ms: %.2f M spans/s\n", best_stream * 1e3, total / best_stream / 1e6);
  return 0;
}
