// Tracer options and their validation.

import cluster from 'node:cluster';
import { constants } from 'node:os';
import { basename } from 'node:path';
import { isMainThread } from 'node:worker_threads';

import type { BackendKind } from '../backends/backend';
import { describe } from '../common/errors';
import { wellFormed } from '../common/names';
import { outputFormat } from '../common/output';

export function checkThreadName(threadName: unknown): string {
  if (typeof threadName !== 'string' || threadName.length === 0) {
    throw new TypeError(`hotspan: threadName must be a non-empty string, got ${describe(threadName)}`);
  }
  return wellFormed(threadName);
}

/** The longest processName, in UTF-16 code units. */
export const MAX_PROCESS_NAME = 256;

/** `processName`: a non-empty string of at most MAX_PROCESS_NAME units, lone surrogates replaced. */
export function checkProcessName(processName: unknown): string {
  if (typeof processName !== 'string') {
    throw new TypeError(`hotspan: processName must be a string, got ${describe(processName)}`);
  }
  if (processName.length === 0 || processName.length > MAX_PROCESS_NAME) {
    throw new RangeError(`hotspan: processName must be 1 to ${String(MAX_PROCESS_NAME)} characters, got ${describe(processName)}`);
  }
  return wellFormed(processName);
}

/** The options -e/--eval/-p/--print: the program is text, not a script file. */
const EVAL_FLAGS = /^(?:-e|-p|--eval|--print|-pe|-ep)(?:=|$)/;

/**
 * The default processName: what this process runs, as a process list would
 * say it. The main script's file name (`node server.js` -> "server.js"),
 * else (`node -e`, the REPL) process.title ("node"); a cluster worker's
 * (`worker`: cluster.worker.id) with " (worker <id>)" after it. Cut to
 * MAX_PROCESS_NAME units.
 */
export function defaultProcessName(
  // Structural, not NodeJS.Process: the declarations must not need @types/node.
  proc: { readonly argv: readonly string[]; readonly execArgv: readonly string[]; readonly title: string } = process,
  worker: number | undefined = cluster.worker?.id,
): string {
  const script = proc.argv[1];
  const evaluated = proc.execArgv.some((a) => EVAL_FLAGS.test(a));
  let name = !evaluated && script !== undefined && script !== '' ? basename(script) : proc.title;
  if (name === '') name = 'node';
  if (worker !== undefined) name += ` (worker ${String(worker)})`;
  return wellFormed(name.slice(0, MAX_PROCESS_NAME));
}

/** `new Tracer({ dumpOn })`: see docs/sampling.md. */
export interface DumpOnOptions {
  /** Dump when the outermost span lasted longer than this (ms, 0 to 1e9). */
  slowerThanMs?: number;
  /** Dump when a span flagged error ended inside the outermost span (default false). */
  errors?: boolean;
  /** The file path the dumps are numbered from (`trace.json` -> `trace-1.json`); its extension picks the format. */
  path: string;
  /** How much of the past each dump holds, ending at the trigger (ms, 1 to 3,600,000; default 10,000). */
  windowMs?: number;
  /** At most this many dumps in any 60 seconds (1 to 1000, default 6); the others are counted in counts().dumpOn.suppressed. */
  maxPerMinute?: number;
}

/** `new Tracer({ sample })`: which traces are sampled at their head. */
export interface SampleOptions {
  /**
   * The fraction of traces that start here to sample, 0 to 1 (OpenTelemetry's
   * TraceIdRatioBased: decided from the trace id alone, so every process with
   * the same ratio decides a trace the same way). Default 1.
   */
  ratio?: number;
  /**
   * Follow the sampled flag of an incoming parent (from `extract()` or a
   * parent context) instead of deciding again. Default true.
   */
  parentBased?: boolean;
  /**
   * Tail keep, acted on by the OTLP export: a trace the head decision drops
   * is still exported whole when its local root lasted longer than
   * `slowerThanMs`, a span of it is flagged error, or a span of it has one of
   * `names` (docs/sampling.md).
   * Default: HOTSPAN_KEEP_SLOWER_THAN_MS and HOTSPAN_KEEP_ERRORS.
   */
  keep?: KeepOptions;
}

