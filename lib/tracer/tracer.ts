// The public Tracer: argument checks, the name cache, handles, async spans,
// groups and settle on top of one Backend (native, js or noop).

import { threadId } from 'node:worker_threads';

import { AsyncContext, remoteCurrent, type CurrentStorage } from './async-context';
import { attrsToJson, type Attributes } from '../attrs/attrs';
import type { Backend, BackendKind } from '../backends/backend';
import { ChangeSignal } from '../common/change-signal';
import { calibrate } from '../common/clock';
import { ClosedBackend } from '../backends/closed-backend';
import { dumpOnCrash, dumpOnSignal, type DumpSummary } from './dump';
import { closedError, describe, nameTypeError, trackKindError } from '../common/errors';
import { endOpenAtExit } from './exit-open';
import { atExit } from '../common/exit-write';
import { FLAG_ERROR } from '../common/flags';
import { GcHook } from '../common/gc-hook';
import { HandleTracker, type SpanHandle } from './handles';
import { internals, recording, type AsyncContextHook, type TracerInternals } from './internal';
import { JsBackend } from '../backends/js-backend';
import { isJsToken } from '../backends/js-join';
import { NativeBackend } from '../backends/native-backend';
import { loadNativeAddon } from '../binding/native-loader';
import { checkName, checkNonEmptyName, NameCache, wellFormed } from '../common/names';
import { NoopBackend } from '../backends/noop-backend';
import { otlpConfig, packageVersion, type OtlpExportOptions } from '../otlp/otlp-config';
import { OtlpExporter, type OtlpFrom } from '../otlp/otlp-exporter';
import { outputFormat, type OutputFormat } from '../common/output';
import { checkCallOptions, checkThreadName, resolveOptions, type ResolvedOptions, type TracerOptions } from './options';
import { totalCounts, warnLoss, withCounts, type Counts } from '../common/counts';
import { Query, QuerySource } from '../read/query';
import { toTimelines, type SpanRecord, type TimelineInfo } from '../read/records';
import { openStream, type StreamOptions, type TraceStream } from './stream';
import {
  batchSize,
  boundedSnapshot,
  snapshotBatches,
  snapshotColumns,
  type SnapshotBatchOptions,
  type SnapshotColumns,
  type SnapshotOptions,
} from '../read/bounded-read';
import type { StatsRow } from '../read/stats';
import { checkSpanContext, extractContext, hex64, injectContext, type HeaderCarrier, type SpanContext } from './trace-context';

/** Options of `traceAsync()`. */ export interface TraceAsyncOptions {
  /** A track id from tracer.track(), or a track name (created as a concurrent track if new). Default: the "async" track. */
  track?: number | string;
  /** The span's attributes. */ attrs?: Attributes;
}

/** Options of `track()`. */ export interface TrackOptions {
  /** Serial track: each span starts no earlier than the previous one on the track ended. */
  serial?: boolean;
}

/** Options of `settle()`. */ export interface SettleOptions {
  /** Reject if async spans are still open after this many ms. Default: no limit. */
  timeoutMs?: number;
}

/** Options of `Tracer.join()` in a worker. */ export interface JoinOptions {
  /** Display name of this thread's timeline. Default: "worker <threadId>". */
  threadName?: string;
}

const WARNED = Symbol.for('hotspan.nativeFallbackWarned');
/** Poll interval of settle() while async spans begun outside this facade are open. */
const SETTLE_POLL_MS = 2;

function warnFallbackOnce(error: Error): void {
  const g = globalThis as { [WARNED]?: boolean };
  if (g[WARNED] === true) return;
  g[WARNED] = true;
  process.emitWarning(`hotspan: the native addon could not be loaded, using the js backend: ${error.message}`, {
    type: 'HotspanWarning',
    code: 'HOTSPAN_NATIVE_UNAVAILABLE',
  });
}

