// The native backend's per-span async calls (native/addon/hot_path.h,
// async_args.h): begins answer the token's local id (a small integer) and the
// facade adds the track; asyncBegin()/asyncEnd() (the view forms) read their numbers from
// the async view, check them, and answer undefined for a span ended (the
// begin leaves its local id in the view); each binding's view calls act on
// that binding, slot functions or not (call_slots.h); and traceAsync over
// them keeps its semantics and its counts.
import { describe, expect, it } from 'vitest';

import { spanId, STATUS_INVALID } from '../lib/common/flags';
import { internals } from '../lib/tracer/internal';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { TAG_LOCAL_ARGS, TAG_TOKEN_ARGS, type NativeTracer } from '../lib/binding/native-binding';
import { tracerFactory } from './support/tracers';

const skip = loadNativeAddon().addon === undefined && process.env.CI !== 'true';

// AsyncArgs::Index of native/addon/async_args.h.
const TRACK = 0;
const NAME = 1;
const TOKEN = 2;
const FLAGS = 3;
const LOCAL = 4;

(skip ? describe.skip : describe)('async begin and end (native)', () => {
  const make = tracerFactory('native');

  function native(): { t: ReturnType<typeof make>; nt: NativeTracer; view: Float64Array } {
    const t = make();
    const nt = t[internals]().native;
    if (nt === undefined) throw new Error('no native tracer');
    const view = nt.asyncView();
    if (view === undefined) throw new Error('no async view');
    return { t, nt, view };
  }
  const openTokens = (nt: NativeTracer): number[] => nt.openAsync().map(([token]) => token);

  it('a begin answers the local id; the track id above it is the token the core keeps open', () => {
    const { t, nt, view } = native();
    const track = t.track('http');
    const name = t.name('req');
    view[TRACK] = track;
    view[NAME] = name;
    expect(nt.asyncBegin()).toBeUndefined();
    const a = view[LOCAL];
    // The argument forms: the view's tag says so (native/addon/span_calls.h).
    view[LOCAL] = TAG_LOCAL_ARGS;
    const b = nt.asyncBegin(track, name);
    view[LOCAL] = TAG_LOCAL_ARGS;
    const c = nt.asyncBegin(track, name, '{"k":1}');
    for (const local of [a, b, c]) {
      expect(Number.isInteger(local) && local > 0 && local < 2 ** 31).toBe(true);
    }
    expect(new Set([a, b, c]).size).toBe(3);
    expect(openTokens(nt).sort()).toEqual([a, b, c].map((l) => spanId(track, l)).sort());
    // Ended through the view and through arguments: undefined, then the
    // second end of the same token is refused with its status.
    view[TOKEN] = spanId(track, a);
    view[FLAGS] = 0;
    expect(nt.asyncEnd()).toBeUndefined();
    expect(nt.asyncEnd()).toBe(STATUS_INVALID);
    view[TOKEN] = TAG_TOKEN_ARGS;
    expect(nt.asyncEnd(spanId(track, b), 0)).toBeUndefined();
    expect(nt.asyncEnd(spanId(track, b), 0)).toBe(STATUS_INVALID);
    expect(openTokens(nt)).toEqual([spanId(track, c)]);
    expect(nt.asyncEnd(spanId(track, c), 0)).toBeUndefined();
    t.flush();
    expect(t.stats().find((r) => r.name === 'req')?.count).toBe(3);
    t.close();
  });

  it('refuses view numbers that are not ids, tokens or flags, and changes nothing', () => {
    const { t, nt, view } = native();
    const track = t.track('http');
    const name = t.name('req');
    for (const [tr, nm] of [
      [NaN, name],
      [track + 0.5, name],
      [-1, name],
      [track, 2 ** 32],
      [track, name + 0.25],
      [track, Infinity],
    ]) {
      view[TRACK] = tr;
      view[NAME] = nm;
      view[LOCAL] = -1;
      expect(nt.asyncBegin()).toBeUndefined();
      expect(view[LOCAL]).toBe(0);
    }
    expect(nt.openAsync()).toEqual([]);
    view[TRACK] = track;
    view[NAME] = name;
    nt.asyncBegin();
    const token = spanId(track, view[LOCAL]);
    for (const [tok, flags] of [
      [token, 0.5],
      [token, -1],
      [token, NaN],
      [token + 0.5, 0],
      [0, 0],
      [NaN, 0],
    ]) {
      view[TOKEN] = tok;
      view[FLAGS] = flags;
      expect(nt.asyncEnd()).toBe(STATUS_INVALID);
    }
    expect(openTokens(nt)).toEqual([token]);
    view[TOKEN] = token;
    view[FLAGS] = 0;
    expect(nt.asyncEnd()).toBeUndefined();
    expect(nt.openAsync()).toEqual([]);
    t.close();
  });

  it('each binding\'s view calls act on its own tracer, for more live tracers than there are call slots', () => {
    // 70 > call_slots::kSlots (64): the first ones get slot functions, the
    // rest the data-pointer ones. A slot function that read another entry
    // would read another binding's view and begin or end on its tracer.
    const ts = Array.from({ length: 70 }, () => native());
    const tracks = ts.map(({ t }, k) => t.track(`http${String(k)}`));
    const names = ts.map(({ t }, k) => t.name(`req${String(k)}`));
    // Every view staged first, then every begin: each must read its own.
    ts.forEach(({ view }, k) => {
      view[TRACK] = tracks[k];
      view[NAME] = names[k];
      view[LOCAL] = -1;
    });
    const tokens = ts.map(({ nt, view }, k) => {
      expect(nt.asyncBegin()).toBeUndefined();
      expect(view[LOCAL], `tracer ${String(k)}`).toBeGreaterThan(0);
      const token = spanId(tracks[k], view[LOCAL]);
      expect(openTokens(nt)).toEqual([token]);
      return token;
    });
    ts.forEach(({ view }, k) => {
      view[TOKEN] = tokens[k];
      view[FLAGS] = 0;
    });
    const order = ts.map((_, k) => (k * 37) % ts.length); // 37 is coprime with 70: a permutation
    expect(new Set(order).size).toBe(ts.length);
    for (const k of order) {
      expect(ts[k].nt.asyncEnd(), `tracer ${String(k)}`).toBeUndefined();
      expect(ts[k].nt.openAsync()).toEqual([]);
    }
    ts.forEach(({ t, nt }, k) => {
      expect(nt.asyncEnd()).toBe(STATUS_INVALID);
      t.flush();
      expect(t.stats().map((r) => [r.name, r.count])).toEqual([[`req${String(k)}`, 1]]);
    });
  });

  it('traceAsync: values, rejections and sync throws pass through, errors are flagged, every span ends', async () => {
    const { t } = native();
    const n = 3000; // past the track's first ring of open slots
    const outcomes = await Promise.allSettled(
      Array.from({ length: n }, (_, i) =>
        t.traceAsync(
          'op',
          i % 3 === 0
            ? async () => i
            : i % 3 === 1
              ? async () => {
                  throw new RangeError(`r${String(i)}`);
                }
              : () => {
                  throw new TypeError(`s${String(i)}`);
                },
          { track: 'http' },
        ),
      ),
    );
    outcomes.forEach((o, i) => {
      if (i % 3 === 0) expect(o).toEqual({ status: 'fulfilled', value: i });
      else expect(o.status === 'rejected' && (o.reason as Error).message).toBe(`${i % 3 === 1 ? 'r' : 's'}${String(i)}`);
    });
    await t.settle({ timeoutMs: 60000 });
    const spans = t.snapshot().filter((s) => s.name === 'op');
    expect(spans.length).toBe(n);
    expect(spans.filter((s) => s.error).length).toBe((2 * n) / 3);
    expect(new Set(spans.map((s) => s.id)).size).toBe(n);
    expect(spans.every((s) => s.async && s.timelineName === 'track: http')).toBe(true);
    expect(t.counts().dropped).toBe(0);
    t.close();
  });
});
