// OTLP export of hotspan/auto's spans, when the OTEL_* variables ask for it.
//
// A tracer of its own, with tracer.exportOtlp() configured by the OTEL_*
// variables, receives the automatic spans (lib/auto/auto-record.ts, through its
// SpanSink). It is a second tracer, not the automatic one, so the file
// written at exit (the automatic tracer's snapshot plus withAutoSpans) stays
// as it was.
//
// Parents and trace ids are the file's: a span is begun in the exporting
// tracer under its parent's context (asyncBeginContext), so it carries the
// parent's trace id and wire span id, and is finished with its late start,
// name and attributes (asyncFinish) when it ends. A span is begun only when
// its ids are needed: when it ends, when a child of it ends first, or at open
// for a client request or fetch, whose traceparent goes out with it. So a
// span with no child pays one begin and one finish, as before.
//
// A connection's parent is the request that adopts it, which happens after
// the connection (and its DNS lookup) began. A span that ends while an
// ancestor is still adoptable waits for that ancestor to settle, and is
// exported then; at stop (exit) whatever still waits goes out as it is.
//
// Trace context across processes: a server span with a valid incoming
// traceparent is begun under that remote parent (its trace id, parent span
// id and tracestate); a client request (http, https) or fetch gets a
// traceparent header of its own span unless it already has one. Only with
// export on: the file shows no remote parents.

import type { AutoSpan, SpanSink } from './auto-record';
import type { Backend, Given } from '../backends/backend';
import { FLAG_ERROR } from '../common/flags';
import { internals } from '../tracer/internal';
import type { KindName } from '../otel/otel-data';
import { extractContext, formatTraceparent, hex64 } from '../tracer/trace-context';
import { remoteCurrent } from '../tracer/async-context';
import { Tracer } from '../tracer/tracer';

/** The OTLP span kind of a track's spans (stored as otelAttrs does; the rest are internal). */
const KINDS: Readonly<Record<string, KindName>> = { 'http server': 'server', 'http client': 'client', fetch: 'client', pg: 'client', redis: 'client' };

type Env = Record<string, string | undefined>;

function set(v: string | undefined): boolean {
  return v !== undefined && v.trim() !== '';
}

/** Export is on when an endpoint is set and OTEL_TRACES_EXPORTER (default otlp) lists otlp. */
export function otlpWanted(env: Env): boolean {
  if (!set(env.OTEL_EXPORTER_OTLP_ENDPOINT) && !set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)) return false;
  const exporters = set(env.OTEL_TRACES_EXPORTER) ? (env.OTEL_TRACES_EXPORTER as string) : 'otlp';
  return exporters.split(',').some((e) => e.trim() === 'otlp');
}

/** A span begun in the exporting tracer: its token, and the context its children are begun under. */
interface Begun {
  readonly token: number;
  readonly children: Given;
}

type Headers = { getHeader?(n: string): unknown; setHeader?(n: string, v: string): void; headersSent?: boolean };
type UndiciRequest = { headers?: unknown; addHeader?(n: string, v: string): unknown };

/** The first ancestor that is (or will be) in the trace: an untraced connection gives way to its own parent. */
function tracedParent(s: AutoSpan): AutoSpan | undefined {
  let up = s.parent;
  while (up?.untraced === true) up = up.parent;
  return up;
}

/** The nearest of `s` and its ancestors whose parent may still change, or undefined when its chain is final. */
function adoptableIn(s: AutoSpan): AutoSpan | undefined {
  for (let x: AutoSpan | undefined = s; x !== undefined; x = x.parent) if (x.adoptable === true) return x;
  return undefined;
}

class AutoExport implements SpanSink {
  private readonly b: Backend;
  private readonly tracks = new Map<string, number>();
  private readonly begun = new WeakMap<AutoSpan, Begun>();
  /** Server spans' remote parents (an incoming traceparent). */
  private readonly remote = new WeakMap<AutoSpan, Given>();
  /** Ended spans waiting for an adoptable ancestor (the key) to settle. */
  private readonly waiting = new Map<AutoSpan, AutoSpan[]>();

  constructor(private readonly tracer: Tracer) {
    this.b = tracer[internals]().backend;
  }

