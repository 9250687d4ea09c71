// Reads a tracer's committed spans incrementally and encodes them as OTLP
// requests (otlp_request.h): what the exporter thread calls. Each call
// freezes the tracer and takes, per timeline in order, the records past the
// ones already taken. Records the budget overwrote or dropped before they
// were taken are counted as lost (so taken + lost = produced per timeline).
//
// Ids come from the core's resolver (span_ids.h) over each batch. A record
// whose ancestor is not in the batch is resolved from the trace ids of
// spans already sent (a bounded cache: an async span often outlives the
// span it began under); failing that it is held back until a later batch
// brings its ancestor (one still open), for at most kMaxHoldReads reads,
// then sent with a trace id derived from its own span id. Thread and
// group timelines are read up to their last committed root (their trees
// resolve within one batch); a final read takes everything.
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
#include "span_ids.h"
#include "tracer.h"

namespace hotspan {

class OtlpSource {
 public:
  // Ids with the tracer's own salt (Tracer::id_salt), as inject() and the
  // OTel adapter show them.
  OtlpSource(std::shared_ptr<const Tracer> tracer, const OtlpResource& resource, OtlpEncoding encoding,
             int64_t unix_offset_ns);

  static constexpr uint32_t kMaxHoldReads = 64;
  static constexpr size_t kSentCacheSpans = size_t{1} << 16;

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
  // Records committed and not yet sent nor lost (at the last next()),
  // those held back for their ancestor included.
  uint64_t waiting() const { return waiting_; }

 private:
  struct Position {
    uint64_t next_stored = 0;   // index of the next record to take, over stored records
    uint64_t dropped_seen = 0;  // of the timeline's dropped count
  };

  struct Held {
    SpanRecord record;
    uint32_t reads = 0;
  };
  struct SentTrace {
    TraceId trace;
    uint8_t flags = 0;
  };

  void remember(uint64_t span, const SpanIds& ids);

  std::shared_ptr<const Tracer> tracer_;
  OtlpRequestWriter writer_;
  uint64_t salt_;
  std::unordered_map<uint32_t, std::vector<Held>> held_;  // by timeline id, in end order
  std::unordered_map<uint64_t, SentTrace> sent_;          // tracer span id -> its trace
  std::vector<uint64_t> sent_order_;                      // FIFO of sent_'s keys (ring)
  size_t sent_next_ = 0;
  std::vector<std::string> names_;  // valid UTF-8 copies, by name id
  std::unordered_map<uint32_t, Position> positions_;
  uint64_t taken_ = 0, lost_ = 0, waiting_ = 0;
};

}  // namespace hotspan
