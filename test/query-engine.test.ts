// query() is evaluated by the core (native/core/read/snapshot_query.h) on both
// backends: the addon reads the stored records, the js backend hands its
// columns to the same C++ built to WebAssembly. Its answers must be the ones
// the TypeScript implementation gave before (test/support/query-reference.ts,
// fed with the snapshot of the same moment), on random traces with nested
// groups, nested spans, overlapping async spans on tracks, ties and
// multiple timelines: every record, count, time, gap and error text.
import { describe, expect, it } from 'vitest';

import type { SpanRecord, Tracer } from '../lib/index';
import type { GroupView as CoreGroupView, Query as CoreQuery, SpanList as CoreSpanList } from '../lib/read/query';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { Query as RefQuery, type GroupView as RefGroupView, type SpanList as RefSpanList } from './support/query-reference';
import { tracerFactory } from './support/tracers';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';

/** mulberry32: a small seeded generator, so a failure replays. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ['a', 'b', 'c', 'never-used'];
const GROUPS = ['step', 'phase', 'inner'];

/** Records a random trace; `tick` advances the js backend's clock (0: a tie). */
async function record(t: Tracer, seed: number, steps: number, tick: (ms: number) => void): Promise<void> {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  for (const n of NAMES) t.name(n);
  const tracks = [t.track('gpu0', { serial: true }), t.track('net'), t.track('io')];
  let depth = 0;
  let groups = 0;
  const pending: Array<(v: undefined) => void> = [];
  for (let i = 0; i < steps; i++) {
    tick(r() < 0.2 ? 0 : Math.floor(r() * 4) * 0.25);
    const x = r();
    if (x < 0.12 && groups < 3) {
      t.groupBegin(GROUPS[groups]);
      groups++;
    } else if (x < 0.2 && groups > 0) {
      t.groupEnd();
      groups--;
    } else if (x < 0.5 && depth < 5) {
      t.begin(pick(NAMES.slice(0, 3)));
      depth++;
    } else if (x < 0.75 && depth > 0) {
      t.end();
      depth--;
    } else if (x < 0.88) {
      void t.traceAsync(pick(NAMES.slice(0, 3)), new Promise<undefined>((res) => pending.push(res)), { track: pick(tracks) });
    } else if (pending.length > 0) {
      pending.splice(Math.floor(r() * pending.length), 1)[0](undefined);
      await new Promise((res) => setImmediate(res));
    }
  }
  while (depth-- > 0) t.end();
  // A group left open is not committed: the query must not see it either.
  while (groups-- > 1) t.groupEnd();
  for (const res of pending.splice(0, pending.length - 2)) res(undefined);
  await new Promise((res) => setImmediate(res));
  t.flush();
}

function close(a: number, b: number): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

/** Both answers (or both errors) alike: numbers within 1e-9 relative (the sums' order differs), all else equal. */
function same(label: string, ref: () => unknown, got: () => unknown): void {
  let a: unknown;
  let b: unknown;
  let ea: unknown;
  let eb: unknown;
  try {
    a = ref();
  } catch (e) {
    ea = e;
  }
  try {
    b = got();
  } catch (e) {
    eb = e;
  }
  if (ea !== undefined || eb !== undefined) {
    expect(eb === undefined ? 'no error' : String(eb), label).toBe(ea === undefined ? 'no error' : String(ea));
    expect((eb as Error).constructor.name, label).toBe((ea as Error).constructor.name);
    return;
  }
  if (typeof a === 'number') {
    expect(typeof b, label).toBe('number');
    expect(close(a, b as number), `${label}: ${String(b)} vs ${String(a)}`).toBe(true);
  } else if (Array.isArray(a) && typeof a[0] === 'number') {
    const bs = b as number[];
    expect(bs.length, label).toBe(a.length);
    a.forEach((v: number, k) => expect(close(v, bs[k]), `${label}[${String(k)}]: ${String(bs[k])} vs ${String(v)}`).toBe(true));
  } else {
    expect(b, label).toEqual(a);
  }
}

let checks = 0;

function compareList(label: string, ref: RefSpanList, got: CoreSpanList): void {
  checks++;
  same(`${label}.records`, () => ref.records, () => got.records);
  same(`${label}.iterate`, () => [...ref], () => [...got]);
  same(`${label}.count`, () => ref.count, () => got.count);
  for (const k of [0, 1, 2, 7, -1, -2, -3, 1e6, -1e6, 1.5]) same(`${label}.nth(${String(k)})`, () => ref.nth(k), () => got.nth(k));
  same(`${label}.first`, () => ref.first(), () => got.first());
  same(`${label}.last`, () => ref.last(), () => got.last());
  same(`${label}.durations`, () => ref.durations(), () => got.durations());
  same(`${label}.total`, () => ref.total(), () => got.total());
  same(`${label}.mean`, () => ref.mean(), () => got.mean());
  same(`${label}.min`, () => ref.min(), () => got.min());
  same(`${label}.max`, () => ref.max(), () => got.max());
  same(`${label}.busy`, () => ref.busy(), () => got.busy());
  same(`${label}.gaps`, () => ref.gaps(), () => got.gaps());
  for (const n of ['a', 'b', 'nope']) {
    same(`${label}.named(${n}).records`, () => ref.named(n).records, () => got.named(n).records);
    same(`${label}.named(${n}).total`, () => ref.named(n).total(), () => got.named(n).total());
  }
}

