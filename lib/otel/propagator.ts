// W3C Trace Context for @opentelemetry/api's propagation, on hotspan's one
// traceparent/tracestate implementation (../trace-context).

import {
  createTraceState,
  isSpanContextValid,
  trace,
  type Context,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
} from '@opentelemetry/api';

import { contextFromValues, formatTraceparent } from '../tracer/trace-context';

const values = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The W3C Trace Context propagator (traceparent, tracestate), with the parsing rules of `tracer.extract()`. */
export class TraceContextPropagator implements TextMapPropagator {
  /** Writes the context's span as traceparent (and tracestate) into the carrier, through `setter`. */
  inject(ctx: Context, carrier: unknown, setter: TextMapSetter): void {
    const sc = trace.getSpanContext(ctx);
    if (sc === undefined || !isSpanContextValid(sc)) return;
    setter.set(carrier, 'traceparent', formatTraceparent({ traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags }));
    const ts = sc.traceState?.serialize();
    if (ts !== undefined && ts !== '') setter.set(carrier, 'tracestate', ts);
  }

  /** The context with the carrier's traceparent (and tracestate) as its remote span; `ctx` unchanged when there is none or it is invalid. */
  extract(ctx: Context, carrier: unknown, getter: TextMapGetter): Context {
    const c = contextFromValues(values(getter.get(carrier, 'traceparent')), values(getter.get(carrier, 'tracestate')));
    if (c === undefined) return ctx;
    return trace.setSpanContext(ctx, {
      traceId: c.traceId,
      spanId: c.spanId,
      traceFlags: c.traceFlags,
      isRemote: true,
      ...(c.traceState !== undefined ? { traceState: createTraceState(c.traceState) } : {}),
    });
  }

  fields(): string[] {
    return ['traceparent', 'tracestate'];
  }
}
