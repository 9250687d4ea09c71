// Per-name summary rows. The native backend gets them from the core; the js
// backend computes them here from its snapshot, with the same histogram,
// the same inclusion rule (every committed record: spans, async spans,
// groups) and the same row order (total descending, then name id).

import { LogLinearHistogram } from './histogram';
import { FIELDS_PER_RECORD } from './flags';
import type { NativeSnapshot, NativeStatsRow } from './native-binding';

/** One row of stats(); all times in ms. */
export interface StatsRow {
  readonly name: string;
  readonly count: number;
  readonly total: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
}

export function statsFromNative(rows: readonly NativeStatsRow[]): readonly StatsRow[] {
  return Object.freeze(
    rows.map((r) =>
      Object.freeze({
        name: r.name,
        count: r.count,
        total: r.totalNs / 1e6,
        min: r.minNs / 1e6,
        max: r.maxNs / 1e6,
        mean: r.meanNs / 1e6,
        p50: r.p50Ns / 1e6,
        p90: r.p90Ns / 1e6,
        p99: r.p99Ns / 1e6,
      }),
    ),
  );
}

/** Durations are taken in whole ns (ms * 1e6, rounded), as the core stores them. */
export function statsFromSnapshot(snap: NativeSnapshot): readonly StatsRow[] {
  const byName: Array<LogLinearHistogram | undefined> = [];
  const { times, fields } = snap;
  for (let i = 0; i < snap.count; i++) {
    const name = fields[i * FIELDS_PER_RECORD];
    let h = byName[name];
    if (h === undefined) {
      h = new LogLinearHistogram();
      byName[name] = h;
    }
    h.record(Math.round(times[2 * i + 1] * 1e6) - Math.round(times[2 * i] * 1e6));
  }
  const rows: Array<{ id: number; h: LogLinearHistogram }> = [];
  byName.forEach((h, id) => {
    if (h !== undefined) rows.push({ id, h });
  });
  rows.sort((a, b) => b.h.total - a.h.total || a.id - b.id);
  return statsFromNative(
    rows.map(({ id, h }) => ({
      name: snap.names[id] ?? '?',
      count: h.count,
      totalNs: h.total,
      minNs: h.min,
      maxNs: h.max,
      meanNs: h.mean,
      p50Ns: h.quantile(0.5),
      p90Ns: h.quantile(0.9),
      p99Ns: h.quantile(0.99),
    })),
  );
}
