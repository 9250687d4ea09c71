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
//
// With a tail keep (tail_keep.h, the batcher's `keep` word) a trace the head
// sampler leaves out is still encoded, whole, when its local root lasted
// longer than slowerThan or a span of it is flagged error. Records end before
// their parents, so a trace's spans reach the batcher before its root: they
// are held back (copied, as above) until the root comes, for at most maxWait
// from their first read instead of kMaxHoldReads reads; the trace is decided
// once, in the first batch that has its root and whose read watermark (the
// source's: every record of any timeline that ended at or before it has been
// read) has passed the root's end, so every span that ended before its root,
// on any thread, track or worker, is known; later spans of it (async spans
// that outlive their root) follow that decision. A span flagged error decides
// its trace kept as soon as it is read. A record released without
// its root (maxWait past, kMaxHeld full, or a final read) is decided by the
// head sampler alone and counted in Result::keep_timed_out.
//
// keep_name() adds a span name to the tail keep (sample.keep.names): a trace
// with a span of one of those names is kept whole, decided as soon as that
// span is read, like an error. The keep word's maxWait bits still say how
// long spans wait; its slow and error bits may both be clear.
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
  // `keep`: its tail keep (tail_keep.h); 0: none.
  OtlpBatcher(const OtlpResource& resource, OtlpEncoding encoding, int64_t unix_offset_ns, uint64_t salt,
              uint64_t sampler = 0, uint64_t keep = 0);

  static constexpr uint32_t kMaxHoldReads = 64;
  static constexpr size_t kMaxHeld = size_t{1} << 16;
  static constexpr size_t kSentCacheSpans = size_t{1} << 16;

  // Records held back for their ancestor.
  size_t held() const;
  // The tracer's names in id order: those from names() on.
  size_t names() const { return names_.size(); }
  void add_name(const std::string& name);
  // A span name that keeps its trace whole (tail keep by name); any time.
  void keep_name(const std::string& name);

  // Timeline `id` of the batch `in`, its held records first: the caller
  // appends the new records (their attributes, foreign parents, contexts).
  SnapshotTimeline& timeline(Snapshot& in, uint32_t id, TimelineKind kind);

  struct Result {
    size_t spans = 0;        // spans in the request written to `out`
    uint64_t waiting = 0;    // records held back after it
    uint64_t sampled_out = 0;  // records of unsampled traces, not encoded
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
  // A record waiting for its ancestor, with what the batch held for it.
  struct Held {
    SpanRecord record;
    uint32_t reads = 0;
    int64_t since_ns = 0;  // clock::now_ns() at its first read
    std::string attrs;     // its attribute JSON (kFlagAttrs)
    uint64_t foreign = 0;  // its parent's span id (kFlagParentElsewhere)
    bool has_context = false;  // its stored context (kFlagContext), when the batch held one
    StoredContext context;
  };
  struct SentTrace {
    TraceId trace;
    uint8_t flags = 0;
    // Its tracestate, shared by the spans of one trace; null: none.
    std::shared_ptr<const std::string> tracestate;
  };

  static void add_held(SnapshotTimeline& bt, std::vector<Held>& held);
  void remember(uint64_t span, const SpanIds& ids, std::shared_ptr<const std::string> tracestate);
  // The tail keep's decision on the head-unsampled traces resolved in a batch.
  void decide_tails(const Snapshot& in, const std::vector<std::vector<SpanIds>>& ids, int64_t read_through_ns);
  void decide(const TraceId& trace, bool keep);

  OtlpRequestWriter writer_;
  uint64_t salt_;
  uint64_t sampler_;
  uint64_t keep_;
  struct TraceHash {
    size_t operator()(const TraceId& t) const { return static_cast<size_t>(t.hi * 0x9e3779b97f4a7c15ULL ^ t.lo); }
  };
  // The tail keep's decisions by trace (kept or not), FIFO-bounded (kSentCacheSpans).
  std::unordered_map<TraceId, bool, TraceHash> decided_;
  // decide_tails()'s per-batch table, kept for its buckets.
  struct Tail {
    int64_t root_ns = -1;
    int64_t root_end_ns = INT64_MIN;
    bool error = false;
    bool named = false;  // a span of it has a name of keep_names_
  };
  std::unordered_map<TraceId, Tail, TraceHash> tails_;
  std::vector<TraceId> decided_order_;
  size_t decided_next_ = 0;
  std::unordered_map<uint32_t, std::vector<Held>> held_;  // by timeline id, in end order
  std::unordered_map<uint64_t, SentTrace> sent_;          // tracer span id -> its trace
  std::vector<uint64_t> sent_order_;                      // FIFO of sent_'s keys (ring)
  size_t sent_next_ = 0;
  std::vector<std::string> names_;  // valid UTF-8 copies, by name id
  std::vector<std::string> keep_names_;  // keep_name()'s, valid UTF-8 copies
  std::vector<bool> named_;               // by name id: one of keep_names_
  bool keeping() const;                   // a tail keep by any rule
};

}  // namespace hotspan
