// Log-linear histogram and compute_stats: quantiles against exact
// nearest-rank quantiles of the same values, exact count/min/max/total.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "read/log_linear_histogram.h"
#include "check.h"
#include "read/stats.h"

namespace {

using hotspan::LogLinearHistogram;

// The test's own nearest-rank reference, in integer arithmetic: the value at
// 1-based rank ceil(k * n / 1000) (k per mille), at least 1.
int64_t exact_quantile(const std::vector<int64_t>& sorted, uint64_t k_permille) {
  uint64_t n = sorted.size();
  uint64_t rank = (k_permille * n + 999) / 1000;
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return sorted[rank - 1];
}

const uint64_t kPermilles[] = {0, 1, 10, 100, 250, 333, 500, 750, 900, 950, 990, 999, 1000};

// Worst relative error seen over all checks, reported at the end.
double g_worst_rel = 0;

void check_distribution(const char* label, std::vector<int64_t> values) {
  LogLinearHistogram h;
  int64_t total = 0;
  for (int64_t v : values) {
    h.record(v);
    total += v;
  }
  std::sort(values.begin(), values.end());
  CHECK_EQ(h.count(), static_cast<uint64_t>(values.size()));
  CHECK_EQ(h.total(), total);
  CHECK_EQ(h.min(), values.front());
  CHECK_EQ(h.max(), values.back());
  CHECK(std::fabs(h.mean() - static_cast<double>(total) / values.size()) <= 1e-9 * std::fabs(h.mean()) + 1e-9);

  for (uint64_t k : kPermilles) {
    double q = static_cast<double>(k) / 1000.0;
    // (A value, not std::max's reference to temporaries: CHECK_EQ binds by reference.)
    const uint64_t want_rank =
        std::max<uint64_t>(1, std::min<uint64_t>(values.size(), (k * values.size() + 999) / 1000));
    CHECK_EQ(LogLinearHistogram::nearest_rank(q, values.size()), want_rank);
    int64_t exact = exact_quantile(values, k);
    double approx = h.quantile(q);
    double err = std::fabs(approx - static_cast<double>(exact));
    // The documented bound (1/256) and the promised one (1%).
    bool ok = exact == 0 ? approx == 0 : err <= static_cast<double>(exact) / 256.0;
    bool within_1pct = exact == 0 ? approx == 0 : err <= 0.01 * static_cast<double>(exact);
    if (exact > 0) g_worst_rel = std::max(g_worst_rel, err / static_cast<double>(exact));
    if (!ok || !within_1pct) {
      check::fail(__FILE__, __LINE__,
                  check::fmt("%s n=%zu q=%.3f: exact %lld approx %.3f (rel %.5f)", label, values.size(), q,
                      static_cast<long long>(exact), approx, exact ? err / static_cast<double>(exact) : err));
    }
  }
}

void test_bucket_geometry() {
  // Buckets tile [0, 2^63) without gaps and every value lies in its bucket,
  // within 1/256 of the representative.
  uint64_t expect_low = 0;
  for (int p = 0; p < LogLinearHistogram::kPages; ++p) {
    for (int s = 0; s < LogLinearHistogram::kSub; ++s) {
      int64_t lo = LogLinearHistogram::bucket_low(p, s);
      int64_t w = LogLinearHistogram::bucket_width(p);
      CHECK_EQ(static_cast<uint64_t>(lo), expect_low);
      expect_low = static_cast<uint64_t>(lo) + static_cast<uint64_t>(w);
      int pp, ss;
      LogLinearHistogram::locate(lo, pp, ss);
      CHECK(pp == p && ss == s);
      LogLinearHistogram::locate(lo + (w - 1), pp, ss);
      CHECK(pp == p && ss == s);
      if (w > 1) CHECK(lo >= 128 * w);
    }
  }
  CHECK_EQ(expect_low, uint64_t{1} << 63);  // the last bucket ends at 2^63

  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    int64_t v = static_cast<int64_t>(rng() >> (1 + rng() % 63));
    int p, s;
    LogLinearHistogram::locate(v, p, s);
    int64_t lo = LogLinearHistogram::bucket_low(p, s);
    CHECK(v >= lo && v - lo < LogLinearHistogram::bucket_width(p));
    double rep = LogLinearHistogram::representative(p, s);
    CHECK(std::fabs(rep - static_cast<double>(v)) <= static_cast<double>(v) / 256.0);
  }
  // Small values are exact.
  for (int64_t v = 0; v < 256; ++v) {
    int p, s;
    LogLinearHistogram::locate(v, p, s);
    CHECK_EQ(LogLinearHistogram::representative(p, s), static_cast<double>(v));
  }
}

