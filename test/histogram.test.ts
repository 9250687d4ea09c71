// The js backend's log-linear histogram against exact nearest-rank quantiles.
import { describe, expect, it } from 'vitest';

import { LogLinearHistogram, nearestRank } from '../lib/histogram';

function exact(sorted: number[], q: number): number {
  return sorted[nearestRank(q, sorted.length) - 1];
}

/** Deterministic PRNG (mulberry32), so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('LogLinearHistogram', () => {
  it('uses the nearest-rank rule', () => {
    expect(nearestRank(0.5, 4)).toBe(2);
    expect(nearestRank(0.9, 10)).toBe(9);
    expect(nearestRank(0.99, 100)).toBe(99);
    expect(nearestRank(0, 5)).toBe(1);
    expect(nearestRank(1, 5)).toBe(5);
    expect(nearestRank(0.5, 0)).toBe(0);
  });

  it('is exact below 128 ns and for min/max/count/total', () => {
    const h = new LogLinearHistogram();
    for (const v of [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]) h.record(v);
    const sorted = [1, 1, 2, 3, 3, 4, 5, 5, 5, 6, 9];
    for (const q of [0.1, 0.25, 0.5, 0.9, 0.99]) expect(h.quantile(q)).toBe(exact(sorted, q));
    expect([h.count, h.min, h.max, h.total]).toEqual([11, 1, 9, 44]);
    expect(new LogLinearHistogram().quantile(0.5)).toBe(0);
  });

  it('stays within 1/256 of the exact quantile over many magnitudes', () => {
    const next = rng(42);
    for (let trial = 0; trial < 20; trial++) {
      const h = new LogLinearHistogram();
      const values: number[] = [];
      const n = 1 + Math.floor(next() * 3000);
      for (let i = 0; i < n; i++) {
        // Log-uniform over 1 ns .. ~17 min.
        const v = Math.floor(Math.exp(next() * Math.log(1e12)));
        values.push(v);
        h.record(v);
      }
      values.sort((a, b) => a - b);
      for (const q of [0.01, 0.1, 0.5, 0.75, 0.9, 0.99, 0.999]) {
        const want = exact(values, q);
        const got = h.quantile(q);
        expect(Math.abs(got - want)).toBeLessThanOrEqual(want / 256);
      }
      expect(h.count).toBe(n);
      expect(h.total).toBe(values.reduce((a, b) => a + b, 0));
    }
  });

  it('reports the bucket midpoint, clamped into [min, max]', () => {
    const h = new LogLinearHistogram();
    // 1000..1003 share one bucket of width 4 (octave 2^9): midpoint 1001.5.
    for (const v of [1000, 1003, 1003, 1007, 5000]) h.record(v);
    expect(h.quantile(0.5)).toBe(1001.5);
    expect(h.quantile(0.8)).toBe(1005.5);
    const g = new LogLinearHistogram();
    for (const v of [1000, 1000, 1000]) g.record(v);
    expect(g.quantile(0.5)).toBe(1000);
  });
});
