// The tail keep of a tracer's OTLP export: which traces the head sampler
// (sampler.h) leaves out are still exported whole, because their local root
// was slow or a span in them failed. The one rule, read by the OTLP batcher
// (export/otlp_batcher.h) on the addon and, through native/wasm, on the js
// backend. Like the sampler it is one 64-bit word, so it crosses every
// boundary as a bigint:
//
//   bits 0..39   slowerThan in microseconds (when bit 40 is set): a trace
//                whose local root lasted longer is kept.
//   bit 40       keep slow traces.
//   bit 41       keep traces with a span flagged error (kFlagError).
//   bits 42..63  maxWait in milliseconds: how long a span read before its
//                root ended waits for it; past that its trace is decided by
//                the head sampler alone (counted).
//
// Word 0: no tail keep, the head decision alone (what hotspan did before).
#pragma once

#include <cstdint>

namespace hotspan::tail_keep {

constexpr uint64_t kSlowerMask = (uint64_t{1} << 40) - 1;
constexpr uint64_t kKeepSlow = uint64_t{1} << 40;
constexpr uint64_t kKeepErrors = uint64_t{1} << 41;
constexpr int kWaitShift = 42;
constexpr uint64_t kMaxWaitMs = (uint64_t{1} << 22) - 1;

inline bool enabled(uint64_t word) { return (word & (kKeepSlow | kKeepErrors)) != 0; }

inline int64_t max_wait_ns(uint64_t word) { return static_cast<int64_t>(word >> kWaitShift) * 1000000; }

// Whether a trace the head sampler left out is kept: its local root lasted
// `root_ns` (negative: the root is not among what is known), `error`: a span
// of it is flagged error.
inline bool keeps(uint64_t word, int64_t root_ns, bool error) {
  if (error && (word & kKeepErrors) != 0) return true;
  if ((word & kKeepSlow) == 0 || root_ns < 0) return false;
  return root_ns > static_cast<int64_t>(word & kSlowerMask) * 1000;
}

}  // namespace hotspan::tail_keep
