// The public Tracer: argument checks, the name cache, handles, async spans,
// groups and settle on top of one Backend (native, js or noop).

import { threadId } from 'node:worker_threads';

import { AsyncContext, currentContextOf, remoteCurrent, type CurrentStorage } from './async-context';
import { AsyncSpans, isThenable, traceAsyncOptions, type SettleOptions, type TraceAsyncOptions, type TrackOptions } from './async-spans';
import { attrsToJson, type Attributes } from '../attrs/attrs';
import type { Backend, BackendKind } from '../backends/backend';
import { createBackend, joinBackend } from './backend-choice';
import { ClosedBackend } from '../backends/closed-backend';
import { checkProfileOptions, CpuProfileRun, type CpuProfileHandle, type ProfileOptions } from './cpu-profile';
import type { DumpSummary } from './dump';
import { checkDumpOn, DumpTrigger } from './dump-on';
import { closedError, describe, nameTypeError } from '../common/errors';
import { FLAG_ERROR } from '../common/flags';
import { GcHook } from '../common/gc-hook';
import { inGroup } from './groups';
import { HandleTracker, type SpanHandle } from './handles';
import { internals, recording, type AsyncContextHook, type TracerInternals } from './internal';
import { WasmBackend } from '../backends/wasm-backend';
import { checkName, checkNonEmptyName, NameCache, wellFormed } from '../common/names';
import type { OtlpExportOptions } from '../otlp/otlp-config';
import { Outputs } from './outputs';
import { checkCallOptions, checkThreadName, resolveOptions, type ResolvedOptions, type TracerOptions } from './options';
import { LossWarning, totalCounts, withCounts, type Counts } from '../common/counts';
import { Query, QuerySource } from '../read/query';
import { toTimelines, type SpanRecord, type TimelineInfo } from '../read/records';
import type { StreamOptions, TraceStream } from './stream';
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
import { checkSpanContext, extractContext, injectContext, type HeaderCarrier, type SpanContext } from './trace-context';

export type { SettleOptions, TraceAsyncOptions, TrackOptions } from './async-spans';

