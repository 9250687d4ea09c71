// Tail keep (docs/sampling.md): `sample.keep` and HOTSPAN_KEEP_*, acted on by
// the OTLP export. At ratio 0 the head decision drops every trace; a trace
// whose root was slow, or with a span flagged error, still reaches a loopback
// receiver whole (spans on the main timeline and two tracks, some ended
// before the root, some after), the others are counted in sampledOut, and a
// root that never ends is decided by the head rule after maxWaitMs, counted
// in keepTimedOut.
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { Tracer } from '../lib';
import { Receiver, type ReceivedSpan } from './support/otlp-receiver';

const dist = path.join(__dirname, '..', 'dist', 'index.js');
const rows = ['native', 'js'] as const;
const ENGINES = { native: 'NativeBackend', js: 'WasmBackend' } as const;

interface KeepOut {
  counts: { produced: number; otlp: { sent: number; dropped: number; rejected: number; sampledOut: number; keepTimedOut: number; inFlight: number } };
  /**
   * [kind, trace id, lo, hi] of each tree: its trace id as inject() wrote it,
   * and bounds on its root's duration in ms (lo measured inside begin/end, hi outside).
   */
  trees: Array<[string, string, number, number]>;
  stuck: string;
  /** The class of the backend the tracer recorded on. */
  engine: string;
}

/**
 * A child exporting to `endpoint` at ratio 0 with `keep`: `n` trees of each
 * kind, interleaved. 'fast': root 'req', 'db', 'io' (track 'net', ended after
 * the root). 'slow': root 'slow' busy for `slowMs`, 'db', 'io.before' (track
 * 'net', ended before the root), 'io.after' (track 'net2', ended after it).
 * 'error': as 'fast' with a throwing 'fail' too. Last a root 'stuck' that
 * never ends, with a child 'under' (when `stuck`): the child waits until keepTimedOut counts it.
 */
function keepChild(row: (typeof rows)[number], keep: object | undefined, endpoint: string, n: number, slowMs: number, env: Record<string, string> = {}, stuck = true): Promise<KeepOut> {
  const backend = row;
  const src = `
const { Tracer } = require(${JSON.stringify(dist)});
const { internals } = require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'tracer', 'internal.js'))});
(async () => {
  const t = new Tracer(${JSON.stringify({ backend, sample: { ratio: 0, keep } })});
  const engine = t[internals]().backend.constructor.name;  // before shutdown() closes it
  t.enableAsyncContext();
  t.exportOtlp({ endpoint: ${JSON.stringify(endpoint)}, scheduledDelayMs: 10, maxBatchSize: 64 });
  const trees = [];
  const pending = () => { let release; const p = new Promise((r) => (release = r)); return [p, release]; };
  const busy = (ms) => { const until = performance.now() + ms; while (performance.now() < until); };
  for (let i = 0; i < ${n}; i++) {
    for (const kind of ['fast', 'slow', 'error']) {
      const [after, releaseAfter] = pending();
      const outerStart = performance.now();
      t.begin(kind === 'slow' ? 'slow' : 'req', { i });
      const innerStart = performance.now();
      const tree = [kind, t.inject({}).traceparent.slice(3, 35)];
      trees.push(tree);
      t.trace('db', () => 0, { i });
      if (kind === 'error') { try { t.trace('fail', () => { throw new Error('x'); }, { i }); } catch {} }
      let io;
      if (kind === 'slow') {
        const [before, releaseBefore] = pending();
        const ioBefore = t.traceAsync('io.before', before, { track: 'net', attrs: { i } });
        io = t.traceAsync('io.after', after, { track: 'net2', attrs: { i } });
        releaseBefore();
        await ioBefore;
        busy(${slowMs});
      } else {
        io = t.traceAsync('io', after, { track: 'net', attrs: { i } });
      }
      const innerEnd = performance.now();
      t.end();
      tree.push(innerEnd - innerStart, performance.now() - outerStart);
      releaseAfter();
      await io;
    }
    if (i % 5 === 0) await new Promise((r) => setTimeout(r, 15));  // reads fall between a tree's spans
  }
  let stuck = '';
  if (${String(stuck)}) {
    t.begin('stuck');
    stuck = t.inject({}).traceparent.slice(3, 35);
    t.trace('under', () => 0);
    while (t.counts().otlp.keepTimedOut === 0) await new Promise((r) => setTimeout(r, 20));
  }
  await t.shutdown();
  console.log('RESULT:' + JSON.stringify({ counts: t.counts(), trees, stuck, engine }));
  process.exit(0);
})();`;
  const base = { ...process.env };
  for (const k of ['OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG', 'HOTSPAN_KEEP_SLOWER_THAN_MS', 'HOTSPAN_KEEP_ERRORS']) delete base[k];
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['-e', src], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...base, ...env } });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT:'));
      if (code !== 0 || line === undefined) reject(new Error(`child exited ${String(code)}\n${out}\n${err}`));
      else {
        const got = JSON.parse(line.slice(7)) as KeepOut;
        if (got.engine !== ENGINES[row]) reject(new Error(`the ${row} row recorded on ${got.engine}`));
        else resolve(got);
      }
    });
  });
}

