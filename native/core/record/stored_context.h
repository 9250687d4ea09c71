// The trace context a span carries when it does not inherit one from its
// parent record: a remote parent from `extract()` (traceparent/tracestate),
// or an explicit parent context given at begin (a span begun in an async
// continuation under the span current when the work was scheduled). Kept in
// its timeline's context side table, keyed by local id (kFlagContext on the
// record), so only spans that have one pay for it.
#pragma once

#include <cstdint>
#include <string>

#include "record/trace_id.h"

namespace hotspan {

struct StoredContext {
  TraceId trace;             // the span's trace id (never all-zero)
  uint64_t parent_wire = 0;  // the parent's wire span id; 0: the span is a root of `trace`
  uint8_t flags = 0;         // W3C trace-flags (kTraceFlagSampled)
  std::string tracestate;    // W3C tracestate as received, "" when none
};

}  // namespace hotspan
