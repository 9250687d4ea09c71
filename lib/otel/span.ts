// An OpenTelemetry Span that is a hotspan async span: begun on a track when
// started (so spanContext() has its real ids at once), ended with what the
// OTel API set meanwhile (name, attributes, status, events, links, times).

import {
  SpanStatusCode,
  type Attributes as OtelAttributes,
  type AttributeValue,
  type Exception,
  type Link,
  type Span,
  type SpanAttributes,
  type SpanContext,
  type SpanStatus,
  type TimeInput,
} from '@opentelemetry/api';

import { localCurrent, type Current } from '../tracer/async-context';
import type { Backend } from '../backends/backend';
import { FLAG_ERROR } from '../common/flags';
import type { AsyncContextHook } from '../tracer/internal';
import { halves, hex64 } from '../tracer/trace-context';
import type { Tracer } from '../tracer/tracer';
import { isReservedOtelKey, otelAttrs, storedLink, type OtelData } from './otel-data';
import { axisMs, unixNano } from './time';

/** OpenTelemetry's default span limits (SpanLimits): past them, data is counted as dropped. */
export const LIMITS = { attributes: 128, events: 128, links: 128 } as const;

function isAttributeValue(v: unknown): v is AttributeValue {
  if (typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  return Array.isArray(v) && v.every((x) => x === null || x === undefined || typeof x === 'string' || typeof x === 'boolean' || typeof x === 'number');
}

/** What a span needs from where it was started. */
export interface SpanSite {
  readonly tracer: Tracer;
  readonly backend: Backend;
  readonly scope: { name: string; version?: string };
  /** scopeSuffix(scope), made once. */
  readonly scopeJson: string;
  /** The tracer's async context, once a context with one of these spans was entered (context-manager.ts). */
  asyncContext?: AsyncContextHook | undefined;
}

/** What a span takes from a valid parent context: its trace. */
export interface InheritedTrace {
  readonly traceId: string;
  readonly traceFlags: number;
  readonly traceState?: SpanContext['traceState'];
}

export class HotspanSpan implements Span {
  private name: string;
  private nameChanged = false;
  private readonly attributes: Record<string, AttributeValue> = {};
  private attributeCount = 0;
  private ended = false;
  private readonly data: OtelData;
  private context: SpanContext | undefined;
  private current: Current | undefined;

  /**
   * @param token the hotspan async span (its tracer-wide span id)
   * @param parent the trace of its valid parent context; undefined: it starts a trace
   * @param startMs an explicit start on the performance.now() axis, NaN: when begun
   */
  constructor(
    readonly site: SpanSite,
    readonly token: number,
    private readonly parent: InheritedTrace | undefined,
    name: string,
    kind: number,
    private readonly startMs: number,
  ) {
    this.name = name;
    this.data = {
      kind,
      status: undefined,
      statusMessage: undefined,
      events: [],
      links: [],
      dropped: { attributes: 0, events: 0, links: 0 },
      scope: site.scope,
    };
  }

  /**
   * Its real W3C ids (the core's, from the token), made when first asked:
   * most spans of an instrumentation are never asked (a server span that
   * propagates nothing), and the ids cost a native call and three hex strings.
   */
  spanContext(): SpanContext {
    if (this.context === undefined) {
      const own = this.site.backend.idsOf(this.token);
      const p = this.parent;
      this.context =
        p === undefined
          ? { traceId: hex64(own[1]) + hex64(own[2]), spanId: hex64(own[0]), traceFlags: Number(own[3]) }
          : { traceId: p.traceId, spanId: hex64(own[0]), traceFlags: p.traceFlags, ...(p.traceState !== undefined ? { traceState: p.traceState } : {}) };
    }
    return this.context;
  }

  /**
   * This span as the current span of its tracer's async context (made once;
   * its ids are asked only when a span is begun under it): the context
   * manager makes it current for a context whose span is this one.
   */
  asCurrent(): Current {
    return (this.current ??= localCurrent(() => {
      const own = this.site.backend.idsOf(this.token);
      const p = this.parent;
      const [traceHi, traceLo] = p === undefined ? [own[1], own[2]] : halves(p.traceId);
      return { traceHi, traceLo, wire: own[0], flags: p === undefined ? Number(own[3]) : p.traceFlags, tracestate: p?.traceState?.serialize() ?? '' };
    }, this.token));
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (this.ended || typeof key !== 'string' || key === '' || !isAttributeValue(value)) return this;
    if (!(key in this.attributes)) {
      // A key hotspan keeps the span's own data under cannot be set: counted as dropped.
      if (this.attributeCount >= LIMITS.attributes || isReservedOtelKey(key)) {
        this.data.dropped.attributes++;
        return this;
      }
      this.attributeCount++;
    }
    this.attributes[key] = value;
    return this;
  }

  setAttributes(attributes: SpanAttributes): this {
    // for-in, not Object.entries: no array of pairs per call.
    for (const k in attributes) {
      if (!Object.prototype.hasOwnProperty.call(attributes, k)) continue;
      const v = attributes[k];
      if (v !== undefined) this.setAttribute(k, v);
    }
    return this;
  }

  addEvent(name: string, attributesOrStartTime?: SpanAttributes | TimeInput, startTime?: TimeInput): this {
    if (this.ended) return this;
    if (this.data.events.length >= LIMITS.events) {
      this.data.dropped.events++;
      return this;
    }
    let attrs: OtelAttributes | undefined;
    let time = startTime;
    if (Array.isArray(attributesOrStartTime) || typeof attributesOrStartTime === 'number' || attributesOrStartTime instanceof Date) {
      time = attributesOrStartTime;
    } else {
      attrs = attributesOrStartTime;
    }
    const ms = time === undefined ? this.site.tracer.now() : axisMs(time);
    this.data.events.push({ name: String(name), time_unix_nano: unixNano(ms), ...(attrs !== undefined ? { attributes: attrs } : {}) });
    return this;
  }

  addLink(link: Link): this {
    if (this.ended) return this;
    if (this.data.links.length >= LIMITS.links) {
      this.data.dropped.links++;
      return this;
    }
    this.data.links.push(storedLink(link));
    return this;
  }

  addLinks(links: Link[]): this {
    for (const l of links) this.addLink(l);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.ended) return this;
    // OK is final (the specification); UNSET never overrides.
    if (this.data.status === 'ok' || status.code === SpanStatusCode.UNSET) return this;
    this.data.status = status.code === SpanStatusCode.OK ? 'ok' : 'error';
    this.data.statusMessage = status.code === SpanStatusCode.ERROR ? status.message : undefined;
    return this;
  }

  updateName(name: string): this {
    if (this.ended) return this;
    this.name = String(name);
    this.nameChanged = true;
    return this;
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attrs: Record<string, AttributeValue> = {};
    if (typeof exception === 'string') {
      attrs['exception.message'] = exception;
    } else if (exception !== null && typeof exception === 'object') {
      const e = exception as { name?: unknown; code?: unknown; message?: unknown; stack?: unknown };
      const type = e.code ?? e.name;
      if (type !== undefined) attrs['exception.type'] = String(type);
      if (typeof e.message === 'string') attrs['exception.message'] = e.message;
      if (typeof e.stack === 'string') attrs['exception.stacktrace'] = e.stack;
    }
    this.addEvent('exception', attrs, time);
  }

  isRecording(): boolean {
    return !this.ended;
  }

  end(endTime?: TimeInput): void {
    if (this.ended) return;
    this.ended = true;
    const endMs = endTime === undefined ? Number.NaN : axisMs(endTime);
    const nameId = this.nameChanged ? this.site.tracer.name(this.name) : -1;
    const flags = this.data.status === 'error' ? FLAG_ERROR : 0;
    // Never throws (a closed tracer records nothing, as for traceAsync).
    this.site.backend.asyncFinish(this.token, flags, this.startMs, endMs, nameId, otelAttrs(this.attributes, this.data, this.site.scopeJson));
  }
}
