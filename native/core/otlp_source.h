// Reads a tracer's committed spans incrementally and encodes them as OTLP
// requests (otlp_request.h): what the exporter thread calls. Each call
// freezes the tracer and takes, per timeline in order, the records past the
// ones already taken. Records the budget overwrote or dropped before they
// were taken are counted as lost (so taken + lost = produced per timeline).
//
// Interim until the trace-context core lands (coord.md): ids are computed
// here. span id = a bijective 64-bit mix of (salt, tracer-wide span id);
// trace id = a mix of (salt, the span's local root): on thread and group
// timelines the next depth-0 record in end order, so their records are
// taken only up to the last root committed (the rest wait for their root,
// except on a final read); on tracks the span itself, or its parent's tree
// id when its parent is known.
//
// Interim until the stream branch's consumer cursor lands: a freeze per
// call (a pointer per 1024 kept records, plus every kept attribute text).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "otlp_request.h"
#include "tracer.h"

namespace hotspan {

class OtlpSource {
 public:
  OtlpSource(std::shared_ptr<const Tracer> tracer, const OtlpResource& resource, OtlpEncoding encoding,
             uint64_t salt, int64_t unix_offset_ns);

  struct Batch {
    size_t spans = 0;   // spans in the request written to `out`
    uint64_t lost = 0;  // newly counted records lost before they were taken
  };
  // At most max_spans spans into one request in `out` (spans == 0: nothing
  // new, `out` untouched). `final`: take the spans still waiting for their
  // root too.
  Batch next(size_t max_spans, bool final, std::string& out);

  uint64_t taken() const { return taken_; }
  uint64_t lost() const { return lost_; }
  // Records committed and not yet taken nor lost (at the last next()).
  uint64_t waiting() const { return waiting_; }

  uint64_t span_id(uint64_t tracer_span_id) const;

 private:
  struct Position {
    uint64_t next_stored = 0;   // index of the next record to take, over stored records
    uint64_t dropped_seen = 0;  // of the timeline's dropped count
  };

  std::shared_ptr<const Tracer> tracer_;
  OtlpRequestWriter writer_;
  uint64_t salt_;
  std::vector<std::string> names_;  // valid UTF-8 copies, by name id
  std::unordered_map<uint32_t, Position> positions_;
  uint64_t taken_ = 0, lost_ = 0, waiting_ = 0;
};

}  // namespace hotspan
