// hotspan's finalized spans handed to any OpenTelemetry SpanExporter (the
// SDK's ReadableSpan shape, with the core's W3C ids and the tracestate of a
// trace that came with one), so a user keeps the exporter they already run.

import { SpanStatusCode, TraceFlags, type Attributes, type HrTime, type Link, type SpanContext, createTraceState } from '@opentelemetry/api';

import { internals } from '../tracer/internal';
import { toRecords } from '../read/records';
import { hex64 } from '../tracer/trace-context';
import type { Tracer } from '../tracer/tracer';
import { readOtelAttrs } from './otel-data';
import { fromUnixNano, hrDuration, hrTime } from './time';

/** The resource shape exporters read (the SDK's Resource). */
export interface ResourceLike {
  /** The resource attributes (service.name, ...). */
  readonly attributes: Attributes;
  /** Whether attributes are still being resolved: false for hotspan's. */
  readonly asyncAttributesPending?: boolean;
  /** Resolves once the attributes are final. */
  waitForAsyncAttributes?(): Promise<void>;
}

/** The SDK's ReadableSpan, as hotspan fills it. */
export interface ReadableSpanLike {
  /** The span name. */
  readonly name: string;
  /** The OpenTelemetry SpanKind: INTERNAL (0) unless an OpenTelemetry span gave one. */
  readonly kind: number;
  /** The span's trace id, span id, flags and tracestate. */
  readonly spanContext: () => SpanContext;
  /** The parent's context; absent for a root. */
  readonly parentSpanContext?: SpanContext;
  /** Start, since the Unix epoch. */
  readonly startTime: HrTime;
  /** End, since the Unix epoch. */
  readonly endTime: HrTime;
  /** ERROR for a span that threw or rejected, else an OpenTelemetry span's own status. */
  readonly status: {
    /** The SpanStatusCode. */
    code: number;
    /** Its message, if any. */
    message?: string;
  };
  /** The span's attributes. */
  readonly attributes: Attributes;
  /** An OpenTelemetry span's links. */
  readonly links: Link[];
  /** An OpenTelemetry span's events. */
  readonly events: Array<{
    /** Event name. */
    name: string;
    /** When it happened. */
    time: HrTime;
    /** Its attributes. */
    attributes?: Attributes;
    /** Attributes it dropped. */
    droppedAttributesCount?: number;
  }>;
  /** endTime - startTime. */
  readonly duration: HrTime;
  /** Always true: only ended spans are exported. */
  readonly ended: boolean;
  /** The adapter's resource. */
  readonly resource: ResourceLike;
  /** `hotspan`, or the name and version of the OpenTelemetry tracer that made the span. */
  readonly instrumentationScope: {
    /** Scope name. */
    name: string;
    /** Scope version. */
    version?: string;
    /** Scope schema URL. */
    schemaUrl?: string;
  };
  /** Attributes the span dropped. */
  readonly droppedAttributesCount: number;
  /** Events the span dropped. */
  readonly droppedEventsCount: number;
  /** Links the span dropped. */
  readonly droppedLinksCount: number;
}

/** Any OpenTelemetry SpanExporter. */
export interface SpanExporterLike {
  /** Exports a batch and calls back with its ExportResult (code 0: success). */
  export(spans: ReadableSpanLike[], resultCallback: (result: { code: number; error?: Error }) => void): void;
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
  /** Exports what is buffered. */
  forceFlush?(): Promise<void>;
}

/** Options of `new SpanExporterAdapter(tracer, exporter, options)`. */
export interface SpanExporterAdapterOptions {
  /** The resource of every span. Default: service.name from OTEL_SERVICE_NAME, else "unknown_service:node". */
  resource?: ResourceLike;
}

const IDS = 5; // per record: trace hi, trace lo, span, parent, flags | resolved << 8

function defaultResource(): ResourceLike {
  const name = process.env.OTEL_SERVICE_NAME;
  return {
    attributes: { 'service.name': name !== undefined && name !== '' ? name : 'unknown_service:node', 'telemetry.sdk.name': 'hotspan', 'telemetry.sdk.language': 'nodejs' },
    asyncAttributesPending: false,
    waitForAsyncAttributes: () => Promise.resolve(),
  };
}

