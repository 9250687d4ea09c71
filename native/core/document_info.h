// What a written document says about itself, given once per document (file)
// to the incremental writers (PerfettoWriter, ChromeJsonWriter) before any
// batch of spans: which clock its times are on, and document-level metadata.
#pragma once

#include <cstdint>
#include <string>

#include "clock_readings.h"

namespace hotspan {

struct DocumentInfo {
  // The performance.now() origin on CLOCK_MONOTONIC: records' times are
  // MONOTONIC ns, written relative to it (see the writers' headers).
  int64_t origin_ns = 0;
  // Readings taken together, tying MONOTONIC to the other clocks.
  ClockReadings clocks;
  // Extra members of the document's metadata, as JSON object members
  // ("key":value,...), written after hotspan_clock in Chrome JSON's
  // "metadata" (recording counts and the like). Empty: none. The Perfetto
  // writer does not write them yet.
  std::string metadata_members;
};

}  // namespace hotspan
