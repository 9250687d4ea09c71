// SnapshotQuery against brute force over the same hand-built records: random
// timelines whose ends mostly never decrease (the binary-search window) and
// one with caller-chosen times (ends out of order, spans ending before they
// start: the full scan), random name and group-range filters.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "check.h"
#include "read/query_call.h"
#include "snapshot_builders.h"
#include "read/snapshot_query.h"

namespace {

using hotspan::RecordFilter;
using hotspan::Snapshot;
using hotspan::SnapshotQuery;
using hotspan::SpanRecord;
using hotspan::TimelineKind;
using hotspan_test::rec;
using hotspan_test::timeline;

struct Flat {
  uint64_t index;
  uint64_t id;
  SpanRecord r;
  bool groups;
  uint32_t timeline;
};

Snapshot random_snapshot(std::mt19937_64& g, std::vector<Flat>& flat) {
  Snapshot s;
  s.names = {"a", "b", "c", "step"};
  s.timelines.push_back(timeline(1, "main", TimelineKind::kJs));
  s.timelines.push_back(timeline(2, "track: net", TimelineKind::kTrack));
  s.timelines.push_back(timeline(3, "caller times", TimelineKind::kNative));
  s.timelines.push_back(timeline(4, "groups", TimelineKind::kGroups));
  s.timelines.push_back(timeline(5, "empty", TimelineKind::kNative));
  s.timelines.push_back(timeline(6, "ends in order, some before their starts", TimelineKind::kNative));
  std::uniform_int_distribution<int> small(0, 3), dur(0, 40), step(0, 6);
  for (size_t t : {0, 1, 2, 3, 5}) {
    auto& tl = s.timelines[t];
    int64_t end = 1000;
    for (uint32_t i = 1; i <= 400; ++i) {
      int64_t start, stop;
      if (t == 2) {  // arbitrary: out of end order, some ending before they start
        start = 1000 + static_cast<int64_t>(g() % 3000);
        stop = start + dur(g) - 8;
      } else {
        end += step(g);
        stop = end;
        start = stop - (t == 3 ? dur(g) * 10 : dur(g));
        if (t == 5 && i % 7 == 0) start = stop + 50;
      }
      tl.records.push_back(rec(i, 0, t == 3 ? 3 : static_cast<uint32_t>(small(g) % 3), start, stop,
                               static_cast<uint16_t>(small(g))));
    }
  }
  uint64_t index = 0;
  for (auto& tl : s.timelines) {
    for (const SpanRecord& r : tl.records) {
      flat.push_back({index++, hotspan::make_span_id(tl.id, r.local_id), r, tl.kind == TimelineKind::kGroups, tl.id});
    }
  }
  return s;
}

bool matches(const RecordFilter& f, const Flat& x) {
  return x.groups == f.groups && (f.any_timeline || x.timeline == f.timeline) &&
         (f.any_name || x.r.name == f.name) && x.r.start_ns >= f.from_ns && x.r.start_ns < f.to_ns &&
         x.r.depth >= f.min_depth && x.id != f.except;
}

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

void check_filter(const SnapshotQuery<Snapshot>& q, const std::vector<Flat>& flat, const RecordFilter& f) {
  std::vector<Flat> want;
  for (const Flat& x : flat) {
    if (matches(f, x)) want.push_back(x);
  }
  std::stable_sort(want.begin(), want.end(), [](const Flat& a, const Flat& b) {
    return a.r.start_ns != b.r.start_ns ? a.r.start_ns < b.r.start_ns : a.id < b.id;
  });
  const hotspan::RecordTotals t = q.totals(f);
  CHECK_EQ(t.count, want.size());
  double total = 0;
  for (const Flat& x : want) total += ms(x.r.end_ns) - ms(x.r.start_ns);
  CHECK(std::fabs(t.total_ms - total) < 1e-9);

  const std::vector<uint64_t> order = q.ordered(f);
  CHECK_EQ(order.size(), want.size());
  for (size_t k = 0; k < std::min(order.size(), want.size()); ++k) CHECK_EQ(order[k], want[k].index);

  for (int64_t k : {0, 1, 5, -1, -2, -7, 399, 1000}) {
    uint64_t found = 0, count = 0;
    const bool ok = q.nth(f, k, found, count);
    const int64_t at = k < 0 ? static_cast<int64_t>(want.size()) + k : k;
    CHECK_EQ(count, want.size());
    CHECK_EQ(ok, at >= 0 && at < static_cast<int64_t>(want.size()));
    if (ok && at >= 0 && at < static_cast<int64_t>(want.size())) CHECK_EQ(found, want[at].index);
  }

  // Union in start order, as lib/read/query.ts did it.
  std::vector<std::pair<int64_t, int64_t>> u;
  for (const Flat& x : want) {
    if (x.r.end_ns < x.r.start_ns) continue;
    if (!u.empty() && x.r.start_ns <= u.back().second) {
      u.back().second = std::max(u.back().second, x.r.end_ns);
    } else {
      u.push_back({x.r.start_ns, x.r.end_ns});
    }
  }
  double busy = 0;
  std::vector<double> gaps;
  for (size_t k = 0; k < u.size(); ++k) {
    busy += ms(u[k].second) - ms(u[k].first);
    if (k > 0) gaps.push_back(ms(u[k].first) - ms(u[k - 1].second));
  }
  std::vector<double> got_gaps;
  const double got = q.busy(f, INT64_MIN, INT64_MAX, &got_gaps);
  CHECK(std::fabs(got - busy) < 1e-9);
  CHECK_EQ(got_gaps.size(), gaps.size());
  for (size_t k = 0; k < std::min(gaps.size(), got_gaps.size()); ++k) CHECK(std::fabs(gaps[k] - got_gaps[k]) < 1e-12);
}

}  // namespace

