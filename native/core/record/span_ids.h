// The W3C ids of committed records, resolved for a whole batch at once: the
// one function the OTLP encoder, the OTel adapter and any output showing ids
// call (native and, through native/wasm, the js backend).
//
// A record's ids:
//   span_id   wire_span_id(salt, (timeline << 32) | local)
//   parent    its stored context's parent (kFlagContext, e.g. a remote parent
//             from extract()), else the wire id of its parent record (same
//             timeline, or another one with kFlagParentElsewhere), else 0
//   trace     its stored context's, else its parent's (parents across
//             timelines too), else, for a local root, derived_trace_id(salt,
//             its span id)
//   flags     as the trace: the head decision of `sampler` (sampler.h) on the
//             stored context's flags, or on a local root's trace id
//   context   as the trace: the stored context it comes from (its tracestate),
//             nullptr for a trace of hotspan's own; it points into the
//             snapshot, so it is read before the snapshot goes
// A record whose parent chain leaves the batch before it reaches a root or a
// stored context (the ancestor is still open, or was dropped) is returned
// unresolved: span and parent ids set, trace id all-zero. Records end before
// their parents, so a consumer that sees an unresolved record holds it until
// a later batch brings the ancestor.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "record/local_index.h"
#include "record/sampler.h"
#include "record/span_record.h"
#include "record/stored_context.h"
#include "record/trace_id.h"
#include "record/tracer.h"

namespace hotspan {

struct SpanIds {
  TraceId trace;        // all-zero: unresolved
  uint64_t span = 0;    // wire span id
  uint64_t parent = 0;  // wire span id of the parent; 0: none
  uint8_t flags = 0;    // W3C trace-flags
  bool resolved = false;
  const StoredContext* context = nullptr;  // where the trace came from; nullptr: none
};

namespace span_ids_detail {

// Where a record is in the batch: (timeline index << 32) | record index.
using Position = uint64_t;
constexpr Position kNowhere = ~0ull;

// A batch's tracer-wide span ids to their positions: open addressing with
// linear probing, sized once for the batch, so resolving allocates nothing
// per record (a node-based map took one allocation per record, half the
// OTLP export's time).
class PositionIndex {
 public:
  explicit PositionIndex(size_t records);
  // A later set() of the same id replaces its position.
  void set(uint64_t span, Position at);
  // kNowhere when `span` is not in the batch.
  Position find(uint64_t span) const;

 private:
  // Span ids are below 2^53 (a timeline id below 2^21, shifted 32): never this.
  static constexpr uint64_t kEmpty = ~0ull;
  static size_t slot(uint64_t span) {
    span ^= span >> 33;
    span *= 0xff51afd7ed558ccdULL;
    return static_cast<size_t>(span ^ (span >> 33));
  }
  std::vector<std::pair<uint64_t, Position>> slots_;
  size_t mask_ = 0;
};

// Resolves ids[t][i] given, per record, its tracer-wide span id, its context
// (or nullptr) and its structural parent's span id (0: none). Iterative: a deep chain is a walk, not
// a recursion.
void resolve_chains(uint64_t salt, uint64_t sampler, const std::vector<std::vector<uint64_t>>& selves,
                    const PositionIndex& where,
                    const std::vector<std::vector<const StoredContext*>>& contexts,
                    const std::vector<std::vector<uint64_t>>& parents,
                    std::vector<std::vector<SpanIds>>& ids);

}  // namespace span_ids_detail

// ids[t][i]: the ids of snapshot.timelines[t].records[i]. Works on a frozen
// snapshot (Tracer::freeze) or a materialized one (a batch of SpanRecords).
template <typename Snapshot>
void resolve_span_ids(const Snapshot& snapshot, uint64_t salt,
                      std::vector<std::vector<SpanIds>>& ids, uint64_t sampler = 0) {
  using namespace span_ids_detail;
  const size_t nt = snapshot.timelines.size();
  ids.assign(nt, {});
  std::vector<std::vector<uint64_t>> selves(nt);
  std::vector<std::vector<const StoredContext*>> contexts(nt);
  std::vector<std::vector<uint64_t>> parents(nt);
  size_t total = 0;
  for (const auto& tl : snapshot.timelines) total += tl.records.size();
  PositionIndex where(total);
  for (size_t t = 0; t < nt; ++t) {
    const auto& tl = snapshot.timelines[t];
    const uint32_t n = static_cast<uint32_t>(tl.records.size());
    selves[t].resize(n);
    ids[t].resize(n);
    contexts[t].assign(n, nullptr);
    parents[t].assign(n, 0);
    LocalIndex<uint64_t> foreign(tl.foreign_parents, n);
    LocalIndex<StoredContext> stored(tl.contexts, n);
    for (uint32_t i = 0; i < n; ++i) {
      const SpanRecord r = tl.records[i];
      const uint64_t self = make_span_id(tl.id, r.local_id);
      selves[t][i] = self;
      where.set(self, (static_cast<uint64_t>(t) << 32) | i);
      ids[t][i].span = trace_id::wire_span_id(salt, self);
      if (r.flags & kFlagContext) contexts[t][i] = stored.find(r.local_id);
      if (r.flags & kFlagParentElsewhere) {
        const uint64_t* p = foreign.find(r.local_id);
        parents[t][i] = p != nullptr ? *p : 0;
      } else if (r.parent_local != 0) {
        parents[t][i] = make_span_id(tl.id, r.parent_local);
      }
    }
  }
  resolve_chains(salt, sampler, selves, where, contexts, parents, ids);
}

}  // namespace hotspan
