// Back-pressure on the js backend's joined workers (lib/backends/share-transport.ts):
// with the owner's thread blocked, a worker ships past the in-flight bound,
// so batches are refused. Every span the worker ended is then in exactly one
// place: kept, counted lost (tracer.lostSpans), or counted overwritten or
// dropped by the budget; never in two.
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';

import { MAX_IN_FLIGHT } from '../lib/backends/share-transport';
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

describe('joined worker past the in-flight bound (js)', () => {
  const make = tracerFactory('js');

  it('counts every refused span once: kept + lostSpans + overwritten + dropped = ended', async () => {
    const t = make();
    const n = 2 * MAX_IN_FLIGHT + 8192 * 3;
    const done = new SharedArrayBuffer(4);
    const w = new Worker(FLOODER, { eval: true, workerData: { dist, token: t.share(), n, done } });
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
    const kept = t.snapshot().filter((r) => r.name === 'w').length;
    const c = t.counts();
    expect(ended).toBe(n);
    expect(t.lostSpans).toBeGreaterThan(0); // the refusal happened
    expect(kept + t.lostSpans + c.overwritten + c.dropped).toBe(ended);
  });
});
