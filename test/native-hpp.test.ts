// native/include/hotspan.hpp, the C++ header over the C ABI, from two addons
// that include it: test/fixtures/hpp (nested scopes, a call site first used by
// many threads at once, a table that counts intern() calls) and the example in
// examples/native-addon. Each addon binds its own table (hotspan::attach).
// Nothing here depends on timing: counts, names, nesting and the order of
// sequential threads only.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Tracer } from '../lib/index';
import type { SpanRecord } from '../lib/index';
import { buildAddon } from './support/addon-build';
import { without } from './support/tools';

interface HppFixture {
  attach(api: unknown): string;
  detach(): void;
  bogusApi(abiVersion: number, structSize: number): unknown;
  countingApi(api: unknown): unknown;
  /** intern() calls through the counting table since the last call. */
  internCalls(): number;
  /** Per thread, how many outer scopes recorded. */
  nested(threads: number, chains: number, prefix: string): number[];
  firstUse(threads: number): void;
}
interface Example {
  attach(api: unknown): void;
  parallel(chunks: number, threads: number, chunkBytes: number): number;
  handoff(jobs: number): number;
}

const root = path.resolve(__dirname, '..');
const exampleDir = path.join(root, 'examples', 'native-addon');
const requireHere = createRequire(__filename);
const live: Tracer[] = [];
const scratch = mkdtempSync(path.join(tmpdir(), 'hotspan-hpp-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
afterEach(() => {
  for (const t of live.splice(0)) t.close();
});

function newTracer(): Tracer {
  const t = new Tracer({ backend: 'native', requireNative: true });
  live.push(t);
  return t;
}

function on(spans: readonly SpanRecord[], timelineName: string): SpanRecord[] {
  return spans.filter((s) => s.timelineName === timelineName);
}

/** Name counts per depth, e.g. { 'nest.outer@0': 10 }. */
function shape(spans: readonly SpanRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of spans) out[`${s.name}@${s.depth}`] = (out[`${s.name}@${s.depth}`] ?? 0) + 1;
  return out;
}

/** Spans whose parent is not on their timeline, one level up, named `parents[name]`, enclosing them. */
function badNesting(spans: readonly SpanRecord[], parents: Record<string, string>): string[] {
  const byId = new Map(spans.map((s) => [s.id, s]));
  const bad: string[] = [];
  for (const s of spans) {
    const want = parents[s.name];
    if (want === undefined) {
      if (s.parent !== 0) bad.push(`${s.name} #${s.id}: parent ${s.parent}, expected none`);
      continue;
    }
    const p = byId.get(s.parent);
    if (!p || p.name !== want || p.timeline !== s.timeline || p.depth !== s.depth - 1 || p.start > s.start || p.end < s.end) {
      bad.push(`${s.name} #${s.id}: parent ${p ? `${p.name} #${p.id}` : s.parent} does not enclose it as ${want}`);
    }
    if (bad.length > 10) break;
  }
  return bad;
}

describe.skipIf(without('c++'))('hotspan.hpp from native addons', () => {
  let hpp: HppFixture;
  let example: Example;
  beforeAll(() => {
    hpp = requireHere(buildAddon(path.join(__dirname, 'fixtures', 'hpp'), 'hpp')) as HppFixture;
    example = requireHere(buildAddon(exampleDir, 'example')) as Example;
  }, 300_000);

  it('records nothing before attach(), and attach() refuses a table it cannot use, saying why', () => {
    const t = newTracer();
    expect(hpp.nested(2, 10, 'unbound')).toEqual([0, 0]);
    expect(hpp.attach(undefined)).toMatch(/table pointer is null/);
    expect(hpp.attach(hpp.bogusApi(2, 4096))).toMatch(/ABI version is not the one/);
    expect(hpp.attach(hpp.bogusApi(1, 8))).toMatch(/table is smaller/);
    // Still unbound after the refusals.
    expect(hpp.nested(2, 10, 'unbound')).toEqual([0, 0]);
    t.flush();
    expect(t.snapshot()).toHaveLength(0);
    expect(t.timelines().filter((tl) => tl.kind === 'native')).toEqual([]);
  });

  it('HOTSPAN_SCOPE on 4 native threads: exact counts, names and nesting per thread', () => {
    const t = newTracer();
    expect(hpp.attach(t.nativeApi())).toBe('attached');
    const chains = 1_001;
    expect(hpp.nested(4, chains, 'nest')).toEqual([chains, chains, chains, chains]);
    t.flush();
    const spans = t.snapshot();
    expect(spans).toHaveLength(4 * 3 * chains);
    for (let i = 0; i < 4; i++) {
      const mine = on(spans, `native: nest#${i}`);
      expect(mine[0]?.timelineKind).toBe('native');
      expect(shape(mine)).toEqual({ 'nest.outer@0': chains, 'nest.mid@1': chains, 'nest.inner@2': chains });
      expect(badNesting(mine, { 'nest.mid': 'nest.outer', 'nest.inner': 'nest.mid' })).toEqual([]);
    }
  });

  it('the example: a HOTSPAN_SCOPE per chunk on 4 threads, async spans ended on another thread', () => {
    const t = newTracer();
    example.attach(t.nativeApi());
    example.parallel(64, 4, 256);
    const jobs = 50;
    expect(example.handoff(jobs)).toBe(jobs);
    t.flush();
    const spans = t.snapshot();
    for (let i = 0; i < 4; i++) {
      const mine = on(spans, `native: worker#${i}`);
      expect(shape(mine)).toEqual({ 'worker@0': 1, 'chunk@1': 16, 'chunk.checksum@2': 16 });
      expect(badNesting(mine, { chunk: 'worker', 'chunk.checksum': 'chunk' })).toEqual([]);
    }
    const produce = on(spans, 'native: producer');
    const finish = on(spans, 'native: finisher');
    expect(shape(produce)).toEqual({ 'produce@0': 1 });
    expect(shape(finish)).toEqual({ 'finish@0': 1 });
    const job = on(spans, 'track: jobs');
    expect(job).toHaveLength(jobs);
    expect(job.every((s) => s.name === 'job' && s.async && s.timelineKind === 'track')).toBe(true);
    // The producer thread had joined before the finisher began: every job
    // began inside "produce" and ended inside "finish", on the other thread.
    const [p, f] = [produce[0]!, finish[0]!];
    expect(p.end).toBeLessThanOrEqual(f.start);
    expect(job.filter((s) => s.start < p.start || s.start > p.end || s.end < f.start || s.end > f.end)).toEqual([]);
  });

  it('after close(): scopes, async spans and thread names record nothing and do not crash', () => {
    const t = newTracer();
    expect(hpp.attach(t.nativeApi())).toBe('attached');
    example.attach(t.nativeApi());
    expect(hpp.nested(2, 5, 'open')).toEqual([5, 5]);
    t.close();
    expect(hpp.nested(2, 100, 'closed')).toEqual([0, 0]);
    expect(example.handoff(10)).toBe(0);
    example.parallel(8, 2, 16);
    const spans = t.snapshot();
    expect(spans).toHaveLength(2 * 3 * 5);
    expect(spans.every((s) => s.timelineName.startsWith('native: open#'))).toBe(true);
    expect(t.timelines().filter((tl) => tl.kind !== 'js' && !tl.name.startsWith('native: open#'))).toEqual([]);
    // A new tracer attached after the closed one records again.
    const t2 = newTracer();
    expect(hpp.attach(t2.nativeApi())).toBe('attached');
    expect(hpp.nested(1, 3, 'again')).toEqual([3]);
    t2.flush();
    expect(shape(t2.snapshot())).toEqual({ 'nest.outer@0': 3, 'nest.mid@1': 3, 'nest.inner@2': 3 });
  });

  it('one HOTSPAN_SCOPE site first used by 8 threads at once: one name, interned at most once per thread, then never', () => {
    for (let round = 0; round < 10; round++) {
      const t = newTracer();
      // A new table each round: the site's first use under it.
      expect(hpp.attach(hpp.countingApi(t.nativeApi()))).toBe('attached');
      hpp.internCalls();
      hpp.firstUse(8);
      const first = hpp.internCalls();
      expect(first).toBeGreaterThanOrEqual(1);
      expect(first).toBeLessThanOrEqual(8);
      hpp.firstUse(8);
      expect(hpp.internCalls()).toBe(0);
      t.flush();
      const spans = t.snapshot();
      expect(shape(spans)).toEqual({ 'first.use@0': 16 });
      expect(new Set(spans.map((s) => s.timeline)).size).toBe(16);
      expect(t.snapshotColumns().names.filter((n) => n === 'first.use')).toHaveLength(1);
      t.close();
    }
  });

  it('attaching another tracer re-interns every site for it; re-attaching the first reuses its ids', () => {
    const a = newTracer();
    expect(hpp.attach(hpp.countingApi(a.nativeApi()))).toBe('attached');
    hpp.internCalls();
    expect(hpp.nested(1, 2, 'a')).toEqual([2]);
    expect(hpp.internCalls()).toBe(3); // nest.outer, nest.mid, nest.inner
    const b = newTracer();
    // Other names first, so B's ids for the nest.* names differ from A's.
    for (let i = 0; i < 7; i++) b.name(`pad.${i}`);
    expect(hpp.attach(b.nativeApi())).toBe('attached');
    expect(hpp.nested(1, 3, 'b')).toEqual([3]);
    expect(hpp.attach(hpp.countingApi(a.nativeApi()))).toBe('attached');
    expect(hpp.nested(1, 4, 'a')).toEqual([4]);
    a.flush();
    b.flush();
    expect(shape(a.snapshot())).toEqual({ 'nest.outer@0': 6, 'nest.mid@1': 6, 'nest.inner@2': 6 });
    expect(shape(b.snapshot())).toEqual({ 'nest.outer@0': 3, 'nest.mid@1': 3, 'nest.inner@2': 3 });
    expect(badNesting(b.snapshot(), { 'nest.mid': 'nest.outer', 'nest.inner': 'nest.mid' })).toEqual([]);
  });

  it('examples/native-addon: `npm start` (node run.js) writes the trace its README describes', () => {
    const file = path.join(scratch, 'example-trace.json');
    const r = spawnSync(process.execPath, ['run.js', file], { cwd: exampleDir, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: Array<{ ph: string; name: string; tid: number; args?: { name?: string } }> };
    const threads = new Map<number, string>();
    for (const e of doc.traceEvents) if (e.ph === 'M' && e.name === 'thread_name') threads.set(e.tid, e.args?.name ?? '');
    const counts: Record<string, number> = {};
    for (const e of doc.traceEvents) {
      if (e.ph === 'M') continue;
      const k = `${threads.get(e.tid)} ${e.name} ${e.ph}`;
      counts[k] = (counts[k] ?? 0) + 1;
    }
    const want: Record<string, number> = {
      'main main X': 1,
      'native: producer produce X': 1,
      'native: finisher finish X': 1,
      'track: jobs job b': 100,
      'track: jobs job e': 100,
    };
    for (let i = 0; i < 4; i++) {
      want[`native: worker#${i} worker X`] = 1;
      want[`native: worker#${i} chunk X`] = 16;
      want[`native: worker#${i} chunk.checksum X`] = 16;
    }
    expect(counts).toEqual(want);
  });
});
