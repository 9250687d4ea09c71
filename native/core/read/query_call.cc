#include "read/query_call.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hotspan {

namespace {

// An integer in [lo, hi], or false.
bool whole(double d, double lo, double hi, int64_t& out) {
  if (!(d >= lo && d <= hi) || std::floor(d) != d) return false;
  out = static_cast<int64_t>(d);
  return true;
}

constexpr double kMaxSafe = 9007199254740991.0;

}  // namespace

template <typename SnapshotT>
QueryStatus query_call(const SnapshotQuery<SnapshotT>& q, const double* args, size_t nargs,
                       bool has_name, std::string_view name, std::vector<double>& out) {
  out.clear();
  if (nargs != kQueryArgs) return QueryStatus::kBadArgs;
  int64_t op, groups, timeline, within, min_depth, except;
  if (!whole(args[0], 1, 6, op) || !whole(args[1], 0, 1, groups) ||
      !whole(args[2], -1, 4294967295.0, timeline) || !whole(args[3], -1, kMaxSafe, within) ||
      !whole(args[4], 0, 65536, min_depth) || !whole(args[5], 0, kMaxSafe, except)) {
    return QueryStatus::kBadArgs;
  }
  RecordFilter f;
  f.groups = groups == 1;
  f.any_timeline = timeline < 0;
  f.timeline = static_cast<uint32_t>(timeline < 0 ? 0 : timeline);
  f.min_depth = static_cast<uint32_t>(min_depth);
  f.except = static_cast<uint64_t>(except);
  // A name never interned matches nothing.
  const bool unknown_name = has_name && !q.name_id(name, f.name);
  f.any_name = !has_name;
  SpanRecord group{};
  if (within >= 0) {
    if (static_cast<uint64_t>(within) >= q.size()) return QueryStatus::kBadArgs;
    group = q.record(static_cast<uint64_t>(within));
    f.from_ns = group.start_ns;
    f.to_ns = group.end_ns;
  }
  if (unknown_name) f.from_ns = f.to_ns = 0;  // an empty range

  switch (static_cast<QueryOp>(op)) {
    case QueryOp::kTotals: {
      const RecordTotals t = q.totals(f);
      out = {static_cast<double>(t.count), t.total_ms, t.min_ms, t.max_ms};
      break;
    }
    case QueryOp::kOrdered:
    case QueryOp::kDurations: {
      const std::vector<uint64_t> order = q.ordered(f);
      out.reserve(order.size());
      for (uint64_t i : order) {
        if (static_cast<QueryOp>(op) == QueryOp::kOrdered) {
          out.push_back(static_cast<double>(i));
        } else {
          const SpanRecord r = q.record(i);
          out.push_back(q.ms(r.end_ns) - q.ms(r.start_ns));
        }
      }
      break;
    }
    case QueryOp::kNth: {
      int64_t index;
      if (!whole(args[6], -kMaxSafe, kMaxSafe, index)) return QueryStatus::kBadArgs;
      uint64_t found = 0, count = 0;
      const bool ok = q.nth(f, index, found, count);
      out = {ok ? static_cast<double>(found) : -1.0, static_cast<double>(count)};
      break;
    }
    case QueryOp::kUnion: {
      const bool clip = args[6] == 1 && within >= 0;
      const int64_t lo = clip ? group.start_ns : std::numeric_limits<int64_t>::min();
      const int64_t hi = clip ? group.end_ns : std::numeric_limits<int64_t>::max();
      std::vector<double> gaps;
      const double busy = q.busy(f, lo, hi, args[7] == 1 ? &gaps : nullptr);
      out.reserve(gaps.size() + 1);
      out.push_back(busy);
      out.insert(out.end(), gaps.begin(), gaps.end());
      break;
    }
    case QueryOp::kGroupOf: {
      if (!std::isfinite(args[6])) return QueryStatus::kBadArgs;
      uint64_t found = 0;
      out = {q.group_of(args[6], f.except, found) ? static_cast<double>(found) : -1.0};
      break;
    }
  }
  return QueryStatus::kOk;
}

template QueryStatus query_call(const SnapshotQuery<FrozenSnapshot>&, const double*, size_t, bool,
                                std::string_view, std::vector<double>&);
template QueryStatus query_call(const SnapshotQuery<Snapshot>&, const double*, size_t, bool,
                                std::string_view, std::vector<double>&);

}  // namespace hotspan
