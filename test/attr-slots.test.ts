// The native backend's attribute slots (native/addon/attr_values.h): every
// way a value crosses (slot view, interned id, boolean in the code, argument)
// keeps it exactly, the addon checks what it reads, and the facade picks the
// view for the common values.
import { describe, expect, it } from 'vitest';

import { internals } from '../lib/tracer/internal';
import { loadNativeAddon } from '../lib/binding/native-loader';
import type { NativeTracer } from '../lib/binding/native-binding';
import { asyncBeginSlots, asyncBeginValuesView, beginSlots, beginView, recordForms, type SpanForm } from './support/span-forms';
import { tracerFactory } from './support/tracers';

const skip = loadNativeAddon().addon === undefined && process.env.CI !== 'true';

// SlotKind of attr_values.h.
const VIEW_NUMBER = 0;
const VIEW_VALUE = 1;
const FALSE = 2;
const TRUE = 3;
const ARGUMENT = 4;
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('did not throw');
}
const code = (shape: number, ...kinds: number[]): number => kinds.reduce((c, k, i) => c | (k << (3 * i)), shape << 12);

(skip ? describe.skip : describe)('attribute slots (native)', () => {
  const make = tracerFactory('native');

  function native(): { t: ReturnType<typeof make>; nt: NativeTracer } {
    const t = make();
    const nt = t[internals]().native;
    if (nt === undefined) throw new Error('no native tracer');
    return { t, nt };
  }

  it('stores values from the view, interned ids, the code and arguments exactly, in key order', () => {
    const { t, nt } = native();
    const name = t.name('direct');
    const view = nt.slotView();
    expect(view).toBeInstanceOf(Float64Array);
    if (view === undefined) return;
    const shape = nt.defineShape(['n', 's', 'b', 'a']);
    const get = nt.defineValue('GET \u00e9\uD800');
    view[0] = -1.25e-300;
    view[1] = get;
    expect(beginSlots(nt, name, code(shape, VIEW_NUMBER, VIEW_VALUE, TRUE, ARGUMENT), 0, 0, 0, 'x'.repeat(300))).toBeUndefined();
    nt.end();
    // Every slot as an argument: the form without a view (external buffers refused).
    expect(beginSlots(nt, name, code(shape, ARGUMENT, ARGUMENT, ARGUMENT, ARGUMENT), 2 ** 53 + 2, 'arg', false, true)).toBeUndefined();
    nt.end();
    view[3] = 7.5;
    expect(beginSlots(nt, name, code(shape, FALSE, VIEW_VALUE, FALSE, VIEW_NUMBER))).toBeUndefined();
    nt.end();
    t.flush();
    const attrs = t.snapshot().map((r) => r.attrs);
    expect(attrs).toEqual([
      { n: -1.25e-300, s: 'GET \u00e9\uFFFD', b: true, a: 'x'.repeat(300) },
      { n: 2 ** 53 + 2, s: 'arg', b: false, a: true },
      { n: false, s: 'GET \u00e9\uFFFD', b: false, a: 7.5 },
    ]);
    expect(attrs.map((a) => Object.keys(a ?? {}))).toEqual([['n', 's', 'b', 'a'], ['n', 's', 'b', 'a'], ['n', 's', 'b', 'a']]);
  });

  it('refuses what it cannot store, and names a bad code or value id, recording nothing', async () => {
    const { t, nt } = native();
    const name = t.name('bad');
    const view = nt.slotView();
    if (view === undefined) return;
    const shape = nt.defineShape(['v']);
    const track = t.track('http');
    for (const bad of [NaN, Infinity, -Infinity]) {
      view[0] = bad;
      expect(beginSlots(nt, name, code(shape, VIEW_NUMBER))).toBe(-1);
      expect(beginSlots(nt, name, code(shape, ARGUMENT), bad)).toBe(-1);
      expect(asyncBeginSlots(nt, track, name, code(shape, VIEW_NUMBER))).toBe(-1);
    }
    expect(beginSlots(nt, name, code(shape, ARGUMENT), {})).toBe(-1);
    expect(beginSlots(nt, name, code(shape, ARGUMENT), 10n)).toBe(-1);
    nt.defineValue('one');
    for (const id of [-1, 0.5, 1, 1e9, NaN, Infinity]) {
      view[0] = id;
      const e = thrown(() => beginSlots(nt, name, code(shape, VIEW_VALUE)));
      expect(e).toBeInstanceOf(RangeError);
      expect(e.message).toBe(`hotspan: slot 0 must hold an interned value id (below 1), got ${String(id)}`);
    }
    for (const c of [code(shape + 1, VIEW_NUMBER), code(shape, 5)]) {
      const e = thrown(() => beginSlots(nt, name, c));
      expect(e).toBeInstanceOf(RangeError);
      expect(e.message).toBe(`hotspan: code must name a defined shape (below 1) and slot kinds 0 to 4, got ${c}`);
    }
    // (A code that is not a number is no slots form: begin()'s second argument
    // decides the form, and a string there is the JSON attributes form.)
    expect(nt.openDepth()).toBe(0);
    t.flush();
    expect(t.snapshot()).toHaveLength(0);
    await t.settle({ timeoutMs: 1000 });
  });

  it('begin()\'s view form reads the name id and the code from the view, and names a bad one, recording nothing', () => {
    const { t, nt } = native();
    const name = t.name('view');
    const view = nt.slotView();
    if (view === undefined) return;
    expect(view).toHaveLength(6);
    const shape = nt.defineShape(['n', 's']);
    const id = nt.defineValue('GET');
    view[0] = 0.5;
    view[1] = id;
    view[4] = name;
    view[5] = code(shape, VIEW_NUMBER, VIEW_VALUE);
    expect(beginView(nt)).toBeUndefined();
    nt.end();
    for (const bad of [-1, 0.5, 2 ** 32, NaN, Infinity]) {
      view[4] = bad;
      const e = thrown(() => beginView(nt));
      expect(e).toBeInstanceOf(RangeError);
      expect(e.message).toBe(`hotspan: slot view name id must be a uint32, got ${String(bad)}`);
      view[4] = name;
      view[5] = bad;
      const c = thrown(() => beginView(nt));
      expect(c).toBeInstanceOf(RangeError);
      expect(c.message).toBe(`hotspan: slot view code must be a uint32, got ${String(bad)}`);
    }
    // An ARGUMENT slot has no value in the view: a bad code for the view form.
    const withArg = code(shape, VIEW_NUMBER, ARGUMENT);
    view[5] = withArg;
    const e = thrown(() => beginView(nt));
    expect(e).toBeInstanceOf(RangeError);
    expect(e.message).toBe(`hotspan: code must name a defined shape (below 1) and slot kinds 0 to 4, got ${withArg}`);
    // An unknown name id: the status, as begin() answers it.
    view[4] = name + 1000;
    view[5] = code(shape, VIEW_NUMBER, VIEW_VALUE);
    expect(beginView(nt)).toBeTypeOf('number');
    expect(nt.openDepth()).toBe(0);
    t.flush();
    expect(t.snapshot().map((r) => r.attrs)).toEqual([{ n: 0.5, s: 'GET' }]);
  });

  it('asyncBegin()\'s values form reads the track and name from the async view and the code from the slot view', async () => {
    const { t, nt } = native();
    const name = t.name('req');
    const track = t.track('http');
    const view = nt.slotView();
    const args = nt.asyncView();
    if (view === undefined || args === undefined) return;
    const shape = nt.defineShape(['method', 'bytes']);
    const get = nt.defineValue('GET');
    const begin = (tr: number, n: number, c: number): number => {
      args[0] = tr;
      args[1] = n;
      view[5] = c;
      args[4] = 12345; // overwritten by every answer
      expect(asyncBeginValuesView(nt)).toBeUndefined();
      return args[4];
    };
    view[0] = get;
    view[1] = 2.5;
    const local = begin(track, name, code(shape, VIEW_VALUE, VIEW_NUMBER));
    expect(local).toBeGreaterThan(0);
    args[2] = track * 2 ** 32 + local;
    args[3] = 0;
    expect(nt.asyncEnd()).toBeUndefined();
    // A value with no slot form: refused (-1), nothing begun; an unknown track or a track that is not a uint32: 0.
    view[1] = NaN;
    expect(begin(track, name, code(shape, VIEW_VALUE, VIEW_NUMBER))).toBe(-1);
    view[1] = 1;
    expect(begin(track + 1000, name, code(shape, VIEW_VALUE, VIEW_NUMBER))).toBe(0);
    expect(begin(0.5, name, code(shape, VIEW_VALUE, VIEW_NUMBER))).toBe(0);
    // A bad code (an ARGUMENT slot, an unknown shape) or one that is not a uint32: a RangeError naming it.
    for (const [c, message] of [
      [code(shape, VIEW_VALUE, ARGUMENT), `hotspan: code must name a defined shape (below 1) and slot kinds 0 to 4, got ${code(shape, VIEW_VALUE, ARGUMENT)}`],
      [code(shape + 1, VIEW_VALUE, VIEW_NUMBER), `hotspan: code must name a defined shape (below 1) and slot kinds 0 to 4, got ${code(shape + 1, VIEW_VALUE, VIEW_NUMBER)}`],
      [-1, 'hotspan: slot view code must be a uint32, got -1'],
    ] as const) {
      args[0] = track;
      args[1] = name;
      view[5] = c;
      const e = thrown(() => asyncBeginValuesView(nt));
      expect(e).toBeInstanceOf(RangeError);
      expect(e.message).toBe(message);
    }
    expect(nt.openAsync()).toEqual([]);
    t.flush();
    expect(t.snapshot().map((r) => [r.name, r.attrs])).toEqual([['req', { method: 'GET', bytes: 2.5 }]]);
  });

  it('sends common values through the view with no arguments, and others as arguments', async () => {
    const { t, nt } = native();
    // Per call: 'view' (begin()'s view form, no argument), 'async view' (asyncBegin()'s values form), or the
    // arguments after (nameId, code) or (track, nameId, code).
    const calls: SpanForm[] = [];
    recordForms(nt, calls);
    const routes = ['/a', '/b', '/c'];
    for (let i = 0; i < 30; i++) t.trace('route', () => 0, { route: routes[i % 3], bytes: i * 1.5, ok: i % 2 === 0 });
    await t.traceAsync('req', Promise.resolve(1), { track: 'http', attrs: { method: 'GET', url: '/orders' } });
    await t.traceAsync('req', Promise.resolve(1), { track: 'http', attrs: { method: 'GET', url: 'z'.repeat(65) } });
    t.begin('long', { text: 'y'.repeat(65) });
    t.end();
    t.begin('inf', { n: 1 });
    t.end();
    expect(() => t.begin('inf', { n: Infinity })).toThrow(RangeError);
    // Everything in the view, for the async span too; the long strings need their arguments.
    expect(calls.slice(0, 32)).toEqual([...new Array(30).fill('view'), 'async view', 4]);
    expect(calls[32]).toBe(4);
    t.flush();
    const recs = t.snapshot();
    expect(recs.filter((r) => r.name === 'route').map((r) => r.attrs)).toEqual(
      Array.from({ length: 30 }, (_, i) => ({ route: routes[i % 3], bytes: i * 1.5, ok: i % 2 === 0 })),
    );
    expect(recs.filter((r) => r.name === 'req').map((r) => r.attrs)).toEqual([
      { method: 'GET', url: '/orders' },
      { method: 'GET', url: 'z'.repeat(65) },
    ]);
    expect(recs.find((r) => r.name === 'long')?.attrs).toEqual({ text: 'y'.repeat(65) });
    expect(recs.filter((r) => r.name === 'inf')).toHaveLength(1);
  });

  it('keeps each interned value exactly when a slot cycles through more values than it remembers', () => {
    const { t, nt } = native();
    const calls: SpanForm[] = [];
    recordForms(nt, calls);
    // Slot 0 mostly repeats 3 values, with one of 3 others every 7th span (more than the 4 it remembers:
    // hits, misses and evictions); slot 1 cycles through all 6. Built at run time (not one string object
    // per value); then a 65-unit string of NULs, the length past which values are not interned.
    const values = ['GET', 'PUT', 'POST', 'HEAD', 'PATCH', 'DELETE'].map((v) => [...v].join(''));
    const nul = '\u0000'.repeat(65);
    const want: Array<Record<string, string>> = [];
    for (let i = 0; i < 60; i++) {
      const a = { m: values[i % 7 === 6 ? 3 + (i % 3) : i % 3], o: values[(i * 5 + 1) % 6] };
      want.push({ ...a });
      t.begin('cycle', a);
      t.end();
    }
    // In slot 0 after the others, and in slot 2, whose remembered values were never set.
    for (const a of [{ m: nul, o: 'PUT' }, { m: 'GET', o: 'PUT' }, { m: 'GET', o: 'PUT', x: nul }] as Array<Record<string, string>>) {
      want.push({ ...a });
      t.begin('cycle', a);
      t.end();
    }
    t.flush();
    expect(t.snapshot().map((r) => r.attrs)).toEqual(want);
    // The interned ones crossed in the view; the long one as an argument.
    expect(calls).toEqual([...new Array(60).fill('view'), 4, 'view', 4]);
  });

  it("stores the full form once the tracer's attribute dictionary is full, and reads every form back exactly", () => {
    const { t, nt } = native();
    const name = t.name('dict');
    const view = nt.slotView();
    if (view === undefined) return;
    // Known before the dictionary fills: a shape (compact form) and a value (a dictionary id).
    const early = nt.defineShape(['route', 'n', 'ok']);
    const get = nt.defineValue('GET');
    // Shapes with ever shorter long keys fill its byte bound (AttrDict::kMaxBytes, 4 MiB) to within
    // a few hundred bytes: shapes after that have no dictionary id, nor has a value (its first
    // segment alone is 8 KiB).
    for (const len of [240000, 24000, 2400, 240, 24]) {
      for (let i = 0; i < 12; i++) nt.defineShape([0, 1, 2, 3].map((k) => `${k}.${i}.`.padEnd(len, 'k')));
    }
    const late = nt.defineShape(['route', 'n', 'ok']);
    const post = nt.defineValue('POST \u00e9');
    const spans: Array<[number, number, number, number]> = [
      [early, get, 1.5, TRUE], // compact: value id, number, boolean
      [early, post, -0, FALSE], // compact: the late value as its text
      [late, get, 2 ** 70, TRUE], // full form: every slot with its key
      [late, post, 1e-7, FALSE],
    ];
    for (const [shape, value, n, ok] of spans) {
      view[0] = value;
      view[1] = n;
      expect(beginSlots(nt, name, code(shape, VIEW_VALUE, VIEW_NUMBER, ok))).toBeUndefined();
      nt.end();
    }
    expect(beginSlots(nt, name, code(late, ARGUMENT, ARGUMENT, ARGUMENT), 'arg', 3, true)).toBeUndefined();
    nt.end();
    t.flush();
    const attrs = t.snapshot().map((r) => r.attrs);
    expect(attrs).toEqual([
      { route: 'GET', n: 1.5, ok: true },
      { route: 'POST \u00e9', n: 0, ok: false },
      { route: 'GET', n: 2 ** 70, ok: true },
      { route: 'POST \u00e9', n: 1e-7, ok: false },
      { route: 'arg', n: 3, ok: true },
    ]);
    expect(attrs.map((a) => Object.keys(a ?? {}))).toEqual(new Array(5).fill(['route', 'n', 'ok']));
  });

  it('keeps every span of a burst past the async ring (grown to 4096, then the overflow map), ended out of order', async () => {
    const t = make();
    const ends: Array<() => void> = [];
    const all: Array<Promise<unknown>> = [];
    const n = 5000;
    for (let i = 0; i < n; i++) {
      all.push(t.traceAsync('req', new Promise<void>((r) => ends.push(r)), { track: 'http', attrs: { i } }));
    }
    // Odd ones first, then the even ones backwards.
    for (let i = 1; i < n; i += 2) ends[i]();
    for (let i = n - 2; i >= 0; i -= 2) ends[i]();
    await Promise.all(all);
    t.flush();
    const reqs = t.snapshot().filter((r) => r.name === 'req');
    expect(reqs).toHaveLength(n);
    expect(reqs.map((r) => r.attrs?.i).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: n }, (_, i) => i));
    for (const r of reqs) expect(r.id % 4294967296).toBe(Number(r.attrs?.i) + 1);
    await expect(t.settle({ timeoutMs: 0 })).resolves.toBeUndefined();
  });
});
