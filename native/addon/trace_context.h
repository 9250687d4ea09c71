// The binding's trace-context methods (cold path): begin a span or an async
// span under a given context, the W3C ids of the innermost open span and of
// a frozen view's records, the tracer's id salt. 64-bit values travel as
// BigUint64Array; lib/tracer/trace-context.ts formats them as hex.
#pragma once

#include <napi.h>

namespace hotspan_addon::trace_context {

// beginContext(nameId, attrsJson, ids: BigUint64Array [trace hi, trace lo,
// parent wire id, parent span id], flags, tracestate): status. A zero trace
// stores no context; a zero parent span keeps the innermost open span.
Napi::Value BeginContext(const Napi::CallbackInfo& info);
// asyncBeginContext(track, nameId, attrsJson, ids, flags, tracestate): token.
Napi::Value AsyncBeginContext(const Napi::CallbackInfo& info);
// openIds(): BigUint64Array [trace hi, trace lo, span, parent, flags |
// resolved << 8, tracer-wide span id] of this thread's innermost open span
// (all 0: none open).
Napi::Value OpenIds(const Napi::CallbackInfo& info);
// idsOf(span): BigUint64Array [wire span id, trace hi, trace lo] of
// tracer-wide span id `span`: its wire id and the trace it starts as a root.
Napi::Value IdsOf(const Napi::CallbackInfo& info);
// spanIds(view): BigUint64Array, those 5 per record of the frozen view, in
// the view's record order.
Napi::Value SpanIds(const Napi::CallbackInfo& info);
// spanTracestates(view): [index, tracestate, index, tracestate, ...] for the
// records of the view (view order) whose trace carries a W3C tracestate (a
// stored context's, e.g. extract()'s, inherited down the chain): only those.
Napi::Value SpanTracestates(const Napi::CallbackInfo& info);
// asyncFinish(token, flags, startMs, endMs, nameId, attrsJson): ends an
// async span with what its begin did not know: a start and an end in ms on
// the performance.now() axis (NaN: keep the begin's / now), a name id (-1:
// keep), attributes (undefined: keep). A NativeStatus.
Napi::Value AsyncFinish(const Napi::CallbackInfo& info);
// idSalt(): bigint.
Napi::Value IdSalt(const Napi::CallbackInfo& info);

}  // namespace hotspan_addon::trace_context
