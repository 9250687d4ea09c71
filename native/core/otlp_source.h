// Reads a tracer's committed spans incrementally and encodes them as OTLP
// requests (otlp_request.h): what the exporter thread calls. It reads
// through a RecordCursor (record_cursor.h), so chunks it has read go back to
// the pool (counted released). Records the budget overwrote or dropped
// before they were read, and those recycled before the source opened, are
// counted as lost: taken + lost + waiting = produced over the tracer.
//
// Ids come from the core's resolver (span_ids.h) over each batch. A record
// whose ancestor is not in the batch is resolved from the trace ids of
// spans already sent (a bounded cache: an async span often outlives the
// span it began under); failing that it is held back (copied out of the
// pool with its attributes and foreign parent) until a later batch brings
// its ancestor (records end before their parents: one still open). At most
// kMaxHeld records wait, each for at most kMaxHoldReads reads; past either
// bound, and at a final read, a record goes with a trace id derived from
// its own span id.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "otlp_request.h"
#include "record_cursor.h"
#include "span_ids.h"
#include "tracer.h"

namespace hotspan {

class OtlpSource {
 public:
  // Ids with the tracer's own salt (Tracer::id_salt), as inject() and the
  // OTel adapter show them.
  // nullptr when every consumer slot of the tracer is taken
  // (ChunkPool::kMaxConsumers).
  static std::unique_ptr<OtlpSource> open(std::shared_ptr<const Tracer> tracer, const OtlpResource& resource,
                                          OtlpEncoding encoding, int64_t unix_offset_ns);

  static constexpr uint32_t kMaxHoldReads = 64;
  static constexpr size_t kMaxHeld = size_t{1} << 16;
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
  OtlpSource(std::shared_ptr<const Tracer> tracer, std::unique_ptr<RecordCursor> cursor,
             const OtlpResource& resource, OtlpEncoding encoding, int64_t unix_offset_ns);

  // A record waiting for its ancestor, with what the batch held for it.
  struct Held {
    SpanRecord record;
    uint32_t reads = 0;
    std::string attrs;     // its attribute JSON (kFlagAttrs)
    uint64_t foreign = 0;  // its parent's span id (kFlagParentElsewhere)
  };
  struct SentTrace {
    TraceId trace;
    uint8_t flags = 0;
    // Its tracestate, shared by the spans of one trace; null: none.
    std::shared_ptr<const std::string> tracestate;
  };

  void remember(uint64_t span, const SpanIds& ids, std::shared_ptr<const std::string> tracestate);

  std::shared_ptr<const Tracer> tracer_;
  std::unique_ptr<RecordCursor> cursor_;
  OtlpRequestWriter writer_;
  uint64_t salt_;
  std::unordered_map<uint32_t, std::vector<Held>> held_;  // by timeline id, in end order
  std::unordered_map<uint64_t, SentTrace> sent_;          // tracer span id -> its trace
  std::vector<uint64_t> sent_order_;                      // FIFO of sent_'s keys (ring)
  size_t sent_next_ = 0;
  std::vector<std::string> names_;  // valid UTF-8 copies, by name id
  std::unordered_map<uint32_t, uint64_t> dropped_seen_;  // by timeline id
  uint64_t missed_seen_ = 0;
  bool skipped_seen_ = false;
  uint64_t taken_ = 0, lost_ = 0, waiting_ = 0;
};

}  // namespace hotspan
