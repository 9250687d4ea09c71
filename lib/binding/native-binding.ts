// The shape of the compiled addon (native/addon), as the facade sees it.
// Hot functions return status codes instead of throwing; the facade turns
// codes into errors so the native side never builds exception objects.

import type { BackendCounts } from '../common/counts';
import type { STATUS_CLOSED, STATUS_INVALID, STATUS_NO_OPEN_SPAN, STATUS_OK } from '../common/flags';
import type { OutputFormat, WrittenFile } from '../common/output';

/**
 * A status code of the core (native/include/hotspan.h `hotspan_status`, which
 * native/core/record/tracer.h `Status` is defined from); values in lib/common/flags.ts.
 * test/binding-surface.test.ts checks this file against the addon.
 */
export type NativeStatus = typeof STATUS_OK | typeof STATUS_CLOSED | typeof STATUS_NO_OPEN_SPAN | typeof STATUS_INVALID;

/** Columnar committed records, as returned by `NativeTracer.snapshot()`. */
export interface NativeSnapshot {
  /** Index = name id. */
  names: string[];
  /** The timelines the records are on. */
  timelines: Array<{
    /** Timeline id. */
    id: number;
    /** Its name. */
    name: string;
    /** What records on it. */
    kind: 'js' | 'native' | 'track' | 'groups';
    /** Its thread exited. */
    exited: boolean;
  }>;
  /** Number of records. */
  count: number;
  /** 2 per record: start ms, end ms (performance.now() axis of the tracer's creator). */
  times: Float64Array;
  /**
   * 6 per record: name id, timeline id, local id, parent timeline id (0: none),
   * parent local id (0: none), depth << 16 | flags.
   */
  fields: Uint32Array;
  /** [record index, attributes JSON object text] for records that have attributes. */
  attrs: Array<[number, string]>;
  /** Counter series (tracer.counter()), in order of first use; absent: none. */
  counters?: CounterSeries[];
  /**
   * [record index, context] for records carrying a stored trace context
   * (FLAG_CONTEXT), ascending: the js backend's (the addon keeps them in the
   * core and resolves ids there); absent: none.
   */
  contexts?: Array<[number, StoredContext]>;
  /** @internal CPU samples for the WebAssembly core's writers (hs_write, hs_writer_append: hotspan convert); absent: none. */
  cpuProfiles?: ColumnsProfile[];
}

/**
 * One thread's CPU samples in the columns (native/core/record/cpu_profile.h):
 * frames (functions[i], urls[i], lines[2i] and lines[2i+1] their 0-based
 * line and column, -1 unknown), the call tree (nodeFrame, nodeParent: -1 at
 * the root, a parent before its children), and per sample its node and its
 * time (sampleMs: ms as the records' times).
 */
export interface ColumnsProfile {
  timeline: number;
  functions: string[];
  urls: string[];
  lines: Int32Array;
  nodeFrame: Uint32Array;
  nodeParent: Int32Array;
  sampleNode: Uint32Array;
  sampleMs: Float64Array;
}

/** A span's stored trace context (native/core/record/stored_context.h), as the js backend keeps it. */
export interface StoredContext {
  readonly traceHi: bigint;
  readonly traceLo: bigint;
  /** The parent's wire span id; 0n: the span is a root of the trace. */
  readonly parentWire: bigint;
  /** W3C trace-flags. */
  readonly flags: number;
  /** W3C tracestate, '' for none. */
  readonly tracestate: string;
}

/** One counter's samples: times[i] (ms, the performance.now() axis) and values[i]. */
export interface CounterSeries {
  name: string;
  times: Float64Array;
  values: Float64Array;
  /** Samples refused because the series held its maximum (1,048,576). */
  dropped: number;
}

/** The committed records frozen at one moment (type-tagged; `NativeTracer.freeze()`). */
export interface NativeFrozen {
  /** Records it holds. */
  readonly count: number;
}

export interface NativeStatsRow {
  name: string;
  count: number;
  totalNs: number;
  minNs: number;
  maxNs: number;
  meanNs: number;
  p50Ns: number;
  p90Ns: number;
  p99Ns: number;
}


