// Sampling of write() and stream() (docs/sampling.md, "What is written"): a
// sampling tracer's files hold its kept traces only, whole, decided by the
// same rule as the OTLP export (read/trace_keep.h): the head decision, and
// the tail keep of a slow root or of a failed span on another track. The
// expected traces come from the tracer's own records (snapshot(), which
// still shows every span): a tree is kept when its root lasted longer than
// slowerThanMs or a span of it is flagged error, or the head ratio keeps it.
// Counts are exact: a stream counts each span it leaves out once
// (status().sampledOut, counts().sampledOut), produced = written + sampledOut;
// a write counts nothing in the tracer (it does not consume) and can be
// repeated with the same file.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { Tracer, type SpanRecord } from '../lib/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { protobufjsSpans, readSpans } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-sampled-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const native = loadNativeAddon().addon !== undefined || process.env.CI === 'true';
const rows = native ? (['native', 'js'] as const) : (['js'] as const);
const SLOW_MS = 20;

const busy = (t: Tracer, ms: number): void => {
  const until = t.now() + ms;
  while (t.now() < until);
};

/**
 * `n` trees of a root 'req' (begin/end around an await), a child 'db' and an
 * async span 'io' on track 'net' that ends before the root: every 10th has
 * 'io' rejected (flagged error, on another track than its root), every 10th
 * from the 5th has a root busy for longer than SLOW_MS.
 */
async function workload(t: Tracer, n: number): Promise<void> {
  t.enableAsyncContext(); // 'io' is a child of 'req'
  for (let i = 0; i < n; i++) {
    t.begin('req');
    t.trace('db', () => 0);
    if (i % 10 === 0) {
      await t.traceAsync('io', Promise.reject(new Error('x')), { track: 'net' }).catch(() => undefined);
    } else {
      await t.traceAsync('io', Promise.resolve(), { track: 'net' });
    }
    if (i % 10 === 5) busy(t, SLOW_MS + 1);
    t.end();
  }
}

/** The ids of the spans of each tree (by its root's id), and the root of each. */
function trees(snap: readonly SpanRecord[]): Map<number, SpanRecord[]> {
  const byId = new Map(snap.map((r) => [r.id, r]));
  const out = new Map<number, SpanRecord[]>();
  for (const r of snap) {
    let root = r;
    while (root.parent !== 0 && byId.has(root.parent)) root = byId.get(root.parent)!;
    const list = out.get(root.id) ?? [];
    list.push(r);
    out.set(root.id, list);
  }
  return out;
}

/** The span ids of the trees the tail keep keeps (the head ratio 0 keeps none): a root slower than SLOW_MS, or a span flagged error. */
function expectedKept(snap: readonly SpanRecord[]): Set<number> {
  // Every 'io' (on track 'net') has its root on the main timeline: an error there keeps a trace rooted elsewhere.
  expect(snap.filter((r) => r.name === 'io' && r.parent !== 0 && r.timelineName === 'track: net').length).toBe(snap.length / 3);
  const kept = new Set<number>();
  for (const [rootId, spans] of trees(snap)) {
    const root = spans.find((s) => s.id === rootId)!;
    if (root.end - root.start > SLOW_MS || spans.some((s) => s.error)) for (const s of spans) kept.add(s.id);
  }
  return kept;
}

const idsOf = (spans: Array<{ args: Record<string, unknown> }>): number[] => spans.map((s) => Number(s.args.span_id)).sort((a, b) => a - b);
const sorted = (s: Iterable<number>): number[] => [...s].sort((a, b) => a - b);

