// Exactness under load (issue 3): the main thread, 2 worker_threads workers
// (joined through the public Tracer.join) and 4 native threads (the hotspan.h
// consumer addon in test/fixtures/consumer) record into one tracer at the same
// time; after flush() every span is present exactly once, per-timeline counts
// match what each producer says it recorded, nesting is valid and every
// timestamp sits on the performance.now() axis. Plus the two ways a thread
// leaves: a worker terminated mid-span and native threads that exit.
//
// The bulk checks read the columnar snapshot the public snapshot() is built
// from (NativeSnapshot): a million frozen SpanRecord objects per round would
// dominate the run time. The public surface (snapshot(), timelines(), write())
// is checked on the smaller tests.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { Tracer } from '../lib/index';
import type { NativeSnapshot, NativeTracer } from '../lib/binding/native-binding';
import { internals } from '../lib/tracer/internal';
import { loadConsumer, type Consumer } from './support/consumer';

/** Messages from test/fixtures/exactness-worker.js. */
interface WorkerReady {
  ready: true;
  recorded?: number;
}
interface WorkerDone {
  done: true;
  recorded: number;
  t0: number;
  t1: number;
}

const root = path.join(__dirname, '..');
const dist = path.join(root, 'dist', 'index.js');
const workerScript = path.join(__dirname, 'fixtures', 'exactness-worker.js');

// Sizes per round. The native threads record until every JS producer is done
// and at least NATIVE_MIN spans are in, so a round holds at least
// MAIN + 2 * WORKER + NATIVE_MIN spans (asserted, not assumed).
const ROUNDS = 10;
const MAIN_SPANS = 250_000;
const WORKER_SPANS = 250_000;
const NATIVE_MIN = 260_000;
const MIN_PER_ROUND = 1_000_000;
// Different depths per producer kind: a record filed under the wrong thread shows
// up as a name that does not match its depth.
const MAIN_DEPTH = 5;
const WORKER_DEPTH = 4;
const NATIVE_DEPTH = 3;
const NATIVE_THREADS = 4;
const WORKERS = 2;
// Clock probes the main thread takes while everybody records (see checkProbes).
const PROBES = 50;

let consumer: Consumer;
let backgroundRunning = false;
const liveTracers: Tracer[] = [];
const liveWorkers: Worker[] = [];

beforeAll(() => {
  // vitest.config.mts builds it once as a globalSetup; this only checks it is current.
  consumer = loadConsumer();
}, 180_000);

afterEach(async () => {
  if (backgroundRunning) {
    backgroundRunning = false;
    consumer.stopBackground();
  }
  await Promise.all(liveWorkers.splice(0).map((w) => w.terminate()));
  for (const t of liveTracers.splice(0)) t.close();
});

function newTracer(): Tracer {
  const t = new Tracer({ backend: 'native', requireNative: true, threadName: 'main' });
  liveTracers.push(t);
  return t;
}

function nativeOf(t: Tracer): NativeTracer {
  const nt = t[internals]().native;
  if (!nt) throw new Error('expected the native backend');
  return nt;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface WorkerData {
  dist: string;
  token: string;
  threadName: string;
  mode: 'record' | 'spin';
  spans: number;
  depth: number;
  prefix: string;
}

/** Starts a worker and resolves with it once it posted { ready }. */
async function startWorker(data: WorkerData): Promise<{ worker: Worker; ready: WorkerReady }> {
  const worker = new Worker(workerScript, { workerData: data });
  liveWorkers.push(worker);
  const ready = await new Promise<WorkerReady>((resolve, reject) => {
    worker.once('message', (m: WorkerReady) => resolve(m));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`worker ${data.threadName} exited (${code}) before ready`)));
  });
  return { worker, ready };
}

function nextMessage<T>(worker: Worker): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    worker.once('message', (m: T) => resolve(m));
    worker.once('error', reject);
  });
}

function exited(worker: Worker): Promise<number> {
  return new Promise<number>((resolve) => worker.once('exit', resolve));
}

