// Triggered dumps (docs/sampling.md): the dumpOn option. A slow outermost
// trace() span writes exactly one numbered file holding that span and the
// rest of its window (other timelines too: native threads on the addon), and
// nothing older than the window; a span flagged error inside one does too;
// fast and clean ones write nothing; maxPerMinute suppresses the rest and
// counts them; bad options throw naming the value. No duration is asserted:
// the thresholds are far from the spans' durations (busy loops of known
// length on the tracer's own clock, so a busy machine only makes them longer).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { Tracer } from '../lib/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { loadConsumer } from './support/consumer';
import { perfettoType } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-dump-on-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const native = loadNativeAddon().addon !== undefined;
const backends = native ? (['native', 'js'] as const) : (['js'] as const);
const dist = path.join(__dirname, '..', 'dist', 'index.js');

let dir = '';
let stderr: string[] = [];
beforeEach(() => {
  dir = mkdtempSync(path.join(tmp, 'case-'));
  stderr = [];
  const write = process.stderr.write.bind(process.stderr);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (text.startsWith('hotspan: dumpOn')) {
      stderr.push(text);
      return true;
    }
    return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  });
});
afterEach(() => vi.restoreAllMocks());

/** Busy for `ms` on the tracer's clock (at least that long, whatever the load). */
function spin(t: Tracer, ms: number): void {
  const end = t.now() + ms;
  while (t.now() < end);
}

/** The dumps are written from a setImmediate queued at the trigger: one queued after it runs after them. */
const afterDumps = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The spans of a Chrome JSON dump (complete events, and async begins): name and thread name. */
function spansOf(file: string): Array<{ name: string; thread: string }> {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: Array<{ ph: string; name: string; pid: number; tid: number; args?: { name?: string } }> };
  const threads = new Map<string, string>();
  for (const e of doc.traceEvents) if (e.ph === 'M' && e.name === 'thread_name') threads.set(`${e.pid}/${e.tid}`, e.args?.name ?? '');
  return doc.traceEvents.filter((e) => e.ph === 'X' || e.ph === 'b').map((e) => ({ name: e.name, thread: threads.get(`${e.pid}/${e.tid}`) ?? '' }));
}

const files = (): string[] => readdirSync(dir).sort();

