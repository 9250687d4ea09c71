// Where the recorded spans went under the memory budget: per timeline and in
// total, produced = kept + released + overwritten + dropped (released: handed
// to every consumer, e.g. written by tracer.stream() or read by the OTLP
// export, before its memory was reused; 0 without one). The counts themselves come
// from the backend (the core's for native, the js backend's own); this only
// totals them and says it once when something was lost.

import type { OtlpCounts } from '../otlp/otlp-counters';

/** One timeline's counts. */
export interface TimelineCounts {
  /** The timeline id, as in SpanRecord.timeline. */
  readonly id: number;
  /** The timeline name, as in SpanRecord.timelineName. */
  readonly name: string;
  /** Spans that ended on this timeline. */
  readonly produced: number;
  /** Spans of this timeline still in memory. */
  readonly kept: number;
  /** Written out by every consumer (tracer.stream()) and no longer in memory: not lost. */
  readonly released: number;
  /** Spans recycled by the `overwrite` policy of a full budget. */
  readonly overwritten: number;
  /** Spans not recorded because the budget was full (`drop`, or nothing recyclable). */
  readonly dropped: number;
}

/** What tracer.counts() returns; stats(), snapshot() and query() carry it as `counts`. */
export interface Counts {
  /** Spans that ended: kept + released + overwritten + dropped. */
  readonly produced: number;
  /** Spans still in memory. */
  readonly kept: number;
  /** Spans written by a stream or sent by the OTLP export, whose memory was then reused: not lost. */
  readonly released: number;
  /** Spans recycled by the `overwrite` policy of a full budget. */
  readonly overwritten: number;
  /** Spans not recorded because the budget was full. */
  readonly dropped: number;
  /** The budget in bytes and what happens when it is full. */
  readonly memoryLimit: number;
  /** The budget's policy when full: 'overwrite' or 'drop'. */
  readonly onFull: 'overwrite' | 'drop';
  /** The same counts per timeline. */
  readonly timelines: readonly TimelineCounts[];
  /**
   * Spans of traces the sampler (`sample`, `sample.keep`) did not keep, left
   * out of the tracer's consuming outputs (the OTLP export, streams): each
   * span once, however many outputs leave it out, when the output that read
   * it first decides it (0 without an output; a write() counts nothing). The memory figures above still count them: they
   * stay in memory for snapshot(), stats() and query(). See
   * docs/sampling.md for the identity.
   */
  readonly sampledOut: number;
  /** Present once tracer.exportOtlp() started. */
  readonly otlp?: OtlpCounts;
  /** Present when the tracer has the dumpOn option (docs/sampling.md). */
  readonly dumpOn?: DumpOnCounts;
}

/** The triggered dumps of the dumpOn option: triggers = written + suppressed + failed + not written yet. */
export interface DumpOnCounts {
  /** Dump files written. */
  readonly written: number;
  /** Triggers with no file because maxPerMinute files were already written in the last minute. */
  readonly suppressed: number;
  /** Dumps that could not be written (a warning said why). */
  readonly failed: number;
}

/** What a backend reports: per-timeline counts and whether anything was lost. */
export interface BackendCounts {
  lost: boolean;
  limit: number;
  onFull: 'overwrite' | 'drop';
  timelines: TimelineCounts[];
  /** The core's counts().sampledOut (native): each span its consuming outputs left out, once. */
  sampledOut?: number;
}

export function totalCounts(b: BackendCounts, sampledOut = 0): Counts {
  let produced = 0;
  let kept = 0;
  let released = 0;
  let overwritten = 0;
  let dropped = 0;
  const timelines = b.timelines.map((t) => {
    produced += t.produced;
    kept += t.kept;
    released += t.released;
    overwritten += t.overwritten;
    dropped += t.dropped;
    return Object.freeze({ ...t });
  });
  return Object.freeze({
    produced,
    kept,
    released,
    overwritten,
    dropped,
    memoryLimit: b.limit,
    onFull: b.onFull,
    timelines: Object.freeze(timelines),
    sampledOut,
  });
}

/**
 * `value` with a non-enumerable `counts` (deep equality of the value itself is
 * unchanged). A frozen array is copied and the copy frozen again.
 */
export function withCounts<T extends object>(value: T, counts: Counts): T & { readonly counts: Counts } {
  const frozen = Object.isFrozen(value);
  const target = (frozen && Array.isArray(value) ? [...(value as unknown[])] : value) as T;
  Object.defineProperty(target, 'counts', { value: counts, enumerable: false });
  if (frozen) Object.freeze(target);
  return target as T & { readonly counts: Counts };
}

/** The warning a tracer gives once, at the first span it overwrote or dropped. */
export class LossWarning {
  private given = false;

  /** Warns when `c` counts a span overwritten or dropped, the first time. */
  of(c: Counts): void {
    if (this.given || (c.overwritten === 0 && c.dropped === 0)) return;
    this.given = true;
    warnLoss(c);
  }

  /** As of(), asking `counts` only until the warning was given (flush(), the GC drain). */
  check(counts: () => BackendCounts): void {
    if (this.given) return;
    const b = counts();
    if (b.lost) this.of(totalCounts(b));
  }
}

function warnLoss(c: Counts): void {
  process.emitWarning(
    `hotspan: the memory budget (${c.memoryLimit} bytes, onFull '${c.onFull}') is full: ` +
      `${c.overwritten} span(s) overwritten and ${c.dropped} dropped so far; tracer.counts() keeps count ` +
      '(raise memoryLimit / HOTSPAN_MEMORY_LIMIT to keep more)',
    { code: 'HOTSPAN_BUDGET_FULL' },
  );
}
