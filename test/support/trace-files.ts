// Helpers for the CLI tests: traces of known content, spans as the readers
// give them, and an independent Perfetto decoding with protobufjs and the
// upstream schema (vendor/perfetto).
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import * as protobuf from 'protobufjs';

import type { Tracer } from '../../lib/index';
import { clockedTracer } from './tracers';
import { readTrace } from '../../lib/cli/read-trace';
import type { Args, ReadSummary, TraceTimeline } from '../../lib/cli/trace-model';
import type { ClockReadings } from '../../lib/common/clock';
import type { CounterSeries } from '../../lib/binding/native-binding';
import { WasmDocumentWriter } from '../../lib/binding/wasm-core';

export const repoRoot = path.join(__dirname, '..', '..');
export const cliPath = path.join(repoRoot, 'dist', 'cli', 'main.js');
export const protoPath = path.join(repoRoot, 'vendor', 'perfetto', 'perfetto_trace.proto');

export interface PlainSpan {
  timeline: string;
  name: string;
  start: number;
  end: number;
  args: Args;
}

/** Spans of a file through lib/cli/read-trace, with timeline names, sorted. */
export function readSpans(file: string): { spans: PlainSpan[]; summary: ReadSummary; timelines: TraceTimeline[] } {
  const timelines: TraceTimeline[] = [];
  const byKey = new Map<string, string>();
  const spans: PlainSpan[] = [];
  const summary = readTrace(file, {
    timeline(t) {
      timelines.push(t);
      byKey.set(t.key, t.name);
    },
    span(s) {
      spans.push({ timeline: byKey.get(s.timeline) ?? '?', name: s.name, start: s.startNs, end: s.endNs, args: s.args ?? {} });
    },
  });
  return { spans: sortSpans(spans), summary, timelines };
}

export function sortSpans(spans: PlainSpan[]): PlainSpan[] {
  return spans.sort(
    (a, b) =>
      a.start - b.start || b.end - a.end || a.timeline.localeCompare(b.timeline) || a.name.localeCompare(b.name),
  );
}

/** Start and end made relative to the earliest start (formats differ in their time origin). */
export function relative(spans: PlainSpan[]): PlainSpan[] {
  const t0 = Math.min(...spans.map((s) => s.start));
  return spans.map((s) => ({ ...s, start: s.start - t0, end: s.end - t0 }));
}

let traceType: protobuf.Type | undefined;

type Long = string | number;
interface Ann {
  nameIid?: Long;
  name?: string;
  boolValue?: boolean;
  uintValue?: Long;
  intValue?: Long;
  doubleValue?: number;
  stringValue?: string;
  legacyJsonValue?: string;
}
interface Pkt {
  timestamp?: Long;
  internedData?: { eventNames?: Array<{ iid?: Long; name?: string }>; debugAnnotationNames?: Array<{ iid?: Long; name?: string }> };
  trackDescriptor?: { uuid?: Long; parentUuid?: Long; name?: string; thread?: { threadName?: string }; process?: object };
  trackEvent?: { type?: string; trackUuid?: Long; nameIid?: Long; name?: string; debugAnnotations?: Ann[] };
}

export function perfettoType(): protobuf.Type {
  traceType ??= protobuf.loadSync(protoPath).lookupType('perfetto.protos.Trace');
  return traceType;
}

/**
 * Spans by protobufjs: descriptors, interning, begin/end per track, a lane
 * (a child of a non-process track) counted on its parent; parent_id filled
 * from the enclosing slice as hotspan leaves it out then. Single sequence,
 * one clock: what hotspan writes today.
 */
