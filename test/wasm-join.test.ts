// Workers joined to a js-backend tracer (lib/backends/wasm-join.ts): each
// records in a core instance of its own and hands its
// finished records to the owner's core, which imports them under the
// owner's budget. The counts are exact whatever the budget did: per worker
// timeline, produced is every span the worker ended and equals kept +
// released + overwritten + dropped, and kept is what the records show.
// (test/js-workers.test.ts holds the js backend's joining to the same
// behaviour as the native backend's.)
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';

import { Tracer, type TracerOptions } from '../lib/index';

const dist = path.join(__dirname, '..', 'dist', 'index.js');

/** A worker that joins, ends `n` spans (every third with attributes, nested under the previous), and exits. */
function recorder(token: string, name: string, n: number): Promise<number> {
  const worker = new Worker(
    `const { workerData } = require('node:worker_threads');
     const { Tracer } = require(workerData.dist);
     const t = Tracer.join(workerData.token, { threadName: workerData.name });
     for (let i = 0; i < workerData.n; i++) {
       if (i % 3 === 0) t.trace('w.attrs', () => i, { i, who: workerData.name });
       else t.trace('w.plain', () => i);
     }
     t.close();`,
    { eval: true, workerData: { dist, token, name, n } },
  );
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', resolve);
  });
}

describe('wasm engine: joined workers under the owner budget', () => {
  const live: Tracer[] = [];
  afterEach(() => {
    for (const t of live.splice(0)) t.close();
  });
  const make = (options: TracerOptions): Tracer => {
    const t = new Tracer({ ...options, backend: 'js' });
    live.push(t);
    return t;
  };

  /** Three workers of `n` spans each; their timelines' counts, checked exact. */
  async function run(t: Tracer, n: number): Promise<Array<{ kept: number; overwritten: number; dropped: number }>> {
    const token = t.share();
    t.trace('main.before', () => 0);
    const names = ['w0', 'w1', 'w2'];
    const codes = await Promise.all(names.map((name) => recorder(token, name, n)));
    expect(codes).toEqual([0, 0, 0]);
    await t.settle({ timeoutMs: 20_000 });
    const counts = t.counts();
    const records = t.snapshot();
    const out = [];
    for (const name of names) {
      const tl = counts.timelines.filter((x) => x.name === name);
      expect(tl, `one timeline named ${name}`).toHaveLength(1);
      const c = tl[0];
      expect(c.produced, `${name}: every span it ended`).toBe(n);
      expect(c.kept + c.released + c.overwritten + c.dropped).toBe(c.produced);
      expect(records.filter((r) => r.timeline === c.id)).toHaveLength(c.kept);
      expect(t.timelines().find((x) => x.id === c.id)).toMatchObject({ name, kind: 'js', exited: true });
      out.push(c);
    }
    expect(counts.produced).toBe(3 * n + 1);
    expect(counts.kept + counts.released + counts.overwritten + counts.dropped).toBe(counts.produced);
    expect(t.lostSpans).toBe(0);
    return out;
  }

  it('keeps every span of several workers when the budget holds them, with their attributes', async () => {
    const t = make({});
    const n = 3000;
    const per = await run(t, n);
    for (const c of per) expect([c.kept, c.overwritten, c.dropped]).toEqual([n, 0, 0]);
    const recs = t.snapshot();
    const attrs = recs.filter((r) => r.name === 'w.attrs' && r.timelineName === 'w1');
    expect(attrs).toHaveLength(n / 3);
    expect(attrs.map((r) => r.attrs?.i).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: n / 3 }, (_, k) => 3 * k));
    expect(new Set(attrs.map((r) => r.attrs?.who))).toEqual(new Set(['w1']));
    for (const r of recs) expect(Math.floor(r.id / 2 ** 32)).toBe(r.timeline);
  });

  it('drops and counts, exactly, what a full budget refuses under the drop policy', async () => {
    const t = make({ memoryLimit: 1 << 20, onFull: 'drop' });
    const per = await run(t, 20_000);
    const dropped = per.reduce((s, c) => s + c.dropped, 0);
    expect(dropped).toBeGreaterThan(0);
    for (const c of per) expect(c.overwritten).toBe(0);
  });

  it('overwrites and counts, exactly, the oldest records under the overwrite policy', async () => {
    const t = make({ memoryLimit: 1 << 20, onFull: 'overwrite' });
    const per = await run(t, 20_000);
    const lost = per.reduce((s, c) => s + c.overwritten + c.dropped, 0);
    expect(lost).toBeGreaterThan(0);
    expect(per.reduce((s, c) => s + c.overwritten, 0)).toBeGreaterThan(0);
  });
});
