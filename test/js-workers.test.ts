// Workers joining a tracer (tracer.share() / Tracer.join(token)), held to the
// same behaviour on the native and the js backend: a worker's spans land on a
// timeline of their own in the sharing tracer's records, stats, queries and
// outputs, and groups opened on the main thread bracket them (tunix's groups
// across a worker's timeline). The workers are real worker_threads running
// test/fixtures/join-worker.js against the compiled dist/.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { Tracer, type SpanRecord, type TracerOptions } from '../lib/index';
import { internals } from '../lib/tracer/internal';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { clockedTracer } from './support/tracers';

const TWO32 = 4294967296;
// Without the addon the native half is skipped, except in CI where it must run.
const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const fixture = path.join(__dirname, 'fixtures', 'join-worker.js');
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-workers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Report {
  done?: boolean;
  ready?: boolean;
  ok?: boolean;
  error?: string;
  isError?: boolean;
  backend?: string;
  innerThreadId?: number;
}

interface Run {
  worker: Worker;
  /** The worker's first message. */
  report: Promise<Report>;
  /** Its exit code. */
  exit: Promise<number>;
}

function run(workerData: Record<string, unknown>): Run {
  const worker = new Worker(fixture, { workerData });
  const report = new Promise<Report>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const exit = new Promise<number>((resolve, reject) => {
    worker.once('exit', resolve);
    worker.once('error', reject);
  });
  return { worker, report, exit };
}

function named(records: readonly SpanRecord[], name: string): SpanRecord[] {
  return records.filter((r) => r.name === name);
}

interface ChromeEvent {
  name: string;
  ph: string;
  ts?: number;
  dur?: number;
  tid: number;
  cat?: string;
  args?: Record<string, unknown>;
}

/** A token of the same kind naming no tracer. */
function forge(token: string): string {
  if (token.startsWith('hotspan-js:')) return token.replace(/[0-9a-f]$/, (c) => (c === '0' ? '1' : '0'));
  return `${token}000000`;
}

/**
 * The worker's spans of a 'record' run with `count` outers, checked for
 * being there exactly once with valid ids and parents; returns them.
 */
function checkRecorded(t: Tracer, threadName: string, count: number): SpanRecord[] {
  const recs = t.snapshot();
  const tl = t.timelines().filter((x) => x.name === threadName);
  expect(tl, `one timeline named ${threadName}`).toHaveLength(1);
  const mine = recs.filter((r) => r.timeline === tl[0].id);
  const outers = named(mine, 'worker.outer');
  const inners = named(mine, 'worker.inner');
  expect(outers).toHaveLength(count);
  expect(inners).toHaveLength(2 * count);
  expect(mine).toHaveLength(3 * count);
  // Nothing of the worker anywhere else.
  expect(named(recs, 'worker.outer')).toHaveLength(count);
  expect(named(recs, 'worker.inner')).toHaveLength(2 * count);
  expect(new Set(recs.map((r) => r.id)).size).toBe(recs.length);
  const byId = new Map(mine.map((r) => [r.id, r]));
  for (const r of mine) {
    expect(r.timelineName).toBe(threadName);
    expect(r.timelineKind).toBe('js');
    expect(Math.floor(r.id / TWO32)).toBe(r.timeline);
    expect([r.abandoned, r.error, r.async]).toEqual([false, false, false]);
  }
  for (const o of outers) {
    expect(o.parent).toBe(0);
    expect(o.depth).toBe(0);
  }
  for (const i of inners) {
    const parent = byId.get(i.parent);
    expect(parent?.name).toBe('worker.outer');
    expect(i.depth).toBe(1);
    expect(i.start).toBeGreaterThanOrEqual(parent?.start ?? Infinity);
    expect(i.end).toBeLessThanOrEqual(parent?.end ?? -Infinity);
  }
  // Every outer holds one inner with attributes and one without.
  for (const o of outers) {
    const kids = inners.filter((i) => i.parent === o.id);
    expect(kids.map((k) => k.attrs?.kind ?? null).sort()).toEqual(['first', null]);
  }
  expect(
    inners
      .map((i) => i.attrs?.i)
      .filter((v) => v !== undefined)
      .sort((a, b) => Number(a) - Number(b)),
  ).toEqual(Array.from({ length: count }, (_, k) => k));
  return mine;
}