/** `sample.keep`: which traces the head decision drops are exported anyway. */
export interface KeepOptions {
  /** Keep a trace whose local root lasted longer than this many ms (0 to 1e9). Default: not by duration. */
  slowerThanMs?: number;
  /** Keep a trace with a span flagged error. Default false. */
  errors?: boolean;
  /** Keep a trace with a span of one of these names (non-empty strings). Default: none. */
  names?: readonly string[];
  /** How long a span read before its root ended waits for it (1 to 4194303 ms); then the head decision alone. Default 30000. */
  maxWaitMs?: number;
}

/** Options of `new Tracer(options)`; an unknown key or a bad value throws, naming it. */
export interface TracerOptions {
  /** Omitted: native, falling back to js (with one warning) when the addon cannot load. */
  backend?: BackendKind;
  /** Throw instead of falling back when the addon cannot load. */
  requireNative?: boolean;
  /** Native: pending records past which a producer wakes the JS thread to drain. */
  wakeHighWater?: number;
  /** Display name of this thread's timeline. */
  threadName?: string;
  /**
   * The process's name in the traces this tracer writes (Chrome JSON's
   * process_name metadata, Perfetto's process descriptor), so the processes
   * of one trace (`hotspan run`) are told apart: a string of 1 to 256
   * characters. Default: what the process runs, the main script's file name
   * (`node server.js`: "server.js"), else process.title (`node -e`: "node"),
   * with " (worker <id>)" after it in a cluster worker.
   */
  processName?: string;
  /**
   * Writes the trace to this path when the process exits normally, calls
   * process.exit(), throws an uncaught exception, or gets SIGINT or SIGTERM;
   * the extension picks the format.
   */
  writeOnExit?: string;
  /**
   * Each time the process gets this signal, dump() to a new file: the path
   * numbered `-1`, `-2`, ... before its extension (default path
   * `hotspan-<pid>-dump.pftrace` in the working directory). stderr says where
   * each dump went. The signal no longer ends the process (that is its
   * default action). Main thread only; not SIGINT or SIGTERM (see writeOnExit),
   * SIGUSR1 (Node's inspector), SIGKILL, SIGSTOP or a fault signal.
   */
  dumpOnSignal?:
    | string
    | {
        /** The signal, e.g. SIGUSR2. */
        signal: string;
        /** The path the dumps are numbered from. */
        path?: string;
      };
  /**
   * Before an uncaught exception, or an unhandled rejection that Node raises
   * as one, is handled, writes what the tracer holds to this path
   * (synchronously). The exit code and what is printed stay the program's.
   */
  dumpOnCrash?: string;
  /**
   * The budget for recorded spans, their attributes and side tables, in bytes
   * (1 MiB to 64 GiB). Default: HOTSPAN_MEMORY_LIMIT (bytes, or with a K, M or
   * G suffix), else 256 MiB.
   */
  memoryLimit?: number;
  /**
   * When the budget is full: 'overwrite' recycles the oldest spans (a flight
   * recorder), 'drop' drops new ones. Either way tracer.counts() counts them.
   * Default: HOTSPAN_ON_FULL, else 'overwrite'.
   */
  onFull?: OnFull;
  /**
   * Head sampling of traces (docs/sampling.md): `{ ratio, parentBased }`.
   * Default: OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, else every
   * trace that starts here sampled and an incoming parent's flag followed.
   */
  sample?: SampleOptions;
  /**
   * Triggered dumps (docs/sampling.md): `{ slowerThanMs, errors, path,
   * windowMs, maxPerMinute }` writes the last windowMs of every timeline to
   * a numbered file when an outermost trace() span is slow or fails.
   */
  dumpOn?: DumpOnOptions;
}

export interface ResolvedOptions {
  backend: BackendKind | undefined;
  requireNative: boolean;
  wakeHighWater: number;
  threadName: string;
  processName: string;
  writeOnExit: string | undefined;
  /** The signal and the path template its dumps are numbered from. */
  dumpOnSignal: { signal: string; path: string } | undefined;
  dumpOnCrash: string | undefined;
  memoryLimit: number;
  onFull: OnFull;
  /** `sample` as given (checked by lib/tracer/sampling.ts when the backend is made); undefined: from the environment. */
  sample: unknown;
  /** `dumpOn` as given (checked by lib/tracer/dump-on.ts when the tracer is made). */
  dumpOn: unknown;
}

export type OnFull = 'overwrite' | 'drop';

