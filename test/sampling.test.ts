// Head sampling (docs/sampling.md): the `sample` option and the OTEL_TRACES_SAMPLER
// variables, the decision (OpenTelemetry's TraceIdRatioBased on the low 56
// bits of the trace id, parent-based on an incoming flag) as inject() writes
// it in one process and another, and the OTLP export sending only sampled
// traces, whole, to a loopback receiver, with the rest counted.
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

import { afterEach, describe, expect, it } from 'vitest';

import { Tracer, type TracerOptions } from '../lib';
import { Receiver, type ReceivedSpan } from './support/otlp-receiver';

const dist = path.join(__dirname, '..', 'dist', 'index.js');
const backends = ['native', 'js'] as const;
const rows = backends;
type Row = (typeof rows)[number];
const makeTracer = (row: Row | 'noop', options: TracerOptions): Tracer => new Tracer({ backend: row, ...options });

/** The rule, written out again from the specification: sampled iff R >= T, R the low 56 bits of the trace id. */
function expectedSampled(traceId: string, ratio: number): boolean {
  const r = BigInt('0x' + traceId.slice(18));
  const t = 2n ** 56n - BigInt(Math.round(ratio * 2 ** 56));
  return ratio > 0 && r >= t;
}

/** traceparent -> [trace id, flags]. */
function parse(tp: string): [string, number] {
  const m = /^00-([0-9a-f]{32})-[0-9a-f]{16}-([0-9a-f]{2})$/.exec(tp);
  if (m === null) throw new Error(`bad traceparent ${tp}`);
  return [m[1], Number.parseInt(m[2], 16)];
}

/** Runs `body` (JS, with `t` a Tracer of `options` and `out(x)` printing a result) in a fresh process. */
function child(options: Record<string, unknown>, body: string, env: Record<string, string> = {}, stdin = ''): { results: unknown[]; stderr: string } {
  const src = `
const { Tracer } = require(${JSON.stringify(dist)});
const input = ${JSON.stringify(stdin)};
const results = [];
const out = (x) => results.push(x);
const t = new Tracer(${JSON.stringify(options)});
${body}
t.close();
console.log('RESULT:' + JSON.stringify(results));`;
  const base = { ...process.env };
  delete base.OTEL_TRACES_SAMPLER;
  delete base.OTEL_TRACES_SAMPLER_ARG;
  const r = spawnSync(process.execPath, ['-e', src], { encoding: 'utf8', env: { ...base, ...env }, timeout: 120_000 });
  const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT:'));
  if (r.status !== 0 || line === undefined) throw new Error(`child failed (${String(r.status)}): ${r.stdout}\n${r.stderr}`);
  return { results: JSON.parse(line.slice(7)) as unknown[], stderr: r.stderr };
}

/** Roots that each inject their traceparent. */
const ROOTS = (n: number): string => `for (let i = 0; i < ${n}; i++) { t.begin('root'); out(t.inject({}).traceparent); t.end(); }`;

describe('sample option', () => {
  it('throws a TypeError or RangeError naming the bad value', () => {
    const bad: Array<[unknown, RegExp, ErrorConstructor]> = [
      [5, /sample must be an object.*5/, TypeError],
      [{ ratio: '0.5' }, /sample\.ratio must be a number from 0 to 1, got string "0\.5"/, TypeError],
      [{ ratio: 1.5 }, /sample\.ratio must be a number from 0 to 1, got number 1\.5/, RangeError],
      [{ ratio: -0.1 }, /sample\.ratio .* got number -0\.1/, RangeError],
      [{ ratio: Number.NaN }, /sample\.ratio .* got number NaN/, RangeError],
      [{ parentBased: 'yes' }, /sample\.parentBased must be a boolean, got string "yes"/, TypeError],
      [{ rate: 0.5 }, /unknown sample option "rate"/, RangeError],
    ];
    for (const [sample, message, type] of bad) {
      for (const backend of [...rows, 'noop'] as const) {
        let err: unknown;
        try {
          makeTracer(backend, { sample: sample as never }).close();
        } catch (e) {
          err = e;
        }
        expect(err, JSON.stringify(sample)).toBeInstanceOf(type);
        expect((err as Error).message).toMatch(message);
      }
    }
  });
});

