// ms on the performance.now() axis -> the tracer's ticks, for the times a
// caller gives asyncFinish (hotspan/auto's and hotspan/otel's spans, timed in
// JS). One anchor (a (tick, ns) pair read together, clock::measure_anchor)
// serves every conversion for a second: within that second the conversion is
// one linear function, so equal times give equal ticks and spans converted
// together keep their order (a child begun in the same ms as its parent is
// not written before it). Each second a fresh anchor is read, and the rate
// is taken from it and the first one (a baseline that grows, where the
// process's short calibration is off by some 1e-5).
#pragma once

#include <cstdint>

#include "record/clock.h"

namespace hotspan_addon {

class MsToTicks {
 public:
  // `origin_ns`: the tracer's CLOCK_MONOTONIC ns at performance.now() == 0;
  // `now_ticks`: the caller's clock read.
  int64_t operator()(double ms, int64_t origin_ns, int64_t now_ticks) {
    if (!valid_ || now_ticks - anchor_.tick > second_) refresh();
    const double ns = static_cast<double>(origin_ns) + ms * 1e6;
    return anchor_.tick - static_cast<int64_t>((static_cast<double>(anchor_.ns) - ns) * ticks_per_ns_);
  }

 private:
  void refresh() {
    anchor_ = hotspan::clock::measure_anchor();
    second_ = hotspan::clock::ticks_for_ms(1000);
    if (!valid_) first_ = anchor_;
    valid_ = true;
    const int64_t span_ns = anchor_.ns - first_.ns;
    ticks_per_ns_ = span_ns >= 1000000000 && anchor_.tick > first_.tick
                        ? static_cast<double>(anchor_.tick - first_.tick) / static_cast<double>(span_ns)
                        : static_cast<double>(second_) / 1e9;
  }

  hotspan::clock::Anchor first_{};
  hotspan::clock::Anchor anchor_{};
  int64_t second_ = 0;
  double ticks_per_ns_ = 0;
  bool valid_ = false;
};

}  // namespace hotspan_addon
