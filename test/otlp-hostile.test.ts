// OTLP export to hostile collectors on loopback (test/support/otlp-receiver.ts):
// an endless or a crawling 200 body, every kind of Retry-After, partial
// successes out of range, a closed port and a collector that never answers.
// After each, in a child process: sent + dropped + rejected = produced,
// nothing in flight, nothing on stderr, and shutdown() returned by itself
// (its worker finished; the exporter's fallback would cut it only at
// shutdownTimeoutMs + 1000). Nothing waits on a clock: the child waits for
// counts, the receiver's behaviour is keyed to the request number.
import { spawn } from 'node:child_process';
import * as path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { MAX_RESPONSE_BYTES } from '../lib/otlp/otlp-response';
import { freePort, Receiver, type Answer } from './support/otlp-receiver';
import { cleanEnv } from './support/packed';

const dist = path.join(__dirname, '..', 'dist', 'index.js');

interface Hostile {
  backend: 'native' | 'js';
  export: Record<string, unknown>;
  spans: number;
  memoryLimit?: number;
  /** Before shutdown(), wait until the exporter has retried this often. */
  retries?: number;
  /** Before shutdown(), wait until every span is settled (before any stop could cut a request). */
  settle?: boolean;
}

interface Out {
  counts: {
    produced: number;
    otlp: { sent: number; dropped: number; rejected: number; inFlight: number; requests: number; retries: number; faultyResponses: number };
  };
  shutdownMs: number;
  stderr: string;
}

const script = (cfg: Hostile): string => `
const { Tracer } = require(${JSON.stringify(dist)});
const cfg = ${JSON.stringify(cfg)};
(async () => {
  const t = new Tracer({ backend: cfg.backend, ...(cfg.memoryLimit ? { memoryLimit: cfg.memoryLimit } : {}) });
  t.exportOtlp(cfg.export);
  for (let i = 0; i < cfg.spans; i++) { t.begin('op'); t.end(); }
  while (t.counts().otlp.retries < (cfg.retries ?? 0)) await new Promise((r) => setTimeout(r, 5));
  const settled = () => { const o = t.counts().otlp; return o.sent + o.dropped + o.rejected === cfg.spans; };
  while (cfg.settle && !settled()) await new Promise((r) => setTimeout(r, 5));
  const at = performance.now();
  await t.shutdown();
  const shutdownMs = performance.now() - at;
  console.log('RESULT:' + JSON.stringify({ counts: t.counts(), shutdownMs }));
})();
`;

function runChild(cfg: Hostile): Promise<Out> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['-e', script(cfg)], { stdio: ['ignore', 'pipe', 'pipe'], env: cleanEnv() });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('error', reject);
    c.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT:'));
      if (code !== 0 || line === undefined) {
        reject(new Error(`child exited ${String(code)}\n${out}\n${err}`));
        return;
      }
      resolve({ ...(JSON.parse(line.slice('RESULT:'.length)) as Omit<Out, 'stderr'>), stderr: err });
    });
  });
}

const receivers: Receiver[] = [];
async function receiver(answer: (n: number) => Answer): Promise<[Receiver, string]> {
  const r = new Receiver(answer);
  receivers.push(r);
  const port = await r.listen();
  return [r, `http://127.0.0.1:${String(port)}/v1/traces`];
}
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const SHUTDOWN_MS = 1000;
// A loose bound on purpose: what shutdown() may take past its timeout is
// 10%, plus 1000 ms for the worker's last turn (counting what it abandons:
// a cursor walk of a few MB here, a few ms on an idle machine) and for two
// threads to be scheduled on a loaded one (this bound is checked with five
// runs at once on two busy cores). The exact check is the counts: the
// exporter's fallback cuts a worker that did not finish by itself, and
// then they do not add up.
const SHUTDOWN_BOUND_MS = SHUTDOWN_MS * 1.1 + 1000;

function settled(out: Out): void {
  const o = out.counts.otlp;
  expect(o.sent + o.dropped + o.rejected).toBe(out.counts.produced);
  expect(o.inFlight).toBe(0);
  expect(out.stderr).toBe('');
  expect(out.shutdownMs).toBeLessThan(SHUTDOWN_BOUND_MS);
}

const fast = { retryInitialDelayMs: 10, maxRetryDelayMs: 100, scheduledDelayMs: 20, maxBatchSize: 1000, shutdownTimeoutMs: SHUTDOWN_MS };

