// Where every record a timeline produced went: still in memory (kept),
// recycled under the overwrite policy (overwritten), or never stored because
// the budget was full (dropped). produced = kept + overwritten + dropped.
#pragma once

#include <cstdint>

namespace hotspan {

struct RecordCounts {
  uint64_t produced = 0;
  uint64_t kept = 0;
  uint64_t overwritten = 0;
  uint64_t dropped = 0;

  RecordCounts& operator+=(const RecordCounts& o) {
    produced += o.produced;
    kept += o.kept;
    overwritten += o.overwritten;
    dropped += o.dropped;
    return *this;
  }
  bool lost() const { return overwritten != 0 || dropped != 0; }
};

}  // namespace hotspan
