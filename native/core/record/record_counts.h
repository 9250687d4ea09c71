// Where every record a timeline produced went: still in memory (kept),
// handed to every consumer (a stream, an exporter: record_cursor.h) and then
// its memory reused (released), recycled under the overwrite policy before
// every consumer had it (overwritten), or never stored because the budget
// was full (dropped). produced = kept + released + overwritten + dropped;
// released is 0 for a tracer that never had a consumer.
#pragma once

#include <cstdint>

namespace hotspan {

struct RecordCounts {
  uint64_t produced = 0;
  uint64_t kept = 0;
  uint64_t overwritten = 0;
  uint64_t dropped = 0;
  uint64_t released = 0;

  RecordCounts& operator+=(const RecordCounts& o) {
    produced += o.produced;
    kept += o.kept;
    overwritten += o.overwritten;
    dropped += o.dropped;
    released += o.released;
    return *this;
  }
  bool lost() const { return overwritten != 0 || dropped != 0; }
};

}  // namespace hotspan