/** Options of `Tracer.join()` in a worker. */ export interface JoinOptions {
  /** Display name of this thread's timeline. Default: "worker <threadId>". */
  threadName?: string;
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
  private readonly names: NameCache;
  private readonly handles: HandleTracker;
  private readonly gcHook: GcHook | undefined;
  private readonly asyncs: AsyncSpans;
  private readonly outputs: Outputs;
  private isClosed = false;
  /** The running tracer.profile(), if any. */
  private profiling: CpuProfileRun | undefined;
  private readonly loss = new LossWarning();
  /** The async context, once turned on (enableAsyncContext, withContext). */
  private cx: AsyncContext | undefined;
  /** The dumpOn option's trigger (docs/sampling.md), if given. */
  private readonly dumps: DumpTrigger | undefined;

  constructor(options?: TracerOptions) {
    const injected = typeof options === 'object' && options !== null && joined in options ? (options as Joined)[joined] : undefined;
    const resolved = injected === undefined ? resolveOptions(options) : undefined;
    const backend = injected ?? createBackend(resolved as ResolvedOptions);
    this.b = backend;
    const owner = { backend: () => this.b, closed: () => this.isClosed, flush: () => this.flush() };
    this.asyncs = new AsyncSpans(owner);
    this.outputs = new Outputs(owner, backend instanceof WasmBackend ? backend : undefined);
    if (resolved !== undefined) this.outputs.onTriggers(resolved);
    const dumpOn = resolved?.dumpOn === undefined ? undefined : checkDumpOn(resolved.dumpOn);
    this.dumps = dumpOn === undefined || backend.kind === 'noop' ? undefined : new DumpTrigger(dumpOn, () => this.b, () => this.flush());
    this.names = new NameCache((name) => this.b.intern(name));
    this.handles = new HandleTracker(() => this.b);
    // Only the native backend has a pending queue for a GC to drain.
    this.gcHook =
      backend.kind === 'native'
        ? new GcHook(() => {
            backend.flush();
            this.loss.check(() => this.b.counts());
          })
        : undefined;
  }

  /**
   * Attaches this worker's thread to the tracer that made `token` with share():
   * its spans land on a timeline of their own there. Throws an Error naming the
   * token when it names no open tracer. See docs/workers-and-native.md.
   */
  static join(token: string, options?: JoinOptions): Tracer {
    if (typeof token !== 'string' || token.length === 0) {
      throw new TypeError(`hotspan: join token must be the string from tracer.share(), got ${describe(token)}`);
    }
    const threadName = checkThreadName(checkCallOptions(options, 'join()', ['threadName'])?.threadName ?? `worker ${String(threadId)}`);
    return new Tracer(joinedWith(joinBackend(token, threadName)));
  }

  /** Which backend records: 'native', 'js' or 'noop'. */
  get backend(): BackendKind {
    return this.b.kind;
  }

  /** How far a recorded timestamp may be off the performance.now() axis, in ms (0 for js). */
  get clockBoundMs(): number {
    return this.b.clockBoundMs;
  }

  /** Spans that ended but will never be in this trace (js backend joining only; see docs/guarantees.md). */
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
    const dumps = this.dumps;
    const began = dumps !== undefined && depth === 1 && this.localRoot() ? dumps.syncRootBegin(b) : -1;
    let value: T;
    try {
      value = this.cx === undefined ? fn() : this.cx.runInOpen(b, fn);
    } catch (e) {
      try {
        this.b.endAt(depth, FLAG_ERROR, name);
      } catch {
        // The caller's exception matters more than a failed end.
      }
      dumps?.error(name);
      if (began >= 0) dumps?.syncRootEnd(b, name, began);
      throw e;
    }
    this.b.endAt(depth, 0, name);
    if (began >= 0) dumps?.syncRootEnd(b, name, began);
    return value;
  }

  /** No span open under the async context, or only a remote one (extract()'s): a span begun now with no open span is a local root. */
  private localRoot(): boolean {
    const under = this.cx?.storage.getStore();
    return under === undefined || under.given.ids[3] === 0n;
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
    return this.asyncs.track(name, options);
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
    const track = this.asyncs.trackId(o?.track);
    let token = attrs !== undefined && id < this.names.limit ? this.b.asyncBeginValues(track, id, attrs) : 0;
    if (token === 0) token = this.b.asyncBegin(track, id, this.attrsText(attrs));
    this.names.known(id);
    const dumps = this.dumps;
    if (dumps === undefined || this.b.openDepth() !== 0 || !this.localRoot()) return this.asyncs.run(this.b, token, work, this.cx);
    return dumps.asyncRoot(this.b, name, dumps.rootBegin(this.b), this.asyncs.run(this.b, token, work, this.cx));
  }

  /**
   * Waits until every async span has ended, then flushes. On timeout rejects
   * with an Error naming the spans still open; they stay open.
   */
  settle(options?: SettleOptions): Promise<void> {
    return this.asyncs.settle(options);
  }

  // ---- trace context (W3C traceparent / tracestate) ----

  /**
   * Parents across await: a span begun with no open span on this thread gets
   * the span current when its work was scheduled as its parent. Idempotent.
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
    return currentContextOf(this.b, this.cx);
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
    const label = typeof name === 'string' ? name : `name id ${String(name)}`;
    return inGroup(() => this.b, () => this.groupBegin(name, attrs), label, fn);
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
   * Records a sample of the counter `name` at now: a counter track in both
   * output formats. For values sampled now and then, not per span (each takes
   * a lock); a series keeps 1,048,576 samples, later ones counted as dropped.
   */
  counter(name: string, value: number): void {
    name = wellFormed(checkNonEmptyName(name, 'counter name'));
    if (typeof value !== 'number') throw new TypeError(`hotspan: counter("${name}") value must be a number, got ${describe(value)}`);
    if (!Number.isFinite(value)) throw new RangeError(`hotspan: counter("${name}") value must be finite, got ${String(value)}`);
    this.b.counter(name, value);
  }

  // ---- CPU samples ----

  /**
   * Starts V8's CPU profiler on this thread (through node:inspector), every
   * `intervalUs` microseconds (default 1000). `stop()` on the handle adds the
   * samples to the trace, on this thread's track and the spans' clock: a
   * Profile in Chrome JSON, hot functions per span in `hotspan report`. One
   * profile at a time per tracer; close() stops a running one. The noop
   * backend returns a handle that samples nothing; the js backend throws (it
   * does not carry samples). See docs/profiling.md.
   */
  profile(options?: ProfileOptions): CpuProfileHandle {
    const intervalUs = checkProfileOptions(options);
    if (this.isClosed) throw closedError();
    const b = this.b;
    if (b.kind === 'noop') return { stop() {}, active: false };
    if (b.cpuProfile === undefined) {
      throw new Error(`hotspan: profile() needs the native backend; the ${b.kind} backend does not record CPU samples`);
    }
    if (this.profiling?.active === true) {
      throw new Error('hotspan: profile() is already running on this tracer; stop() its handle first');
    }
    const run = new CpuProfileRun(intervalUs, (samples) => this.b.cpuProfile?.(samples));
    this.profiling = run;
    return run;
  }

  // ---- finalization and reading ----

  /** Commits pending records (native threads' batches) so reads see them. */
  flush(): void {
    this.handles.reap();
    this.b.flush();
    this.loss.check(() => this.b.counts());
  }

  /**
   * Where the spans went under the memory budget, in total and per timeline:
   * produced = kept + overwritten + dropped, over committed records (flush()
   * first to count native threads' queued ones).
   */
  counts(): Counts {
    const c = totalCounts(this.b.counts());
    this.loss.of(c);
    const otlp = this.outputs.otlp;
    const dumpOn = this.dumps?.counts();
    if (otlp === undefined && dumpOn === undefined) return c;
    return Object.freeze({ ...c, ...(otlp && { otlp: otlp.counts() }), ...(dumpOn && { dumpOn }) });
  }

  /**
   * Starts continuous OTLP/HTTP export of this tracer's spans (joined workers'
   * too) from a worker thread. Options default to the OTEL_* variables. Once
   * per tracer; counts in `counts().otlp`. See docs/otlp-and-opentelemetry.md.
   */
  exportOtlp(options?: OtlpExportOptions): void {
    this.outputs.exportOtlp(options);
  }

  /**
   * Sends the spans not yet exported (within the export's shutdownTimeoutMs;
   * what is left then is counted dropped), then closes the tracer.
   */
  async shutdown(): Promise<void> {
    try {
      await this.outputs.otlp?.stop();
    } finally {
      this.close();
    }
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
  write(path: string): Promise<void> {
    return this.outputs.write(path);
  }

  /**
   * Writes what the tracer holds now to `path` (format as write()) while
   * recording goes on, and resolves with what the file holds. Rejects with an
   * Error naming the path when it cannot be written. See docs/production.md.
   */
  dump(path: string): Promise<DumpSummary> {
    return this.outputs.dump(path);
  }

  /**
   * Streams what this tracer commits to `path` (a `.pftrace`) as it records,
   * in bounded memory; a file cut anywhere decodes up to its last packet.
   * Native backend only. See docs/production.md.
   */
  stream(path: string, options?: StreamOptions): TraceStream {
    return this.outputs.stream(path, options);
  }

  /** A token a worker passes to Tracer.join() to record into this tracer (native and js backends). */
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
    this.outputs.closeStreams();
    // A running profile's samples, while they can still be kept.
    this.profiling?.stop();
    this.isClosed = true;
    this.gcHook?.stop();
    this.handles.stop();
    const inner = this.b;
    try {
      inner.flush();
    } finally {
      inner.close();
      this.b = new ClosedBackend(inner);
      this.asyncs.wake();
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
      otlp: this.outputs.otlp,
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
