// Tracer options and their validation.

import type { BackendKind } from './backend';
import { describe } from './errors';
import { wellFormed } from './names';
import { outputFormat } from './output';

export function checkThreadName(threadName: unknown): string {
  if (typeof threadName !== 'string' || threadName.length === 0) {
    throw new TypeError(`hotspan: threadName must be a non-empty string, got ${describe(threadName)}`);
  }
  return wellFormed(threadName);
}

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
   * Writes the trace to this path when the process exits normally, calls
   * process.exit(), or gets SIGINT or SIGTERM; the extension picks the format.
   */
  writeOnExit?: string;
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
   * Test hook, js backend only: the clock (ms on the performance.now() axis)
   * the backend reads instead of performance.now().
   */
  clock?: () => number;
}

export interface ResolvedOptions {
  backend: BackendKind | undefined;
  requireNative: boolean;
  wakeHighWater: number;
  threadName: string;
  clock: (() => number) | undefined;
  writeOnExit: string | undefined;
  memoryLimit: number;
  onFull: OnFull;
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
  'clock',
  'writeOnExit',
  'memoryLimit',
  'onFull',
]);

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
  for (const key of Object.keys(options)) {
    if (!(known as readonly string[]).includes(key)) {
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
  const { backend, requireNative, wakeHighWater, threadName, clock, writeOnExit, memoryLimit, onFull } = o;
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
  if (clock !== undefined) {
    if (typeof clock !== 'function') {
      throw new TypeError(`hotspan: clock must be a function returning ms, got ${describe(clock)}`);
    }
    if (backend !== 'js') {
      throw new RangeError(`hotspan: the clock option needs backend: 'js', got backend ${describe(backend)}`);
    }
  }
  if (writeOnExit !== undefined) {
    if (typeof writeOnExit !== 'string' || writeOnExit.length === 0) {
      throw new TypeError(`hotspan: writeOnExit must be a file path, got ${describe(writeOnExit)}`);
    }
    outputFormat(writeOnExit); // a RangeError naming the path when its extension picks no format
  }
  const envLimit = process.env.HOTSPAN_MEMORY_LIMIT;
  const envOnFull = process.env.HOTSPAN_ON_FULL;
  const limit =
    memoryLimit !== undefined
      ? checkLimit(typeof memoryLimit === 'number' ? memoryLimit : NaN, 'memoryLimit', memoryLimit)
      : envLimit !== undefined && envLimit !== ''
        ? parseMemoryLimit(envLimit, 'HOTSPAN_MEMORY_LIMIT')
        : DEFAULT_MEMORY_LIMIT;
  const policy =
    onFull !== undefined
      ? checkOnFull(onFull, 'onFull')
      : envOnFull !== undefined && envOnFull !== ''
        ? checkOnFull(envOnFull, 'HOTSPAN_ON_FULL')
        : 'overwrite';
  return {
    memoryLimit: limit,
    onFull: policy,
    backend: backend as BackendKind | undefined,
    requireNative: requireNative === true,
    wakeHighWater: (wakeHighWater as number | undefined) ?? 4096,
    threadName: wellFormed((threadName as string | undefined) ?? 'main'),
    clock: clock as (() => number) | undefined,
    writeOnExit: writeOnExit as string | undefined,
  };
}
