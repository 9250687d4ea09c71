// The two Chrome Trace Event JSON writers (native/core/chrome_json_writer.cc
// and lib/chrome-json.ts) agree, event by event, on one native snapshot:
// nesting, a span whose parent is still open, attributes of every JSON type,
// error and abandoned flags, names that need escaping, groups, a serial and
// a concurrent track with overlapping spans.
import { describe, expect, it } from 'vitest';

import { Tracer } from '../lib/index';
import { chromeJson } from '../lib/chrome-json';
import { internals } from '../lib/internal';
import { loadNativeAddon } from '../lib/native-loader';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';

interface Doc {
  traceEvents: Array<Record<string, unknown>>;
  displayTimeUnit: string;
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

describe('Chrome JSON writers', () => {
  it.skipIf(skipNative)('native writer == js writer on the native snapshot, event by event', async () => {
    const t = new Tracer({ backend: 'native', threadName: 'main "thread"\n' });
    try {
      t.trace('a', () =>
        t.trace('b \\ "quoted"\ttab', () => undefined, { k: 1, s: 'v é', f: 1.5, big: 2 ** 60, no: false }),
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
      const ps = ds.map((d, i) => t.traceAsync(`op${String(i)}`, d.promise, { track: net }));
      const k = t.traceAsync('kernel', Promise.resolve(7), { track: gpu });
      ds[1].resolve(1);
      await ps[1];
      ds[0].resolve(0);
      ds[2].resolve(2);
      await Promise.all([...ps, k]);
      t.group('g', () => t.trace('in group', () => undefined));
      t.flush();
      const nt = t[internals]().native;
      if (!nt) throw new Error('no native tracer');
      const native = JSON.parse(new TextDecoder().decode(nt.chromeJson())) as Doc;
      const js = JSON.parse(chromeJson(nt.snapshot(), new Set([gpu]))) as Doc;
      expect(native.displayTimeUnit).toBe('ms');
      expect(js.displayTimeUnit).toBe('ms');
      // Same events; each writer's order within a timeline is its own.
      const key = (e: Record<string, unknown>): string => JSON.stringify(e);
      const sorted = (d: Doc): Array<Record<string, unknown>> =>
        [...d.traceEvents].sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
      expect(sorted(js)).toEqual(sorted(native));
      // The scenario reached every kind of event it is meant to compare.
      const phases = new Set(native.traceEvents.map((e) => `${String(e.ph)}:${String(e.cat ?? '')}`));
      for (const p of ['M:', 'X:span', 'X:group', 'X:async', 'b:async', 'e:async']) expect(phases).toContain(p);
      expect(native.traceEvents.some((e) => (e.args as { error?: boolean } | undefined)?.error === true)).toBe(true);
      t.end();
    } finally {
      t.close();
    }
  });
});
