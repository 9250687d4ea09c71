// Which backend a tracer records on: the one its options name (native,
// falling back to js with one warning; js; noop), or the one a token from
// tracer.share() joins.

import type { Backend } from '../backends/backend';
import { isJsToken } from '../backends/share-transport';
import { NativeBackend } from '../backends/native-backend';
import { NoopBackend } from '../backends/noop-backend';
import { WasmBackend } from '../backends/wasm-backend';
import { WasmJoinedBackend } from '../backends/wasm-joined';
import { loadNativeAddon } from '../binding/native-loader';
import { calibrate } from '../common/clock';
import type { ResolvedOptions } from './options';
import { checkSample, keepFromEnv, keepWord, sampleFromEnv, samplerWord } from './sampling';

const WARNED = Symbol.for('hotspan.nativeFallbackWarned');

function warnFallbackOnce(error: Error): void {
  const g = globalThis as { [WARNED]?: boolean };
  if (g[WARNED] === true) return;
  g[WARNED] = true;
  process.emitWarning(`hotspan: the native addon could not be loaded, using the js backend: ${error.message}`, {
    type: 'HotspanWarning',
    code: 'HOTSPAN_NATIVE_UNAVAILABLE',
  });
}

/** What the js backend is made with; `idSalt` (internal: tests that compare ids across backends) defaults to a random one. */
export interface JsBudget {
  memoryLimit: number;
  onFull: ResolvedOptions['onFull'];
  sampler: bigint;
  keep: bigint;
  /** The tail keep's span names (sample.keep.names). */
  keepNames?: readonly string[];
  idSalt?: bigint;
  /** ms on the performance.now() axis instead of performance.now (internal: tests that drive time). */
  clock?: () => number;
  /** The process's name in the documents it writes (TracerOptions.processName); default the core's. */
  processName?: string;
}

/** The js backend: the core compiled to WebAssembly (its workers join on it too). */
export function jsBackend(threadName: string, budget: JsBudget): Backend {
  return new WasmBackend({ threadName, ...budget });
}

/**
 * The backend `new Tracer(options)` records on. `originNs`: the native
 * tracer's performance.now() origin on CLOCK_MONOTONIC, when not this
 * process's (hotspan/auto in a process another traced process started:
 * lib/auto/auto-out.ts); the js backend records on this process's.
 */
export function createBackend(o: ResolvedOptions, originNs?: bigint): Backend {
  const sample = o.sample === undefined ? sampleFromEnv() : checkSample(o.sample);
  const sampler = samplerWord(sample);
  const resolvedKeep = sample.keep ?? keepFromEnv();
  const keep = keepWord(resolvedKeep);
  if (o.backend === 'noop') return new NoopBackend();
  const budget = { memoryLimit: o.memoryLimit, onFull: o.onFull, sampler, keep, keepNames: resolvedKeep.names, processName: o.processName };
  if (o.backend === 'js') return jsBackend(o.threadName, budget);
  const { addon, error } = loadNativeAddon();
  if (addon === undefined) {
    const err = error ?? new Error('hotspan: the native addon could not be loaded (no reason given)');
    if (o.backend === 'native' || o.requireNative) throw err;
    warnFallbackOnce(err);
    return jsBackend(o.threadName, budget);
  }
  const cal = calibrate();
  const nt = addon.create({ originNs: originNs ?? cal.originNs, threadName: o.threadName, wakeHighWater: o.wakeHighWater, ...budget, keepNames: [...resolvedKeep.names] });
  return new NativeBackend(nt, cal.boundMs, true);
}

/**
 * The backend `Tracer.join(token)` records on in this worker: the js
 * backend's for a js token, else the native tracer the token names.
 */
export function joinBackend(token: string, threadName: string): Backend {
  if (isJsToken(token)) return WasmJoinedBackend.join(token, threadName);
  const { addon, error } = loadNativeAddon();
  if (addon === undefined) {
    throw new Error(
      'hotspan: Tracer.join() needs the native backend (cross-worker joining), and the addon did not load: ' +
        (error?.message ?? 'no reason given'),
    );
  }
  return new NativeBackend(addon.join(token, { threadName }), calibrate().boundMs, false);
}
