// tracer.dump(path): what the file holds (read back by protobufjs and protoc
// with the upstream schema, and by Chrome DevTools' trace engine), that
// recording goes on while it is written, the noop backend's refusal, disks
// that fail (the promise rejects naming the path, the tracer keeps every
// record), and the option checks of the dump triggers.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { Tracer, type DumpSummary } from '../lib/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { loadConsumer } from './support/consumer';
import { protocDecode, traceEngineTrees } from './support/consumers';
import { protobufjsSpans } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-dump-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const native = loadNativeAddon().addon !== undefined;

function record(t: Tracer, n: number, name = 'span'): void {
  for (let i = 0; i < n; i++) t.trace(name, () => t.trace('inner', () => i));
}

/** Span names in a Perfetto file, by protobufjs with the upstream schema; protoc must decode it too. */
function perfettoNames(file: string): string[] {
  const bytes = readFileSync(file);
  expect(protocDecode(bytes)).toContain('track_event');
  return protobufjsSpans(bytes).map((s) => s.name);
}

/** Span names in a Chrome JSON file, as DevTools' trace engine builds its thread trees. */
async function jsonNames(file: string): Promise<string[]> {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: unknown[] };
  return [...(await traceEngineTrees(doc.traceEvents)).values()].flat().map((n) => n.name);
}

const count = (names: string[], name: string): number => names.filter((n) => n === name).length;

for (const backend of ['native', 'js'] as const) {
  describe.runIf(backend === 'js' || native || process.env.CI === 'true')(`dump() (${backend})`, () => {
    it('resolves with what the file holds; protobufjs, protoc and the trace engine read the same', async () => {
      const t = new Tracer({ backend });
      record(t, 500);
      const before = performance.now();
      const pf = await t.dump(path.join(tmp, `${backend}-a.pftrace`));
      const js = await t.dump(path.join(tmp, `${backend}-a.json`));
      const expected: Partial<DumpSummary> = { format: 'perfetto', spans: 1000, timelines: 1, lostSpans: 0 };
      expect(pf).toMatchObject({ ...expected, path: path.join(tmp, `${backend}-a.pftrace`) });
      expect(js).toMatchObject({ ...expected, format: 'json', path: path.join(tmp, `${backend}-a.json`) });
      expect(pf.bytes).toBe(readFileSync(pf.path).length);
      expect(js.bytes).toBe(readFileSync(js.path).length);
      expect(pf.through).toBeGreaterThanOrEqual(before);
      expect(pf.through).toBeLessThanOrEqual(js.through);
      const names = perfettoNames(pf.path);
      expect([count(names, 'span'), count(names, 'inner')]).toEqual([500, 500]);
      const jn = await jsonNames(js.path);
      expect([count(jn, 'span'), count(jn, 'inner')]).toEqual([500, 500]);
      t.close();
    });

    it('recording goes on while it writes: the file holds what was committed at the call', async () => {
      const t = new Tracer({ backend });
      record(t, 5_000);
      const pending = t.dump(path.join(tmp, `${backend}-b.pftrace`));
      record(t, 300, 'later'); // before the dump's promise can settle
      const s = await pending;
      expect(s.spans).toBe(10_000);
      const names = perfettoNames(s.path);
      expect(names.length).toBe(10_000);
      expect(count(names, 'later')).toBe(0);
      expect(t.snapshot().length).toBe(10_600);
      t.close();
    });

    it('a closed tracer dumps what it committed', async () => {
      const t = new Tracer({ backend });
      record(t, 10);
      t.close();
      const s = await t.dump(path.join(tmp, `${backend}-closed.pftrace`));
      expect(s.spans).toBe(20);
      expect(perfettoNames(s.path).length).toBe(20);
    });

    // Root reads and writes where a mode forbids it: sysfs refuses new files to everyone.
    const failing: Array<[string, () => string, RegExp]> = [
      [
        'a full disk (/dev/full)',
        () => {
          const link = path.join(tmp, `${backend}-full.json`);
          rmSync(link, { force: true });
          symlinkSync('/dev/full', link);
          return link;
        },
        /ENOSPC/,
      ],
      [
        'a removed directory',
        () => {
          const dir = path.join(tmp, `${backend}-gone`);
          mkdirSync(dir, { recursive: true });
          rmSync(dir, { recursive: true });
          return path.join(dir, 'x.pftrace');
        },
        /ENOENT/,
      ],
      ['a path nobody may create (/sys)', () => '/sys/hotspan-dump-test.pftrace', /E[A-Z]+/],
    ];
    for (const [what, target, code] of failing) {
      it(`${what}: rejects with an Error naming the path; recording goes on, nothing is lost`, async () => {
        const t = new Tracer({ backend });
        record(t, 1000);
        const file = target();
        const e = (await t.dump(file).then(
          () => undefined,
          (err: unknown) => err,
        )) as NodeJS.ErrnoException | undefined;
        expect(e).toBeInstanceOf(Error);
        expect(e?.message).toContain(JSON.stringify(file));
        expect(e?.message).toMatch(code);
        expect(e?.path).toBe(file);
        record(t, 10, 'after');
        const s = await t.dump(path.join(tmp, `${backend}-after.pftrace`));
        expect(s.spans).toBe(2020);
        const names = perfettoNames(s.path);
        expect([count(names, 'span'), count(names, 'after')]).toEqual([1000, 10]);
        t.close();
      });
    }
  });
}

