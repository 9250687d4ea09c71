// What every backend (native, js, noop) implements. The public Tracer
// validates arguments and keeps the name cache; a backend records. Recording
// methods throw the errors of ./errors (same types and texts everywhere).

import type { FrozenView } from '../read/frozen-view';
import type { NativeSnapshot, NativeTracer } from '../binding/native-binding';
import type { OutputFormat, WrittenFile } from '../common/output';
import type { BackendCounts } from '../common/counts';
import type { StatsRow } from '../read/stats';

/** What records: 'native' (the C++ addon), 'js' (TypeScript, the core's writers in WebAssembly) or 'noop' (nothing). */
export type BackendKind = 'native' | 'js' | 'noop';

/**
 * The context a span is begun under: its trace and its parent, stored with
 * the span by the core (native/core/record/stored_context.h).
 */
export interface Given {
  /** [trace hi, trace lo, parent wire span id, parent tracer-wide span id (0: a remote parent)]. */
  readonly ids: BigUint64Array;
  /** W3C trace-flags. */
  readonly flags: number;
  /** W3C tracestate ('' for none). */
  readonly tracestate: string;
}

/** The W3C ids of an open span: trace hi, trace lo, its wire id, its parent's, flags; and its tracer-wide span id. */
export interface OpenIds {
  readonly traceHi: bigint;
  readonly traceLo: bigint;
  readonly span: bigint;
  readonly parent: bigint;
  readonly flags: number;
  /** Tracer-wide span id (timeline * 2^32 + local). */
  readonly spanId: number;
  /** False when the trace is not known on this thread (the span has a given parent but no context). */
  readonly resolved: boolean;
}

/** A binding's [trace hi, trace lo, span, parent, flags | resolved << 8, span id] as OpenIds; undefined when no span is open. */
export function openIdsOf(v: BigUint64Array): OpenIds | undefined {
  if (v[2] === 0n) return undefined;
  return {
    traceHi: v[0],
    traceLo: v[1],
    span: v[2],
    parent: v[3],
    flags: Number(v[4] & 0xffn),
    resolved: (v[4] & 0x100n) !== 0n,
    spanId: Number(v[5]),
  };
}

/**
 * A batch of V8 CPU samples of the calling thread (tracer.profile()): frames
 * (functions[i], urls[i], lines[2i] and lines[2i+1] their 0-based line and
 * column), the call tree (nodeFrame, nodeParent: -1 at a root, a parent
 * before its children), and per sample its node and time (CLOCK_MONOTONIC us).
 */
export interface CpuSamples {
  readonly functions: string[];
  readonly urls: string[];
  readonly lines: Int32Array;
  readonly nodeFrame: Uint32Array;
  readonly nodeParent: Int32Array;
  readonly sampleNode: Uint32Array;
  readonly sampleUs: Float64Array;
}

export interface Backend {
  readonly kind: BackendKind;
  /** How far a recorded timestamp may be off the performance.now() axis, in ms. */
  readonly clockBoundMs: number;

  // ---- hot path: the name id is already a validated uint32 ----
  /** No status: the caller passes only ids it knows are interned. */
  begin(nameId: number): void;
  /** Checks the id: throws RangeError for an unknown one (attrsJson '' = no attributes). */
  beginAttrs(nameId: number, attrsJson: string): void;
  /**
   * Attributes as values (the native backend's typed slots): begins the
   * span and returns true, or returns false having done nothing when `attrs`
   * has no fast form; the caller then checks it and calls beginAttrs.
   */
  beginValues(nameId: number, attrs: unknown): boolean;
  end(): void;
  /** Ends the innermost span with extra flags (FLAG_ERROR, FLAG_ABANDONED). */
  endFlags(flags: number): void;

  /** begin() returning the open-span depth after it (trace() checks it at the end). */
  beginDepth(nameId: number): number;
  /**
   * Ends the innermost span (with extra flags) only while exactly `depth`
   * spans are open; otherwise throws and changes nothing.
   */
  endAt(depth: number, flags: number, name: number | string): void;

  intern(name: string): number;
  openDepth(): number;
  /** Local id of the innermost open span on this thread; 0 when none is open. */
  innermost(): number;
  /** Local id of the span begun last on this thread (open or not), or -1 when the backend does not say cheaply. */
  lastBegun(): number;
  /** ms on the performance.now() axis (the backend's clock). */
  now(): number;

