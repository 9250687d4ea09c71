// The Perfetto writer (native/core/write/perfetto_writer.cc: the addon's, and its
// WebAssembly build for the js backend), checked by decoding its output with
// Perfetto's own schema
// (perfetto_trace.proto, through protobufjs), event by event against
// snapshot(): names through interning, timestamps exact to the ns, begin/end
// nesting per track, track descriptors, thread names, debug annotations.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import { afterAll, describe, expect, it } from 'vitest';

import { Tracer, type SpanRecord } from '../lib/index';
import { tracerFactory } from './support/tracers';
import { loadNativeAddon } from '../lib/binding/native-loader';

// native/core/write/perfetto_writer.h: kPerfettoTimestampOffsetNs, kPerfettoProcessUuid.
const PERFETTO_TIMESTAMP_OFFSET_NS = 1_000_000_000;
const PERFETTO_PROCESS_UUID = 0xffffffff00000000n;

const TWO32 = 4294967296;
const repoRoot = path.join(__dirname, '..');
// Vendored with the repository (vendor/README.md): never missing, never skipped.
const protoPath = path.join(repoRoot, 'vendor', 'perfetto', 'perfetto_trace.proto');
const nativeLoad = loadNativeAddon();
const skipNative = nativeLoad.addon === undefined && process.env.CI !== 'true';
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-perfetto-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// ---- the decoded shape (protobufjs toObject, camelCase, longs as strings) ----

type Long = string | number;
interface Annotation {
  nameIid?: Long;
  name?: string;
  boolValue?: boolean;
  uintValue?: Long;
  intValue?: Long;
  doubleValue?: number;
  stringValue?: string;
  legacyJsonValue?: string;
}
interface TrackEventObj {
  type?: string;
  trackUuid?: Long;
  nameIid?: Long;
  name?: string;
  debugAnnotations?: Annotation[];
}
interface TrackDescriptorObj {
  uuid?: Long;
  parentUuid?: Long;
  name?: string;
  process?: { pid?: number; processName?: string };
  thread?: { pid?: number; tid?: Long; threadName?: string };
}
interface PacketObj {
  timestamp?: Long;
  trustedPacketSequenceId?: number;
  sequenceFlags?: number;
  internedData?: {
    eventNames?: Array<{ iid?: Long; name?: string }>;
    debugAnnotationNames?: Array<{ iid?: Long; name?: string }>;
  };
  trackDescriptor?: TrackDescriptorObj;
  trackEvent?: TrackEventObj;
}

let traceType: protobuf.Type | undefined;
function decode(bytes: Uint8Array): PacketObj[] {
  traceType ??= protobuf.loadSync(protoPath).lookupType('perfetto.protos.Trace');
  const msg = traceType.decode(bytes);
  const obj = traceType.toObject(msg, { longs: String, enums: String }) as { packet?: PacketObj[] };
  return obj.packet ?? [];
}

interface Slice {
  name: string;
  start: bigint;
  end: bigint;
  uuid: bigint;
  args: Map<string, Annotation>;
  /** span_id of the slice open around this one on its track when it began (what a viewer shows as its parent). */
  enclosing?: number;
}

interface Decoded {
  packets: PacketObj[];
  tracks: Map<bigint, TrackDescriptorObj>;
  slices: Slice[];
}

