// Builds what the bench needs and does not ship: the floor addon (and the C ABI
// and C++ header bench addons) in bench/floor, with node-gyp from the project's devDependencies.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
export const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const rootDir = path.resolve(benchDir, '..');
export const floorDir = path.join(benchDir, 'floor');

export const floorPath = path.join(floorDir, 'build', 'Release', 'floor.node');
export const cabiPath = path.join(floorDir, 'build', 'Release', 'cabi.node');
export const hppPath = path.join(floorDir, 'build', 'Release', 'hpp.node');

// Outside `npm run` node-gyp does not see npm's nodedir setting and would try
// to download headers; point it at the running Node's own headers when present.
function nodedirArgs() {
  if (process.env.npm_config_nodedir) return [];
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) ? [`--nodedir=${prefix}`] : [];
}

const outputs = [floorPath, cabiPath, hppPath];
const includeDir = path.join(rootDir, 'native', 'include');

// What the addons are built from: bench/floor's sources and binding.gyp, and
// the public headers they include (native/include).
function inputs() {
  const files = (dir, keep) =>
    readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && keep(e.name))
      .map((e) => path.join(dir, e.name));
  return [
    ...files(floorDir, (n) => /\.(cc|h|gyp)$/.test(n)),
    ...files(includeDir, (n) => /\.(h|hpp)$/.test(n)),
  ];
}

// True when an output is missing or older than one of its inputs.
export function floorStale() {
  if (!outputs.every((p) => existsSync(p))) return true;
  const built = Math.min(...outputs.map((p) => statSync(p).mtimeMs));
  return inputs().some((p) => statSync(p).mtimeMs > built);
}

export function buildFloor({ force = false, log = console.error } = {}) {
  if (!force && !floorStale()) return true;
  const gyp = require.resolve('node-gyp/bin/node-gyp.js');
  log(`building bench/floor (node-gyp rebuild)...`);
  const r = spawnSync(process.execPath, [gyp, 'rebuild', '-j', '2', ...nodedirArgs()], {
    cwd: floorDir,
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    log(r.stdout.slice(-4000));
    log(r.stderr.slice(-4000));
    return false;
  }
  return outputs.every((p) => existsSync(p));
}

// When run directly: build if stale (or always, with --force).
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  process.exit(buildFloor({ force: process.argv.includes('--force') }) ? 0 : 1);
}
