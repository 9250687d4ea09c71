// The js backend writes and counts through the core's own writers and stats,
// compiled to WebAssembly (native/wasm/): on one native snapshot the module
// gives the addon's bytes exactly, for Chrome JSON, Perfetto and stats.
// The scenario reaches nesting, a span whose parent is still open,
// attributes of every JSON type (and numbers at the edges of the double
// range, which the Perfetto writer parses), error and abandoned flags, names
// that need escaping, groups, a serial and a concurrent track with
// overlapping spans.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';

import { calibrate, readClocks, type ClockReadings } from '../lib/common/clock';
import { Tracer } from '../lib/index';
import { internals } from '../lib/tracer/internal';
import type { NativeSnapshot, NativeTracer } from '../lib/binding/native-binding';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { newInstance, statsOfColumns, WasmDocumentWriter, writeColumns } from '../lib/binding/wasm-core';
import { PERFETTO_PROTO } from './support/consumers';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const wasmPath = path.join(__dirname, '..', 'native', 'wasm', 'hotspan_core.wasm');

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

/** Records the scenario on `t`; returns the serial track's id. */
async function scenario(t: Tracer): Promise<number> {
  t.trace('a', () =>
    t.trace('b \\ "quoted"\ttab', () => undefined, {
      k: 1,
      s: 'v é \u{1F600}',
      f: 1.5,
      big: 2 ** 60,
      n: -(2 ** 40),
      no: false,
      tiny: 5e-324,
      huge: 1.7976931348623157e308,
      e21: 1e21,
      third: 1 / 3,
    }),
  );
  expect(() =>
    t.trace('fails', () => {
      throw new Error('boom');
    }),
  ).toThrow('boom');
  t.begin('open'); // never ended: not in the snapshot, its child is
  t.trace('child of open', () => undefined);
  const net = t.track('io');
  const gpu = t.track('gpu', { serial: true });
  const ds = [deferred<number>(), deferred<number>(), deferred<number>()];
  const ps = ds.map((d, i) => t.traceAsync(`op${String(i)}`, d.promise, { track: net, attrs: { i } }));
  const k = t.traceAsync('kernel', Promise.resolve(7), { track: gpu });
  ds[1].resolve(1);
  await ps[1];
  ds[0].resolve(0);
  ds[2].resolve(2);
  await Promise.all([...ps, k]);
  t.group('g', () => t.trace('in group', () => undefined), { phase: 'warm' });
  t.flush();
  return gpu;
}

// The document without its clock metadata (each write's own readings).
function withoutClocks(json: Uint8Array): string {
  const text = Buffer.from(json).toString('utf8');
  const stripped = text.replace(/"hotspan_clock":\{[^}]*\}/, '"hotspan_clock":{}');
  expect(stripped).not.toBe(text);
  return stripped;
}

// A Perfetto trace past its first packet (the clock snapshot).
function afterFirstPacket(b: Uint8Array): Buffer {
  let len = 0;
  let i = 1; // the packet's field tag
  for (let shift = 0; ; shift += 7) {
    const byte = b[i++];
    len += (byte & 127) * 2 ** shift;
    if (byte < 128) break;
  }
  return Buffer.from(b.subarray(i + len));
}