  // ---- async spans, tracks, groups ----
  track(name: string, serial: boolean): number;
  /** Returns the span token (its span id, never 0). */
  asyncBegin(track: number, nameId: number, attrsJson: string): number;
  /** asyncBegin with attributes as values (see beginValues): the token, or 0 having done nothing. */
  asyncBeginValues(track: number, nameId: number, attrs: unknown): number;
  /** Returns a NativeStatus; never throws (called from promise settlement). */
  asyncEnd(token: number, flags: number): number;
  /** [token, name] of async spans still open. */
  openAsync(): Array<[number, string]>;
  groupBegin(nameId: number, attrsJson: string): void;
  groupEnd(): void;
  openGroups(): number;

  // ---- counters ----
  /** A sample of counter `name` at now; the caller checked both (finite value). */
  counter(name: string, value: number): void;

  // ---- CPU samples ----
  /** Keeps a batch of this thread's CPU samples; absent where the backend cannot carry them (js). */
  cpuProfile?(samples: CpuSamples): void;
  /**
   * The interval (us) of the profile the tracer's owner runs on every thread
   * joined to it, 0 for none; with an argument, sets it first (the owner).
   * Absent where joined threads cannot profile (js).
   */
  profileInterval?(intervalUs?: number): number;

  // ---- finalization and reading (committed records only) ----
  flush(): void;
  pending(): number;
  /** Spans that ended (their end() succeeded) but will never be in this trace (js joining only). */
  lost(): number;
  snapshot(): NativeSnapshot;
  /** The committed records as of now, held for several reads. */
  freeze(): FrozenView;
  stats(): readonly StatsRow[];
  /** Per-timeline produced / kept / overwritten / dropped under the memory budget. */
  counts(): BackendCounts;
  /** Chrome Trace Event JSON, UTF-8: the core's writer (the addon's, or its WebAssembly build). */
  chromeJson(): Uint8Array;
  /** Perfetto protobuf trace (native/core/write/perfetto_writer.h describes the layout). */
  perfetto(): Uint8Array;
  /** Writes what is committed now to `path` in `format`; resolves with what the file holds. */
  writeFile(path: string, format: OutputFormat): Promise<WrittenFile>;
  /**
   * writeFile on this thread, which waits (the exit paths, where nothing
   * asynchronous runs). Native: streamed in blocks, memory bounded whatever
   * the trace's size; js and noop: the document built whole, as writeFile does.
   */
  writeFileNow(path: string, format: OutputFormat): WrittenFile;

  // ---- trace context (./trace-context, ./async-context) ----
  /** Opens a span under a given context (see Given); throws as beginAttrs does. */
  beginContext(nameId: number, attrsJson: string, given: Given): void;
  /** asyncBegin under a given context: the token. */
  asyncBeginContext(track: number, nameId: number, attrsJson: string, given: Given): number;
  /** Ends an async span with a start / end in ms (NaN: the begin's / now), a name id (-1: the begin's), attributes (undefined: the begin's); a NativeStatus, never throws. */
  asyncFinish(token: number, flags: number, startMs: number, endMs: number, nameId: number, attrsJson?: string): number;
  /** W3C ids of the innermost open span on this thread (native/core/record/span_ids.h), or undefined when none is open. */
  openIds(): OpenIds | undefined;
  /** [wire span id, trace hi, trace lo, trace flags] of tracer-wide span id `span`: its wire id, the trace it starts as a root (native/core/record/trace_id.h) and that trace's flags under the tracer's head sampler (sampler.h). */
  idsOf(span: number): BigUint64Array;

  share(): string;
  /** Owner of joined js threads: waits (until `deadline`, performance.now() ms) for them to ship; the names of those that did not. */
  settleJoined?(deadline: number): Promise<string[]>;
  /** Owner of joined js threads, at process exit: they ship what they hold. */
  collectJoined?(): void;
  nativeApi(): unknown;
  /** The NativeTracer behind a native backend (test hooks, demo); undefined otherwise. */
  native(): NativeTracer | undefined;
  close(): void;
}
