// What the trace readers hand to their consumers (report, convert, view):
// timelines, whole spans and counter samples, in file order, in ns.

export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };
export type Args = Record<string, AttrValue>;

/** A timeline: a thread, or an async track (whose overlapping spans a writer may spread over lanes). */
export interface TraceTimeline {
  /** Unique within one read. */
  readonly key: string;
  readonly name: string;
  /** thread: spans nest by time; track: async spans that may overlap; counter: samples. */
  readonly kind: 'thread' | 'track' | 'counter';
  /** Concurrent track: spans may overlap (written on lanes or as async pairs). */
  readonly concurrent: boolean;
  /** The process it belongs to, when the trace says (Chrome JSON's pid, Perfetto's thread or process descriptor). */
  readonly pid?: number;
}

export interface TraceSpan {
  readonly timeline: string;
  readonly name: string;
  readonly startNs: number;
  readonly endNs: number;
  /** Attributes, with hotspan's span_id / parent_id / error / abandoned among them when written. */
  readonly args: Args | undefined;
}

/**
 * How a trace's times line up with the system clocks, when it says so
 * (hotspan's files do): the spans' times are then ns from originNs on
 * CLOCK_MONOTONIC (hotspan's performance.now() axis), and the readings were
 * taken together. A converter writes them into its output.
 */
export interface TraceClocks {
  /** Where the times' zero is on CLOCK_MONOTONIC: the writing process's performance.now() origin, or 0. */
  readonly originNs: bigint;
  readonly monotonicNs: bigint;
  readonly realtimeNs: bigint;
  /** -1n when the trace has no BOOTTIME reading. */
  readonly boottimeNs: bigint;
}

/** The function on top of a CPU sample's stack. */
export interface TraceFrame {
  /** As the profiler names it ('' for an anonymous function). */
  readonly function: string;
  readonly url: string;
  /** 1-based line of the function's start; 0 when unknown. */
  readonly line: number;
  /** 1-based column of the function's start, when the trace says (Chrome JSON's profiles do; Perfetto's frames have none). */
  readonly column?: number;
}

export interface TraceSink {
  /** Called once, before the first timeline, when the trace says which clock its times are on. */
  clocks?(c: TraceClocks): void;
  timeline(t: TraceTimeline): void;
  /** A process's name, as the trace gives it (Chrome JSON's process_name, Perfetto's process descriptor). */
  process?(pid: number, name: string): void;
  span(s: TraceSpan): void;
  counter?(timeline: string, tsNs: number, value: number): void;
  /**
   * A CPU sample of the thread whose spans are on `timeline` (its key, which
   * may not be announced yet), of process `pid` when the trace says: `frame`
   * is the function on top of its stack; `stack`, when the trace has it, the
   * whole stack, outermost first (its last frame is `frame`). A reader hands
   * over the same array for every sample of one stack.
   */
  sample?(timeline: string, tsNs: number, frame: TraceFrame, pid: number | undefined, stack?: readonly TraceFrame[]): void;
}

/**
 * hotspan's recording counts, as a file carries them (the tracer's totals
 * when the file was finished): Chrome JSON's metadata.hotspan, Perfetto's
 * "hotspan.counts" track descriptor's description. A stream's files add what
 * the stream wrote in all its files so far and what it lost to the budget;
 * a sampling tracer's files what they left out (docs/sampling.md): a
 * write's `sampled_out`, a stream's `stream_sampled_out`.
 */
export const COUNT_KEYS = ['produced', 'kept', 'released', 'overwritten', 'dropped', 'stream_written', 'stream_missed', 'sampled_out', 'stream_sampled_out'] as const;
export type RecordingCounts = Partial<Record<(typeof COUNT_KEYS)[number], number>>;

/** Picks the counts out of an object of members (metadata.hotspan, or the annotations). */
export function recordingCounts(members: Record<string, unknown>): RecordingCounts | undefined {
  const out: RecordingCounts = {};
  let any = false;
  for (const k of COUNT_KEYS) {
    const v = members[k];
    if (typeof v === 'number' && Number.isFinite(v)) {
      out[k] = v;
      any = true;
    }
  }
  return any ? out : undefined;
}

/** Traced processes a trace lacks, whole (`missing`) or in part (`unfinished`), from the pid lists it carries. */
export function processLists(missing: unknown, unfinished: unknown): { missing: number[]; unfinished: number[] } {
  const pids = (v: unknown): number[] => (Array.isArray(v) ? v.filter((p): p is number => Number.isSafeInteger(p)) : []);
  return { missing: pids(missing), unfinished: pids(unfinished) };
}

/** The member-wise sum of several files' or processes' counts (a key any of them has); undefined for none. */
export function sumCounts(all: readonly RecordingCounts[]): RecordingCounts | undefined {
  if (all.length === 0) return undefined;
  const out: RecordingCounts = {};
  for (const c of all) {
    for (const k of COUNT_KEYS) {
      const v = c[k];
      if (v !== undefined) out[k] = (out[k] ?? 0) + v;
    }
  }
  return out;
}

export interface ReadSummary {
  readonly format: 'perfetto' | 'json';
  readonly bytes: number;
  /** The file ended inside a packet / event: everything before it was read. */
  readonly truncated: boolean;
  /**
   * Where the last whole record read ends: Perfetto, the byte offset after
   * the last whole packet; Chrome JSON, the line of the last whole event.
   */
  readonly lastWhole: { readonly unit: 'byte' | 'line'; readonly at: number } | undefined;
  /** Spans begun and never ended in the file (cut off, or unmatched). */
  readonly unclosed: number;
  /** Perfetto packets skipped because they need interned data from before the file's start (0 for JSON). */
  readonly skipped: number;
  /**
   * Chrome JSON events skipped as malformed (a ts that is not a number, a
   * negative dur, args nested past 64 levels); 0 for Perfetto.
   */
  readonly malformed: number;
  /** What was wrong with the first malformed event, when there was one. */
  readonly firstMalformed?: string;
  /** The recording counts the file carries; undefined when it has none (cut off, killed, or not hotspan's). */
  readonly counts: RecordingCounts | undefined;
  /** Loss the trace reports about itself, when it carries the counts. */
  readonly dropped: number | undefined;
  readonly overwritten: number | undefined;
  /**
   * Traced processes a `hotspan run` trace lacks whole or in part (Chrome
   * JSON metadata, lib/cli/join-parts.ts): `missing` wrote nothing,
   * `unfinished` only up to their last periodic flush. Undefined when the
   * file says nothing (Chrome JSON metadata, or Perfetto's "hotspan.processes"
   * track descriptor).
   */
  readonly processes?: { readonly missing: readonly number[]; readonly unfinished: readonly number[] };
}

/** Where a cut-off file ends and how much of it was read ("the file ends at byte N inside a packet; ..."). */
export function describeCut(s: Pick<ReadSummary, 'format' | 'bytes' | 'lastWhole'>): string {
  const at = s.lastWhole?.at;
  if (s.format === 'perfetto') {
    return `the file ends at byte ${String(s.bytes)} inside a packet; read up to its last whole packet${at === undefined ? '' : `, which ends at byte ${String(at)}`}`;
  }
  return `the file ends at byte ${String(s.bytes)} inside an event or its closing metadata; read up to its last whole event${at === undefined || at === 0 ? '' : `, on line ${String(at)}`}`;
}

/** A file that is not a readable trace; the message names the file and what is wrong. */
export class TraceFileError extends Error {
  constructor(
    readonly path: string,
    what: string,
  ) {
    super(`${path}: ${what}`);
    this.name = 'TraceFileError';
  }
}
