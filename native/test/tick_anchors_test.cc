// Tick -> ns conversion against an exact reference: short segments (the
// fixed-point route) within 2 ns below it, long segments (an idle writer:
// exact division, 128-bit products) and extrapolation equal to it,
// conversion never decreasing with the tick, and trimming (trim_below) and
// partial copies (assign_from) that leave every tick from the given low on
// converting exactly as before; ns -> tick (to_tick) converting back to
// the ns it was given, within a tick and the fixed-point route's 2 ns.
#include <cstdint>
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <random>
#include <vector>

#include "check.h"
#include "record/tick_anchors.h"

namespace {

using hotspan::TickAnchors;
using hotspan::clock::Anchor;

// floor((2 dt dn + den) / (2 den)) + a.ns, in 128-bit arithmetic.
int64_t reference(Anchor a, Anchor b, int64_t tick) {
  const __int128 dt = static_cast<__int128>(tick) - a.tick;
  const __int128 dn = static_cast<__int128>(b.ns) - a.ns;
  const __int128 den = static_cast<__int128>(b.tick) - a.tick;
  const __int128 num = 2 * dt * dn + den;
  __int128 q = num / (2 * den);
  if (num % (2 * den) != 0 && num < 0) --q;
  return static_cast<int64_t>(a.ns + q);
}

void check_segments(int64_t max_tick_step, int64_t max_ns_step, uint32_t seed) {
  std::mt19937_64 rng(seed);
  TickAnchors anchors;
  std::vector<Anchor> list;
  Anchor cur{1'000'000'000, 5'000'000'000};
  for (int i = 0; i < 64; ++i) {
    list.push_back(cur);
    CHECK(anchors.append(cur));
    cur.tick += 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(max_tick_step));
    cur.ns += 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(max_ns_step));
  }
  size_t hint = 0;
  for (size_t i = 0; i + 1 < list.size(); ++i) {
    const Anchor a = list[i];
    const Anchor b = list[i + 1];
    const bool fast = b.tick - a.tick < TickAnchors::kFastSegmentTicks && b.ns - a.ns < (int64_t{1} << 30);
    std::vector<int64_t> ticks;
    for (int k = 0; k < 200; ++k) {
      ticks.push_back(a.tick + static_cast<int64_t>(rng() % static_cast<uint64_t>(b.tick - a.tick)));
    }
    ticks.push_back(b.tick - 1);
    std::sort(ticks.begin(), ticks.end());
    int64_t prev = INT64_MIN;
    for (int64_t tick : ticks) {
      const int64_t got = anchors.to_ns(tick, hint);
      const int64_t want = reference(a, b, tick);
      if (fast) {
        CHECK(got <= want && got >= want - 2);
      } else {
        CHECK_EQ(got, want);
      }
      CHECK(got >= prev);
      prev = got;
    }
    CHECK(anchors.to_ns(b.tick, hint) >= prev);  // into the next segment
    CHECK_EQ(anchors.to_ns(a.tick, hint), a.ns);
  }
  // Before the first and past the last anchor: the outer segments extended.
  CHECK_EQ(anchors.to_ns(list[0].tick - 12345, hint), reference(list[0], list[1], list[0].tick - 12345));
  const Anchor y = list[list.size() - 2];
  const Anchor z = list.back();
  CHECK_EQ(anchors.to_ns(z.tick + 987654321, hint), reference(y, z, z.tick + 987654321));
}

// to_tick, then to_ns, gives back the ns within the ns of one tick (the
// steepest segment's) and 2 ns, inside the anchors and outside them; and
// to_tick never decreases with the ns.
void check_inverse(int64_t max_tick_step, int64_t max_ns_step, uint32_t seed) {
  std::mt19937_64 rng(seed);
  TickAnchors anchors;
  Anchor cur{3'000'000'000, 8'000'000'000};
  const Anchor first = cur;
  double ns_per_tick = 0;
  for (int i = 0; i < 64; ++i) {
    CHECK(anchors.append(cur));
    const int64_t dt = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(max_tick_step));
    const int64_t dn = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(max_ns_step));
    if (i < 63) ns_per_tick = std::max(ns_per_tick, static_cast<double>(dn) / static_cast<double>(dt));
    cur.tick += dt;
    cur.ns += dn;
  }
  const int64_t lo = first.ns - 10 * max_ns_step;
  const int64_t hi = cur.ns + 10 * max_ns_step;
  std::vector<int64_t> given;
  for (int k = 0; k < 20000; ++k) given.push_back(lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo)));
  std::sort(given.begin(), given.end());
  const double bound = ns_per_tick + 2;
  size_t hint = 0;
  int64_t prev = INT64_MIN;
  int bad = 0;
  for (int64_t ns : given) {
    const int64_t tick = anchors.to_tick(ns);
    const int64_t back = anchors.to_ns(tick, hint);
    if (static_cast<double>(std::llabs(back - ns)) > bound) ++bad;
    CHECK(tick >= prev);
    prev = tick;
  }
  CHECK_EQ(bad, 0);
}

