// A counter series: named (time, value) samples, what a counter track shows
// (the event-loop delay, a queue length). Snapshots hold them beside the
// span timelines; CounterStore (counter_store.h) records them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hotspan {

struct CounterSample {
  int64_t ns;  // CLOCK_MONOTONIC ns (the axis span records are read on)
  double value;
};

// One series, in the order its samples were added.
struct CounterSeries {
  std::string name;
  std::vector<CounterSample> samples;
  uint64_t dropped = 0;  // samples refused because the series was full
};

}  // namespace hotspan
