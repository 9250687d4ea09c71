// Triggered dumps: the `dumpOn` option. When a local root ends (a trace() or
// traceAsync() span begun with no span open on the thread and, with the async
// context on, no current local span: a remote parent from extract() still
// makes a local root) slower than slowerThanMs, or flagged error, or (a
// trace() root) with a trace() span flagged error inside it, the last
// windowMs of every timeline the tracer holds is written to a numbered file,
// at most maxPerMinute files a minute (the others counted as suppressed),
// with one stderr line saying why.
//
// Cost: while dumpOn is set, a local root reads the tracer's clock twice
// more (at its begin and end) and a traceAsync() root adds one promise
// reaction; nested spans pay a branch. A dump is written after the root's
// trace() returned (its promise settled), from a setImmediate on the same
// thread: the snapshot of what the tracer holds is taken, cut to the window,
// formatted by the core's writers (WebAssembly) and written synchronously, so
// the event loop waits for that one file (docs/sampling.md has the figure).
//
// hotspan/auto's tracer takes its dumpOn from the environment (dumpOnFromEnv):
// its roots are the spans it records apart (lib/auto/auto-record.ts), which
// trigger through recordedRoot().

import { writeFileSync } from 'node:fs';
import { extname } from 'node:path';

import type { Backend } from '../backends/backend';
import type { NativeSnapshot } from '../binding/native-binding';
import { writeColumns } from '../binding/wasm-core';
import { calibrate, readClocks } from '../common/clock';
import { totalCounts, type DumpOnCounts } from '../common/counts';
import { describe } from '../common/errors';
import { outputFormat, type OutputFormat } from '../common/output';
import { checkCallOptions, fromEnv, type DumpOnOptions } from './options';

/** dumpOn as the tracer holds it (undefined slowerThanMs: not by duration). */
export interface ResolvedDumpOn {
  slowerThanMs: number | undefined;
  errors: boolean;
  path: string;
  format: OutputFormat;
  windowMs: number;
  maxPerMinute: number;
}

/** The dumpOn of a tracer made over a backend (lib/tracer/tracer.ts, tracerOver): hotspan/auto's, from its environment. */
export interface OverDumpOn {
  on: ResolvedDumpOn;
  processName: string;
}

const MAX_SLOWER_THAN_MS = 1e9;
const MAX_WINDOW_MS = 3_600_000;
const MAX_PER_MINUTE = 1000;
const MINUTE_MS = 60_000;

function checkNumber(v: unknown, what: string, min: number, max: number, integer: boolean): number {
  const kind = integer ? 'an integer' : 'a number';
  if (typeof v !== 'number') throw new TypeError(`hotspan: ${what} must be ${kind} from ${min} to ${max}, got ${describe(v)}`);
  if (!(v >= min && v <= max) || (integer && !Number.isInteger(v))) {
    throw new RangeError(`hotspan: ${what} must be ${kind} from ${min} to ${max}, got ${describe(v)}`);
  }
  return v;
}

/** `dumpOn` as given to `new Tracer()`: a TypeError or RangeError naming the bad value. */
export function checkDumpOn(value: unknown): ResolvedDumpOn {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`hotspan: dumpOn must be an object such as { slowerThanMs: 500, path: 'slow.json' }, got ${describe(value)}`);
  }
  const { slowerThanMs, errors, path, windowMs, maxPerMinute } = checkCallOptions(value as DumpOnOptions, 'dumpOn', [
    'slowerThanMs',
    'errors',
    'path',
    'windowMs',
    'maxPerMinute',
  ]) as DumpOnOptions;
  if (typeof path !== 'string' || path.length === 0) {
    throw new TypeError(`hotspan: dumpOn.path must be a file path, got ${describe(path)}`);
  }
  const format = outputFormat(path);
  if (errors !== undefined && typeof errors !== 'boolean') {
    throw new TypeError(`hotspan: dumpOn.errors must be a boolean, got ${describe(errors)}`);
  }
  const slower = slowerThanMs === undefined ? undefined : checkNumber(slowerThanMs, 'dumpOn.slowerThanMs', 0, MAX_SLOWER_THAN_MS, false);
  if (slower === undefined && errors !== true) {
    throw new RangeError('hotspan: dumpOn needs slowerThanMs or errors: true, or it never dumps');
  }
  return {
    slowerThanMs: slower,
    errors: errors === true,
    path,
    format,
    windowMs: windowMs === undefined ? 10_000 : checkNumber(windowMs, 'dumpOn.windowMs', 1, MAX_WINDOW_MS, false),
    maxPerMinute: maxPerMinute === undefined ? 6 : checkNumber(maxPerMinute, 'dumpOn.maxPerMinute', 1, MAX_PER_MINUTE, true),
  };
}

/** A number from an environment variable: `^[+]?(\d+\.?\d*|\.\d+)$`, else NaN. */
const envNumber = (v: string): number => (/^[+]?(\d+\.?\d*|\.\d+)$/.test(v.trim()) ? Number(v.trim()) : NaN);

