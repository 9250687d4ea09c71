// One suite, run against the native and the js backend (the recording core
// compiled to WebAssembly): the two must agree on every observable behaviour
// (records, ids, flags, errors, outputs).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { types } from 'node:util';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';

import { type SpanRecord } from '../lib/index';
import { internals } from '../lib/tracer/internal';
import { wellFormed } from '../lib/common/names';
import { tracerFactory } from './support/tracers';
import { recordForms, type SpanForm } from './support/span-forms';
import { loadNativeAddon } from '../lib/binding/native-loader';

const TWO32 = 4294967296;
const nativeLoad = loadNativeAddon();
// Without the addon the native half is skipped, except in CI where it must run.
const skipNative = nativeLoad.addon === undefined && process.env.CI !== 'true';
const dist = path.join(__dirname, '..', 'dist', 'index.js');
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-conf-'));

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function byName(records: readonly SpanRecord[], name: string): SpanRecord[] {
  return records.filter((r) => r.name === name);
}
function one(records: readonly SpanRecord[], name: string): SpanRecord {
  const found = byName(records, name);
  expect(found, `exactly one "${name}"`).toHaveLength(1);
  return found[0];
}

/** Exact nearest-rank quantile (ceil(q * n), 1-based). */
function exactQuantile(sorted: number[], q: number): number {
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length - 1e-9)));
  return sorted[rank - 1];
}

interface ChromeEvent {
  name: string;
  ph: string;
  ts?: number;
  dur?: number;
  pid: number;
  tid: number;
  cat?: string;
  id?: string | number;
  args?: Record<string, unknown>;
}

