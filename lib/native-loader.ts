// Loads the compiled addon. Every candidate is tried in turn and every failure
// is kept, so when nothing loads the one error says what was tried, why each
// attempt failed, and how to fix it.
import * as path from 'path';
import { createRequire } from 'module';
import type { NativeAddon } from './native-binding';

/** ABI version of native/include/hotspan.h this facade was written against. */
export const EXPECTED_ABI_VERSION = 1;

/** Set to "1" to simulate a failed load (tests of the js fallback). */
export const FORCE_LOAD_FAILURE_ENV = 'HOTSPAN_FORCE_LOAD_FAILURE';

export interface LoadAttempt {
  /** What was tried, e.g. `node-gyp-build(<root>)` or a .node path. */
  candidate: string;
  /** Why it failed. */
  reason: string;
}

/** Raised (or returned) when no candidate gives a usable addon. */
export class NativeLoadError extends Error {
  readonly attempts: readonly LoadAttempt[];

  constructor(attempts: readonly LoadAttempt[]) {
    super(describeFailure(attempts));
    this.name = 'NativeLoadError';
    this.attempts = attempts;
  }
}

export interface NativeLoadResult {
  addon?: NativeAddon;
  error?: Error;
}

// lib/ in development (vitest runs the TS), dist/ once compiled: the package
// root is one level up either way.
const packageRoot = path.join(__dirname, '..');
const requireFromRoot = createRequire(path.join(packageRoot, 'package.json'));

let loaded: NativeAddon | undefined;

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message.split('\n')[0] ?? err.message;
  return String(err);
}

function describeFailure(attempts: readonly LoadAttempt[]): string {
  const lines = [
    `hotspan: could not load the native addon on Node ${process.version} ` +
      `(Node-API ${process.versions.napi ?? 'unknown'}, ${process.platform}-${process.arch}); ` +
      `the addon needs Node-API 9 and ABI version ${EXPECTED_ABI_VERSION}.`,
    'Tried:',
    ...attempts.map((a, i) => `  ${i + 1}. ${a.candidate}: ${a.reason}`),
    'Fix: run `npm rebuild hotspan` to compile it (needs Python 3, make and a C++17 compiler; ' +
      'see https://github.com/nodejs/node-gyp#installation), ' +
      "or choose the pure-JS backend with { backend: 'js' }.",
  ];
  return lines.join('\n');
}

/** Why `value` is not a usable NativeAddon, or undefined when it is. */
function validate(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return `exports are ${typeof value}, not an object`;
  const v = value as Record<string, unknown>;
  if (v.abiVersion !== EXPECTED_ABI_VERSION) {
    return (
      `abiVersion is ${String(v.abiVersion)}, expected ${EXPECTED_ABI_VERSION} ` +
      '(a stale or foreign build; rebuild it)'
    );
  }
  for (const fn of ['create', 'join', 'nowNs']) {
    if (typeof v[fn] !== 'function') return `exports.${fn} is not a function`;
  }
  return undefined;
}

type GypBuild = (dir: string) => unknown;

const candidates: ReadonlyArray<{ candidate: string; load: () => unknown }> = [
  {
    candidate: `node-gyp-build(${packageRoot})`,
    load: () => (requireFromRoot('node-gyp-build') as GypBuild)(packageRoot),
  },
  ...['Release', 'Debug'].map((kind) => {
    const file = path.join(packageRoot, 'build', kind, 'hotspan.node');
    return { candidate: `require(${file})`, load: () => requireFromRoot(file) };
  }),
];

/**
 * Loads the addon. Never throws: either `addon` or `error` (a
 * NativeLoadError listing every attempt) is set.
 */
export function loadNativeAddon(): NativeLoadResult {
  if (process.env[FORCE_LOAD_FAILURE_ENV] === '1') {
    return {
      error: new NativeLoadError([
        { candidate: `env ${FORCE_LOAD_FAILURE_ENV}=1`, reason: 'load failure forced (testing the fallback)' },
      ]),
    };
  }
  if (loaded) return { addon: loaded };
  const attempts: LoadAttempt[] = [];
  for (const { candidate, load } of candidates) {
    let value: unknown;
    try {
      value = load();
    } catch (err) {
      attempts.push({ candidate, reason: errorText(err) });
      continue;
    }
    const problem = validate(value);
    if (problem !== undefined) {
      attempts.push({ candidate, reason: problem });
      continue;
    }
    loaded = value as NativeAddon;
    return { addon: loaded };
  }
  return { error: new NativeLoadError(attempts) };
}
