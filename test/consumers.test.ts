// Every trace hotspan writes, read by the real consumers of its format, on
// both backends: DevTools' trace engine and speedscope's importer on the
// Chrome JSON, protoc and protobufjs (with the vendored perfetto_trace.proto)
// on the Perfetto file, each checked against snapshot(). The shapes are the
// ones that misled those readers: back-to-back spans (a serial track, and on
// the js backend's injected clock a thread's siblings), children that start
// and end at their parent's ns, zero-length spans, spans lying inside
// unrelated async spans of a concurrent track, nested groups, a joined
// worker. (Exact ns adjacency on native threads is covered in the core,
// native/test/json_test.cc, which cannot be staged through a real clock.)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';

import type { SpanRecord, Tracer } from '../lib/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { defaultProcessName } from '../lib/tracer/options';
import {
  protobufjsPackets,
  protocDecode,
  speedscopeImport,
  traceEngineTrees,
  type SpeedscopeCall,
} from './support/consumers';
import { tracerFactory, type TestTracerOptions } from './support/tracers';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const fixture = path.join(__dirname, 'fixtures', 'join-worker.js');
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-consumers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const TWO32 = 4294967296;
const PERFETTO_OFFSET_NS = 1000000000n;

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

const ns = (ms: number): number => Math.round(ms * 1e6);

/** The parent a viewer's per-thread tree should show: the real one when it is on the same timeline and written. */
function treeParent(r: SpanRecord, byId: Map<number, SpanRecord>): number {
  const p = byId.get(r.parent);
  return p !== undefined && p.timeline === r.timeline ? r.parent : 0;
}

interface Written {
  recs: readonly SpanRecord[];
  /** Track ids written as b/e pairs (concurrent tracks). */
  concurrent: Set<number>;
  json: string;
  pftrace: Uint8Array;
  /** The pid the files say: this process's, 1 from the js backend (no pid in WebAssembly). */
  pid: number;
}

async function writeBoth(t: Tracer, name: string, concurrent: Set<number>): Promise<Written> {
  t.flush();
  const jsonFile = path.join(tmp, `${name}.json`);
  const pfFile = path.join(tmp, `${name}.pftrace`);
  await t.write(jsonFile);
  await t.write(pfFile);
  const pid = t.backend === 'native' ? process.pid : 1;
  return { recs: t.snapshot(), concurrent, json: readFileSync(jsonFile, 'utf8'), pftrace: readFileSync(pfFile), pid };
}

/** DevTools' trace engine: every complete (X) span in its thread trees, under its real parent. */
async function checkTraceEngine(w: Written): Promise<void> {
  const doc = JSON.parse(w.json) as { traceEvents: unknown[] };
  const trees = await traceEngineTrees(doc.traceEvents);
  const byId = new Map(w.recs.map((r) => [r.id, r]));
  const want = w.recs.filter((r) => !w.concurrent.has(r.timeline));
  const got = new Map<number, { parent: number; tid: number }>();
  for (const [tid, nodes] of trees) for (const n of nodes) got.set(n.spanId, { parent: n.parent, tid });
  expect([...trees.values()].reduce((k, n) => k + n.length, 0), 'spans in the engine thread trees').toBe(want.length);
  for (const r of want) {
    const g = got.get(r.id);
    expect(g, `${r.name} (${String(r.id)}) in the engine's tree of timeline ${String(r.timeline)}`).toBeDefined();
    expect(g?.tid).toBe(r.timeline);
    expect(g?.parent, `parent of ${r.name} (${String(r.id)})`).toBe(treeParent(r, byId));
  }
}

