// A timeline's (tick, CLOCK_MONOTONIC ns) anchors and the tick -> ns
// conversion used when its records are read. Not synchronized: the owning
// Timeline guards it with its mutex.
//
// Anchors are only appended, in strictly increasing tick order. A tick is
// converted by linear interpolation between the two adjacent anchors
// (extrapolated from the first or last two outside them). The timeline makes
// sure every record a reader can see lies at or below the last anchor before
// it converts (Timeline::freeze), so later appends never change the
// segment a visible record falls in: the same record converts to the same ns
// in every snapshot.
//
// Trimming (trim_below) keeps the anchors a conversion can depend on: every
// segment at or above the one holding a given tick is kept as it is, so
// ticks from there on convert as before; the first anchor stays too, so a
// tick below the kept ones (a span begun long ago that ends later) is
// interpolated over one long segment rather than extrapolated from a short
// one. A copy for readers (assign_from) takes the segments from a tick on in
// the same way.
#pragma once

#include <cstdint>
#include <vector>

#include "record/clock.h"

namespace hotspan {

class TickAnchors {
 public:
  bool empty() const { return anchors_.empty(); }
  size_t size() const { return anchors_.size(); }
  // Heap bytes held (what the timeline charges to its budget).
  size_t bytes() const {
    return anchors_.capacity() * sizeof(clock::Anchor) + slopes_.capacity() * sizeof(uint64_t);
  }
  int64_t first_tick() const { return anchors_.empty() ? INT64_MIN : anchors_.front().tick; }
  int64_t last_tick() const { return anchors_.empty() ? INT64_MIN : anchors_.back().tick; }
  int64_t last_ns() const { return anchors_.empty() ? INT64_MIN : anchors_.back().ns; }
  // Ticks between the last two anchors (0 with fewer).
  int64_t last_segment_ticks() const {
    return anchors_.size() < 2 ? 0 : anchors_.back().tick - anchors_[anchors_.size() - 2].tick;
  }

  // Appends `a` if it is past the last anchor in both tick and ns; a tick
  // that went backwards (cross-core skew) is dropped rather than stored.
  bool append(clock::Anchor a) {
    if (!anchors_.empty() && (a.tick <= anchors_.back().tick || a.ns < anchors_.back().ns)) {
      return false;
    }
    anchors_.push_back(a);
    if (anchors_.size() >= 2) slopes_.push_back(slope(anchors_[anchors_.size() - 2], a));
    return true;
  }

  // Drops the anchors between the first and the one that starts the segment
  // holding `low` (the lowest tick any kept record has): every tick >= low
  // converts exactly as before. The last segment (extrapolation past the
  // end) is always kept. Returns how many anchors were dropped.
  size_t trim_below(int64_t low);
  // This set becomes `src`'s segments from the one holding `low` on (all of
  // them if `low` lies below its second anchor): ticks >= low convert as in
  // `src`. Reuses this set's capacity.
  void assign_from(const TickAnchors& src, int64_t low);

  // Tick -> ns. `hint` caches the last segment (records come mostly in tick
  // order); any value is valid. A pure function of the anchors and the tick,
  // so the same record converts to the same ns in every snapshot.
  // ns -> tick: the inverse of to_ns over these anchors (interpolated in the
  // segment holding `ns`, extrapolated from the first or last outside
  // them), so a time given in ns converts back to itself within a tick.
  int64_t to_tick(int64_t ns) const;

  int64_t to_ns(int64_t tick, size_t& hint) const {
    // Inline for the common case, the hinted segment with a fixed-point
    // slope: a snapshot converts two ticks per record.
    const size_t i = hint;
    if (i + 1 < anchors_.size() && fast_in(i, tick)) return fixed_point(anchors_[i], slopes_[i], tick);
    return to_ns_outline(tick, hint);
  }

  // Segments shorter than this many ticks (and under 2^30 ns) convert with a
  // 32.32 fixed-point slope: one multiply, at most 2 ns below the exactly
  // rounded interpolation. Longer ones (an idle writer) and extrapolation
  // use exact division.
  static constexpr int64_t kFastSegmentTicks = int64_t{1} << 32;

 private:
  // floor((b.ns - a.ns) * 2^32 / (b.tick - a.tick)), or 0 when the segment is
  // too long or too steep for the fixed-point form.
  static uint64_t slope(const clock::Anchor& a, const clock::Anchor& b);
  // Segment i (i + 1 < size) holds `tick` ...
  bool within(size_t i, int64_t tick) const {
    return anchors_[i].tick <= tick && tick < anchors_[i + 1].tick;
  }
  // ... and converts it with its fixed-point slope.
  bool fast_in(size_t i, int64_t tick) const { return slopes_[i] != 0 && within(i, tick); }
  // a.tick <= tick < the segment's end, m = its nonzero slope. dt < 2^32 and
  // m < 2^62: the product fits 128 bits, and the floored slope loses less
  // than dt / 2^32 < 1 ns before the final floor.
  static int64_t fixed_point(const clock::Anchor& a, uint64_t m, int64_t tick) {
    const auto dt = static_cast<uint64_t>(tick - a.tick);
    return a.ns + static_cast<int64_t>((static_cast<unsigned __int128>(dt) * m) >> 32);
  }
  int64_t to_ns_outline(int64_t tick, size_t& hint) const;
  // The first anchor of the segment holding `low` (0 when below the second
  // anchor), at most size() - 2 so the last segment stays whole.
  size_t segment_start(int64_t low) const;
  // The segment [anchors_[i], anchors_[i + 1]) holding `value`, compared with
  // each anchor's `key` (tick or ns; append keeps both nondecreasing): the
  // last anchor at or below `value`, within [0, size() - 2]. size() >= 2.
  size_t segment_holding(int64_t value, int64_t clock::Anchor::*key) const;

  std::vector<clock::Anchor> anchors_;
  std::vector<uint64_t> slopes_;  // slopes_[i]: segment [anchors_[i], anchors_[i + 1])
};

}  // namespace hotspan
