// The published package, checked as its users meet it:
//   - the tarball's file list against an allow-list and a size cap;
//   - its linux-arm64 prebuild (cross-compiled by prepack when
//     aarch64-linux-gnu-g++ is installed; required where tools are) the same
//     bytes as prebuilds/linux-arm64 in the checkout, which the arm64 stage of
//     scripts/test-stages.mjs loads and tests under qemu;
//   - the tarball built by `npm pack` (prepack: prebuildify) installed with
//     --ignore-scripts into a fresh project, where the native backend must load
//     from prebuilds/ (PREBUILDS_ONLY=1);
//   - the public declarations type-checked alone (strict, no @types/node) by CJS
//     and ESM consumers under node16, nodenext and bundler resolution;
// (The code blocks of README.md and docs/*.md run in test/doc-blocks.test.ts,
// from the same tarball.)
// One tarball serves every check; it is reused while newer than its sources.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, installTarball, mustRun, root, run, tarball } from './support/packed';
import { toolsRequired } from './support/tools';

const resolveFromRoot = createRequire(path.join(root, 'package.json')).resolve;

/** Every file a user needs, and nothing else (package.json, README.md and LICENSE npm always adds). */
const ALLOWED: RegExp[] = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^binding\.gyp$/,
  /^dist\/((common|binding|attrs|read|otlp|backends|tracer|auto|otel|cli)\/)?[\w-]+\.(js|d\.ts)$/,
  /^esm\/(index|auto|otel)\.mjs$/,
  /^esm\/(index|auto|otel)\.d\.mts$/,
  /^native\/include\/hotspan\.h(pp)?$/,
  /^native\/core\/(record|read|write|export)\/[\w-]+\.(cc|h)$/,
  /^native\/addon\/[\w-]+\.(cc|h)$/,
  /^native\/wasm\/hotspan_core\.wasm$/,
  /^prebuilds\/linux-(x64|arm64)\/hotspan\.(glibc|musl)\.node$/,
];
/** Unpacked size of everything but the prebuilt binaries (0.43 MB when this was written, before the wasm build; 1.13 MB with the 0.29 MB wasm core of the counters/query merge; 1.53 MB at the jsfast/async/attrs/anchors merge: 0.34 MB wasm, 0.38 MB core sources, 0.09 MB README; 1.71 MB with the pg and Redis instruments and the Tracer's role files; 1.87 MB when the wasm module took in the recording core, +0.09 MB, with hotspan.hpp and the mysql2 and OpenTelemetry instruments; 2.02 MB when the wasm engine, head sampling, CPU samples and the joined processes came in together, the wasm module at 0.53 MB; 2.33 MB when joined workers' CPU samples, hotspan/auto's span adder and dump variables, and the once-per-span sampledOut count came in together, the wasm module at 0.61 MB). */
const MAX_SOURCE_BYTES = 2_400_000;
/** Each prebuilt binary (stripped; 0.41 MB when this was written; 0.92 MB x64 and 0.79 MB arm64 when arm64 joined; x64 1.008 MB when the per-span entries took every argument form and joined workers' tracks came in, from 0.996 MB). */
const MAX_PREBUILD_BYTES = 1_100_000;
/** dist (a .js and a .d.ts per module), esm, the core and binding sources: 218 files at the budget/reads/counters merge, 269 with the stream, context and otlp branches together, 284 at the jsfast/async/attrs/anchors merge, 311 with hotspan/auto's streamed exit file and the binding's ms_ticks.h (gone again: 310); 330 without prebuilds and 332 with the x64 and arm64 ones when the express and fastify instruments added six (auto-route, auto-express, auto-fastify); one more with the C++ header native/include/hotspan.hpp; 343 with both prebuilds once the mysql2 and OpenTelemetry instruments and the wasm recorder added ten; 361 once the wasm engine, head sampling, CPU samples and the joined processes added eighteen; 362 with the tail keep's native/core/record/tail_keep.h; 398 without prebuilds, 400 with both, at the worker CPU samples and span adder merge. */
const MAX_FILES = 420;

interface PackFile {
  path: string;
  size: number;
}

function packList(cwd: string, ignoreScripts: boolean): PackFile[] {
  const args = ['pack', '--dry-run', '--json', ...(ignoreScripts ? ['--ignore-scripts'] : [])];
  const r = mustRun('npm', args, { cwd });
  const [info] = JSON.parse(r.stdout) as Array<{ files: PackFile[] }>;
  return info!.files;
}