/** speedscope: no warnings, and per thread the same calls (span, times, parent) as the snapshot. */
async function checkSpeedscope(w: Written): Promise<void> {
  const { profiles, warnings } = await speedscopeImport(w.json);
  expect(warnings).toEqual([]);
  const byId = new Map(w.recs.map((r) => [r.id, r]));
  const names = new Map<number, string>();
  for (const r of w.recs) names.set(r.timeline, r.timelineName);
  // speedscope names a frame "<name> <args JSON>": the span_id in it identifies the span.
  const idIn = (frame: string | undefined): string => (frame === undefined ? '' : (/"span_id":(\d+)/.exec(frame)?.[1] ?? frame));
  const key = (c: SpeedscopeCall): string => `${idIn(c.name)}|${c.start}|${c.end}|${idIn(c.parent)}`;
  const events = (JSON.parse(w.json) as { traceEvents: Array<{ ph: string; name: string; pid: number; tid: number; ts?: number }> }).traceEvents;
  // The writing process's pid (the js backend's WebAssembly writer: 1).
  const proc = events.find((e) => e.ph === 'M' && e.name === 'process_name') as { pid: number; args?: { name?: string } } | undefined;
  const pid = proc?.pid;
  expect(pid).toBe(w.pid);
  // The tracer's default process name: what this process runs (its main script's file name).
  expect(proc?.args?.name).toBe(defaultProcessName());
  for (const [tl, tlName] of names) {
    if (w.concurrent.has(tl)) continue;
    const recs = w.recs.filter((r) => r.timeline === tl);
    const calls = profiles.get(`${defaultProcessName()} (pid ${String(pid)}), ${tlName} (tid ${String(tl)})`);
    expect(calls, `speedscope profile of ${tlName}`).toBeDefined();
    if (!calls) continue;
    // speedscope's times are us from the profile's first event: back to the
    // file's ts, then to ns as the README says (round(us * 1000)).
    const zeroUs = Math.min(...events.filter((e) => e.tid === tl && e.ts !== undefined).map((e) => e.ts as number));
    const nsOf = (us: number): number => Math.round((us + zeroUs) * 1000);
    // speedscope weighs calls by time: a zero-length span is no call in its tree.
    const want = recs.filter((r) => ns(r.end) > ns(r.start)).map((r) => {
      const p = treeParent(r, byId);
      return key({
        name: `"span_id":${String(r.id)}`,
        start: ns(r.start),
        end: ns(r.end),
        parent: p === 0 ? undefined : `"span_id":${String(p)}`,
      });
    });
    const got = calls.map((c) => key({ ...c, start: nsOf(c.start), end: nsOf(c.end) }));
    expect(got.sort(), `speedscope calls of ${tlName}`).toEqual(want.sort());
  }
}

interface Packet {
  timestamp?: string;
  trustedPacketSequenceId?: number;
  traceDefaults?: unknown;
  tracePacketDefaults?: { timestampClockId?: number };
  clockSnapshot?: { clocks?: Array<{ clockId?: number; timestamp?: string }>; primaryTraceClock?: string };
  trackEvent?: {
    type?: string;
    trackUuid?: string;
    debugAnnotations?: Array<{ nameIid?: string; uintValue?: string }>;
  };
}