// The addon's documents say its process's pid (perfetto_writer.h: the packet
// sequence, the descriptors' pid, the uuids' salted high bits), the
// WebAssembly writer's say 1: each document as pid 1 would have written it.
function jsonAsPid1(json: Uint8Array): Uint8Array {
  return Buffer.from(Buffer.from(json).toString('utf8').replaceAll(`"pid":${String(process.pid)},`, '"pid":1,'));
}
type Obj = Record<string, unknown>;
function perfettoAsPid1(b: Uint8Array): Buffer {
  const trace = protobuf.loadSync(PERFETTO_PROTO).lookupType('perfetto.protos.Trace');
  const doc = trace.toObject(trace.decode(b), { longs: String }) as { packet: Obj[] };
  const packets = doc.packet.slice(1); // past the clock snapshot, as afterFirstPacket
  const proc = packets.map((p) => p.trackDescriptor as Obj | undefined).find((td) => td?.process !== undefined);
  const salt = BigInt(String(proc?.uuid ?? 0)) ^ 0xffffffff00000000n;
  const unsalt = (o: Obj | undefined, key: string): void => {
    if (o?.[key] !== undefined) o[key] = (BigInt(String(o[key])) ^ salt).toString();
  };
  for (const p of packets) {
    if (p.trustedPacketSequenceId !== undefined) p.trustedPacketSequenceId = 1;
    const td = p.trackDescriptor as Obj | undefined;
    unsalt(td, 'uuid');
    unsalt(td, 'parentUuid');
    for (const k of ['process', 'thread']) if ((td?.[k] as Obj | undefined)?.pid !== undefined) (td?.[k] as Obj).pid = 1;
    unsalt(p.trackEvent as Obj | undefined, 'trackUuid');
  }
  return Buffer.from(trace.encode(trace.fromObject({ packet: packets })).finish());
}

// Readings for documents that are only compared with each other.
const FIXED_CLOCKS: ClockReadings = { monotonicNs: 5_000_000_000n, realtimeNs: 1_800_000_000_000_000_000n };

function nativeOf(t: Tracer): NativeTracer {
  const nt = t[internals]().native;
  if (!nt) throw new Error('no native tracer');
  return nt;
}

