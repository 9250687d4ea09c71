// Which of the records a consumer reads belong to traces the tracer keeps:
// the one sampling decision every output of a tracer acts on, the OTLP
// export (export/otlp_batcher.h, on the addon and, through native/wasm, on
// the js backend), tracer.stream() (write/trace_stream.h) and a write of a
// sampling tracer (kept_snapshot below).
//
// A consumer reads records incrementally, per timeline in end order (a
// RecordCursor, or the js backend's columns), and hands each read to sort()
// with the records held from earlier reads first (timeline()). sort() gives
// the consumer, through `take`, each record of a kept trace with its ids,
// counts each record of a trace not kept (Result::sampled_out) and holds
// (copies, with its attributes, foreign parent and stored context) each
// record whose trace is not decided yet, for a later read:
//
// - A record's trace is found by the resolver (record/span_ids.h). A record
//   whose ancestor is not in the read is resolved from the trace ids of
//   records taken or counted already (a bounded cache: an async span often
//   outlives the span it began under); failing that it is held until a later
//   read brings its ancestor (records end before their parents: one still
//   open). At most kMaxHeld records wait, each for at most kMaxHoldReads
//   reads; past either bound, and at a final read, a record goes with a trace
//   id derived from its own span id.
// - The head sampler (record/sampler.h, the `sampler` word) decides a trace
//   that starts here, or follows its parent context.
// - With a tail keep (record/tail_keep.h, the `keep` word, and keep_name()) a
//   trace the head sampler leaves out is still kept, whole, when its local
//   root lasted longer than slowerThan, a span of it is flagged error or has
//   a kept name. Its records wait (held, as above) for at most maxWait from
//   their first read instead of kMaxHoldReads reads; the trace is decided
//   once, in the first read that has its root and whose read watermark (the
//   source's: every record of any timeline that ended at or before it has
//   been read, RecordCursor::read_through_ns) has passed the root's end, so
//   every span that ended before its root, on any thread, track or worker, is
//   known; later records of it (async spans that outlive their root) follow
//   that decision (a FIFO-bounded table). An error or a kept name decides its
//   trace kept as soon as it is read. A record released without its root
//   (maxWait past, kMaxHeld full, or a final read) is decided by the head
//   sampler alone and counted in Result::keep_timed_out.
//
// Every record handed to sort() is, by the end of it, taken, counted in
// sampled_out, or held (Result::waiting); a final read with nothing unread
// holds none.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "record/span_ids.h"
#include "record/tracer.h"

namespace hotspan {

class TraceKeep {
 public:
  // `salt`: the tracer's id salt (Tracer::id_salt), so ids are those
  // inject() shows; `sampler`: its head sampler (Tracer::sampler);
  // `keep`: its tail keep (Tracer::keep); 0: none.
  TraceKeep(uint64_t salt, uint64_t sampler, uint64_t keep);

  static constexpr uint32_t kMaxHoldReads = 64;
  static constexpr size_t kMaxHeld = size_t{1} << 16;
  static constexpr size_t kCacheSpans = size_t{1} << 16;

  // Whether a tracer with these words and names samples at all: a sampler
  // other than parentbased_always_on (word 0), or a tail keep. Without one,
  // write() and stream() keep every record (docs/sampling.md).
  static bool samples(uint64_t sampler, uint64_t keep, const std::vector<std::string>& keep_names);

  // Records held for their ancestor or their trace's decision.
  size_t held() const;
  // The tracer's names in id order: those from names() on.
  size_t names() const { return names_.size(); }
  void add_name(const std::string& name);
  // Name `id` as added (valid UTF-8); "" for an unknown id.
  const std::string& name(uint32_t id) const;
  // A span name that keeps its trace whole (tail keep by name); any time.
  void keep_name(const std::string& name);

  // Timeline `id` of the read `in`, its held records first: the caller
  // appends the new records (their attributes, foreign parents, contexts).
  SnapshotTimeline& timeline(Snapshot& in, uint32_t id, TimelineKind kind);
  // Records [begin, end) of in.timelines[t], appended by the caller for this
  // read, were read first by another consumer of the tracer
  // (RecordCursor::first_read): not counted in Result::sampled_out_first.
  void read_first_elsewhere(size_t t, uint32_t begin, uint32_t end);

  // A record of a kept trace, as sort() hands it on (pointers into `in`,
  // valid during the call).
  struct Kept {
    size_t timeline;  // index in in.timelines
    uint32_t index;   // index in its records
    const SpanRecord* record;
    const std::string* attrs;          // its attribute JSON; nullptr: none
    uint64_t foreign;                  // its parent's span id (kFlagParentElsewhere); 0: none
    const SpanIds* ids;                // resolved; the sampled flag set
    const std::string* tracestate;     // its trace's; nullptr: none
  };
  using Take = std::function<void(const Kept&)>;

