// The head sampler's options: `new Tracer({ sample })` and, without it, the
// standard OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG. Checked here and
// turned into the core's sampler word (native/core/record/sampler.h), where
// the decision itself is made: the sampled flag inject() writes, the one the
// OTLP export acts on (docs/sampling.md).

import { describe } from '../common/errors';
import { checkCallOptions, fromEnv, type KeepOptions, type SampleOptions } from './options';

/** A tail keep as the tracer holds it (undefined slowerThanMs: not by duration). */
export interface ResolvedKeep {
  slowerThanMs: number | undefined;
  errors: boolean;
  maxWaitMs: number;
  /** Span names that keep their trace whole (the core's TraceKeep::keep_name); empty: none. */
  names: readonly string[];
}

/** A sampler as the tracer holds it. */
export interface ResolvedSample {
  ratio: number;
  parentBased: boolean;
  /** Undefined: from HOTSPAN_KEEP_SLOWER_THAN_MS and HOTSPAN_KEEP_ERRORS. */
  keep?: ResolvedKeep;
}

export const DEFAULT_MAX_WAIT_MS = 30_000;
const MAX_SLOWER_THAN_MS = 1e9;  // 40 bits of microseconds
const MAX_WAIT_MS = 2 ** 22 - 1;  // 22 bits of ms

/** parentbased_always_on: OpenTelemetry's default, and hotspan's before sampling existed. */
export const DEFAULT_SAMPLE: ResolvedSample = Object.freeze({ ratio: 1, parentBased: true });

function checkRatio(v: unknown, what: string): number {
  if (typeof v !== 'number') throw new TypeError(`hotspan: ${what} must be a number from 0 to 1, got ${describe(v)}`);
  if (!(v >= 0 && v <= 1)) throw new RangeError(`hotspan: ${what} must be a number from 0 to 1, got ${describe(v)}`);
  return v;
}

/** `sample` as given to `new Tracer()`: a TypeError or RangeError naming the bad value. */
export function checkSample(value: unknown): ResolvedSample {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`hotspan: sample must be an object such as { ratio: 0.1 }, got ${describe(value)}`);
  }
  const o = value as Record<string, unknown>;
  const { ratio, parentBased, keep } = checkCallOptions(o as SampleOptions, 'sample', ['ratio', 'parentBased', 'keep']) ?? {};
  if (parentBased !== undefined && typeof parentBased !== 'boolean') {
    throw new TypeError(`hotspan: sample.parentBased must be a boolean, got ${describe(parentBased)}`);
  }
  const r = ratio === undefined ? 1 : checkRatio(ratio, 'sample.ratio');
  return { ratio: r, parentBased: parentBased ?? true, keep: keep === undefined ? undefined : checkKeep(keep) };
}

function checkMs(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number') throw new TypeError(`hotspan: ${what} must be a number of ms from ${min} to ${max}, got ${describe(v)}`);
  if (!(v >= min && v <= max)) throw new RangeError(`hotspan: ${what} must be a number of ms from ${min} to ${max}, got ${describe(v)}`);
  return v;
}

/** `sample.keep` as given: a TypeError or RangeError naming the bad value. */
function checkKeep(value: unknown): ResolvedKeep {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`hotspan: sample.keep must be an object such as { slowerThanMs: 500, errors: true }, got ${describe(value)}`);
  }
  const { slowerThanMs, errors, maxWaitMs, names } =
    checkCallOptions(value as KeepOptions, 'sample.keep', ['slowerThanMs', 'errors', 'maxWaitMs', 'names']) ?? {};
  if (errors !== undefined && typeof errors !== 'boolean') {
    throw new TypeError(`hotspan: sample.keep.errors must be a boolean, got ${describe(errors)}`);
  }
  return {
    names: names === undefined ? [] : checkNames(names),
    slowerThanMs: slowerThanMs === undefined ? undefined : checkMs(slowerThanMs, 'sample.keep.slowerThanMs', 0, MAX_SLOWER_THAN_MS),
    errors: errors ?? false,
    maxWaitMs: maxWaitMs === undefined ? DEFAULT_MAX_WAIT_MS : checkMs(maxWaitMs, 'sample.keep.maxWaitMs', 1, MAX_WAIT_MS),
  };
}

/** `sample.keep.names`: an array of non-empty strings, copied (a TypeError naming the bad value). */
function checkNames(value: unknown): readonly string[] {
  if (!Array.isArray(value)) {
    throw new TypeError(`hotspan: sample.keep.names must be an array of span names, got ${describe(value)}`);
  }
  const names: string[] = [];
  for (let i = 0; i < value.length; i++) {
    const n: unknown = value[i];
    if (typeof n !== 'string' || n.length === 0) {
      throw new TypeError(`hotspan: sample.keep.names[${i}] must be a non-empty string, got ${describe(n)}`);
    }
    names.push(n);
  }
  return Object.freeze(names);
}