// <generated from schema/boundary.json by scripts/gen-boundary.mjs (npm run gen)>
/** The methods of a NativeTracer, as the addon makes them (the type-check holds NativeTracer to these). */
export type NativeTracerMethod =
  | 'begin'
  | 'end'
  | 'defineShape'
  | 'defineValue'
  | 'slotView'
  | 'intern'
  | 'openDepth'
  | 'innermost'
  | 'stateView'
  | 'setThreadName'
  | 'track'
  | 'asyncBegin'
  | 'asyncEnd'
  | 'asyncView'
  | 'openAsync'
  | 'groupBegin'
  | 'groupEnd'
  | 'openGroups'
  | 'counter'
  | 'cpuProfile'
  | 'profileInterval'
  | 'flush'
  | 'pending'
  | 'snapshot'
  | 'freeze'
  | 'read'
  | 'readAt'
  | 'query'
  | 'stats'
  | 'counts'
  | 'chromeJson'
  | 'perfetto'
  | 'writeFile'
  | 'writeFileNow'
  | 'stream'
  | 'shareToken'
  | 'nativeApi'
  | 'close'
  | 'closed'
  | 'openIds'
  | 'idsOf'
  | 'spanIds'
  | 'spanTracestates'
  | 'idSalt';
/** The per-span entry points among them (schema perSpan; native/addon/span_calls.h). */
export const PER_SPAN_METHODS: readonly NativeTracerMethod[] = ['begin', 'end', 'asyncBegin', 'asyncEnd'];
/** The most per-span entry points the schema allows (gen-boundary refuses more). */
export const PER_SPAN_LIMIT = 6;
/** A per-span entry's form tag (native/addon/span_calls.h): stateView()[4] (begin_name): begin()'s view form. */
export const TAG_NAME_VIEW = 0xffffffff;
/** A per-span entry's form tag (native/addon/span_calls.h): stateView()[4] (begin_name): begin() and end() read their arguments; name ids at or above it are no names. */
export const TAG_NAME_ARGS = 0xfffffffe;
/** A per-span entry's form tag (native/addon/span_calls.h): asyncView()[4] (kLocal, below every answer: a local id >= 0 or kRefused = -1): asyncBegin()'s values form. */
export const TAG_LOCAL_VALUES = -2;
/** A per-span entry's form tag (native/addon/span_calls.h): asyncView()[4] (kLocal): asyncBegin() reads its arguments. */
export const TAG_LOCAL_ARGS = -3;
/** A per-span entry's form tag (native/addon/span_calls.h): asyncView()[2] (kToken; no token is negative): asyncEnd() reads its arguments. */
export const TAG_TOKEN_ARGS = -1;
// </generated>

/**
 * One tracer as seen from one JS env (thread). The hot-path functions are its
 * own, bound to it natively (they work taken off the object); the rest are
 * methods of one prototype shared by the env's tracers, called on the tracer
 * (native/addon/tracer_object.h).
 */
