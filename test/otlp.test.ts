// OTLP export end to end: a child process records spans and exports them to
// a loopback receiver that decodes every request with the vendored upstream
// schema (test/support/otlp-receiver.ts). Each scenario ends with
// sent + dropped + rejected = produced and no span received twice. Nothing waits on a
// clock: the receiver's behaviour is keyed to the request number, and the
// "down at start" receiver comes up when the child says it has retried.
import { spawn } from 'node:child_process';
import * as path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { Tracer } from '../lib';
import { otlpConfig } from '../lib/otlp/otlp-config';
import { freePort, Receiver, type Answer, type ReceivedSpan } from './support/otlp-receiver';
import { cleanEnv } from './support/packed';
import { tracerFactory } from './support/tracers';

const dist = path.join(__dirname, '..', 'dist', 'index.js');

interface ChildConfig {
  tracer?: Record<string, unknown>;
  export: Record<string, unknown>;
  trees: number;
  asyncSpans?: number;
  /**
   * Trees under a remote parent with tracestate v=<i> (withContext): a root,
   * a child, and an async span begun under the root that ends only after the
   * exporter has sent the root.
   */
  remote?: number;
  /** After every `pace` trees, wait until the exporter has sent all spans so far. */
  pace?: number;
  /**
   * A root, then a span left open across an export read with 3 children
   * ended under it: the read sends the root and holds the children back
   * until their parent comes.
   */
  heldBack?: boolean;
  /** Report the W3C ids the tracer's own FrozenView derives for its records, by name/i/j. */
  ids?: boolean;
  /** Print MARK once the exporter has retried at least once. */
  markAfterRetry?: boolean;
  /** No shutdown(): the process just ends (the exporter's exit hooks send what is left). */
  exitOnly?: boolean;
  /** ... by process.exit(). */
  exitCall?: boolean;
  /** No shutdown(): the process sends itself this signal (and prints nothing). */
  exitSignal?: 'SIGINT' | 'SIGTERM';
}

interface RecordOut {
  name: string;
  start: number;
  end: number;
  id: number;
  parent: number;
  error: boolean;
  attrs?: { i: number; j: number };
}

interface ChildOut {
  counts: {
    produced: number;
    kept: number;
    released: number;
    overwritten: number;
    dropped: number;
    otlp: { sent: number; dropped: number; rejected: number; inFlight: number; requests: number; retries: number; faultyResponses: number };
  };
  records: RecordOut[];
  rssGrowth: number;
  timeOrigin: number;
  /** The class of the backend the tracer records on (WasmBackend: the js backend). */
  engine?: string;
  /** name/i/j -> [trace id, span id, parent span id] (hex; '' for no parent). */
  ids?: Record<string, [string, string, string]>;
}