function createBackend(o: ResolvedOptions): Backend {
  if (o.backend === 'noop') return new NoopBackend();
  const budget = { memoryLimit: o.memoryLimit, onFull: o.onFull };
  if (o.backend === 'js') return new JsBackend({ threadName: o.threadName, ...budget });
  const { addon, error } = loadNativeAddon();
  if (addon === undefined) {
    const err = error ?? new Error('hotspan: the native addon could not be loaded (no reason given)');
    if (o.backend === 'native' || o.requireNative) throw err;
    warnFallbackOnce(err);
    return new JsBackend({ threadName: o.threadName, ...budget });
  }
  const cal = calibrate();
  const nt = addon.create({ originNs: cal.originNs, threadName: o.threadName, wakeHighWater: o.wakeHighWater, ...budget });
  return new NativeBackend(nt, cal.boundMs, true);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

const TRACE_ASYNC_KEYS: readonly (keyof TraceAsyncOptions)[] = ['track', 'attrs'];

/**
 * checkCallOptions for traceAsync, which is per span: the usual options
 * (only known keys) pass with two comparisons a key instead of a list search.
 */
function traceAsyncOptions(options: TraceAsyncOptions | undefined): TraceAsyncOptions | undefined {
  if (options === undefined) return undefined;
  if (typeof options === 'object' && options !== null) {
    let known = true;
    for (const key in options) {
      if (key !== 'track' && key !== 'attrs') known = false;
    }
    if (known && !Array.isArray(options)) return options;
  }
  // Throws for what it refuses (inherited keys pass).
  return checkCallOptions(options, 'traceAsync()', TRACE_ASYNC_KEYS);
}

/**
 * A traceAsync span's pending end. Its `then` reactions are the two shared
 * functions below bound to it: fresh closures would cost a span more (a
 * context, two functions, and a lazy compile at the first call of each).
 */
class AsyncSpanEnd {
  constructor(
    readonly ended: (token: number, flags: number) => void,
    readonly token: number,
  ) {}
}

function asyncFulfilled(this: AsyncSpanEnd, value: unknown): unknown {
  this.ended(this.token, 0);
  return value;
}

function asyncRejected(this: AsyncSpanEnd, reason: unknown): never {
  this.ended(this.token, FLAG_ERROR);
  throw reason;
}

/**
 * The key of the one argument Tracer.join and tracerOver pass the
 * constructor: the backend they made. A symbol no other module holds, so it
 * is neither an option users can spell nor state between calls.
 */
const joined = Symbol('hotspan.joined');
type Joined = { readonly [joined]: Backend };
const joinedWith = (backend: Backend): TracerOptions => ({ [joined]: backend }) as Joined as TracerOptions;

/** A span tracer: records spans, async spans, groups and counters, and reads, writes and exports them. See docs/api.md. */ export class Tracer {
  /** The backend that records; swapped for a ClosedBackend by close(). */
  private b: Backend;
  /** The js backend this tracer records in (under any wrapper), if it does. */
  private readonly jsBase: JsBackend | undefined;
  private readonly names: NameCache;
  private readonly handles: HandleTracker;
  private readonly gcHook: GcHook | undefined;
  private readonly tracks = new Map<string, { id: number; serial: boolean }>();
  /** The default track of traceAsync(), once made. */
  private asyncTrack: number | undefined;
  private isClosed = false;
  private otlp: OtlpExporter | undefined;
  /** The one warning at the first span overwritten or dropped was given. */
  private lossWarned = false;
  /** traceAsync spans not ended yet, and settle() waiters woken at each end. */
  private asyncOpen = 0;
  private readonly asyncChange = new ChangeSignal();
  /** asyncEnded for this tracer's AsyncSpanEnds (one function, not one a span). */
  private readonly asyncEndedFn = (token: number, flags: number): void => this.asyncEnded(token, flags);
  /** Streams started by stream() and not closed: close() finishes them first. */
  private readonly streams = new Set<TraceStream>();
  /** The async context, once turned on (enableAsyncContext, withContext). */
  private cx: AsyncContext | undefined;

  constructor(options?: TracerOptions) {
    const injected = typeof options === 'object' && options !== null && joined in options ? (options as Joined)[joined] : undefined;
    const resolved = injected === undefined ? resolveOptions(options) : undefined;
    const backend = injected ?? createBackend(resolved as ResolvedOptions);
    this.b = backend;
    this.jsBase = backend instanceof JsBackend ? backend : undefined;
    if (resolved?.writeOnExit !== undefined) {
      const path = resolved.writeOnExit;
      const format = outputFormat(path);
      atExit(`the trace to ${path}`, () => {
        if (!this.isClosed && backend instanceof JsBackend) backend.collectJoined(); // joined js workers ship what they hold
        if (!this.isClosed) endOpenAtExit(this.b); // open spans go in the file, flagged abandoned
        this.writeNow(path, format);
        const lost = this.b.lost();
        if (lost > 0) {
          process.stderr.write(`hotspan: ${String(lost)} spans that ended are not in ${path} (lostSpans: js backend joining)\n`);
        }
      });
    }
    if (resolved !== undefined) {
      const source = { kind: backend.kind, dump: (p: string) => this.dump(p), writeNow: (p: string, f: OutputFormat) => this.writeNow(p, f) };
      if (resolved.dumpOnSignal !== undefined) dumpOnSignal(resolved.dumpOnSignal.signal, resolved.dumpOnSignal.path, source);
      if (resolved.dumpOnCrash !== undefined) dumpOnCrash(resolved.dumpOnCrash, source);
    }
    this.names = new NameCache((name) => this.b.intern(name));
    this.handles = new HandleTracker(() => this.b);
    // Only the native backend has a pending queue for a GC to drain.
    this.gcHook =
      backend.kind === 'native'
        ? new GcHook(() => {
            backend.flush();
            this.checkLoss();
          })
        : undefined;
  }

  /**
   * Attaches this worker's thread to a tracer shared from another thread with
   * `tracer.share()`; its spans land on a timeline of their own in that tracer.
   * The token says which backend: a js token joins with the js backend, which
   * ships this thread's records to the owner in batches (see lib/backends/js-join.ts;
   * the worker must be created after share(), and a worker stopped by
   * terminate() loses what it had not shipped yet). Throws an Error naming the
   * token when it names no open tracer.
   */
  static join(token: string, options?: JoinOptions): Tracer {
    if (typeof token !== 'string' || token.length === 0) {
      throw new TypeError(`hotspan: join token must be the string from tracer.share(), got ${describe(token)}`);
    }
    const threadName = checkThreadName(checkCallOptions(options, 'join()', ['threadName'])?.threadName ?? `worker ${String(threadId)}`);
    if (isJsToken(token)) {
      return new Tracer(joinedWith(JsBackend.join(token, threadName)));
    }
    const { addon, error } = loadNativeAddon();
    if (addon === undefined) {
      throw new Error(
        'hotspan: Tracer.join() needs the native backend (cross-worker joining), and the addon did not load: ' +
          (error?.message ?? 'no reason given'),
      );
    }
    const nt = addon.join(token, { threadName });
    return new Tracer(joinedWith(new NativeBackend(nt, calibrate().boundMs, false)));
  }

  /** Which backend records: 'native', 'js' or 'noop'. */
  get backend(): BackendKind {
    return this.b.kind;
  }

  /** How far a recorded timestamp may be off the performance.now() axis, in ms (0 for js). */
  get clockBoundMs(): number {
    return this.b.clockBoundMs;
  }

  /**
   * Spans whose end() succeeded but that will never be in this trace: js
   * backend joining only (dropped when joined workers outrun the owner,
   * unshipped at the owner's close() or at a worker's terminate()). Always 0
   * on the native backend. See docs/guarantees.md.
   */
  get lostSpans(): number {
    return this.b.lost();
  }

  /** Whether close() was called. */ get closed(): boolean {
    return this.isClosed;
  }

  /** The tracer's clock: ms on the performance.now() axis. */
  now(): number {
    return this.b.now();
  }

  /** Interns `name` and returns its id, for the fastest begin(). */
  name(name: string): number {
    return this.names.id(checkName(name));
  }

  // ---- spans on this thread ----

  /** Opens a span on this thread. Spans nest strictly: end() closes the innermost. */
  begin(name: number | string, attrs?: Attributes): void {
    if (typeof name === 'number' && name >>> 0 === name && name < this.names.limit) {
      if (attrs === undefined) {
        this.b.begin(name);
        return;
      }
      if (this.b.beginValues(name, attrs)) return;
    }
    this.beginId(this.nameId(name), attrs);
  }

  /** Closes the innermost open span of this thread. */
  end(): void {
    this.b.end();
  }

  /** Opens span `id` with `attrs` (validated here unless the backend took them as values). */
  private beginId(id: number, attrs: unknown): void {
    if (id < this.names.limit) {
      if (attrs === undefined) {
        this.b.begin(id);
        return;
      }
      if (this.b.beginValues(id, attrs)) return;
    }
    const json = this.attrsText(attrs);
    if (json === '' && id < this.names.limit) {
      this.b.begin(id);
    } else {
      // beginAttrs reports an unknown id (begin cannot).
      this.b.beginAttrs(id, json);
      this.names.known(id);
    }
  }

  private nameId(name: unknown): number {
    if (typeof name === 'string') return this.names.id(name);
    if (typeof name === 'number') {
      if (name >>> 0 !== name) throw new RangeError(`hotspan: a name id is a non-negative integer, got ${String(name)}`);
      return name;
    }
    throw nameTypeError(name);
  }

  private attrsText(attrs: unknown): string {
    if (attrs === undefined) return '';
    const json = attrsToJson(attrs);
    return json === '{}' ? '' : json;
  }

  /**
   * Runs `fn` inside a span and returns its value; if it throws, the span is
   * flagged error and the exception rethrown. If `fn` ended that span itself
   * or left spans open inside it, trace() throws and ends nothing.
   */
  trace<T>(name: number | string, fn: () => T, attrs?: Attributes): T {
    if (typeof fn !== 'function') throw new TypeError(`hotspan: trace() needs a function, got ${describe(fn)}`);
    const b = this.b;
    const id = this.nameId(name);
    let depth: number;
    if (attrs === undefined && id < this.names.limit) {
      depth = b.beginDepth(id);
    } else {
      // Attributes, or an id not known yet (beginAttrs checks it).
      this.beginId(id, attrs);
      depth = b.openDepth();
    }
    let value: T;
    try {
      value = this.cx === undefined ? fn() : this.cx.runInOpen(b, fn);
    } catch (e) {
      try {
        this.b.endAt(depth, FLAG_ERROR, name);
      } catch {
        // The caller's exception matters more than a failed end.
      }
      throw e;
    }
    this.b.endAt(depth, 0, name);
    return value;
  }

  /** Opens a span and returns a handle whose end() closes it. A handle collected while open is ended as abandoned. */
  start(name: number | string, attrs?: Attributes): SpanHandle {
    const id = this.nameId(name);
    const label = typeof name === 'string' ? name : `name id ${String(id)}`;
    return this.handles.open(label, () => this.beginId(id, attrs));
  }

  // ---- async spans and tracks ----

  /** A named async track (idempotent by name). Serial: spans on it do not overlap. */
  track(name: string, options?: TrackOptions): number {
    name = wellFormed(checkNonEmptyName(name, 'track name'));
    const serial = checkCallOptions(options, 'track()', ['serial'])?.serial ?? false;
    if (typeof serial !== 'boolean') throw new TypeError(`hotspan: serial must be a boolean, got ${describe(serial)}`);
    const known = this.tracks.get(name);
    if (known !== undefined) {
      if (known.serial !== serial) {
        throw trackKindError(name, known.serial);
      }
      return known.id;
    }
    const id = this.b.track(name, serial);
    this.tracks.set(name, { id, serial });
    return id;
  }

  private trackId(track: unknown): number {
    if (track === undefined) return (this.asyncTrack ??= this.track('async'));
    if (typeof track === 'string') {
      const known = this.tracks.get(track);
      return known !== undefined ? known.id : this.track(track);
    }
    if (typeof track === 'number' && track >>> 0 === track) return track;
    throw new TypeError(`hotspan: track must be a track id or name, got ${describe(track)}`);
  }

  /**
   * An async span that begins now and ends when the promise (or fn's promise)
   * settles; flagged error on rejection, and the rejection passed through.
   * A fn that returns a non-thenable or throws has settled: its span ends at
   * once (flagged error for a throw), and the promise returned resolves to
   * the value (rejects with the error).
   */
  traceAsync<T>(
    name: number | string,
    work: (() => T | PromiseLike<T>) | PromiseLike<T>,
    options?: TraceAsyncOptions,
  ): Promise<Awaited<T>> {
    if (typeof work !== 'function' && !isThenable(work)) {
      throw new TypeError(`hotspan: traceAsync() needs a function or a promise, got ${describe(work)}`);
    }
    const o = traceAsyncOptions(options);
    const id = this.nameId(name);
    const attrs = o?.attrs;
    const track = this.trackId(o?.track);
    let token = attrs !== undefined && id < this.names.limit ? this.b.asyncBeginValues(track, id, attrs) : 0;
    if (token === 0) token = this.b.asyncBegin(track, id, this.attrsText(attrs));
    this.names.known(id);
    let p: Promise<Awaited<T>>;
    if (typeof work === 'function') {
      let value: T | PromiseLike<T>;
      let settled: boolean;
      try {
        const under = this.cx?.lastAsync;
        value = under === undefined ? work() : (this.cx as AsyncContext).storage.run(under, work);
        // A `then` getter that throws rejects, as Promise.resolve would.
        settled = !isThenable(value);
      } catch (e) {
        // The work failed before it could go async: the span ends now, flagged.
        this.b.asyncEnd(token, FLAG_ERROR);
        return Promise.reject(e as Error);
      }
      // The work settled synchronously (no thenable): the span ends now, the
      // exact end, with no reaction, no end object and no microtask.
      if (settled) {
        this.b.asyncEnd(token, 0);
        return Promise.resolve(value as Awaited<T>);
      }
      p = Promise.resolve(value);
    } else {
      p = Promise.resolve(work);
    }
    this.asyncOpen++;
    const end = new AsyncSpanEnd(this.asyncEndedFn, token);
    return p.then(asyncFulfilled.bind(end), asyncRejected.bind(end)) as Promise<Awaited<T>>;
  }

  private asyncEnded(token: number, flags: number): void {
    // Never throws: a closed tracer must not turn a resolution into a rejection.
    this.b.asyncEnd(token, flags);
    this.asyncOpen--;
    this.asyncChange.notify();
  }

  /**
   * Waits until every async span has ended, then flushes. On timeout rejects
   * with an Error naming the spans still open; they stay open.
   */
  async settle(options?: SettleOptions): Promise<void> {
    // Any non-negative duration, Infinity included: waits longer than
    // setTimeout's 2^31-1 ms are chained (./change-signal).
    const timeoutMs = checkCallOptions(options, 'settle()', ['timeoutMs'])?.timeoutMs ?? Infinity;
    if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0) {
      throw new RangeError(`hotspan: timeoutMs must be a non-negative number, got ${describe(timeoutMs)}`);
    }
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (this.isClosed) return;
      const open = this.b.openAsync();
      if (open.length === 0) {
        await this.settleJoined(deadline, timeoutMs);
        this.flush();
        return;
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        const list = open.map(([token, n]) => `"${n}" (span ${String(token)})`).join(', ');
        throw new Error(
          `hotspan: settle() timed out after ${String(timeoutMs)} ms; ${String(open.length)} async span(s) still open: ${list}`,
        );
      }
      // Spans begun outside this facade (the C ABI) end without telling us: poll.
      await this.asyncChange.next(open.length > this.asyncOpen ? Math.min(left, SETTLE_POLL_MS) : left);
    }
  }

  /** js backend: waits for the threads joined to this tracer to ship what they recorded. */
  private async settleJoined(deadline: number, timeoutMs: number): Promise<void> {
    const b = this.b;
    if (!(b instanceof JsBackend)) return;
    const late = await b.settleJoined(deadline);
    if (late.length === 0) return;
    const list = late.map((n) => JSON.stringify(n)).join(', ');
    throw new Error(
      `hotspan: settle() timed out after ${String(timeoutMs)} ms; ${String(late.length)} joined thread(s) did not ship their records: ${list}`,
    );
  }

  // ---- trace context (W3C traceparent / tracestate) ----

  /**
   * Turns on the async context (AsyncLocalStorage): a span begun with no
   * open span on this thread (after an await, in a callback) gets the span
   * that was current when that work was scheduled as its parent, in its
   * trace. trace() and traceAsync() make their span current for the work
   * they run. Idempotent; it costs those calls an AsyncLocalStorage run.
   */
  enableAsyncContext(): void {
    this.startAsyncContext(undefined);
  }

  /** enableAsyncContext, the current span kept in `storage` (hotspan/otel's context manager) when given. */
  private startAsyncContext(storage: CurrentStorage | undefined): void {
    if (this.cx !== undefined || this.isClosed) return;
    this.cx = new AsyncContext(storage);
    this.b = this.cx.wrap(this.b);
  }

  /** The remote parent context incoming `headers` carry (traceparent, tracestate), or undefined; malformed headers are ignored. */
  extract(headers: unknown): SpanContext | undefined {
    return extractContext(headers);
  }

  /**
   * Writes `context` (default: the current span's, see currentContext())
   * into `headers` as traceparent (and tracestate); writes nothing when
   * there is none. Returns `headers`.
   */
  inject<H extends HeaderCarrier>(headers: H, context?: SpanContext): H {
    if (typeof headers !== 'object' || headers === null) {
      throw new TypeError(`hotspan: inject() needs a headers object, got ${describe(headers)}`);
    }
    const c = context === undefined ? this.currentContext() : checkSpanContext(context, 'context');
    if (c !== undefined) injectContext(headers, c);
    return headers;
  }

  /**
   * The W3C context of the current span: the innermost open span of this
   * thread, else (async context on) the current one of the async context;
   * undefined when there is none.
   */
  currentContext(): SpanContext | undefined {
    const store = this.cx?.storage.getStore();
    const ids = this.b.openIds();
    if (ids === undefined || !ids.resolved) return store?.context;
    const ts = this.cx?.openTracestate(ids) ?? '';
    return {
      traceId: hex64(ids.traceHi) + hex64(ids.traceLo),
      spanId: hex64(ids.span),
      traceFlags: ids.flags,
      ...(ts !== '' ? { traceState: ts } : {}),
    };
  }

  /**
   * Runs `fn` with `context` (from extract(), or any SpanContext) as the
   * current span: spans begun inside it with no open span on this thread,
   * also after an await, are its children, in its trace. Turns the async
   * context on (enableAsyncContext).
   */
  withContext<T>(context: SpanContext, fn: () => T): T {
    const c = checkSpanContext(context, 'context');
    if (typeof fn !== 'function') throw new TypeError(`hotspan: withContext() needs a function, got ${describe(fn)}`);
    this.enableAsyncContext();
    const cx = this.cx;
    return cx === undefined ? fn() : cx.storage.run(remoteCurrent(c), fn);
  }

  // ---- groups ----

  /** Runs `fn` inside a span group (a phase bracketing every timeline); a returned promise ends the group when it settles. */
  group<T>(name: number | string, fn: () => T, attrs?: Attributes): T {
    if (typeof fn !== 'function') throw new TypeError(`hotspan: group() needs a function, got ${describe(fn)}`);
    this.groupBegin(name, attrs);
    const depth = this.b.openGroups();
    const label = typeof name === 'string' ? name : `name id ${String(name)}`;
    let value: T;
    try {
      value = fn();
    } catch (e) {
      try {
        this.groupEndAt(depth, label);
      } catch {
        // The caller's exception matters more.
      }
      throw e;
    }
    if (isThenable(value)) {
      return Promise.resolve(value).then(
        (v) => {
          this.groupEndAt(depth, label);
          return v;
        },
        (reason: unknown) => {
          try {
            this.groupEndAt(depth, label);
          } catch {
            // Keep the rejection reason.
          }
          throw reason;
        },
      ) as T;
    }
    this.groupEndAt(depth, label);
    return value;
  }

  private groupEndAt(depth: number, label: string): void {
    const open = this.b.openGroups();
    if (open > depth) {
      throw new Error(
        `hotspan: group "${label}" is not the innermost open group (${String(open - depth)} opened inside it still open); nothing was changed`,
      );
    }
    if (open < depth) throw new Error(`hotspan: group "${label}" was already ended by groupEnd()`);
    this.b.groupEnd();
  }

  /** Opens a span group; groupEnd() closes the innermost. */
  groupBegin(name: number | string, attrs?: Attributes): void {
    const id = this.nameId(name);
    this.b.groupBegin(id, this.attrsText(attrs));
    this.names.known(id);
  }

  /** Closes the innermost open group; throws (changing nothing) when none is open. */
  groupEnd(): void {
    this.b.groupEnd();
  }

  // ---- counters ----

  /**
   * Records a sample of the counter `name` (created on first use) at now:
   * a counter track in both output formats ("C" events in Chrome JSON), read
   * by `hotspan report`. For values sampled now and then (a queue length, the
   * event-loop delay), not per span: each sample takes a lock in the core. A
   * series keeps 1,048,576 samples; later ones are counted as dropped.
   */
  counter(name: string, value: number): void {
    name = wellFormed(checkNonEmptyName(name, 'counter name'));
    if (typeof value !== 'number') throw new TypeError(`hotspan: counter("${name}") value must be a number, got ${describe(value)}`);
    if (!Number.isFinite(value)) throw new RangeError(`hotspan: counter("${name}") value must be finite, got ${String(value)}`);
    this.b.counter(name, value);
  }

  // ---- finalization and reading ----

  /** Commits pending records (native threads' batches) so reads see them. */
  flush(): void {
    this.handles.reap();
    this.b.flush();
    this.checkLoss();
  }

  /**
   * Where the spans went under the memory budget, in total and per timeline:
   * produced = kept + overwritten + dropped, over committed records (flush()
   * first to count native threads' queued ones).
   */
  counts(): Counts {
    const c = totalCounts(this.b.counts());
    this.warnIfLost(c);
    return this.otlp === undefined ? c : Object.freeze({ ...c, otlp: this.otlp.counts() });
  }

  /**
   * Starts continuous OTLP/HTTP export of this tracer's spans: a worker
   * thread reads, encodes, compresses and sends them, so this thread pays
   * nothing per span (on the js backend: a copy of the records the worker
   * reads, which then leave the budget). Options default to the standard
   * OTEL_* variables. Once per tracer; counts in `counts().otlp`. Joined
   * workers' spans are sent too; in a worker joined to a js-backend tracer
   * this throws (export from the tracer that shared the token), in one
   * joined to a native tracer it exports the whole shared tracer.
   */
  exportOtlp(options?: OtlpExportOptions): void {
    if (this.isClosed) throw closedError();
    if (this.otlp !== undefined) throw new Error('hotspan: exportOtlp() was already called on this tracer');
    const js = this.jsBase;
    if (this.b.kind !== 'native' && js === undefined) {
      throw new Error(`hotspan: exportOtlp() needs the native or js backend; this tracer runs the '${this.b.kind}' backend`);
    }
    // First: a joined js worker's refusal says more than an option's error would.
    const info = js?.exportInfo();
    const config = otlpConfig(options, process.env, packageVersion());
    const from: OtlpFrom = js !== undefined && info !== undefined ? { js: info, take: (max) => js.takeForExport(max) } : { token: this.b.share() };
    this.otlp = new OtlpExporter(from, config, () => {
      if (!this.isClosed) this.flush();
    });
  }

  /**
   * Sends the spans not yet exported (within the export's shutdownTimeoutMs;
   * what is left then is counted dropped), then closes the tracer.
   */
  async shutdown(): Promise<void> {
    try {
      await this.otlp?.stop();
    } finally {
      this.close();
    }
  }

  private checkLoss(): void {
    if (!this.lossWarned && this.b.counts().lost) this.warnIfLost(totalCounts(this.b.counts()));
  }

  private warnIfLost(c: Counts): void {
    if (this.lossWarned || (c.overwritten === 0 && c.dropped === 0)) return;
    this.lossWarned = true;
    warnLoss(c);
  }

  /**
   * Committed records only (does not flush), in snapshot order. With
   * `{ offset, limit }` only those; without, a RangeError (nothing read) when
   * they would not fit the V8 heap. `counts` says what they cover.
   */
  snapshot(options?: SnapshotOptions): readonly SpanRecord[] & { readonly counts: Counts } {
    return withCounts(boundedSnapshot(this.b.freeze(), options), this.counts());
  }

  /** The committed records of one moment in batches of `batch` records (default 65536). */
  snapshotBatches(options?: SnapshotBatchOptions): IterableIterator<readonly SpanRecord[]> {
    const batch = batchSize(options);
    return snapshotBatches(this.b.freeze(), batch);
  }

  /** Committed records (or `{ offset, limit }` of them) as typed-array columns, without a JS object per record. */
  snapshotColumns(options?: SnapshotOptions): SnapshotColumns {
    return snapshotColumns(this.b.freeze(), options);
  }

  /** The timelines of the committed records: threads, tracks and the groups. */ timelines(): readonly TimelineInfo[] {
    return toTimelines(this.b.freeze().read(0, 0));
  }

  /** Per-name count, total, min, max, mean, p50, p90, p99 (ms) over committed records. */
  stats(): readonly StatsRow[] & { readonly counts: Counts } {
    return withCounts(this.b.stats(), this.counts());
  }

  /** A query over the committed records as of now; `counts` says what they cover. */
  query(): Query & { readonly counts: Counts } {
    const view = this.b.freeze();
    return withCounts(new Query(new QuerySource(view, toTimelines(view.read(0, 0)))), this.counts());
  }

  /**
   * Writes the committed records; the format follows the extension: .json: Chrome Trace Event JSON;
   * .pftrace / .perfetto-trace: Perfetto protobuf.
   */
  async write(path: string): Promise<void> {
    if (typeof path !== 'string' || path.length === 0) {
      throw new TypeError(`hotspan: write() needs a file path, got ${describe(path)}`);
    }
    await this.b.writeFile(path, outputFormat(path));
  }

  /**
   * Writes what the tracer holds now to `path` (format by extension, as
   * write()), after flushing native threads' queued records, and resolves
   * with what the file holds. Recording goes on meanwhile: the records are
   * frozen at the call (native: chunk pointers) and formatted and written on
   * a worker thread; the js backend formats on this thread and writes on the
   * thread pool. Rejects with an Error naming the path when the file cannot
   * be written (the tracer keeps its records), and on the noop backend,
   * which has nothing to write.
   */
  async dump(path: string): Promise<DumpSummary> {
    if (typeof path !== 'string' || path.length === 0) {
      throw new TypeError(`hotspan: dump() needs a file path, got ${describe(path)}`);
    }
    const format = outputFormat(path);
    if (this.b.kind === 'noop') {
      throw new Error(`hotspan: dump(${JSON.stringify(path)}): nothing to write, this tracer runs the noop backend, which records nothing`);
    }
    if (!this.isClosed) this.flush();
    const through = this.b.now();
    const lostSpans = this.b.lost();
    const w = await this.b.writeFile(path, format);
    return { path, format, bytes: w.bytes, spans: w.spans, timelines: w.timelines, through, lostSpans };
  }

  /**
   * Streams what this tracer commits to `path` (a `.pftrace` Perfetto trace)
   * as it records, from a thread of the addon's own: the records in memory
   * now, then every record as it commits, about every 50 ms. Each file
   * stands alone and is packet-framed, so a file cut anywhere (a SIGKILL)
   * decodes up to its last whole packet. Chunks written go back to the
   * memory budget (counted as `released`), so memory stays bounded while
   * the disk keeps up; when it does not, the budget's policy applies and
   * the stream counts what it missed. The file is finished by close(), by
   * tracer.close(), and at process exit (normal, process.exit(), SIGINT,
   * SIGTERM). Native backend only: the js backend throws (use dump() or
   * writeOnExit there).
   */
  stream(path: string, options?: StreamOptions): TraceStream {
    const nt = this.b.native();
    if (nt === undefined) {
      if (this.isClosed) throw new Error('hotspan: tracer is closed');
      throw new Error(
        `hotspan: stream() needs the native backend; this tracer runs the ${this.b.kind} backend ` +
          '(use tracer.dump(path) or the writeOnExit option there)',
      );
    }
    if (this.isClosed) throw new Error('hotspan: tracer is closed');
    const s = openStream(
      path,
      options,
      (p, rotate, keep, onError) => nt.stream(p, rotate, keep, onError),
      () => {
        if (!this.isClosed) this.flush();
      },
    );
    this.streams.add(s);
    s.on('close', () => this.streams.delete(s));
    return s;
  }

  /** Writes the trace on this thread, after a flush (a closed tracer keeps what it committed); native: in bounded memory. */
  private writeNow(path: string, format: OutputFormat): void {
    if (!this.isClosed) this.flush();
    this.b.writeFileNow(path, format);
  }

  /**
   * A token a worker passes to Tracer.join() to record into this tracer
   * (native and js backends; js: not with an injected clock).
   */
  share(): string {
    return this.b.share();
  }

  /** A Node-API External holding the C ABI table (native/include/hotspan.h) for other addons. */
  nativeApi(): unknown {
    return this.b.nativeApi();
  }

  /** Flushes and closes. Idempotent; later recording calls throw, committed records stay readable. */
  close(): void {
    if (this.isClosed) return;
    // Streams first, while this thread's records can still be flushed to them.
    for (const s of [...this.streams]) s.close();
    this.isClosed = true;
    this.gcHook?.stop();
    this.handles.stop();
    const inner = this.b;
    try {
      inner.flush();
    } finally {
      inner.close();
      this.b = new ClosedBackend(inner);
      this.asyncChange.notify();
    }
  }

  /** TracerInternals.asyncContext: made once (hotspan/otel reads internals on every span). */
  private readonly asyncContextHook = (storage?: object): AsyncContextHook | undefined => {
    this.startAsyncContext(storage as CurrentStorage | undefined);
    return this.cx;
  };

  /** @internal the backend recording now (hotspan/otel's per-span path) */
  get [recording](): Backend {
    return this.b;
  }

  /** @internal test and demo hooks */
  [internals](): TracerInternals {
    return {
      backend: this.b,
      gcHook: this.gcHook,
      handles: this.handles,
      native: this.b.native(),
      asyncContext: this.asyncContextHook,
      otlp: this.otlp,
    };
  }
}

/**
 * A tracer over a backend already made (a js backend on a clock the caller
 * drives, in the tests). Not exported by any entry: the options users can
 * spell make every public tracer.
 * @internal
 */
export function tracerOver(backend: Backend): Tracer {
  return new Tracer(joinedWith(backend));
}
