// Native-module profiling end to end: a separate addon (test/fixtures/consumer,
// which includes only native/include/hotspan.h) receives tracer.nativeApi()
// and records spans from its own std::threads into the public Tracer.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Tracer } from '../lib/index';
import type { SpanRecord, TimelineInfo } from '../lib/index';
import { internals } from '../lib/tracer/internal';
import { loadConsumer, type Consumer } from './support/consumer';

let consumer: Consumer;
let backgroundRunning = false;
const live: Tracer[] = [];

beforeAll(() => {
  consumer = loadConsumer();
}, 180_000);

afterEach(() => {
  if (backgroundRunning) {
    backgroundRunning = false;
    consumer.stopBackground();
  }
  for (const t of live.splice(0)) t.close();
});

function newTracer(options: { wakeHighWater?: number } = {}): Tracer {
  const t = new Tracer({ backend: 'native', requireNative: true, ...options });
  live.push(t);
  return t;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `cond` on timer ticks (the event loop runs between them) until true or `ms` passed. */
async function waitFor(cond: () => boolean, ms = 5_000): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > deadline) return false;
    await sleep(5);
  }
  return true;
}

function timelineNamed(t: Tracer, name: string): TimelineInfo | undefined {
  const found = t.timelines().filter((tl) => tl.name === name);
  expect(found.length).toBeLessThanOrEqual(1);
  return found[0];
}

/**
 * Nesting as the consumer records it: level k is named consumer.d<k> and has
 * depth k; a child's parent is on the same timeline, one level up, and
 * encloses it; ids are unique. Collects problems (tens of thousands of spans:
 * one expect per property would dominate the run time).
 */
function nestingProblems(spans: readonly SpanRecord[]): string[] {
  const problems: string[] = [];
  const byId = new Map<number, SpanRecord>();
  for (const s of spans) {
    if (byId.has(s.id)) problems.push(`duplicate id ${s.id}`);
    byId.set(s.id, s);
  }
  for (const s of spans) {
    const where = `${s.name} #${s.id} on ${s.timelineName}`;
    if (s.name !== `consumer.d${s.depth}`) problems.push(`${where}: depth ${s.depth}`);
    if (s.async) problems.push(`${where}: flagged async`);
    if (!(s.end >= s.start)) problems.push(`${where}: ends before it starts`);
    if (s.depth === 0) {
      if (s.parent !== 0) problems.push(`${where}: root with parent ${s.parent}`);
      continue;
    }
    const p = byId.get(s.parent);
    if (!p) {
      problems.push(`${where}: parent ${s.parent} missing`);
    } else if (p.timeline !== s.timeline || p.depth !== s.depth - 1 || p.start > s.start || p.end < s.end) {
      problems.push(`${where}: parent ${p.name} #${p.id} does not enclose it one level up`);
    }
    if (problems.length > 20) break;
  }
  return problems;
}

