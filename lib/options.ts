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
}

const BACKENDS: readonly BackendKind[] = ['native', 'js', 'noop'];
const KEYS = new Set(['backend', 'requireNative', 'wakeHighWater', 'threadName', 'clock', 'writeOnExit']);

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
  const { backend, requireNative, wakeHighWater, threadName, clock, writeOnExit } = o;
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
  return {
    backend: backend as BackendKind | undefined,
    requireNative: requireNative === true,
    wakeHighWater: (wakeHighWater as number | undefined) ?? 4096,
    threadName: wellFormed((threadName as string | undefined) ?? 'main'),
    clock: clock as (() => number) | undefined,
    writeOnExit: writeOnExit as string | undefined,
  };
}