for (const backend of rows) {
  describe(`head decision (${backend} backend)`, () => {
    const live: Tracer[] = [];
    afterEach(() => {
      for (const t of live.splice(0)) t.close();
    });
    const flagsOf = (sample: object, n: number): Array<[string, number]> => {
      const t = makeTracer(backend, { sample });
      live.push(t);
      const out: Array<[string, number]> = [];
      for (let i = 0; i < n; i++) {
        t.begin('root');
        t.trace('child', () => out.push(parse(t.inject<Record<string, string>>({}).traceparent)));
        t.end();
      }
      return out;
    };

    it('inject() writes the TraceIdRatioBased decision of each root', () => {
      for (const ratio of [0.5, 0.3, 0.01]) {
        const seen = flagsOf({ ratio }, 2000);
        for (const [id, flags] of seen) expect(flags === 1, `${id} at ${ratio}`).toBe(expectedSampled(id, ratio));
        const kept = seen.filter(([, f]) => f === 1).length;
        // A random salt per tracer: the count is binomial; these bounds are > 6 standard deviations wide.
        expect(kept).toBeGreaterThan(2000 * ratio - 6 * Math.sqrt(2000 * ratio) - 1);
        expect(kept).toBeLessThan(2000 * ratio + 6 * Math.sqrt(2000 * ratio) + 1);
      }
      expect(flagsOf({ ratio: 0 }, 200).every(([, f]) => f === 0)).toBe(true);
      expect(flagsOf({ ratio: 1 }, 200).every(([, f]) => f === 1)).toBe(true);
      expect(flagsOf({}, 200).every(([, f]) => f === 1)).toBe(true);
    });

    it('parent-based follows the flag of a context from extract(); not parent-based decides again', () => {
      const t = makeTracer(backend, { sample: { ratio: 0 } });
      const u = makeTracer(backend, { sample: { ratio: 0, parentBased: false } });
      live.push(t, u);
      const id = 'ab'.repeat(16);
      for (const flag of ['00', '01']) {
        const ctx = t.extract({ traceparent: `00-${id}-${'cd'.repeat(8)}-${flag}` });
        expect(ctx).toBeDefined();
        const under = (tracer: Tracer): number =>
          tracer.withContext(ctx!, () => tracer.trace('s', () => parse(tracer.inject<Record<string, string>>({}).traceparent)[1]));
        expect(under(t)).toBe(Number(flag));
        expect(under(u)).toBe(0);
      }
    });
  });
}

