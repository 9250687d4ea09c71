// What follows an OTLP export's read: ids for a batch of new records (the
// core's resolver, span_ids.h), the hold-back of records whose ancestor has
// not come yet, and the request (otlp_request.h). OtlpSource feeds it from a
// tracer's RecordCursor; the WebAssembly build (native/wasm/exports.cc
// hs_otlp_*) from the js backend's columns, so both backends export through
// one implementation.
//
// A record whose ancestor is not in the batch is resolved from the trace ids
// of spans already sent (a bounded cache: an async span often outlives the
// span it began under); failing that it is held back (copied with its
// attributes and foreign parent) until a later batch brings its ancestor
// (records end before their parents: one still open). At most kMaxHeld
// records wait, each for at most kMaxHoldReads reads; past either bound, and
// at a final read, a record goes with a trace id derived from its own span id.
//
// A record whose trace the head sampler (sampler.h, the batcher's `sampler`
// word) leaves unsampled is not encoded: it is counted in Result::sampled_out,
// and its trace is remembered as for a sent span, so a descendant that comes
// in a later batch is decided the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "export/otlp_request.h"
#include "record/span_ids.h"
#include "record/tracer.h"

namespace hotspan {

class OtlpBatcher {
 public:
  // `salt`: the tracer's id salt (Tracer::id_salt), so ids are those
  // inject() and the OTel adapter show; `sampler`: its head sampler
  // (Tracer::sampler, sampler.h), so the flags are those inject() writes.
  OtlpBatcher(const OtlpResource& resource, OtlpEncoding encoding, int64_t unix_offset_ns, uint64_t salt,
              uint64_t sampler = 0);

  static constexpr uint32_t kMaxHoldReads = 64;
  static constexpr size_t kMaxHeld = size_t{1} << 16;
  static constexpr size_t kSentCacheSpans = size_t{1} << 16;

  // Records held back for their ancestor.
  size_t held() const;
  // The tracer's names in id order: those from names() on.
  size_t names() const { return names_.size(); }
  void add_name(const std::string& name);

  // Timeline `id` of the batch `in`, its held records first: the caller
  // appends the new records (their attributes, foreign parents, contexts).
  SnapshotTimeline& timeline(Snapshot& in, uint32_t id, TimelineKind kind);

  struct Result {
    size_t spans = 0;        // spans in the request written to `out`
    uint64_t waiting = 0;    // records held back after it
    uint64_t sampled_out = 0;  // records of unsampled traces, not encoded
  };
  // At most max_spans spans of `in` into one request in `out` (spans == 0:
  // `out` untouched). `unread`: the source has records left for a later
  // read. `final`: take the spans still waiting for their root too.
  Result encode(Snapshot& in, bool unread, size_t max_spans, bool final, std::string& out);

 private:
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

  static void add_held(SnapshotTimeline& bt, std::vector<Held>& held);
  void remember(uint64_t span, const SpanIds& ids, std::shared_ptr<const std::string> tracestate);

  OtlpRequestWriter writer_;
  uint64_t salt_;
  uint64_t sampler_;
  std::unordered_map<uint32_t, std::vector<Held>> held_;  // by timeline id, in end order
  std::unordered_map<uint64_t, SentTrace> sent_;          // tracer span id -> its trace
  std::vector<uint64_t> sent_order_;                      // FIFO of sent_'s keys (ring)
  size_t sent_next_ = 0;
  std::vector<std::string> names_;  // valid UTF-8 copies, by name id
};

}  // namespace hotspan