/** protoc decodes the file; protobufjs replays it: every span once, nested on its track only under its real parent, on clock 64. */
function checkPerfetto(w: Written): Map<number, { start: bigint; end: bigint }> {
  const text = protocDecode(w.pftrace);
  expect(text.match(/type: TYPE_SLICE_BEGIN/g)?.length ?? 0).toBe(w.recs.length);
  expect(text).toMatch(/timestamp_clock_id: 64/);
  expect(text).toMatch(/clock_snapshot \{/);

  const packets = protobufjsPackets<Packet>(w.pftrace);
  expect(packets[0].tracePacketDefaults?.timestampClockId).toBe(64);
  const clocks = new Map((packets[0].clockSnapshot?.clocks ?? []).map((c) => [c.clockId, BigInt(c.timestamp ?? 0)]));
  expect([...clocks.keys()].sort()).toEqual(expect.arrayContaining([1, 3, 64]));
  const byId = new Map(w.recs.map((r) => [r.id, r]));
  const open = new Map<string, Array<{ id: number; start: bigint }>>();
  const slices = new Map<number, { start: bigint; end: bigint }>();
  for (const p of packets) {
    const ev = p.trackEvent;
    if (!ev) continue;
    const uuid = ev.trackUuid ?? '0';
    const stack = open.get(uuid) ?? [];
    open.set(uuid, stack);
    const ts = BigInt(p.timestamp ?? 0);
    if (ev.type === 'TYPE_SLICE_BEGIN') {
      // debug annotation 1 is span_id (interned first).
      const id = Number(ev.debugAnnotations?.find((a) => a.nameIid === '1')?.uintValue);
      const r = byId.get(id);
      expect(r, `span ${String(id)} in the snapshot`).toBeDefined();
      const enclosing = stack[stack.length - 1]?.id ?? 0;
      // A viewer shows the enclosing slice as the parent: it must be the real one.
      if (enclosing !== 0) expect(enclosing, `slice enclosing ${r?.name ?? ''}`).toBe(r?.parent);
      stack.push({ id, start: ts });
    } else {
      const top = stack.pop();
      expect(top).toBeDefined();
      if (top) slices.set(top.id, { start: top.start, end: ts });
    }
  }
  expect(slices.size).toBe(w.recs.length);
  for (const r of w.recs) {
    const s = slices.get(r.id);
    expect(s?.start).toBe(BigInt(ns(r.start)) + PERFETTO_OFFSET_NS);
    expect(s?.end).toBe(BigInt(ns(r.end)) + PERFETTO_OFFSET_NS);
    // The low 32 bits are the timeline; the high ones are salted with the pid (perfetto_writer.h).
    expect(Number(BigInt(uuidOf(packets, r.id)) % BigInt(TWO32))).toBe(r.timeline);
  }
  return slices;
}

function uuidOf(packets: Packet[], id: number): string {
  const p = packets.find(
    (q) =>
      q.trackEvent?.type === 'TYPE_SLICE_BEGIN' &&
      Number(q.trackEvent.debugAnnotations?.find((a) => a.nameIid === '1')?.uintValue) === id,
  );
  return p?.trackEvent?.trackUuid ?? '0';
}

async function checkAll(w: Written): Promise<void> {
  await checkTraceEngine(w);
  await checkSpeedscope(w);
  checkPerfetto(w);
}

describe.each(['native', 'js'] as const)('%s backend: real consumers read every output exactly', (kind) => {
  const suite = kind === 'native' && skipNative ? describe.skip : describe;
  suite('', () => {
    const make = tracerFactory(kind);

    it('back-to-back, same-ns, zero-length and contained spans, nested groups', async () => {
      // js: an injected clock makes every time exact and chosen; native: real times.
      let now = 499.182053; // ms: awkward decimals, as real times are
      const opts: TestTracerOptions = kind === 'js' ? { clock: () => now, threadName: 'main' } : { threadName: 'main' };
      const t = make(opts);
      const at = (ms: number): void => {
        now = ms;
      };
      // Thread: children starting and ending with their parent, back-to-back siblings, a zero-length span.
      at(499.182053);
      t.begin('outer');
      t.begin('first');
      at(499.197393);
      t.end();
      t.begin('second');
      at(499.31234);
      t.end();
      // A zero-length span (apart from its siblings: one at a sibling's first
      // or last ns would be indistinguishable from that sibling's child in
      // Chrome JSON, which has no order among events at one ts).
      at(499.312347);
      t.begin('zero');
      t.end();
      at(499.312351);
      t.begin('last');
      at(500.000417);
      t.end();
      t.end();
      // 40 siblings back to back at awkward ns.
      t.begin('row');
      for (let i = 1; i <= 40; i++) {
        at(500.000417 + i * 0.015339 + (i % 7) * 0.000001);
        t.end();
        t.begin('row');
      }
      at(501.1);
      t.end();
      // Nested groups around a span.
      at(501.2);
      t.group('step', () => {
        at(501.200001);
        t.group('fwd', () => {
          at(501.300007);
          t.trace('in group', () => at(501.400013));
        });
        at(501.5);
      });
      // A serial track: 30 spans requested at once run back to back.
      const gpu = t.track('gpu', { serial: true });
      const kernels = Array.from({ length: 30 }, () => deferred<number>());
      at(502.000001);
      const ps = kernels.map((d) => t.traceAsync('kernel', d.promise, { track: gpu }));
      for (let i = 0; i < kernels.length; i++) {
        at(502.000001 + (i + 1) * 0.015339 + (i % 3) * 0.000001);
        kernels[i].resolve(i);
        await ps[i];
      }
      // A concurrent track: B and C lie inside the unrelated A, D overlaps A's end.
      const net = t.track('net');
      const open = new Map<string, { settle: (v: number) => void; done: Promise<number> }>();
      const startAt = (ms: number, name: string): void => {
        at(ms);
        const d = deferred<number>();
        open.set(name, { settle: d.resolve, done: t.traceAsync(name, d.promise, { track: net }) });
      };
      const endAt = async (ms: number, name: string): Promise<void> => {
        at(ms);
        const o = open.get(name);
        o?.settle(0);
        await o?.done;
      };
      startAt(503.1, 'A');
      startAt(503.2, 'B');
      startAt(503.3, 'C');
      await endAt(503.4, 'C');
      await endAt(503.5, 'B');
      startAt(503.6, 'D');
      await endAt(503.7, 'A');
      await endAt(503.8, 'D');

      const w = await writeBoth(t, `${kind}-shapes`, new Set([net]));
      if (kind === 'js') {
        // The injected clock made these exact: the shapes are really there.
        const r = (n: string): SpanRecord[] => w.recs.filter((x) => x.name === n);
        expect(ns(r('first')[0].start)).toBe(ns(r('outer')[0].start));
        expect(ns(r('last')[0].end)).toBe(ns(r('outer')[0].end));
        expect(ns(r('second')[0].start)).toBe(ns(r('first')[0].end));
        expect(r('zero')[0].duration).toBe(0);
      }
      const ks = w.recs.filter((x) => x.name === 'kernel').sort((x, y) => x.start - y.start);
      for (let i = 1; i < ks.length; i++) expect(ns(ks[i].start)).toBe(ns(ks[i - 1].end));
      await checkAll(w);
      // The unrelated B and C are inside A in time but on lanes of their own.
      const packets = protobufjsPackets<Packet>(w.pftrace);
      const lane = (n: string): string => uuidOf(packets, w.recs.find((x) => x.name === n)?.id ?? -1);
      expect(new Set([lane('A'), lane('B'), lane('C')]).size).toBe(3);
    });

    it('a joined worker, on real clocks placed by the Perfetto clock snapshot', async () => {
      const t = make({ threadName: 'main' });
      const before = process.hrtime.bigint();
      t.trace('main.work', () => t.trace('main.inner', () => undefined));
      const after = process.hrtime.bigint();
      const worker = new Worker(fixture, { workerData: { token: t.share(), mode: 'record', count: 3, threadName: 'worker: w' } });
      await new Promise((resolve, reject) => {
        worker.once('exit', resolve);
        worker.once('error', reject);
      });
      await t.settle({ timeoutMs: 5000 });
      const w = await writeBoth(t, `${kind}-worker`, new Set());
      expect(w.recs.filter((r) => r.timelineName === 'worker: w')).toHaveLength(9);
      await checkAll(w);
      // Clock 64 -> MONOTONIC through the snapshot: the span lands where hrtime
      // (CLOCK_MONOTONIC) bracketed it, within the calibration bound.
      const slices = checkPerfetto(w);
      const packets = protobufjsPackets<Packet>(w.pftrace);
      const clocks = new Map((packets[0].clockSnapshot?.clocks ?? []).map((c) => [c.clockId, BigInt(c.timestamp ?? 0)]));
      const mono = (v: bigint): bigint => v - (clocks.get(64) ?? 0n) + (clocks.get(3) ?? 0n);
      const work = slices.get(w.recs.find((r) => r.name === 'main.work')?.id ?? -1);
      const slack = BigInt(Math.ceil(t.clockBoundMs * 1e6)) + 1000n;
      expect(work && mono(work.start) >= before - slack && mono(work.end) <= after + slack).toBe(true);
    });
  });
});