/** Records `count` spans on this thread as chains of `depth` nested spans named `${prefix}.d<level>`. */
function recordChains(t: Tracer, prefix: string, count: number, depth: number): number {
  const ids: number[] = [];
  for (let k = 0; k < depth; k++) ids.push(t.name(`${prefix}.d${k}`));
  let recorded = 0;
  while (recorded < count) {
    const d = Math.min(depth, count - recorded);
    for (let k = 0; k < d; k++) t.begin(ids[k]);
    for (let k = 0; k < d; k++) {
      t.end();
      recorded++;
    }
  }
  return recorded;
}

/** One thread that recorded into the tracer, as it reports itself. */
interface Producer {
  /** Its timeline's display name. */
  timeline: string;
  kind: 'js' | 'native';
  /** Spans it says it recorded (end() succeeded). */
  recorded: number;
  depth: number;
  /** Span names are `${prefix}.d<depth>`. */
  prefix: string;
  /** performance.now() readings taken before its first begin and after its last end. */
  t0: number;
  t1: number;
  /** Its thread has exited by the time of the check. */
  mustBeExited: boolean;
}

interface Observed {
  count: number;
  /** Earliest start and latest end on its timeline (ms). */
  first: number;
  last: number;
}

const SPAN_FIELDS = 6;

/** What the checks keep per timeline id (timeline ids are small integers). */
interface TimelineCheck {
  producer: Producer;
  observed: Observed;
  /** Expected name id per depth; -1: never interned. */
  levelNames: number[];
  maxLocal: number;
  /** local id -> record index + 1 (0: none). */
  slots: Int32Array;
}

/**
 * Checks a columnar snapshot against what the producers reported. Returns
 * the problems found (at most a few dozen) and what each timeline held.
 */