describe.each(['native', 'js'] as const)('%s backend', (kind) => {
  const suite = kind === 'native' && skipNative ? describe.skip : describe;

  suite('conformance', () => {
    const make = tracerFactory(kind);

    it('runs the backend it was asked for', () => {
      expect(make().backend).toBe(kind);
    });

    it('nests spans with ids, parents and depth', () => {
      const t = make();
      const a = t.name('a');
      t.begin(a);
      t.begin('b');
      t.end();
      t.begin('c');
      t.begin('d');
      t.end();
      t.end();
      t.end();
      const recs = t.snapshot();
      expect(recs.map((r) => r.name)).toEqual(['b', 'd', 'c', 'a']); // end order
      const ra = one(recs, 'a');
      const rb = one(recs, 'b');
      const rc = one(recs, 'c');
      const rd = one(recs, 'd');
      expect([ra.depth, rb.depth, rc.depth, rd.depth]).toEqual([0, 1, 1, 2]);
      expect(ra.parent).toBe(0);
      expect(rb.parent).toBe(ra.id);
      expect(rc.parent).toBe(ra.id);
      expect(rd.parent).toBe(rc.id);
      const tl = ra.timeline;
      for (const r of recs) {
        expect(r.timeline).toBe(tl);
        expect(Math.floor(r.id / TWO32)).toBe(tl);
        expect(r.id % TWO32).toBeGreaterThan(0);
        expect(r.timelineName).toBe('main');
        expect(r.timelineKind).toBe('js');
        expect([r.error, r.abandoned, r.async]).toEqual([false, false, false]);
        expect(r.attrs).toBeUndefined();
      }
      expect(new Set(recs.map((r) => r.id)).size).toBe(4);
      // begin order = local id order
      expect(ra.id < rb.id && rb.id < rc.id && rc.id < rd.id).toBe(true);
      expect(t.timelines().find((x) => x.id === tl)).toMatchObject({ name: 'main', kind: 'js' });
    });

    it('stamps spans inside the performance.now() readings around them', () => {
      const t = make({ threadName: 'clocked' });
      // The js backend stores ns: a reading comes back within its bound (half a ns).
      const tol = t.clockBoundMs;
      if (kind === 'native') {
        expect(tol).toBeGreaterThan(0);
        expect(tol).toBeLessThan(0.05);
      }
      const id = t.name('timed');
      const marks: Array<[number, number, number]> = [];
      for (let i = 0; i < 50; i++) {
        const t0 = performance.now();
        t.begin(id);
        const t1 = performance.now();
        t.end();
        const t2 = performance.now();
        marks.push([t0, t1, t2]);
      }
      const recs = byName(t.snapshot(), 'timed');
      expect(recs).toHaveLength(50);
      recs.forEach((r, i) => {
        const [t0, t1, t2] = marks[i];
        expect(r.start).toBeGreaterThanOrEqual(t0 - tol);
        expect(r.start).toBeLessThanOrEqual(t1 + tol);
        expect(r.end).toBeGreaterThanOrEqual(t1 - tol);
        expect(r.end).toBeLessThanOrEqual(t2 + tol);
        expect(r.duration).toBe(r.end - r.start);
        expect(r.timelineName).toBe('clocked');
      });
    });

    it('trace() returns the value, and flags + rethrows when fn throws', () => {
      const t = make();
      expect(t.trace('ok', () => 42)).toBe(42);
      const boom = new Error('boom');
      let caught: unknown;
      try {
        t.trace('bad', () => {
          t.begin('inner');
          t.end();
          throw boom;
        });
      } catch (e) {
        caught = e;
      }
      expect(caught).toBe(boom);
      const recs = t.snapshot();
      expect(one(recs, 'ok').error).toBe(false);
      const bad = one(recs, 'bad');
      expect(bad.error).toBe(true);
      expect(one(recs, 'inner').parent).toBe(bad.id);
      // The stack is balanced again.
      t.begin('after');
      t.end();
      expect(one(t.snapshot(), 'after').depth).toBe(0);
      expect(() => t.trace('x', 5 as unknown as () => void)).toThrow(
        new TypeError('hotspan: trace() needs a function, got number 5'),
      );
    });

    it('end() without an open span is a clear error that loses nothing', () => {
      const t = make();
      t.begin('kept');
      t.end();
      expect(() => t.end()).toThrow('hotspan: end() without an open span; nothing was changed');
      t.begin('outer');
      t.begin('inner');
      t.end();
      t.end();
      expect(() => t.end()).toThrow(/without an open span/);
      expect(t.snapshot().map((r) => r.name)).toEqual(['kept', 'inner', 'outer']);
      expect(one(t.snapshot(), 'inner').parent).toBe(one(t.snapshot(), 'outer').id);
    });

    it('rejects bad names with the offending value', () => {
      const t = make();
      expect(() => t.begin({} as unknown as string)).toThrow(
        new TypeError('hotspan: name must be a string or a name id, got object'),
      );
      expect(() => t.begin(1.5)).toThrow(RangeError);
      expect(() => t.begin(-1)).toThrow(/non-negative integer, got -1/);
      expect(() => t.begin(999_999)).toThrow(new RangeError('hotspan: unknown name id 999999 (use tracer.name(str) to get an id)'));
      expect(() => t.name(7 as unknown as string)).toThrow(new TypeError('hotspan: name must be a string, got number 7'));
      expect(() => t.name('')).toThrow(RangeError);
      expect(t.snapshot()).toHaveLength(0);
      expect(() => t.end()).toThrow(/without an open span/);
    });

    it('start() handles end once, in order', () => {
      const t = make();
      const outer = t.start('outer');
      const inner = t.start('inner', { k: 1 });
      expect(() => outer.end()).toThrow(/"outer" is not the innermost open span/);
      inner.end();
      expect(() => inner.end()).toThrow('hotspan: span "inner" was already ended');
      outer.end({ error: true });
      expect(outer.open).toBe(false);
      const recs = t.snapshot();
      expect(one(recs, 'inner')).toMatchObject({ parent: one(recs, 'outer').id, attrs: { k: 1 } });
      expect(one(recs, 'outer').error).toBe(true);
    });

    it('a handle whose span a plain end() closed never ends the span now at its depth', () => {
      const t = make();
      const h = t.start('handled');
      t.end(); // closes "handled" behind the handle's back
      t.begin('other'); // same depth, another span
      expect(() => h.end()).toThrow('hotspan: span "handled" was already ended by end(); nothing was changed');
      expect(h.open).toBe(false);
      t.end();
      const recs = t.snapshot();
      expect(one(recs, 'other')).toMatchObject({ abandoned: false, error: false, depth: 0 });
      expect(one(recs, 'handled').abandoned).toBe(false);
    });

    it('counts stats and keeps quantiles within 1% of the exact ones', () => {
      const t = make();
      const a = t.name('a');
      for (let i = 0; i < 200; i++) {
        t.begin(a);
        // Durations spread over a few octaves.
        const until = performance.now() + (i % 7) * 0.003;
        while (performance.now() < until);
        t.end();
      }
      for (let i = 0; i < 3; i++) t.trace('b', () => undefined);
      const rows = t.stats();
      const ra = rows.find((r) => r.name === 'a');
      const rb = rows.find((r) => r.name === 'b');
      expect(ra?.count).toBe(200);
      expect(rb?.count).toBe(3);
      if (!ra) return;
      const ns = byName(t.snapshot(), 'a')
        .map((r) => r.duration * 1e6)
        .sort((x, y) => x - y);
      const close = (got: number, want: number): void => {
        expect(Math.abs(got * 1e6 - want)).toBeLessThanOrEqual(want * 0.01 + 2);
      };
      close(ra.min, ns[0]);
      close(ra.max, ns[ns.length - 1]);
      close(ra.total, ns.reduce((x, y) => x + y, 0));
      close(ra.mean, ns.reduce((x, y) => x + y, 0) / ns.length);
      close(ra.p50, exactQuantile(ns, 0.5));
      close(ra.p90, exactQuantile(ns, 0.9));
      close(ra.p99, exactQuantile(ns, 0.99));
      // Rows come in total-descending order.
      for (let i = 1; i < rows.length; i++) expect(rows[i - 1].total).toBeGreaterThanOrEqual(rows[i].total);
    });

    it('carries attributes and rejects bad ones', () => {
      const t = make();
      t.begin('with', { s: 'x "quoted"\n', n: 1.5, b: true });
      t.end();
      t.trace('traced', () => 0, { k: 'v' });
      t.begin('empty', {});
      t.end();
      const recs = t.snapshot();
      expect(one(recs, 'with').attrs).toEqual({ s: 'x "quoted"\n', n: 1.5, b: true });
      expect(one(recs, 'traced').attrs).toEqual({ k: 'v' });
      expect(one(recs, 'empty').attrs).toBeUndefined();
      expect(() => t.begin('x', [] as unknown as Record<string, string>)).toThrow(
        new TypeError('hotspan: attributes must be a plain object, got array'),
      );
      expect(() => t.begin('x', { o: {} } as unknown as Record<string, string>)).toThrow(
        new TypeError('hotspan: attribute "o" must be a string, number or boolean, got object'),
      );
      expect(() => t.begin('x', { n: NaN })).toThrow(new RangeError('hotspan: attribute "n" must be a finite number, got NaN'));
      expect(() => t.begin('x', { span_id: 1 })).toThrow(/reserved/);
      expect(t.snapshot()).toHaveLength(3);
      expect(() => t.end()).toThrow(/without an open span/);
    });

    it('shows attribute values exactly as given, through the records and Chrome JSON (native: typed slots)', async () => {
      const t = make();
      // Count the addon's slot calls: the values below must take the fast path.
      const nt = t[internals]().native;
      const forms: SpanForm[] = [];
      if (nt !== undefined) {
        recordForms(nt, forms);
      }
      const numbers = [0, -0, 1, -1, 0.1, 1.5e-7, 1e-7, 123e-20, 1e21, 1e20, 2 ** 53 + 2, -(2 ** 31), 5e-324, Number.MAX_VALUE, -123.456e300];
      const strings = ['', 'GET', '/orders/17?x=1', 'x "quoted"\n\t\\', 'ünï€😀', 'lone \uD800 high', 'lone \uDC00 low', '\u0000\u001f'];
      const sets: Array<Record<string, string | number | boolean>> = [];
      for (const n of numbers) sets.push({ bytes: n });
      for (const s of strings) sets.push({ method: s, url: s, n: 3 });
      sets.push({ t: true, f: false, s: 'b', n: -0.5 });
      sets.push({ a: 1, b: 2, c: 3, d: 4, e: 5 }); // five keys: the JSON path
      for (const a of sets) {
        t.begin('span', a);
        t.end();
      }
      await t.traceAsync('req', Promise.resolve(1), { track: 'http', attrs: { method: 'POST', url: 'lone \uD800' } });
      // every set but the 5-key one, plus the async span
      if (nt !== undefined) expect(forms.filter((f) => f === 'view' || f === 'async view' || typeof f === 'number')).toHaveLength(sets.length);
      // Lone surrogates become U+FFFD (the one rule on both backends); -0 is written 0, as JSON.stringify does.
      const expected = (a: Record<string, string | number | boolean>): Record<string, string | number | boolean> =>
        JSON.parse(JSON.stringify(Object.fromEntries(Object.entries(a).map(([k, v]) => [k, typeof v === 'string' ? wellFormed(v) : v])))) as Record<string, string | number | boolean>;
      t.flush();
      const recs = byName(t.snapshot(), 'span');
      expect(recs.map((r) => r.attrs)).toEqual(sets.map(expected));
      expect(one(t.snapshot(), 'req').attrs).toEqual({ method: 'POST', url: 'lone \uFFFD' });
      const text = new TextDecoder().decode(await (async () => {
        const file = path.join(tmp, `${kind}-attrs.json`);
        await t.write(file);
        return readFileSync(file);
      })());
      // Numbers are written as JavaScript writes them (so both backends give the same text).
      for (const n of numbers) expect(text).toContain(`"bytes":${JSON.stringify(n)},`);
      const events = (JSON.parse(text) as { traceEvents: ChromeEvent[] }).traceEvents.filter((e) => e.name === 'span');
      expect(events).toHaveLength(sets.length);
      for (let i = 0; i < sets.length; i++) {
        const e = events.find((x) => x.args?.span_id === recs[i].id);
        for (const [k, v] of Object.entries(expected(sets[i]))) expect(e?.args?.[k], `${k} of set ${i}`).toStrictEqual(v);
      }
    });

    it('keeps attribute values exactly across string-read and storage boundaries, nested and async', async () => {
      const t = make();
      // Around the addon's one-pass read (128 UTF-8 bytes), with 2-, 3- and 4-byte characters
      // across it, past an attribute block (28 KiB), and lone surrogates in long text.
      const strings: string[] = [];
      for (let n = 120; n <= 132; n++) {
        for (const c of ['é', '€', '😀']) strings.push('a'.repeat(n) + c + 'z');
      }
      strings.push('x'.repeat(28 * 1024), '€'.repeat(10000), `${'y'.repeat(200)}\uD800${'z'.repeat(200)}`);
      const numbers = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 2 ** 53 + 1, 2 ** 64, -1e-300, 1e300];
      for (const s of strings) {
        t.begin('str', { s });
        t.end();
      }
      for (const n of numbers) t.trace('num', () => 0, { n, k: 'v' });
      // Nested spans with and without attributes: each keeps its own.
      t.begin('outer', { who: 'outer', n: 1 });
      t.begin('mid');
      t.trace('inner', () => t.trace('innermost', () => 0, { who: 'innermost' }), { who: 'inner', n: 2 });
      t.end();
      t.end();
      // More open async spans than the track's ring of open spans (256), ended in reverse order.
      const ends: Array<() => void> = [];
      const all: Array<Promise<unknown>> = [];
      for (let i = 0; i < 600; i++) {
        all.push(t.traceAsync('req', new Promise<void>((r) => ends.push(r)), { track: 'http', attrs: { i, url: `/o/${i}` } }));
      }
      for (let i = ends.length - 1; i >= 0; i--) ends[i]();
      await Promise.all(all);
      t.flush();
      const recs = t.snapshot();
      expect(byName(recs, 'str').map((r) => r.attrs?.s)).toEqual(strings.map(wellFormed));
      expect(byName(recs, 'num').map((r) => r.attrs)).toEqual(numbers.map((n) => ({ n, k: 'v' })));
      expect(one(recs, 'outer').attrs).toEqual({ who: 'outer', n: 1 });
      expect(one(recs, 'mid').attrs).toBeUndefined();
      expect(one(recs, 'inner').attrs).toEqual({ who: 'inner', n: 2 });
      expect(one(recs, 'innermost').attrs).toEqual({ who: 'innermost' });
      const reqs = byName(recs, 'req');
      expect(reqs).toHaveLength(600);
      for (const r of reqs) expect(r.attrs).toEqual({ i: r.attrs?.i, url: `/o/${String(r.attrs?.i)}` });
      expect(new Set(reqs.map((r) => r.attrs?.i)).size).toBe(600);
      await expect(t.settle({ timeoutMs: 0 })).resolves.toBeUndefined();
      // Non-finite numbers are refused on every path, naming the value; nothing is recorded.
      for (const bad of [NaN, Infinity, -Infinity]) {
        expect(() => t.begin('bad', { n: bad, k: 'v' })).toThrow(new RangeError(`hotspan: attribute "n" must be a finite number, got ${String(bad)}`));
        expect(() => t.traceAsync('bad', Promise.resolve(1), { attrs: { n: bad } })).toThrow(RangeError);
      }
      expect(() => t.begin('bad', { n: 10n } as unknown as Record<string, number>)).toThrow(
        new TypeError('hotspan: attribute "n" must be a string, number or boolean, got bigint 10'),
      );
      expect(byName(t.snapshot(), 'bad')).toHaveLength(0);
      expect(t.snapshot()).toHaveLength(recs.length);
    });

    it('reads own keys only when Object.prototype has an enumerable key (attributes and options)', async () => {
      const t = make();
      t.begin('warm', { a: 1 }); // the shape exists before the prototype changes
      t.end();
      const proto = Object.prototype as Record<string, unknown>;
      proto.polluted = 'x';
      try {
        t.begin('span', { a: 2 });
        t.end();
        await t.traceAsync('req', Promise.resolve(1), { track: 'http', attrs: { a: 3 } });
      } finally {
        delete proto.polluted;
      }
      t.flush();
      expect(one(t.snapshot(), 'span').attrs).toEqual({ a: 2 });
      expect(one(t.snapshot(), 'req').attrs).toEqual({ a: 3 });
    });

    it('writes Chrome JSON that matches the records event by event', async () => {
      const t = make({ threadName: 'main "thread"', processName: 'api\\"srv" é' });
      t.begin('outer', { who: 'me', n: 2 });
      t.trace('in\\ner "q"', () => undefined);
      try {
        t.trace('fails', () => {
          throw new Error('x');
        });
      } catch {
        // expected
      }
      t.end();
      t.group('phase', () => t.trace('grouped', () => undefined));
      const conc = t.track('net');
      await t.traceAsync('fetch', Promise.resolve(1), { track: conc, attrs: { url: '/a' } });
      const ser = t.track('gpu', { serial: true });
      await t.traceAsync('kernel', Promise.resolve(2), { track: ser });
      t.flush();
      const file = path.join(tmp, `${kind}-trace.json`);
      await t.write(file);
      const text = readFileSync(file, 'utf8');
      const doc = JSON.parse(text) as { traceEvents: ChromeEvent[]; displayTimeUnit: string };
      expect(doc.displayTimeUnit).toBe('ms');
      const events = doc.traceEvents;
      // The writing process's pid (the js backend's WebAssembly writer: 1).
      for (const e of events) expect(e.pid).toBe(kind === 'native' ? process.pid : 1);
      const proc = events.filter((e) => e.ph === 'M' && e.name === 'process_name');
      expect(proc).toHaveLength(1);
      // The name given (processName), escaped as every string is.
      expect(proc[0].args?.name).toBe('api\\"srv" é');

      const timelines = t.timelines();
      for (const tl of timelines) {
        const names = events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.tid === tl.id);
        expect(names).toHaveLength(1);
        expect(names[0].args?.name).toBe(tl.name);
      }
      expect(timelines.map((x) => x.name)).toEqual(
        expect.arrayContaining(['main "thread"', 'groups', 'track: net', 'track: gpu']),
      );

      const spans = events.filter((e) => e.ph === 'X' || e.ph === 'b');
      const recs = t.snapshot();
      expect(spans).toHaveLength(recs.length);
      const usClose = (us: number | undefined, ms: number): void => {
        expect(us).toBeTypeOf('number');
        // The ns back from us (README: round(us * 1000)) is the snapshot's ns.
        expect(Math.round((us as number) * 1000)).toBe(Math.round(ms * 1e6));
      };
      for (const r of recs) {
        const matches = spans.filter((e) => e.args?.span_id === r.id);
        expect(matches, `event of ${r.name}`).toHaveLength(1);
        const e = matches[0];
        expect(e.name).toBe(r.name);
        expect(e.tid).toBe(r.timeline);
        expect(e.args?.parent_id).toBe(r.parent);
        expect(e.args?.error === true).toBe(r.error);
        expect(e.args?.abandoned === true).toBe(r.abandoned);
        for (const [k, v] of Object.entries(r.attrs ?? {})) expect(e.args?.[k]).toBe(v);
        usClose(e.ts, r.start);
        if (r.timelineKind === 'groups') expect(e.cat).toBe('group');
        if (r.timelineKind === 'track') expect(e.cat).toBe('async');
        if (e.ph === 'X') {
          usClose((e.ts as number) + (e.dur as number), r.end);
        } else {
          // A concurrent track's b/e pair shares the span id.
          expect(r.timelineName).toBe('track: net');
          const ends = events.filter((x) => x.ph === 'e' && String(x.id) === String(e.id));
          expect(ends).toHaveLength(1);
          expect(String(e.id)).toBe(String(r.id));
          expect(ends[0].tid).toBe(r.timeline);
          usClose(ends[0].ts, r.end);
        }
      }
      // Serial tracks are complete events.
      expect(spans.find((e) => e.name === 'kernel')?.ph).toBe('X');
      expect(spans.find((e) => e.name === 'fetch')?.ph).toBe('b');
      await expect(t.write(path.join(tmp, 'trace.pb'))).rejects.toThrow(RangeError);
      await expect(t.write(path.join(tmp, 'trace.pb'))).rejects.toThrow(/\.json, \.pftrace, \.perfetto-trace/);
      await expect(t.write(path.join(tmp, 'trace.txt'))).rejects.toThrow(/trace\.txt/);
    });

    it('rejects a write it cannot make with the path and an fs-style code, and loses nothing', async () => {
      const t = make();
      t.trace('kept', () => undefined);
      t.flush();
      for (const name of ['trace.json', 'trace.pftrace']) {
        const missing = path.join(tmp, 'no-such-dir', `${kind}-${name}`);
        const err = await t.write(missing).then(
          () => undefined,
          (e: unknown) => e as NodeJS.ErrnoException,
        );
        expect(err).toBeInstanceOf(Error);
        expect(err?.code).toBe('ENOENT');
        expect(err?.message).toContain(missing);
      }
      // The recorded trace is intact: the next write has the span.
      const file = path.join(tmp, `${kind}-after-error.json`);
      await t.write(file);
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: ChromeEvent[] };
      expect(doc.traceEvents.filter((e) => e.name === 'kept')).toHaveLength(1);
      expect(t.snapshot().filter((r) => r.name === 'kept')).toHaveLength(1);
    });

    it('writes large traces whole: every span in the file, streamed in blocks', async () => {
      const t = make();
      const id = t.name('bulk');
      // Enough bytes for many 1 MiB blocks of JSON and of Perfetto.
      const n = 60000;
      for (let i = 0; i < n; i++) {
        t.begin(id);
        t.end();
      }
      t.flush();
      const file = path.join(tmp, `${kind}-bulk.json`);
      await t.write(file);
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: ChromeEvent[] };
      const ids = new Set(doc.traceEvents.filter((e) => e.name === 'bulk').map((e) => (e.args as { span_id: number }).span_id));
      expect(ids.size).toBe(n);
      expect(new Set(t.snapshot().filter((r) => r.name === 'bulk').map((r) => r.id))).toEqual(ids);
    });

    it('records nested groups, and group errors lose nothing', () => {
      const t = make();
      const v = t.group('step', () => t.group('forward', () => t.trace('op', () => 'r')), { n: 1 });
      expect(v).toBe('r');
      expect(() => t.groupEnd()).toThrow('hotspan: groupEnd() without an open group; nothing was changed');
      const boom = new Error('in group');
      expect(() =>
        t.group('failing', () => {
          throw boom;
        }),
      ).toThrow(boom);
      t.groupBegin('explicit');
      t.trace('in-explicit', () => undefined);
      expect(() => t.group('leaky', () => t.groupBegin('left-open'))).toThrow(/"leaky" is not the innermost open group/);
      t.groupEnd(); // left-open
      t.groupEnd(); // leaky
      t.groupEnd(); // explicit
      expect(() => t.groupEnd()).toThrow(/without an open group/);
      const recs = t.snapshot();
      const step = one(recs, 'step');
      const fwd = one(recs, 'forward');
      expect(step.timelineKind).toBe('groups');
      expect(step.timelineName).toBe('groups');
      expect(step.attrs).toEqual({ n: 1 });
      expect(fwd.parent).toBe(step.id);
      expect([step.depth, fwd.depth]).toEqual([0, 1]);
      expect(one(recs, 'failing').depth).toBe(0);
      expect(one(recs, 'left-open').parent).toBe(one(recs, 'leaky').id);
      const q = t.query();
      expect(q.group('step').first().spans('op').count).toBe(1);
      expect(q.group('step').first().groups('forward').count).toBe(1);
      expect(q.groupOf(one(recs, 'op'))?.name).toBe('forward');
      expect(q.group('explicit').first().spans().records.map((r) => r.name)).toEqual(['in-explicit']);
    });

    it('places spans of other timelines inside groups', async () => {
      const t = make();
      t.groupBegin('request');
      const done = t.traceAsync('db', Promise.resolve('row'), { track: 'db' });
      expect(await done).toBe('row');
      t.groupEnd();
      const q = t.query();
      const req = q.group('request').first();
      const db = req.spans('db').first();
      expect(db.timelineName).toBe('track: db');
      expect(db.timeline).not.toBe(req.record.timeline);
      expect(q.groupOf(db)?.name).toBe('request');
    });

    it('traceAsync passes values and rejections through, flagging errors', async () => {
      const t = make();
      await expect(t.traceAsync('ok', async () => 'v')).resolves.toBe('v');
      const reason = new Error('nope');
      await expect(t.traceAsync('bad', Promise.reject(reason))).rejects.toBe(reason);
      await expect(
        t.traceAsync('sync-throw', () => {
          throw reason;
        }),
      ).rejects.toBe(reason);
      const recs = t.snapshot();
      for (const r of recs) {
        expect(r.async).toBe(true);
        expect(r.timelineKind).toBe('track');
        expect(r.timelineName).toBe('track: async');
        expect(r.depth).toBe(0);
      }
      expect(one(recs, 'ok').error).toBe(false);
      expect(one(recs, 'bad').error).toBe(true);
      expect(one(recs, 'sync-throw').error).toBe(true);
      expect(() => t.traceAsync('x', 5 as unknown as Promise<number>)).toThrow(TypeError);
      expect(() => t.traceAsync('x', Promise.resolve(), { track: 999 })).toThrow(
        new RangeError('hotspan: async span rejected: unknown track 999 or name id ' + String(t.name('x'))),
      );
      expect(() => t.traceAsync('x', Promise.resolve(), { track: {} as unknown as number })).toThrow(
        new TypeError('hotspan: track must be a track id or name, got object'),
      );
      expect(t.snapshot()).toHaveLength(3);
      await t.settle({ timeoutMs: 1000 });
    });

    it('traceAsync: work that settles synchronously ends its span at once; thenables and promises end when they settle', async () => {
      const t = make();
      const open = (): number => (t as unknown as { asyncs: { open: number } }).asyncs.open;
      const names = (): string[] => t.snapshot().map((r) => r.name);
      // A sync return: ended (and recorded) before traceAsync returns.
      const value = { v: 1 };
      const pv = t.traceAsync('sync-value', () => value);
      expect(names()).toEqual(['sync-value']);
      expect(open()).toBe(0);
      // A sync throw: ended at once, flagged, the same error passed through.
      const reason = new TypeError('sync');
      const pt = t.traceAsync('sync-throw', () => {
        throw reason;
      });
      expect(names()).toEqual(['sync-value', 'sync-throw']);
      // A `then` getter that throws rejects with its error, as Promise.resolve does.
      const getterError = new RangeError('then getter');
      const pg = t.traceAsync('bad-then', () => ({
        get then(): never {
          throw getterError;
        },
      }));
      expect(names()).toEqual(['sync-value', 'sync-throw', 'bad-then']);
      expect(await pv).toBe(value);
      await expect(pt).rejects.toBe(reason);
      await expect(pg).rejects.toBe(getterError);
      expect(open()).toBe(0);
      // A thenable (not a promise) and a promise: open until they settle.
      let settleThenable!: (v: string) => void;
      // Not a promise: a bare object with a then method (cast to the type traceAsync takes).
      const thenable = {
        then(onFulfilled: (v: string) => unknown): void {
          settleThenable = (v) => onFulfilled(v);
        },
      } as unknown as PromiseLike<string>;
      const d = deferred<number>();
      const pth = t.traceAsync('thenable', () => thenable);
      const pp = t.traceAsync('promise', () => d.promise);
      await Promise.resolve(); // the thenable's then is called a microtask later
      expect(open()).toBe(2);
      expect(names()).not.toContain('thenable');
      expect(names()).not.toContain('promise');
      await expect(t.settle({ timeoutMs: 0 })).rejects.toThrow(/2 async span\(s\) still open/);
      const settled = t.settle({ timeoutMs: 60_000 });
      settleThenable('t');
      d.resolve(5);
      await settled;
      expect(await pth).toBe('t');
      expect(await pp).toBe(5);
      expect(open()).toBe(0);
      const recs = t.snapshot();
      expect(recs.map((r) => [r.name, r.error, r.async])).toEqual([
        ['sync-value', false, true],
        ['sync-throw', true, true],
        ['bad-then', true, true],
        ['thenable', false, true],
        ['promise', false, true],
      ]);
      for (const r of recs) expect(r.end).toBeGreaterThanOrEqual(r.start);
      expect(t.counts().dropped).toBe(0);
      // Only synchronous spans: settle() has nothing to wait for.
      t.traceAsync('again', () => 0);
      await t.settle({ timeoutMs: 0 });
      expect(one(t.snapshot(), 'again').error).toBe(false);
    });

    it('traceAsync with the async context on: sync work runs under its span, and a span after it is not its child', async () => {
      const t = make();
      t.enableAsyncContext();
      let inner: number | undefined;
      await t.traceAsync('outer', () => {
        inner = t.trace('inner', () => t.currentContext()?.spanId === undefined ? -1 : 1);
        return 0;
      });
      expect(inner).toBe(1);
      t.trace('after', () => 0);
      const recs = t.snapshot();
      const outer = one(recs, 'outer');
      expect(one(recs, 'inner').parent).toBe(outer.id);
      expect(one(recs, 'after').parent).not.toBe(outer.id);
      expect(outer.end).toBeLessThanOrEqual(one(recs, 'after').start);
    });

    it('settle() waits for async spans, and on timeout names them and keeps them', async () => {
      const t = make();
      const slow = deferred<string>();
      const p = t.traceAsync('slow-op', slow.promise);
      const q = t.traceAsync('quick', Promise.resolve(1));
      await q;
      const err = await t.settle({ timeoutMs: 20 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(/settle\(\) timed out after 20 ms; 1 async span\(s\) still open: "slow-op"/);
      expect(byName(t.snapshot(), 'slow-op')).toHaveLength(0);
      const settled = t.settle({ timeoutMs: 5_000 });
      slow.resolve('late');
      await settled;
      expect(await p).toBe('late');
      expect(one(t.snapshot(), 'slow-op').error).toBe(false);
      await expect(t.settle({ timeoutMs: -1 })).rejects.toThrow(RangeError);
    });

    it('keeps concurrent-track spans overlapping', async () => {
      const t = make();
      const track = t.track('pool');
      const a = deferred<void>();
      const b = deferred<void>();
      const pa = t.traceAsync('A', a.promise, { track });
      const pb = t.traceAsync('B', b.promise, { track });
      a.resolve();
      await pa;
      b.resolve();
      await pb;
      const recs = t.snapshot();
      expect(one(recs, 'B').start).toBeLessThan(one(recs, 'A').end);
      expect(() => t.track('pool', { serial: true })).toThrow(/already exists as a concurrent track/);
    });

    it('starts a serial-track span when the previous one ended (real ordering)', async () => {
      const t = make();
      const track = t.track('stream', { serial: true });
      const a = deferred<void>();
      const b = deferred<void>();
      const pa = t.traceAsync('A', a.promise, { track });
      const pb = t.traceAsync('B', b.promise, { track }); // requested before A ends
      a.resolve();
      await pa;
      b.resolve();
      await pb;
      const recs = t.snapshot();
      expect(one(recs, 'B').start).toBe(one(recs, 'A').end);
    });

    it('closes idempotently; recording then throws, reading still works', () => {
      const t = make();
      t.trace('before', () => undefined);
      t.begin('left-open');
      t.close();
      t.close();
      expect(t.closed).toBe(true);
      const closed = 'hotspan: tracer is closed';
      expect(() => t.begin('x')).toThrow(closed);
      expect(() => t.begin(0)).toThrow(closed);
      expect(() => t.end()).toThrow(closed);
      expect(() => t.trace('x', () => 1)).toThrow(closed);
      expect(() => t.start('x')).toThrow(closed);
      expect(() => t.groupBegin('x')).toThrow(closed);
      expect(() => t.track('x')).toThrow(closed);
      expect(() => t.name('x')).toThrow(closed);
      expect(() => t.traceAsync('x', Promise.resolve())).toThrow(closed);
      expect(t.snapshot().map((r) => r.name)).toEqual(['before']);
      expect(t.stats().map((r) => r.name)).toEqual(['before']);
    });

    if (kind === 'js') {
      it('applies the serial rule on an injected clock (tunix: requested 4, previous ends 5 -> starts 5)', async () => {
        let now = 0;
        const t = make({ clock: () => now });
        const serial = t.track('device', { serial: true });
        const conc = t.track('host');
        const a = deferred<void>();
        const b = deferred<void>();
        const c = deferred<void>();
        const d = deferred<void>();
        const pa = t.traceAsync('A', a.promise, { track: serial });
        const pc = t.traceAsync('C', c.promise, { track: conc });
        now = 4;
        const pb = t.traceAsync('B', b.promise, { track: serial });
        const pd = t.traceAsync('D', d.promise, { track: conc });
        now = 5;
        a.resolve();
        c.resolve();
        await Promise.all([pa, pc]);
        now = 7;
        b.resolve();
        d.resolve();
        await Promise.all([pb, pd]);
        const recs = t.snapshot();
        expect([one(recs, 'A').start, one(recs, 'A').end]).toEqual([0, 5]);
        expect([one(recs, 'B').start, one(recs, 'B').end]).toEqual([5, 7]);
        expect([one(recs, 'D').start, one(recs, 'D').end]).toEqual([4, 7]);
        // A span requested after the previous one ended keeps its start.
        now = 9;
        const e = t.traceAsync('E', Promise.resolve(), { track: serial });
        now = 10;
        await e;
        expect([one(t.snapshot(), 'E').start, one(t.snapshot(), 'E').end]).toEqual([9, 10]);
      });

      it('answers step-metric queries on a hand-built scenario with known times', async () => {
        let now = 0;
        const t = make({ clock: () => now });
        const gpu = t.track('gpu0', { serial: true });
        // Three steps of 9.5 ms, 10 ms apart. Host: data [0,2], forward [2,5],
        // backward [5,8], optimizer group [8,9]. Device kernels (serial):
        // k1 [3,4]; k2 requested 4.5 -> [4.5,7]; k3 requested 6 while k2 runs -> [7,8.5].
        for (let s = 0; s < 3; s++) {
          const b = s * 10;
          now = b;
          t.groupBegin('step', { step: s });
          t.begin('data');
          now = b + 2;
          t.end();
          t.begin('forward');
          now = b + 3;
          const k1 = deferred<void>();
          const p1 = t.traceAsync('kernel', k1.promise, { track: gpu });
          now = b + 4;
          k1.resolve();
          await p1;
          now = b + 4.5;
          const k2 = deferred<void>();
          const p2 = t.traceAsync('kernel', k2.promise, { track: gpu });
          now = b + 5;
          t.end();
          t.begin('backward');
          now = b + 6;
          const k3 = deferred<void>();
          const p3 = t.traceAsync('kernel', k3.promise, { track: gpu });
          now = b + 7;
          k2.resolve();
          await p2;
          now = b + 8;
          t.end();
          t.groupBegin('optimizer');
          now = b + 8.5;
          k3.resolve();
          await p3;
          now = b + 9;
          t.groupEnd();
          now = b + 9.5;
          t.groupEnd();
        }
        const q = t.query();
        const steps = q.group('step');
        expect(steps.count).toBe(3);
        expect(steps.durations()).toEqual([9.5, 9.5, 9.5]);
        expect(steps.all().map((g) => g.start)).toEqual([0, 10, 20]);
        expect(steps.nth(1).record.attrs).toEqual({ step: 1 });
        expect(steps.nth(-1).start).toBe(20);
        expect(steps.last().start).toBe(20);
        expect(() => steps.nth(3)).toThrow(new RangeError('hotspan: no group "step" at index 3 (3 recorded)'));
        expect(() => q.group('nope').first()).toThrow(/no group "nope" at index 0 \(0 recorded\)/);

        const s1 = steps.nth(1);
        expect(s1.spans('forward').total()).toBe(3);
        expect(s1.spans('data').durations()).toEqual([2]);
        // Sum and mean of phase times over the run.
        const phases = ['data', 'forward', 'backward'];
        expect(phases.map((p) => s1.spans(p).total()).reduce((a, b) => a + b, 0)).toBe(8);
        expect(q.spans('forward').mean()).toBe(3);
        expect(q.spans('forward').count).toBe(3);
        // The serial rule on the device track, and the device's idle time per step.
        const kernels = s1.spans('kernel');
        expect(kernels.records.map((r) => [r.start - 10, r.end - 10])).toEqual([
          [3, 4],
          [4.5, 7],
          [7, 8.5],
        ]);
        expect(kernels.durations()).toEqual([1, 2.5, 1.5]);
        expect(kernels.gaps()).toEqual([0.5]);
        expect(kernels.busy()).toBe(5);
        const device = q.timeline('gpu0');
        expect(device.group('step').first().idle()).toBe(4.5);
        expect(device.group('step').first().gaps()).toEqual([0.5]);
        expect(q.timeline('track: gpu0').spans().count).toBe(9);
        // Host: phases back to back inside a step, 2 ms idle between steps.
        const host = q.timeline('main');
        expect(host.spans().gaps()).toEqual([2, 2]);
        expect(host.group('step').first().idle()).toBe(1.5);
        expect(host.spans('kernel').count).toBe(0);
        expect(() => q.timeline('nope')).toThrow(RangeError);
        // Nested groups and attribution.
        expect(s1.groups('optimizer').count).toBe(1);
        expect(s1.groups('optimizer').first().duration).toBe(1);
        // k3 starts at 7 (serial rule), before the optimizer group opened at 8.
        expect(s1.groups('optimizer').first().spans('kernel').count).toBe(0);
        expect(q.groupOf(kernels.nth(2))?.name).toBe('step');
        expect(q.groupOf(kernels.nth(2))?.start).toBe(10);
        expect(q.groupOf(q.spans('data').first())?.start).toBe(0);
        // Stats agree with the known durations.
        const step = t.stats().find((r) => r.name === 'step');
        expect(step).toMatchObject({ count: 3, total: 28.5, min: 9.5, max: 9.5, mean: 9.5 });
        expect(step?.p50).toBeCloseTo(9.5, 6);
        const kernel = t.stats().find((r) => r.name === 'kernel');
        expect(kernel?.count).toBe(9);
        expect(kernel?.total).toBeCloseTo(15, 9);
      });

    }

    if (kind !== 'native') {
      it('says the C ABI needs the native backend', () => {
        const t = make();
        expect(() => t.nativeApi()).toThrow(/nativeApi\(\) needs the native backend/);
      });
    }

    if (kind === 'native') {
      it('puts a worker that joins the tracer on its own timeline, inside groups', async () => {
        const t = make();
        const token = t.share();
        t.groupBegin('step');
        const worker = new Worker(
          `const { workerData, parentPort } = require('node:worker_threads');
           const { Tracer } = require(workerData.dist);
           const w = Tracer.join(workerData.token, { threadName: 'worker A' });
           w.trace('in-worker', () => w.trace('nested', () => 1));
           w.close();
           parentPort.postMessage('done');`,
          { eval: true, workerData: { dist, token } },
        );
        const exited = new Promise<number>((resolve, reject) => {
          worker.once('error', reject);
          worker.once('exit', resolve);
        });
        await new Promise<void>((resolve, reject) => {
          worker.once('message', () => resolve());
          worker.once('error', reject);
        });
        t.groupEnd();
        expect(await exited).toBe(0);
        t.flush();
        const recs = t.snapshot();
        const w = one(recs, 'in-worker');
        expect(w.timelineName).toBe('worker A');
        expect(w.timelineKind).toBe('js');
        expect(w.timeline).not.toBe(one(recs, 'step').timeline);
        expect(one(recs, 'nested').parent).toBe(w.id);
        expect(Math.floor(w.id / TWO32)).toBe(w.timeline);
        const step = t.query().group('step').first();
        expect(step.spans().records.map((r) => r.name).sort()).toEqual(['in-worker', 'nested']);
        expect(t.timelines().find((x) => x.name === 'worker A')?.exited).toBe(true);
      });

      it('hands out the C ABI as an External', () => {
        const t = make();
        const api = t.nativeApi();
        expect(types.isExternal(api)).toBe(true);
      });
    }
  });
});