// Anchors [0, 64) with uneven steps; ticks from inside segment `seg` on
// convert identically after trim_below and in a partial copy, the first
// anchor stays, and the memory stays put.
void check_trim(size_t seg) {
  std::mt19937_64 rng(7 + seg);
  TickAnchors anchors;
  std::vector<Anchor> list;
  Anchor cur{1'000'000, 9'000'000};
  for (int i = 0; i < 64; ++i) {
    list.push_back(cur);
    CHECK(anchors.append(cur));
    cur.tick += 1 + static_cast<int64_t>(rng() % 20'000'000);
    cur.ns += 1 + static_cast<int64_t>(rng() % 7'000'000);
  }
  // The low lies inside segment seg (or past the last anchor).
  const int64_t low = seg + 1 < list.size() ? list[seg].tick + (list[seg + 1].tick - list[seg].tick) / 3
                                            : list.back().tick + 5;
  std::vector<int64_t> ticks{low, list.back().tick, list.back().tick + 123'456'789};
  for (size_t i = seg + 1; i < list.size(); ++i) ticks.push_back(list[i].tick);
  for (int k = 0; k < 2000; ++k) {
    ticks.push_back(low + static_cast<int64_t>(rng() % static_cast<uint64_t>(list.back().tick - low + 1000)));
  }
  std::vector<int64_t> before;
  size_t hint = 0;
  for (int64_t t : ticks) before.push_back(anchors.to_ns(t, hint));

  TickAnchors copy;
  copy.assign_from(anchors, low);
  const size_t kept_from = std::min(seg, list.size() - 2);  // the last segment always stays
  CHECK_EQ(copy.size(), list.size() - kept_from);
  const size_t bytes = anchors.bytes();
  const size_t dropped = anchors.trim_below(low);
  CHECK_EQ(dropped, kept_from > 1 ? kept_from - 1 : size_t{0});
  CHECK_EQ(anchors.size(), list.size() - dropped);
  CHECK_EQ(anchors.first_tick(), list[0].tick);
  CHECK_EQ(anchors.bytes(), bytes);  // trimming reuses what it holds
  size_t h1 = 0, h2 = 0;
  for (size_t i = 0; i < ticks.size(); ++i) {
    CHECK_EQ(anchors.to_ns(ticks[i], h1), before[i]);
    CHECK_EQ(copy.to_ns(ticks[i], h2), before[i]);
  }
  // Below the kept segments, the first anchor and the next kept one
  // interpolate: still between their ns, not extrapolated.
  if (dropped > 0) {
    const int64_t mid = list[1].tick;
    const int64_t got = anchors.to_ns(mid, h1);
    CHECK(got >= list[0].ns && got <= list[kept_from].ns);
  }
}

}  // namespace

int main() {
  for (size_t seg : {size_t{0}, size_t{1}, size_t{2}, size_t{17}, size_t{62}, size_t{63}}) check_trim(seg);
  // Writer-made segments: about 5 ms of a 3 GHz TSC.
  check_segments(20'000'000, 7'000'000, 1);
  // An idle writer: segments of hours, whose products overflow 64 bits.
  check_segments(int64_t{1} << 46, int64_t{1} << 44, 2);
  // Slow ticks (tick ~ 1 ns or coarser).
  check_segments(1000, 5000, 3);
  check_inverse(20'000'000, 7'000'000, 4);
  check_inverse(int64_t{1} << 46, int64_t{1} << 44, 5);
  check_inverse(1000, 5000, 6);
  return check::result("tick_anchors_test");
}