describe.each(['native', 'js'] as const)('%s backend: workers joining a shared tracer', (kind) => {
  const suite = kind === 'native' && skipNative ? describe.skip : describe;

  suite('share() / Tracer.join()', () => {
    const live: Tracer[] = [];
    const workers: Worker[] = [];
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((w) => w.terminate()));
      for (const t of live.splice(0)) t.close();
    });
    const make = (options: TracerOptions = {}): Tracer => {
      const t = new Tracer({ backend: kind, ...options });
      live.push(t);
      return t;
    };
    const start = (workerData: Record<string, unknown>): Run => {
      const r = run(workerData);
      workers.push(r.worker);
      return r;
    };

    it('gives a token string that names this tracer', () => {
      const t = make();
      const token = t.share();
      expect(typeof token).toBe('string');
      expect(t.share()).toBe(token);
      expect(make().share()).not.toBe(token);
    });

    it("puts a worker's nested spans on its own timeline, exactly once, with valid parents", async () => {
      const t = make();
      t.trace('main.before', () => 0);
      const count = 40;
      const w = start({ token: t.share(), threadName: 'worker A', mode: 'record', count });
      expect(await w.report).toEqual({ done: true, backend: kind });
      expect(await w.exit).toBe(0);
      await t.settle({ timeoutMs: 10_000 });
      const mine = checkRecorded(t, 'worker A', count);
      const main = named(t.snapshot(), 'main.before');
      expect(main).toHaveLength(1);
      expect(mine[0].timeline).not.toBe(main[0].timeline);
      expect(t.timelines().find((x) => x.name === 'worker A')).toMatchObject({ kind: 'js', exited: true });
      // The main thread still records on its own timeline.
      t.trace('main.after', () => 0);
      expect(named(t.snapshot(), 'main.after')[0].timeline).toBe(main[0].timeline);
    });

    it('names the timeline "worker <threadId>" by default', async () => {
      const t = make();
      const w = start({ token: t.share(), mode: 'record', count: 2 });
      const id = w.worker.threadId;
      expect(id).toBeGreaterThan(0);
      await w.report;
      await w.exit;
      await t.settle({ timeoutMs: 10_000 });
      checkRecorded(t, `worker ${String(id)}`, 2);
    });

    it("brackets the worker's spans with a group opened on the main thread", async () => {
      const t = make();
      const count = 25;
      t.groupBegin('before');
      t.groupEnd();
      const w = start({ token: t.share(), threadName: 'worker G', mode: 'record', count });
      t.groupBegin('step');
      t.groupBegin('inner-phase');
      await w.report;
      t.groupEnd();
      t.groupEnd();
      expect(await w.exit).toBe(0);
      t.groupBegin('after');
      t.trace('main.late', () => 0);
      t.groupEnd();
      await t.settle({ timeoutMs: 10_000 });
      const mine = checkRecorded(t, 'worker G', count);
      const q = t.query();
      const step = q.group('step').first();
      const inStep = step.spans().records.filter((r) => r.timelineName === 'worker G');
      expect(inStep).toHaveLength(mine.length);
      expect(step.spans('worker.inner').count).toBe(2 * count);
      for (const r of mine) {
        expect(r.start).toBeGreaterThanOrEqual(step.start);
        expect(r.end).toBeLessThanOrEqual(step.end);
        expect(q.groupOf(r)?.name).toBe('inner-phase');
      }
      expect(step.groups('inner-phase').first().spans('worker.outer').count).toBe(count);
      expect(q.group('before').first().spans().count).toBe(0);
      expect(q.group('after').first().spans().records.map((r) => r.name)).toEqual(['main.late']);
      expect(q.timeline('worker G').group('step').first().spans().count).toBe(3 * count);
    });

    it("counts the worker's spans in stats()", async () => {
      const t = make();
      const count = 30;
      const w = start({ token: t.share(), threadName: 'worker S', mode: 'record', count });
      await w.report;
      await w.exit;
      await t.settle({ timeoutMs: 10_000 });
      const mine = checkRecorded(t, 'worker S', count);
      const stats = t.stats();
      const outer = stats.find((r) => r.name === 'worker.outer');
      const inner = stats.find((r) => r.name === 'worker.inner');
      expect(outer?.count).toBe(count);
      expect(inner?.count).toBe(2 * count);
      const outers = named(mine, 'worker.outer').map((r) => r.duration);
      expect(outer?.total).toBeCloseTo(outers.reduce((a, b) => a + b, 0), 6);
      expect(outer?.max).toBeCloseTo(Math.max(...outers), 6);
      expect(outer?.min).toBeCloseTo(Math.min(...outers), 6);
    });

    it("writes the worker's thread name and events to Chrome JSON", async () => {
      const t = make();
      const count = 10;
      t.groupBegin('step');
      const w = start({ token: t.share(), threadName: 'worker "J"', mode: 'record', count });
      await w.report;
      t.groupEnd();
      await w.exit;
      await t.settle({ timeoutMs: 10_000 });
      const mine = checkRecorded(t, 'worker "J"', count);
      const file = path.join(tmp, `${kind}-workers.json`);
      await t.write(file);
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: ChromeEvent[] };
      const tid = mine[0].timeline;
      const meta = doc.traceEvents.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.tid === tid);
      expect(meta?.args?.name).toBe('worker "J"');
      const events = doc.traceEvents.filter((e) => e.ph === 'X' && e.tid === tid);
      expect(events).toHaveLength(3 * count);
      expect(events.filter((e) => e.name === 'worker.inner')).toHaveLength(2 * count);
      const ids = new Set(mine.map((r) => r.id));
      for (const e of events) {
        expect(ids.has(Number(e.args?.span_id))).toBe(true);
        if (e.name === 'worker.inner') expect(ids.has(Number(e.args?.parent_id))).toBe(true);
      }
      // The group on its own track spans the worker's events.
      const group = doc.traceEvents.find((e) => e.ph === 'X' && e.cat === 'group' && e.name === 'step');
      expect(group).toBeDefined();
      const g0 = group?.ts ?? NaN;
      const g1 = g0 + (group?.dur ?? NaN);
      for (const e of events) {
        expect(e.ts ?? NaN).toBeGreaterThanOrEqual(g0);
        expect((e.ts ?? NaN) + (e.dur ?? NaN)).toBeLessThanOrEqual(g1 + 0.001);
      }
    });

    it("ends a span left open at the worker's exit, flagged abandoned", async () => {
      const t = make();
      const w = start({ token: t.share(), threadName: 'worker O', mode: 'open', count: 3 });
      await w.report;
      expect(await w.exit).toBe(0);
      const exited = performance.now();
      await t.settle({ timeoutMs: 10_000 });
      const recs = t.snapshot().filter((r) => r.timelineName === 'worker O');
      const outers = named(recs, 'worker.outer');
      expect(outers).toHaveLength(3);
      const held = named(recs, 'worker.held');
      expect(held).toHaveLength(1);
      expect(held[0].abandoned).toBe(true);
      expect(held[0].parent).toBe(0);
      // Opened after the last outer span, ended by the thread's exit.
      const tol = kind === 'native' ? t.clockBoundMs : 0;
      expect(held[0].start).toBeGreaterThanOrEqual(Math.max(...outers.map((r) => r.end)) - tol);
      expect(held[0].end).toBeGreaterThanOrEqual(held[0].start);
      expect(held[0].end).toBeLessThanOrEqual(exited + tol);
      expect(t.timelines().find((x) => x.name === 'worker O')?.exited).toBe(true);
    });

    it('makes a live worker\'s spans visible at settle() without waiting for its exit', async () => {
      const t = make();
      const w = start({ token: t.share(), threadName: 'worker L', mode: 'live', count: 5 });
      await w.report;
      await t.settle({ timeoutMs: 10_000 });
      checkRecorded(t, 'worker L', 5);
      expect(t.timelines().find((x) => x.name === 'worker L')?.exited).toBe(false);
      w.worker.postMessage('stop');
      expect(await w.exit).toBe(0);
      await t.settle({ timeoutMs: 10_000 });
      expect(t.timelines().find((x) => x.name === 'worker L')?.exited).toBe(true);
      checkRecorded(t, 'worker L', 5);
    });

    it('gives a thread that joins twice one timeline', async () => {
      const t = make();
      const w = start({ token: t.share(), threadName: 'worker T', mode: 'twice' });
      await w.report;
      await w.exit;
      await t.settle({ timeoutMs: 10_000 });
      const recs = t.snapshot().filter((r) => r.name.startsWith('worker.'));
      expect(recs.map((r) => r.name).sort()).toEqual(['worker.first', 'worker.second', 'worker.third']);
      expect(new Set(recs.map((r) => r.timeline)).size).toBe(1);
      expect(t.timelines().filter((x) => x.name === 'worker T')).toHaveLength(1);
      const first = named(recs, 'worker.first')[0];
      expect(named(recs, 'worker.second')[0].parent).toBe(first.id);
    });

    it('takes spans from a worker started by a worker', async () => {
      const t = make();
      const w = start({ token: t.share(), threadName: 'worker N', mode: 'nested', count: 4 });
      const report = await w.report;
      expect(report.error).toBeUndefined();
      expect(report.done).toBe(true);
      await w.exit;
      await t.settle({ timeoutMs: 10_000 });
      checkRecorded(t, 'worker N/inner', 4);
    });

    it('keeps what a worker flushed before it was terminated, and settles', async () => {
      const t = make();
      const count = 20;
      const w = start({ token: t.share(), threadName: 'worker K', mode: 'spin', count });
      expect((await w.report).ready).toBe(true);
      await w.worker.terminate();
      await w.exit;
      await t.settle({ timeoutMs: 10_000 });
      const recs = t.snapshot().filter((r) => r.timelineName === 'worker K');
      expect(named(recs, 'worker.pre')).toHaveLength(count);
      expect(t.timelines().find((x) => x.name === 'worker K')?.exited).toBe(true);
      t.trace('main.after', () => 0);
      expect(named(t.snapshot(), 'main.after')).toHaveLength(1);
    });

    it('rejects a token that names no tracer with an Error naming the token', () => {
      const t = make();
      const forged = forge(t.share());
      let caught: unknown;
      try {
        Tracer.join(forged);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(Error);
      expect((caught as Error).message).toContain(forged);
      expect((caught as Error).message).toMatch(/unknown tracer token/);
      expect(() => Tracer.join('')).toThrow(TypeError);
      expect(() => Tracer.join(42 as unknown as string)).toThrow(TypeError);
    });

    it('rejects, in a worker, the token of a tracer closed before it joined', async () => {
      const t = make();
      const token = t.share();
      t.close();
      const w = start({ token, mode: 'join' });
      const report = await w.report;
      expect(report.isError).toBe(true);
      expect(report.error).toContain(token);
      expect(report.error).toMatch(/closed tracer/);
      await w.exit;
    });

    it('rejects, in a worker, a forged token by name', async () => {
      const t = make();
      const forged = forge(t.share());
      const w = start({ token: forged, mode: 'join' });
      const report = await w.report;
      expect(report.isError).toBe(true);
      expect(report.error).toContain(forged);
      await w.exit;
    });

    it('takes nothing from a worker after the sharing tracer closed', async () => {
      const t = make();
      const signal = new Int32Array(new SharedArrayBuffer(4));
      const w = start({ token: t.share(), threadName: 'worker C', mode: 'wait', signal });
      await w.report;
      t.close();
      const kept = t.snapshot().length;
      const after = new Promise<Report>((resolve) => w.worker.once('message', resolve));
      Atomics.store(signal, 0, 1);
      Atomics.notify(signal, 0);
      // The worker may or may not notice before its next span (the js backend
      // notices at its next batch or event-loop turn); when it does, it is the
      // closed-tracer error.
      const late = await after;
      if (late.error !== undefined) expect(late.error).toMatch(/tracer is closed/);
      expect(await w.exit).toBe(0);
      expect(t.snapshot()).toHaveLength(kept);
      expect(named(t.snapshot(), 'worker.after')).toHaveLength(0);
    });

    it("makes a worker's recording calls throw once it has seen the sharing tracer close", async () => {
      const t = make();
      const w = start({ token: t.share(), threadName: 'worker X', mode: 'live', count: 1 });
      await w.report;
      t.close();
      const kept = t.snapshot().length;
      // The native backend throws at once; the js backend once the close
      // reached the worker (an event-loop turn, or its next batch).
      let answer: Report = {};
      for (let attempt = 0; attempt < 200 && answer.error === undefined; attempt++) {
        const next = new Promise<Report>((resolve) => w.worker.once('message', resolve));
        w.worker.postMessage('record');
        answer = await next;
        if (answer.error === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(answer.error).toMatch(/tracer is closed/);
      w.worker.postMessage('stop');
      expect(await w.exit).toBe(0);
      expect(t.snapshot()).toHaveLength(kept);
    });
  });
});