const NAMES: Record<string, string[]> = {
  fast: ['db', 'io', 'req'],
  slow: ['db', 'io.after', 'io.before', 'slow'],
  error: ['db', 'fail', 'io', 'req'],
};

/**
 * Each tree arrives whole and linked to its root, or not at all: kept when
 * it failed (`errors`) or its root lasted longer than `slowerThanMs`. A tree
 * whose root's measured bounds straddle the threshold (a busy machine can
 * stretch a fast root) may go either way. Returns the spans kept and not.
 */
function checkKept(out: KeepOut, spans: ReceivedSpan[], keep: { slowerThanMs?: number; errors?: boolean }): { sent: number; out: number } {
  const byTrace = new Map<string, ReceivedSpan[]>();
  for (const s of spans) byTrace.set(s.traceId, [...(byTrace.get(s.traceId) ?? []), s]);
  const counted = { sent: 0, out: 0 };
  const known = new Set<string>();
  let slowKept = 0;
  for (const [kind, id, lo, hi] of out.trees) {
    known.add(id);
    const names = NAMES[kind];
    const tree = byTrace.get(id) ?? [];
    const failed = kind === 'error' && keep.errors === true;
    const limit = keep.slowerThanMs ?? Infinity;
    if (!failed && lo <= limit && hi > limit) {
      expect([0, names.length], `${kind} ${id}: ${String(lo)} to ${String(hi)} ms`).toContain(tree.length);
    } else {
      expect(tree.length, `${kind} ${id}: ${String(lo)} to ${String(hi)} ms`).toBe(failed || lo > limit ? names.length : 0);
    }
    if (tree.length === 0) {
      counted.out += names.length;
      continue;
    }
    if (kind === 'slow') slowKept++;
    counted.sent += names.length;
    expect(tree.map((s) => s.name).sort(), `${kind} ${id}`).toEqual(names);
    const root = tree.find((s) => s.name === names[names.length - 1])!;
    for (const s of tree) if (s !== root) expect(s.parentSpanId, `${kind} ${s.name}`).toBe(root.spanId);
  }
  expect([...byTrace.keys()].filter((id) => !known.has(id))).toEqual([]);
  // The slow trees' roots are busy for longer than the threshold: every one kept.
  if (keep.slowerThanMs !== undefined) expect(slowKept).toBe(out.trees.filter(([kind]) => kind === 'slow').length);
  return counted;
}

