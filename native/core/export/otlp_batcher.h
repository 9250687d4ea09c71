// What follows an OTLP export's read: ids for a batch of new records (the
// core's resolver, span_ids.h), the hold-back of records whose ancestor has
// not come yet, and the request (otlp_request.h). OtlpSource feeds it from a
// tracer's RecordCursor; the WebAssembly build (native/wasm/exports.cc
// hs_otlp_*) from the js backend's columns, so both backends export through
// one implementation.
//
// Which records go, which wait and which are left out is the tracer's one
// sampling decision, TraceKeep (read/trace_keep.h): records of a trace that
// is not kept are not encoded (Result::sampled_out), records whose ancestor
// or whose trace's tail-keep decision has not come are held for a later
// batch, and a trace kept by the tail keep is exported whole with the
// sampled flag set.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "export/otlp_request.h"
#include "read/trace_keep.h"
#include "record/span_ids.h"
#include "record/tracer.h"

namespace hotspan {

class OtlpBatcher {
 public:
  // `salt`: the tracer's id salt (Tracer::id_salt), so ids are those
  // inject() and the OTel adapter show; `sampler`: its head sampler
  // (Tracer::sampler, sampler.h), so the flags are those inject() writes.
  // `keep`: its tail keep (tail_keep.h); 0: none.
  OtlpBatcher(const OtlpResource& resource, OtlpEncoding encoding, int64_t unix_offset_ns, uint64_t salt,
              uint64_t sampler = 0, uint64_t keep = 0);

  static constexpr uint32_t kMaxHoldReads = TraceKeep::kMaxHoldReads;
  static constexpr size_t kMaxHeld = TraceKeep::kMaxHeld;
  static constexpr size_t kSentCacheSpans = TraceKeep::kCacheSpans;

  // Records held back for their ancestor or their trace's decision.
  size_t held() const { return keep_.held(); }
  // The tracer's names in id order: those from names() on.
  size_t names() const { return keep_.names(); }
  void add_name(const std::string& name) { keep_.add_name(name); }
  // A span name that keeps its trace whole (tail keep by name); any time.
  void keep_name(const std::string& name) { keep_.keep_name(name); }

  // Timeline `id` of the batch `in`, its held records first: the caller
  // appends the new records (their attributes, foreign parents, contexts).
  SnapshotTimeline& timeline(Snapshot& in, uint32_t id, TimelineKind kind) { return keep_.timeline(in, id, kind); }
  // TraceKeep::read_first_elsewhere.
  void read_first_elsewhere(size_t t, uint32_t begin, uint32_t end) { keep_.read_first_elsewhere(t, begin, end); }

  struct Result {
    size_t spans = 0;        // spans in the request written to `out`
    uint64_t waiting = 0;    // records held back after it
    uint64_t sampled_out = 0;  // records of traces not kept, not encoded
    uint64_t sampled_out_first = 0;  // of those, read first by this consumer (TraceKeep::Result)
    // Records released without their root while a tail keep is on (maxWait
    // past, the hold full, a final read): decided by the head sampler alone.
    uint64_t keep_timed_out = 0;
  };
  // At most max_spans spans of `in` into one request in `out` (spans == 0:
  // `out` untouched). `unread`: the source has records left for a later
  // read. `final`: take the spans still waiting for their root too.
  // `read_through_ns`: the source's read watermark (RecordCursor::
  // read_through_ns): every record that ended at or before it has been read.
  Result encode(Snapshot& in, bool unread, size_t max_spans, bool final, std::string& out,
                int64_t read_through_ns = INT64_MAX);

 private:
  OtlpRequestWriter writer_;
  TraceKeep keep_;
};

}  // namespace hotspan
