// snapshot()'s bounded, batched and columnar forms, and the refusal of a
// plain snapshot() that would not fit the V8 heap: in a child whose heap is
// capped, the refusal is a RangeError naming the bounded forms and the
// process goes on (reading in parts, querying); the control child
// materializes the same records past the check and dies of heap exhaustion,
// which shows the cap is one the refusal really saves the process from.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

import { loadNativeAddon } from '../lib/binding/native-loader';
import { tracerFactory } from './support/tracers';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const dist = path.join(__dirname, '..', 'dist', 'index.js');
const records = path.join(__dirname, '..', 'dist', 'read', 'records.js');
const internal = path.join(__dirname, '..', 'dist', 'tracer', 'internal.js');

const HEAP_MB = 48;
const SPANS = 500000;

/** A child with a `HEAP_MB` MiB heap that records SPANS spans, then reads them (mode 'refuse') or materializes them past the check ('control'). */
function child(backend: string, mode: 'refuse' | 'control'): ReturnType<typeof spawnSync> {
  const src = `
    const { Tracer } = require(${JSON.stringify(dist)});
    const t = new Tracer({ backend: ${JSON.stringify(backend)}, requireNative: ${String(backend === 'native')} });
    const id = t.name('s');
    for (let i = 0; i < ${String(SPANS)}; i++) { t.begin(id); t.end(); }
    t.flush();
    const out = {};
    if (${JSON.stringify(mode)} === 'control') {
      const { toRecords } = require(${JSON.stringify(records)});
      const { internals } = require(${JSON.stringify(internal)});
      const view = t[internals]().backend.freeze();
      out.records = toRecords(view.read(0, view.count)).length;
    } else {
      try { t.snapshot(); out.plain = 'returned'; } catch (e) { out.plain = e.constructor.name + ': ' + e.message; }
      let batches = 0, seen = 0;
      for (const b of t.snapshotBatches({ batch: 10000 })) { batches++; seen += b.length; }
      out.batches = batches; out.seen = seen;
      out.page = t.snapshot({ offset: ${String(SPANS - 5)}, limit: 100 }).map((r) => r.name);
      const c = t.snapshotColumns();
      out.columns = [c.count, c.total, c.times.length, c.fields.length];
      out.count = t.query().spans('s').count;
      out.stats = t.stats()[0].count;
    }
    process.stdout.write(JSON.stringify(out));
  `;
  return spawnSync(process.execPath, [`--max-old-space-size=${String(HEAP_MB)}`, '-e', src], { encoding: 'utf8', timeout: 120000 });
}