for (const backend of rows) {
  describe(`tail keep on the OTLP export (${backend} backend)`, () => {
    const receivers: Receiver[] = [];
    afterEach(async () => {
      await Promise.all(receivers.splice(0).map((r) => r.close()));
    });
    const listen = async (): Promise<[Receiver, string]> => {
      const r = new Receiver();
      receivers.push(r);
      return [r, `http://127.0.0.1:${String(await r.listen())}/v1/traces`];
    };

    it('keeps slow and failed traces whole at ratio 0, counts the rest, and times out a root that never ends', async () => {
      const [r, endpoint] = await listen();
      const n = 30;
      const keep = { slowerThanMs: 40, errors: true, maxWaitMs: 1500 };
      const out = await keepChild(backend, keep, endpoint, n, 80);
      const o = out.counts.otlp;
      expect(out.counts.produced).toBe(n * (3 + 4 + 4) + 1);
      expect(o.dropped + o.rejected + o.inFlight).toBe(0);
      const spans = r.spans();
      expect(spans.length).toBe(o.sent);
      const c = checkKept(out, spans, keep);
      expect(c.sent).toBeGreaterThanOrEqual(n * (4 + 4));
      expect(o.sent).toBe(c.sent);
      // The fast trees and the stuck root's child: read, not sent.
      expect(o.sampledOut).toBe(c.out + 1);
      expect(o.keepTimedOut).toBe(1);
      expect(o.sent + o.sampledOut).toBe(out.counts.produced);
      expect(spans.some((s) => s.traceId === out.stuck)).toBe(false);
    }, 120_000);

    it('keeps whole the traces with a span of one of sample.keep.names, and nothing else', async () => {
      const [r, endpoint] = await listen();
      const n = 12;
      // Neither slowerThanMs nor errors: 'io.before' (a slow tree's span on a
      // track, ended before its root) and 'fail' (an error tree's) keep by name only.
      const out = await keepChild(backend, { names: ['io.before', 'fail'], maxWaitMs: 1500 }, endpoint, n, 5);
      const o = out.counts.otlp;
      expect(out.counts.produced).toBe(n * (3 + 4 + 4) + 1);
      expect(o.dropped + o.rejected + o.inFlight).toBe(0);
      const byTrace = new Map<string, string[]>();
      for (const sp of r.spans()) byTrace.set(sp.traceId, [...(byTrace.get(sp.traceId) ?? []), sp.name]);
      for (const [kind, id] of out.trees) {
        expect((byTrace.get(id) ?? []).sort(), `${kind} ${id}`).toEqual(kind === 'fast' ? [] : NAMES[kind]);
      }
      expect(byTrace.size).toBe(2 * n);
      expect(o.sent).toBe(n * (4 + 4));
      // The fast trees and the stuck root's child.
      expect(o.sampledOut).toBe(n * 3 + 1);
      expect(o.keepTimedOut).toBe(1);
    }, 120_000);

    it('takes HOTSPAN_KEEP_SLOWER_THAN_MS and HOTSPAN_KEEP_ERRORS when sample.keep is not given', async () => {
      const [r, endpoint] = await listen();
      const n = 10;
      // Only errors: the slow trees are dropped by the head decision like the fast ones.
      const out = await keepChild(backend, undefined, endpoint, n, 80, { HOTSPAN_KEEP_ERRORS: 'true' }, false);
      const o = out.counts.otlp;
      expect(o.sent).toBe(n * 4);
      expect(o.sampledOut).toBe(n * (3 + 4));
      expect(o.keepTimedOut).toBe(0);
      checkKept(out, r.spans(), { errors: true });
      const [r2, endpoint2] = await listen();
      const slow = await keepChild(backend, undefined, endpoint2, n, 80, { HOTSPAN_KEEP_SLOWER_THAN_MS: '40' }, false);
      const c = checkKept(slow, r2.spans(), { slowerThanMs: 40 });
      expect(c.sent).toBeGreaterThanOrEqual(n * 4);
      expect(slow.counts.otlp.sent).toBe(c.sent);
      expect(slow.counts.otlp.sampledOut).toBe(c.out);
    }, 120_000);
  });
}