/** Decodes a trace and replays its begin/end events per track, checking the nesting. */
function replay(bytes: Uint8Array): Decoded {
  const packets = decode(bytes);
  expect(packets.length).toBeGreaterThan(0);
  expect(packets[0].sequenceFlags).toBe(1); // SEQ_INCREMENTAL_STATE_CLEARED
  const names = new Map<bigint, string>();
  const annNames = new Map<bigint, string>();
  const tracks = new Map<bigint, TrackDescriptorObj>();
  for (const p of packets) {
    // One sequence: the writing process's pid (the js backend's WebAssembly writer: 1).
    expect(p.trustedPacketSequenceId).toBe(packets[0].trustedPacketSequenceId);
    expect([1, process.pid]).toContain(p.trustedPacketSequenceId);
    for (const n of p.internedData?.eventNames ?? []) names.set(BigInt(n.iid ?? 0), n.name ?? '');
    for (const n of p.internedData?.debugAnnotationNames ?? []) annNames.set(BigInt(n.iid ?? 0), n.name ?? '');
    if (p.trackDescriptor) tracks.set(BigInt(p.trackDescriptor.uuid ?? 0), p.trackDescriptor);
  }
  const open = new Map<bigint, Array<Omit<Slice, 'end'>>>();
  const slices: Slice[] = [];
  for (const p of packets) {
    const ev = p.trackEvent;
    if (!ev) continue;
    const uuid = BigInt(ev.trackUuid ?? 0);
    expect(tracks.has(uuid), `track ${String(uuid)} has a descriptor`).toBe(true);
    const ts = BigInt(p.timestamp ?? 0);
    const stack = open.get(uuid) ?? [];
    open.set(uuid, stack);
    if (ev.type === 'TYPE_SLICE_BEGIN') {
      expect(p.sequenceFlags).toBe(2); // SEQ_NEEDS_INCREMENTAL_STATE: it uses interned names
      const args = new Map<string, Annotation>();
      for (const a of ev.debugAnnotations ?? []) {
        const key = a.name ?? annNames.get(BigInt(a.nameIid ?? 0));
        expect(key, 'annotation name').toBeDefined();
        args.set(key as string, a);
      }
      const name = ev.name ?? names.get(BigInt(ev.nameIid ?? 0));
      expect(name, 'event name').toBeDefined();
      const parent = stack[stack.length - 1];
      if (parent) expect(ts >= parent.start).toBe(true);
      const enclosing = parent?.args.get('span_id')?.uintValue;
      stack.push({ name: name as string, start: ts, uuid, args, enclosing: enclosing === undefined ? undefined : Number(enclosing) });
    } else {
      expect(ev.type).toBe('TYPE_SLICE_END');
      const top = stack.pop();
      expect(top, `an end on track ${String(uuid)} closes an open slice`).toBeDefined();
      if (!top) continue;
      expect(ts >= top.start).toBe(true);
      slices.push({ ...top, end: ts });
    }
  }
  for (const [uuid, stack] of open) expect(stack, `track ${String(uuid)} ends balanced`).toHaveLength(0);
  // Nesting in time: a slice closed inside another on the same track ends by the outer's end.
  return { packets, tracks, slices };
}

