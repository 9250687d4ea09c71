// One percentile definition (lib/read/percentile.ts, nearest rank): stats() (the
// core's histogram, here through its WebAssembly build), query()'s
// percentile() and `hotspan report` give p50, p90 and p99 of the same spans
// at the same rank: query() and the report exactly, stats() within 1/256.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { buildReport } from '../lib/cli/report';
import { clockedTracer } from './support/tracers';
import { nearestRank, percentileOfSorted } from '../lib/read/percentile';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-percentile-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Counts of spans per name: small and awkward ones, where the rank rules differ. */
const COUNTS = [1, 2, 3, 4, 5, 7, 9, 10, 11, 19, 20, 21, 99, 100, 101, 150];
const PS = [50, 90, 99] as const;

/** Durations in whole us (exact in ms and ns), 3% apart, so a value within 1/256 names its rank. */
const durationsUs = (n: number): number[] => Array.from({ length: n }, (_, k) => Math.round(1000 * 1.03 ** k));

/** The rank by integer arithmetic: ceil(p * n / 100), at least 1. */
const rankOf = (p: number, n: number): number => Math.max(1, Math.floor((p * n + 99) / 100));

describe('nearestRank', () => {
  it('is ceil(q * n) clamped to 1..n', () => {
    for (let n = 1; n <= 1000; n++) {
      for (const p of [0, 1, 25, 50, 90, 99, 100]) {
        expect(nearestRank(p / 100, n), `p${String(p)} of ${String(n)}`).toBe(rankOf(p, n));
      }
    }
    expect(nearestRank(0.5, 0)).toBe(0);
    expect(nearestRank(-1, 5)).toBe(1);
    expect(nearestRank(Number.NaN, 5)).toBe(1);
    expect(nearestRank(2, 5)).toBe(5);
    expect(percentileOfSorted([1, 2, 3, 4], 50)).toBe(2);
    expect(percentileOfSorted([], 50)).toBeNaN();
  });
});

describe('one percentile definition', () => {
  it('stats(), query().percentile() and hotspan report agree on the same spans', async () => {
    let now = 0;
    const t = clockedTracer(() => now);
    for (const n of COUNTS) {
      // A fixed shuffle (stride 7 modulo n, or reversed where 7 divides n): not in duration order.
      const ds = durationsUs(n);
      const order = n % 7 === 0 ? ds.map((_, k) => n - 1 - k) : ds.map((_, k) => (k * 7) % n);
      for (const k of order) {
        t.begin(`n${String(n)}`);
        now += ds[k] / 1000;
        t.end();
        now += 1;
      }
    }
    const stats = new Map(t.stats().map((r) => [r.name, r]));
    const q = t.query();
    const file = path.join(tmp, 'spans.pftrace');
    await t.write(file);
    t.close();
    const report = new Map(buildReport(file, 1000, 'name').names.map((r) => [r.name, r]));

    for (const n of COUNTS) {
      const name = `n${String(n)}`;
      const sorted = durationsUs(n).map((us) => us / 1000);
      const s = stats.get(name);
      const r = report.get(name);
      if (s === undefined || r === undefined) throw new Error(`${name} missing`);
      for (const p of PS) {
        const exact = sorted[rankOf(p, n) - 1];
        const what = `p${String(p)} of ${String(n)}`;
        expect(q.spans(name).percentile(p), `query ${what}`).toBeCloseTo(exact, 9);
        expect(r[`p${p}`] / 1e6, `report ${what}`).toBeCloseTo(exact, 9);
        // The histogram: within 1/256 of the exact value, so at its rank (neighbours are 3% away).
        expect(Math.abs(s[`p${p}`] - exact), `stats ${what}: ${String(s[`p${p}`])} vs ${String(exact)}`).toBeLessThanOrEqual(exact / 256);
      }
    }
  });

  it('query().percentile() checks p and gives NaN for no span', () => {
    let now = 0;
    const t = clockedTracer(() => now);
    t.trace('a', () => undefined);
    for (const ms of [4, 1, 3, 2]) {
      t.groupBegin('g');
      now += ms;
      t.groupEnd();
      now += 1;
    }
    const q = t.query();
    expect(q.group('g').percentile(50)).toBe(2);
    expect(q.group('g').percentile(51)).toBe(3);
    expect(q.group('g').percentile(100)).toBe(4);
    expect(q.spans('none').percentile(50)).toBeNaN();
    expect(q.spans('a').percentile(0)).toBe(q.spans('a').durations()[0]);
    expect(() => q.spans('a').percentile(101)).toThrow(new RangeError('hotspan: percentile must be a number from 0 to 100, got number 101'));
    expect(() => q.spans('a').percentile(Number.NaN)).toThrow(new RangeError('hotspan: percentile must be a number from 0 to 100, got number NaN'));
    expect(() => q.spans('a').percentile('50' as unknown as number)).toThrow(new RangeError('hotspan: percentile must be a number from 0 to 100, got string "50"'));
    expect(q.group('none').percentile(50)).toBeNaN();
    t.close();
  });
});
