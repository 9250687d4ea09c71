// The recording core built to WebAssembly (lib/binding/wasm-recorder.ts over
// native/wasm/record_exports.cc): the addon's tracer, timelines, budget,
// tracks and groups on one thread. Times are given, so every written time is
// known exactly; both formats are read back with the report's reader.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { readTrace } from '../lib/cli/read-trace';
import type { RecordingCounts, TraceSpan, TraceTimeline } from '../lib/cli/trace-model';
import { WasmRecorder } from '../lib/binding/wasm-recorder';

const ORIGIN_NS = 5_000_000_000n;
const CLOCKS = { monotonicNs: ORIGIN_NS + 1_000_000_000n, realtimeNs: 1_700_000_000_000_000_000n };
const OK = 0;
const CLOSED = 1;
const NO_OPEN_SPAN = 2;
const MIB = 1 << 20;

const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-wasm-recorder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Read {
  spans: TraceSpan[];
  timelines: TraceTimeline[];
  counts: RecordingCounts | undefined;
}

let files = 0;
function read(rec: WasmRecorder, format: 'json' | 'perfetto'): Read {
  const file = path.join(dir, `t${String(++files)}.${format}`);
  writeFileSync(file, rec.write(format, CLOCKS));
  const spans: TraceSpan[] = [];
  const timelines: TraceTimeline[] = [];
  const summary = readTrace(file, { timeline: (t) => timelines.push(t), span: (s) => spans.push(s) });
  expect(summary.format).toBe(format);
  expect(summary.unclosed).toBe(0);
  return { spans, timelines, counts: summary.counts };
}

/** name, timeline name, start and end in µs from the origin, sorted by start. */
function shape(r: Read): [string, string, number, number][] {
  const names = new Map(r.timelines.map((t) => [t.key, t.name]));
  return r.spans
    .map((s): [string, string, number, number] => [s.name, names.get(s.timeline) ?? '?', s.startNs / 1e3, s.endNs / 1e3])
    .sort((a, b) => a[2] - b[2] || a[0].localeCompare(b[0]));
}

/** `n` spans 'tick' on a thread 'main', the i-th from i * 10 µs for 5 µs. */
function ticks(rec: WasmRecorder, n: number): void {
  const t = rec.thread('main');
  const name = rec.intern('tick');
  for (let i = 0; i < n; i++) {
    rec.begin(t, name, i * 0.01);
    rec.end(t, i * 0.01 + 0.005);
  }
}

