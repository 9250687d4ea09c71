// Loads hotspan from the compiled output (dist/), never from the TS sources, so
// the bench measures what users run.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { rootDir } from './build.mjs';

const require = createRequire(import.meta.url);
export const distIndex = path.join(rootDir, 'dist', 'index.js');
export const addonPath = path.join(rootDir, 'build', 'Release', 'hotspan.node');

/** Why hotspan cannot be benchmarked yet, or null when it can. */
export function hotspanMissing() {
  if (!existsSync(distIndex)) return 'dist/index.js missing (run `npx tsc -p tsconfig.json`)';
  if (!existsSync(addonPath)) return 'build/Release/hotspan.node missing (run `npx node-gyp rebuild -j 2`)';
  return null;
}

export function loadHotspan() {
  return require(distIndex);
}

/**
 * A tracer of the given backend. `requireNative` so a broken addon is an error
 * here instead of a silent fallback to the js backend (which would make the
 * native figures lie).
 */
export function makeTracer(backend, extra = {}) {
  const { Tracer } = loadHotspan();
  const opts = { backend, ...extra };
  if (backend === 'native') opts.requireNative = true;
  return new Tracer(opts);
}

/**
 * The addon's NativeTracer behind a facade Tracer, through the facade's
 * internal test hook (dist/tracer/internal.js); undefined when that hook is absent.
 */
export function nativeTracer(tracer) {
  try {
    const { internals } = require(path.join(rootDir, 'dist', 'tracer', 'internal.js'));
    return typeof internals === 'symbol' ? tracer[internals]().native : undefined;
  } catch {
    return undefined;
  }
}

/** Records `spans` spans as requests of 3 children each (depth and parents real), flushes; returns how many. */
export function recordRequests(t, spans) {
  const parent = t.name('request');
  const child = t.name('db.query');
  const groups = Math.floor(spans / 4);
  for (let g = 0; g < groups; g++) {
    t.begin(parent);
    for (let c = 0; c < 3; c++) {
      t.begin(child);
      t.end();
    }
    t.end();
  }
  t.flush();
  return groups * 4;
}