/**
 * The dumpOn the environment asks for (hotspan/auto, hotspan run), undefined
 * for none: HOTSPAN_DUMP_SLOWER_THAN_MS and HOTSPAN_DUMP_ERRORS (true or
 * false), one of which turns it on; HOTSPAN_DUMP_PATH (default
 * hotspan-<pid>-dump.pftrace), HOTSPAN_DUMP_WINDOW_MS and
 * HOTSPAN_DUMP_MAX_PER_MINUTE. A bad value gives one warning naming it
 * (fromEnv) and keeps the default.
 */
export function dumpOnFromEnv(pid: number): ResolvedDumpOn | undefined {
  const num = (name: string, min: number, max: number, integer: boolean, fallback: number | undefined, fallbackText: string): number | undefined =>
    fromEnv(name, (v) => checkNumber(envNumber(v), name, min, max, integer), fallback, fallbackText);
  const slowerThanMs = num('HOTSPAN_DUMP_SLOWER_THAN_MS', 0, MAX_SLOWER_THAN_MS, false, undefined, 'no dump of slow roots');
  const errors = fromEnv(
    'HOTSPAN_DUMP_ERRORS',
    (v) => {
      const t = v.trim().toLowerCase();
      if (t === 'true' || t === '1') return true;
      if (t === 'false' || t === '0') return false;
      throw new RangeError(`hotspan: HOTSPAN_DUMP_ERRORS must be true or false, got ${describe(v)}`);
    },
    false,
    'false',
  );
  const byDefault = `hotspan-${String(pid)}-dump.pftrace`;
  const path = fromEnv(
    'HOTSPAN_DUMP_PATH',
    (v) => {
      try {
        outputFormat(v);
      } catch (e) {
        throw new RangeError(`hotspan: HOTSPAN_DUMP_PATH: ${(e as Error).message.replace(/^hotspan: /, '')}`);
      }
      return v;
    },
    byDefault,
    byDefault,
  );
  const windowMs = num('HOTSPAN_DUMP_WINDOW_MS', 1, MAX_WINDOW_MS, false, 10_000, '10000');
  const maxPerMinute = num('HOTSPAN_DUMP_MAX_PER_MINUTE', 1, MAX_PER_MINUTE, true, 6, '6');
  if (slowerThanMs === undefined && !errors) return undefined;
  return checkDumpOn({ slowerThanMs, errors, path, windowMs, maxPerMinute });
}

/** `trace.json`, 3 -> `trace-3.json`. */
function numbered(template: string, n: number): string {
  const ext = extname(template);
  return `${template.slice(0, template.length - ext.length)}-${String(n)}${ext}`;
}

/**
 * The records of `snap` that ended at or after `fromMs` and began at or
 * before `untilMs` (and their attributes, contexts, counter samples between).
 */
function windowOf(snap: NativeSnapshot, fromMs: number, untilMs: number): NativeSnapshot {
  const { times, fields, count } = snap;
  // Index in the window of each record of the snapshot, -1 for one outside it.
  const at = new Int32Array(count);
  let n = 0;
  for (let i = 0; i < count; i++) at[i] = times[2 * i + 1] >= fromMs && times[2 * i] <= untilMs ? n++ : -1;
  const t = new Float64Array(2 * n);
  const f = new Uint32Array(6 * n);
  for (let i = 0; i < count; i++) {
    const j = at[i];
    if (j < 0) continue;
    t[2 * j] = times[2 * i];
    t[2 * j + 1] = times[2 * i + 1];
    f.set(fields.subarray(6 * i, 6 * i + 6), 6 * j);
  }
  const used = new Set<number>();
  for (let j = 0; j < n; j++) used.add(f[6 * j + 1]);
  const moved = <T>(list: Array<[number, T]> | undefined): Array<[number, T]> | undefined =>
    list?.flatMap(([i, v]) => (at[i] < 0 ? [] : [[at[i], v] as [number, T]]));
  return {
    names: snap.names,
    timelines: snap.timelines.filter((tl) => used.has(tl.id)),
    count: n,
    times: t,
    fields: f,
    attrs: moved(snap.attrs) ?? [],
    counters: snap.counters?.map((c) => {
      let k = 0;
      while (k < c.times.length && c.times[k] < fromMs) k++;
      let e = k;
      while (e < c.times.length && c.times[e] <= untilMs) e++;
      return { name: c.name, times: c.times.subarray(k, e), values: c.values.subarray(k, e), dropped: c.dropped };
    }),
    contexts: moved(snap.contexts),
  };
}

/**
 * The trigger of one tracer (one thread): watches the local roots the
 * tracer hands it, and writes the dumps.
 */