export const MIN_MEMORY_LIMIT = 2 ** 20;
export const MAX_MEMORY_LIMIT = 2 ** 36;
const DEFAULT_MEMORY_LIMIT = 2 ** 28;
const UNITS: Record<string, number> = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30 };

function checkLimit(bytes: number, what: string, shown: unknown): number {
  if (!Number.isInteger(bytes) || bytes < MIN_MEMORY_LIMIT || bytes > MAX_MEMORY_LIMIT) {
    throw new RangeError(`hotspan: ${what} must be a byte count from 1M to 64G, got ${describe(shown)}`);
  }
  return bytes;
}

/** HOTSPAN_MEMORY_LIMIT: bytes, or a number with a K, M or G suffix (powers of 1024). */
export function parseMemoryLimit(text: string, what: string): number {
  const m = /^\s*(\d+)\s*([KMG]?)\s*$/i.exec(text);
  if (m === null) {
    throw new RangeError(`hotspan: ${what} must be bytes or a number with a K, M or G suffix, got ${describe(text)}`);
  }
  return checkLimit(Number(m[1]) * UNITS[m[2].toUpperCase()], what, text);
}

const ENV_WARNED = Symbol.for('hotspan.envWarned');

/**
 * A setting from the environment: `parse(value)`, or, when that throws, one
 * warning naming the variable and its value (once a process for each
 * variable and value, however many tracers read it) and `fallback`. A typo
 * in the environment must not stop the program from starting; the same
 * value passed as an option still throws.
 */
export function fromEnv<T>(name: string, parse: (value: string) => T, fallback: T, fallbackText: string): T {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  try {
    return parse(value);
  } catch (e) {
    // On globalThis, as the fallback warning is: shared by every copy of this module a process loads.
    const g = globalThis as { [ENV_WARNED]?: Set<string> };
    const warned = (g[ENV_WARNED] ??= new Set());
    const key = `${name}=${value}`;
    if (!warned.has(key)) {
      warned.add(key);
      process.emitWarning(`${(e as Error).message}; ignored, using the default (${fallbackText})`, {
        type: 'HotspanWarning',
        code: 'HOTSPAN_BAD_ENV',
      });
    }
    return fallback;
  }
}

function checkOnFull(v: unknown, what: string): OnFull {
  if (v !== 'overwrite' && v !== 'drop') {
    throw new RangeError(`hotspan: ${what} must be 'overwrite' or 'drop', got ${describe(v)}`);
  }
  return v;
}

const BACKENDS: readonly BackendKind[] = ['native', 'js', 'noop'];
const KEYS = new Set([
  'backend',
  'requireNative',
  'wakeHighWater',
  'threadName',
  'processName',
  'writeOnExit',
  'dumpOnSignal',
  'dumpOnCrash',
  'memoryLimit',
  'onFull',
  'sample',
  'dumpOn',
]);

/** Signals a dump cannot take: why, by name. */
const SIGNALS_REFUSED: Record<string, string> = {
  SIGINT: 'it ends the process; use writeOnExit to write the trace then',
  SIGTERM: 'it ends the process; use writeOnExit to write the trace then',
  SIGUSR1: "it starts Node's inspector",
  SIGKILL: 'it cannot be caught',
  SIGSTOP: 'it cannot be caught',
  SIGSEGV: 'Node cannot run JS on a fault signal',
  SIGBUS: 'Node cannot run JS on a fault signal',
  SIGFPE: 'Node cannot run JS on a fault signal',
  SIGILL: 'Node cannot run JS on a fault signal',
};

/** A trace file path: TypeError unless a non-empty string, RangeError naming it when its extension picks no format. */
function checkTracePath(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`hotspan: ${what} must be a file path, got ${describe(value)}`);
  }
  outputFormat(value);
  return value;
}

function checkDumpOnSignal(value: unknown): { signal: string; path: string } {
  const o = typeof value === 'string' ? { signal: value } : value;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) {
    throw new TypeError(`hotspan: dumpOnSignal must be a signal name or { signal, path }, got ${describe(value)}`);
  }
  const { signal, path } = checkCallOptions(o as { signal?: unknown; path?: unknown }, 'dumpOnSignal', ['signal', 'path']) ?? {};
  if (typeof signal !== 'string') {
    throw new TypeError(`hotspan: dumpOnSignal's signal must be a signal name such as 'SIGUSR2', got ${describe(signal)}`);
  }
  if (!Object.prototype.hasOwnProperty.call(constants.signals, signal)) {
    throw new RangeError(`hotspan: dumpOnSignal: ${JSON.stringify(signal)} is not a signal name (for example 'SIGUSR2')`);
  }
  const refused = SIGNALS_REFUSED[signal];
  if (refused !== undefined) throw new RangeError(`hotspan: dumpOnSignal cannot be ${signal}: ${refused}`);
  if (!isMainThread) {
    throw new RangeError(`hotspan: dumpOnSignal (${signal}) needs the main thread: a worker gets no signals`);
  }
  return {
    signal,
    path: path === undefined ? `hotspan-${String(process.pid)}-dump.pftrace` : checkTracePath(path, "dumpOnSignal's path"),
  };
}