void test_nearest_rank() {
  CHECK_EQ(LogLinearHistogram::nearest_rank(0.5, 4), uint64_t{2});
  CHECK_EQ(LogLinearHistogram::nearest_rank(0.5, 5), uint64_t{3});
  CHECK_EQ(LogLinearHistogram::nearest_rank(0.9, 10), uint64_t{9});
  CHECK_EQ(LogLinearHistogram::nearest_rank(0.99, 100), uint64_t{99});
  CHECK_EQ(LogLinearHistogram::nearest_rank(0.901, 10), uint64_t{10});
  CHECK_EQ(LogLinearHistogram::nearest_rank(0.0, 10), uint64_t{1});
  CHECK_EQ(LogLinearHistogram::nearest_rank(1.0, 10), uint64_t{10});
  CHECK_EQ(LogLinearHistogram::nearest_rank(0.5, 1), uint64_t{1});

  LogLinearHistogram h;
  CHECK_EQ(h.quantile(0.5), 0.0);
  CHECK_EQ(h.count(), uint64_t{0});
  for (int64_t v : {1, 2, 3, 4}) h.record(v);
  CHECK_EQ(h.quantile(0.5), 2.0);
  CHECK_EQ(h.quantile(0.75), 3.0);
  CHECK_EQ(h.quantile(0.76), 4.0);
  h.record(-5);  // clamped to 0
  CHECK_EQ(h.min(), int64_t{0});
  CHECK_EQ(h.total(), int64_t{10});

  // Copies are deep.
  LogLinearHistogram c = h;
  h.record(1000000);
  CHECK_EQ(c.count(), uint64_t{5});
  CHECK_EQ(c.quantile(1.0), 4.0);
  CHECK_EQ(h.quantile(1.0), 1000000.0);
}

void test_distributions() {
  std::mt19937_64 rng(12345);
  const size_t sizes[] = {1, 2, 3, 7, 100, 1001, 100000};
  for (size_t n : sizes) {
    std::vector<int64_t> v(n);

    std::uniform_int_distribution<int64_t> uni(0, 1000000);
    for (auto& x : v) x = uni(rng);
    check_distribution("uniform 0..1e6", v);

    // Lognormal over ~ 10 decades (median e^10 ns = 22 us, sigma 3).
    std::lognormal_distribution<double> logn(10.0, 3.0);
    for (auto& x : v) x = static_cast<int64_t>(std::min(logn(rng), 4e18));
    check_distribution("lognormal", v);

    for (auto& x : v) x = 12345;
    check_distribution("constant", v);

    std::uniform_int_distribution<int64_t> tiny(0, 200);
    for (auto& x : v) x = tiny(rng);
    check_distribution("tiny 0..200", v);

    std::uniform_int_distribution<int64_t> huge(1000000000, 1000000000000);
    for (auto& x : v) x = huge(rng);
    if (n > 2) v[1] = 1000000000000;
    check_distribution("huge 1e9..1e12", v);

    // Values sitting on bucket edges (lo and lo + w - 1), the worst case.
    for (auto& x : v) {
      int p = 1 + static_cast<int>(rng() % 30), s = static_cast<int>(rng() % 128);
      int64_t lo = LogLinearHistogram::bucket_low(p, s);
      x = (rng() & 1) ? lo : lo + LogLinearHistogram::bucket_width(p) - 1;
    }
    check_distribution("bucket edges", v);
  }
}

hotspan::SpanRecord rec(uint32_t local, uint32_t name, int64_t start, int64_t dur) {
  hotspan::SpanRecord r{};
  r.start_ns = start;
  r.end_ns = start + dur;
  r.local_id = local;
  r.name = name;
  return r;
}

