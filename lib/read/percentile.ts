// hotspan's one percentile definition: nearest rank. The p-th percentile of
// n values is the value at 1-based rank ceil(p / 100 * n) in ascending order,
// clamped to [1, n]: p = 50 of {1, 2, 3, 4} is 2; p = 0 is the least value and
// p = 100 the greatest. Where every value is kept (query(), `hotspan report`)
// it is exact; stats() keeps a log-linear histogram per name instead and
// returns the representative of the bucket holding that same rank, within
// 1/256 (0.39%) of the exact value (native/core/read/log_linear_histogram.h, whose
// nearest_rank() is this function's C++ twin; test/percentile.test.ts checks
// the three agree on the same spans).

/** 1-based rank of the nearest-rank q-quantile (0 <= q <= 1) among n > 0 values; 0 when n is 0. */
export function nearestRank(q: number, n: number): number {
  if (n === 0) return 0;
  if (!(q > 0)) return 1;
  if (q >= 1) return n;
  const r = q * n;
  // Relative tolerance, as the core's: q * n computed as 9.000000000000002 is rank 9.
  const rank = Math.ceil(r - r * 1e-12);
  return Math.min(n, Math.max(1, rank));
}

/** The p-th percentile (0 <= p <= 100) of values sorted ascending; NaN when there are none. */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  return n === 0 ? NaN : sorted[nearestRank(p / 100, n) - 1];
}
