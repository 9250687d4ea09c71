// The query API (lib/read/query.ts) evaluated over a snapshot's records where they
// are stored: filters, totals, order statistics and interval unions, without
// materializing a record per span. A result names records by their global
// index: the position in the snapshot, timelines in order and records in
// order within each (the order snapshot() hands them out), so a caller
// materializes only the records it returns.
//
// Semantics are lib/read/query.ts's: "start order" is (start, span id); a span
// belongs to a group when group.start <= span.start < group.end; times compare
// in ns, which orders them exactly as the ms a snapshot hands out. Time
// results are ms on the performance.now() axis (origin_ns given).
//
// SnapshotT is FrozenSnapshot (the addon: records read in place) or Snapshot
// (the WebAssembly core: the js backend's columns). Not thread-safe, like the
// FrozenRecords it reads.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "record/tracer.h"

namespace hotspan {

// Which records a step reads.
struct RecordFilter {
  bool groups = false;        // the groups timeline's records; else every other timeline's
  bool any_timeline = true;   // else only timeline `timeline`
  uint32_t timeline = 0;
  bool any_name = true;       // else only name `name`
  uint32_t name = 0;
  int64_t from_ns = std::numeric_limits<int64_t>::min();  // start in [from_ns, to_ns)
  int64_t to_ns = std::numeric_limits<int64_t>::max();
  uint32_t min_depth = 0;     // depth >= min_depth
  uint64_t except = 0;        // a span id to leave out (0: none)
};

struct RecordTotals {
  uint64_t count = 0;
  double total_ms = 0, min_ms = 0, max_ms = 0;  // min and max: of durations, when count > 0
};

template <typename SnapshotT>
class SnapshotQuery {
 public:
  // `snapshot` must outlive the query.
  SnapshotQuery(const SnapshotT& snapshot, int64_t origin_ns);

  uint64_t size() const { return first_.back(); }
  // The timeline index and record index of a global index (< size()).
  void locate(uint64_t index, size_t& timeline, uint32_t& record) const;
  SpanRecord record(uint64_t index) const;
  uint64_t span_id(uint64_t index) const;
  double ms(int64_t ns) const;
  // False when no record can carry the name (it was never interned).
  bool name_id(std::string_view name, uint32_t& id) const;

  RecordTotals totals(const RecordFilter& f) const;
  // Global indices in start order.
  std::vector<uint64_t> ordered(const RecordFilter& f) const;
  // The `index`-th record in start order (0-based; negative counts from the
  // end); false when there is none. `count` is the number that matched.
  bool nth(const RecordFilter& f, int64_t index, uint64_t& out, uint64_t& count) const;
  // The union of the records' [start, end] clipped to [lo_ns, hi_ns] (a
  // record left empty by the clip is skipped): the time it covers, ms, and
  // when `gaps` is given, the gaps between its intervals in time order, ms.
  double busy(const RecordFilter& f, int64_t lo_ns, int64_t hi_ns, std::vector<double>* gaps) const;
  // The innermost group (the first in start order among the deepest) with
  // start <= start_ms < end, other than span `except`; false when none.
  bool group_of(double start_ms, uint64_t except, uint64_t& out) const;

 private:
  template <typename Fn>
  void scan(const RecordFilter& f, Fn&& fn) const;

  // How a timeline's records lie in time, learned on the first range scan:
  // a timeline whose ends never decrease and whose spans never end before
  // they start (every timeline not fed caller-chosen times) answers a start
  // range by a binary search on ends, and stops once ends pass the range's
  // end by its longest span.
  struct Layout {
    bool by_end = false;
    int64_t longest = 0;  // ns
  };
  // Learns a Layout from a timeline's records, in order.
  struct LayoutScan {
    bool by_end = true;
    int64_t longest = 0;
    int64_t last_end = std::numeric_limits<int64_t>::min();
    void add(const SpanRecord& r) {
      by_end = by_end && r.end_ns >= last_end && r.end_ns >= r.start_ns;
      if (r.end_ns - r.start_ns > longest) longest = r.end_ns - r.start_ns;
      last_end = r.end_ns;
    }
  };
  const Layout& layout(size_t t) const;
  void learn(size_t t, const LayoutScan& scan) const;
  // The records [begin, end) of timeline t that can start in [from, to).
  void window(size_t t, int64_t from, int64_t to, uint32_t& begin, uint32_t& end) const;

  const SnapshotT& snap_;
  int64_t origin_ns_;
  std::vector<uint64_t> first_;  // each timeline's first global index, then size()
  mutable std::unordered_map<std::string, uint32_t> names_;  // built on first use
  mutable std::vector<Layout> layouts_;
  mutable std::vector<bool> laid_out_;
};

extern template class SnapshotQuery<FrozenSnapshot>;
extern template class SnapshotQuery<Snapshot>;

}  // namespace hotspan
