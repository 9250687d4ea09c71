#include "read/stats.h"

#include <algorithm>
#include <memory>

#include "read/log_linear_histogram.h"

namespace hotspan {

namespace {

template <typename SnapshotT>
std::vector<StatsRow> stats_of(const SnapshotT& snapshot) {
  // Name ids are dense small integers; a record may still carry an id beyond
  // the snapshot's name table (a name interned after the table was copied), so
  // the index grows to the largest id seen.
  std::vector<std::unique_ptr<LogLinearHistogram>> by_name(snapshot.names.size());
  for (const auto& tl : snapshot.timelines) {
    for (const SpanRecord& r : tl.records) {
      if (r.name >= by_name.size()) by_name.resize(static_cast<size_t>(r.name) + 1);
      std::unique_ptr<LogLinearHistogram>& h = by_name[r.name];
      if (!h) h.reset(new LogLinearHistogram());
      h->record(r.end_ns - r.start_ns);
    }
  }

  std::vector<StatsRow> rows;
  for (size_t id = 0; id < by_name.size(); ++id) {
    const LogLinearHistogram* h = by_name[id].get();
    if (!h) continue;
    StatsRow row;
    row.name = static_cast<uint32_t>(id);
    row.count = h->count();
    row.total_ns = h->total();
    row.min_ns = h->min();
    row.max_ns = h->max();
    row.mean_ns = h->mean();
    row.p50_ns = h->quantile(0.50);
    row.p90_ns = h->quantile(0.90);
    row.p99_ns = h->quantile(0.99);
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end(), [](const StatsRow& a, const StatsRow& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return a.name < b.name;
  });
  return rows;
}

}  // namespace

std::vector<StatsRow> compute_stats(const Snapshot& snapshot) { return stats_of(snapshot); }
std::vector<StatsRow> compute_stats(const FrozenSnapshot& snapshot) { return stats_of(snapshot); }

}  // namespace hotspan
