// The head sampler's options: `new Tracer({ sample })` and, without it, the
// standard OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG. Checked here and
// turned into the core's sampler word (native/core/record/sampler.h), where
// the decision itself is made: the sampled flag inject() writes, the one the
// OTLP export acts on (docs/sampling.md).

import { describe } from '../common/errors';
import { checkCallOptions, fromEnv, type SampleOptions } from './options';

/** A sampler as the tracer holds it. */
export interface ResolvedSample {
  ratio: number;
  parentBased: boolean;
}

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
  if (Object.hasOwn(o, 'keep')) {
    throw new RangeError('hotspan: sample.keep (tail keep of slow and failed traces) is not supported yet');
  }
  const { ratio, parentBased } = checkCallOptions(o as SampleOptions, 'sample', ['ratio', 'parentBased']) ?? {};
  if (parentBased !== undefined && typeof parentBased !== 'boolean') {
    throw new TypeError(`hotspan: sample.parentBased must be a boolean, got ${describe(parentBased)}`);
  }
  return { ratio: ratio === undefined ? 1 : checkRatio(ratio, 'sample.ratio'), parentBased: parentBased ?? true };
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