function checkSnapshot(
  snap: NativeSnapshot,
  producers: readonly Producer[],
  bound: number,
): { problems: string[]; observed: Map<string, Observed> } {
  const problems: string[] = [];
  const note = (p: string) => {
    if (problems.length < 40) problems.push(p);
  };
  const { fields, times, count } = snap;

  // Timeline id -> producer, by display name; each producer's timeline exists once.
  const byTimeline: Array<TimelineCheck | undefined> = [];
  const observed = new Map<string, Observed>();
  for (const p of producers) {
    const tls = snap.timelines.filter((tl) => tl.name === p.timeline);
    if (tls.length !== 1) {
      note(`timeline "${p.timeline}" listed ${tls.length} times`);
      continue;
    }
    const tl = tls[0];
    if (tl.kind !== p.kind) note(`timeline "${p.timeline}" has kind ${tl.kind}, expected ${p.kind}`);
    if (p.mustBeExited && !tl.exited) note(`timeline "${p.timeline}" is not marked exited`);
    const o: Observed = { count: 0, first: Infinity, last: -Infinity };
    observed.set(p.timeline, o);
    const levelNames: number[] = [];
    for (let k = 0; k < p.depth; k++) levelNames.push(snap.names.indexOf(`${p.prefix}.d${k}`));
    byTimeline[tl.id] = { producer: p, observed: o, levelNames, maxLocal: 0, slots: new Int32Array(0) };
  }

  // Pass 1: find each timeline's largest local id.
  for (let i = 0; i < count; i++) {
    const f = i * SPAN_FIELDS;
    const c = byTimeline[fields[f + 1]];
    const local = fields[f + 2];
    if (!c) {
      note(`record ${i} on timeline ${fields[f + 1]}, which no producer owns`);
      continue;
    }
    if (local === 0) note(`record ${i} on timeline ${fields[f + 1]} has local id 0`);
    if (local > c.maxLocal) c.maxLocal = local;
  }
  // A second record under one (timeline, local id) is a duplicate. Local ids
  // are small per timeline; the bound guards against a scheme that is not.
  for (const c of byTimeline) {
    if (!c) continue;
    if (c.maxLocal > 8 * count + 64) {
      note(`${c.producer.timeline}: local id ${c.maxLocal} out of proportion to ${count} records`);
      c.maxLocal = -1;
      continue;
    }
    c.slots = new Int32Array(c.maxLocal + 1);
  }
  for (let i = 0; i < count; i++) {
    const f = i * SPAN_FIELDS;
    const c = byTimeline[fields[f + 1]];
    if (!c || c.maxLocal < 0) continue;
    const local = fields[f + 2];
    if (c.slots[local] !== 0) note(`span ${fields[f + 1]}:${local} present more than once`);
    c.slots[local] = i + 1;
  }

  // Pass 2: every record against its producer and its parent.
  for (let i = 0; i < count; i++) {
    const f = i * SPAN_FIELDS;
    const tl = fields[f + 1];
    const c = byTimeline[tl];
    if (!c || c.maxLocal < 0) continue;
    const { producer: p, observed: o, slots } = c;
    const start = times[2 * i];
    const end = times[2 * i + 1];
    o.count++;
    if (start < o.first) o.first = start;
    if (end > o.last) o.last = end;
    const local = fields[f + 2];
    const depth = fields[f + 5] >>> 16;
    const flags = fields[f + 5] & 0xffff;
    if (flags !== 0) note(`${p.timeline} span ${local}: flags ${flags} (expected none: no error, abandoned or async)`);
    if (depth >= p.depth || fields[f] !== c.levelNames[depth]) {
      note(`${p.timeline} span ${local}: name ${snap.names[fields[f]]} at depth ${depth}`);
    }
    if (!(end >= start)) note(`${p.timeline} span ${local}: ends (${end}) before it starts (${start})`);
    // One axis: inside the producer's own performance.now() bracket.
    if (start < p.t0 - bound) {
      note(`${p.timeline} span ${local}: starts at ${start}, before the JS reading ${p.t0} taken before it`);
    }
    if (end > p.t1 + bound) {
      note(`${p.timeline} span ${local}: ends at ${end}, after the JS reading ${p.t1} taken after it`);
    }
    const parentTl = fields[f + 3];
    const parentLocal = fields[f + 4];
    if (depth === 0) {
      if (parentLocal !== 0 || parentTl !== 0) note(`${p.timeline} span ${local}: root with parent ${parentTl}:${parentLocal}`);
      continue;
    }
    if (parentTl !== tl) {
      note(`${p.timeline} span ${local}: parent on timeline ${parentTl}`);
      continue;
    }
    const j = parentLocal < slots.length ? slots[parentLocal] - 1 : -1;
    if (j < 0) {
      note(`${p.timeline} span ${local}: parent ${parentLocal} missing`);
      continue;
    }
    const parentDepth = fields[j * SPAN_FIELDS + 5] >>> 16;
    if (parentDepth !== depth - 1) {
      note(`${p.timeline} span ${local}: depth ${depth} under a parent of depth ${parentDepth}`);
    }
    if (times[2 * j] > start || times[2 * j + 1] < end) {
      note(`${p.timeline} span ${local}: [${start}, ${end}] not inside its parent's [${times[2 * j]}, ${times[2 * j + 1]}]`);
    }
  }
  return { problems, observed };
}

/**
 * A clock probe taken on the main thread while the native threads record:
 * `before` native spans had ended (their end() returned) before the JS reading
 * `at`, and no more than `after` had ended by the time `at` was read.
 */
interface Probe {
  before: number;
  at: number;
  after: number;
}

/**
 * The one-axis check at many points of a round, not only at its edges. For
 * each probe: the `before` spans counted before the reading ended before it
 * (so at least that many native spans end by at + bound); the spans not yet
 * counted after it ended after it, and all but those open at the reading (at
 * most depth per thread) also began after it, so at least
 * total - after - threads * depth native spans start at or after at - bound.
 * A native clock a few microseconds off the performance.now() axis breaks
 * one of the two at a busy probe.
 */