/**
 * A per-call options argument: undefined, or a plain object with only `known`
 * keys (an unknown key is a mistake, e.g. `{ serial: true }` given to
 * traceAsync, and must not be ignored silently).
 */
export function checkCallOptions<T extends object>(
  options: T | undefined,
  what: string,
  known: readonly (keyof T & string)[],
): T | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`hotspan: ${what} options must be an object, got ${describe(options)}`);
  }
  // for-in walks the enum cache (no key array per call, as Object.keys
  // makes); inherited keys (a polluted Object.prototype) are not options.
  for (const key in options) {
    if (!(known as readonly string[]).includes(key) && Object.hasOwn(options, key)) {
      throw new RangeError(`hotspan: unknown ${what} option "${key}" (known: ${known.join(', ') || 'none'})`);
    }
  }
  return options;
}

export function resolveOptions(options: unknown): ResolvedOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`hotspan: options must be an object, got ${describe(options)}`);
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!KEYS.has(key)) {
      throw new RangeError(`hotspan: unknown option "${key}" (known: ${[...KEYS].join(', ')})`);
    }
  }
  const { backend, requireNative, wakeHighWater, threadName, processName, writeOnExit, dumpOnSignal, dumpOnCrash, memoryLimit, onFull, sample, dumpOn } = o;
  if (backend !== undefined && !BACKENDS.includes(backend as BackendKind)) {
    throw new RangeError(`hotspan: backend must be 'native', 'js' or 'noop', got ${describe(backend)}`);
  }
  if (requireNative !== undefined && typeof requireNative !== 'boolean') {
    throw new TypeError(`hotspan: requireNative must be a boolean, got ${describe(requireNative)}`);
  }
  if (
    wakeHighWater !== undefined &&
    (typeof wakeHighWater !== 'number' || !Number.isInteger(wakeHighWater) || wakeHighWater < 1 || wakeHighWater > 2 ** 32 - 1)
  ) {
    throw new RangeError(`hotspan: wakeHighWater must be a positive integer, got ${describe(wakeHighWater)}`);
  }
  if (threadName !== undefined) checkThreadName(threadName);
  if (writeOnExit !== undefined) checkTracePath(writeOnExit, 'writeOnExit');
  if (dumpOnCrash !== undefined) checkTracePath(dumpOnCrash, 'dumpOnCrash');
  const limit =
    memoryLimit !== undefined
      ? checkLimit(typeof memoryLimit === 'number' ? memoryLimit : NaN, 'memoryLimit', memoryLimit)
      : fromEnv('HOTSPAN_MEMORY_LIMIT', (v) => parseMemoryLimit(v, 'HOTSPAN_MEMORY_LIMIT'), DEFAULT_MEMORY_LIMIT, '256M');
  const policy =
    onFull !== undefined
      ? checkOnFull(onFull, 'onFull')
      : fromEnv<OnFull>('HOTSPAN_ON_FULL', (v) => checkOnFull(v, 'HOTSPAN_ON_FULL'), 'overwrite', "'overwrite'");
  return {
    memoryLimit: limit,
    onFull: policy,
    backend: backend as BackendKind | undefined,
    requireNative: requireNative === true,
    wakeHighWater: (wakeHighWater as number | undefined) ?? 4096,
    threadName: wellFormed((threadName as string | undefined) ?? 'main'),
    processName: processName === undefined ? defaultProcessName() : checkProcessName(processName),
    writeOnExit: writeOnExit as string | undefined,
    dumpOnSignal: dumpOnSignal === undefined ? undefined : checkDumpOnSignal(dumpOnSignal),
    dumpOnCrash: dumpOnCrash as string | undefined,
    sample,
    dumpOn,
  };
}