function checkList(files: PackFile[]): void {
  const outside = files.filter((f) => !ALLOWED.some((re) => re.test(f.path))).map((f) => f.path);
  expect(outside, 'files outside the allow-list').toEqual([]);
  expect(files.length).toBeLessThanOrEqual(MAX_FILES);
  const isPrebuild = (f: PackFile) => f.path.startsWith('prebuilds/');
  const sourceBytes = files.filter((f) => !isPrebuild(f)).reduce((n, f) => n + f.size, 0);
  expect(sourceBytes).toBeLessThanOrEqual(MAX_SOURCE_BYTES);
  for (const f of files.filter(isPrebuild)) expect(f.size, f.path).toBeLessThanOrEqual(MAX_PREBUILD_BYTES);
  for (const need of ['dist/index.js', 'dist/index.d.ts', 'esm/index.mjs', 'esm/index.d.mts', 'binding.gyp', 'native/include/hotspan.h', 'native/include/hotspan.hpp']) {
    expect(files.map((f) => f.path)).toContain(need);
  }
}

describe('npm pack file list', () => {
  it('holds only allowed files, under the size caps, whatever build trees the checkout has', () => {
    // The checkout after `npm test` has native/build*, build/, test sources and bench/.
    checkList(packList(root, true));
  });
});

