#include "read/snapshot_query.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <utility>

#include "record/clock.h"

namespace hotspan {

namespace {

// A record's place in start order.
struct StartKey {
  int64_t start;
  uint64_t id;
  uint64_t index;
  bool operator<(const StartKey& o) const { return start != o.start ? start < o.start : id < o.id; }
};

struct Interval {
  int64_t start, end;
  bool operator<(const Interval& o) const { return start < o.start; }
};

}  // namespace

template <typename SnapshotT>
SnapshotQuery<SnapshotT>::SnapshotQuery(const SnapshotT& snapshot, int64_t origin_ns)
    : snap_(snapshot), origin_ns_(origin_ns) {
  first_.reserve(snap_.timelines.size() + 1);
  uint64_t n = 0;
  for (const auto& tl : snap_.timelines) {
    first_.push_back(n);
    n += tl.records.size();
  }
  first_.push_back(n);
  layouts_.resize(snap_.timelines.size());
  laid_out_.resize(snap_.timelines.size());
}

template <typename SnapshotT>
const typename SnapshotQuery<SnapshotT>::Layout& SnapshotQuery<SnapshotT>::layout(size_t t) const {
  if (!laid_out_[t]) {
    const auto& records = snap_.timelines[t].records;
    const uint32_t n = static_cast<uint32_t>(records.size());
    LayoutScan scan;
    for (uint32_t i = 0; i < n && scan.by_end; ++i) scan.add(records[i]);
    learn(t, scan);
  }
  return layouts_[t];
}

template <typename SnapshotT>
void SnapshotQuery<SnapshotT>::learn(size_t t, const LayoutScan& scan) const {
  layouts_[t].by_end = scan.by_end;
  layouts_[t].longest = scan.longest;
  laid_out_[t] = true;
}

template <typename SnapshotT>
void SnapshotQuery<SnapshotT>::window(size_t t, int64_t from, int64_t to, uint32_t& begin,
                                      uint32_t& end) const {
  const auto& records = snap_.timelines[t].records;
  begin = 0;
  end = static_cast<uint32_t>(records.size());
  const bool bounded = from != std::numeric_limits<int64_t>::min() || to != std::numeric_limits<int64_t>::max();
  if (!bounded || end == 0) return;
  const Layout& l = layout(t);
  if (!l.by_end) return;
  // A record that ends before `from` started before it; one that ends at or
  // after `to` + longest started at or after `to`.
  uint32_t lo = 0, hi = end;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (records[mid].end_ns < from) lo = mid + 1; else hi = mid;
  }
  begin = lo;
  if (to > std::numeric_limits<int64_t>::max() - l.longest) return;
  const int64_t stop = to + l.longest;
  hi = end;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (records[mid].end_ns < stop) lo = mid + 1; else hi = mid;
  }
  end = lo;
}

template <typename SnapshotT>
void SnapshotQuery<SnapshotT>::locate(uint64_t index, size_t& timeline, uint32_t& record) const {
  // The last timeline whose first index is <= index (empty timelines share it).
  auto it = std::upper_bound(first_.begin(), first_.end() - 1, index) - 1;
  timeline = static_cast<size_t>(it - first_.begin());
  record = static_cast<uint32_t>(index - *it);
}

template <typename SnapshotT>
SpanRecord SnapshotQuery<SnapshotT>::record(uint64_t index) const {
  size_t t;
  uint32_t i;
  locate(index, t, i);
  return snap_.timelines[t].records[i];
}

template <typename SnapshotT>
uint64_t SnapshotQuery<SnapshotT>::span_id(uint64_t index) const {
  size_t t;
  uint32_t i;
  locate(index, t, i);
  return make_span_id(snap_.timelines[t].id, snap_.timelines[t].records[i].local_id);
}

template <typename SnapshotT>
double SnapshotQuery<SnapshotT>::ms(int64_t ns) const {
  return clock::to_ms(ns, origin_ns_);
}

template <typename SnapshotT>
bool SnapshotQuery<SnapshotT>::name_id(std::string_view name, uint32_t& id) const {
  if (names_.empty()) {
    for (uint32_t i = 0; i < snap_.names.size(); ++i) names_.emplace(snap_.names[i], i);
  }
  auto it = names_.find(std::string(name));
  if (it == names_.end()) return false;
  id = it->second;
  return true;
}

template <typename SnapshotT>
template <typename Fn>
void SnapshotQuery<SnapshotT>::scan(const RecordFilter& f, Fn&& fn) const {
  for (size_t t = 0; t < snap_.timelines.size(); ++t) {
    const auto& tl = snap_.timelines[t];
    if ((tl.kind == TimelineKind::kGroups) != f.groups) continue;
    if (!f.any_timeline && tl.id != f.timeline) continue;
    uint32_t begin, end;
    window(t, f.from_ns, f.to_ns, begin, end);
    // A scan of a whole timeline learns its layout on the way, so a range
    // step after it costs no scan of its own.
    const bool learning = !laid_out_[t] && begin == 0 && end == tl.records.size();
    LayoutScan layout_scan;
    for (uint32_t i = begin; i < end; ++i) {
      const SpanRecord r = tl.records[i];
      if (learning) layout_scan.add(r);
      if (!f.any_name && r.name != f.name) continue;
      if (r.start_ns < f.from_ns || r.start_ns >= f.to_ns || r.depth < f.min_depth) continue;
      const uint64_t id = make_span_id(tl.id, r.local_id);
      if (id == f.except) continue;
      fn(first_[t] + i, id, r);
    }
    if (learning) learn(t, layout_scan);
  }
}

