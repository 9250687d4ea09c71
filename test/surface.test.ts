// The three backends expose the same public surface, and noop accepts every
// call while recording nothing.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { ClosedBackend } from '../lib/backends/closed-backend';
import { Tracer } from '../lib/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { NativeBackend } from '../lib/backends/native-backend';
import { NoopBackend } from '../lib/backends/noop-backend';
import { WasmBackend } from '../lib/backends/wasm-backend';
import { WasmJoinedBackend } from '../lib/backends/wasm-joined';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-surface-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** name -> arity of every method and accessor reachable from `obj` (own and inherited, Object excluded). */
function surface(obj: object): Record<string, number | 'get'> {
  const out: Record<string, number | 'get'> = {};
  for (let p: object | null = obj; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const key of Object.getOwnPropertyNames(p)) {
      if (key === 'constructor' || key in out) continue;
      const d = Object.getOwnPropertyDescriptor(p, key);
      if (d?.get) out[key] = 'get';
      else if (typeof d?.value === 'function') out[key] = (d.value as (...a: unknown[]) => unknown).length;
    }
  }
  return out;
}

/** Public methods only: not the private helpers TypeScript leaves on the prototype. */
const PUBLIC = [
  'name', 'begin', 'end', 'trace', 'start', 'track', 'traceAsync', 'settle', 'group', 'groupBegin',
  'groupEnd', 'flush', 'counts', 'snapshot', 'timelines', 'stats', 'query', 'write', 'share', 'nativeApi',
  'close', 'now', 'backend', 'clockBoundMs', 'closed',
];

describe('public surface', () => {
  const kinds = skipNative ? (['js', 'noop'] as const) : (['native', 'js', 'noop'] as const);

  it('is the same for every backend', () => {
    const tracers = kinds.map((backend) => new Tracer({ backend }));
    const surfaces = tracers.map((t) => surface(t));
    for (const s of surfaces) expect(s).toEqual(surfaces[0]);
    for (const name of PUBLIC) expect(surfaces[0][name], name).toBeDefined();
    expect(surfaces[0]).toMatchObject({ begin: 2, end: 0, trace: 3, traceAsync: 3, group: 3, write: 1 });
    expect(typeof Tracer.join).toBe('function');
    tracers.forEach((t, i) => expect(t.backend).toBe(kinds[i]));
    for (const t of tracers) t.close();
  });

  it('is the same for every Backend implementation', () => {
    const classes = [NativeBackend, WasmBackend, WasmJoinedBackend, NoopBackend, ClosedBackend];
    const protos = classes.map((c) => {
      const s = surface(c.prototype);
      // Implementation helpers of one backend are not part of the interface.
      return Object.fromEntries(Object.entries(s).filter(([k]) => k in surface(NoopBackend.prototype)));
    });
    const noop = surface(NoopBackend.prototype);
    for (const p of protos) expect(Object.keys(p).sort()).toEqual(Object.keys(noop).sort());
    for (const c of classes) {
      const s = surface(c.prototype);
      for (const [k, arity] of Object.entries(noop)) if (arity !== 'get') expect(s[k], `${c.name}.${k}`).toBe(arity);
    }
  });

  describe.skipIf(skipNative)('native', () => {
    it('skips nothing', () => {
      expect(kinds).toContain('native');
    });
  });
});

describe('noop backend', () => {
  it('accepts every call and records nothing', async () => {
    const t = new Tracer({ backend: 'noop' });
    const id = t.name('a');
    t.begin(id);
    t.begin('b', { k: 1 });
    t.end();
    t.end();
    t.end(); // no open span: still accepted
    expect(t.trace('x', () => 5)).toBe(5);
    expect(() =>
      t.trace('x', () => {
        throw new Error('passes through');
      }),
    ).toThrow('passes through');
    const h = t.start('h');
    h.end();
    expect(() => h.end()).toThrow(/already ended/);
    const track = t.track('gpu', { serial: true });
    await expect(t.traceAsync('async', Promise.resolve(3), { track })).resolves.toBe(3);
    await expect(t.traceAsync('async', Promise.reject(new Error('r')))).rejects.toThrow('r');
    expect(t.group('g', () => 'v')).toBe('v');
    t.groupBegin('g');
    t.groupEnd();
    t.groupEnd();
    t.flush();
    await t.settle({ timeoutMs: 1 });
    expect(t.snapshot()).toEqual([]);
    expect(t.timelines()).toEqual([]);
    expect(t.stats()).toEqual([]);
    expect(t.query().spans().count).toBe(0);
    expect(t.query().group('g').count).toBe(0);
    const file = path.join(tmp, 'noop.json');
    await t.write(file);
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: Array<{ ph: string }> };
    expect(doc.traceEvents.filter((e) => e.ph !== 'M')).toEqual([]);
    expect(() => t.share()).toThrow(/share\(\) needs the native or js backend.*noop backend/);
    expect(() => t.nativeApi()).toThrow(/nativeApi\(\) needs the native backend.*noop backend/);
    expect(typeof t.now()).toBe('number');
    expect(t.clockBoundMs).toBe(0);
    // Argument types are still checked.
    expect(() => t.begin(null as unknown as string)).toThrow(TypeError);
    t.close();
    t.close();
    expect(() => t.begin('a')).toThrow('hotspan: tracer is closed');
  });

  it('validates options', () => {
    expect(() => new Tracer({ backend: 'gpu' as 'js' })).toThrow(
      new RangeError("hotspan: backend must be 'native', 'js' or 'noop', got string \"gpu\""),
    );
    expect(() => new Tracer({ backend: 'js', wakeHighWater: 0 })).toThrow(RangeError);
    expect(() => new Tracer({ backend: 'js', threadName: 3 as unknown as string })).toThrow(TypeError);
    // The js backend's clock is a test's, built over the backend (test/support/tracers.ts): not an option.
    expect(() => new Tracer({ backend: 'js', clock: () => 0 } as unknown as { backend: 'js' })).toThrow(/unknown option "clock"/);
    expect(() => new Tracer({ backend: 'js', bogus: 1 } as unknown as { backend: 'js' })).toThrow(/unknown option "bogus"/);
    expect(() => new Tracer(5 as unknown as { backend: 'js' })).toThrow(TypeError);
  });
});