  opened(s: AutoSpan, message: object): void {
    try {
      if (s.track === 'http server') {
        const ctx = extractContext((message as { headers?: unknown }).headers);
        if (ctx !== undefined) this.remote.set(s, remoteCurrent(ctx).given);
        return;
      }
      // A client request or fetch: its traceparent goes out with it (its parent, a server span or none, is final).
      const c = this.begin(s).children;
      const value = formatTraceparent({ traceId: hex64(c.ids[0]) + hex64(c.ids[1]), spanId: hex64(c.ids[2]), traceFlags: c.flags });
      if (s.track === 'fetch') {
        const u = message as UndiciRequest;
        if (typeof u.addHeader !== 'function' || /(^|[\r\n,])\s*traceparent\b/i.test(String(u.headers ?? ''))) return;
        u.addHeader('traceparent', value);
        if (c.tracestate !== '') u.addHeader('tracestate', c.tracestate);
        return;
      }
      const h = message as Headers;
      if (h.headersSent === true || typeof h.setHeader !== 'function' || h.getHeader?.('traceparent') !== undefined) return;
      h.setHeader('traceparent', value);
      if (c.tracestate !== '') h.setHeader('tracestate', c.tracestate);
    } catch {
      // A closed or full tracer, a request that refuses headers: the program's request goes on untouched.
    }
  }

  ended(s: AutoSpan): void {
    const waitFor = adoptableIn(s);
    if (waitFor === undefined) this.finish(s);
    else this.wait(waitFor, s);
    // s itself may have had waiters (a connection whose lookup ended first).
    this.settled(s);
  }

  settled(s: AutoSpan): void {
    const waiters = this.waiting.get(s);
    if (waiters === undefined) return;
    this.waiting.delete(s);
    for (const w of waiters) {
      const next = adoptableIn(w);
      if (next === undefined) this.finish(w);
      else this.wait(next, w);
    }
  }

  stopped(): void {
    // Nothing will be adopted any more: what waits goes out with the parents it has.
    const all = [...this.waiting.values()].flat();
    this.waiting.clear();
    for (const w of all) this.finish(w);
  }

  private wait(on: AutoSpan, s: AutoSpan): void {
    const list = this.waiting.get(on);
    if (list === undefined) this.waiting.set(on, [s]);
    else list.push(s);
  }

  /** Begins `s` (once) under its traced parent, begun first, or its remote parent. */
  private begin(s: AutoSpan): Begun {
    const known = this.begun.get(s);
    if (known !== undefined) return known;
    const parent = tracedParent(s);
    const under = parent !== undefined ? this.begin(parent).children : this.remote.get(s);
    let track = this.tracks.get(s.track);
    if (track === undefined) {
      track = this.tracer.track(s.track);
      this.tracks.set(s.track, track);
    }
    const nameId = this.tracer.name(s.name);
    const token = under === undefined ? this.b.asyncBegin(track, nameId, '') : this.b.asyncBeginContext(track, nameId, '', under);
    // [wire span id, trace hi, trace lo, trace flags]: the trace is the parent's, else the one s starts as a root.
    const own = this.b.idsOf(token);
    const children: Given =
      under === undefined
        ? { ids: new BigUint64Array([own[1], own[2], own[0], BigInt(token)]), flags: Number(own[3]), tracestate: '' }
        : { ids: new BigUint64Array([under.ids[0], under.ids[1], own[0], BigInt(token)]), flags: under.flags, tracestate: under.tracestate };
    const b: Begun = { token, children };
    this.begun.set(s, b);
    return b;
  }

  private finish(s: AutoSpan): void {
    try {
      const { token } = this.begin(s);
      const kind = KINDS[s.track];
      const attrs = kind === undefined ? s.attrs : { ...s.attrs, 'hotspan.kind': kind };
      this.b.asyncFinish(token, s.error ? FLAG_ERROR : 0, s.start, s.end, this.tracer.name(s.name), JSON.stringify(attrs));
    } catch {
      // A closed or full tracer: the span is counted there; the program's channel never sees a throw.
    }
  }
}

/**
 * A sink that exports the automatic spans through an exporting tracer;
 * undefined (with a warning) when export cannot start. Its exporter sends
 * what is left only at exit (normal exit, process.exit(), SIGINT, SIGTERM),
 * after the recorder stopped, not at beforeExit: the GC entries and spans
 * that end at exit go out too.
 */
export function otlpSink(): SpanSink | undefined {
  const tracer = new Tracer({ threadName: 'main' });
  try {
    tracer.exportOtlp();
  } catch (e) {
    tracer.close();
    process.emitWarning(`hotspan/auto: OTLP export not started: ${(e as Error).message}`);
    return undefined;
  }
  tracer[internals]().otlp?.sendOnlyAtExit();
  return new AutoExport(tracer);
}