template <typename SnapshotT>
RecordTotals SnapshotQuery<SnapshotT>::totals(const RecordFilter& f) const {
  RecordTotals out;
  scan(f, [&](uint64_t, uint64_t, const SpanRecord& r) {
    // The duration a snapshot's record has: end ms - start ms.
    const double d = ms(r.end_ns) - ms(r.start_ns);
    if (out.count == 0 || d < out.min_ms) out.min_ms = d;
    if (out.count == 0 || d > out.max_ms) out.max_ms = d;
    out.total_ms += d;
    ++out.count;
  });
  return out;
}

template <typename SnapshotT>
std::vector<uint64_t> SnapshotQuery<SnapshotT>::ordered(const RecordFilter& f) const {
  std::vector<StartKey> keys;
  scan(f, [&](uint64_t index, uint64_t id, const SpanRecord& r) { keys.push_back({r.start_ns, id, index}); });
  std::sort(keys.begin(), keys.end());
  std::vector<uint64_t> out;
  out.reserve(keys.size());
  for (const StartKey& k : keys) out.push_back(k.index);
  return out;
}

template <typename SnapshotT>
bool SnapshotQuery<SnapshotT>::nth(const RecordFilter& f, int64_t index, uint64_t& out,
                                   uint64_t& count) const {
  // Keeps only the |index| + 1 (or |index|, from the end) records nearest the
  // wanted end: memory in the index, not in the records.
  const bool from_end = index < 0;
  const uint64_t keep = from_end ? static_cast<uint64_t>(-(index + 1)) + 1 : static_cast<uint64_t>(index) + 1;
  count = 0;
  if (from_end) {
    // The `keep` latest: a min-heap whose top is the keep-th from the end.
    auto later = [](const StartKey& a, const StartKey& b) { return b < a; };
    std::priority_queue<StartKey, std::vector<StartKey>, decltype(later)> heap(later);
    scan(f, [&](uint64_t i, uint64_t id, const SpanRecord& r) {
      ++count;
      const StartKey k{r.start_ns, id, i};
      if (heap.size() < keep) {
        heap.push(k);
      } else if (heap.top() < k) {
        heap.pop();
        heap.push(k);
      }
    });
    if (heap.size() < keep) return false;
    out = heap.top().index;
    return true;
  }
  std::priority_queue<StartKey> heap;  // the `keep` earliest; top: the keep-th
  scan(f, [&](uint64_t i, uint64_t id, const SpanRecord& r) {
    ++count;
    const StartKey k{r.start_ns, id, i};
    if (heap.size() < keep) {
      heap.push(k);
    } else if (k < heap.top()) {
      heap.pop();
      heap.push(k);
    }
  });
  if (heap.size() < keep) return false;
  out = heap.top().index;
  return true;
}

template <typename SnapshotT>
double SnapshotQuery<SnapshotT>::busy(const RecordFilter& f, int64_t lo_ns, int64_t hi_ns,
                                      std::vector<double>* gaps) const {
  std::vector<Interval> spans;
  scan(f, [&](uint64_t, uint64_t, const SpanRecord& r) {
    const Interval v{std::max(r.start_ns, lo_ns), std::min(r.end_ns, hi_ns)};
    if (v.end >= v.start) spans.push_back(v);
  });
  // Merged intervals do not depend on the order among equal starts.
  std::sort(spans.begin(), spans.end());
  double total = 0;
  size_t i = 0;
  bool first = true;
  int64_t last_end = 0;
  while (i < spans.size()) {
    Interval cur = spans[i++];
    while (i < spans.size() && spans[i].start <= cur.end) cur.end = std::max(cur.end, spans[i++].end);
    if (!first && gaps != nullptr) gaps->push_back(ms(cur.start) - ms(last_end));
    total += ms(cur.end) - ms(cur.start);
    last_end = cur.end;
    first = false;
  }
  return total;
}

template <typename SnapshotT>
bool SnapshotQuery<SnapshotT>::group_of(double start_ms, uint64_t except, uint64_t& out) const {
  RecordFilter f;
  f.groups = true;
  f.except = except;
  bool found = false;
  StartKey best{};
  uint16_t best_depth = 0;
  scan(f, [&](uint64_t i, uint64_t id, const SpanRecord& r) {
    if (!(start_ms >= ms(r.start_ns) && start_ms < ms(r.end_ns))) return;
    const StartKey k{r.start_ns, id, i};
    if (!found || r.depth > best_depth || (r.depth == best_depth && k < best)) {
      found = true;
      best = k;
      best_depth = r.depth;
    }
  });
  if (found) out = best.index;
  return found;
}

template class SnapshotQuery<FrozenSnapshot>;
template class SnapshotQuery<Snapshot>;

}  // namespace hotspan
