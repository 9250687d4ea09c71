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

/**
 * Set (to anything but "" or "0") to load only a prebuilt binary from the
 * package's `prebuilds/` folder and fail otherwise: proves a tarball's
 * prebuild works, since node-gyp-build prefers `build/Release` when both exist.
 */
export const PREBUILDS_ONLY_ENV = 'PREBUILDS_ONLY';

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
  /** The .node file the addon was loaded from, when it loaded. */
  file?: string;
  error?: Error;
}

// lib/ in development (vitest runs the TS), dist/ once compiled: the package
// root is one level up either way.
const packageRoot = path.join(__dirname, '..', '..');
const requireFromRoot = createRequire(path.join(packageRoot, 'package.json'));

let loaded: { addon: NativeAddon; file: string } | undefined;

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
    // The package has no install script (a prebuild needs none), so `npm rebuild` would not compile.
    'Fix: compile it with `npx node-gyp rebuild` in the hotspan package folder (needs Python 3, make and ' +
      'a C++17 compiler; see https://github.com/nodejs/node-gyp#installation), ' +
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

interface GypBuild {
  /** The .node file node-gyp-build would load from `dir` (build/ first, then prebuilds/). */
  resolve(dir: string): string;
}

interface Candidate {
  candidate: string;
  /** The .node file to require; throws why there is none. */
  file: () => string;
}

const gypBuild = (): GypBuild => requireFromRoot('node-gyp-build') as GypBuild;
const prebuildsDir = path.join(packageRoot, 'prebuilds');

function prebuildsOnly(): boolean {
  const v = process.env[PREBUILDS_ONLY_ENV];
  return v !== undefined && v !== '' && v !== '0';
}

function candidates(): Candidate[] {
  if (prebuildsOnly()) {
    return [
      {
        candidate: `${PREBUILDS_ONLY_ENV}=1: node-gyp-build prebuild in ${prebuildsDir}`,
        file: () => {
          const file = gypBuild().resolve(packageRoot);
          if (path.relative(prebuildsDir, file).startsWith('..')) {
            throw new Error(`node-gyp-build chose ${file}, which is not under prebuilds/`);
          }
          return file;
        },
      },
    ];
  }
  return [
    { candidate: `node-gyp-build(${packageRoot})`, file: () => gypBuild().resolve(packageRoot) },
    ...['Release', 'Debug'].map((kind) => {
      const file = path.join(packageRoot, 'build', kind, 'hotspan.node');
      return { candidate: `require(${file})`, file: () => file };
    }),
  ];
}

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
  if (loaded) return loaded;
  const attempts: LoadAttempt[] = [];
  for (const { candidate, file: resolveFile } of candidates()) {
    let value: unknown;
    let file: string;
    try {
      file = resolveFile();
      value = requireFromRoot(file);
    } catch (err) {
      attempts.push({ candidate, reason: errorText(err) });
      continue;
    }
    const problem = validate(value);
    if (problem !== undefined) {
      attempts.push({ candidate, reason: problem });
      continue;
    }
    loaded = { addon: value as NativeAddon, file };
    return loaded;
  }
  return { error: new NativeLoadError(attempts) };
}
