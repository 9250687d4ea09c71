#include "record/span_ids.h"

namespace hotspan::span_ids_detail {

PositionIndex::PositionIndex(size_t records) {
  size_t capacity = 16;
  while (capacity < 2 * records) capacity <<= 1;  // at most half full
  slots_.assign(capacity, {kEmpty, kNowhere});
  mask_ = capacity - 1;
}

void PositionIndex::set(uint64_t span, Position at) {
  size_t i = slot(span) & mask_;
  while (slots_[i].first != kEmpty && slots_[i].first != span) i = (i + 1) & mask_;
  slots_[i] = {span, at};
}

Position PositionIndex::find(uint64_t span) const {
  for (size_t i = slot(span) & mask_; slots_[i].first != kEmpty; i = (i + 1) & mask_) {
    if (slots_[i].first == span) return slots_[i].second;
  }
  return kNowhere;
}

void resolve_chains(uint64_t salt, uint64_t sampler, const std::vector<std::vector<uint64_t>>& selves,
                    const PositionIndex& where,
                    const std::vector<std::vector<const StoredContext*>>& contexts,
                    const std::vector<std::vector<uint64_t>>& parents,
                    std::vector<std::vector<SpanIds>>& ids) {
  // done[t][i]: 0 not yet, 1 settled (resolved or known unresolved).
  std::vector<std::vector<uint8_t>> done(ids.size());
  for (size_t t = 0; t < ids.size(); ++t) done[t].assign(ids[t].size(), 0);
  std::vector<Position> chain;
  for (size_t t0 = 0; t0 < ids.size(); ++t0) {
    for (size_t i0 = 0; i0 < ids[t0].size(); ++i0) {
      if (done[t0][i0]) continue;
      // Walk up to the first record whose trace is known or knowable.
      chain.clear();
      Position p = (static_cast<uint64_t>(t0) << 32) | i0;
      SpanIds top;  // the trace the chain inherits (resolved == false: none)
      while (true) {
        const size_t t = p >> 32, i = p & 0xFFFFFFFFu;
        if (done[t][i]) {
          top = ids[t][i];
          break;
        }
        chain.push_back(p);
        done[t][i] = 1;  // also guards against a (corrupt) cycle
        SpanIds& me = ids[t][i];
        const uint64_t parent = parents[t][i];
        if (parent != 0) me.parent = trace_id::wire_span_id(salt, parent);
        if (const StoredContext* c = contexts[t][i]) {
          if (c->parent_wire != 0) me.parent = c->parent_wire;
          top.trace = c->trace;
          top.flags = sampler::trace_flags(sampler, c->trace, c->parent_wire != 0, c->flags);
          top.resolved = c->trace.valid();
          top.context = c;
          break;
        }
        if (parent == 0) {
          top.trace = trace_id::derived_trace_id(salt, selves[t][i]);
          top.flags = sampler::trace_flags(sampler, top.trace, false, 0);
          top.resolved = true;
          break;
        }
        const Position at = where.find(parent);
        if (at == kNowhere) break;  // ancestor not in this batch: unresolved
        p = at;
      }
      for (const Position q : chain) {
        SpanIds& s = ids[q >> 32][q & 0xFFFFFFFFu];
        s.trace = top.resolved ? top.trace : TraceId{};
        s.flags = top.resolved ? top.flags : 0;
        s.resolved = top.resolved;
        s.context = top.resolved ? top.context : nullptr;
      }
    }
  }
}

}  // namespace hotspan::span_ids_detail