function perfettoTs(ms: number): bigint {
  return BigInt(Math.round(ms * 1e6)) + BigInt(PERFETTO_TIMESTAMP_OFFSET_NS);
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

/** Checks every committed record against its slice in the decoded trace. */
function checkAgainstSnapshot(d: Decoded, recs: readonly SpanRecord[]): void {
  const byId = new Map<number, Slice>();
  for (const s of d.slices) {
    const id = s.args.get('span_id');
    expect(id?.uintValue, 'span_id').toBeDefined();
    byId.set(Number(id?.uintValue), s);
  }
  expect(d.slices).toHaveLength(recs.length);
  expect(byId.size).toBe(recs.length);
  for (const r of recs) {
    const s = byId.get(r.id);
    expect(s, `slice of ${r.name}`).toBeDefined();
    if (!s) continue;
    expect(s.name).toBe(r.name);
    expect(s.start).toBe(perfettoTs(r.start));
    expect(s.end).toBe(perfettoTs(r.end));
    // The span's own track, or (tracks) one of its lanes: lane * 2^32 + id.
    expect(Number(s.uuid % BigInt(TWO32))).toBe(r.timeline);
    // The high 32 bits: a lane, salted with the pid (perfetto_writer.h).
    if (r.timelineKind !== 'track') expect(s.uuid % BigInt(TWO32)).toBe(BigInt(r.timeline));
    // parent_id is written only when the enclosing slice is not the parent.
    const parent = s.args.get('parent_id');
    if (r.parent === 0) expect(parent).toBeUndefined();
    else if (parent === undefined) expect(s.enclosing).toBe(r.parent);
    else {
      expect(Number(parent.uintValue)).toBe(r.parent);
      expect(s.enclosing).not.toBe(r.parent);
    }
    expect(s.args.get('error')?.boolValue ?? false).toBe(r.error);
    expect(s.args.get('abandoned')?.boolValue ?? false).toBe(r.abandoned);
    const own = new Set(['span_id', 'parent_id', 'error', 'abandoned']);
    const attrKeys = [...s.args.keys()].filter((k) => !own.has(k));
    expect(attrKeys).toEqual(Object.keys(r.attrs ?? {}));
    for (const [k, v] of Object.entries(r.attrs ?? {})) {
      const a = s.args.get(k) as Annotation;
      if (typeof v === 'string') expect(a.stringValue).toBe(v);
      else if (typeof v === 'boolean') expect(a.boolValue).toBe(v);
      else if (Number.isSafeInteger(v)) expect(Number(a.intValue)).toBe(v);
      else expect(a.doubleValue).toBe(v);
    }
  }
}

describe.each(['native', 'js'] as const)('%s backend', (kind) => {
  const suite = kind === 'native' && skipNative ? describe.skip : describe;

  suite('Perfetto output', () => {
    const make = tracerFactory(kind);

    it('writes every span, decoded with the Perfetto schema, event by event', async () => {
      const t = make({ threadName: 'main thread', processName: 'checkout-api é' });
      t.trace('outer', () => {
        t.trace('inner', () => undefined, { rows: 12, ratio: 0.5, table: 'users é', hit: true, neg: -3 });
        // Values past the one-pass string read (128 bytes, a 4-byte character across it), past an
        // attribute block (28 KiB), an integer past 2^53 and the smallest double.
        t.trace('tricky', () => undefined, { cut: `${'a'.repeat(126)}😀ü`, long: 'ü€'.repeat(9000), big: 2 ** 53 + 2, tiny: 5e-324 });
        expect(() =>
          t.trace('fails', () => {
            throw new Error('boom');
          }),
        ).toThrow('boom');
      });
      t.group('phase', () => t.trace('grouped', () => undefined));
      // Overlapping async spans on a concurrent track: A [a0, a1], B [b0, b1], a0 < b0 < a1 < b1.
      const net = t.track('net');
      const a = deferred<number>();
      const b = deferred<number>();
      const pa = t.traceAsync('fetchA', a.promise, { track: net, attrs: { url: '/a' } });
      await new Promise((r) => setTimeout(r, 2));
      const pb = t.traceAsync('fetchB', b.promise, { track: net });
      await new Promise((r) => setTimeout(r, 2));
      a.resolve(1);
      await pa;
      await new Promise((r) => setTimeout(r, 2));
      b.resolve(2);
      await pb;
      const gpu = t.track('gpu', { serial: true });
      await t.traceAsync('kernel', Promise.resolve(1), { track: gpu });
      await t.traceAsync('kernel', Promise.resolve(2), { track: gpu });
      t.flush();

      const file = path.join(tmp, `${kind}.pftrace`);
      await t.write(file);
      const recs = t.snapshot();
      const d = replay(readFileSync(file));
      checkAgainstSnapshot(d, recs);

      // Descriptors: the process, a thread track per thread timeline, named tracks for the rest.
      // The writing process's pid (the js backend's WebAssembly writer: 1) salts the uuids' high 32 bits.
      const pid = kind === 'native' ? process.pid : 1;
      const procs = [...d.tracks].filter(([, td]) => td.process !== undefined && td.process !== null);
      expect(procs).toHaveLength(1);
      const [procUuid, proc] = procs[0];
      expect(proc.process?.processName).toBe('checkout-api é');
      expect(proc.process?.pid).toBe(pid);
      const salt = procUuid ^ PERFETTO_PROCESS_UUID;
      expect(salt % 2n ** 32n).toBe(0n);
      expect(salt === 0n).toBe(pid === 1);
      for (const tl of t.timelines()) {
        const td = d.tracks.get(BigInt(tl.id) ^ salt);
        expect(td, `descriptor of ${tl.name}`).toBeDefined();
        if (tl.kind === 'js' || tl.kind === 'native') {
          expect(td?.thread?.threadName).toBe(tl.name);
          expect(Number(td?.thread?.tid)).toBe(tl.id);
          expect(td?.thread?.pid).toBe(pid);
        } else {
          expect(td?.name).toBe(tl.name);
          expect(BigInt(td?.parentUuid ?? 0)).toBe(procUuid);
        }
      }
      expect(d.tracks.get(BigInt(recs.find((r) => r.name === 'outer')?.timeline ?? -1) ^ salt)?.thread?.threadName).toBe(
        'main thread',
      );

      // The overlapping async spans sit on different tracks: the track and its second lane.
      const sliceOf = (name: string): Slice[] => d.slices.filter((s) => s.name === name);
      const [fa] = sliceOf('fetchA');
      const [fb] = sliceOf('fetchB');
      expect(fa.start < fb.start && fb.start < fa.end && fa.end < fb.end).toBe(true);
      expect(fa.uuid).toBe(BigInt(net) ^ salt);
      expect(fb.uuid).toBe((BigInt(TWO32) + BigInt(net)) ^ salt);
      const lane = d.tracks.get(fb.uuid);
      expect(BigInt(lane?.parentUuid ?? 0)).toBe(BigInt(net) ^ salt);
      expect(lane?.name).toMatch(/ #2$/);
      // The serial track needs one lane only; nested spans share their thread's track.
      expect(new Set(sliceOf('kernel').map((s) => s.uuid))).toEqual(new Set([BigInt(gpu) ^ salt]));
      const outer = sliceOf('outer')[0];
      for (const n of ['inner', 'fails']) {
        const s = sliceOf(n)[0];
        expect(s.uuid).toBe(outer.uuid);
        expect(s.start >= outer.start && s.end <= outer.end).toBe(true);
      }
      const inner = sliceOf('inner')[0];
      expect(typeof inner.args.get('ratio')?.doubleValue).toBe('number');
      expect(sliceOf('fails')[0].args.get('error')?.boolValue).toBe(true);
      // The group is on the groups timeline and contains its span in time.
      const phase = sliceOf('phase')[0];
      const grouped = sliceOf('grouped')[0];
      expect(d.tracks.get(phase.uuid)?.name).toBeDefined();
      expect(phase.start <= grouped.start && grouped.end <= phase.end).toBe(true);
    });

    it('interns each name once, and keeps .json and unknown extensions apart', async () => {
      const t = make();
      for (let i = 0; i < 20; i++) t.trace('same', () => undefined);
      const file = path.join(tmp, `${kind}-many.perfetto-trace`);
      await t.write(file);
      const packets = decode(readFileSync(file));
      const interned = packets.flatMap((p) => p.internedData?.eventNames ?? []);
      expect(interned.filter((n) => n.name === 'same')).toHaveLength(1);
      const begins = packets.filter((p) => p.trackEvent?.type === 'TYPE_SLICE_BEGIN');
      expect(begins).toHaveLength(20);
      for (const p of begins) expect(p.trackEvent?.name).toBeUndefined();
      await t.write(path.join(tmp, `${kind}.json`));
      expect(JSON.parse(readFileSync(path.join(tmp, `${kind}.json`), 'utf8'))).toHaveProperty('traceEvents');
      await expect(t.write(path.join(tmp, 'x.pb'))).rejects.toThrow(
        new RangeError(
          `hotspan: cannot tell the output format of ${JSON.stringify(path.join(tmp, 'x.pb'))} (known extensions: .json, .pftrace, .perfetto-trace)`,
        ),
      );
    });
  });
});

describe('Perfetto, noop backend', () => {
  it('the noop backend writes an empty trace', async () => {
    const t = new Tracer({ backend: 'noop' });
    t.trace('x', () => undefined);
    const file = path.join(tmp, 'noop.pftrace');
    await t.write(file);
    const d = replay(readFileSync(file));
    expect(d.slices).toHaveLength(0);
    expect([...d.tracks.keys()]).toEqual([PERFETTO_PROCESS_UUID]);
    t.close();
  });
});