  struct Result {
    size_t taken = 0;          // records handed to `take`
    uint64_t waiting = 0;      // records held after it
    uint64_t sampled_out = 0;  // records of traces not kept
    // Of those, the records this consumer read first (all but those of
    // read_first_elsewhere()): what it adds to Tracer::count_sampled_out,
    // so a record several outputs leave out is counted once tracer-wide.
    uint64_t sampled_out_first = 0;
    // Records released without their root while a tail keep is on (maxWait
    // past, the hold full, a final read): decided by the head sampler alone.
    uint64_t keep_timed_out = 0;
  };
  // Sorts the records of `in` (timeline() first for each timeline with new
  // records): at most max_take records to `take`, the rest of the kept ones
  // held for the next read. `unread`: the source has records left for a
  // later read. `final`: release the records still waiting too.
  // `read_through_ns`: the source's read watermark.
  Result sort(Snapshot& in, bool unread, size_t max_take, bool final, int64_t read_through_ns, const Take& take);

 private:
  // A record waiting for its ancestor, with what the read held for it.
  struct Held {
    SpanRecord record;
    uint32_t reads = 0;
    int64_t since_ns = 0;  // clock::now_ns() at its first read
    std::string attrs;     // its attribute JSON (kFlagAttrs)
    uint64_t foreign = 0;  // its parent's span id (kFlagParentElsewhere)
    bool has_context = false;  // its stored context (kFlagContext), when the read held one
    bool first = true;         // this consumer read it first (read_first_elsewhere)
    StoredContext context;
  };
  struct SeenTrace {
    TraceId trace;
    uint8_t flags = 0;
    // Its tracestate, shared by the spans of one trace; null: none.
    std::shared_ptr<const std::string> tracestate;
  };
  struct TraceHash {
    size_t operator()(const TraceId& t) const { return static_cast<size_t>(t.hi * 0x9e3779b97f4a7c15ULL ^ t.lo); }
  };
  // decide_tails()'s per-read table, kept for its buckets.
  struct Tail {
    int64_t root_ns = -1;
    int64_t root_end_ns = INT64_MIN;
    bool error = false;
    bool named = false;  // a span of it has a name of keep_names_
  };

  // Appends `held` to in.timelines[t].
  void add_held(Snapshot& in, size_t t, std::vector<Held>& held);
  bool first(size_t t, uint32_t i) const { return t >= elsewhere_.size() || i >= elsewhere_[t].size() || !elsewhere_[t][i]; }
  void remember(uint64_t span, const SpanIds& ids, std::shared_ptr<const std::string> tracestate);
  // The tail keep's decision on the head-unsampled traces resolved in a read.
  void decide_tails(const Snapshot& in, const std::vector<std::vector<SpanIds>>& ids, int64_t read_through_ns);
  void decide(const TraceId& trace, bool keep);
  bool keeping() const;  // a tail keep by any rule

  uint64_t salt_;
  uint64_t sampler_;
  uint64_t keep_;
  // The tail keep's decisions by trace (kept or not), FIFO-bounded (kCacheSpans).
  std::unordered_map<TraceId, bool, TraceHash> decided_;
  std::unordered_map<TraceId, Tail, TraceHash> tails_;
  std::vector<TraceId> decided_order_;
  size_t decided_next_ = 0;
  std::unordered_map<uint32_t, std::vector<Held>> held_;  // by timeline id, in end order
  std::unordered_map<uint64_t, SeenTrace> seen_;          // tracer span id -> its trace
  std::vector<uint64_t> seen_order_;                      // FIFO of seen_'s keys (ring)
  size_t seen_next_ = 0;
  std::vector<std::string> names_;       // valid UTF-8 copies, by name id
  std::vector<std::string> keep_names_;  // keep_name()'s, valid UTF-8 copies
  std::vector<bool> named_;              // by name id: one of keep_names_
  // This read's records read first by another consumer, per timeline of it: read_first_elsewhere().
  std::vector<std::vector<bool>> elsewhere_;
};

// The records of a whole snapshot that a write of a sampling tracer keeps
// (TraceKeep::samples): those of kept traces, as a final read with nothing
// unread decides them, so a trace whose root has not ended (or was lost) is
// decided by the head sampler alone. The rest of `snap` (names, timelines'
// descriptions and counts, counter series, CPU samples) is copied as is.
// `*left_out`: the records not kept.
Snapshot kept_snapshot(const FrozenSnapshot& snap, uint64_t salt, uint64_t sampler, uint64_t keep,
                       const std::vector<std::string>& keep_names, uint64_t* left_out);

}  // namespace hotspan