describe.runIf(native || process.env.CI === 'true')('dump() and native threads', () => {
  it("native threads' queued records are flushed into the dump", async () => {
    const t = new Tracer({ backend: 'native' });
    t.trace('js', () => 0);
    loadConsumer().run(t.nativeApi(), { threads: 2, spansPerThread: 100, depth: 1, threadNamePrefix: 'enc' });
    // Queued, not committed yet (below the wake-up's high-water mark).
    expect(t.snapshot().length).toBe(1);
    const s = await t.dump(path.join(tmp, 'native-threads.pftrace'));
    expect(s).toMatchObject({ spans: 201, timelines: 3 });
    const names = perfettoNames(s.path);
    expect([count(names, 'js'), count(names, 'consumer.d0')]).toEqual([1, 200]);
    t.close();
  });
});

describe('dump() argument checks and the noop backend', () => {
  it('refuses a non-path (TypeError) and an unknown extension (RangeError naming it)', async () => {
    const t = new Tracer({ backend: 'js' });
    await expect(t.dump(42 as unknown as string)).rejects.toThrow(TypeError);
    await expect(t.dump('')).rejects.toThrow(TypeError);
    await expect(t.dump('trace.txt')).rejects.toThrow(/"trace\.txt"/);
    await expect(t.dump('trace.txt')).rejects.toThrow(RangeError);
    t.close();
  });

  it('noop: rejects saying it has nothing to write, and writes no file', async () => {
    const t = new Tracer({ backend: 'noop' });
    t.trace('x', () => 1);
    const file = path.join(tmp, 'noop.pftrace');
    await expect(t.dump(file)).rejects.toThrow(/nothing to write.*noop backend/);
    expect(() => readFileSync(file)).toThrow(/ENOENT/);
  });
});

describe('dumpOnSignal and dumpOnCrash option checks', () => {
  const cases: Array<[string, Record<string, unknown>, ErrorConstructor, RegExp]> = [
    ['a number for a signal', { dumpOnSignal: 12 }, TypeError, /dumpOnSignal must be a signal name or \{ signal, path \}, got number 12/],
    ['an unknown signal name', { dumpOnSignal: 'SIGFOO' }, RangeError, /"SIGFOO" is not a signal name/],
    ['SIGINT', { dumpOnSignal: 'SIGINT' }, RangeError, /cannot be SIGINT: it ends the process; use writeOnExit/],
    ['SIGTERM', { dumpOnSignal: { signal: 'SIGTERM' } }, RangeError, /cannot be SIGTERM/],
    ['SIGUSR1', { dumpOnSignal: 'SIGUSR1' }, RangeError, /cannot be SIGUSR1: it starts Node's inspector/],
    ['SIGKILL', { dumpOnSignal: 'SIGKILL' }, RangeError, /cannot be SIGKILL: it cannot be caught/],
    ['SIGSEGV', { dumpOnSignal: 'SIGSEGV' }, RangeError, /cannot be SIGSEGV/],
    ['a missing signal', { dumpOnSignal: { path: 'a.pftrace' } }, TypeError, /signal must be a signal name.*got undefined/],
    ['an unknown key', { dumpOnSignal: { signal: 'SIGUSR2', file: 'a.json' } }, RangeError, /unknown dumpOnSignal option "file"/],
    ['a path with no format', { dumpOnSignal: { signal: 'SIGUSR2', path: 'a.txt' } }, RangeError, /"a\.txt"/],
    ['a non-string path', { dumpOnSignal: { signal: 'SIGUSR2', path: 3 } }, TypeError, /dumpOnSignal's path must be a file path, got number 3/],
    ['dumpOnCrash not a string', { dumpOnCrash: true }, TypeError, /dumpOnCrash must be a file path, got boolean true/],
    ['dumpOnCrash with no format', { dumpOnCrash: 'crash.log' }, RangeError, /"crash\.log"/],
  ];
  for (const [what, options, type, text] of cases) {
    it(`refuses ${what}`, () => {
      const listeners = process.listenerCount('uncaughtExceptionMonitor');
      expect(() => new Tracer({ backend: 'js', ...options })).toThrow(type);
      expect(() => new Tracer({ backend: 'js', ...options })).toThrow(text);
      // Nothing was installed by a refused construction.
      expect(process.listenerCount('uncaughtExceptionMonitor')).toBe(listeners);
    });
  }
});
