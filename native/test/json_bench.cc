// Micro-benchmark of the Chrome JSON writer and compute_stats (not a ctest):
//   json_bench [spans]   (default 1000000)
// Spans are spread over 4 thread timelines and one track, ~10% with
// attributes; reports the best of 5 runs as spans/s and MB/s.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "chrome_json_writer.h"
#include "stats.h"
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
    for (uint32_t local = 1; local <= n; ++local) {
      SpanRecord r{};
      r.start_ns = now;
      r.end_ns = now + 200 + static_cast<int64_t>(rng() % 100000);
      now = r.end_ns + 37;
      r.local_id = local;
      r.parent_local = local > 1 && (local & 3) ? local - 1 : 0;
      r.name = static_cast<uint32_t>(rng() % s.names.size());
      r.depth = r.parent_local ? 1 : 0;
      if (local % 10 == 0) {
        r.flags |= kFlagAttrs;
        tl.attrs.emplace_back(local, "{\"rows\":12,\"table\":\"users\"}");
      }
      tl.records.push_back(r);
    }
    s.timelines.push_back(std::move(tl));
  }

  double best = 1e30;
  size_t bytes = 0;
  for (int run = 0; run < 5; ++run) {
    std::string out;
    auto t0 = std::chrono::steady_clock::now();
    write_chrome_json(s, origin, hotspan_test::kTestClocks, out);
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    bytes = out.size();
  }
  std::printf("chrome json: %zu spans, %.1f MB, best %.1f ms: %.2f M spans/s, %.0f MB/s\n", spans, bytes / 1e6,
              best * 1e3, spans / best / 1e6, bytes / best / 1e6);

  double best_stats = 1e30;
  for (int run = 0; run < 5; ++run) {
    auto t0 = std::chrono::steady_clock::now();
    auto rows = compute_stats(s);
    auto t1 = std::chrono::steady_clock::now();
    if (rows.size() != s.names.size()) std::printf("unexpected row count %zu\n", rows.size());
    best_stats = std::min(best_stats, std::chrono::duration<double>(t1 - t0).count());
  }
  std::printf("compute_stats: %zu spans, best %.1f ms: %.1f M spans/s\n", spans, best_stats * 1e3,
              spans / best_stats / 1e6);
  return 0;
}
