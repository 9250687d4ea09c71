// The head sampling decision of a trace: the one rule that says whether a
// trace's sampled flag (W3C trace-flags bit 0) is set, read by everything
// that shows or acts on it (inject()'s traceparent through open_stack_ids,
// the resolver span_ids.h, the OTLP export otlp_batcher.h), on the addon and,
// through native/wasm, on the js backend. A sampler is one 64-bit word, so it
// crosses every boundary as the id salt does:
//
//   bits 0..55  the rejection threshold T of OpenTelemetry's TraceIdRatioBased
//               (specification/trace/sdk.md, W3C Trace Context Level 2
//               randomness): a root is sampled when the least significant 56
//               bits of its trace id, R, are >= T. T = 2^56 - round(ratio *
//               2^56), so T = 0 samples every trace; the same trace id gives
//               the same answer in every process with the same ratio, and a
//               trace sampled at one ratio is sampled at every higher one.
//   bit 56      the root sampler is always_off (no T takes every trace out).
//   bit 57      not parent-based: a trace under a parent context is decided
//               as a root is (TraceIdRatioBased ignores the parent's flag).
//
// Word 0 is parentbased_always_on, what hotspan did before sampling existed:
// every own root sampled, a parent's flag followed.
#pragma once

#include <cstdint>

#include "record/trace_id.h"

namespace hotspan::sampler {

constexpr uint64_t kThresholdMask = (uint64_t{1} << 56) - 1;
constexpr uint64_t kRootOff = uint64_t{1} << 56;
constexpr uint64_t kIgnoreParent = uint64_t{1} << 57;
constexpr uint64_t kKnownBits = kThresholdMask | kRootOff | kIgnoreParent;

// Whether a trace that starts here (no parent context) is sampled.
inline bool root_sampled(uint64_t word, const TraceId& trace) {
  if ((word & kRootOff) != 0) return false;
  return (trace.lo & kThresholdMask) >= (word & kThresholdMask);
}

// The trace-flags of trace `trace`: under a parent context (`has_parent`,
// whose flags are `parent_flags`) the parent's when parent-based, else the
// root rule's sampled bit with the parent's other bits.
inline uint8_t trace_flags(uint64_t word, const TraceId& trace, bool has_parent, uint8_t parent_flags) {
  if (has_parent && (word & kIgnoreParent) == 0) return parent_flags;
  const uint8_t others = has_parent ? static_cast<uint8_t>(parent_flags & ~kTraceFlagSampled) : 0;
  return static_cast<uint8_t>(others | (root_sampled(word, trace) ? kTraceFlagSampled : 0));
}

}  // namespace hotspan::sampler