describe.runIf(native)('stream() of a sampling tracer (native backend)', () => {
  it('streams the kept traces only, whole, and counts each span left out once', async () => {
    const t = new Tracer({ backend: 'native', sample: { ratio: 0, keep: { slowerThanMs: SLOW_MS, errors: true } } });
    const file = path.join(tmp, 'stream-kept.pftrace');
    const s = t.stream(file);
    await workload(t, 60);
    s.close();
    const snap = t.snapshot(); // every span recorded, kept or not
    expect(snap.length).toBe(60 * 3);
    const kept = expectedKept(snap);
    // 6 failed trees and 6 slow ones at least (a fast tree may have been slow on a loaded machine: then it is kept too).
    expect(kept.size).toBeGreaterThanOrEqual(12 * 3);
    const inFile = idsOf(protobufjsSpans(readFileSync(file)));
    expect(inFile).toEqual(sorted(kept));
    const st = s.status();
    expect(st).toMatchObject({ written: kept.size, sampledOut: snap.length - kept.size, missed: 0, unwritten: 0, waiting: 0, keepTimedOut: 0 });
    const c = t.counts();
    expect(c.sampledOut).toBe(snap.length - kept.size);
    expect(c.produced).toBe(st.written + c.sampledOut + c.overwritten + c.dropped);
    t.close();
  });

  it('streams every span of a tracer that does not sample, and counts none out', async () => {
    const t = new Tracer({ backend: 'native' });
    const file = path.join(tmp, 'stream-all.pftrace');
    const s = t.stream(file);
    await workload(t, 20);
    s.close();
    expect(idsOf(protobufjsSpans(readFileSync(file)))).toEqual(sorted(t.snapshot().map((r) => r.id)));
    expect(s.status()).toMatchObject({ written: 60, sampledOut: 0 });
    expect(t.counts().sampledOut).toBe(0);
    t.close();
  });

  it('at a head ratio alone, streams whole the traces inject() said were sampled', async () => {
    const t = new Tracer({ backend: 'native', sample: { ratio: 0.5 } });
    const file = path.join(tmp, 'stream-head.pftrace');
    const s = t.stream(file);
    const sampledRoots = new Set<string>();
    for (let i = 0; i < 200; i++) {
      t.trace('req', () => {
        if (t.inject<Record<string, string>>({}).traceparent.endsWith('-01')) sampledRoots.add(String(i));
        t.trace('db', () => 0, { i });
      }, { i });
    }
    s.close();
    const snap = t.snapshot();
    const want = snap.filter((r) => sampledRoots.has(String((r.attrs as { i: number }).i))).map((r) => r.id);
    expect(sampledRoots.size).toBeGreaterThan(0);
    expect(sampledRoots.size).toBeLessThan(200);
    expect(idsOf(protobufjsSpans(readFileSync(file)))).toEqual(sorted(want));
    expect(s.status()).toMatchObject({ written: want.length, sampledOut: snap.length - want.length });
    expect(t.counts().sampledOut).toBe(snap.length - want.length);
    t.close();
  });
});

for (const backend of rows) {
  describe(`write() of a sampling tracer (${backend} backend)`, () => {
    for (const ext of ['pftrace', 'json'] as const) {
      it(`writes the kept traces only, whole (${ext}), counting nothing in the tracer, the same on a second write`, async () => {
        const t = new Tracer({ backend, sample: { ratio: 0, keep: { slowerThanMs: SLOW_MS, errors: true } } });
        await workload(t, 40);
        const snap = t.snapshot();
        expect(snap.length).toBe(40 * 3);
        const kept = expectedKept(snap);
        expect(kept.size).toBeGreaterThanOrEqual(8 * 3);
        const file = path.join(tmp, `write-${backend}.${ext}`);
        const w = await t.dump(file);
        expect(w.spans).toBe(kept.size);
        expect(idsOf(readSpans(file).spans)).toEqual(sorted(kept));
        await t.write(file);
        expect(idsOf(readSpans(file).spans)).toEqual(sorted(kept));
        // Not consumed: every span stays in memory, nothing is counted out.
        const c = t.counts();
        expect(c.sampledOut).toBe(0);
        expect(c.kept).toBe(snap.length);
        t.close();
      });
    }

    it('writes whole the traces of a head ratio, and a trace whose root is open by the head decision alone', async () => {
      const t = new Tracer({ backend, sample: { ratio: 0.5 } });
      const sampled = new Set<number>();
      for (let i = 0; i < 200; i++) {
        t.trace('req', () => {
          if (t.inject<Record<string, string>>({}).traceparent.endsWith('-01')) sampled.add(i);
          t.trace('db', () => 0, { i });
        }, { i });
      }
      // An open root at ratio 0.5: its ended child goes by the head decision on an id of its own.
      t.begin('open');
      t.trace('inner', () => 0);
      const file = path.join(tmp, `head-${backend}.pftrace`);
      await t.write(file);
      t.end();
      const snap = t.snapshot().filter((r) => r.name !== 'open' && r.name !== 'inner');
      const want = snap.filter((r) => sampled.has((r.attrs as { i: number }).i)).map((r) => r.id);
      expect(sampled.size).toBeGreaterThan(0);
      expect(sampled.size).toBeLessThan(200);
      const got = readSpans(file).spans.filter((s) => s.name !== 'inner');
      expect(idsOf(got)).toEqual(sorted(want));
      t.close();
    });

    it('writes every span of a tracer that does not sample', async () => {
      const t = new Tracer({ backend });
      await workload(t, 10);
      const file = path.join(tmp, `all-${backend}.json`);
      const w = await t.dump(file);
      expect(w.spans).toBe(30);
      expect(idsOf(readSpans(file).spans)).toEqual(sorted(t.snapshot().map((r) => r.id)));
      t.close();
    });
  });
}