describe('OTLP export to a hostile collector', () => {
  it('a 200 with an endless body: at most 64 KiB read per response, the response counted faulty, its spans sent', async () => {
    const [r, url] = await receiver(() => ({ body: 'endless' }));
    const out = await runChild({ backend: 'native', export: { endpoint: url, ...fast }, spans: 3000, settle: true });
    settled(out);
    expect(out.counts.otlp.sent).toBe(3000);
    // Every batch settled on a faulty response; others timed out before their headers (a retry each).
    expect(out.counts.otlp.faultyResponses).toBe(out.counts.otlp.requests - out.counts.otlp.retries);
    expect(out.counts.otlp.faultyResponses).toBeGreaterThan(0);
    expect(r.hostileBytes.length).toBeLessThanOrEqual(out.counts.otlp.requests);
    // The receiver wrote what the client read plus what the loopback
    // socket's buffers took (a few MiB at most) before the client went.
    for (const b of r.hostileBytes) expect(b).toBeLessThan(MAX_RESPONSE_BYTES + 16 * 1024 * 1024);
  });

  it('a 200 whose body crawls (a byte per 50 ms): cut at timeoutMs from the request start, counted faulty', async () => {
    const [r, url] = await receiver(() => ({ body: 'slow' }));
    // Settled before shutdown(): the timeout, not the stop's deadline, ends each request.
    const out = await runChild({ backend: 'native', export: { endpoint: url, ...fast, timeoutMs: 300 }, spans: 3000, settle: true });
    settled(out);
    expect(out.counts.otlp.sent).toBe(3000);
    // Every batch settled on a faulty response; others timed out before their headers (a retry each).
    expect(out.counts.otlp.faultyResponses).toBe(out.counts.otlp.requests - out.counts.otlp.retries);
    expect(out.counts.otlp.faultyResponses).toBeGreaterThan(0);
    expect(r.hostileBytes.length).toBeGreaterThan(0);
  });

  for (const retryAfter of ['999999', '0', '-1', '9999999', 'Fri, 31 Dec 9999 23:59:59 GMT', 'Wed, 21 Oct 2015 07:28:00 GMT']) {
    it(`503 with Retry-After: ${retryAfter}, then 200: every span sent before shutdown(), no warning`, async () => {
      const [, url] = await receiver((n) => (n < 2 ? { status: 503, retryAfter } : {}));
      const out = await runChild({ backend: 'native', export: { endpoint: url, ...fast }, spans: 3000, settle: true });
      settled(out);
      expect(out.counts.otlp.sent).toBe(3000);
      expect(out.counts.otlp.retries).toBe(2);
    });
  }

  it('a stop wakes every retry paused on a long Retry-After: both batches dropped at the deadline', async () => {
    const [, url] = await receiver(() => ({ status: 503, retryAfter: '999999' }));
    const out = await runChild({ backend: 'native', export: { endpoint: url, ...fast, maxRetryDelayMs: 600_000 }, spans: 3000, retries: 2 });
    settled(out);
    expect(out.counts.otlp.sent).toBe(0);
    expect(out.counts.otlp.dropped).toBe(3000);
  });

  it('a JSON partial success with a negative rejectedSpans is faulty and changes no count', async () => {
    const [, url] = await receiver(() => ({ json: { partialSuccess: { rejectedSpans: -29_200_000 } } }));
    const out = await runChild({ backend: 'native', export: { endpoint: url, ...fast, protocol: 'http/json' }, spans: 3000, settle: true });
    settled(out);
    expect(out.counts.otlp).toMatchObject({ sent: 3000, dropped: 0, rejected: 0 });
    expect(out.counts.otlp.faultyResponses).toBe(out.counts.otlp.requests - out.counts.otlp.retries);
  });

  it('a protobuf partial success rejecting more spans than were sent is faulty', async () => {
    const [, url] = await receiver((n) => (n === 0 ? { rejected: 1_000_000 } : { rejected: 1 }));
    const out = await runChild({ backend: 'native', export: { endpoint: url, ...fast }, spans: 3000, settle: true });
    settled(out);
    expect(out.counts.otlp.faultyResponses).toBe(1);
    expect(out.counts.otlp.rejected).toBe(out.counts.otlp.requests - out.counts.otlp.retries - 1);
  });

  for (const backend of ['native', 'js'] as const) {
    it(`a closed port (${backend}): what waits is counted dropped at the deadline, not encoded`, async () => {
      const port = await freePort();
      const out = await runChild({
        backend,
        export: { endpoint: `http://127.0.0.1:${String(port)}/v1/traces`, ...fast, timeoutMs: 200 },
        spans: 600_000,
        memoryLimit: 32 * 1024 * 1024,
      });
      settled(out);
      expect(out.counts.produced).toBe(600_000);
      expect(out.counts.otlp.sent).toBe(0);
    });

    it(`a collector that accepts and never answers (${backend}): requests cut at the deadline, every span counted`, async () => {
      const [r, url] = await receiver(() => ({ hang: true }));
      const out = await runChild({
        backend,
        export: { endpoint: url, ...fast, timeoutMs: 10_000 },
        spans: 600_000,
        memoryLimit: 32 * 1024 * 1024,
      });
      settled(out);
      expect(out.counts.otlp.sent).toBe(0);
      expect(r.requests).toBeGreaterThanOrEqual(1);
    });
  }
});