void test_compute_stats() {
  using namespace hotspan;
  Snapshot snap;
  snap.names = {"a", "b", "c", "unused", "d", "e"};
  snap.timelines.resize(3);
  snap.timelines[0].id = 1;
  snap.timelines[0].kind = TimelineKind::kJs;
  snap.timelines[1].id = 2;
  snap.timelines[1].kind = TimelineKind::kTrack;
  snap.timelines[2].id = 3;
  snap.timelines[2].kind = TimelineKind::kGroups;

  std::mt19937_64 rng(99);
  std::vector<std::vector<int64_t>> durs(8);
  uint32_t local = 0;
  auto add = [&](size_t tl, uint32_t name, int64_t dur) {
    ++local;
    snap.timelines[tl].records.push_back(rec(local, name, 1000 * int64_t{local}, dur));
    durs[name].push_back(std::max<int64_t>(dur, 0));
  };
  std::lognormal_distribution<double> logn(8.0, 2.0);
  // "a" on a thread and a track, "b" only on the track, "c" only as groups.
  for (int i = 0; i < 5000; ++i) add(0, 0, static_cast<int64_t>(logn(rng)));
  for (int i = 0; i < 3000; ++i) add(1, 0, static_cast<int64_t>(logn(rng)));
  for (int i = 0; i < 777; ++i) add(1, 1, 100000 + static_cast<int64_t>(rng() % 900000));
  for (int i = 0; i < 10; ++i) add(2, 2, 50000000 + i);
  // "d" and "e": the same total (tie broken by name id), one negative duration.
  add(0, 5, 500);
  add(0, 5, 500);
  add(0, 4, 1000);
  add(0, 4, -7);
  // A record whose name id is past the name table still counts.
  add(0, 7, 42);

  std::vector<StatsRow> rows = compute_stats(snap);
  CHECK_EQ(rows.size(), size_t{6});  // a, b, c, d, e, #7; not "unused"
  for (size_t i = 1; i < rows.size(); ++i) {
    CHECK(rows[i - 1].total_ns > rows[i].total_ns ||
            (rows[i - 1].total_ns == rows[i].total_ns && rows[i - 1].name < rows[i].name));
  }
  bool saw_d_before_e = false;
  for (size_t i = 0; i + 1 < rows.size(); ++i)
    if (rows[i].name == 4 && rows[i + 1].name == 5) saw_d_before_e = true;
  CHECK(saw_d_before_e);

  for (const StatsRow& row : rows) {
    CHECK(row.name != 3);
    std::vector<int64_t> v = durs[row.name];
    CHECK(!v.empty());
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    int64_t total = 0;
    for (int64_t x : v) total += x;
    CHECK_EQ(row.count, static_cast<uint64_t>(v.size()));
    CHECK_EQ(row.total_ns, total);
    CHECK_EQ(row.min_ns, v.front());
    CHECK_EQ(row.max_ns, v.back());
    CHECK(std::fabs(row.mean_ns - static_cast<double>(total) / v.size()) < 1e-6);
    const std::pair<double, uint64_t> qs[] = {{row.p50_ns, 500}, {row.p90_ns, 900}, {row.p99_ns, 990}};
    for (const auto& q : qs) {
      int64_t exact = exact_quantile(v, q.second);
      double err = std::fabs(q.first - static_cast<double>(exact));
      if (!(err <= 0.01 * static_cast<double>(exact))) {
        check::fail(__FILE__, __LINE__,
                    check::fmt("stats name %u p%.1f: exact %lld got %.3f", row.name, q.second / 10.0,
                        static_cast<long long>(exact), q.first));
      }
    }
  }
  // Rows carry the groups' and the track's records.
  for (const StatsRow& row : rows) {
    if (row.name == 0) CHECK_EQ(row.count, uint64_t{8000});
    if (row.name == 2) {
      CHECK_EQ(row.count, uint64_t{10});
      CHECK_EQ(row.min_ns, int64_t{50000000});
    }
    if (row.name == 4) CHECK_EQ(row.min_ns, int64_t{0});
  }

  Snapshot empty;
  empty.names = {"x"};
  CHECK(compute_stats(empty).empty());
}

}  // namespace

int main() {
  RUN_TEST(test_bucket_geometry);
  RUN_TEST(test_nearest_rank);
  RUN_TEST(test_distributions);
  RUN_TEST(test_compute_stats);
  std::printf("worst relative quantile error: %.5f (bound 1/256 = %.5f)\n", g_worst_rel, 1.0 / 256);
  return check::result("stats_test");
}