describe('the packed tarball, installed with --ignore-scripts', () => {
  let tgz = '';
  let project = '';
  let installMs = 0;
  const node = (args: string[], env: Record<string, string> = {}, cwd = project) =>
    run(process.execPath, args, { cwd, env: cleanEnv(env) });

  beforeAll(() => {
    tgz = tarball();
    const installed = installTarball(tgz);
    project = installed.dir;
    installMs = installed.ms;
  }, 1_800_000);
  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('has the prebuild and only allowed files', () => {
    // `tar -tv` lines: mode owner size date time path.
    const list = mustRun('tar', ['-tvzf', tgz]).stdout.trim().split('\n').map((line) => {
      const f = line.trim().split(/\s+/);
      return { path: f.slice(5).join(' ').replace(/^package\//, ''), size: Number(f[2]) };
    });
    checkList(list);
    expect(list.map((f) => f.path)).toContain('prebuilds/linux-x64/hotspan.glibc.node');
    const pkgDir = path.join(project, 'node_modules', 'hotspan');
    const arm64 = 'prebuilds/linux-arm64/hotspan.glibc.node';
    if (toolsRequired || list.some((f) => f.path === arm64)) {
      expect(list.map((f) => f.path)).toContain(arm64);
      // The binary the arm64 stage tests (it keeps a prebuild newer than its sources, as prepack does).
      expect(readFileSync(path.join(pkgDir, arm64)).equals(readFileSync(path.join(root, arm64))), `${arm64} differs from the checkout's`).toBe(true);
    }
    expect(existsSync(path.join(pkgDir, 'build')), 'nothing was compiled at install').toBe(false);
  });

  it('loads the native backend from prebuilds/ with PREBUILDS_ONLY=1, install plus first require timed', () => {
    const probe = `
      const t0 = performance.now();
      const { Tracer } = require('hotspan');
      const t = new Tracer({ requireNative: true });
      t.trace('x', () => 1);
      const requireMs = performance.now() - t0;
      const nodeFiles = Object.keys(require.cache).filter((f) => f.endsWith('.node'));
      console.log(JSON.stringify({ backend: t.backend, n: t.snapshot().length, nodeFiles, requireMs }));
      t.close();`;
    for (const env of [{ PREBUILDS_ONLY: '1' }, {}] as Array<Record<string, string>>) {
      const r = node(['-e', probe], env);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      const out = JSON.parse(r.stdout) as { backend: string; n: number; nodeFiles: string[]; requireMs: number };
      expect(out.backend).toBe('native');
      expect(out.n).toBe(1);
      expect(out.nodeFiles).toEqual([
        path.join(project, 'node_modules', 'hotspan', 'prebuilds', 'linux-x64', 'hotspan.glibc.node'),
      ]);
      // A figure, not a check: timing depends on the machine's load.
      console.log(
        `install (npm, --ignore-scripts) ${installMs.toFixed(0)} ms; require + first native span ` +
          `${out.requireMs.toFixed(1)} ms; node process ${r.ms.toFixed(0)} ms`,
      );
    }
  });

  it('PREBUILDS_ONLY=1 takes prebuilds/ over build/Release, and fails when prebuilds/ has no binary', () => {
    const pkgDir = path.join(project, 'node_modules', 'hotspan');
    const prebuilt = path.join(pkgDir, 'prebuilds', 'linux-x64', 'hotspan.glibc.node');
    const compiled = path.join(pkgDir, 'build', 'Release', 'hotspan.node');
    const moved = path.join(project, 'prebuilds-moved');
    const loadedFile = `
      const { Tracer } = require('hotspan');
      new Tracer({ requireNative: true }).close();
      console.log(Object.keys(require.cache).filter((f) => f.endsWith('.node')).join(','));`;
    // A compiled build beside the prebuild, as after `npx node-gyp rebuild`.
    mkdirSync(path.dirname(compiled), { recursive: true });
    copyFileSync(prebuilt, compiled);
    try {
      expect(node(['-e', loadedFile]).stdout.trim()).toBe(compiled);
      expect(node(['-e', loadedFile], { PREBUILDS_ONLY: '1' }).stdout.trim()).toBe(prebuilt);
      renameSync(path.join(pkgDir, 'prebuilds'), moved);
      try {
        const r = node(['-e', loadedFile], { PREBUILDS_ONLY: '1' });
        expect(r.status).not.toBe(0);
        expect(r.stderr).toMatch(/NativeLoadError/);
        expect(r.stderr).toMatch(/1\. PREBUILDS_ONLY=1: node-gyp-build prebuild in .*prebuilds: No native build was found/);
        expect(r.stderr).not.toMatch(/2\. /);
      } finally {
        renameSync(moved, path.join(pkgDir, 'prebuilds'));
      }
    } finally {
      rmSync(path.join(pkgDir, 'build'), { recursive: true, force: true });
    }
  });

  describe('public declarations stand alone (strict, no @types/node)', () => {
    const consumer = `
      import { Tracer, Query, formatStats, type SpanRecord, type StatsRow, type TracerOptions } from 'hotspan';
      const options: TracerOptions = { backend: 'js', threadName: 'main' };
      const t = new Tracer(options);
      const n: number = t.trace('parse', () => 42, { bytes: 3, ok: true, kind: 'json' });
      const id = t.name('db.query');
      t.begin(id); t.end();
      const h = t.start('upload'); h.end({ error: false });
      const records: readonly SpanRecord[] = t.snapshot();
      const first: SpanRecord | undefined = records[0];
      const flags: boolean[] = first ? [first.error, first.abandoned, first.async] : [];
      const rows: readonly StatsRow[] = t.stats();
      const q: Query = t.query();
      const total: number = q.spans('parse').total();
      const table: string = formatStats(rows);
      const p: Promise<void> = t.write('trace.json');
      export const out = [n, flags, total, table, p];
    `;
    const cases: Array<{ name: string; compilerOptions: Record<string, unknown> }> = [
      { name: 'node16', compilerOptions: { module: 'node16', moduleResolution: 'node16' } },
      { name: 'nodenext', compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' } },
      { name: 'bundler', compilerOptions: { module: 'preserve', moduleResolution: 'bundler' } },
    ];
    for (const c of cases) {
      it(`${c.name}: a CommonJS (.cts) and an ES module (.mts) consumer type-check`, () => {
        const dir = path.join(project, `types-${c.name}`);
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, 'cjs.cts'), consumer);
        writeFileSync(
          path.join(dir, 'esm.mts'),
          `${consumer}\nimport hotspan from 'hotspan';\nexport const same: typeof hotspan.Tracer = Tracer;\n`,
        );
        const tsconfig = {
          compilerOptions: {
            ...c.compilerOptions,
            target: 'ES2022',
            lib: ['ES2022'],
            types: [],
            strict: true,
            noEmit: true,
            skipLibCheck: false,
          },
          files: ['cjs.cts', 'esm.mts'],
        };
        writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
        const tsc = resolveFromRoot('typescript/bin/tsc');
        const r = node([tsc, '-p', path.join(dir, 'tsconfig.json')], {}, dir);
        expect(r.stdout + r.stderr).toBe('');
        expect(r.status).toBe(0);
      });
    }
  });
});