function checkProbes(
  snap: NativeSnapshot,
  nativeTimelines: ReadonlySet<number>,
  probes: readonly Probe[],
  total: number,
  bound: number,
): string[] {
  const problems: string[] = [];
  const open = NATIVE_THREADS * NATIVE_DEPTH;
  const P = probes.length;
  const isNative: boolean[] = [];
  for (const id of nativeTimelines) isNative[id] = true;
  // Probe readings are increasing. A start s is at or after probes [0, k)
  // (minus bound) where k is the first probe with at - bound > s; an end e is
  // by probes [k, P) (plus bound) where k is the first with at + bound >= e.
  // Histograms of those k give every probe's counts in one pass.
  const startHist = new Float64Array(P + 1);
  const endHist = new Float64Array(P + 1);
  const firstAbove = (x: number, off: number, inclusive: boolean): number => {
    let lo = 0;
    let hi = P;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const a = probes[mid].at + off;
      if (a < x || (!inclusive && a === x)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  for (let i = 0; i < snap.count; i++) {
    if (!isNative[snap.fields[i * SPAN_FIELDS + 1]]) continue;
    startHist[firstAbove(snap.times[2 * i], -bound, false)]++;
    endHist[firstAbove(snap.times[2 * i + 1], bound, true)]++;
  }
  let startedAfter = 0;
  for (let k = P; k > 0; k--) startedAfter += startHist[k];
  let endedBy = 0;
  for (let k = 0; k < P; k++) {
    const p = probes[k];
    endedBy += endHist[k];
    if (endedBy < p.before) {
      problems.push(`probe at ${p.at}: ${p.before} native spans had ended before it, only ${endedBy} end by then`);
    }
    const mustStartAfter = total - p.after - open;
    if (startedAfter < mustStartAfter) {
      problems.push(
        `probe at ${p.at}: ${total - p.after} native spans ended after it (at most ${open} of them open at it), ` +
          `only ${startedAfter} start at or after it`,
      );
    }
    startedAfter -= startHist[k + 1];
  }
  return problems;
}

interface RoundResult {
  total: number;
  seconds: number;
  native: number;
}

/** One round of the concurrent scenario, with a fresh tracer. */
async function loadRound(round: number): Promise<RoundResult> {
  const began = performance.now();
  const t = newTracer();
  const nt = nativeOf(t);
  const token = t.share();
  const api = t.nativeApi();
  const bound = t.clockBoundMs;

  // Workers first: loading the facade takes a while, and they wait for 'go'.
  const workers = await Promise.all(
    Array.from({ length: WORKERS }, (_, w) =>
      startWorker({
        dist,
        token,
        threadName: `ex${round}.w${w}`,
        mode: 'record',
        spans: WORKER_SPANS,
        depth: WORKER_DEPTH,
        prefix: `ex.w${w}`,
      }),
    ),
  );
  const workerDone = workers.map(({ worker }) => nextMessage<WorkerDone>(worker));
  const workerExit = workers.map(({ worker }) => exited(worker));

  // Start everybody, then record the main thread's share while they run. Main
  // records one chain before anybody starts and one after everybody has
  // recorded (below), so its recording spans theirs however they are scheduled.
  const m0 = performance.now();
  let mainRecorded = recordChains(t, 'ex.main', MAIN_DEPTH, MAIN_DEPTH);
  const r0 = performance.now();
  consumer.startBackground(api, {
    threads: NATIVE_THREADS,
    depth: NATIVE_DEPTH,
    pauseUs: 0,
    threadNamePrefix: `ex${round}.n`,
  });
  backgroundRunning = true;
  for (const { worker } of workers) worker.postMessage('go');
  const probes: Probe[] = [];
  for (let k = 0; k < PROBES; k++) {
    mainRecorded += recordChains(t, 'ex.main', MAIN_SPANS / PROBES, MAIN_DEPTH);
    const before = consumer.backgroundRecorded();
    const at = performance.now();
    probes.push({ before, at, after: consumer.backgroundRecorded() });
  }

  const done = await Promise.all(workerDone);
  while (consumer.backgroundRecorded() < NATIVE_MIN) await sleep(1);
  while (consumer.backgroundStarted() < NATIVE_THREADS) await sleep(1);
  mainRecorded += recordChains(t, 'ex.main', MAIN_DEPTH, MAIN_DEPTH);
  const m1 = performance.now();
  backgroundRunning = false;
  const tallies = consumer.stopBackground(); // joins: the native threads have exited
  const r1 = performance.now();
  expect(await Promise.all(workerExit)).toEqual(done.map(() => 0));

  t.flush();
  expect(nt.pending()).toBe(0);
  const snap = nt.snapshot();

  for (const x of tallies) expect(x).toMatchObject({ closed: 0, errors: 0, okAfterClosed: 0 });
  const producers: Producer[] = [
    {
      timeline: 'main',
      kind: 'js',
      recorded: mainRecorded,
      depth: MAIN_DEPTH,
      prefix: 'ex.main',
      t0: m0,
      t1: m1,
      mustBeExited: false,
    },
    ...done.map(
      (d, w): Producer => ({
        timeline: `ex${round}.w${w}`,
        kind: 'js',
        recorded: d.recorded,
        depth: WORKER_DEPTH,
        prefix: `ex.w${w}`,
        t0: d.t0,
        t1: d.t1,
        mustBeExited: true, // its 'exit' event was awaited above
      }),
    ),
    ...tallies.map(
      (x, i): Producer => ({
        timeline: `native: ex${round}.n#${i}`,
        kind: 'native',
        recorded: x.recorded,
        depth: NATIVE_DEPTH,
        prefix: 'consumer',
        t0: r0,
        t1: r1,
        mustBeExited: true,
      }),
    ),
  ];
  expect(tallies.map((x) => x.name)).toEqual(producers.slice(1 + WORKERS).map((p) => p.timeline.slice(8)));
  expect(mainRecorded).toBe(MAIN_SPANS + 2 * MAIN_DEPTH);
  expect(done.map((d) => d.recorded)).toEqual(done.map(() => WORKER_SPANS));

  const { problems, observed } = checkSnapshot(snap, producers, bound);
  expect(problems).toEqual([]);
  // Per timeline: exactly what its producer recorded; in all: nothing else.
  const counts = producers.map((p) => [p.timeline, observed.get(p.timeline)?.count]);
  expect(counts).toEqual(producers.map((p) => [p.timeline, p.recorded]));
  const total = producers.reduce((n, p) => n + p.recorded, 0);
  expect(snap.count).toBe(total);
  expect(total).toBeGreaterThanOrEqual(MIN_PER_ROUND);
  const native = tallies.reduce((n, x) => n + x.recorded, 0);
  expect(native).toBeGreaterThanOrEqual(NATIVE_MIN);
  const nativeIds = new Set(snap.timelines.filter((tl) => tl.kind === 'native').map((tl) => tl.id));
  expect(nativeIds.size).toBe(NATIVE_THREADS);
  // The probes saw the native threads at work (else they would check nothing).
  expect(probes.filter((p) => p.before > 0 && p.after < native).length).toBeGreaterThan(0);
  expect(checkProbes(snap, nativeIds, probes, native, bound)).toEqual([]);

  // Concurrency really happened: every other producer recorded while the
  // main thread was recording (their recorded intervals overlap main's).
  const main = observed.get('main');
  expect(main).toBeDefined();
  if (main) {
    const apart = producers
      .slice(1)
      .filter((p) => {
        const o = observed.get(p.timeline);
        return !o || o.first > main.last || o.last < main.first;
      })
      .map((p) => p.timeline);
    expect(apart).toEqual([]);
  }
  t.close();
  return { total, native, seconds: (performance.now() - began) / 1000 };
}

describe('exactness under load: main thread, 2 workers and 4 native threads at once', () => {
  const results: RoundResult[] = [];

  it.each(Array.from({ length: ROUNDS }, (_, i) => i))('round %i: every span exactly once, nested, on one axis', async (round) => {
    results.push(await loadRound(round));
  });

  it('recorded at least 1M spans in every round', () => {
    expect(results).toHaveLength(ROUNDS);
    expect(results.filter((r) => r.total < MIN_PER_ROUND)).toEqual([]);
    const summary = results.map((r) => `${r.total} (${r.native} native) in ${r.seconds.toFixed(2)} s`);
    console.log(`exactness rounds: ${summary.join('; ')}`);
  });
});

interface ChromeEvent {
  name: string;
  ph: string;
  tid: number;
  ts?: number;
  dur?: number;
  args?: { name?: string; span_id?: number; parent_id?: number; abandoned?: boolean };
}

async function writeAndRead(t: Tracer): Promise<ChromeEvent[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-exact-'));
  try {
    const file = path.join(dir, 'trace.json');
    await t.write(file);
    return (JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: ChromeEvent[] }).traceEvents;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The thread_name metadata event's tid for a timeline name; undefined when absent or listed twice. */
function tidOf(events: readonly ChromeEvent[], name: string): number | undefined {
  const m = events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === name);
  return m.length === 1 ? m[0].tid : undefined;
}

describe('threads that leave while others record', () => {
  it('a worker terminated mid-span (Tracer.join): open spans end abandoned, nothing committed is lost', async () => {
    const t = newTracer();
    // Native threads and the main thread keep recording around it.
    consumer.startBackground(t.nativeApi(), { threads: 2, depth: 2, pauseUs: 20, threadNamePrefix: 'around' });
    backgroundRunning = true;
    const committed = 5_003;
    const { worker, ready } = await startWorker({
      dist,
      token: t.share(),
      threadName: 'doomed',
      mode: 'spin',
      spans: committed,
      depth: 3,
      prefix: 'term',
    });
    expect(ready.recorded).toBe(committed);
    recordChains(t, 'term.main', 3_000, 2);
    await sleep(30); // the worker spins inside 'term.held'
    t.flush();
    const before = t.snapshot().filter((s) => s.timelineName === 'doomed');
    const spunBefore = before.filter((s) => s.name === 'term.d1' && s.depth === 1 && s.parent !== 0).length;

    const code = await worker.terminate();
    expect(code).toBe(1); // terminated, not a normal exit
    t.flush();
    backgroundRunning = false;
    const tallies = consumer.stopBackground();
    t.flush();

    // The process survived and the tracer still records on this thread.
    recordChains(t, 'term.after', 10, 2);
    const spans = t.snapshot();
    expect(spans.filter((s) => s.name.startsWith('term.after.')).length).toBe(10);

    const mine = spans.filter((s) => s.timelineName === 'doomed');
    // Every span committed before the terminate is still there, unchanged.
    const byId = new Map(mine.map((s) => [s.id, s]));
    const lost = before.filter((s) => {
      const a = byId.get(s.id);
      return !a || a.start !== s.start || a.end !== s.end || a.name !== s.name || a.abandoned;
    });
    expect(lost.slice(0, 5)).toEqual([]);
    expect(before.length).toBeGreaterThanOrEqual(committed);
    // It was terminated inside the loop, not before it.
    expect(spunBefore).toBeGreaterThan(0);
    expect(new Set(mine.map((s) => s.id)).size).toBe(mine.length);

    // The held span: once, at depth 0, ended at the terminate and flagged abandoned.
    const held = mine.filter((s) => s.name === 'term.held');
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ depth: 0, parent: 0, abandoned: true, error: false });
    // At most one other span was open (a loop span at depth 1); it is abandoned too, inside held.
    const abandoned = mine.filter((s) => s.abandoned && s.name !== 'term.held');
    expect(abandoned.length).toBeLessThanOrEqual(1);
    for (const s of abandoned) expect(s).toMatchObject({ name: 'term.d1', depth: 1, parent: held[0].id });
    // The chains recorded before 'held' are complete; the loop spans nest inside it.
    const chains = mine.filter((s) => s.end <= held[0].start);
    expect(chains.length).toBe(committed);
    expect(chains.some((s) => s.abandoned)).toBe(false);
    const loop = mine.filter((s) => s.start >= held[0].start && s !== held[0]);
    expect(loop.length).toBe(mine.length - committed - 1);
    expect(loop.filter((s) => s.parent !== held[0].id || s.depth !== 1 || s.end > held[0].end).slice(0, 5)).toEqual([]);
    // Its timeline stays listed, marked exited.
    const doomed = t.timelines().filter((tl) => tl.name === 'doomed');
    expect(doomed).toEqual([expect.objectContaining({ kind: 'js', exited: true })]);

    // The native recorders around it lost nothing either.
    for (let i = 0; i < tallies.length; i++) {
      expect(tallies[i]).toMatchObject({ closed: 0, errors: 0 });
      expect(spans.filter((s) => s.timelineName === `native: around#${i}`).length).toBe(tallies[i].recorded);
    }

    // The written trace says so too.
    const events = await writeAndRead(t);
    const tid = tidOf(events, 'doomed');
    expect(tid).toBeDefined();
    const xs = events.filter((e) => e.ph === 'X' && e.tid === tid);
    expect(xs.length).toBe(mine.length);
    const flagged = xs.filter((e) => e.args?.abandoned === true).map((e) => e.args?.span_id);
    expect(flagged.sort()).toEqual(mine.filter((s) => s.abandoned).map((s) => s.id).sort());
  });

  it('native threads that exit keep their records and timelines (snapshot, timelines, written JSON)', async () => {
    const t = newTracer();
    const token = t.share();
    // A worker records throughout; the native threads come and go meanwhile.
    const { worker } = await startWorker({
      dist,
      token,
      threadName: 'steady',
      mode: 'record',
      spans: 200_000,
      depth: 2,
      prefix: 'steady',
    });
    const workerDone = nextMessage<WorkerDone>(worker);
    worker.postMessage('go');
    const api = t.nativeApi();
    const r0 = performance.now();
    const first = consumer.run(api, { threads: 2, spansPerThread: 20_011, depth: 4, threadNamePrefix: 'gone' });
    const mainRecorded = recordChains(t, 'exit.main', 20_000, 3);
    const later = consumer.run(api, { threads: 3, spansPerThread: 7_001, depth: 2, threadNamePrefix: 'later' });
    const r1 = performance.now();
    const done = await workerDone;
    t.flush();

    const spans = t.snapshot();
    const timelines = t.timelines();
    const events = await writeAndRead(t);
    const bound = t.clockBoundMs;
    for (const x of [...first, ...later]) {
      expect(x).toMatchObject({ closed: 0, errors: 0 });
      const name = `native: ${x.name}`;
      const tl = timelines.filter((tl) => tl.name === name);
      expect(tl, name).toEqual([expect.objectContaining({ kind: 'native', exited: true })]);
      const mine = spans.filter((s) => s.timeline === tl[0]?.id);
      expect(mine.length, name).toBe(x.recorded);
      expect(mine.filter((s) => s.start < r0 - bound || s.end > r1 + bound).slice(0, 5)).toEqual([]);
      // In the written JSON: its thread_name event, and one X event per span, same ids.
      const tid = tidOf(events, name);
      expect(tid, name).toBe(tl[0]?.id);
      const ids = events.filter((e) => e.ph === 'X' && e.tid === tid).map((e) => e.args?.span_id);
      expect(ids.length, name).toBe(x.recorded);
      expect(new Set(ids)).toEqual(new Set(mine.map((s) => s.id)));
    }
    expect(first.map((x) => x.recorded)).toEqual([20_011, 20_011]);
    expect(later.map((x) => x.recorded)).toEqual([7_001, 7_001, 7_001]);
    expect(spans.filter((s) => s.timelineName === 'main').length).toBe(mainRecorded);
    expect(spans.filter((s) => s.timelineName === 'steady').length).toBe(done.recorded);
    expect(spans.length).toBe(mainRecorded + done.recorded + 2 * 20_011 + 3 * 7_001);
  });
});
