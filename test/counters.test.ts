// tracer.counter(): argument checks, both recording backends, both core
// writers (through the addon and through the WebAssembly core), read back by
// the real consumers (protoc and protobufjs with the vendored schema for
// Perfetto; DevTools' trace engine for the JSON) and by `hotspan report`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { buildReport } from '../lib/cli/report';
import { Tracer } from '../lib/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { protobufjsPackets, protocDecode, traceEngineTrees } from './support/consumers';
import { tracerFactory } from './support/tracers';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-counters-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface ChromeEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: Record<string, unknown>;
}

interface Packet {
  timestamp?: string;
  trackDescriptor?: { uuid: string; name?: string; parentUuid?: string; counter?: object };
  trackEvent?: { type?: string; trackUuid?: string; doubleCounterValue?: number; nameIid?: string };
}

/** Spans "a" and "b" with counter samples before, between and after them. */
function record(t: Tracer): void {
  t.counter('queue', 3);
  t.trace('a', () => undefined);
  t.counter('queue', 5.5);
  t.counter('heap MiB', 120.25);
  t.trace('b', () => undefined);
  t.counter('queue', -2);
}

for (const backend of ['native', 'js'] as const) {
  describe.skipIf(backend === 'native' && skipNative)(`counters, ${backend} backend`, () => {
    const make = tracerFactory(backend);

    it('names the bad argument', () => {
      const t = make();
      expect(() => t.counter(1 as unknown as string, 1)).toThrow(TypeError);
      expect(() => t.counter('', 1)).toThrow(/counter name must not be empty/);
      expect(() => t.counter('q', '3' as unknown as number)).toThrow(new TypeError('hotspan: counter("q") value must be a number, got string "3"'));
      expect(() => t.counter('q', NaN)).toThrow(new RangeError('hotspan: counter("q") value must be finite, got NaN'));
      expect(() => t.counter('q', -Infinity)).toThrow(RangeError);
      t.close();
      expect(() => t.counter('q', 1)).toThrow(/closed/);
    });

    it('writes Chrome JSON "C" events that the trace engine reads beside the spans', async () => {
      const t = make();
      record(t);
      const file = path.join(tmp, `${backend}.json`);
      await t.write(file);
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: ChromeEvent[] };
      const spans = doc.traceEvents.filter((e) => e.ph === 'X');
      const counters = doc.traceEvents.filter((e) => e.ph === 'C');
      expect(counters.map((e) => [e.name, e.args])).toEqual([
        ['queue', { value: 3 }],
        ['queue', { value: 5.5 }],
        ['queue', { value: -2 }],
        ['heap MiB', { value: 120.25 }],
      ]);
      // The writing process's pid (the js backend's WebAssembly writer: 1).
      const pid = backend === 'native' ? process.pid : 1;
      for (const e of counters) expect([e.pid, e.tid]).toEqual([pid, 0]);
      // On the spans' time axis: each sample lies where it was taken.
      const a = spans.find((e) => e.name === 'a') as ChromeEvent;
      const b = spans.find((e) => e.name === 'b') as ChromeEvent;
      const [q1, q2, q3, heap] = counters.map((e) => e.ts);
      expect(q1).toBeLessThanOrEqual(a.ts);
      expect(q2).toBeGreaterThanOrEqual(a.ts + (a.dur ?? 0));
      expect(heap).toBeGreaterThanOrEqual(q2);
      expect(b.ts).toBeGreaterThanOrEqual(heap);
      expect(q3).toBeGreaterThanOrEqual(b.ts + (b.dur ?? 0));
      // DevTools' engine models no generic counter track (only Chrome's own
      // UpdateCounters): it must parse the document with them and build the
      // same thread trees as without them.
      const withCounters = await traceEngineTrees(doc.traceEvents);
      const without = await traceEngineTrees(doc.traceEvents.filter((e) => e.ph !== 'C'));
      expect(withCounters).toEqual(without);
      expect([...withCounters.values()].flat().map((n) => n.name)).toEqual(['a', 'b']);
    });

    it('writes Perfetto counter tracks that protoc and protobufjs decode', async () => {
      const t = make();
      record(t);
      const file = path.join(tmp, `${backend}.pftrace`);
      await t.write(file);
      const bytes = readFileSync(file);
      const text = protocDecode(bytes);
      expect(text.match(/type: TYPE_COUNTER/g)?.length).toBe(4);
      expect(text).toContain('double_counter_value: 120.25');
      const packets = protobufjsPackets<Packet>(bytes);
      const process = packets.find((p) => p.trackDescriptor !== undefined && p.trackDescriptor.parentUuid === undefined && p.trackDescriptor.name === undefined);
      const tracks = packets.filter((p) => p.trackDescriptor?.counter !== undefined).map((p) => p.trackDescriptor);
      expect(tracks.map((d) => d?.name)).toEqual(['queue', 'heap MiB']);
      for (const d of tracks) expect(d?.parentUuid).toBe(process?.trackDescriptor?.uuid);
      const values = (uuid: string | undefined): number[] =>
        packets.filter((p) => p.trackEvent?.type === 'TYPE_COUNTER' && p.trackEvent.trackUuid === uuid).map((p) => p.trackEvent?.doubleCounterValue as number);
      expect(values(tracks[0]?.uuid)).toEqual([3, 5.5, -2]);
      expect(values(tracks[1]?.uuid)).toEqual([120.25]);
      // Timestamps on the spans' clock: the samples bracket the slices.
      const ts = (p: Packet): bigint => BigInt(p.timestamp ?? '0');
      const counterTs = packets.filter((p) => p.trackEvent?.type === 'TYPE_COUNTER').map(ts);
      const slices = packets.filter((p) => p.trackEvent?.type === 'TYPE_SLICE_BEGIN' || p.trackEvent?.type === 'TYPE_SLICE_END').map(ts);
      expect(counterTs[0] <= slices[0]).toBe(true); // queue 3, before a
      expect(counterTs[2] >= slices[3]).toBe(true); // queue -2, after b
      expect(counterTs[3] >= slices[1] && counterTs[3] <= slices[2]).toBe(true); // heap, between a and b
    });

    it('is summarized by hotspan report in both formats', async () => {
      const t = make();
      record(t);
      for (const ext of ['json', 'pftrace']) {
        const file = path.join(tmp, `${backend}-report.${ext}`);
        await t.write(file);
        expect(buildReport(file, 5, 'total').counters).toEqual([
          { name: 'queue', samples: 3, min: -2, mean: 6.5 / 3, max: 5.5 },
          { name: 'heap MiB', samples: 1, min: 120.25, mean: 120.25, max: 120.25 },
        ]);
      }
    });
  });
}

describe('counters on the noop backend and on joined threads', () => {
  it('noop: checks its arguments and records nothing', () => {
    const t = new Tracer({ backend: 'noop' });
    expect(() => t.counter('q', NaN)).toThrow(RangeError);
    t.counter('q', 1);
    t.close();
  });
});