describe('the WebAssembly core', () => {
  it.skipIf(skipNative)("writes the addon's bytes from the addon's snapshot: Chrome JSON and Perfetto", async () => {
    // writeColumns (hs_write: no tracer) names the process as the core's writers do by default.
    const t = new Tracer({ backend: 'native', threadName: 'main "thread"\n', processName: 'hotspan' });
    try {
      const gpu = await scenario(t);
      const nt = nativeOf(t);
      const snap = nt.snapshot();
      const json = nt.chromeJson();
      // Each write reads its own clocks: they are in the JSON metadata and in
      // the first Perfetto packet; every other byte is the same.
      const counts = t.counts();
      const wasmJson = writeColumns(snap, new Set([gpu]), 'json', readClocks(), calibrate().originNs, counts);
      expect(withoutClocks(wasmJson)).toBe(withoutClocks(jsonAsPid1(json)));
      const wasmPerfetto = writeColumns(snap, new Set([gpu]), 'perfetto', readClocks(), calibrate().originNs, counts);
      const nativePerfetto = nt.perfetto();
      expect(Buffer.compare(perfettoAsPid1(wasmPerfetto), perfettoAsPid1(nativePerfetto))).toBe(0);
      expect(Buffer.compare(afterFirstPacket(wasmPerfetto), afterFirstPacket(nativePerfetto))).not.toBe(0); // the pid's
      // The scenario reached every kind of event it is meant to compare.
      const doc = JSON.parse(Buffer.from(json).toString('utf8')) as { traceEvents: Array<Record<string, unknown>> };
      const phases = new Set(doc.traceEvents.map((e) => `${String(e.ph)}:${String(e.cat ?? '')}`));
      for (const p of ['M:', 'X:span', 'X:group', 'X:async', 'b:async', 'e:async']) expect(phases).toContain(p);
      expect(doc.traceEvents.some((e) => (e.args as { error?: boolean } | undefined)?.error === true)).toBe(true);
      t.end();
    } finally {
      t.close();
    }
  });

  it.skipIf(skipNative)("computes the addon's stats rows from the addon's snapshot", async () => {
    const t = new Tracer({ backend: 'native', threadName: 'm' });
    try {
      await scenario(t);
      for (let i = 0; i < 300; i++) t.trace(i % 3 === 0 ? 'a' : 'spread', () => undefined);
      t.flush();
      const nt = nativeOf(t);
      const rows = nt.stats();
      expect(rows.length).toBeGreaterThan(5);
      expect(statsOfColumns(nt.snapshot())).toEqual(rows);
      t.end();
    } finally {
      t.close();
    }
  });

  it('reads records in any timeline order, as the core groups them', async () => {
    const t = new Tracer({ backend: 'js', threadName: 'm' });
    try {
      const gpu = await scenario(t);
      const snap = t[internals]().backend.snapshot();
      // The same records with the timelines in reverse order (each keeps its
      // own order): the attribute indices follow their records.
      const n = snap.count;
      const tl = (i: number): number => snap.fields[6 * i + 1];
      const order = [...Array(n).keys()].sort((x, y) => tl(y) - tl(x) || x - y);
      expect(order).not.toEqual([...Array(n).keys()]);
      const at = new Map(order.map((from, to) => [from, to]));
      const times = new Float64Array(2 * n);
      const fields = new Uint32Array(6 * n);
      order.forEach((from, to) => {
        times.set(snap.times.subarray(2 * from, 2 * from + 2), 2 * to);
        fields.set(snap.fields.subarray(6 * from, 6 * from + 6), 6 * to);
      });
      const shuffled: NativeSnapshot = {
        ...snap,
        times,
        fields,
        attrs: snap.attrs.map(([i, text]): [number, string] => [at.get(i) ?? -1, text]),
      };
      for (const format of ['json', 'perfetto'] as const) {
        expect(Buffer.from(writeColumns(shuffled, new Set([gpu]), format, FIXED_CLOCKS, 0n))).toEqual(
          Buffer.from(writeColumns(snap, new Set([gpu]), format, FIXED_CLOCKS, 0n)),
        );
      }
      t.end();
    } finally {
      t.close();
    }
  });

  it('writes a document in batches with the bytes of the whole-snapshot writer', async () => {
    const t = new Tracer({ backend: 'js', threadName: 'm' });
    try {
      for (let i = 0; i < 40; i++) {
        t.trace(`req${String(i % 3)}`, () => {
          t.trace('db', () => undefined, { i });
          t.trace('render', () => t.trace('leaf "q"', () => undefined));
        });
      }
      const serial = t.track('gpu', { serial: true });
      await Promise.all([1, 2, 3].map((i) => t.traceAsync(`op${String(i)}`, Promise.resolve(i), { track: 'io', attrs: { i } })));
      await t.traceAsync('kernel', Promise.resolve(0), { track: serial });
      t.flush();
      const snap = t[internals]().backend.snapshot();
      const tlIndex = new Map(snap.timelines.map((tl, k) => [tl.id, k]));
      const tracks = new Set(snap.timelines.filter((tl) => tl.kind === 'track').map((tl) => tl.id));
      // Records in the order the writer takes them (timeline by timeline), cut
      // into batches anywhere but inside a track.
      const order = [...Array(snap.count).keys()].sort(
        (x, y) => (tlIndex.get(snap.fields[6 * x + 1]) ?? 0) - (tlIndex.get(snap.fields[6 * y + 1]) ?? 0) || x - y,
      );
      const cuts = [0, 7, 20, 21, 55, 90].filter((c) => c === 0 || !tracks.has(snap.fields[6 * order[c] + 1]));
      cuts.push(snap.count);
      const attrOf = new Map(snap.attrs);
      const batch = (from: number, to: number, first: boolean): NativeSnapshot => {
        const idx = order.slice(from, to);
        const times = new Float64Array(2 * idx.length);
        const fields = new Uint32Array(6 * idx.length);
        const attrs: Array<[number, string]> = [];
        idx.forEach((i, k) => {
          times.set(snap.times.subarray(2 * i, 2 * i + 2), 2 * k);
          fields.set(snap.fields.subarray(6 * i, 6 * i + 6), 6 * k);
          const a = attrOf.get(i);
          if (a !== undefined) attrs.push([k, a]);
        });
        return { names: first ? snap.names : [], timelines: snap.timelines, count: idx.length, times, fields, attrs };
      };
      for (const format of ['json', 'perfetto'] as const) {
        const w = new WasmDocumentWriter(format, FIXED_CLOCKS, 3_000_000n);
        const parts: Buffer[] = [];
        for (let k = 0; k + 1 < cuts.length; k++) parts.push(Buffer.from(w.append(batch(cuts[k], cuts[k + 1], k === 0), new Set([serial]))));
        parts.push(Buffer.from(w.finish()));
        expect(parts.filter((p) => p.length > 0).length).toBeGreaterThan(3);
        expect(Buffer.concat(parts)).toEqual(Buffer.from(writeColumns(snap, new Set([serial]), format, FIXED_CLOCKS, 3_000_000n)));
        expect(() => w.finish()).toThrow(/already finished/);
      }
    } finally {
      t.close();
    }
  });

  it('rejects columns that name a timeline they do not describe', () => {
    const bad: NativeSnapshot = {
      names: ['x'],
      timelines: [{ id: 1, name: 'm', kind: 'js', exited: false }],
      count: 1,
      times: new Float64Array([0, 1]),
      fields: new Uint32Array([0, 2, 1, 0, 0, 0]),
      attrs: [],
    };
    expect(() => writeColumns(bad, new Set(), 'json', FIXED_CLOCKS, 0n)).toThrow('hotspan: the WebAssembly core rejected its input (malformed columns)');
  });

  it('refuses columns past its 4 GiB of memory with a RangeError naming the count', () => {
    const huge: NativeSnapshot = {
      names: [],
      timelines: [],
      count: 2 ** 28,
      times: new Float64Array(0),
      fields: new Uint32Array(0),
      attrs: [],
    };
    expect(() => writeColumns(huge, new Set(), 'perfetto', FIXED_CLOCKS, 0n)).toThrow(
      new RangeError(
        'hotspan: the WebAssembly core cannot hold 268435456 records and their document in its 4 GiB of memory; the native backend streams any size',
      ),
    );
  });

  it('loads from the compiled package (dist/, built by the global setup)', () => {
    const code = `const { Tracer } = require('./dist/index.js');
      const t = new Tracer({ backend: 'js' });
      t.trace('x', () => 1);
      t.trace('x', () => 1);
      console.log(t.stats()[0].count, Buffer.from(t[require('./dist/tracer/internal.js').internals]().backend.perfetto()).length > 0);`;
    const r = spawnSync(process.execPath, ['-e', code], { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('2 true');
  });

  // The module itself, without lib/binding/wasm-core.ts's checks.
  interface RawExports {
    memory: { buffer: ArrayBuffer };
    _initialize(): void;
    hs_alloc(n: number): number;
    hs_write(p: number, n: number, format: number, originNs: bigint, monotonicNs: bigint, realtimeNs: bigint, boottimeNs: bigint, counts: number, pid: number, name: number, nameSize: number): number;
  }
  const wasm = globalThis as unknown as {
    WebAssembly: {
      Module: { new (b: Uint8Array): object; imports(m: object): unknown[] };
      Instance: new (m: object, imports: object) => { exports: RawExports };
    };
  };
  const rawModule = (): object => new wasm.WebAssembly.Module(readFileSync(wasmPath));

  it('imports only the host clock, the heap-end hook and the random bytes newInstance gives it', () => {
    expect(wasm.WebAssembly.Module.imports(rawModule())).toEqual([
      { module: 'hotspan', name: 'heap_end', kind: 'function' },
      { module: 'hotspan', name: 'now_ns', kind: 'function' },
      { module: 'wasi_snapshot_preview1', name: 'random_get', kind: 'function' },
    ]);
  });

  it('rejects a header whose sizes pass 2^32 bytes (wasm32 addresses), reading nothing past its buffer', () => {
    const e = newInstance();
    const p = e.hs_alloc(64);
    const header = new Uint32Array(e.memory.buffer, p, 16).fill(0);
    header[0] = 1; // version
    header[1] = 2 ** 30; // records: 16 and 24 bytes each wrap to 0 in 32 bits
    expect(e.hs_write(p, 64, 0, 0n, 0n, 0n, -1n, 0, 0, 0, 0)).toBe(1); // malformed columns
  });
});
