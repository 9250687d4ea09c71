// Back-pressure on the js backend's joined workers (lib/backends/share-transport.ts):
// with the owner's thread blocked, a worker ships past the in-flight bound,
// so batches are refused. Every span the worker ended is then in exactly one
// place: kept, counted lost (tracer.lostSpans), or counted overwritten or
// dropped by the budget; never in two.
import * as path from 'node:path';
import { BroadcastChannel, Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';

import { MAX_IN_FLIGHT, receiveOn, type BatchMessage } from '../lib/backends/share-transport';
import type { Tracer } from '../lib/index';
import { tracerFactory } from './support/tracers';

const dist = path.join(__dirname, '..', 'dist', 'index.js');

// Records `n` spans, shipping every 8192, then wakes the owner and reports.
const FLOODER = `
  const { workerData, parentPort } = require('node:worker_threads');
  const { Tracer } = require(workerData.dist);
  const t = Tracer.join(workerData.token, { threadName: 'flood' });
  const id = t.name('w');
  for (let i = 1; i <= workerData.n; i++) {
    t.begin(id);
    t.end();
    if (i % 8192 === 0) t.flush();
  }
  t.flush();
  const done = new Int32Array(workerData.done);
  Atomics.store(done, 0, 1);
  Atomics.notify(done, 0);
  t.close();
  parentPort.postMessage({ ended: workerData.n });
`;

// Starts the flooder on `t`'s token, keeps the owner's thread blocked until
// it has ended `n` spans, then waits for it to exit and for the tracer to settle.
async function flood(t: Tracer, token: string, n: number): Promise<number> {
  const done = new SharedArrayBuffer(4);
  const w = new Worker(FLOODER, { eval: true, workerData: { dist, token, n, done } });
  const exited = new Promise((resolve) => w.once('exit', resolve));
  const report = new Promise<{ ended: number }>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  // The owner's thread blocked: nothing is merged, so batches past the bound are refused.
  expect(Atomics.wait(new Int32Array(done), 0, 0, 120_000)).toBe('ok');
  const { ended } = await report;
  await exited;
  await t.settle();
  return ended;
}

describe('joined worker past the in-flight bound (js)', () => {
  const make = tracerFactory('js');

  it('counts every refused span once: kept + lostSpans + overwritten + dropped = ended', async () => {
    const t = make();
    const n = 2 * MAX_IN_FLIGHT + 8192 * 3;
    const ended = await flood(t, t.share(), n);
    const kept = t.snapshot().filter((r) => r.name === 'w').length;
    const c = t.counts();
    expect(ended).toBe(n);
    expect(t.lostSpans).toBeGreaterThan(0); // the refusal happened
    expect(kept + t.lostSpans + c.overwritten + c.dropped).toBe(ended);
  });

  it('posts a refused batch without its records: a few bytes, not the flood', async () => {
    const t = make();
    const token = t.share();
    // A second listener on the token's channel sees every batch the worker posts.
    const seen = new BroadcastChannel(token);
    const posted: unknown[] = [];
    seen.onmessage = (event) => posted.push((event as MessageEvent).data);
    const n = 2 * MAX_IN_FLIGHT + 8192 * 3;
    try {
      await flood(t, token, n);
      // Every post happened before the flooder exited: what was not delivered yet is still queued.
      for (let m = receiveOn(seen); m !== undefined; m = receiveOn(seen)) posted.push(m.message);
      // A refused batch is posted cut (JoinSource.refuse): no record, a few bytes.
      let carried = 0;
      let cut = 0;
      for (const m of posted) {
        const b = m as Partial<BatchMessage>;
        if (b.t !== 'batch') continue;
        if ((b.count ?? 0) > 0) {
          carried += b.count ?? 0;
          continue;
        }
        cut += 1;
        // The header, the names (just 'w' at most) and an empty section list.
        expect(b.core?.byteLength).toBeLessThan(64);
      }
      expect(t.lostSpans).toBeGreaterThan(0); // the refusal happened
      expect(cut).toBeGreaterThan(0);
      // A refused batch's records were counted lost, not posted too: each span ended is in one of the two.
      expect(carried + t.lostSpans).toBe(n);
      expect(carried).toBeGreaterThan(0);
      // Still every span in one place.
      const c = t.counts();
      expect(t.snapshot().filter((r) => r.name === 'w').length + t.lostSpans + c.overwritten + c.dropped).toBe(n);
    } finally {
      seen.close();
    }
  });
});