describe.each([
  ['native', skipNative],
  ['js', false],
] as const)('bounded reads, %s backend', (backend, skip) => {
  const make = tracerFactory(backend);

  it.skipIf(skip)(`refuses a plain snapshot() that would not fit a ${String(HEAP_MB)} MiB heap, and the process reads on`, () => {
    const r = child(backend, 'refuse');
    expect(r.stderr, String(r.stderr)).not.toMatch(/heap out of memory/);
    expect(r.status, String(r.stderr)).toBe(0);
    const out = JSON.parse(String(r.stdout)) as Record<string, unknown>;
    expect(out.plain).toMatch(/^RangeError: hotspan: snapshot\(\) of 500000 records would take about \d+ MiB of V8 heap/);
    expect(out.plain).toMatch(/snapshot\(\{ offset, limit \}\).*snapshotBatches\(\{ batch \}\).*snapshotColumns\(\{ offset, limit \}\)/);
    expect(out).toMatchObject({ batches: 50, seen: SPANS, page: ['s', 's', 's', 's', 's'], columns: [SPANS, SPANS, 2 * SPANS, 6 * SPANS], count: SPANS, stats: SPANS });
  });

  it.skipIf(skip)('control: the same records materialized past the check exhaust that heap', () => {
    const r = child(backend, 'control');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/heap out of memory/);
  });

  it.skipIf(skip)('snapshot({ offset, limit }), snapshotBatches() and snapshotColumns() read the records snapshot() has', async () => {
    const t = make();
    for (let i = 0; i < 50; i++) t.trace(i % 3 === 0 ? 'a' : 'b', () => {}, { i });
    await t.traceAsync('x', Promise.resolve(), { track: 'net' });
    t.group('g', () => t.trace('c', () => {}));
    const all = t.snapshot();
    expect(all.length).toBe(53);
    for (const [offset, limit] of [[0, 0], [0, 1], [3, 10], [49, 4], [52, 100], [53, 1], [1000, 5]]) {
      expect(t.snapshot({ offset, limit }), `${String(offset)}, ${String(limit)}`).toEqual(all.slice(offset, offset + limit));
    }
    expect(t.snapshot({ offset: 50 })).toEqual(all.slice(50));
    expect(t.snapshot({ limit: 2 })).toEqual(all.slice(0, 2));
    expect(t.snapshot({})).toEqual(all);
    for (const batch of [1, 7, 53, 1000]) expect([...t.snapshotBatches({ batch })].flat()).toEqual(all);
    expect([...t.snapshotBatches()].flat()).toEqual(all);

    const c = t.snapshotColumns({ offset: 10, limit: 20 });
    expect([c.offset, c.total, c.count]).toEqual([10, 53, 20]);
    expect(c.times).toBeInstanceOf(Float64Array);
    expect(c.fields).toBeInstanceOf(Uint32Array);
    const part = all.slice(10, 30);
    part.forEach((r, k) => {
      expect([c.times[2 * k], c.times[2 * k + 1]]).toEqual([r.start, r.end]);
      expect(c.names[c.fields[6 * k]]).toBe(r.name);
      expect(c.fields[6 * k + 1]).toBe(r.timeline);
    });
    expect(c.attrs.map(([k, text]) => [part[k].attrs, JSON.parse(text)])).toEqual(part.filter((r) => r.attrs).map((r) => [r.attrs, r.attrs]));
  });

  it.skipIf(skip)('a batch iteration reads the records of the moment it began', () => {
    const t = make();
    for (let i = 0; i < 10; i++) t.trace('a', () => {});
    const it = t.snapshotBatches({ batch: 4 });
    const first = it.next().value ?? [];
    for (let i = 0; i < 10; i++) t.trace('b', () => {});
    const rest = [...it].flat();
    expect([...first, ...rest].map((r) => r.name)).toEqual(Array<string>(10).fill('a'));
  });

  it.skipIf(skip)('names the bad argument', () => {
    const t = make();
    t.trace('a', () => {});
    expect(() => t.snapshot({ offset: -1 })).toThrow(new RangeError('hotspan: snapshot offset must be an integer >= 0, got number -1'));
    expect(() => t.snapshot({ limit: 1.5 })).toThrow(new RangeError('hotspan: snapshot limit must be an integer >= 0, got number 1.5'));
    expect(() => t.snapshot({ limit: '3' as unknown as number })).toThrow(/limit must be an integer >= 0, got string "3"/);
    expect(() => t.snapshot({ count: 3 } as unknown as object)).toThrow(/unknown snapshot option "count" \(known: offset, limit\)/);
    expect(() => t.snapshot(5 as unknown as object)).toThrow(new TypeError('hotspan: snapshot options must be an object, got number 5'));
    expect(() => t.snapshotBatches({ batch: 0 })).toThrow(new RangeError('hotspan: snapshotBatches batch must be an integer >= 1, got number 0'));
    expect(() => t.snapshotBatches({ size: 2 } as unknown as object)).toThrow(/unknown snapshotBatches option "size"/);
    expect(() => t.snapshotColumns({ offset: NaN })).toThrow(/snapshotColumns offset must be an integer >= 0, got number NaN/);
  });
});