function compareGroup(label: string, ref: RefGroupView, got: CoreGroupView, deep: boolean): void {
  same(`${label}.record`, () => ref.record, () => got.record);
  same(`${label}.name/start/end/duration`, () => [ref.name, ref.start, ref.end, ref.duration], () => [got.name, got.start, got.end, got.duration]);
  compareList(`${label}.spans()`, ref.spans(), got.spans());
  for (const n of ['a', 'c', 'nope']) {
    compareList(`${label}.spans(${n})`, ref.spans(n), got.spans(n));
    same(`${label}.gaps(${n})`, () => ref.gaps(n), () => got.gaps(n));
    same(`${label}.idle(${n})`, () => ref.idle(n), () => got.idle(n));
  }
  same(`${label}.gaps()`, () => ref.gaps(), () => got.gaps());
  same(`${label}.idle()`, () => ref.idle(), () => got.idle());
  for (const n of [undefined, 'inner', 'phase']) {
    const rs = ref.groups(n);
    const gs = got.groups(n);
    same(`${label}.groups(${String(n)}).all`, () => rs.all().map((g) => g.record), () => gs.all().map((g) => g.record));
    same(`${label}.groups(${String(n)}).durations`, () => rs.durations(), () => gs.durations());
    if (deep && rs.count > 0) compareGroup(`${label}.groups(${String(n)}).last()`, rs.last(), gs.last(), false);
  }
}

function compareQuery(label: string, ref: RefQuery, got: CoreQuery, spans: readonly SpanRecord[]): void {
  same(`${label}.timelines`, () => ref.timelines(), () => got.timelines());
  compareList(`${label}.spans()`, ref.spans(), got.spans());
  for (const n of NAMES) compareList(`${label}.spans(${n})`, ref.spans(n), got.spans(n));
  same(`${label}.groupRecords`, () => ref.groupRecords(), () => got.groupRecords());
  for (const g of [...GROUPS, 'nope']) {
    const rs = ref.group(g);
    const gs = got.group(g);
    same(`${label}.group(${g}).count`, () => rs.count, () => gs.count);
    same(`${label}.group(${g}).durations`, () => rs.durations(), () => gs.durations());
    same(`${label}.group(${g}).all`, () => rs.all().map((v) => v.record), () => gs.all().map((v) => v.record));
    for (const k of [0, 1, -1, 99, 0.5]) same(`${label}.group(${g}).nth(${String(k)})`, () => rs.nth(k).record, () => gs.nth(k).record);
    same(`${label}.group(${g}).first`, () => rs.first().record, () => gs.first().record);
    for (let k = 0; k < Math.min(rs.count, 4); k++) compareGroup(`${label}.group(${g}).nth(${String(k)})`, rs.nth(k), gs.nth(k), true);
  }
  same(`${label}.groups().all`, () => ref.groups().all().map((v) => v.record), () => got.groups().all().map((v) => v.record));
  for (const s of spans) same(`${label}.groupOf(${String(s.id)})`, () => ref.groupOf(s)?.record, () => got.groupOf(s)?.record);
}

async function check(t: Tracer, seed: number, steps: number, tick: (ms: number) => void): Promise<void> {
  await record(t, seed, steps, tick);
  const snap = t.snapshot();
  const ref = new RefQuery(snap, t.timelines());
  const got = t.query();
  expect(snap.length).toBeGreaterThan(steps / 4);
  expect(got.groupRecords().length).toBeGreaterThan(0);
  compareQuery('query', ref, got, snap);
  for (const tl of t.timelines()) {
    compareQuery(`timeline(${tl.name})`, ref.timeline(tl.id), got.timeline(tl.id), []);
    const other = t.timelines().find((x) => x.id !== tl.id);
    if (other) compareList(`timeline(${tl.name}).timeline(${other.name})`, ref.timeline(tl.id).timeline(other.id).spans(), got.timeline(tl.id).timeline(other.id).spans());
  }
  same('timeline(gpu0)', () => ref.timeline('gpu0').spans().records, () => got.timeline('gpu0').spans().records);
  same('timeline(nope)', () => ref.timeline('nope'), () => got.timeline('nope'));
  same('group(1)', () => ref.group(1 as unknown as string), () => got.group(1 as unknown as string));
}

describe.each([
  ['native', skipNative],
  ['js', false],
] as const)('query() evaluated by the core, %s backend', (backend, skip) => {
  const make = tracerFactory(backend);

  it.skipIf(skip).each([1, 2, 3])('answers as the TypeScript implementation did on random trace %i', async (seed) => {
    if (backend === 'js') {
      let now = 1000;
      await check(make({ clock: () => now }), seed, 700, (ms) => (now += ms));
    } else {
      await check(make(), seed, 700, () => {});
    }
    expect(checks).toBeGreaterThan(100);
  });

  it.skipIf(skip)('answers on an empty trace', () => {
    const t = make();
    const snap = t.snapshot();
    expect(snap).toEqual([]);
    compareQuery('empty', new RefQuery(snap, t.timelines()), t.query(), []);
  });

  it.skipIf(skip)('keeps answering from the moment query() was called', () => {
    const t = make();
    t.trace('a', () => {});
    const q = t.query();
    t.trace('a', () => {});
    t.trace('b', () => {});
    expect(q.spans().count).toBe(1);
    expect(q.spans('b').records).toEqual([]);
    expect(t.query().spans().count).toBe(3);
  });

  it.skipIf(skip)('names the bad argument', () => {
    const t = make();
    t.trace('a', () => {});
    const q = t.query();
    expect(() => q.spans(3 as unknown as string)).toThrow(/span name must be a string, got number 3/);
    expect(() => q.spans().named(null as unknown as string)).toThrow(TypeError);
    expect(() => q.spans().nth('1' as unknown as number)).toThrow(/index must be an integer, got string "1"/);
    expect(() => q.groupOf(7 as unknown as SpanRecord)).toThrow(/groupOf\(\) needs a span record, got number 7/);
  });
});