describe('two processes', () => {
  const sample = { ratio: 0.5, parentBased: false };
  for (const [a, b] of [['native', 'js'], ['js', 'native'], ['native', 'native']] as const) {
    it(`decide a trace id the same way (${a} then ${b})`, () => {
      const first = child({ backend: a, sample }, ROOTS(300)).results as string[];
      // The second process sees each trace under the opposite flag: ignored, not parent-based.
      const flipped = first.map((tp) => tp.slice(0, 53) + (tp.endsWith('01') ? '00' : '01'));
      const second = child(
        { backend: b, sample },
        `for (const tp of JSON.parse(input)) {
           const ctx = t.extract({ traceparent: tp });
           t.withContext(ctx, () => t.trace('server', () => out(t.inject({}).traceparent)));
         }`,
        {},
        JSON.stringify(flipped),
      ).results as string[];
      expect(second.length).toBe(first.length);
      let kept = 0;
      for (let i = 0; i < first.length; i++) {
        const [id1, f1] = parse(first[i]);
        const [id2, f2] = parse(second[i]);
        expect(id2).toBe(id1);
        expect(f2).toBe(f1);
        expect(f1 === 1).toBe(expectedSampled(id1, 0.5));
        kept += f1;
      }
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(first.length);
    });
  }

  it('parent-based: the second process follows the first one\'s flag through inject/extract', () => {
    for (const backend of backends) {
      const sent = [
        ...(child({ backend, sample: { ratio: 1 } }, ROOTS(3)).results as string[]),
        ...(child({ backend, sample: { ratio: 0 } }, ROOTS(3)).results as string[]),
      ];
      const follow = (env: Record<string, string>): number[] =>
        child(
          { backend },
          `for (const tp of JSON.parse(input)) t.withContext(t.extract({ traceparent: tp }), () => t.trace('s', () => out(t.inject({}).traceparent)));
           ${ROOTS(1)}`,
          env,
          JSON.stringify(sent),
        ).results.map((tp) => parse(tp as string)[1]);
      // parentbased_always_off: parents' flags, then its own root unsampled.
      expect(follow({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })).toEqual([1, 1, 1, 0, 0, 0, 0]);
      expect(follow({ OTEL_TRACES_SAMPLER: 'parentbased_always_on' })).toEqual([1, 1, 1, 0, 0, 0, 1]);
      expect(follow({ OTEL_TRACES_SAMPLER: 'always_off' })).toEqual([0, 0, 0, 0, 0, 0, 0]);
      expect(follow({ OTEL_TRACES_SAMPLER: 'always_on' })).toEqual([1, 1, 1, 1, 1, 1, 1]);
    }
  });
});

