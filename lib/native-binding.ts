// The shape of the compiled addon (native/addon), as the facade sees it.
// Hot functions return status codes instead of throwing; the facade turns
// codes into errors so the native side never builds exception objects.

import type { STATUS_CLOSED, STATUS_INVALID, STATUS_NO_OPEN_SPAN, STATUS_OK } from './flags';
import type { OutputFormat } from './output';

/**
 * A status code of the core (native/include/hotspan.h `hotspan_status`, which
 * native/core/tracer.h `Status` is defined from); values in lib/flags.ts.
 * test/binding-surface.test.ts checks this file against the addon.
 */
export type NativeStatus = typeof STATUS_OK | typeof STATUS_CLOSED | typeof STATUS_NO_OPEN_SPAN | typeof STATUS_INVALID;

/** Columnar committed records, as returned by `NativeTracer.snapshot()`. */
export interface NativeSnapshot {
  /** Index = name id. */
  names: string[];
  timelines: Array<{ id: number; name: string; kind: 'js' | 'native' | 'track' | 'groups'; exited: boolean }>;
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
}

/** One counter's samples: times[i] (ms, the performance.now() axis) and values[i]. */
export interface CounterSeries {
  name: string;
  times: Float64Array;
  values: Float64Array;
  /** Samples refused because the series held its maximum (1,048,576). */
  dropped: number;
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

/** One tracer as seen from one JS env (thread). Functions are bound to it natively. */
export interface NativeTracer {
  // hot path
  /** undefined when the span opened, else a NativeStatus (closed; unknown name or stack too deep: Invalid). */
  begin(nameId: number): number | undefined;
  /** undefined when the span ended, else a NativeStatus (never Ok). */
  end(): number | undefined;
  beginAttrs(nameId: number, attrsJson: string): number;
  /** Ends with extra SpanFlags (error = 4). undefined when the span ended, else a NativeStatus. */
  endFlags(flags: number): number | undefined;

  /** trace(): begin, returning the open-span depth after it (0: not opened; see begin() for why). */
  beginDepth(nameId: number): number;
  /** Ends the innermost span only while exactly `depth` spans are open; else NoOpenSpan, nothing changed. */
  endAt(depth: number, flags: number): number | undefined;

  intern(name: string): number;
  openDepth(): number;
  /** Local id of the innermost open span on this thread; 0 when none is open. */
  innermost(): number;
  setThreadName(name: string): void;

  // async spans, tracks, groups (return 0 / a NativeStatus on failure)
  track(name: string, serial: boolean): number;
  /** Returns a token (a JS number, never 0) or 0 when closed / unknown track. */
  asyncBegin(track: number, nameId: number, attrsJson: string): number;
  asyncEnd(token: number, flags: number): number;
  openAsync(): Array<[number, string]>;
  groupBegin(nameId: number, attrsJson: string): number;
  groupEnd(): number;
  openGroups(): number;

  /** A sample of counter `name` at now: Ok, Invalid (value not finite) or Closed. */
  counter(name: string, value: number): number;
  flush(): void;
  pending(): number;
  snapshot(): NativeSnapshot;
  stats(): NativeStatsRow[];
  // Both return an external Buffer over the writer's output, typed as its base
  // class so the package's declarations do not need @types/node.
  /** Chrome Trace Event JSON, UTF-8 bytes. */
  chromeJson(): Uint8Array;
  /** Perfetto protobuf trace (native/core/perfetto_writer.h). */
  perfetto(): Uint8Array;
  /**
   * Snapshots now, then formats and writes `path` on a worker thread. Rejects
   * with an Error carrying code, errno, syscall and path (as fs errors do).
   */
  writeFile(path: string, format: OutputFormat): Promise<void>;
  /** A token another env passes to `NativeAddon.join` to record into this tracer. */
  shareToken(): string;
  /** napi External holding a `hotspan_api_v1*` (native/include/hotspan.h). */
  nativeApi(): unknown;
  close(): void;
  closed(): boolean;
}

export interface NativeAddon {
  /** ABI version of native/include/hotspan.h the addon implements. */
  readonly abiVersion: number;
  /** The clock span timestamps read: the invariant TSC, or CLOCK_MONOTONIC (HOTSPAN_CLOCK=monotonic, or no invariant TSC). */
  readonly clockSource: 'tsc' | 'monotonic';
  /** originNs: raw monotonic ns at performance.now() == 0 (BigInt). */
  create(options: { originNs: bigint; threadName: string; wakeHighWater: number }): NativeTracer;
  /** Attach this env's thread to a tracer created in another env of the process. */
  join(token: string, options: { threadName: string }): NativeTracer;
  /** Raw monotonic clock, ns, as a BigInt. */
  nowNs(): bigint;
}