/** Warnings of a tracer made in a fresh process under `env`, and its tail keep's presence via a bad value's fallback. */
function warningsUnder(env: Record<string, string>): string[] {
  const src = `
const { Tracer } = require(${JSON.stringify(dist)});
const warnings = [];
process.on('warning', (w) => { if (w.code === 'HOTSPAN_BAD_ENV') warnings.push(w.message); });
new Tracer({ backend: 'js' }).close();
new Tracer({ backend: 'js' }).close();
setImmediate(() => console.log('RESULT:' + JSON.stringify(warnings)));`;
  const base = { ...process.env };
  for (const k of ['HOTSPAN_KEEP_SLOWER_THAN_MS', 'HOTSPAN_KEEP_ERRORS']) delete base[k];
  const r = spawnSync(process.execPath, ['-e', src], { encoding: 'utf8', env: { ...base, ...env }, timeout: 60_000 });
  const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT:'));
  if (r.status !== 0 || line === undefined) throw new Error(`child failed (${String(r.status)}): ${r.stdout}\n${r.stderr}`);
  return JSON.parse(line.slice(7)) as string[];
}

describe('sample.keep and HOTSPAN_KEEP_*', () => {
  it('throws a TypeError or RangeError naming a bad sample.keep value', () => {
    const bad: Array<[unknown, RegExp, ErrorConstructor]> = [
      [5, /sample\.keep must be an object.*got number 5/, TypeError],
      [{ slowerThanMs: '5' }, /sample\.keep\.slowerThanMs must be a number of ms from 0 to 1000000000, got string "5"/, TypeError],
      [{ slowerThanMs: -1 }, /sample\.keep\.slowerThanMs .* got number -1/, RangeError],
      [{ slowerThanMs: Number.NaN }, /sample\.keep\.slowerThanMs .* got number NaN/, RangeError],
      [{ errors: 1 }, /sample\.keep\.errors must be a boolean, got number 1/, TypeError],
      [{ maxWaitMs: 0 }, /sample\.keep\.maxWaitMs must be a number of ms from 1 to 4194303, got number 0/, RangeError],
      [{ maxWaitMs: 5e6 }, /sample\.keep\.maxWaitMs .* got number 5000000/, RangeError],
      [{ names: 'db' }, /sample\.keep\.names must be an array of span names, got string "db"/, TypeError],
      [{ names: ['db', ''] }, /sample\.keep\.names\[1\] must be a non-empty string, got string ""/, TypeError],
      [{ names: [7] }, /sample\.keep\.names\[0\] must be a non-empty string, got number 7/, TypeError],
      [{ nam: ['x'] }, /unknown sample\.keep option "nam"/, RangeError],
    ];
    for (const [keep, message, type] of bad) {
      for (const backend of [...rows, 'noop'] as const) {
        let err: unknown;
        try {
          const options = { sample: { keep: keep as never } };
          new Tracer({ backend, ...options }).close();
        } catch (e) {
          err = e;
        }
        expect(err, JSON.stringify(keep)).toBeInstanceOf(type);
        expect((err as Error).message).toMatch(message);
      }
    }
  });

  it('a bad environment value gives one warning naming it, and the default is kept', () => {
    for (const v of ['-3', 'abc', '5ms']) {
      const w = warningsUnder({ HOTSPAN_KEEP_SLOWER_THAN_MS: v });
      expect(w.length, v).toBe(1);
      expect(w[0]).toContain(`HOTSPAN_KEEP_SLOWER_THAN_MS must be a number of ms from 0 to 1000000000, got string "${v}"; ignored, using the default (no keep of slow traces)`);
    }
    const w = warningsUnder({ HOTSPAN_KEEP_ERRORS: 'yes' });
    expect(w).toEqual([expect.stringContaining('HOTSPAN_KEEP_ERRORS must be true or false, got string "yes"; ignored, using the default (false)')]);
    expect(warningsUnder({ HOTSPAN_KEEP_ERRORS: 'true', HOTSPAN_KEEP_SLOWER_THAN_MS: '12.5' })).toEqual([]);
  });
});