export interface NativeTracer {
  // hot path: the per-span entry points (PER_SPAN_METHODS, native/addon/span_calls.h).
  // Each is one function over the forms below; a tag written just before the
  // call says which: stateView()[4] for begin() and end(), asyncView()[4] for
  // asyncBegin(), asyncView()[2] for asyncEnd(). Without the view the tag is
  // TAG_ARGS for good and the calls pass arguments. The receiver is ignored.
  /**
   * begin. Tag = a name id: that name, no argument (undefined when the span
   * opened, else a NativeStatus; unknown name or stack too deep: Invalid).
   * Tag = NAME_VIEW: the name id, the code and every value in the slot view
   * (as the slots form). Tag = NAME_ARGS: the arguments, (nameId) as the
   * first form; (nameId, attrsJson): a NativeStatus (Ok too); (nameId, code,
   * v0 .. v3): attribute values for the keys of a shape (defineShape),
   * undefined when the span opened, else a NativeStatus, or -1 (nothing done)
   * when a value is not a finite number, a string or a boolean; `code` =
   * shape << 12 | the kind of slot i << 3i (native/addon/attr_values.h
   * SlotKind: 0 a number in the slot view, 1 an interned value's id there,
   * 2 false, 3 true, 4 the value as argument v<i>); (nameId, attrsJson, ids,
   * flags, tracestate): under a context, ids = [trace hi, trace lo, parent
   * wire id, parent span id], a NativeStatus.
   */
  begin(): number | undefined;
  begin(nameId: number): number | undefined;
  begin(nameId: number, attrsJson: string): number;
  begin(nameId: number, code: number, v0?: unknown, v1?: unknown, v2?: unknown, v3?: unknown): number | undefined;
  begin(nameId: number, attrsJson: string, ids: BigUint64Array, flags: number, tracestate: string): number;
  /**
   * end: undefined when the span ended, else a NativeStatus (never Ok).
   * Tag = NAME_ARGS: (flags) ends with extra SpanFlags (error = 4);
   * (depth, flags) ends the innermost span only while exactly `depth` spans
   * are open, else NoOpenSpan, nothing changed.
   */
  end(): number | undefined;
  end(flags: number): number | undefined;
  end(depth: number, flags: number): number | undefined;
  /** The slot view: 4 doubles begin's slots form reads its values from, then the view form's name id and code; undefined where external buffers are refused. */
  slotView(): Float64Array | undefined;
  /** Names an attribute shape (1 to 4 keys, in order): its id, or -1 when the addon holds its limit. */
  defineShape(keys: string[]): number;
  /** Interns a string attribute value: its id, or -1 when the addon holds its limit. */
  defineValue(value: string): number;
  intern(name: string): number;
  openDepth(): number;
  /** Local id of the innermost open span on this thread; 0 when none is open. */
  innermost(): number;
  /**
   * This thread's live [depth, -, -, last local id, staged name id] (read
   * without a call; the addon writes it only inside its own calls; JS writes
   * [4], the name id or tag of begin() and end()), or undefined where external
   * buffers are refused.
   */
  stateView(): Uint32Array | undefined;
  setThreadName(name: string): void;

  // async spans, tracks, groups (return 0 / a NativeStatus on failure)
  /** The timeline is "track: <name>", or `name` itself when asNamed (hotspan/auto's tracks). */
  track(name: string, serial: boolean, asNamed?: boolean): number;
  /**
   * asyncBegin. Tag (asyncView()[4]) >= -1, the last answer: the track and
   * name id in the async view ([0], [1]), no attributes; answers undefined
   * and writes the token's local id to view[4], or 0 (refused, also for a
   * track or name that is not a uint32). Tag = LOCAL_VALUES: the same with
   * the code and every value in the slot view (no ARGUMENT slot); the answer
   * (local id, 0 or -1 as the slots form) in view[4]. Tag = LOCAL_ARGS: the
   * arguments; (track, nameId, attrsJson?): the token's local id, its lower
   * 32 bits (never 0; the upper half is `track`), or 0 when closed / unknown
   * track; (track, nameId, code, v0 .. v3): with attribute values (as
   * begin's slots form), the local id, 0 or -1; (track, nameId, attrsJson,
   * ids, flags, tracestate): under a context (ids as begin's), the local id or 0.
   */
  asyncBegin(): undefined;
  asyncBegin(track: number, nameId: number, attrsJson?: string): number;
  asyncBegin(track: number, nameId: number, code: number, v0?: unknown, v1?: unknown, v2?: unknown, v3?: unknown): number;
  asyncBegin(track: number, nameId: number, attrsJson: string, ids: BigUint64Array, flags: number, tracestate: string): number;
  /**
   * asyncEnd. Tag (asyncView()[2], the token) != TOKEN_ARGS: token and flags
   * in the view ([2], [3]), undefined when the span ended, else the
   * NativeStatus (STATUS_INVALID for flags that are not a uint32). Tag =
   * TOKEN_ARGS: (token, flags) likewise; (token, flags, startMs, endMs,
   * nameId, attrsJson?) ends with a start / end in ms on the
   * performance.now() axis (NaN: the begin's / now), a name id (-1: the
   * begin's) and attributes (undefined: the begin's), a NativeStatus.
   */
  asyncEnd(): number | undefined;
  asyncEnd(token: number, flags: number): number | undefined;
  asyncEnd(token: number, flags: number, startMs: number, endMs: number, nameId: number, attrsJson?: string): number;
  /**
   * A Float64Array [track, nameId, token, flags, local] over the binding's
   * memory, read by asyncBegin() and asyncEnd() (asyncBegin writes local);
   * undefined where external buffers are refused.
   */
  asyncView(): Float64Array | undefined;
  openAsync(): Array<[number, string]>;
  groupBegin(nameId: number, attrsJson: string): number;
  groupEnd(): number;
  openGroups(): number;