/** hotspan's committed spans handed to any OpenTelemetry SpanExporter, as the SDK's ReadableSpan. */
export class SpanExporterAdapter {
  private readonly resource: ResourceLike;
  /** Per timeline: the local id of the last record handed over. */
  private readonly last = new Map<number, number>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly tracer: Tracer,
    private readonly exporter: SpanExporterLike,
    options?: SpanExporterAdapterOptions,
  ) {
    this.resource = options?.resource ?? defaultResource();
  }

  /**
   * Hands the spans committed since the previous call to the exporter and
   * resolves with how many. A timeline's records whose parent is still open
   * wait for a later call (their trace id is not known before), so one
   * timeline's spans go out in the order they ended. Rejects when the
   * exporter reports a failure (those spans are not sent again).
   */
  export(): Promise<number> {
    const next = this.chain.then(() => this.exportNow());
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Exports what is left, then shuts the exporter down. */
  async shutdown(): Promise<void> {
    await this.export();
    await this.exporter.shutdown();
  }

  private exportNow(): Promise<number> {
    const spans = this.collect();
    if (spans.length === 0) return Promise.resolve(0);
    return new Promise((resolve, reject) => {
      this.exporter.export(spans, (result) => {
        if (result.code === 0) resolve(spans.length);
        else reject(result.error ?? new Error(`hotspan/otel: the exporter failed to export ${String(spans.length)} spans`));
      });
    });
  }

  private collect(): ReadableSpanLike[] {
    this.tracer.flush();
    const view = this.tracer[internals]().backend.freeze();
    const snap = view.read(0, view.count);
    const ids = view.spanIds();
    const states = view.spanTracestates();
    const records = toRecords(snap);
    const out: ReadableSpanLike[] = [];
    // Records come timeline after timeline, each in end order.
    let i = 0;
    while (i < records.length) {
      const tl = records[i].timeline;
      let j = i;
      while (j < records.length && records[j].timeline === tl) j++;
      // After the last record handed over (all of them if it was overwritten).
      const last = this.last.get(tl);
      let from = i;
      if (last !== undefined) {
        for (let k = j - 1; k >= i; k--) {
          if (records[k].id % 4294967296 === last) {
            from = k + 1;
            break;
          }
        }
      }
      for (let k = from; k < j; k++) {
        const flags = ids[IDS * k + 4];
        if ((flags & 0x100n) === 0n) break; // unresolved: wait for its ancestor
        out.push(this.readable(records[k], ids, k, states.get(k)));
        this.last.set(tl, records[k].id % 4294967296);
      }
      i = j;
    }
    return out;
  }

  /** @param tracestate its trace's W3C tracestate (a remote parent's), if it has one */
  private readable(r: ReturnType<typeof toRecords>[number], ids: BigUint64Array, k: number, tracestate: string | undefined): ReadableSpanLike {
    const traceId = hex64(ids[IDS * k]) + hex64(ids[IDS * k + 1]);
    const spanId = hex64(ids[IDS * k + 2]);
    const parent = ids[IDS * k + 3];
    const traceFlags = Number(ids[IDS * k + 4] & 0xffn);
    const { attributes, data } = readOtelAttrs(r.attrs);
    // The parent is of the same trace: the same tracestate.
    const state = tracestate !== undefined ? { traceState: createTraceState(tracestate) } : {};
    const ctx: SpanContext = { traceId, spanId, traceFlags, ...state };
    const status =
      r.error || data.status === 'error'
        ? { code: SpanStatusCode.ERROR, ...(data.statusMessage !== undefined ? { message: data.statusMessage } : {}) }
        : { code: data.status === 'ok' ? SpanStatusCode.OK : SpanStatusCode.UNSET };
    return {
      name: r.name,
      kind: data.kind,
      spanContext: () => ctx,
      ...(parent !== 0n ? { parentSpanContext: { traceId, spanId: hex64(parent), traceFlags, ...state } } : {}),
      startTime: hrTime(r.start),
      endTime: hrTime(r.end),
      duration: hrDuration(r.end - r.start),
      status,
      attributes,
      links: data.links.map((l) => ({
        context: {
          traceId: l.trace_id,
          spanId: l.span_id,
          traceFlags: l.flags ?? TraceFlags.NONE,
          ...(l.trace_state !== undefined ? { traceState: createTraceState(l.trace_state) } : {}),
        },
        ...(l.attributes !== undefined ? { attributes: l.attributes } : {}),
      })),
      events: data.events.map((e) => ({
        name: e.name,
        time: hrTime(fromUnixNano(e.time_unix_nano)),
        ...(e.attributes !== undefined ? { attributes: e.attributes } : {}),
        droppedAttributesCount: 0,
      })),
      ended: true,
      resource: this.resource,
      instrumentationScope: data.scope,
      droppedAttributesCount: data.dropped.attributes,
      droppedEventsCount: data.dropped.events,
      droppedLinksCount: data.dropped.links,
    };
  }
}
