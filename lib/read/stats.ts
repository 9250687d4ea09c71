// Per-name summary rows, as the core computes them (native/core/read/stats.cc):
// through the addon for the native backend, through its WebAssembly build
// (./wasm-core) for the js backend. p50, p90 and p99 are nearest-rank
// percentiles (lib/read/percentile.ts) read from a log-linear histogram: the value
// of the bucket holding that rank, within 1/256 of the exact one.

import type { NativeStatsRow } from '../binding/native-binding';

/** One row of stats(); all times in ms. */
export interface StatsRow {
  /** The span name. */
  readonly name: string;
  /** Spans of that name. */
  readonly count: number;
  /** The sum of their durations, in ms. */
  readonly total: number;
  /** The shortest, in ms. */
  readonly min: number;
  /** The longest, in ms. */
  readonly max: number;
  /** The mean duration, in ms. */
  readonly mean: number;
  /** The median duration, in ms. */
  readonly p50: number;
  /** The 90th percentile, in ms. */
  readonly p90: number;
  /** The 99th percentile, in ms. */
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