// What only the js backend has to say: its joining is message based.
describe('js backend: joining limits', () => {
  const live: Tracer[] = [];
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.terminate()));
    for (const t of live.splice(0)) t.close();
  });
  const make = (options: TracerOptions = {}): Tracer => {
    const t = new Tracer({ backend: 'js', ...options });
    live.push(t);
    return t;
  };

  it("ends an async span a joined worker left open at its exit, flagged abandoned", async () => {
    // Its span lives in the worker's own core: no other thread can end it.
    const t = make();
    const r = run({ token: t.share(), threadName: 'worker A', mode: 'open', count: 1, openAsync: true });
    await r.report;
    expect(await r.exit).toBe(0);
    await t.settle({ timeoutMs: 10_000 });
    const pending = named(t.snapshot(), 'worker.pending');
    expect(pending).toHaveLength(1);
    expect(pending[0].abandoned).toBe(true);
    expect(pending[0].timelineName).toBe('track: worker.gpu');
    expect(named(t.snapshot(), 'worker.held')[0]?.abandoned).toBe(true);
    const c = t.counts();
    expect(c.produced).toBe(c.kept + c.overwritten + c.dropped);
  });

  it('settle() waits for a busy joined worker, names it on timeout, and keeps waiting next time', async () => {
    const t = make();
    const signal = new Int32Array(new SharedArrayBuffer(4));
    const r = run({ token: t.share(), threadName: 'worker busy', mode: 'wait', signal });
    workers.push(r.worker);
    await r.report;
    // The worker sits in Atomics.wait: it cannot answer.
    await expect(t.settle({ timeoutMs: 50 })).rejects.toThrow(/1 joined thread\(s\) did not ship their records: "worker busy"/);
    const later = t.settle({ timeoutMs: 10_000 });
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
    await later;
    expect(await r.exit).toBe(0);
    await t.settle({ timeoutMs: 10_000 });
    const recs = t.snapshot().filter((x) => x.timelineName === 'worker busy');
    expect(recs.map((x) => x.name).sort()).toEqual(['worker.after', 'worker.before']);
  });

  it('refuses to share a tracer that runs on an injected clock', () => {
    const t = clockedTracer(() => 1);
    live.push(t);
    expect(() => t.share()).toThrow(/injected clock/);
  });

  it('says a malformed js token is malformed, naming it', () => {
    expect(() => Tracer.join('hotspan-js:nope')).toThrow(/malformed tracer token 'hotspan-js:nope'/);
    const t = make();
    const other = t.share().replace(/^hotspan-js:\d+:/, `hotspan-js:${String(process.pid + 1)}:`);
    expect(() => Tracer.join(other)).toThrow(/shared by process/);
  });

  it('ships a joined thread\'s batches as they fill, and tells a joined tracer to read records at the owner', async () => {
    const t = make();
    const token = t.share();
    // Joining the owner's own thread exercises the same path synchronously.
    const j = Tracer.join(token, { threadName: 'self-joined' });
    expect(j.backend).toBe('js');
    const b = j[internals]().backend;
    const n = 20_000;
    for (let i = 0; i < n; i++) j.trace('bulk', () => i);
    // Full batches left already; only the partial last one is unshipped.
    expect(b.pending()).toBeLessThan(n);
    expect(b.pending()).toBeGreaterThan(0);
    expect(() => j.snapshot()).toThrow(/read them there/);
    expect(() => j.stats()).toThrow(/read them there/);
    j.flush();
    expect(b.pending()).toBe(0);
    t.flush();
    const bulk = named(t.snapshot(), 'bulk');
    expect(bulk).toHaveLength(n);
    expect(new Set(bulk.map((r) => r.id)).size).toBe(n);
    expect(bulk.every((r) => r.timelineName === 'self-joined')).toBe(true);
    j.close();
  });

  it('maps a joined thread\'s tracks and groups onto the owner\'s by name', async () => {
    const t = make();
    const token = t.share();
    const gpu = t.track('gpu0', { serial: true });
    expect(await t.traceAsync('main.kernel', Promise.resolve(1), { track: gpu })).toBe(1);
    const j = Tracer.join(token, { threadName: 'self-joined' });
    await j.traceAsync('joined.kernel', Promise.resolve(2), { track: 'gpu0' });
    j.group('joined.phase', () => j.trace('joined.work', () => 0));
    j.close();
    t.flush();
    const recs = t.snapshot();
    const kernels = recs.filter((r) => r.timelineName === 'track: gpu0');
    expect(kernels.map((r) => r.name).sort()).toEqual(['joined.kernel', 'main.kernel']);
    expect(new Set(kernels.map((r) => r.id)).size).toBe(2);
    expect(t.timelines().filter((x) => x.kind === 'track')).toHaveLength(1);
    const phase = t.query().group('joined.phase').first();
    expect(phase.spans().records.map((r) => r.name)).toEqual(['joined.work']);
  });
});