export function protobufjsSpans(bytes: Uint8Array): PlainSpan[] {
  const t = perfettoType();
  const obj = t.toObject(t.decode(bytes), { longs: String, enums: String }) as { packet?: Pkt[] };
  const names = new Map<string, string>();
  const annNames = new Map<string, string>();
  const tracks = new Map<string, { name: string; parent?: string; process: boolean }>();
  const open = new Map<string, Array<{ name: string; start: number; args: Args }>>();
  const spans: PlainSpan[] = [];
  for (const p of obj.packet ?? []) {
    for (const n of p.internedData?.eventNames ?? []) names.set(String(n.iid), n.name ?? '');
    for (const n of p.internedData?.debugAnnotationNames ?? []) annNames.set(String(n.iid), n.name ?? '');
    const d = p.trackDescriptor;
    if (d) {
      tracks.set(String(d.uuid), {
        name: d.thread?.threadName ?? d.name ?? '',
        parent: d.parentUuid === undefined ? undefined : String(d.parentUuid),
        process: d.process !== undefined,
      });
    }
    const ev = p.trackEvent;
    if (!ev) continue;
    const uuid = String(ev.trackUuid);
    const st = open.get(uuid) ?? [];
    open.set(uuid, st);
    const ts = Number(p.timestamp);
    if (ev.type === 'TYPE_SLICE_BEGIN') {
      const args: Args = {};
      for (const a of ev.debugAnnotations ?? []) {
        const key = a.name ?? annNames.get(String(a.nameIid)) ?? '?';
        args[key] =
          a.boolValue ?? (a.uintValue !== undefined ? Number(a.uintValue) : undefined) ??
          (a.intValue !== undefined ? Number(a.intValue) : undefined) ?? a.doubleValue ?? a.stringValue ??
          (a.legacyJsonValue !== undefined ? JSON.parse(a.legacyJsonValue) : null);
      }
      const up = st[st.length - 1]?.args.span_id;
      if (args.parent_id === undefined && up !== undefined) args.parent_id = up;
      st.push({ name: ev.name ?? names.get(String(ev.nameIid)) ?? '?', start: ts, args });
    } else if (ev.type === 'TYPE_SLICE_END') {
      const o = st.pop();
      if (!o) continue;
      let tr = tracks.get(uuid);
      const parent = tr?.parent === undefined ? undefined : tracks.get(tr.parent);
      if (parent !== undefined && !parent.process) tr = parent; // a lane of its parent's timeline
      spans.push({ timeline: tr?.name ?? '?', name: o.name, start: o.start, end: ts, args: o.args });
    }
  }
  return sortSpans(spans);
}

/** A js-backend tracer on a scripted clock: at(ms, f) runs f at that time. */
function scripted(): { t: Tracer; at: (ms: number, f?: () => void) => void } {
  let now = 0;
  const t = clockedTracer(() => now);
  return {
    t,
    at(ms, f) {
      now = ms;
      f?.();
    },
  };
}

/** Writes the tracer's trace as <dir>/<base>.json and .pftrace, then closes it. */
async function writeBoth(t: Tracer, dir: string, base: string): Promise<{ json: string; pftrace: string }> {
  const json = path.join(dir, `${base}.json`);
  const pftrace = path.join(dir, `${base}.pftrace`);
  await t.write(json);
  await t.write(pftrace);
  t.close();
  return { json, pftrace };
}

/**
 * A trace of known content, recorded by the js backend on an injected clock
 * (ms): main thread: req 0-10 (db 1-4, db 5-6), req 20-32 {route: "/a"}
 * (db 21-29); track "net": fetch 2-13 and fetch2 3-7, overlapping.
 */
export async function knownTrace(dir: string): Promise<{ json: string; pftrace: string }> {
  const { t, at } = scripted();
  at(0, () => t.begin('req'));
  at(1, () => t.begin('db'));
  at(4, () => t.end());
  at(5, () => t.begin('db'));
  at(6, () => t.end());
  at(10, () => t.end());
  at(20, () => t.begin('req', { route: '/a' }));
  at(21, () => t.begin('db'));
  at(29, () => t.end());
  at(32, () => t.end());
  let r1!: () => void;
  let r2!: () => void;
  at(2);
  const f1 = t.traceAsync('fetch', new Promise<void>((r) => (r1 = r)), { track: 'net' });
  at(3);
  const f2 = t.traceAsync('fetch2', new Promise<void>((r) => (r2 = r)), { track: 'net' });
  at(7);
  r2();
  await f2;
  at(13);
  r1();
  await f1;
  return writeBoth(t, dir, 'known');
}

