// Per-name statistics over committed records, from a log-linear histogram.
#pragma once

#include <vector>

#include "record/tracer.h"

namespace hotspan {

// Every record of every timeline (spans, async spans, groups) counts under its name.
std::vector<StatsRow> compute_stats(const Snapshot& snapshot);
std::vector<StatsRow> compute_stats(const FrozenSnapshot& snapshot);

}  // namespace hotspan