export class DumpTrigger {
  private files = 0;
  private written = 0;
  private suppressed = 0;
  private failed = 0;
  /** Times (ms) of the dumps started in the last minute: at most maxPerMinute. */
  private readonly recent: number[] = [];
  /** A trace() span that is a local root is open on this thread. */
  private syncOpen = false;
  /** The first trace() span flagged error inside it, if any. */
  private errorName: string | undefined;

  constructor(
    private readonly o: ResolvedDumpOn,
    private readonly backend: () => Backend,
    private readonly flush: () => void,
    /** The tracer's processName: a dump names its process, and gives its pid, as the tracer's write() does. */
    private readonly processName: string | undefined,
  ) {}

  /** A local root began: its begin time (ms). */
  rootBegin(b: Backend): number {
    return b.now();
  }

  /** A trace() span that is a local root began: its begin time (ms). */
  syncRootBegin(b: Backend): number {
    this.syncOpen = true;
    this.errorName = undefined;
    return b.now();
  }

  /** A trace() span flagged error ended: named when it is the first in the open root trace() span. */
  error(name: number | string): void {
    if (this.syncOpen) this.errorName ??= String(name);
  }

  /** The trace() span `name`, a local root begun at `beganMs`, ended now. */
  syncRootEnd(b: Backend, name: number | string, beganMs: number): void {
    const failed = this.errorName;
    this.errorName = undefined;
    this.syncOpen = false;
    this.rootEnd(b, name, beganMs, failed);
  }

  /** `p`, the promise of traceAsync() root `name` begun at `beganMs`, triggering when it settles. */
  asyncRoot<T>(b: Backend, name: number | string, beganMs: number, p: Promise<T>): Promise<T> {
    return p.then(
      (v) => {
        this.rootEnd(b, name, beganMs, undefined);
        return v;
      },
      (e: unknown) => {
        this.rootEnd(b, name, beganMs, String(name));
        throw e;
      },
    );
  }

  /**
   * A root span recorded apart (hotspan/auto's: lib/auto/auto-record.ts),
   * `name`, from `beganMs` to `endMs` on the tracer's clock, flagged error or
   * not; it is in the tracer (or in what `spans` adds) by the time the dump
   * is written.
   */
  recordedRoot(name: string, beganMs: number, endMs: number, error: boolean): void {
    this.decide(name, beganMs, endMs, error ? name : undefined);
  }

  /** The spans recorded apart that are not in the tracer (hotspan/auto's on the js backend): added to each dump's snapshot. */
  withSpans(add: (snap: NativeSnapshot) => NativeSnapshot): void {
    this.spans = add;
  }

  private spans: ((snap: NativeSnapshot) => NativeSnapshot) | undefined;

  /** Local root `name`, begun at `beganMs`, ended now; `failedName`: the span flagged error in it, if any. */
  private rootEnd(b: Backend, name: number | string, beganMs: number, failedName: string | undefined): void {
    this.decide(name, beganMs, b.now(), failedName);
  }

  private decide(name: number | string, beganMs: number, endMs: number, failedName: string | undefined): void {
    const ms = endMs - beganMs;
    const failed = this.o.errors ? failedName : undefined;
    const slow = this.o.slowerThanMs !== undefined && ms > this.o.slowerThanMs;
    if (!slow && failed === undefined) return;
    while (this.recent.length > 0 && this.recent[0] <= endMs - MINUTE_MS) this.recent.shift();
    if (this.recent.length >= this.o.maxPerMinute) {
      this.suppressed++;
      return;
    }
    this.recent.push(endMs);
    const file = numbered(this.o.path, ++this.files);
    const root = JSON.stringify(String(name));
    const why = slow
      ? `span ${root} took ${ms.toFixed(1)} ms (slowerThanMs ${String(this.o.slowerThanMs)})`
      : failed === String(name)
        ? `span ${root} ended flagged error`
        : `span ${JSON.stringify(failed)} inside span ${root} ended flagged error`;
    setImmediate(() => this.write(file, endMs - this.o.windowMs, endMs, why));
  }

  private write(file: string, fromMs: number, untilMs: number, why: string): void {
    try {
      this.flush();
      const b = this.backend();
      const all = b.snapshot();
      const snap = windowOf(this.spans === undefined ? all : this.spans(all), fromMs, untilMs);
      writeFileSync(file, writeColumns(snap, new Set(), this.o.format, readClocks(), calibrate().originNs, totalCounts(b.counts()), this.processName, process.pid));
      this.written++;
      process.stderr.write(`hotspan: dumpOn: wrote ${String(snap.count)} spans of the last ${String(this.o.windowMs)} ms to ${file}: ${why}\n`);
    } catch (e) {
      this.failed++;
      process.emitWarning(`hotspan: dumpOn: no dump written to ${file} (${why}): ${(e as Error).message}`, {
        type: 'HotspanWarning',
        code: 'HOTSPAN_DUMP_FAILED',
      });
    }
  }

  counts(): DumpOnCounts {
    return Object.freeze({ written: this.written, suppressed: this.suppressed, failed: this.failed });
  }
}
