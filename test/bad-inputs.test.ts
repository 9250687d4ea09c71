// The JS-facing bad-input table (issue 16): every case runs on the native and
// the js backend. Each names the bad value, the error class and message it
// must raise, and then the recorded trace must be exactly what it was
// (unless the case says which spans its cleanup adds) and the tracer must
// still record.
import { describe, expect, it } from 'vitest';

import { Tracer } from '../lib/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { tracerFactory } from './support/tracers';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';

type ErrorClass = typeof Error | typeof TypeError | typeof RangeError;

interface Case {
  readonly what: string;
  /** The bad call; a returned promise must reject instead. */
  readonly call: (t: Tracer) => unknown;
  readonly error: ErrorClass;
  readonly message: RegExp;
  /** Ends what the case left open, after the check. */
  readonly cleanup?: (t: Tracer) => void;
  /** Spans the case (with its cleanup) adds to the trace legitimately. */
  readonly added?: number;
}

const never = new Promise<never>(() => {});
const NAME_TYPE = /name must be a string or a name id, got /;
const ATTRS_OBJ = /attributes must be a plain object, got /;

const CASES: Case[] = [
  // begin(name, attrs)
  { what: 'begin(undefined)', call: (t) => t.begin(undefined as never), error: TypeError, message: /got undefined/ },
  { what: 'begin(null)', call: (t) => t.begin(null as never), error: TypeError, message: /name must be .* got null/ },
  { what: 'begin({})', call: (t) => t.begin({} as never), error: TypeError, message: NAME_TYPE },
  { what: 'begin(true)', call: (t) => t.begin(true as never), error: TypeError, message: /got boolean true/ },
  { what: 'begin(Symbol())', call: (t) => t.begin(Symbol('s') as never), error: TypeError, message: /got symbol/ },
  { what: 'begin(-1)', call: (t) => t.begin(-1), error: RangeError, message: /non-negative integer, got -1/ },
  { what: 'begin(1.5)', call: (t) => t.begin(1.5), error: RangeError, message: /non-negative integer, got 1\.5/ },
  { what: 'begin(NaN)', call: (t) => t.begin(NaN), error: RangeError, message: /got NaN/ },
  { what: 'begin(Infinity)', call: (t) => t.begin(Infinity), error: RangeError, message: /got Infinity/ },
  { what: 'begin(2 ** 32)', call: (t) => t.begin(2 ** 32), error: RangeError, message: /got 4294967296/ },
  { what: 'begin(unknown id)', call: (t) => t.begin(99999), error: RangeError, message: /unknown name id 99999/ },
  { what: "begin('')", call: (t) => t.begin(''), error: RangeError, message: /name must not be empty/ },
  { what: "begin('x', 'a')", call: (t) => t.begin('x', 'a' as never), error: TypeError, message: /got string "a"/ },
  { what: "begin('x', [])", call: (t) => t.begin('x', [] as never), error: TypeError, message: /plain object, got array/ },
  { what: "begin('x', new Map())", call: (t) => t.begin('x', new Map() as never), error: TypeError, message: /got object \(Map\)/ },
  { what: "begin('x', null)", call: (t) => t.begin('x', null as never), error: TypeError, message: ATTRS_OBJ },
  { what: "begin('x', { a: {} })", call: (t) => t.begin('x', { a: {} } as never), error: TypeError, message: /attribute "a" must be .* got object/ },
  { what: "begin('x', { a: null })", call: (t) => t.begin('x', { a: null } as never), error: TypeError, message: /attribute "a" .* got null/ },
  { what: "begin('x', { a: undefined })", call: (t) => t.begin('x', { a: undefined } as never), error: TypeError, message: /attribute "a" .* got undefined/ },
  { what: "begin('x', { a: 1n })", call: (t) => t.begin('x', { a: 1n } as never), error: TypeError, message: /attribute "a" .* got bigint 1/ },
  { what: "begin('x', { a: NaN })", call: (t) => t.begin('x', { a: NaN }), error: RangeError, message: /attribute "a" must be a finite number, got NaN/ },
  { what: "begin('x', { a: -Infinity })", call: (t) => t.begin('x', { a: -Infinity }), error: RangeError, message: /got -Infinity/ },
  { what: "begin('x', { span_id: 1 })", call: (t) => t.begin('x', { span_id: 1 }), error: RangeError, message: /"span_id" is reserved/ },
  { what: "begin('x', { error: true })", call: (t) => t.begin('x', { error: true }), error: RangeError, message: /"error" is reserved/ },
  { what: 'begin(unknown id, attrs)', call: (t) => t.begin(77777, { a: 1 }), error: RangeError, message: /unknown name id 77777/ },
  // end()
  { what: 'end() with nothing open', call: (t) => t.end(), error: Error, message: /end\(\) without an open span; nothing was changed/ },
  // trace()
  { what: "trace('x', 'fn')", call: (t) => t.trace('x', 'fn' as never), error: TypeError, message: /trace\(\) needs a function, got string "fn"/ },
  { what: "trace('x', undefined)", call: (t) => t.trace('x', undefined as never), error: TypeError, message: /needs a function, got undefined/ },
  { what: "trace('', fn)", call: (t) => t.trace('', () => 1), error: RangeError, message: /name must not be empty/ },
  { what: 'trace(-1, fn)', call: (t) => t.trace(-1, () => 1), error: RangeError, message: /got -1/ },
  { what: 'trace({}, fn)', call: (t) => t.trace({} as never, () => 1), error: TypeError, message: NAME_TYPE },
  { what: "trace('x', fn, 5)", call: (t) => t.trace('x', () => 1, 5 as never), error: TypeError, message: /got number 5/ },
  {
    what: 'trace() whose callback ends the span itself',
    call: (t) => t.trace('x', () => t.end()),
    error: Error,
    message: /trace\("x"\): the callback ended the span trace\(\) opened/,
    added: 1, // the callback's own end() recorded it
  },
  {
    what: 'trace() whose callback ends it inside an enclosing span',
    call: (t) => {
      t.begin('outer');
      t.trace('x', () => t.end());
    },
    error: Error,
    message: /the callback ended the span trace\(\) opened/,
    cleanup: (t) => t.end(),
    added: 2,
  },
  {
    what: 'trace() whose callback leaves a span open',
    call: (t) => t.trace('x', () => t.begin('leak')),
    error: Error,
    message: /trace\("x"\): the callback left 1 span\(s\) open inside it; nothing was ended/,
    cleanup: (t) => {
      t.end();
      t.end();
    },
    added: 2,
  },
  // start() handles
  { what: 'start(undefined)', call: (t) => t.start(undefined as never), error: TypeError, message: NAME_TYPE },
  { what: "start('x', 5)", call: (t) => t.start('x', 5 as never), error: TypeError, message: ATTRS_OBJ },
  ...handleCases(),
  // name()
  { what: "name('')", call: (t) => t.name(''), error: RangeError, message: /name must not be empty/ },
  { what: 'name(5)', call: (t) => t.name(5 as never), error: TypeError, message: /name must be a string, got number 5/ },
  { what: 'name(undefined)', call: (t) => t.name(undefined as never), error: TypeError, message: /got undefined/ },
  // track()
  { what: "track('')", call: (t) => t.track(''), error: RangeError, message: /track name must not be empty/ },
  { what: 'track(5)', call: (t) => t.track(5 as never), error: TypeError, message: /name must be a string, got number 5/ },
  { what: "track('q', { serial: 'yes' })", call: (t) => t.track('q', { serial: 'yes' as never }), error: TypeError, message: /serial must be a boolean, got string "yes"/ },
  { what: "track('q', { seriel: true })", call: (t) => t.track('q', { seriel: true } as never), error: RangeError, message: /unknown track\(\) option "seriel" \(known: serial\)/ },
  { what: "track('q', 'serial')", call: (t) => t.track('q', 'serial' as never), error: TypeError, message: /track\(\) options must be an object, got string "serial"/ },
  {
    what: 'track(name, serial) of an existing concurrent track',
    call: (t) => {
      t.track('k');
      t.track('k', { serial: true });
    },
    error: RangeError,
    message: /track "k" already exists as a concurrent track/,
  },
  // traceAsync()
  { what: "traceAsync('x', 5)", call: (t) => t.traceAsync('x', 5 as never), error: TypeError, message: /needs a function or a promise, got number 5/ },
  { what: "traceAsync('x', p, { serial: true })", call: (t) => t.traceAsync('x', never, { serial: true } as never), error: RangeError, message: /unknown traceAsync\(\) option "serial" \(known: track, attrs\)/ },
  { what: "traceAsync('x', p, 'opts')", call: (t) => t.traceAsync('x', never, 'opts' as never), error: TypeError, message: /traceAsync\(\) options must be an object/ },
  { what: "traceAsync('x', p, [])", call: (t) => t.traceAsync('x', never, [] as never), error: TypeError, message: /traceAsync\(\) options must be an object, got array/ },
  { what: "traceAsync('x', p, { track: 'h', bogus: 1 })", call: (t) => t.traceAsync('x', never, { track: 'h', bogus: 1 } as never), error: RangeError, message: /unknown traceAsync\(\) option "bogus"/ },
  { what: "traceAsync('x', p, { track: {} })", call: (t) => t.traceAsync('x', never, { track: {} as never }), error: TypeError, message: /track must be a track id or name, got object/ },
  { what: "traceAsync('x', p, { track: -1 })", call: (t) => t.traceAsync('x', never, { track: -1 }), error: TypeError, message: /got number -1/ },
  { what: "traceAsync('x', p, { track: '' })", call: (t) => t.traceAsync('x', never, { track: '' }), error: RangeError, message: /track name must not be empty/ },
  { what: "traceAsync('x', p, { track: 99999 })", call: (t) => t.traceAsync('x', never, { track: 99999 }), error: RangeError, message: /unknown track 99999/ },
  { what: "traceAsync('x', p, { attrs: 5 })", call: (t) => t.traceAsync('x', never, { attrs: 5 as never }), error: TypeError, message: ATTRS_OBJ },
  { what: "traceAsync('', p)", call: (t) => t.traceAsync('', never), error: RangeError, message: /name must not be empty/ },
  // groups
  { what: 'groupEnd() with no group', call: (t) => t.groupEnd(), error: Error, message: /groupEnd\(\) without an open group/ },
  { what: 'groupBegin(undefined)', call: (t) => t.groupBegin(undefined as never), error: TypeError, message: NAME_TYPE },
  { what: 'groupBegin(unknown id)', call: (t) => t.groupBegin(88888), error: RangeError, message: /unknown name id 88888/ },
  { what: "groupBegin('g', 'a')", call: (t) => t.groupBegin('g', 'a' as never), error: TypeError, message: ATTRS_OBJ },
  { what: "group('g', 5)", call: (t) => t.group('g', 5 as never), error: TypeError, message: /group\(\) needs a function, got number 5/ },
  // write()
  { what: "write('')", call: (t) => t.write(''), error: TypeError, message: /write\(\) needs a file path, got string ""/ },
  { what: 'write(5)', call: (t) => t.write(5 as never), error: TypeError, message: /got number 5/ },
  { what: "write('trace.txt')", call: (t) => t.write('trace.txt'), error: RangeError, message: /cannot tell the output format of "trace\.txt"/ },
  // settle()
  { what: 'settle({ timeoutMs: -1 })', call: (t) => t.settle({ timeoutMs: -1 }), error: RangeError, message: /timeoutMs must be a non-negative number, got number -1/ },
  { what: 'settle({ timeoutMs: NaN })', call: (t) => t.settle({ timeoutMs: NaN }), error: RangeError, message: /got number NaN/ },
  { what: "settle({ timeoutMs: '5' })", call: (t) => t.settle({ timeoutMs: '5' as never }), error: RangeError, message: /got string "5"/ },
  { what: 'settle({ timeout: 5 })', call: (t) => t.settle({ timeout: 5 } as never), error: RangeError, message: /unknown settle\(\) option "timeout" \(known: timeoutMs\)/ },
  { what: 'settle(5)', call: (t) => t.settle(5 as never), error: TypeError, message: /settle\(\) options must be an object, got number 5/ },
  // Tracer.join() and the constructor (argument checks before any backend)
  { what: "Tracer.join('')", call: () => Tracer.join(''), error: TypeError, message: /join token must be the string from tracer\.share\(\), got string ""/ },
  { what: 'Tracer.join(5)', call: () => Tracer.join(5 as never), error: TypeError, message: /got number 5/ },
  { what: "Tracer.join(t, { threadName: '' })", call: () => Tracer.join('tok', { threadName: '' }), error: TypeError, message: /threadName must be a non-empty string, got string ""/ },
  { what: "Tracer.join(t, { name: 'a' })", call: () => Tracer.join('tok', { name: 'a' } as never), error: RangeError, message: /unknown join\(\) option "name"/ },
  { what: "new Tracer({ backend: 'nope' })", call: () => new Tracer({ backend: 'nope' as never }), error: RangeError, message: /backend must be 'native', 'js' or 'noop', got string "nope"/ },
  { what: 'new Tracer({ bogus: 1 })', call: () => new Tracer({ bogus: 1 } as never), error: RangeError, message: /unknown option "bogus"/ },
  { what: 'new Tracer(5)', call: () => new Tracer(5 as never), error: TypeError, message: /options must be an object, got number 5/ },
  { what: 'new Tracer({ wakeHighWater: 0 })', call: () => new Tracer({ wakeHighWater: 0 }), error: RangeError, message: /wakeHighWater must be a positive integer, got number 0/ },
  { what: 'new Tracer({ processName: 5 })', call: () => new Tracer({ processName: 5 as never }), error: TypeError, message: /processName must be a string, got number 5/ },
  { what: "new Tracer({ processName: '' })", call: () => new Tracer({ processName: '' }), error: RangeError, message: /processName must be 1 to 256 characters, got string ""/ },
  { what: 'new Tracer({ processName: 257 characters })', call: () => new Tracer({ processName: 'p'.repeat(257) }), error: RangeError, message: /processName must be 1 to 256 characters, got string "ppp/ },
];

function handleCases(): Case[] {
  return [
    {
      what: "handle.end({ error: 'yes' })",
      call: (t) => {
        const h = t.start('h');
        try {
          h.end({ error: 'yes' as never });
        } finally {
          h.end();
        }
      },
      error: TypeError,
      message: /end\(\) option error must be a boolean, got string "yes"/,
      added: 1,
    },
    {
      what: "handle.end('x')",
      call: (t) => {
        const h = t.start('h');
        try {
          h.end('x' as never);
        } finally {
          h.end();
        }
      },
      error: TypeError,
      message: /end\(\) options must be an object, got string "x"/,
      added: 1,
    },
    {
      what: 'handle.end({ err: true })',
      call: (t) => {
        const h = t.start('h');
        try {
          h.end({ err: true } as never);
        } finally {
          h.end();
        }
      },
      error: RangeError,
      message: /unknown end\(\) option "err" \(known: error\)/,
      added: 1,
    },
    {
      what: 'handle.end() twice',
      call: (t) => {
        const h = t.start('h');
        h.end();
        h.end();
      },
      error: Error,
      message: /span "h" was already ended/,
      added: 1,
    },
    {
      what: 'handle.end() while a later span is open',
      call: (t) => {
        const h = t.start('h');
        t.begin('inner');
        try {
          h.end();
        } finally {
          t.end();
          h.end();
        }
      },
      error: Error,
      message: /span "h" is not the innermost open span \(1 opened after it still open\)/,
      added: 2,
    },
  ];
}

/** What must not change: every committed record, as text. */
function recorded(t: Tracer): string {
  t.flush();
  return JSON.stringify(t.snapshot().map((r) => [r.name, r.timeline, r.id, r.parent, r.start, r.end, r.depth, r.error, r.abandoned, r.attrs]));
}

async function expectThrows(c: Case, t: Tracer): Promise<void> {
  let thrown: unknown;
  try {
    const r = c.call(t);
    if (r instanceof Promise) await r;
  } catch (e) {
    thrown = e;
  }
  expect(thrown, c.what).toBeInstanceOf(c.error);
  if (c.error === Error) expect((thrown as Error).constructor, c.what).toBe(Error);
  expect((thrown as Error).message, c.what).toMatch(c.message);
}

expect(CASES.length).toBeGreaterThanOrEqual(60);

for (const backend of ['native', 'js'] as const) {
  describe.skipIf(backend === 'native' && skipNative)(`bad inputs, ${backend} backend`, () => {
    const make = tracerFactory(backend);

    it.each(CASES.map((c) => [c.what, c] as const))('%s', async (_what, c) => {
      const t = make();
      t.trace('before', () => t.trace('before.inner', () => 1, { k: 'v' }));
      const before = recorded(t);
      const beforeCount = t.snapshot().length;
      const depth = t.query().spans('before').count;
      await expectThrows(c, t);
      c.cleanup?.(t);
      if (c.added === undefined) {
        expect(recorded(t), c.what).toBe(before);
      } else {
        // The spans recorded before are unchanged, and exactly `added` more.
        const now = t.snapshot();
        expect(now.length, c.what).toBe(beforeCount + c.added);
        expect(t.query().spans('before').count).toBe(depth);
      }
      // Still records, and nothing is left open.
      const n = t.snapshot().length;
      t.trace('after', () => 1);
      t.flush();
      expect(t.snapshot().length).toBe(n + 1);
      expect(t.snapshot().at(-1)?.name).toBe('after');
      expect(() => t.end()).toThrow(/without an open span/);
    });

    it('refuses a span past depth 65,535 with a RangeError and leaves the enclosing spans alone', () => {
      const t = make();
      const id = t.name('deep');
      for (let i = 0; i <= 0xffff; i++) t.begin(id);
      const msg = /spans nest deeper than 65535 on one thread; nothing was changed/;
      expect(() => t.begin(id)).toThrow(RangeError);
      expect(() => t.begin(id)).toThrow(msg);
      expect(() => t.begin(id, { a: 1 })).toThrow(msg);
      expect(() => t.begin('deep')).toThrow(msg);
      // trace() opens nothing, so it ends nothing it did not open.
      let ran = false;
      expect(() => t.trace(id, () => (ran = true))).toThrow(msg);
      expect(ran).toBe(false);
      t.flush();
      expect(t.snapshot().length).toBe(0);
      for (let i = 0; i <= 0xffff; i++) t.end();
      expect(() => t.end()).toThrow(/without an open span/);
      t.flush();
      const spans = t.snapshot();
      expect(spans.length).toBe(0x10000);
      expect(Math.max(...spans.map((r) => r.depth))).toBe(0xffff);
    });

    it('turns lone surrogates into U+FFFD in names, track names and attributes', async () => {
      const t = make();
      t.trace('a\ud800b', () => 1, { ['k\udc00']: 'v\ud83d' });
      await t.traceAsync('s', Promise.resolve(1), { track: 'tr\udfff' });
      t.flush();
      const spans = t.snapshot();
      const a = spans.find((r) => r.name.startsWith('a'));
      expect(a?.name).toBe('a\ufffdb');
      expect(a?.attrs).toEqual({ 'k\ufffd': 'v\ufffd' });
      expect(t.timelines().some((tl) => tl.name === 'track: tr\ufffd')).toBe(true);
      // The same name, well-formed or not, is one name.
      expect(t.name('a\ud800b')).toBe(t.name('a\ufffdb'));
    });

    it('waits past 2^31-1 ms in settle() without a TimeoutOverflowWarning or polling', async () => {
      const t = make();
      const warnings: string[] = [];
      const onWarning = (w: Error): void => {
        warnings.push(w.name);
      };
      process.on('warning', onWarning);
      try {
        const span = t.traceAsync('slow', new Promise((r) => setTimeout(r, 60)));
        await t.settle({ timeoutMs: 2 ** 31 });
        await span;
        await t.settle({ timeoutMs: 2 ** 40 });
        // Warnings are emitted on the next tick.
        await new Promise((r) => setImmediate(r));
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings.filter((n) => n === 'TimeoutOverflowWarning')).toEqual([]);
      expect(t.query().spans('slow').count).toBe(1);
    });
  });
}