describe('the recording core in WebAssembly', () => {
  it('records nested spans, tracks and groups at the times given, in both formats', () => {
    const rec = new WasmRecorder({ memoryLimit: 8 * MIB, onFull: 'drop', originNs: ORIGIN_NS });
    const main = rec.thread('main');
    expect(main).toBeGreaterThan(0);
    const [request, query, render, phase, io] = ['request', 'db.query', 'render', 'warm-up', 'io.read'].map((n) => rec.intern(n));
    expect(rec.intern('request')).toBe(request); // interned once

    expect(rec.groupBegin(phase, 0.5)).toBe(OK);
    expect(rec.begin(main, request, 1)).toBe(OK);
    expect(rec.begin(main, query, 2)).toBe(OK);
    expect(rec.end(main, 3.5)).toBe(OK);
    expect(rec.begin(main, render, 4.25)).toBe(OK);
    expect(rec.end(main, 9)).toBe(OK);
    expect(rec.end(main, 10)).toBe(OK);
    expect(rec.end(main, 11)).toBe(NO_OPEN_SPAN);
    expect(rec.groupEnd(12)).toBe(OK);

    const track = rec.track('disk', false);
    expect(track).toBeGreaterThan(0);
    expect(rec.track('disk', true)).toBe(0); // the same name as a serial track
    const a = rec.asyncBegin(track, io, 1.5);
    const b = rec.asyncBegin(track, io, 2.5); // overlaps a: a concurrent track
    expect(a).not.toBe(0n);
    expect(rec.asyncEnd(b, 6)).toBe(OK);
    expect(rec.asyncEnd(a, 7)).toBe(OK);
    expect(rec.asyncEnd(a, 8)).not.toBe(OK); // ended already

    const expected = [
      ['warm-up', 'groups', 500, 12_000],
      ['request', 'main', 1000, 10_000],
      ['io.read', 'track: disk', 1500, 7000],
      ['db.query', 'main', 2000, 3500],
      ['io.read', 'track: disk', 2500, 6000],
      ['render', 'main', 4250, 9000],
    ];
    const json = read(rec, 'json');
    const perfetto = read(rec, 'perfetto');
    // The timeline names are the writers' (the group track's name differs by
    // format); what is checked is each span on its kind of timeline.
    const norm = (r: Read) => shape(r).map(([n, tl, s, e]) => [n, tl.startsWith('track') ? 'track: disk' : tl === 'main' ? 'main' : 'groups', s, e]);
    expect(norm(json)).toEqual(expected);
    expect(norm(perfetto)).toEqual(expected);
    for (const r of [json, perfetto]) expect(r.counts).toMatchObject({ produced: 6, kept: 6, overwritten: 0, dropped: 0 });
    expect(rec.counts()).toMatchObject({ produced: 6, kept: 6, overwritten: 0, dropped: 0 });
    rec.free();
  });

  it('counts every span a full budget drops, exactly, and writes the ones it kept', () => {
    const rec = new WasmRecorder({ memoryLimit: MIB, onFull: 'drop', originNs: ORIGIN_NS });
    const n = 100_000;
    ticks(rec, n);
    const c = rec.counts();
    expect(c.produced).toBe(n);
    expect(c.dropped).toBeGreaterThan(0);
    expect(c.kept + c.dropped + c.overwritten).toBe(n);
    expect(c.overwritten).toBe(0);
    const json = read(rec, 'json');
    expect(json.spans.length).toBe(c.kept);
    expect(json.counts).toMatchObject({ produced: n, kept: c.kept, dropped: c.dropped });
    // Drop keeps the oldest: the first span is there, the last is not.
    const starts = json.spans.map((s) => s.startNs);
    expect(Math.min(...starts)).toBe(0);
    expect(Math.max(...starts)).toBeLessThan((n - 1) * 0.01 * 1e6);
    rec.free();
  });

  it('overwrites the oldest spans when the budget is full in overwrite mode, and counts them', () => {
    const rec = new WasmRecorder({ memoryLimit: MIB, onFull: 'overwrite', originNs: ORIGIN_NS });
    const n = 100_000;
    ticks(rec, n);
    const c = rec.counts();
    expect(c.produced).toBe(n);
    expect(c.overwritten).toBeGreaterThan(0);
    expect(c.kept + c.overwritten + c.dropped).toBe(n);
    const perfetto = read(rec, 'perfetto');
    expect(perfetto.spans.length).toBe(c.kept);
    const starts = perfetto.spans.map((s) => s.startNs);
    // The newest are kept, up to the very last one, and they are contiguous.
    expect(Math.max(...starts)).toBe(Math.round((n - 1) * 0.01 * 1e6));
    expect(Math.min(...starts)).toBe(Math.round((n - c.kept) * 0.01 * 1e6));
    rec.free();
  });

  it('ends a detached thread\'s open spans as abandoned at the detach time', () => {
    const rec = new WasmRecorder({ memoryLimit: 8 * MIB, onFull: 'drop', originNs: ORIGIN_NS });
    const t = rec.thread('worker 1');
    const outer = rec.intern('outer');
    const inner = rec.intern('inner');
    rec.begin(t, outer, 1);
    rec.begin(t, inner, 2);
    expect(rec.detach(t, 3)).toBe(OK);
    expect(rec.begin(t, inner, 4)).not.toBe(OK); // the handle is gone
    const json = read(rec, 'json');
    expect(shape(json)).toEqual([
      ['outer', 'worker 1', 1000, 3000],
      ['inner', 'worker 1', 2000, 3000],
    ]);
    for (const s of json.spans) expect(s.args?.abandoned).toBe(true);
    rec.free();
  });

  it('records nothing once closed, and still writes what it recorded', () => {
    const rec = new WasmRecorder({ memoryLimit: 8 * MIB, onFull: 'drop', originNs: ORIGIN_NS });
    const t = rec.thread('main');
    const name = rec.intern('kept');
    rec.begin(t, name, 1);
    rec.end(t, 2);
    rec.close();
    expect(rec.begin(t, name, 3)).toBe(CLOSED);
    expect(rec.thread('late')).toBe(0);
    expect(rec.track('late', false)).toBe(0);
    expect(shape(read(rec, 'json'))).toEqual([['kept', 'main', 1000, 2000]]);
    rec.free();
  });

  it('reads its records back as columns: parents, depth, attributes, counters, per-timeline counts', () => {
    const rec = new WasmRecorder({ memoryLimit: 8 * MIB, onFull: 'drop', originNs: ORIGIN_NS });
    const main = rec.thread('main');
    const [outer, inner, io, phase] = ['outer', 'inner', 'io', 'phase'].map((n) => rec.intern(n));
    expect(rec.groupBegin(phase, 0.5, '{"step":1}')).toBe(OK);
    expect(rec.openGroups()).toBe(1);
    expect(rec.begin(main, outer, 1)).toBe(OK);
    expect(rec.beginAttrs(main, inner, 2, '{"k":"v"}')).toBe(OK);
    expect([rec.depth(main), rec.innermost(main)]).toEqual([2, 2]);
    expect(rec.end(main, 3)).toBe(OK);
    expect(rec.end(main, 4, 4)).toBe(OK); // FLAG_ERROR
    expect(rec.groupEnd(5)).toBe(OK);
    const track = rec.track('disk', true);
    const token = rec.asyncBegin(track, io, 1.25, '{"n":2}');
    expect(rec.openAsync()).toEqual([[token, io]]);
    expect(rec.asyncEnd(token, 6, 2)).toBe(OK); // FLAG_ABANDONED
    expect(rec.openAsync()).toEqual([]);
    expect(rec.counter('queue', 2.5, 7)).toBe(OK);

    const snap = rec.snapshot();
    expect(snap.names).toEqual(['outer', 'inner', 'io', 'phase']);
    const rows = Array.from({ length: snap.count }, (_, i) => {
      const f = snap.fields.subarray(6 * i, 6 * i + 6);
      const tl = snap.timelines.find((t) => t.id === f[1]);
      return [snap.names[f[0]], tl?.name, tl?.kind, f[2], f[4], f[5] >>> 16, f[5] & 0xffff, snap.times[2 * i], snap.times[2 * i + 1]];
    });
    // Flags: 1 async, 2 abandoned, 4 error, 8 attrs.
    const byName = new Map(rows.map((r) => [r[0], r]));
    expect(byName.get('inner')).toEqual(['inner', 'main', 'js', 2, 1, 1, 8, 2, 3]);
    expect(byName.get('outer')).toEqual(['outer', 'main', 'js', 1, 0, 0, 4, 1, 4]);
    expect(byName.get('phase')?.slice(2)).toEqual(['groups', 1, 0, 0, 8, 0.5, 5]);
    expect(byName.get('io')?.[2]).toBe('track');
    expect(byName.get('io')?.slice(7)).toEqual([1.25, 6]);
    expect(byName.get('io')?.[6]).toBe(1 | 2 | 8);
    const attrs = new Map(snap.attrs.map(([i, text]) => [rows[i][0], text]));
    expect(attrs).toEqual(new Map([['inner', '{"k":"v"}'], ['phase', '{"step":1}'], ['io', '{"n":2}']]));
    expect(snap.counters?.map((c) => [c.name, [...c.times], [...c.values], c.dropped])).toEqual([['queue', [2.5], [7], 0]]);
    const tls = rec.timelines();
    expect(tls.map((t) => [t.name, t.produced, t.kept])).toEqual(
      snap.timelines.map((t) => [t.name, rows.filter((r) => r[1] === t.name).length, rows.filter((r) => r[1] === t.name).length]),
    );
    rec.free();
  });

  it('takes a budget past 4 GiB as the core\'s maximum, not as a wrapped size', () => {
    const rec = new WasmRecorder({ memoryLimit: 2 ** 36, onFull: 'drop', originNs: ORIGIN_NS });
    const n = 200_000; // 6.4 MB of records: past the core's minimum budget (1 MiB)
    ticks(rec, n);
    expect(rec.counts()).toMatchObject({ produced: n, kept: n, dropped: 0 });
    rec.free();
  });

  it('grows its memory in few steps (doubling, then 64 MiB), not a page at a time (a memory.grow costs ~2 ms)', () => {
    const rec = new WasmRecorder({ memoryLimit: 256 * MIB, onFull: 'drop', originNs: ORIGIN_NS });
    const t = rec.thread('main');
    const name = rec.intern('tick');
    const sizes = new Set([rec.memoryBytes()]);
    const n = 3_000_000; // 96 MB of records: past the doubling, into 64 MiB steps
    for (let i = 0; i < n; i++) {
      rec.begin(t, name, i * 0.01);
      rec.end(t, i * 0.01 + 0.005);
      if ((i & 1023) === 0) sizes.add(rec.memoryBytes());
      // A small recording keeps a small memory (no 64 MiB step at first).
      if (i === 10_000) expect(rec.memoryBytes()).toBeLessThan(16 * MIB);
    }
    sizes.add(rec.memoryBytes());
    expect(rec.counts()).toMatchObject({ produced: n, kept: n });
    const sorted = [...sizes].sort((a, b) => a - b);
    // 256 KiB doubled to 64 MiB is 8 grows, then two or three 64 MiB ones;
    // page-sized grows would show here as hundreds of sizes.
    expect(sorted.length).toBeLessThan(16);
    for (let i = 1; i < sorted.length; i++) {
      const step = sorted[i] - sorted[i - 1];
      expect(step === 64 * MIB || step >= sorted[i - 1]).toBe(true);
    }
    rec.free();
  });

  it('names a bad policy', () => {
    expect(() => new WasmRecorder({ memoryLimit: MIB, onFull: 'keep' as 'drop', originNs: 0n })).toThrow(/"keep"/);
  });
});