describe.each(backends)('dumpOn on the %s backend', (backend) => {
  it('a slow outermost span writes one file with that span and its window, not what is older', async () => {
    const t = new Tracer({ backend, dumpOn: { slowerThanMs: 100, path: path.join(dir, 'trace.json'), windowMs: 200 } });
    t.trace('old', () => {});
    spin(t, 1_000); // 'old' ended at least 1000 ms before the trigger: 800 ms outside the window
    t.trace('request', () => t.trace('inner', () => spin(t, 400)));
    t.trace('after', () => {}); // begun after the trigger: not in the window
    expect(files()).toEqual([]); // written after trace() returned, not inside it
    await afterDumps();
    expect(files()).toEqual(['trace-1.json']);
    const names = spansOf(path.join(dir, 'trace-1.json')).map((s) => s.name);
    expect(names.sort()).toEqual(['inner', 'request']);
    expect(stderr).toHaveLength(1);
    expect(stderr[0]).toMatch(/^hotspan: dumpOn: wrote 2 spans of the last 200 ms to .*trace-1\.json: span "request" took \d+\.\d ms \(slowerThanMs 100\)\n$/);
    expect(t.counts().dumpOn).toEqual({ written: 1, suppressed: 0, failed: 0 });
    t.close();
  });

  it('a dump names its process, by its pid and the tracer\'s processName, in both formats', async () => {
    const fail = (t: Tracer): void =>
      expect(() =>
        t.trace('job', () => {
          throw new Error('boom');
        }),
      ).toThrow('boom');
    const t = new Tracer({ backend, processName: 'dump-proc', dumpOn: { errors: true, path: path.join(dir, 'trace.json') } });
    fail(t);
    await afterDumps();
    const doc = JSON.parse(readFileSync(path.join(dir, 'trace-1.json'), 'utf8')) as { traceEvents: Array<{ ph: string; name: string; pid: number; args?: { name?: string } }> };
    expect(new Set(doc.traceEvents.map((e) => e.pid))).toEqual(new Set([process.pid]));
    expect(doc.traceEvents.filter((e) => e.ph === 'M' && e.name === 'process_name').map((e) => e.args?.name)).toEqual(['dump-proc']);
    t.close();
    const p = new Tracer({ backend, processName: 'dump-proc-perfetto', dumpOn: { errors: true, path: path.join(dir, 'trace.pftrace') } });
    fail(p);
    await afterDumps();
    const trace = perfettoType().decode(readFileSync(path.join(dir, 'trace-1.pftrace'))).toJSON() as {
      packet: Array<{ trackDescriptor?: { process?: { pid?: number; processName?: string } } }>;
    };
    const processes = trace.packet.flatMap((k) => (k.trackDescriptor?.process === undefined ? [] : [k.trackDescriptor.process]));
    expect(processes).toEqual([{ pid: process.pid, processName: 'dump-proc-perfetto' }]);
    p.close();
  });

  it('a span flagged error inside an outermost span triggers at that span\'s end; an outermost error too', async () => {
    const t = new Tracer({ backend, dumpOn: { errors: true, path: path.join(dir, 'err.json') } });
    t.trace('ok', () => t.trace('db', () => {}));
    t.trace('request', () => {
      try {
        t.trace('db', () => {
          throw new Error('refused');
        });
      } catch {
        // handled: the request itself succeeds
      }
    });
    expect(() =>
      t.trace('job', () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    await afterDumps();
    expect(files()).toEqual(['err-1.json', 'err-2.json']);
    expect(spansOf(path.join(dir, 'err-1.json')).map((s) => s.name)).toEqual(expect.arrayContaining(['db', 'request']));
    expect(stderr[0]).toMatch(/span "db" inside span "request" ended flagged error\n$/);
    expect(stderr[1]).toMatch(/err-2\.json: span "job" ended flagged error\n$/);
    expect(t.counts().dumpOn).toEqual({ written: 2, suppressed: 0, failed: 0 });
    t.close();
  });

  it('fast and clean outermost spans write nothing; errors are not a trigger unless asked', async () => {
    const t = new Tracer({ backend, dumpOn: { slowerThanMs: 1e6, path: path.join(dir, 'x.pftrace') } });
    for (let i = 0; i < 100; i++) t.trace('request', () => t.trace('inner', () => i));
    expect(() =>
      t.trace('job', () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    await afterDumps();
    expect(files()).toEqual([]);
    expect(stderr).toEqual([]);
    expect(t.counts().dumpOn).toEqual({ written: 0, suppressed: 0, failed: 0 });
    t.close();
  });

  it('maxPerMinute suppresses the triggers past it, and counts them', async () => {
    const t = new Tracer({ backend, dumpOn: { slowerThanMs: 0, path: path.join(dir, 'r.pftrace'), maxPerMinute: 2 } });
    for (let i = 0; i < 5; i++) t.trace('request', () => spin(t, 1));
    await afterDumps();
    expect(files()).toEqual(['r-1.pftrace', 'r-2.pftrace']);
    expect(stderr).toHaveLength(2);
    expect(t.counts().dumpOn).toEqual({ written: 2, suppressed: 3, failed: 0 });
    t.close();
  });

  it('traceAsync roots trigger when slow or rejected; spans under a local parent do not', async () => {
    const t = new Tracer({ backend, dumpOn: { slowerThanMs: 300, errors: true, path: path.join(dir, 'a.json') } });
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
    await Promise.all([
      t.traceAsync('slow', async () => {
        const began = t.now();
        while (t.now() - began < 600) await sleep(20); // at least 600 ms on the tracer's clock
      }),
      t.traceAsync('quick', () => tick()),
      expect(t.traceAsync('rejects', async () => {
        await tick();
        throw new Error('no');
      })).rejects.toThrow('no'),
    ]);
    // Under an open trace() span: not a root, so neither its rejection nor its time triggers.
    await t.trace('outer', () =>
      expect(t.traceAsync('child', () => Promise.reject(new Error('child')))).rejects.toThrow('child'),
    );
    await afterDumps();
    expect(files()).toEqual(['a-1.json', 'a-2.json']);
    expect(stderr[0]).toMatch(/a-1\.json: span "rejects" ended flagged error\n$/);
    expect(stderr[1]).toMatch(/a-2\.json: span "slow" took \d+\.\d ms \(slowerThanMs 300\)\n$/);
    expect(spansOf(path.join(dir, 'a-2.json')).map((s) => s.name)).toContain('slow');
    expect(t.counts().dumpOn).toEqual({ written: 2, suppressed: 0, failed: 0 });
    t.close();
  });

  it('with the async context on, a span under a local current span is no root; one under a remote parent is', async () => {
    const t = new Tracer({ backend, dumpOn: { slowerThanMs: 200, path: path.join(dir, 'c.json') } });
    t.enableAsyncContext();
    await t.traceAsync('request', async () => {
      await new Promise((r) => setImmediate(r));
      t.trace('after-await', () => spin(t, 400)); // slow, but its parent is 'request' (quick: not slow)
    });
    await afterDumps();
    expect(files()).toEqual(['c-1.json']); // 'request' itself lasted over 400 ms
    expect(stderr[0]).toMatch(/span "request" took/);
    const remote = t.extract({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    t.withContext(remote as NonNullable<typeof remote>, () => t.trace('incoming', () => spin(t, 400)));
    await afterDumps();
    expect(files()).toEqual(['c-1.json', 'c-2.json']);
    expect(stderr[1]).toMatch(/span "incoming" took/);
    expect(stderr).toHaveLength(2);
    t.close();
  });

  it('a dump that cannot be written is counted and warned about, and tracing goes on', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.message);
    process.on('warning', onWarning);
    const t = new Tracer({ backend, dumpOn: { errors: true, path: path.join(dir, 'missing', 'd.json') } });
    expect(() =>
      t.trace('job', () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    await afterDumps();
    await afterDumps(); // the warning is emitted on the next tick
    process.off('warning', onWarning);
    expect(t.counts().dumpOn).toEqual({ written: 0, suppressed: 0, failed: 1 });
    expect(warnings.join('\n')).toMatch(/no dump written to .*d-1\.json \(span "job" ended flagged error\)/);
    t.trace('later', () => {});
    t.close();
  });
});

describe.skipIf(!native)('dumpOn on the native backend, other timelines', () => {
  it('the window holds the spans native threads ended in it', async () => {
    const consumer = loadConsumer();
    const t = new Tracer({ backend: 'native', dumpOn: { slowerThanMs: 100, path: path.join(dir, 'n.json'), windowMs: 60_000 } });
    t.trace('request', () => {
      consumer.run(t.nativeApi(), { threads: 2, spansPerThread: 10, depth: 2, threadNamePrefix: 'pool' });
      spin(t, 400);
    });
    await afterDumps();
    const spans = spansOf(path.join(dir, 'n-1.json'));
    expect(spans.filter((s) => s.name === 'request')).toHaveLength(1);
    const threads = new Set(spans.filter((s) => s.thread.includes('pool')).map((s) => s.thread));
    expect(threads.size).toBe(2);
    t.close();
  });
});

describe('dumpOn options', () => {
  const p = (): string => path.join(dir, 'd.json');
  it('bad values throw a TypeError or RangeError naming them', () => {
    expect(() => new Tracer({ backend: 'js', dumpOn: 'yes' as never })).toThrow(TypeError);
    expect(() => new Tracer({ backend: 'js', dumpOn: 'yes' as never })).toThrow(/dumpOn must be an object .*got string "yes"/);
    expect(() => new Tracer({ backend: 'js', dumpOn: { errors: true } as never })).toThrow(/dumpOn.path must be a file path, got undefined/);
    expect(() => new Tracer({ backend: 'js', dumpOn: { errors: true, path: 'a.txt' } })).toThrow(RangeError);
    expect(() => new Tracer({ backend: 'js', dumpOn: { errors: true, path: 'a.txt' } })).toThrow(/"a\.txt"/);
    expect(() => new Tracer({ backend: 'js', dumpOn: { slowerThanMs: '5' as never, path: p() } })).toThrow(TypeError);
    expect(() => new Tracer({ backend: 'js', dumpOn: { slowerThanMs: -1, path: p() } })).toThrow(/dumpOn.slowerThanMs must be a number from 0 to 1000000000, got number -1/);
    expect(() => new Tracer({ backend: 'js', dumpOn: { slowerThanMs: NaN, path: p() } })).toThrow(RangeError);
    expect(() => new Tracer({ backend: 'js', dumpOn: { errors: 1 as never, path: p() } })).toThrow(/dumpOn.errors must be a boolean, got number 1/);
    expect(() => new Tracer({ backend: 'js', dumpOn: { errors: true, path: p(), windowMs: 0 } })).toThrow(/dumpOn.windowMs .*got number 0/);
    expect(() => new Tracer({ backend: 'js', dumpOn: { errors: true, path: p(), maxPerMinute: 1.5 } })).toThrow(/dumpOn.maxPerMinute must be an integer from 1 to 1000, got number 1\.5/);
    expect(() => new Tracer({ backend: 'js', dumpOn: { errors: true, path: p(), every: 1 } as never })).toThrow(/unknown dumpOn option "every"/);
    expect(() => new Tracer({ backend: 'js', dumpOn: { path: p() } })).toThrow(/dumpOn needs slowerThanMs or errors: true/);
    expect(() => new Tracer({ backend: 'js', dumpOn: { errors: false, path: p() } })).toThrow(RangeError);
  });

  it('the noop backend records nothing, so it dumps nothing and counts nothing', () => {
    const t = new Tracer({ backend: 'noop', dumpOn: { slowerThanMs: 0, path: p() } });
    t.trace('request', () => {});
    expect(t.counts().dumpOn).toBeUndefined();
    expect(existsSync(path.join(dir, 'd-1.json'))).toBe(false);
    t.close();
  });

  it('the js backend dumps in a process of its own, saying so on stderr', () => {
    const file = path.join(dir, 'w.json');
    const src = `
const { Tracer } = require(${JSON.stringify(dist)});
const t = new Tracer({ backend: 'js', dumpOn: { errors: true, path: ${JSON.stringify(file)} } });
try { t.trace('job', () => { throw new Error('boom'); }); } catch {}
setImmediate(() => { process.stdout.write(JSON.stringify(t.counts().dumpOn)); t.close(); });`;
    const r = spawnSync(process.execPath, ['-e', src], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ written: 1, suppressed: 0, failed: 0 });
    expect(r.stderr).toMatch(/hotspan: dumpOn: wrote 1 spans of the last 10000 ms to .*w-1\.json: span "job" ended flagged error/);
    expect(spansOf(path.join(dir, 'w-1.json')).map((s) => s.name)).toEqual(['job']);
  });
});
