// W3C Trace Context in and out (tracer.extract / tracer.inject), spans begun
// under an extracted context, and parents across await with the async
// context (AsyncLocalStorage): one spec for the native and the js backend
// (whose ids come from the core's resolver compiled to WebAssembly), in the
// main thread and in joined workers; the main-thread spec also for the js
// backend on the recording core in WebAssembly ('wasm').
import { validateHeaderValue } from 'node:http';
import * as path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';

import { Tracer, type SpanRecord } from '../lib/index';
import { internals } from '../lib/tracer/internal';
import { jsBackend } from '../lib/tracer/backend-choice';
import { resolveOptions } from '../lib/tracer/options';
import { tracerOver } from '../lib/tracer/tracer';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { Receiver } from './support/otlp-receiver';
import { tracerFactory } from './support/tracers';

// Without the addon the native half is skipped, except in CI where it must run.
const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const dist = path.join(__dirname, '..', 'dist', 'index.js');

const byName = (recs: readonly SpanRecord[], name: string): SpanRecord => {
  const r = recs.filter((x) => x.name === name);
  expect(r.length, name).toBe(1);
  return r[0];
};

/** The W3C ids of every committed record, by name (the resolver every output reads: OTLP, the OTel adapter). */
function idsByName(t: Tracer): Map<string, { trace: string; span: string; parent: string; resolved: boolean }> {
  t.flush();
  const view = t[internals]().backend.freeze();
  const snap = view.read(0, view.count);
  const ids = view.spanIds();
  const out = new Map<string, { trace: string; span: string; parent: string; resolved: boolean }>();
  const hex = (v: bigint, n: number) => v.toString(16).padStart(n, '0');
  for (let i = 0; i < view.count; i++) {
    out.set(snap.names[snap.fields[6 * i]], {
      trace: hex(ids[5 * i], 16) + hex(ids[5 * i + 1], 16),
      span: hex(ids[5 * i + 2], 16),
      parent: hex(ids[5 * i + 3], 16),
      resolved: (ids[5 * i + 4] & 0x100n) !== 0n,
    });
  }
  return out;
}