int main() {
  std::mt19937_64 g(12);
  for (int round = 0; round < 4; ++round) {
    std::vector<Flat> flat;
    const Snapshot s = random_snapshot(g, flat);
    const SnapshotQuery<Snapshot> q(s, 0);
    CHECK_EQ(q.size(), flat.size());
    for (const Flat& x : flat) CHECK_EQ(q.span_id(x.index), x.id);
    for (int k = 0; k < 200; ++k) {
      RecordFilter f;
      f.groups = g() % 5 == 0;
      if (g() % 3 == 0) {
        f.any_timeline = false;
        f.timeline = static_cast<uint32_t>(1 + g() % 6);
      }
      if (g() % 2 == 0) {
        f.any_name = false;
        f.name = static_cast<uint32_t>(g() % 4);
      }
      if (g() % 4 != 0) {
        f.from_ns = 1000 + static_cast<int64_t>(g() % 3000);
        f.to_ns = f.from_ns + static_cast<int64_t>(g() % 600);
      }
      f.min_depth = static_cast<uint32_t>(g() % 3 == 0 ? g() % 3 : 0);
      if (g() % 4 == 0) f.except = flat[g() % flat.size()].id;
      check_filter(q, flat, f);
    }
    // Through the numbers-in entry point: an unknown name matches nothing,
    // bad arguments are refused.
    std::vector<double> out;
    const double totals_of_nothing[hotspan::kQueryArgs] = {1, 0, -1, -1, 0, 0, 0, 0};
    CHECK(hotspan::query_call(q, totals_of_nothing, hotspan::kQueryArgs, true, "never interned", out) ==
          hotspan::QueryStatus::kOk);
    CHECK_EQ(out.size(), size_t{4});
    if (!out.empty()) CHECK_EQ(out[0], 0.0);
    const double bad_op[hotspan::kQueryArgs] = {9, 0, -1, -1, 0, 0, 0, 0};
    CHECK(hotspan::query_call(q, bad_op, hotspan::kQueryArgs, false, "", out) == hotspan::QueryStatus::kBadArgs);
    const double bad_within[hotspan::kQueryArgs] = {1, 0, -1, 1e9, 0, 0, 0, 0};
    CHECK(hotspan::query_call(q, bad_within, hotspan::kQueryArgs, false, "", out) == hotspan::QueryStatus::kBadArgs);
  }
  return check::result("snapshot_query_test");
}
