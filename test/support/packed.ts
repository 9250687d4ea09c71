// The package as a user receives it: `npm pack` (whose prepack builds the
// prebuild) into .pack/, reused while it is newer than everything it is built
// from, and installed with --ignore-scripts into fresh projects.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const root = path.join(__dirname, '..', '..');
const packDir = path.join(root, '.pack');
/** What the tarball is built from: a newer file here means it is stale. */
const inputs = ['package.json', 'binding.gyp', 'README.md', 'lib', 'esm', 'native/core', 'native/addon', 'native/include', 'scripts'];

/** The environment without npm's lifecycle variables, so a nested npm acts as a user's would. */
const SANITIZER_RUN_VARS = new Set(['HOTSPAN_PREBUILD', 'HOTSPAN_TEST_PRELOAD', 'LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS', 'TSAN_OPTIONS']);

export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_(?!config_(cache|nodedir|registry)$)/i.test(k)) continue;
    if (k === 'PREBUILDS_ONLY' || k === 'NODE_OPTIONS') continue;
    // A fresh project loads its own prebuild: not the addon build or the
    // sanitizer runtime a sanitizer run (native/test/sanitizers.sh) chose for
    // this test process.
    if (SANITIZER_RUN_VARS.has(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export function run(cmd: string, args: string[], opts: SpawnSyncOptions = {}): Run {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 600_000, env: cleanEnv(), ...opts });
  const out = { status: r.status, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), ms: performance.now() - t0 };
  if (r.error) out.stderr += `\n${String(r.error)}`;
  return out;
}

export function mustRun(cmd: string, args: string[], opts: SpawnSyncOptions = {}): Run {
  const r = run(cmd, args, opts);
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
  return r;
}

function newest(p: string): number {
  const s = statSync(p);
  if (!s.isDirectory()) return s.mtimeMs;
  let m = 0;
  for (const e of readdirSync(p)) m = Math.max(m, newest(path.join(p, e)));
  return m;
}

/** The packed tarball, packed now unless .pack/ holds one newer than its sources. */
export function tarball(): string {
  const { name, version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; version: string };
  const file = path.join(packDir, `${name}-${version}.tgz`);
  const sourcesAt = Math.max(...inputs.filter((p) => existsSync(path.join(root, p))).map((p) => newest(path.join(root, p))));
  if (existsSync(file) && statSync(file).mtimeMs > sourcesAt) return file;
  mkdirSync(packDir, { recursive: true });
  // prepack builds two prebuilds (x64, and arm64 with the cross compiler): up to
  // ten minutes each on a loaded 2-core machine.
  mustRun('npm', ['pack', '--pack-destination', packDir], { cwd: root, timeout: 1_500_000 });
  if (!existsSync(file)) throw new Error(`npm pack did not write ${file}`);
  return file;
}

/** A fresh project with the tarball installed without running any script. */
export function installTarball(tgz: string, pkg: Record<string, unknown> = {}): { dir: string; ms: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hotspan-consumer-'));
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, ...pkg }, null, 2));
  const r = mustRun(
    'npm',
    ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=warn', tgz],
    { cwd: dir },
  );
  return { dir, ms: r.ms };
}