describe('extract (W3C traceparent / tracestate)', () => {
  const make = tracerFactory('native');

  it('reads a valid traceparent and tracestate, case-insensitive header names, Headers objects', () => {
    const t = make();
    expect(t.extract({ traceparent: PARENT, tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' })).toEqual({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
      traceState: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
      isRemote: true,
    });
    expect(t.extract({ TraceParent: PARENT })?.spanId).toBe('b7ad6b7169203331');
    expect(t.extract(new Headers({ traceparent: PARENT }))?.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    // Several tracestate headers are one list; empty members are dropped.
    expect(t.extract({ traceparent: PARENT, tracestate: ['a=1,,', ' b=2 '] })?.traceState).toBe('a=1,b=2');
    expect(t.extract({ traceparent: PARENT.replace(/-01$/, '-00') })?.traceFlags).toBe(0);
  });

  it('parses a future version as version 00 and ignores what follows a dash', () => {
    const t = make();
    const future = 'cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03-what-the-future-will-be-like';
    // Only the sampled bit means something to version 00.
    expect(t.extract({ traceparent: future })).toMatchObject({ spanId: 'b7ad6b7169203331', traceFlags: 1 });
    expect(t.extract({ traceparent: 'cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })?.traceFlags).toBe(1);
  });

  it.each([
    ['version ff', 'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'],
    ['version 00 with more after it', `${PARENT}-extra`],
    ['a future version followed by no dash', 'cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x'],
    ['uppercase hex', '00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01'],
    ['an all-zero trace id', '00-00000000000000000000000000000000-b7ad6b7169203331-01'],
    ['an all-zero parent id', '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01'],
    ['a short trace id', '00-0af7651916cd43dd8448eb211c80319-b7ad6b7169203331-01'],
    ['non-hex flags', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g'],
    ['a bad version', '0x-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'],
    ['wrong separators', '00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01'],
    ['an empty value', ''],
  ])('ignores a traceparent with %s', (_what, value) => {
    const t = make();
    expect(t.extract({ traceparent: value, tracestate: 'a=1' })).toBeUndefined();
  });

  it('ignores two traceparent headers, and anything that is not a header object', () => {
    const t = make();
    expect(t.extract({ traceparent: [PARENT, PARENT] })).toBeUndefined();
    for (const bad of [undefined, null, 42, 'traceparent', {}]) expect(t.extract(bad)).toBeUndefined();
    expect(t.extract({ traceparent: 55 as unknown as string })).toBeUndefined();
  });

  it.each([
    ['an uppercase key', 'Rojo=1'],
    ['a duplicate key', 'a=1,a=2'],
    ['a member without =', 'a'],
    ['a value with a comma-free = inside', 'a=b=c'],
    ['33 members', Array.from({ length: 33 }, (_, i) => `k${String(i)}=v`).join(',')],
    ['a value ending in a space', 'a=1 ,b'],
  ])('drops a tracestate with %s and keeps the traceparent', (_what, value) => {
    const t = make();
    const ctx = t.extract({ traceparent: PARENT, tracestate: value });
    expect(ctx?.spanId).toBe('b7ad6b7169203331');
    expect(ctx?.traceState).toBeUndefined();
  });

  it('keeps multi-tenant keys', () => {
    expect(make().extract({ traceparent: PARENT, tracestate: 'fw529a3039@dt=ZmYzYzljMmMzZA,a=1' })?.traceState).toBe(
      'fw529a3039@dt=ZmYzYzljMmMzZA,a=1',
    );
  });
});

describe('hostile carriers', () => {
  const t = new Tracer({ backend: 'noop' });
  const ctx = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };

  it('extract() never throws: a throwing getter, get() or Proxy carries no context', () => {
    const getter = Object.defineProperty({}, 'traceparent', {
      enumerable: true,
      get() {
        throw new Error('getter');
      },
    });
    const stateGetter = Object.defineProperty({ traceparent: PARENT }, 'tracestate', {
      enumerable: true,
      get() {
        throw new Error('getter');
      },
    });
    const getFn = {
      get(): string {
        throw new Error('get()');
      },
    };
    const proxy = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        ownKeys() {
          throw new Error('trap');
        },
        getOwnPropertyDescriptor() {
          throw new Error('trap');
        },
      },
    );
    for (const carrier of [getter, stateGetter, getFn, proxy]) expect(t.extract(carrier)).toBeUndefined();
  });

  it.each([
    ['CR LF', 'a=1\r\nx-injected: 1'],
    ['a 1 MB value', `a=${'x'.repeat(1 << 20)}`],
    ['33 members', Array.from({ length: 33 }, (_, i) => `k${String(i)}=v`).join(',')],
    ['513 characters', `a=${'x'.repeat(255)},b=${'y'.repeat(253)}`],
    ['an uppercase key', 'Rojo=1'],
  ])('inject() leaves out a traceState with %s, and http accepts what it wrote', (_what, traceState) => {
    const h = t.inject<Record<string, string>>({}, { ...ctx, traceState });
    expect(h).toEqual({ traceparent: PARENT });
    for (const [k, v] of Object.entries(h)) expect(() => validateHeaderValue(k, v)).not.toThrow();
  });

  it('inject() writes a valid traceState as given', () => {
    const traceState = `a=${'x'.repeat(254)},b=${'y'.repeat(253)}`; // 512 characters
    expect(t.inject({}, { ...ctx, traceState })).toEqual({ traceparent: PARENT, tracestate: traceState });
  });

  it('inject() into a frozen object or a throwing set() is a TypeError naming the carrier', () => {
    expect(() => t.inject(Object.freeze({}), ctx)).toThrow(TypeError);
    expect(() => t.inject(Object.freeze({}), ctx)).toThrow(/inject\(\) cannot write the traceparent header into its headers, object/);
    class Carrier {
      set(): void {
        throw new Error('read-only');
      }
      get(): undefined {
        return undefined;
      }
    }
    expect(() => t.inject(new Carrier(), ctx)).toThrow(/object \(Carrier\).*read-only/);
  });
});

describe.each(['native', 'js', 'wasm'] as const)('%s backend', (kind) => {
  const suite = kind === 'native' && skipNative ? describe.skip : describe;
  suite('inject and spans under an extracted context', () => {
    const make = tracerFactory(kind);
    const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

    it('writes the current span: one trace per local root, a span id per span', () => {
      const t = make();
      const none = t.inject({});
      expect(none).toEqual({});
      const seen: Array<Record<string, string>> = [];
      t.trace('a', () => {
        seen.push(t.inject({}));
        t.trace('b', () => seen.push(t.inject({})));
      });
      t.trace('c', () => seen.push(t.inject({})));
      const [a, b, c] = seen.map((h) => TRACEPARENT.exec(h.traceparent));
      expect(a && b && c).toBeTruthy();
      if (!a || !b || !c) return;
      expect(b[1]).toBe(a[1]);
      expect(b[2]).not.toBe(a[2]);
      expect(c[1]).not.toBe(a[1]);
      // Headers objects are written through set().
      const h = new Headers();
      t.trace('d', () => t.inject(h));
      expect(h.get('traceparent')).toMatch(TRACEPARENT);
    });

    it('a span begun under an extracted context joins its trace, with the remote span as parent', async () => {
      const t = make();
      const remote = t.extract({ traceparent: PARENT, tracestate: 'congo=t61rcWkgMzE' });
      expect(remote).toBeDefined();
      if (remote === undefined) return;
      const out: Array<Record<string, string>> = [];
      await t.withContext(remote, async () => {
        t.trace('server', () => out.push(t.inject({})));
        await delay(1);
        // start() handles and traceAsync too, after an await.
        const h = t.start('handle');
        out.push(t.inject({}));
        h.end();
        await t.traceAsync('io', async () => {
          await delay(1);
          out.push(t.inject({}));
        });
      });
      for (const h of out) {
        expect(h.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
        expect(h.traceparent).not.toContain('b7ad6b7169203331');
        expect(h.tracestate).toBe('congo=t61rcWkgMzE');
      }
      expect(new Set(out.map((h) => h.traceparent)).size).toBe(out.length);
      // Outside withContext the remote context is gone.
      t.trace('later', () => expect(t.inject<Record<string, string>>({}).traceparent).not.toContain('0af7651916cd43dd8448eb211c80319c'));
    });

    it('an open span of a remote-parented trace passes its tracestate on after the withContext() callback returned', async () => {
      const t = make();
      const remote = t.extract({ traceparent: PARENT, tracestate: 'congo=t61rcWkgMzE' });
      if (remote === undefined) throw new Error('no context');
      // Left open: the callback returns, and the async context with it.
      t.withContext(remote, () => t.begin('server'));
      const out: Array<Record<string, string>> = [t.inject({})];
      // Async spans begun under the open span, injected from after an await.
      const io = t.traceAsync('io', async () => {
        await delay(1);
        out.push(t.inject({}));
        t.trace('db', () => out.push(t.inject({})));
      });
      const h = t.start('handle');
      t.trace('inner', () => out.push(t.inject({})));
      h.end();
      t.end();
      await io;
      expect(out).toHaveLength(4);
      for (const x of out) {
        expect(x.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
        expect(x.tracestate).toBe('congo=t61rcWkgMzE');
      }
      // The records' tracestates (what OTLP's trace_state and the adapter send) agree.
      t.flush();
      const view = t[internals]().backend.freeze();
      const snap = view.read(0, view.count);
      const states = view.spanTracestates();
      const names = ['server', 'io', 'db', 'handle', 'inner'];
      for (let i = 0; i < view.count; i++) {
        const name = snap.names[snap.fields[6 * i]];
        if (names.includes(name)) expect(states.get(i), name).toBe('congo=t61rcWkgMzE');
      }
      // A later trace of its own carries none.
      t.trace('later', () => expect(t.inject<Record<string, string>>({}).tracestate).toBeUndefined());
    });

    it('the ids inject() writes are the ids of the records (what OTLP and the OTel adapter send)', async () => {
      const t = make();
      t.enableAsyncContext();
      const seen = new Map<string, string>();
      const remote = t.extract({ traceparent: PARENT });
      if (remote === undefined) throw new Error('no context');
      t.trace('root', () => {
        seen.set('root', t.inject<Record<string, string>>({}).traceparent);
        t.trace('child', () => seen.set('child', t.inject<Record<string, string>>({}).traceparent));
      });
      await t.withContext(remote, () =>
        t.traceAsync('remote req', async () => {
          seen.set('remote req', t.inject<Record<string, string>>({}).traceparent);
          await delay(1);
          t.trace('remote db', () => seen.set('remote db', t.inject<Record<string, string>>({}).traceparent));
        }),
      );
      const ids = idsByName(t);
      for (const [name, header] of seen) {
        const r = ids.get(name);
        expect(r?.resolved, name).toBe(true);
        expect(header, name).toBe(`00-${String(r?.trace)}-${String(r?.span)}-01`);
      }
      expect(ids.get('child')?.parent).toBe(ids.get('root')?.span);
      expect(ids.get('root')?.parent).toBe('0000000000000000');
      expect(ids.get('remote req')?.parent).toBe('b7ad6b7169203331');
      expect(ids.get('remote db')?.parent).toBe(ids.get('remote req')?.span);
      expect(ids.get('remote db')?.trace).toBe('0af7651916cd43dd8448eb211c80319c');
    });

    it('checks a given context and the carrier', () => {
      const t = make();
      expect(() => t.withContext({ traceId: 'xyz', spanId: 'b7ad6b7169203331', traceFlags: 1 }, () => 0)).toThrow(TypeError);
      expect(() => t.withContext({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: '0'.repeat(16), traceFlags: 1 }, () => 0)).toThrow(
        /spanId/,
      );
      expect(() => t.inject(null as unknown as Record<string, string>)).toThrow(TypeError);
      expect(t.inject({}, { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 0 })).toEqual({
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00',
      });
    });
  });

  suite('async context: parents across await', () => {
    const make = tracerFactory(kind);

    it('a span begun after an await gets the span current when the work was scheduled as parent, and its trace', async () => {
      const t = make();
      t.enableAsyncContext();
      const traces: Record<string, string> = {};
      const request = (n: string, wait: number) =>
        t.traceAsync(`req ${n}`, async () => {
          traces[`req ${n}`] = t.currentContext()?.traceId ?? '';
          await delay(wait);
          t.trace(`db ${n}`, () => {
            traces[`db ${n}`] = t.currentContext()?.traceId ?? '';
          });
          t.begin(`plain ${n}`);
          t.end();
        });
      // Interleaved: each continuation must find its own request.
      await Promise.all([request('1', 5), request('2', 1)]);
      const done = new Promise<void>((resolve) => {
        t.trace('cb', () => setTimeout(() => t.trace('timer', () => resolve()), 1));
      });
      await done;
      const recs = t.snapshot();
      for (const n of ['1', '2']) {
        const req = byName(recs, `req ${n}`);
        expect(byName(recs, `db ${n}`).parent, n).toBe(req.id);
        expect(byName(recs, `plain ${n}`).parent, n).toBe(req.id);
        expect(traces[`db ${n}`]).toBe(traces[`req ${n}`]);
        expect(traces[`req ${n}`]).toMatch(/^[0-9a-f]{32}$/);
      }
      expect(traces['req 1']).not.toBe(traces['req 2']);
      expect(byName(recs, 'timer').parent).toBe(byName(recs, 'cb').id);
    });

    it('without the async context a continuation span is a root', async () => {
      const t = make();
      await t.traceAsync('req', async () => {
        await delay(1);
        t.trace('db', () => 0);
      });
      expect(byName(t.snapshot(), 'db').parent).toBe(0);
    });

    it('a head sampler decides the flags inject() writes; the OTLP export sends the sampled traces and counts the rest', async () => {
      const r = new Receiver();
      const port = await r.listen();
      try {
        const t = make({ sample: { ratio: 0.5 } });
        t.exportOtlp({ endpoint: `http://127.0.0.1:${String(port)}/v1/traces`, scheduledDelayMs: 10 });
        const seen: Array<[string, string]> = [];
        for (let i = 0; i < 64; i++) {
          t.trace('root', () => {
            const m = /^00-([0-9a-f]{32})-[0-9a-f]{16}-(0[01])$/.exec(t.inject<Record<string, string>>({}).traceparent);
            expect(m).not.toBeNull();
            if (m !== null) seen.push([m[1], m[2]]);
            t.trace('child', () => 0);
          });
        }
        await t.shutdown();
        const sampled = seen.filter(([, f]) => f === '01').map(([id]) => id);
        // 64 roots at ratio 0.5 under a random salt: all in or all out has probability 2^-63.
        expect(sampled.length).toBeGreaterThan(0);
        expect(sampled.length).toBeLessThan(64);
        const o = t.counts().otlp!;
        expect(o.sent).toBe(2 * sampled.length);
        expect(o.sampledOut).toBe(2 * (64 - sampled.length));
        expect(new Set(r.spans().map((s) => s.traceId))).toEqual(new Set(sampled));
      } finally {
        await r.close();
      }
    });

    it('a tail keep sends a failed trace whole at ratio 0', async () => {
      const r = new Receiver();
      const port = await r.listen();
      try {
        const t = make({ sample: { ratio: 0, keep: { errors: true } } });
        t.exportOtlp({ endpoint: `http://127.0.0.1:${String(port)}/v1/traces`, scheduledDelayMs: 10 });
        let failed = '';
        t.trace('ok', () => t.trace('db', () => 0));
        t.trace('bad', () => {
          failed = t.inject<Record<string, string>>({}).traceparent.slice(3, 35);
          try {
            t.trace('fail', () => {
              throw new Error('x');
            });
          } catch {
            // recorded as an error
          }
        });
        await t.shutdown();
        const o = t.counts().otlp!;
        expect(o.sent).toBe(2);
        expect(o.sampledOut).toBe(2);
        expect(o.keepTimedOut).toBe(0);
        expect(r.spans().map((s) => [s.name, s.traceId]).sort()).toEqual([['bad', failed], ['fail', failed]]);
      } finally {
        await r.close();
      }
    });

    it('works in a worker joined to the tracer, with the ids the owner writes', async () => {
      const t = make();
      // An async span on the owner before share(): the worker's track spans must not take its id.
      await t.traceAsync('owner req', async () => 0);
      const token = t.share();
      const code = `
        const { workerData, parentPort } = require('node:worker_threads');
        const { Tracer } = require(workerData.dist);
        const t = Tracer.join(workerData.token, { threadName: 'w' });
        t.enableAsyncContext();
        const tick = () => new Promise((r) => setTimeout(r, 2));
        t.traceAsync('w req', async () => {
          await tick();
          t.trace('w db', () => 0);
          await t.withContext(t.extract({ traceparent: workerData.parent }), async () => {
            await t.traceAsync('w remote', async () => {
              await tick();
              t.trace('w remote db', () => 0);
            });
          });
        }).then(() => { t.close(); parentPort.postMessage('done'); });
      `;
      const w = new Worker(code, { eval: true, workerData: { token, dist, parent: PARENT } });
      await new Promise<void>((resolve, reject) => {
        w.once('message', () => resolve());
        w.once('error', reject);
      });
      await w.terminate();
      t.flush();
      const recs = t.snapshot();
      expect(byName(recs, 'w db').parent).toBe(byName(recs, 'w req').id);
      expect(byName(recs, 'w remote db').parent).toBe(byName(recs, 'w remote').id);
      expect(byName(recs, 'w req').id).not.toBe(byName(recs, 'owner req').id);
      const ids = idsByName(t);
      const req = ids.get('w req');
      const db = ids.get('w db');
      const remote = ids.get('w remote');
      const remoteDb = ids.get('w remote db');
      expect(req?.resolved && db?.resolved && remote?.resolved && remoteDb?.resolved).toBe(true);
      expect(db?.trace).toBe(req?.trace);
      expect(db?.parent).toBe(req?.span);
      expect(req?.trace).not.toBe(ids.get('owner req')?.trace);
      expect(remote?.trace).toBe('0af7651916cd43dd8448eb211c80319c');
      expect(remote?.parent).toBe('b7ad6b7169203331');
      expect(remoteDb?.trace).toBe('0af7651916cd43dd8448eb211c80319c');
      expect(remoteDb?.parent).toBe(remote?.span);
    });
  });
});

describe('trace context on the js backend', () => {
  const make = tracerFactory('js');
  const makeNative = tracerFactory('native');

  // The salt is the one input the two backends do not share: given the
  // native tracer's, the same calls must give the same ids, byte for byte.
  it.skipIf(skipNative)("derives the native backend's ids for the same spans (the core's resolver through WebAssembly)", async () => {
    const run = async (t: Tracer): Promise<string[]> => {
      t.enableAsyncContext();
      const out: string[] = [];
      const put = () => out.push(JSON.stringify(t.currentContext()));
      t.trace('a', () => {
        put();
        t.trace('b', put);
      });
      await t.traceAsync('req', async () => {
        put();
        await delay(1);
        t.trace('db', put);
      });
      const remote = t.extract({ traceparent: PARENT, tracestate: 'congo=t61rcWkgMzE' });
      if (remote === undefined) throw new Error('no context');
      await t.withContext(remote, async () => {
        t.trace('server', put);
        await delay(1);
        const h = t.start('handle');
        put();
        h.end();
      });
      const ids = idsByName(t);
      for (const name of ['a', 'b', 'req', 'db', 'server', 'handle']) out.push(`${name} ${JSON.stringify(ids.get(name))}`);
      return out;
    };
    const native = makeNative();
    const salt = native[internals]().backend.native()?.idSalt();
    expect(typeof salt).toBe('bigint');
    // Built over the js backend as new Tracer builds it (either engine), given the native one's salt.
    const o = resolveOptions({ backend: 'js' });
    const js = tracerOver(jsBackend(o.threadName, { memoryLimit: o.memoryLimit, onFull: o.onFull, sampler: 0n, keep: 0n, idSalt: salt as bigint }));
    try {
      const want = await run(native);
      expect(await run(js)).toEqual(want);
      expect(want.some((l) => l.includes('0af7651916cd43dd8448eb211c80319c'))).toBe(true);
    } finally {
      js.close();
    }
  });

  it('keeps a context with its record under the budget: overwritten together, the kept ones still in their trace', () => {
    const t = make({ memoryLimit: 1 << 20, onFull: 'overwrite' });
    const remote = t.extract({ traceparent: PARENT, tracestate: 'k=' + 'v'.repeat(200) });
    if (remote === undefined) throw new Error('no context');
    for (let i = 0; i < 20000; i++) {
      if (i % 2 === 0) t.withContext(remote, () => t.trace('under', () => 0));
      else t.trace('plain', () => 0);
    }
    const c = t.counts();
    expect(c.overwritten).toBeGreaterThan(0);
    t.flush();
    const view = t[internals]().backend.freeze();
    const snap = view.read(0, view.count);
    const ids = view.spanIds();
    expect(view.count).toBeGreaterThan(0);
    let under = 0;
    for (let i = 0; i < view.count; i++) {
      const name = snap.names[snap.fields[6 * i]];
      const trace = ids[5 * i].toString(16).padStart(16, '0') + ids[5 * i + 1].toString(16).padStart(16, '0');
      if (name === 'under') {
        under++;
        expect(trace).toBe('0af7651916cd43dd8448eb211c80319c');
        expect(ids[5 * i + 3]).toBe(0xb7ad6b7169203331n);
      } else {
        expect(trace).not.toBe('0af7651916cd43dd8448eb211c80319c');
      }
    }
    expect(under).toBeGreaterThan(0);
  });
});
