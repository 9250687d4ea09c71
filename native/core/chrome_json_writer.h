// Chrome Trace Event JSON (the object form) from a snapshot.
#pragma once

#include <cstdint>
#include <string>

#include "block_sink.h"
#include "clock_readings.h"
#include "tracer.h"

namespace hotspan {

// Appends the whole document to `out`. Times are converted to microseconds on
// the performance.now() axis with origin_ns. `clocks` (readings taken
// together) give the metadata that ties that axis to CLOCK_MONOTONIC and the
// Unix epoch.
void write_chrome_json(const Snapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       std::string& out);
// The same bytes, streamed to `sink` in blocks.
void write_chrome_json(const Snapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       BlockSink& sink);
// The same from records read in place (Tracer::freeze).
void write_chrome_json(const FrozenSnapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       std::string& out);
void write_chrome_json(const FrozenSnapshot& snapshot, int64_t origin_ns, const ClockReadings& clocks,
                       BlockSink& sink);

}  // namespace hotspan
