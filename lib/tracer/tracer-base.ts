// The half of the public Tracer that holds its state and reads, writes and
// exports what it recorded, with the trace-context calls and close(); the
// recording calls are Tracer's own (./tracer.ts), which extends this class.
// Not exported by any entry: the public class is Tracer.

import { AsyncContext, currentContextOf, remoteCurrent, type CurrentStorage } from './async-context';
import { AsyncSpans } from './async-spans';
import type { Backend, BackendKind } from '../backends/backend';
import { ClosedBackend } from '../backends/closed-backend';
import type { CpuProfileRun, ProfileAnnouncer, ProfileFollower } from './cpu-profile';
import type { DumpSummary } from './dump';
import { checkDumpOn, DumpTrigger, type OverDumpOn } from './dump-on';
import { describe } from '../common/errors';
import { GcHook } from '../common/gc-hook';
import { HandleTracker } from './handles';
import { WasmBackend } from '../backends/wasm-backend';
import { NameCache } from '../common/names';
import type { OtlpExportOptions } from '../otlp/otlp-config';
import { Outputs } from './outputs';
import type { ResolvedOptions } from './options';
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

/** What every tracer holds and reads; see Tracer (docs/api.md). */ export abstract class TracerBase {
  /** The backend that records; swapped for a ClosedBackend by close(). */
  protected b: Backend;
  protected readonly names: NameCache;
  protected readonly handles: HandleTracker;
  protected readonly gcHook: GcHook | undefined;
  protected readonly asyncs: AsyncSpans;
  protected readonly outputs: Outputs;
  protected isClosed = false;
  /** The running tracer.profile(), if any. */
  protected profiling: CpuProfileRun | undefined;
  /** The owner's side of profiling its joined workers, once it profiled. */
  protected announcer: ProfileAnnouncer | undefined;
  /** A joined tracer's side: this thread profiles while its owner does. */
  protected follower: ProfileFollower | undefined;
  private readonly loss = new LossWarning();
  /** The async context, once turned on (enableAsyncContext, withContext). */
  protected cx: AsyncContext | undefined;
  /** The dumpOn option's trigger (docs/sampling.md), if given. */
  protected readonly dumps: DumpTrigger | undefined;

  /** `resolved`: the options of a tracer users made; undefined for one over a backend already made (join). */
  /** `over`: the dumpOn of a tracer made over its backend (hotspan/auto's, from its environment), already checked. */
  protected constructor(backend: Backend, resolved: ResolvedOptions | undefined, over?: OverDumpOn) {
    this.b = backend;
    const owner = { backend: () => this.b, closed: () => this.isClosed, flush: () => this.flush() };
    this.asyncs = new AsyncSpans(owner);
    this.outputs = new Outputs(owner, backend instanceof WasmBackend ? backend : undefined);
    if (resolved !== undefined) this.outputs.onTriggers(resolved);
    const dumpOn = resolved?.dumpOn === undefined ? over?.on : checkDumpOn(resolved.dumpOn);
    const processName = resolved?.processName ?? over?.processName;
    this.dumps = dumpOn === undefined || backend.kind === 'noop' ? undefined : new DumpTrigger(dumpOn, () => this.b, () => this.flush(), processName);
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

  // ---- trace context (W3C traceparent / tracestate) ----

  /**
   * Parents across await: a span begun with no open span on this thread gets
   * the span current when its work was scheduled as its parent. Idempotent.
   */
  enableAsyncContext(): void {
    this.startAsyncContext(undefined);
  }

  /** enableAsyncContext, the current span kept in `storage` (hotspan/otel's context manager) when given. */
  protected startAsyncContext(storage: CurrentStorage | undefined): void {
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

  // ---- finalization and reading ----

  /** Commits pending records (native threads' batches) so reads see them. */
  flush(): void {
    this.handles.reap();
    // A joined tracer: start or stop this thread's profile as its owner's runs.
    this.follower?.sync();
    this.b.flush();
    this.loss.check(() => this.b.counts());
  }

  /**
   * Where the spans went under the memory budget, in total and per timeline:
   * produced = kept + overwritten + dropped, over committed records (flush()
   * first to count native threads' queued ones).
   */
  counts(): Counts {
    const otlp = this.outputs.otlp?.counts();
    // The tracer's sampling decision is made where spans leave it: the OTLP export's read, a stream's.
    // native: the core counts each span once over every output; js: the export is the one output.
    const b = this.b.counts();
    const c = totalCounts(b, b.sampledOut ?? otlp?.sampledOut ?? 0);
    this.loss.of(c);
    const dumpOn = this.dumps?.counts();
    if (otlp === undefined && dumpOn === undefined) return c;
    return Object.freeze({ ...c, ...(otlp && { otlp }), ...(dumpOn && { dumpOn }) });
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
    this.follower?.close();
    this.announcer?.close();
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
}
