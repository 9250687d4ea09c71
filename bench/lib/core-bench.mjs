// Builds bench/core/core_bench.cc against the core's sources (native/core,
// read only) with the addon's optimisation level, into bench/floor/build/.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { benchDir, rootDir } from './build.mjs';

export const coreBenchPath = path.join(benchDir, 'floor', 'build', 'core_bench');
const mainSrc = path.join(benchDir, 'core', 'core_bench.cc');

function sources() {
  const dir = path.join(rootDir, 'native', 'core');
  return readdirSync(dir, { recursive: true })
    .filter((f) => f.endsWith('.cc'))
    .map((f) => path.join(dir, f));
}

/** Rebuilds when any source or header is newer than the binary. */
export function buildCoreBench({ log = console.error, extraFlags = [] } = {}) {
  const srcs = [mainSrc, ...sources()];
  const coreDir = path.join(rootDir, 'native', 'core');
  const newest = Math.max(
    ...[...srcs, ...readdirSync(coreDir, { recursive: true }).map((f) => path.join(coreDir, f))].map((f) => statSync(f).mtimeMs),
  );
  if (existsSync(coreBenchPath) && statSync(coreBenchPath).mtimeMs > newest && extraFlags.length === 0) return true;
  mkdirSync(path.dirname(coreBenchPath), { recursive: true });
  const args = ['-std=c++17', '-O2', '-g', '-pthread', `-I${coreDir}`, `-I${path.join(rootDir, 'native', 'include')}`, ...extraFlags, ...srcs, '-o', coreBenchPath];
  log('building bench/core/core_bench (g++)...');
  const r = spawnSync(process.env.CXX || 'g++', args, { encoding: 'utf8' });
  if (r.status !== 0) {
    log((r.stderr || '').slice(-3000));
    return false;
  }
  return true;
}
