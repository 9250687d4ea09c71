// hotspan's TracerProvider for @opentelemetry/api: every OTel span is a
// hotspan async span on the track "otel" (it may end on another await path
// than the one it began on), with its real W3C ids from the core.

import { randomBytes } from 'node:crypto';

import {
  context as otelContext,
  isSpanContextValid,
  propagation,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer as OtelTracer,
  type TracerOptions as OtelTracerOptions,
  type TracerProvider as OtelTracerProvider,
} from '@opentelemetry/api';

import { unwrapped } from '../tracer/async-context';
import type { Backend, Given } from '../backends/backend';
import { recording } from '../tracer/internal';
import type { TracerOptions } from '../tracer/options';
import { halves } from '../tracer/trace-context';
import { Tracer } from '../tracer/tracer';
import { AsyncLocalStorageContextManager } from './context-manager';
import { TraceContextPropagator } from './propagator';
import { scopeSuffix } from './otel-data';
import { HotspanSpan, type SpanSite } from './span';
import { axisMs } from './time';

/** The track OpenTelemetry spans are recorded on. */
export const OTEL_TRACK = 'otel';

class HotspanOtelTracer implements OtelTracer {
  private readonly site: SpanSite;
  private track: number | undefined;

  constructor(
    private readonly tracer: Tracer,
    scope: { name: string; version?: string },
  ) {
    this.site = {
      tracer,
      // Read per span: the recording backend as it is now (enableAsyncContext and close() swap it).
      get backend(): Backend {
        return tracer[recording];
      },
      scope,
      scopeJson: scopeSuffix(scope),
    };
  }

  startSpan(name: string, options: SpanOptions = {}, ctx: Context = otelContext.active()): Span {
    const parentSpan = options.root === true ? undefined : trace.getSpan(ctx);
    const parent = parentSpan?.spanContext();
    const valid = parent !== undefined && isSpanContextValid(parent);
    if (valid && (parent.traceFlags & TraceFlags.SAMPLED) === 0) {
      // Sampled out upstream: a non-recording span that still propagates the trace.
      return trace.wrapSpanContext({ traceId: parent.traceId, spanId: randomBytes(8).toString('hex'), traceFlags: TraceFlags.NONE, traceState: parent.traceState });
    }
    const b = this.site.backend;
    let token: number;
    try {
      const track = (this.track ??= this.tracer.track(OTEL_TRACK));
      const nameId = this.tracer.name(String(name));
      if (!valid) {
        // A root starts a new trace: not under hotspan's current span (its async context, an open span).
        token = (options.root === true ? unwrapped(b) : b).asyncBegin(track, nameId, '');
      } else {
        const [hi, lo] = halves(parent.traceId);
        const local = parentSpan instanceof HotspanSpan && parentSpan.site.tracer === this.tracer ? parentSpan.token : 0;
        const given: Given = {
          ids: new BigUint64Array([hi, lo, BigInt('0x' + parent.spanId), BigInt(local)]),
          flags: parent.traceFlags,
          tracestate: parent.traceState?.serialize() ?? '',
        };
        token = b.asyncBeginContext(track, nameId, '', given);
      }
    } catch {
      // A closed tracer: the API never throws; nothing is recorded.
      return trace.wrapSpanContext({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: TraceFlags.NONE });
    }
    const startMs = options.startTime === undefined ? Number.NaN : axisMs(options.startTime);
    const span = new HotspanSpan(this.site, token, valid ? parent : undefined, String(name), options.kind ?? 0, startMs);
    if (options.attributes !== undefined) span.setAttributes(options.attributes);
    if (options.links !== undefined) span.addLinks(options.links);
    return span;
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, ctx: Context, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, a?: SpanOptions | F, b?: Context | F, c?: F): ReturnType<F> {
    const fn = (typeof a === 'function' ? a : typeof b === 'function' ? b : c) as F;
    const options = typeof a === 'object' ? a : undefined;
    const ctx = typeof b === 'object' ? b : otelContext.active();
    const span = this.startSpan(name, options, ctx);
    return otelContext.with(trace.setSpan(ctx, span), () => fn(span)) as ReturnType<F>;
  }
}

/**
 * A TracerProvider whose spans are hotspan spans: OpenTelemetry
 * instrumentations record into `tracer` (given, or made from options).
 */
export class TracerProvider implements OtelTracerProvider {
  /** The hotspan tracer the OpenTelemetry spans record into. */
  readonly tracer: Tracer;
  private readonly tracers = new Map<string, HotspanOtelTracer>();

  constructor(tracerOrOptions?: Tracer | TracerOptions) {
    this.tracer = tracerOrOptions instanceof Tracer ? tracerOrOptions : new Tracer(tracerOrOptions);
  }

  /** An OpenTelemetry Tracer whose spans are hotspan spans, with `name` and `version` as their instrumentation scope. */
  getTracer(name: string, version?: string, options?: OtelTracerOptions): OtelTracer {
    const key = `${name}@${version ?? ''}:${options?.schemaUrl ?? ''}`;
    let t = this.tracers.get(key);
    if (t === undefined) {
      t = new HotspanOtelTracer(this.tracer, { name, ...(version !== undefined ? { version } : {}) });
      this.tracers.set(key, t);
    }
    return t;
  }

  /**
   * Makes this the global provider of @opentelemetry/api, with an
   * AsyncLocalStorage context manager and the W3C Trace Context propagator
   * (unless others are registered already). Returns this.
   */
  register(): this {
    trace.setGlobalTracerProvider(this);
    otelContext.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new TraceContextPropagator());
    return this;
  }

  /** Flushes the tracer (OTel spans end into it as they end). */
  forceFlush(): Promise<void> {
    this.tracer.flush();
    return Promise.resolve();
  }

  /** Flushes; the tracer stays open (it is the caller's, or close it with provider.tracer.close()). */
  shutdown(): Promise<void> {
    return this.forceFlush();
  }
}
