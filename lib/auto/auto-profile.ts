// HOTSPAN_CPU_PROFILE for hotspan/auto (and `hotspan run --cpu-profile`):
// V8's CPU samples of the main thread from the program's first line to its
// exit, in the same trace as the automatic spans (docs/profiling.md).
//   unset, '', 0, false   no profiling
//   1, true               a sample every 1000 us (tracer.profile()'s default)
//   <n>                   a sample every n us, an integer from 10 to 1000000
// Anything else is a warning naming the value, and no profiling: a tracing
// setting never stops the program.

import { checkProfileOptions, DEFAULT_INTERVAL_US } from '../tracer/cpu-profile';

export const CPU_PROFILE_ENV = 'HOTSPAN_CPU_PROFILE';

/**
 * The sampling interval (us) `value` asks for, undefined for off. Throws a
 * TypeError or RangeError naming a bad value.
 */
export function cpuProfileInterval(value: string | undefined): number | undefined {
  const v = (value ?? '').trim().toLowerCase();
  if (v === '' || v === '0' || v === 'false') return undefined;
  if (v === '1' || v === 'true') return DEFAULT_INTERVAL_US;
  if (!/^\d+$/.test(v)) {
    throw new TypeError(`${CPU_PROFILE_ENV} must be 1, 0 or a sampling interval in us, got ${JSON.stringify(value)}`);
  }
  const n = Number(v);
  try {
    return checkProfileOptions({ intervalUs: n });
  } catch (e) {
    throw new RangeError(`${CPU_PROFILE_ENV}: ${(e as Error).message.replace(/^hotspan: profile\(\) /, '')}`);
  }
}

/** What hotspan/auto needs of its tracer to profile. */
interface Profiled {
  profile(options: { intervalUs: number }): { stop(): void };
}

/**
 * Starts the profile HOTSPAN_CPU_PROFILE asks for on `tracer`; returns its
 * stop (a no-op when off). A bad value, or a tracer that cannot profile (the
 * js backend), is a warning.
 */
export function startAutoProfile(tracer: Profiled, env: NodeJS.ProcessEnv, warn: (message: string) => void): () => void {
  let intervalUs: number | undefined;
  try {
    intervalUs = cpuProfileInterval(env[CPU_PROFILE_ENV]);
  } catch (e) {
    warn(`hotspan/auto: ${(e as Error).message}; not profiling`);
    return () => undefined;
  }
  if (intervalUs === undefined) return () => undefined;
  try {
    const handle = tracer.profile({ intervalUs });
    return () => handle.stop();
  } catch (e) {
    warn(`hotspan/auto: ${CPU_PROFILE_ENV}=${String(env[CPU_PROFILE_ENV])}: ${(e as Error).message.replace(/^hotspan: /, '')}; not profiling`);
    return () => undefined;
  }
}