describe('native threads through the C ABI (hotspan.h consumer addon)', () => {
  it('checks the table it is given', () => {
    const t = newTracer();
    expect(consumer.abiVersion).toBe(1);
    expect(() => consumer.run({}, {})).toThrow(/must be the External from tracer\.nativeApi\(\)/);
    expect(() => consumer.run(consumer.bogusApi(2, 4096), {})).toThrow(/ABI version 2 is not the version/);
    expect(() => consumer.run(consumer.bogusApi(1, 8), {})).toThrow(/table is 8 bytes/);
    // The real one passes the same checks.
    const ok = consumer.run(t.nativeApi(), { threads: 1, spansPerThread: 1, depth: 1 });
    expect(ok[0]).toMatchObject({ recorded: 1, closed: 0, errors: 0 });
  });

  it('spans from 4 threads land on their own named timelines, nested, exact after flush()', () => {
    const t = newTracer();
    const api = t.nativeApi();
    const perThread = 10_007; // not a multiple of the batch or the depth
    const before = performance.now();
    const tallies = consumer.run(api, { threads: 4, spansPerThread: perThread, depth: 4, threadNamePrefix: 'enc' });
    const after = performance.now();
    t.flush();

    const spans = t.snapshot();
    const bound = t.clockBoundMs;
    expect(tallies).toHaveLength(4);
    let total = 0;
    for (let i = 0; i < 4; i++) {
      expect(tallies[i]).toMatchObject({ name: `enc#${i}`, recorded: perThread, closed: 0, errors: 0 });
      const tl = timelineNamed(t, `native: enc#${i}`);
      expect(tl, `timeline of enc#${i}`).toBeDefined();
      if (!tl) continue;
      expect(tl.kind).toBe('native');
      const mine = spans.filter((s) => s.timeline === tl.id);
      expect(mine.length).toBe(perThread);
      expect(mine.every((s) => s.timelineName === `native: enc#${i}`)).toBe(true);
      expect(nestingProblems(mine)).toEqual([]);
      total += mine.length;
    }
    // Every native span is on one of those timelines, exactly once.
    expect(spans.filter((s) => s.name.startsWith('consumer.d')).length).toBe(total);
    expect(total).toBe(4 * perThread);
    // One axis: all of them were recorded between the two JS clock readings.
    const outside = spans.filter((s) => s.start < before - bound || s.end > after + bound);
    expect(outside.slice(0, 5)).toEqual([]);
  });

  it('async spans begun on one native thread and ended on another', () => {
    const t = newTracer();
    const n = 3_000;
    const r = consumer.asyncCrossThread(t.nativeApi(), n);
    expect(r).toEqual({ begun: n, ended: n, errors: 0 });
    t.flush();
    const spans = t.snapshot();
    const track = timelineNamed(t, 'track: consumer.async');
    expect(track?.kind).toBe('track');
    const asyncSpans = spans.filter((s) => s.name === 'consumer.async');
    expect(asyncSpans.length).toBe(n);
    expect(asyncSpans.every((s) => s.async && s.timeline === track?.id && s.end >= s.start)).toBe(true);
    expect(new Set(asyncSpans.map((s) => s.id)).size).toBe(n);
    // The producer's HOTSPAN_SCOPE span, on its own thread's timeline, encloses every begin.
    const producer = spans.filter((s) => s.name === 'consumer.async.producer');
    expect(producer).toHaveLength(1);
    expect(producer[0].timelineName).toBe('native: async-begin');
    expect(producer[0].depth).toBe(0);
    const p = producer[0];
    expect(asyncSpans.filter((s) => s.start < p.start || s.start > p.end).slice(0, 5)).toEqual([]);
    // The ending thread named itself and recorded no spans of its own.
    const ender = timelineNamed(t, 'native: async-end');
    expect(ender).toBeDefined();
    expect(spans.filter((s) => s.timeline === ender?.id)).toHaveLength(0);
  });

  it('native spans reach snapshot() without flush() once past the high-water mark (the wake-up)', async () => {
    const highWater = 2_048;
    const t = newTracer({ wakeHighWater: highWater });
    // Only the wake-up may drain here: no GC hook, no JS spans (piggy-back), no flush().
    t[internals]().gcHook?.stop();
    const native = t[internals]().native;
    const api = t.nativeApi();

    // Control: below the mark, records wait in the queue and nothing drains them.
    consumer.run(api, { threads: 1, spansPerThread: 100, depth: 1, threadNamePrefix: 'quiet' });
    await sleep(100);
    expect(t.snapshot()).toHaveLength(0);
    expect(native?.pending()).toBe(100);

    // Past the mark: the producer wakes the JS thread, which drains everything queued.
    const loud = 4 * 2_000;
    expect(loud).toBeGreaterThan(highWater);
    consumer.run(api, { threads: 4, spansPerThread: 2_000, depth: 2, threadNamePrefix: 'loud' });
    const expected = loud + 100;
    const arrived = await waitFor(() => t.snapshot().length === expected, 5_000);
    expect(arrived, `saw ${t.snapshot().length} of ${expected} spans without flush()`).toBe(true);
    expect(native?.pending()).toBe(0);
  });

  it('close() while a native recorder runs: no crash, committed records kept, later calls closed', async () => {
    const t = newTracer();
    const api = t.nativeApi();
    consumer.startBackground(api, { threads: 4, depth: 3, pauseUs: 20, threadNamePrefix: 'bg' });
    backgroundRunning = true;
    expect(await waitFor(() => consumer.backgroundRecorded() >= 4_000, 20_000)).toBe(true);

    t.flush();
    const before = t.snapshot();
    expect(before.length).toBeGreaterThan(0);
    t.close();
    expect(t.closed).toBe(true);
    // The recorder keeps calling into the closed tracer for a while.
    const atClose = consumer.backgroundRecorded();
    await sleep(100);
    backgroundRunning = false;
    const tallies = consumer.stopBackground();

    const recorded = tallies.reduce((n, x) => n + x.recorded, 0);
    expect(consumer.backgroundRecorded()).toBe(0); // stopped
    for (const x of tallies) {
      expect(x.closed).toBeGreaterThan(0);
      expect(x.okAfterClosed).toBe(0);
      expect(x.errors).toBe(0);
    }
    // Spans that ended before close are readable after it; none ended after.
    expect(recorded).toBeGreaterThanOrEqual(atClose);
    const after = t.snapshot();
    const byId = new Map(after.map((s) => [s.id, s]));
    const lost = before.filter((s) => {
      const a = byId.get(s.id);
      return !a || a.start !== s.start || a.end !== s.end || a.name !== s.name;
    });
    expect(lost.slice(0, 5)).toEqual([]);
    expect(after.length).toBeGreaterThanOrEqual(before.length);
    expect(after.length).toBeLessThanOrEqual(recorded);

    // A new thread after close: every call says closed, nothing is recorded.
    const late = consumer.run(api, { threads: 2, spansPerThread: 10, depth: 2, threadNamePrefix: 'late' });
    for (const x of late) {
      expect(x.recorded).toBe(0);
      expect(x.closed).toBeGreaterThan(0);
      expect(x.errors).toBe(0);
    }
    expect(t.snapshot().length).toBe(after.length);
    expect(t.timelines().some((tl) => tl.name.startsWith('native: late'))).toBe(false);
  });

  it('a native thread that exits keeps its records and its timeline stays in the trace', async () => {
    const t = newTracer();
    const api = t.nativeApi();
    consumer.run(api, { threads: 1, spansPerThread: 500, depth: 5, threadNamePrefix: 'brief' });
    t.flush();
    // Later threads come and go; the first one's timeline and spans stay.
    consumer.run(api, { threads: 3, spansPerThread: 300, depth: 3, threadNamePrefix: 'later' });
    t.flush();
    const tl = timelineNamed(t, 'native: brief#0');
    expect(tl).toMatchObject({ kind: 'native', exited: true });
    const mine = t.snapshot().filter((s) => s.timeline === tl?.id);
    expect(mine).toHaveLength(500);
    expect(nestingProblems(mine)).toEqual([]);
    for (let i = 0; i < 3; i++) expect(timelineNamed(t, `native: later#${i}`)?.exited).toBe(true);

    // It is in the written trace too: thread-name metadata and its X events.
    const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-native-'));
    try {
      const file = path.join(dir, 'trace.json');
      await t.write(file);
      const doc = JSON.parse(readFileSync(file, 'utf8')) as {
        traceEvents: Array<{ ph: string; name: string; tid: number; args?: { name?: string } }>;
      };
      const meta = doc.traceEvents.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'native: brief#0');
      expect(meta).toBeDefined();
      const xs = doc.traceEvents.filter((e) => e.ph === 'X' && e.tid === meta?.tid);
      expect(xs).toHaveLength(500);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('native and JS timestamps share one axis', () => {
    const t = newTracer();
    const api = t.nativeApi();
    const bound = t.clockBoundMs;
    expect(bound).toBeGreaterThanOrEqual(0);
    expect(bound).toBeLessThan(1); // the calibration is far tighter than a ms
    for (let round = 0; round < 20; round++) {
      const js0 = performance.now();
      consumer.run(api, { threads: 1, spansPerThread: 1, depth: 1, threadNamePrefix: `axis${round}` });
      // A JS span begun after the native thread joined.
      t.begin('js.after');
      t.end();
      t.flush();
      const spans = t.snapshot();
      const nat = spans.find((s) => s.timelineName === `native: axis${round}#0`);
      const js = spans.filter((s) => s.name === 'js.after').at(-1);
      expect(nat).toBeDefined();
      expect(js).toBeDefined();
      if (!nat || !js) continue;
      // Native span started after a JS reading: never earlier than it.
      expect(nat.start).toBeGreaterThanOrEqual(js0 - bound);
      // And the JS span that followed the join starts after the native one ended.
      expect(js.start).toBeGreaterThanOrEqual(nat.end - bound);
    }
  });
});