/**
 * The tail keep the environment asks for: HOTSPAN_KEEP_SLOWER_THAN_MS (ms,
 * 0 to 1e9) and HOTSPAN_KEEP_ERRORS (true or false); a bad value gives one
 * warning naming it and keeps the default (no keep by that rule).
 */
export function keepFromEnv(): ResolvedKeep {
  const slowerThanMs = fromEnv(
    'HOTSPAN_KEEP_SLOWER_THAN_MS',
    (v) => {
      const t = v.trim();
      const n = /^[+]?(\d+\.?\d*|\.\d+)$/.test(t) ? Number(t) : NaN;
      if (!(n >= 0 && n <= MAX_SLOWER_THAN_MS)) {
        throw new RangeError(`hotspan: HOTSPAN_KEEP_SLOWER_THAN_MS must be a number of ms from 0 to ${MAX_SLOWER_THAN_MS}, got ${describe(v)}`);
      }
      return n as number | undefined;
    },
    undefined,
    'no keep of slow traces',
  );
  const errors = fromEnv(
    'HOTSPAN_KEEP_ERRORS',
    (v) => {
      const t = v.trim().toLowerCase();
      if (t === 'true' || t === '1') return true;
      if (t === 'false' || t === '0') return false;
      throw new RangeError(`hotspan: HOTSPAN_KEEP_ERRORS must be true or false, got ${describe(v)}`);
    },
    false,
    'false',
  );
  return { slowerThanMs, errors, maxWaitMs: DEFAULT_MAX_WAIT_MS, names: [] };
}

/**
 * The core's tail keep word (native/core/record/tail_keep.h): bits 0-39
 * slowerThan in microseconds, bit 40 keep slow, bit 41 keep errors, bits
 * 42-63 maxWait in ms. 0n: no tail keep. With `names` (which go to the core
 * apart) the maxWait bits are set even when neither rule bit is.
 */
export function keepWord(k: ResolvedKeep): bigint {
  let word = 0n;
  if (k.slowerThanMs !== undefined) word |= (1n << 40n) | BigInt(Math.round(k.slowerThanMs * 1000));
  if (k.errors) word |= 1n << 41n;
  if (word === 0n && k.names.length === 0) return 0n;
  return word | (BigInt(Math.ceil(k.maxWaitMs)) << 42n);
}

/** The OTEL_TRACES_SAMPLER values hotspan implements: [root ratio (undefined: from the argument), parent-based]. */
const SAMPLERS: Record<string, readonly [number | undefined, boolean]> = {
  always_on: [1, false],
  always_off: [0, false],
  traceidratio: [undefined, false],
  parentbased_always_on: [1, true],
  parentbased_always_off: [0, true],
  parentbased_traceidratio: [undefined, true],
};

/** OTEL_TRACES_SAMPLER_ARG for a ratio sampler: a number from 0 to 1. */
function parseRatioArg(text: string): number {
  const t = text.trim();
  const n = /^[+]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t) ? Number(t) : NaN;
  if (!(n >= 0 && n <= 1)) {
    throw new RangeError(`hotspan: OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got ${describe(text)}`);
  }
  return n;
}

/**
 * The sampler the environment asks for (OpenTelemetry's variables): one
 * warning naming a bad value, and the default kept (parentbased_always_on
 * for a bad OTEL_TRACES_SAMPLER, a ratio of 1 for a bad argument).
 */
export function sampleFromEnv(): ResolvedSample {
  const kind = fromEnv(
    'OTEL_TRACES_SAMPLER',
    (v) => {
      const k = v.trim().toLowerCase();
      if (!Object.hasOwn(SAMPLERS, k)) {
        throw new RangeError(
          `hotspan: OTEL_TRACES_SAMPLER must be one of ${Object.keys(SAMPLERS).join(', ')}, got ${describe(v)}`,
        );
      }
      return k;
    },
    'parentbased_always_on',
    'parentbased_always_on',
  );
  const [ratio, parentBased] = SAMPLERS[kind];
  if (ratio !== undefined) return { ratio, parentBased };
  return { ratio: fromEnv('OTEL_TRACES_SAMPLER_ARG', parseRatioArg, 1, 'a ratio of 1'), parentBased };
}

const RANDOM_BITS = 2n ** 56n;

/**
 * The core's sampler word (native/core/record/sampler.h): bits 0-55 the
 * rejection threshold T = 2^56 - round(ratio * 2^56) (a root is sampled when
 * the low 56 bits of its trace id are >= T), bit 56 a ratio of 0, bit 57 not
 * parent-based.
 */
export function samplerWord(s: ResolvedSample): bigint {
  let word = s.parentBased ? 0n : 1n << 57n;
  const kept = BigInt(Math.round(s.ratio * 2 ** 56));
  if (kept <= 0n) word |= 1n << 56n;
  else if (kept < RANDOM_BITS) word |= RANDOM_BITS - kept;
  return word;
}