  /** A sample of counter `name` at now: Ok, Invalid (value not finite) or Closed. */
  counter(name: string, value: number): number;
  /**
   * A batch of V8 CPU samples of this env's thread: frames (functions[i],
   * urls[i], lines[2i] line and lines[2i+1] column, 0-based), the call tree
   * (nodeFrame, nodeParent: -1 at a root, a parent before its children) and
   * the samples (sampleNode, sampleUs: CLOCK_MONOTONIC us). Ok, Invalid
   * (inconsistent tables) or Closed.
   */
  cpuProfile(
    functions: string[],
    urls: string[],
    lines: Int32Array,
    nodeFrame: Uint32Array,
    nodeParent: Int32Array,
    sampleNode: Uint32Array,
    sampleUs: Float64Array,
  ): number;
  /**
   * The sampling interval (us) of the CPU profile the tracer's owner runs on
   * every env joined to it, 0 when none runs; with an argument (an integer
   * from 0 to 2^31 - 1), sets it first. The same value from every env.
   */
  profileInterval(intervalUs?: number): number;
  flush(): void;
  pending(): number;
  snapshot(): NativeSnapshot;
  /** Freezes the committed records: what read, readAt and query read, read in place. */
  freeze(): NativeFrozen;
  /** Records [offset, offset + limit) of the view, in snapshot order. */
  read(view: NativeFrozen, offset: number, limit: number): NativeSnapshot;
  /** The view's records at these global indices (snapshot order positions), in this order. */
  readAt(view: NativeFrozen, indices: Float64Array): NativeSnapshot;
  /** One step of the core's query engine (native/core/read/query_call.h). */
  query(view: NativeFrozen, name: string | undefined, args: Float64Array): Float64Array;
  stats(): NativeStatsRow[];
  /** The budget's counts (native/core/record/record_counts.h), per timeline. */
  counts(): BackendCounts;
  // Both return an external Buffer over the writer's output, typed as its base
  // class so the package's declarations do not need @types/node.
  /** Chrome Trace Event JSON, UTF-8 bytes. */
  chromeJson(): Uint8Array;
  /** Perfetto protobuf trace (native/core/write/perfetto_writer.h). */
  perfetto(): Uint8Array;
  /**
   * Snapshots now, then formats and writes `path` on a worker thread. Rejects
   * with an Error carrying code, errno, syscall and path (as fs errors do).
   * Resolves with the file's size and the records and timelines frozen into it.
   */
  writeFile(path: string, format: OutputFormat): Promise<WrittenFile>;
  /**
   * writeFile on this thread, which waits: the records read and formatted
   * block by block into the file, so memory stays bounded (the exit paths).
   * Throws the error writeFile rejects with. droppedElsewhere (default 0):
   * records produced outside the tracer and dropped there, added to the
   * file's produced and dropped counts.
   */
  writeFileNow(path: string, format: OutputFormat, droppedElsewhere?: number): WrittenFile;
  /**
   * Streams committed records to `path` (Perfetto) on a thread of the addon's
   * (native/core/write/trace_stream.h); rotateBytes 0: no rotation; keep 0: all.
   * Throws an fs-style Error when the first file cannot be opened.
   * onError runs on this thread after a write error (status().error).
   */
  stream(path: string, rotateBytes: number, keep: number, onError: () => void): NativeStream;
  /** A token another env passes to `NativeAddon.join` to record into this tracer. */
  shareToken(): string;
  /** napi External holding a `hotspan_api_v1*` (native/include/hotspan.h). */
  nativeApi(): unknown;
  close(): void;
  closed(): boolean;

  // trace context (native/addon/trace_context.h); 64-bit values as BigUint64Array
  /** [trace hi, trace lo, span, parent, flags | resolved << 8, tracer-wide span id] of the innermost open span (zeros: none). */
  openIds(): BigUint64Array;
  /** [wire span id, trace hi, trace lo, trace flags] of tracer-wide span id `span`: its wire id, the trace it starts as a root and that trace's flags under the tracer's head sampler. */
  idsOf(span: number): BigUint64Array;
  /** Those 5 values per record of the view, in the view's record order (native/core/record/span_ids.h). */
  spanIds(view: NativeFrozen): BigUint64Array;
  /** [index, tracestate, ...] for the records of the view whose trace carries a tracestate (only those; native/core/record/span_ids.h). */
  spanTracestates(view: NativeFrozen): Array<number | string>;
  /** The salt of this tracer's W3C ids (native/core/record/trace_id.h). */
  idSalt(): bigint;
}

