// Reads a tracer's committed spans incrementally and encodes them as OTLP
// requests (otlp_request.h): what the exporter thread calls. It reads
// through a RecordCursor (record_cursor.h), so chunks it has read go back to
// the pool (counted released). Records the budget overwrote or dropped
// before they were read, and those recycled before the source opened, are
// counted as lost: taken + sampled_out + lost + waiting = produced over the
// tracer (sampled_out: records of traces the tracer's head sampler leaves out).
//
// Ids, the hold-back of records whose ancestor is not in the batch, and the
// request come from OtlpBatcher (otlp_batcher.h), which the js backend's
// export shares.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "export/export_cursor.h"
#include "export/otlp_batcher.h"
#include "record/tracer.h"

namespace hotspan {

class OtlpSource {
 public:
  // Ids with the tracer's own salt (Tracer::id_salt), as inject() and the
  // OTel adapter show them.
  // nullptr when every consumer slot of the tracer is taken
  // (ChunkPool::kMaxConsumers).
  static std::unique_ptr<OtlpSource> open(std::shared_ptr<const Tracer> tracer, const OtlpResource& resource,
                                          OtlpEncoding encoding, int64_t unix_offset_ns);

  static constexpr uint32_t kMaxHoldReads = OtlpBatcher::kMaxHoldReads;
  static constexpr size_t kMaxHeld = OtlpBatcher::kMaxHeld;

  struct Batch {
    size_t spans = 0;   // spans in the request written to `out`
    uint64_t lost = 0;  // newly counted records lost before they were taken
    uint64_t sampled_out = 0;  // records of unsampled traces (sampler.h), not sent
    uint64_t keep_timed_out = 0;  // decided by the head sampler alone (OtlpBatcher::Result)
  };
  // At most max_spans spans into one request in `out` (spans == 0: nothing
  // new, `out` untouched). `final`: take the spans still waiting for their
  // root too.
  Batch next(size_t max_spans, bool final, std::string& out);

  // What a stop past its deadline abandons: every record committed and not
  // taken yet, and those held back for their ancestor, counted in `spans`
  // and not encoded (the held ones, at most kMaxHeld, are). The cursor
  // passes over the committed records without reading them
  // (RecordCursor::pass): the time this takes past the deadline does not
  // grow with what waits.
  Batch discard();

  uint64_t taken() const { return taken_; }
  uint64_t sampled_out() const { return sampled_out_; }
  uint64_t keep_timed_out() const { return keep_timed_out_; }
  uint64_t lost() const { return lost_; }
  // Records committed and not yet sent nor lost (at the last next()),
  // those held back for their ancestor included.
  uint64_t waiting() const { return waiting_; }
  // Of those, the records the cursor has not read yet (at the last next()):
  // another read now would bring them, without waiting for more to end.
  uint64_t unread() const { return unread_; }

 private:
  OtlpSource(std::unique_ptr<ExportCursor> cursor, const OtlpResource& resource, OtlpEncoding encoding,
             int64_t unix_offset_ns);

  std::unique_ptr<ExportCursor> cursor_;
  OtlpBatcher batcher_;
  uint64_t taken_ = 0, lost_ = 0, waiting_ = 0, unread_ = 0, sampled_out_ = 0, keep_timed_out_ = 0;
};

}  // namespace hotspan