const script = (cfg: ChildConfig): string => `
const { Tracer } = require(${JSON.stringify(dist)});
const { internals } = require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'tracer', 'internal.js'))});
const cfg = ${JSON.stringify(cfg)};
(async () => {
  const t = new Tracer(cfg.tracer);
  const engine = t[internals]().backend.constructor.name;  // before shutdown() closes it
  t.exportOtlp(cfg.export);
  // The growth counts what is retained, not the loop's garbage (200k Errors with stacks) that a
  // collector has not reached yet: when that is reached depends on the V8 version's heap sizing.
  globalThis.gc?.();
  const rss = process.memoryUsage().rss;
  for (let i = 0; i < cfg.trees; i++) {
    t.begin('req', { i, j: 0 });
    t.trace('db', () => 0, { i, j: 1 });
    try { t.trace('fail', () => { throw new Error('x'); }, { i, j: 2 }); } catch {}
    t.end();
    if (cfg.pace && (i + 1) % cfg.pace === 0) {
      while (t.counts().otlp.sent < t.counts().produced) await new Promise((r) => setTimeout(r, 2));
    }
  }
  if (cfg.heldBack) {
    t.trace('first', () => 0, { i: 0, j: 7 });
    t.begin('outer', { i: 0, j: 8 });
    for (let k = 0; k < 3; k++) t.trace('inner', () => 0, { i: k, j: 9 });
    while (t.counts().otlp.sent < 1) await new Promise((r) => setTimeout(r, 2));
    t.end();
  }
  for (let i = 0; i < (cfg.remote ?? 0); i++) {
    const ctx = t.extract({ traceparent: '00-' + (i + 1).toString(16).padStart(32, '0') + '-' + 'ab'.repeat(8) + '-01', tracestate: 'v=' + i });
    let release;
    const later = new Promise((r) => (release = r));
    let pending;
    t.withContext(ctx, () => {
      t.begin('remote.req', { i, j: 4 });
      t.trace('remote.db', () => 0, { i, j: 5 });
      pending = t.traceAsync('remote.io', later, { track: 'net', attrs: { i, j: 6 } });
      t.end();
    });
    while (t.counts().otlp.sent < t.counts().produced) await new Promise((r) => setTimeout(r, 2));
    release();
    await pending;
  }
  for (let i = 0; i < (cfg.asyncSpans ?? 0); i++) {
    await t.traceAsync('io', Promise.resolve(), { track: 'net', attrs: { i, j: 3 } });
  }
  if (cfg.markAfterRetry) {
    while (t.counts().otlp.retries < 1) await new Promise((r) => setTimeout(r, 5));
    console.log('MARK');
  }
  if (cfg.exitSignal) {
    setInterval(() => {}, 1000);
    process.kill(process.pid, cfg.exitSignal);
    return;
  }
  if (cfg.exitOnly) {
    process.on('exit', () => console.log('RESULT:' + JSON.stringify({ counts: t.counts(), records: [], rssGrowth: 0, timeOrigin: 0 })));
    if (cfg.exitCall) process.exit(0);
    return;
  }
  let ids;
  if (cfg.ids) {
    // Before the export reads: its reads leave the records to the budget.
    const view = t[internals]().backend.freeze();
    const snap = view.read(0, view.count);
    const w = view.spanIds();
    const attrs = new Map(snap.attrs);
    const hex = (v, n) => v.toString(16).padStart(n, '0');
    ids = {};
    for (let k = 0; k < snap.count; k++) {
      const a = JSON.parse(attrs.get(k) ?? '{}');
      ids[snap.names[snap.fields[6 * k]] + '/' + a.i + '/' + a.j] = [hex(w[5 * k], 16) + hex(w[5 * k + 1], 16), hex(w[5 * k + 2], 16), w[5 * k + 3] === 0n ? '' : hex(w[5 * k + 3], 16)];
    }
  }
  await t.shutdown();
  globalThis.gc?.();
  const rssGrowth = process.memoryUsage().rss - rss;
  const records = cfg.trees <= 10000 ? t.snapshot().map((r) => ({ name: r.name, start: r.start, end: r.end, id: r.id, parent: r.parent, error: r.error, attrs: r.attrs })) : [];
  console.log('RESULT:' + JSON.stringify({ counts: t.counts(), records, rssGrowth, timeOrigin: performance.timeOrigin, ids, engine }));
})();
`;

/**
 * Runs the child; `onMark` runs when it prints MARK. `base`: the environment
 * `env` adds to (cleanEnv() for a child whose RSS is measured: the regular
 * addon, never a sanitizer run's build and preloaded runtime, whose
 * quarantine and shadow memory are RSS the bound does not cover).
 */
function runChild(
  cfg: ChildConfig,
  env: Record<string, string> = {},
  onMark?: () => void,
  base: NodeJS.ProcessEnv = process.env,
): Promise<ChildOut> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['--expose-gc', '-e', script(cfg)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...base, ...env } });
    let out = '';
    let err = '';
    let marked = false;
    c.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!marked && out.includes('MARK')) {
        marked = true;
        onMark?.();
      }
    });
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('error', reject);
    c.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT:'));
      if (code !== 0 || line === undefined) {
        reject(new Error(`child exited ${String(code)}\n${out}\n${err}`));
        return;
      }
      resolve(JSON.parse(line.slice('RESULT:'.length)) as ChildOut);
    });
  });
}

