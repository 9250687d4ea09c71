// The W3C ids of the innermost span of an open-span stack: its trace is its
// own or its nearest open ancestor's stored context, else derived from the
// bottom open span; resolved == false when a given parent without a context
// comes first (its trace is not known on this thread alone). The walk of
// a ThreadState's stack (open_span_ids), which the js backend reaches through
// the wasm core's hs_rec_open_ids.
//
// `stack[k]` (k < depth) has .local and .flags (kFlagContext,
// kFlagParentElsewhere); `given[i]` (i < given_count) has .context (a
// StoredContext) and .parent_span, one per frame with either flag, in stack
// order. `sampler` (sampler.h) decides the trace's sampled flag.
#pragma once

#include <cstddef>
#include <cstdint>

#include "record/span_ids.h"
#include "record/sampler.h"
#include "record/span_record.h"
#include "record/trace_id.h"

namespace hotspan {

template <typename Frames, typename Given>
SpanIds open_stack_ids(uint32_t timeline, Frames stack, uint32_t depth, const Given& given, size_t given_count,
                       uint64_t salt, uint64_t sampler = 0) {
  SpanIds ids;
  if (depth == 0) return ids;
  const uint32_t top = depth - 1;
  ids.span = trace_id::wire_span_id(salt, make_span_id(timeline, stack[top].local));
  size_t g_at = given_count;
  for (uint32_t k = top + 1; k-- > 0;) {
    const auto& o = stack[k];
    const auto* g = (o.flags & (kFlagContext | kFlagParentElsewhere)) ? &given[--g_at] : nullptr;
    if (k == top) {
      if (g != nullptr && (o.flags & kFlagContext) && g->context.parent_wire != 0) {
        ids.parent = g->context.parent_wire;
      } else if (g != nullptr && (o.flags & kFlagParentElsewhere)) {
        ids.parent = trace_id::wire_span_id(salt, g->parent_span);
      } else if (k > 0) {
        ids.parent = trace_id::wire_span_id(salt, make_span_id(timeline, stack[k - 1].local));
      }
    }
    if (g != nullptr && (o.flags & kFlagContext)) {
      ids.trace = g->context.trace;
      ids.flags = sampler::trace_flags(sampler, ids.trace, g->context.parent_wire != 0, g->context.flags);
      ids.resolved = true;
      return ids;
    }
    // A given parent without a context: its trace is not known here.
    if (g != nullptr) return ids;
  }
  ids.trace = trace_id::derived_trace_id(salt, make_span_id(timeline, stack[0].local));
  ids.flags = sampler::trace_flags(sampler, ids.trace, false, 0);
  ids.resolved = true;
  return ids;
}

}  // namespace hotspan