/**
 * A trace with counter tracks, recorded by the js backend on an injected
 * clock (ms): main thread: req 0-10; counter "queue": 4 at 1, 10 at 3, 2.5
 * at 6, 7 at 9; counter "event loop delay max (ms)": 0 at 2, 120 at 8.
 */
export async function counterTrace(dir: string): Promise<{ json: string; pftrace: string }> {
  const { t, at } = scripted();
  at(0, () => t.begin('req'));
  at(1, () => t.counter('queue', 4));
  at(2, () => t.counter('event loop delay max (ms)', 0));
  at(3, () => t.counter('queue', 10));
  at(6, () => t.counter('queue', 2.5));
  at(8, () => t.counter('event loop delay max (ms)', 120));
  at(9, () => t.counter('queue', 7));
  at(10, () => t.end());
  return writeBoth(t, dir, 'counters');
}

/** Counter samples of a file through lib/cli/read-trace: [ns, value] pairs by counter name, in file order. */
export function readCounterSamples(file: string): Map<string, Array<[number, number]>> {
  const names = new Map<string, string>();
  const out = new Map<string, Array<[number, number]>>();
  readTrace(file, {
    timeline: (t) => names.set(t.key, t.name),
    span: () => undefined,
    counter(timeline, ts, value) {
      const name = names.get(timeline) ?? '?';
      out.set(name, [...(out.get(name) ?? []), [ts, value]]);
    },
  });
  return out;
}

/** Runs the built CLI. */
export function cli(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [cliPath, ...args], {
    encoding: 'utf8',
    input: opts.input,
    env: opts.env ?? process.env,
    timeout: 120_000,
  });
}

export function cliOk(args: string[]): string {
  return execFileSync(process.execPath, [cliPath, ...args], { encoding: 'utf8' });
}

/** A record of a generated trace: times in ns from the origin; ids local to its thread. */
export interface GenRecord {
  name: number;
  start: number;
  end: number;
  local: number;
  parent: number;
  depth: number;
  attrs?: string;
}

/**
 * Writes a Perfetto trace of generated thread records through the core's
 * incremental writer (lib/binding/wasm-core.ts), in batches: thread k (timeline id
 * k + 1) gets records(k, i) for each tree i < trees, in end order.
 */
export function writeGeneratedPerfetto(
  file: string,
  gen: {
    names: string[];
    threads: string[];
    trees: number;
    records: (thread: number, i: number) => GenRecord[];
    originNs: bigint;
    clocks: ClockReadings;
    /** Written after the spans, in a batch of their own. */
    counters?: CounterSeries[];
  },
): void {
  const fd = openSync(file, 'w');
  const w = new WasmDocumentWriter('perfetto', gen.clocks, gen.originNs);
  const put = (b: Uint8Array): void => {
    for (let off = 0; off < b.length; ) off += writeSync(fd, b, off);
  };
  let names = gen.names;
  const timelines = gen.threads.map((name, k) => ({ id: k + 1, name, kind: 'js' as const, exited: false }));
  for (let k = 0; k < gen.threads.length; k++) {
    for (let i = 0; i < gen.trees; ) {
      const recs: GenRecord[] = [];
      for (; i < gen.trees && recs.length < 30000; i++) recs.push(...gen.records(k, i));
      const times = new Float64Array(2 * recs.length);
      const fields = new Uint32Array(6 * recs.length);
      const attrs: Array<[number, string]> = [];
      recs.forEach((r, j) => {
        times[2 * j] = r.start / 1e6;
        times[2 * j + 1] = r.end / 1e6;
        fields.set([r.name, k + 1, r.local, r.parent === 0 ? 0 : k + 1, r.parent, r.depth << 16], 6 * j);
        if (r.attrs !== undefined) attrs.push([j, r.attrs]);
      });
      put(w.append({ names, timelines, count: recs.length, times, fields, attrs }, new Set()));
      names = [];
    }
  }
  if (gen.counters !== undefined) {
    put(w.append({ names, timelines: [], count: 0, times: new Float64Array(0), fields: new Uint32Array(0), attrs: [], counters: gen.counters }, new Set()));
  }
  put(w.finish());
  closeSync(fd);
}