describe('OTEL_TRACES_SAMPLER', () => {
  const warnings = (stderr: string): string[] => stderr.split('\n').filter((l) => l.includes('HotspanWarning'));
  const flags = (env: Record<string, string>, options: Record<string, unknown> = {}): { flags: number[]; warnings: string[] } => {
    // Two tracers: the warning is given once a process.
    const r = child({ backend: 'js', ...options }, `${ROOTS(200)} const u = new Tracer(${JSON.stringify({ backend: 'js', ...options })}); u.close();`, env);
    return { flags: r.results.map((tp) => parse(tp as string)[1]), warnings: warnings(r.stderr) };
  };

  it('takes the standard values', () => {
    expect(flags({ OTEL_TRACES_SAMPLER: 'always_off' })).toEqual({ flags: Array(200).fill(0), warnings: [] });
    expect(flags({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })).toEqual({ flags: Array(200).fill(0), warnings: [] });
    expect(flags({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' })).toEqual({ flags: Array(200).fill(1), warnings: [] });
    const half = flags({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' });
    expect(half.warnings).toEqual([]);
    expect(half.flags.filter((f) => f === 1).length).toBeGreaterThan(30);
    expect(half.flags.filter((f) => f === 0).length).toBeGreaterThan(30);
    // The option wins over the environment.
    expect(flags({ OTEL_TRACES_SAMPLER: 'always_off' }, { sample: { ratio: 1 } }).flags).toEqual(Array(200).fill(1));
  });

  it('a bad value gives one warning naming it, and the default is kept', () => {
    const bad = flags({ OTEL_TRACES_SAMPLER: 'sometimes' });
    expect(bad.flags).toEqual(Array(200).fill(1));
    expect(bad.warnings.length).toBe(1);
    expect(bad.warnings[0]).toMatch(/OTEL_TRACES_SAMPLER must be one of .* got string "sometimes"; ignored, using the default \(parentbased_always_on\)/);
    for (const arg of ['1.5', 'abc', '-0.2', '']) {
      const r = flags({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: arg });
      expect(r.flags, arg).toEqual(Array(200).fill(1));
      if (arg === '') {
        expect(r.warnings).toEqual([]); // unset: the default ratio, 1
      } else {
        expect(r.warnings.length, arg).toBe(1);
        expect(r.warnings[0]).toContain(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got string "${arg}"`);
      }
    }
    // The argument of a sampler that takes none is not read.
    expect(flags({ OTEL_TRACES_SAMPLER: 'always_on', OTEL_TRACES_SAMPLER_ARG: 'junk' })).toEqual({ flags: Array(200).fill(1), warnings: [] });
  });
});

interface ExportOut {
  counts: { produced: number; otlp: { sent: number; dropped: number; rejected: number; sampledOut: number; inFlight: number } };
  traces: Array<[string, number]>;
  /** The class of the backend the tracer recorded on. */
  engine: string;
}

/**
 * A child that exports to `endpoint`: `trees` local trees (root 'req', its
 * children 'db' and 'fail' (an error), and 'io' on the track 'net', begun
 * under the root and ended after it), then one tree under each remote
 * traceparent; prints each tree's traceparent as inject() wrote it.
 */
function exportChild(backend: Row, sample: object, endpoint: string, trees: number, remote: string[]): Promise<ExportOut> {
  const src = `
const { Tracer } = require(${JSON.stringify(dist)});
const { internals } = require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'tracer', 'internal.js'))});
(async () => {
  const t = new Tracer(${JSON.stringify({ backend, sample })});
  const engine = t[internals]().backend.constructor.name;  // before shutdown() closes it
  t.enableAsyncContext();  // 'io' begun under 'req', on another track
  t.exportOtlp({ endpoint: ${JSON.stringify(endpoint)}, scheduledDelayMs: 20, maxBatchSize: 64 });
  const traces = [];
  const tree = (i) => {
    let release;
    const later = new Promise((r) => (release = r));
    t.begin('req', { i });
    traces.push(t.inject({}).traceparent);
    t.trace('db', () => 0, { i });
    try { t.trace('fail', () => { throw new Error('x'); }, { i }); } catch {}
    const io = t.traceAsync('io', later, { track: 'net', attrs: { i } });
    t.end();
    return { release, io };
  };
  for (let i = 0; i < ${trees}; i++) {
    const { release, io } = tree(i);
    if (i % 7 === 0) await new Promise((r) => setTimeout(r, 1));  // some reads fall between a root and its async child
    release();
    await io;
  }
  for (const [k, tp] of ${JSON.stringify(remote)}.entries()) {
    const { release, io } = t.withContext(t.extract({ traceparent: tp }), () => tree(${trees} + k));
    release();
    await io;
  }
  await t.shutdown();
  console.log('RESULT:' + JSON.stringify({ counts: t.counts(), traces: traces.map((tp) => [tp.slice(3, 35), Number.parseInt(tp.slice(53), 16)]), engine }));
})();`;
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['-e', src], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT:'));
      if (code !== 0 || line === undefined) reject(new Error(`child exited ${String(code)}\n${out}\n${err}`));
      else resolve(JSON.parse(line.slice(7)) as ExportOut);
    });
  });
}

for (const backend of rows) {
  describe(`OTLP export under sampling (${backend} backend)`, () => {
    const receivers: Receiver[] = [];
    afterEach(async () => {
      await Promise.all(receivers.splice(0).map((r) => r.close()));
    });

    it('sends the sampled traces whole and counts the rest: sent + sampledOut = produced', async () => {
      const r = new Receiver();
      receivers.push(r);
      const port = await r.listen();
      const remote = [`00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`, `00-${'3'.repeat(32)}-${'4'.repeat(16)}-00`];
      const out = await exportChild(backend, { ratio: 0.3 }, `http://127.0.0.1:${String(port)}/v1/traces`, 400, remote);
      expect(out.engine).toBe({ native: 'NativeBackend', js: 'WasmBackend' }[backend]);
      const o = out.counts.otlp;
      expect(o.dropped + o.rejected + o.inFlight).toBe(0);
      expect(o.sent + o.sampledOut).toBe(out.counts.produced);
      expect(out.counts.produced).toBe(4 * out.traces.length);

      // Local trees: the ratio rule; remote ones: their parent's flag.
      const local = out.traces.slice(0, 400);
      for (const [id, flags] of local) expect(flags === 1, id).toBe(expectedSampled(id, 0.3));
      expect(out.traces.slice(400)).toEqual([['1'.repeat(32), 1], ['3'.repeat(32), 0]]);
      const sampled = new Set(out.traces.filter(([, f]) => f === 1).map(([id]) => id));
      expect(sampled.size).toBeGreaterThan(60);
      expect(sampled.size).toBeLessThan(out.traces.length - 60);

      const spans = r.spans();
      expect(spans.length).toBe(o.sent);
      const byTrace = new Map<string, ReceivedSpan[]>();
      for (const s of spans) byTrace.set(s.traceId, [...(byTrace.get(s.traceId) ?? []), s]);
      expect(o.sampledOut).toBe(4 * (out.traces.length - sampled.size));
      expect(new Set(byTrace.keys())).toEqual(sampled);
      for (const [id, tree] of byTrace) {
        // Whole: the root, its two children and its async child, each once, linked to it.
        expect(tree.map((s) => s.name).sort(), id).toEqual(['db', 'fail', 'io', 'req']);
        const root = tree.find((s) => s.name === 'req')!;
        for (const s of tree) {
          expect(s.flags & 1).toBe(1);
          if (s !== root) expect(s.parentSpanId).toBe(root.spanId);
        }
      }
    });
  });
}

// Per tree in a joined worker: a root (its traceparent posted back), a child and a plain span under it.
const RECORDER = `
  const { workerData, parentPort } = require('node:worker_threads');
  const { Tracer } = require(workerData.dist);
  const t = Tracer.join(workerData.token, { threadName: 'w' + workerData.w });
  const roots = [];
  for (let i = 0; i < workerData.trees; i++) {
    roots.push(t.trace('w.root', () => {
      t.trace('w.child', () => 0, { i });
      t.trace('w.plain', () => 0, { i });
      return t.inject({}).traceparent;
    }, { i }));
    if (i % 50 === 49) t.flush();
  }
  t.close();
  parentPort.postMessage(roots);
`;

async function runWorker(workerData: Record<string, unknown>): Promise<string[]> {
  const w = new Worker(RECORDER, { eval: true, workerData: { dist, ...workerData } });
  const exited = new Promise((resolve) => w.once('exit', resolve));
  const got = await new Promise<string[]>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await exited;
  return got;
}

for (const backend of backends) {
  describe(`OTLP export under sampling with joined workers (${backend} backend)`, () => {
    it("workers' traces follow the owner's sampler; each sampled tree arrives whole, the rest counted", async () => {
      const r = new Receiver();
      const t = new Tracer({ backend, sample: { ratio: 0.3 } });
      try {
        const port = await r.listen();
        t.exportOtlp({ endpoint: `http://127.0.0.1:${String(port)}/v1/traces`, scheduledDelayMs: 5, maxBatchSize: 64 });
        const token = t.share();
        const roots = (await Promise.all([0, 1].map((w) => runWorker({ token, w, trees: 200 })))).flat();
        await t.settle();
        await t.shutdown();

        const c = t.counts();
        expect(c.produced).toBe(3 * roots.length);
        const o = c.otlp!;
        expect(o.dropped + o.rejected + o.inFlight).toBe(0);
        expect(o.sent + o.sampledOut).toBe(c.produced);
        const sampled = new Set<string>();
        for (const tp of roots) {
          const [id, flags] = parse(tp);
          expect(flags === 1, id).toBe(expectedSampled(id, 0.3));
          if (flags === 1) sampled.add(id);
        }
        expect(sampled.size).toBeGreaterThan(40);
        expect(sampled.size).toBeLessThan(roots.length - 40);
        expect(o.sampledOut).toBe(3 * (roots.length - sampled.size));
        const spans = r.spans();
        expect(spans.length).toBe(o.sent);
        const byTrace = new Map<string, string[]>();
        for (const s of spans) byTrace.set(s.traceId, [...(byTrace.get(s.traceId) ?? []), s.name]);
        expect(new Set(byTrace.keys())).toEqual(sampled);
        for (const names of byTrace.values()) expect(names.sort()).toEqual(['w.child', 'w.plain', 'w.root']);
      } finally {
        t.close();
        await r.close();
      }
    });
  });
}