const receivers: Receiver[] = [];
async function receiver(answer?: (n: number) => Answer, port?: number): Promise<[Receiver, string]> {
  const r = new Receiver(answer);
  receivers.push(r);
  const p = await r.listen(port);
  return [r, `http://127.0.0.1:${String(p)}/v1/traces`];
}
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const key = (name: string, attrs: { i?: unknown; j?: unknown } | undefined): string => `${name}/${String(attrs?.i)}/${String(attrs?.j)}`;

// sent + dropped + rejected = produced, and each span at most once.
function checkAccounting(out: ChildOut, spans: ReceivedSpan[]): void {
  const o = out.counts.otlp;
  expect(o.sent + o.dropped + o.rejected).toBe(out.counts.produced);
  expect(o.inFlight).toBe(0);
  expect(spans.length).toBe(o.sent);
  expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
}

const factories = { native: tracerFactory('native'), js: tracerFactory('js') };
const makeTracer = (row: 'native' | 'js'): Tracer => factories[row]();

const fast = { retryInitialDelayMs: 10, maxRetryDelayMs: 50, scheduledDelayMs: 20 };

// Both recording backends export through the same worker and the same core
// encoder (the js backend's through the WebAssembly build); the js backend
// reads through the core's export cursor.
for (const row of ['native', 'js'] as const) describe(`OTLP export (${row} backend)`, () => {
  const withBackend = (cfg: ChildConfig): ChildConfig => ({ ...cfg, tracer: { ...cfg.tracer, backend: row } });
  const run = async (cfg: ChildConfig, env: Record<string, string> = {}, onMark?: () => void, base?: NodeJS.ProcessEnv): Promise<ChildOut> => {
    const out = await runChild(withBackend(cfg), env, onMark, base ?? process.env);
    if (!cfg.exitOnly) expect(out.engine).toBe(row === 'js' ? 'WasmBackend' : 'NativeBackend');
    return out;
  };

  it('every span arrives exactly once with its ids, parents, times, attributes and status', async () => {
    const [r, url] = await receiver();
    const out = await run(
      { export: { endpoint: url, maxBatchSize: 100, ...fast }, trees: 2000, asyncSpans: 50, ids: true },
      { OTEL_SERVICE_NAME: 'checkout', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test,team=a%2Cb' },
    );
    const spans = r.spans();
    checkAccounting(out, spans);
    expect(out.counts.otlp.sent).toBe(2000 * 3 + 50);
    expect(out.counts.otlp.dropped).toBe(0);
    // Batching by size.
    for (const req of r.accepted) expect(req.spans.length).toBeLessThanOrEqual(100);
    expect(r.accepted.length).toBeGreaterThanOrEqual(61);
    expect(r.accepted[0]?.resource).toMatchObject({ 'service.name': 'checkout', 'deployment.environment': 'test', team: 'a,b', 'telemetry.sdk.name': 'hotspan' });
    expect(r.accepted[0]?.scope.name).toBe('hotspan');

    const byKey = new Map(spans.map((s) => [key(s.name, s.attrs as { i: unknown; j: unknown }), s]));
    const byId = new Map(out.records.map((rec) => [rec.id, rec]));
    expect(out.records.length).toBe(spans.length);
    const originNs = BigInt(Math.round(out.timeOrigin * 1e6));
    for (const rec of out.records) {
      const s = byKey.get(key(rec.name, rec.attrs));
      expect(s, key(rec.name, rec.attrs)).toBeDefined();
      if (s === undefined) continue;
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(s.kind).toBe(1);
      expect(s.statusCode).toBe(rec.error ? 2 : 0);
      // ns since the epoch: the performance.now() axis plus timeOrigin (the two clocks read a moment apart).
      const start = originNs + BigInt(Math.round(rec.start * 1e6));
      expect(Number(s.start - start) / 1e6).toBeCloseTo(0, -1);  // within 5 ms
      expect(Number(s.end - s.start) / 1e6).toBeCloseTo(rec.end - rec.start, 3);
      const parent = rec.parent === 0 ? undefined : byId.get(rec.parent);
      if (parent === undefined) {
        expect(s.parentSpanId).toBe('');
      } else {
        const p = byKey.get(key(parent.name, parent.attrs));
        expect(s.parentSpanId).toBe(p?.spanId);
        expect(s.traceId, `${key(rec.name, rec.attrs)} under ${key(parent.name, parent.attrs)}`).toBe(p?.traceId);
      }
    }
    // The ids the tracer itself derives (its FrozenView: inject(), the OTel adapter), span for span.
    expect(Object.keys(out.ids ?? {}).length).toBe(spans.length);
    for (const s of spans) {
      expect([s.traceId, s.spanId, s.parentSpanId], key(s.name, s.attrs as { i: unknown; j: unknown })).toEqual(out.ids?.[key(s.name, s.attrs as { i: unknown; j: unknown })]);
    }
    // A tree shares one trace id, distinct from other trees'.
    expect(new Set(spans.filter((s) => s.name === 'req').map((s) => s.traceId)).size).toBe(2000);
  });

  for (const encoding of ['http/protobuf', 'http/json']) {
    it(`a remote parent's tracestate is on every span of its trace (${encoding}), also an async one that ends after its root was sent`, async () => {
      const [r, url] = await receiver();
      const out = await run({ export: { endpoint: url, protocol: encoding, ...fast }, trees: 20, remote: 5 });
      const spans = r.spans();
      checkAccounting(out, spans);
      expect(spans.length).toBe(20 * 3 + 5 * 3);
      for (const s of spans) {
        const i = (s.attrs as { i: number }).i;
        if (s.name.startsWith('remote.')) {
          expect(s.traceState, `${s.name} ${String(i)}`).toBe(`v=${String(i)}`);
          expect(s.traceId).toBe((i + 1).toString(16).padStart(32, '0'));
        } else {
          expect(s.traceState).toBe('');
        }
      }
      // The async span was sent in a request after its root's.
      for (let i = 0; i < 5; i++) {
        const at = (name: string) => r.accepted.findIndex((q) => q.spans.some((s) => s.name === name && (s.attrs as { i: number }).i === i));
        expect(at('remote.io')).toBeGreaterThan(at('remote.req'));
      }
    });
  }

  it('children read while their parent is still open are held back until it comes: its trace and parent id, once each', async () => {
    const [r, url] = await receiver();
    const out = await run({ export: { endpoint: url, ...fast }, trees: 0, heldBack: true });
    const spans = r.spans();
    checkAccounting(out, spans);
    expect(spans.length).toBe(5);
    const outer = spans.find((s) => s.name === 'outer');
    const first = spans.find((s) => s.name === 'first');
    const inner = spans.filter((s) => s.name === 'inner');
    expect(inner.length).toBe(3);
    for (const s of inner) {
      expect(s.parentSpanId).toBe(outer?.spanId);
      expect(s.traceId).toBe(outer?.traceId);
    }
    expect(first?.traceId).not.toBe(outer?.traceId);
    // The root went in the read the children were held back from.
    const at = (name: string) => r.accepted.findIndex((q) => q.spans.some((s) => s.name === name));
    expect(at('first')).toBeLessThan(at('inner'));
  });

  it('OTLP/JSON with gzip and headers, configured by the OTEL_EXPORTER_OTLP_* variables', async () => {
    const [r, url] = await receiver();
    const out = await run(
      { export: fast, trees: 500 },
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: url.replace('/v1/traces', ''),
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=s3cr%20t',
      },
    );
    checkAccounting(out, r.spans());
    expect(out.counts.otlp.sent).toBe(1500);
    expect(r.headers[0]).toMatchObject({ 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-api-key': 's3cr t' });
    const fail = r.spans().find((s) => s.name === 'fail');
    expect(fail?.statusCode).toBe(2);
    expect(fail?.attrs).toEqual({ i: fail?.attrs.i, j: 2 });
  });

  it('a receiver answering 503 (and 429 with Retry-After) to its first requests gets every span once', async () => {
    const [r, url] = await receiver((n) => (n < 3 ? { status: 503 } : n === 3 ? { status: 429, retryAfter: '0' } : {}));
    const out = await run({ export: { endpoint: url, ...fast }, trees: 1000 });
    checkAccounting(out, r.spans());
    expect(out.counts.otlp.sent).toBe(3000);
    expect(out.counts.otlp.retries).toBeGreaterThanOrEqual(4);
  });

  it('a receiver down at start gets every span once it comes up', async () => {
    const port = await freePort();
    const rcv = new Receiver();
    receivers.push(rcv);
    let up: Promise<number> | undefined;
    const out = await run({ export: { endpoint: `http://127.0.0.1:${String(port)}/v1/traces`, ...fast }, trees: 1000, markAfterRetry: true }, {}, () => {
      up = rcv.listen(port);
    });
    await up;
    checkAccounting(out, rcv.spans());
    expect(out.counts.otlp.sent).toBe(3000);
  });

  it('a slow receiver: requests past the timeout are retried, every span arrives once', async () => {
    const [r, url] = await receiver((n) => (n < 2 ? { hang: true } : {}));
    // 5000 ms: the whole request (headers and body) must fit in it; on a loaded machine (load 20-30 on two
    // cores) 200 and 1500 ms timed out requests the receiver had answered, which were then sent twice.
    const out = await run({ export: { endpoint: url, timeoutMs: 5000, ...fast }, trees: 1000 });
    checkAccounting(out, r.spans());
    expect(out.counts.otlp.sent).toBe(3000);
    expect(r.requests).toBeGreaterThanOrEqual(3);
  });

  for (const onFull of ['overwrite', 'drop'] as const) {
    it(`a receiver that never recovers: spans wait in the budget, the rest are dropped and counted, memory stays bounded (${onFull})`, async () => {
      const [r, url] = await receiver(() => ({ status: 503 }));
      const out = await run({
        tracer: { memoryLimit: 1 << 20, onFull },
        export: { endpoint: url, shutdownTimeoutMs: 300, ...fast },
        trees: 200_000,
      }, {}, undefined, cleanEnv());
      checkAccounting(out, r.spans());
      expect(out.counts.produced).toBe(600_000);
      expect(out.counts.otlp.sent).toBe(0);
      expect(out.counts.otlp.dropped).toBe(600_000);
      expect(onFull === 'drop' ? out.counts.dropped : out.counts.overwritten).toBeGreaterThan(0);
      expect(out.rssGrowth).toBeLessThan(128 * 1024 * 1024);
    });
  }

  it('exported chunks go back to the pool: a long export under a small budget keeps every span when the receiver keeps up', async () => {
    const [r, url] = await receiver();
    const out = await run({
      tracer: { memoryLimit: 1 << 20, onFull: 'drop' },
      export: { endpoint: url, ...fast },
      trees: 60_000,
      pace: 1000,
    }, {}, undefined, cleanEnv());
    checkAccounting(out, r.spans());
    expect(out.counts.produced).toBe(180_000);
    expect(out.counts.dropped).toBe(0);
    expect(out.counts.overwritten).toBe(0);
    expect(out.counts.otlp.sent).toBe(180_000);
    // All but what the budget still holds went back to the pool.
    expect(out.counts.released).toBeGreaterThan(180_000 - (1 << 20) / 16);
    expect(out.counts.kept + out.counts.released).toBe(180_000);
    expect(out.rssGrowth).toBeLessThan(128 * 1024 * 1024);
  });

  it('a process that ends on its own without shutdown() sends what is left first', async () => {
    const [r, url] = await receiver((n) => (n === 0 ? { status: 503 } : {}));
    const out = await run({ export: { endpoint: url, ...fast, scheduledDelayMs: 60_000 }, trees: 1000, exitOnly: true });
    checkAccounting(out, r.spans());
    expect(out.counts.otlp.sent).toBe(3000);
  });

  it('process.exit() without shutdown() sends what is left, blocking until the worker is done', async () => {
    const [r, url] = await receiver((n) => (n === 0 ? { status: 503 } : {}));
    const out = await run({ export: { endpoint: url, ...fast, scheduledDelayMs: 60_000 }, trees: 1000, exitOnly: true, exitCall: true });
    checkAccounting(out, r.spans());
    expect(out.counts.otlp.sent).toBe(3000);
  });

  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    it(`${sig} without shutdown() sends what is left, then the process dies of it`, async () => {
      const [r, url] = await receiver((n) => (n === 0 ? { status: 503 } : {}));
      const c = spawn(process.execPath, ['-e', script(withBackend({ export: { endpoint: url, ...fast, scheduledDelayMs: 60_000 }, trees: 1000, exitSignal: sig }))], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: process.env,
      });
      let err = '';
      c.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const signal = await new Promise<NodeJS.Signals | null>((resolve) => c.on('exit', (_code, s) => resolve(s)));
      expect(err).toBe('');
      expect(signal).toBe(sig);
      const spans = r.spans();
      expect(spans.length).toBe(3000);
      expect(new Set(spans.map((s) => s.spanId)).size).toBe(3000);
    });
  }

  it('partial success: rejected spans are read from the response and counted as rejected, apart from dropped', async () => {
    const [r, url] = await receiver((n) => (n === 0 ? { rejected: 7 } : {}));
    const out = await run({ export: { endpoint: url, ...fast }, trees: 100 });
    expect(out.counts.otlp.rejected).toBe(7);
    expect(out.counts.otlp.dropped).toBe(0);
    expect(out.counts.otlp.faultyResponses).toBe(0);
    expect(out.counts.otlp.sent).toBe(300 - 7);
    expect(r.spans().length).toBe(300);  // the receiver had them all; it said it rejected 7
  });

  it("reads new spans every OTEL_BSP_SCHEDULE_DELAY ms, by default the specification's 5000 (the SDK's batch processor's)", () => {
    expect(otlpConfig(undefined, {}, '0').scheduledDelayMs).toBe(5000);
    expect(otlpConfig(undefined, { OTEL_BSP_SCHEDULE_DELAY: '250' }, '0').scheduledDelayMs).toBe(250);
    expect(otlpConfig({ scheduledDelayMs: 40 }, { OTEL_BSP_SCHEDULE_DELAY: '250' }, '0').scheduledDelayMs).toBe(40);
  });

  it('bad options throw naming the value; the noop backend says it cannot export', async () => {
    const t = makeTracer(row);
    try {
      expect(() => t.exportOtlp({ protocol: 'grpc' as 'http/json' })).toThrow(/protocol must be 'http\/protobuf' or 'http\/json', got string "grpc"/);
      expect(() => t.exportOtlp({ timeoutMs: -1 })).toThrow(RangeError);
      expect(() => t.exportOtlp({ endpoint: 'ftp://x' })).toThrow(/endpoint must be an http\(s\) URL/);
      expect(() => t.exportOtlp({ bogus: 1 } as never)).toThrow(TypeError);
      // A refused call leaves no export read open: a good one after it starts.
      const [, url] = await receiver();
      t.exportOtlp({ endpoint: url, shutdownTimeoutMs: 1000 });
      expect(() => t.exportOtlp()).toThrow(/already called/);
      t.trace('after', () => 0);
      await t.shutdown();
      expect(t.counts().otlp?.sent).toBe(1);
    } finally {
      t.close();
    }
    const noop = new Tracer({ backend: 'noop' });
    expect(() => noop.exportOtlp()).toThrow(/needs the native or js backend; this tracer runs the 'noop' backend/);
    noop.close();
  });
});