/**
 * Holds NativeTracer to the schema's list: the type-check fails on a method
 * declared here and not made by the addon, or made and not declared, and
 * names it (`missing`: in the schema only; `extra`: in NativeTracer only).
 */
export type NativeTracerMatchesSchema = MustBeTrue<
  [Exclude<NativeTracerMethod, keyof NativeTracer>, Exclude<keyof NativeTracer, NativeTracerMethod>] extends [never, never]
    ? true
    : { missing: Exclude<NativeTracerMethod, keyof NativeTracer>; extra: Exclude<keyof NativeTracer, NativeTracerMethod> }
>;
type MustBeTrue<T extends true> = T;

export interface NativeAddon {
  /** ABI version of native/include/hotspan.h the addon implements. */
  readonly abiVersion: number;
  /** The clock span timestamps read: the invariant TSC, or CLOCK_MONOTONIC (HOTSPAN_CLOCK=monotonic, or no invariant TSC). */
  readonly clockSource: 'tsc' | 'monotonic';
  /** originNs: raw monotonic ns at performance.now() == 0 (BigInt). */
  create(options: {
    originNs: bigint;
    threadName: string;
    wakeHighWater: number;
    /** Absent: the core's default budget. */
    memoryLimit?: number;
    onFull?: 'overwrite' | 'drop';
    /** The head sampler word (native/core/record/sampler.h); default 0n, parentbased_always_on. */
    sampler?: bigint;
    /** The tail keep word of its OTLP export (native/core/record/tail_keep.h); default 0n, none. */
    keep?: bigint;
    /** Span names that keep their trace whole in that tail keep (TracerOptions::keep_names); default none. */
    keepNames?: string[];
    /** The process's name in its documents (1 to 1024 bytes of UTF-8); default "hotspan". */
    processName?: string;
  }): NativeTracer;
  /** Attach this env's thread to a tracer created in another env of the process. */
  join(token: string, options: { threadName: string }): NativeTracer;
  /** Raw monotonic clock, ns, as a BigInt. */
  nowNs(): bigint;
  /**
   * An OTLP encoder over the committed spans of the tracer shared under
   * `token` (lib/otlp/otlp-worker.ts); attaches no thread to it.
   */
  otlpSource(token: string, config: { resource: Array<[string, string]>; scopeVersion: string; encoding: 'protobuf' | 'json' }): NativeOtlpSource;
  /**
   * The next ExportTraceServiceRequest of at most maxSpans spans (`body`
   * absent: nothing new); `lost`: records overwritten or dropped by the budget
   * before they were read; `waiting`: records committed and not yet read.
   * `final`: also the spans whose local root has not ended.
   */
  otlpNext(source: NativeOtlpSource, maxSpans: number, final: boolean): { body?: Uint8Array; spans: number; lost: number; waiting: number; unread: number; sampledOut: number; keepTimedOut: number };
  /**
   * What a stop past its deadline abandons: every record not read yet and
   * those held back, counted in `spans` without being encoded, in bounded
   * memory; `lost`, `waiting` and `sampledOut` (records of traces the head
   * sampler left out) as for otlpNext.
   */
  otlpDiscard(source: NativeOtlpSource): { spans: number; lost: number; waiting: number; unread: number; sampledOut: number; keepTimedOut: number };
}

/** A type-tagged OTLP source (`NativeAddon.otlpSource()`). */
export interface NativeOtlpSource {
  readonly __otlpSource?: never;
}

/** A running stream (native/addon/stream_object.h). */
export interface NativeStream {
  /** Writes what is committed, finishes the file, ends the thread (blocks until done). */
  close(): void;
  /** Reads now instead of at the next interval. */
  wake(): void;
  status(): {
    file: string;
    files: number;
    bytes: number;
    written: number;
    missed: number;
    unwritten: number;
    sampledOut: number;
    keepTimedOut: number;
    waiting: number;
    closed: boolean;
    error?: Error;
  };
}
