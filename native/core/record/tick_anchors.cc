#include "record/tick_anchors.h"

#include <algorithm>

namespace hotspan {

namespace {

// a.ns + (tick - a.tick) * (b.ns - a.ns) / (b.tick - a.tick), rounded to
// nearest, in exact integer arithmetic (so conversion is deterministic).
// Only long segments (an idle writer) and extrapolation come here; short
// segments take the fixed-point slope in to_ns.
int64_t interpolate(const clock::Anchor& a, const clock::Anchor& b, int64_t tick) {
  const __int128 dt = static_cast<__int128>(tick) - a.tick;
  const __int128 dn = static_cast<__int128>(b.ns) - a.ns;
  const __int128 den = static_cast<__int128>(b.tick) - a.tick;  // > 0
  __int128 num = dt * dn * 2 + den;                              // round half up
  __int128 q = num / (den * 2);
  if (num % (den * 2) != 0 && num < 0) --q;                      // floor
  return static_cast<int64_t>(a.ns + q);
}

}  // namespace

uint64_t TickAnchors::slope(const clock::Anchor& a, const clock::Anchor& b) {
  const int64_t den = b.tick - a.tick;  // > 0: append keeps ticks increasing
  const int64_t dn = b.ns - a.ns;       // >= 0
  if (den >= kFastSegmentTicks || dn >= (int64_t{1} << 30)) return 0;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(dn) << 32) / static_cast<uint64_t>(den));
}

size_t TickAnchors::segment_holding(int64_t value, int64_t clock::Anchor::*key) const {
  const auto it = std::upper_bound(anchors_.begin(), anchors_.end(), value,
                                   [key](int64_t v, const clock::Anchor& a) { return v < a.*key; });
  const size_t above = static_cast<size_t>(it - anchors_.begin());  // first anchor above `value`
  return above == 0 ? 0 : std::min(above - 1, anchors_.size() - 2);
}

size_t TickAnchors::segment_start(int64_t low) const {
  return anchors_.size() < 3 ? 0 : segment_holding(low, &clock::Anchor::tick);
}

size_t TickAnchors::trim_below(int64_t low) {
  const size_t j = segment_start(low);
  if (j <= 1) return 0;
  // Anchors [1, j) go; segment 0 becomes [anchors_[0], anchors_[j]) and the
  // segments from j on keep their slopes.
  anchors_.erase(anchors_.begin() + 1, anchors_.begin() + static_cast<std::ptrdiff_t>(j));
  slopes_.erase(slopes_.begin() + 1, slopes_.begin() + static_cast<std::ptrdiff_t>(j));
  slopes_[0] = slope(anchors_[0], anchors_[1]);
  return j - 1;
}

void TickAnchors::assign_from(const TickAnchors& src, int64_t low) {
  const size_t j = src.segment_start(low);
  anchors_.assign(src.anchors_.begin() + static_cast<std::ptrdiff_t>(j), src.anchors_.end());
  slopes_.assign(src.slopes_.begin() + static_cast<std::ptrdiff_t>(std::min(j, src.slopes_.size())),
                 src.slopes_.end());
}

int64_t TickAnchors::to_tick(int64_t ns) const {
  const size_t n = anchors_.size();
  if (n == 0) return ns;  // not a ticks timeline
  if (n == 1) return anchors_[0].tick + (ns - anchors_[0].ns);  // as to_ns does
  // The segment to_ns would convert the result in: the last anchor at or
  // below `ns` (in ns, which append keeps nondecreasing), within [0, n - 2].
  // A given time is mostly in the last segment or past it: no search then.
  const size_t i = ns < anchors_[n - 2].ns ? segment_holding(ns, &clock::Anchor::ns) : n - 2;
  const clock::Anchor& a = anchors_[i];
  const clock::Anchor& b = anchors_[i + 1];
  if (b.ns == a.ns) return ns <= a.ns ? a.tick : b.tick;  // no ns between them to invert
  // interpolate() with tick and ns swapped: rounded to nearest, exact.
  return interpolate(clock::Anchor{a.ns, a.tick}, clock::Anchor{b.ns, b.tick}, ns);
}

int64_t TickAnchors::to_ns_outline(int64_t tick, size_t& hint) const {
  const size_t n = anchors_.size();
  if (n == 0) return tick;  // not a ticks timeline
  if (n == 1) {
    // Only before any record was read; 1 tick ~ 1 ns is as good as any.
    return anchors_[0].ns + (tick - anchors_[0].tick);
  }
  // Segment i: [anchors_[i], anchors_[i + 1]), i in [0, n - 2].
  size_t i = hint;
  if (!(i + 1 < n && within(i, tick))) {
    i = segment_holding(tick, &clock::Anchor::tick);
    hint = i;
  }
  if (fast_in(i, tick)) return fixed_point(anchors_[i], slopes_[i], tick);
  return interpolate(anchors_[i], anchors_[i + 1], tick);
}

}  // namespace hotspan
