// tracer.profile() on joined workers (issue 34): the owner's profile runs on
// every worker joined to its tracer, each sampled by its own V8 profiler, and
// their samples land on the worker's own track. The waits are explicit
// messages; machine load changes how many samples there are (a starved
// sampler may take none: the scenario then runs again), not where they land.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';

import { buildReport } from '../lib/cli/report';
import { loadNativeAddon } from '../lib/binding/native-loader';
import type { Tracer } from '../lib/index';
import { tracerFactory } from './support/tracers';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-cpu-profile-workers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const fixture = path.join(__dirname, 'fixtures', 'profile-worker.js');

interface ChromeEvent {
  name: string;
  ph: string;
  ts: number;
  tid: number;
  id?: string;
  args?: Record<string, unknown>;
}
interface ChunkNode {
  id: number;
  parent?: number;
  callFrame: { functionName: string };
}

/** Per sample its thread (tid) and the function names on its stack. */
function samplesOf(events: ChromeEvent[]): Array<{ tid: number; stack: string[] }> {
  const out: Array<{ tid: number; stack: string[] }> = [];
  const nodes = new Map<string, Map<number, ChunkNode>>();
  for (const e of events) {
    if (e.ph !== 'P' || e.name !== 'ProfileChunk') continue;
    const key = `${e.tid}/${e.id ?? ''}`;
    let byId = nodes.get(key);
    if (byId === undefined) nodes.set(key, (byId = new Map()));
    const data = (e.args as { data: { cpuProfile: { nodes?: ChunkNode[]; samples?: number[] } } }).data;
    for (const n of data.cpuProfile.nodes ?? []) byId.set(n.id, n);
    for (const id of data.cpuProfile.samples ?? []) {
      const stack: string[] = [];
      for (let n = byId.get(id); n !== undefined; n = n.parent === undefined ? undefined : byId.get(n.parent)) stack.push(n.callFrame.functionName);
      out.push({ tid: e.tid, stack });
    }
  }
  return out;
}

const tidOf = (events: ChromeEvent[], thread: string): number | undefined =>
  events.find((e) => e.ph === 'M' && e.name === 'thread_name' && (e.args as { name?: string }).name === thread)?.tid;

function mainBurn(): number {
  const end = performance.now() + 20;
  let x = 0;
  while (performance.now() < end) for (let i = 0; i < 20_000; i++) x = (x * 61 + i) | 0;
  return x;
}

async function exited(w: Worker): Promise<void> {
  const [code] = (await once(w, 'exit')) as [number];
  expect(code).toBe(0);
}

/** Runs `scenario` on fresh tracers until the worker's samples hold workerBurn (at most 10 times); its trace file. */
async function untilWorkerSampled(make: () => Tracer, name: string, scenario: (t: Tracer, thread: string) => Promise<void>): Promise<{ file: string; events: ChromeEvent[] }> {
  for (let round = 0; ; round++) {
    const t = make();
    const thread = `profiled worker ${round}`;
    await scenario(t, thread);
    const file = path.join(tmp, name);
    await t.write(file);
    t.close();
    const events = (JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: ChromeEvent[] }).traceEvents;
    const tid = tidOf(events, thread);
    if (samplesOf(events).some((s) => s.tid === tid && s.stack.includes('workerBurn')) || round === 9) return { file, events };
  }
}

function checkTracks(events: ChromeEvent[], workerThread: string): void {
  const workerTid = tidOf(events, workerThread);
  const mainTid = events.find((e) => e.ph === 'X' && e.name === 'main.busy')?.tid;
  expect(workerTid).toBeDefined();
  expect(mainTid).toBeDefined();
  expect(workerTid).not.toBe(mainTid);
  const samples = samplesOf(events);
  const workerBurns = samples.filter((s) => s.stack.includes('workerBurn'));
  expect(workerBurns.length).toBeGreaterThan(0);
  // The worker's function only on the worker's track, the main thread's only on the main's.
  for (const s of workerBurns) expect(s.tid).toBe(workerTid);
  for (const s of samples.filter((x) => x.stack.includes('mainBurn'))) expect(s.tid).toBe(mainTid);
}

describe.skipIf(skipNative)('tracer.profile() on joined workers, native backend', () => {
  const make = tracerFactory('native');

  it('a worker that joins a profiling tracer is sampled from its join; its samples land on its track', async () => {
    let last = '';
    const { file, events } = await untilWorkerSampled(() => make({ threadName: 'main' }), 'join-profiling.json', async (t, thread) => {
      last = thread;
      const h = t.profile({ intervalUs: 100 });
      const w = new Worker(fixture, { workerData: { token: t.share(), threadName: thread, rounds: 10, mode: 'close' } });
      t.trace('main.busy', mainBurn);
      // close() stops the worker's profile and hands its samples over.
      expect((await once(w, 'message'))[0]).toBe('closed');
      await exited(w);
      h.stop();
    });
    checkTracks(events, last);
    // The report matches the worker's samples with the worker's spans.
    const busy = buildReport(file, 10, 'total').names.find((x) => x.name === 'worker.busy');
    expect(busy?.hotFunctions?.[0]?.function).toBe('workerBurn');
  });

  it('a worker that exits without close() hands its samples over at its exit', async () => {
    let last = '';
    const { events } = await untilWorkerSampled(() => make({ threadName: 'main' }), 'exit.json', async (t, thread) => {
      last = thread;
      const h = t.profile({ intervalUs: 100 });
      const w = new Worker(fixture, { workerData: { token: t.share(), threadName: thread, rounds: 10, mode: 'exit' } });
      t.trace('main.busy', mainBurn);
      expect((await once(w, 'message'))[0]).toBe('closed');
      await exited(w);
      h.stop();
    });
    checkTracks(events, last);
  });

  it('a worker joined before the profile starts follows it, and hands its samples over when it stops', async () => {
    let last = '';
    const { events } = await untilWorkerSampled(() => make({ threadName: 'main' }), 'follow.json', async (t, thread) => {
      last = thread;
      const w = new Worker(fixture, { workerData: { token: t.share(), threadName: thread, rounds: 10, mode: 'follow' } });
      expect((await once(w, 'message'))[0]).toBe('joined');
      const h = t.profile({ intervalUs: 100 });
      w.postMessage('go');
      t.trace('main.busy', mainBurn);
      expect((await once(w, 'message'))[0]).toBe('burned');
      h.stop();
      // The worker is alive and its tracer open: the stop alone hands its samples over.
      w.postMessage('finish');
      expect((await once(w, 'message'))[0]).toBe('flushed');
      w.postMessage('exit');
      await exited(w);
    });
    checkTracks(events, last);
  });

  it('a worker that joins after the profile stopped is not sampled', async () => {
    const t = make({ threadName: 'main' });
    t.profile({ intervalUs: 100 }).stop();
    const w = new Worker(fixture, { workerData: { token: t.share(), threadName: 'late worker', rounds: 3, mode: 'close' } });
    expect((await once(w, 'message'))[0]).toBe('closed');
    await exited(w);
    const file = path.join(tmp, 'late.json');
    await t.write(file);
    const events = (JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: ChromeEvent[] }).traceEvents;
    const tid = tidOf(events, 'late worker');
    expect(tid).toBeDefined();
    expect(events.some((e) => e.ph === 'X' && e.tid === tid && e.name === 'worker.busy')).toBe(true);
    expect(samplesOf(events).filter((s) => s.tid === tid)).toEqual([]);
  });
});
