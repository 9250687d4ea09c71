// The js backend's gate (issue 31): its engine stays no slower than the
// naive pure-JS span. One run, side by side: the naive span, the js backend
// (the core in WebAssembly), and the floor (2 x performance.now()), with
// fresh memory (a budget never full: every record in never-touched memory;
// with its prefault worker, lib/binding/wasm-prefault.ts, and without it)
// and overwrite (a 4 MiB budget, full after the warm-up: recycled memory);
// and, as the control, a bare JS store of a 28-byte record per span into
// fresh wasm memory and into a reused ring (the first-touch cost alone).
//   node bench/engine-gate.mjs [--runs=5] [--min-cpu-ms=400]
// Each round runs every case once in a fresh process (micro.mjs), in an
// order rotated per round; prints the median ns/span of each case over the
// rounds, and the median of the per-round ratios to naive and to the floor.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, dflt) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const RUNS = arg('runs', 5);
const MIN_CPU_MS = arg('min-cpu-ms', 400);
const CASES = [
  ['floor-perf-now', 'floor: 2 x performance.now()'],
  ['naive', 'naive pure-JS span (object per span)'],
  ['js-id', 'js backend (wasm core), fresh memory'],
  ['js-id-noreserve', 'js backend (wasm core), fresh memory, prefault worker off'],
  ['js-id-overwrite', 'js backend (wasm core), 4 MiB budget full (overwrite)'],
  // No recorder: 2 x performance.now() and a 28-byte store into wasm memory,
  // fresh or a reused ring; their difference is the first-touch cost alone.
  ['bare-store-fresh', 'bare JS store of 28 B/span, fresh wasm memory'],
  ['bare-store-ring', 'bare JS store of 28 B/span, 4 MiB ring reused'],
];

function run(id) {
  const opts = JSON.stringify({ minCpuMs: MIN_CPU_MS, warmupMs: 300 });
  const r = spawnSync(process.execPath, ['--expose-gc', path.join(here, 'cases', 'micro.mjs'), id, opts], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${id} failed: ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const rounds = [];
for (let k = 0; k < RUNS; k++) {
  const round = {};
  for (let j = 0; j < CASES.length; j++) {
    const [id] = CASES[(j + k) % CASES.length];
    round[id] = run(id);
  }
  rounds.push(round);
  process.stderr.write(`round ${k + 1}/${RUNS}: ${CASES.map(([id]) => `${id} ${round[id].nsPerSpan.toFixed(1)}`).join(', ')}\n`);
}

const rows = CASES.map(([id, label]) => {
  const ns = median(rounds.map((r) => r[id].nsPerSpan));
  const vsNaive = median(rounds.map((r) => r[id].nsPerSpan / r.naive.nsPerSpan));
  const vsFloor = median(rounds.map((r) => r[id].nsPerSpan / r['floor-perf-now'].nsPerSpan));
  return { id, label, ns, vsNaive, vsFloor, info: rounds[rounds.length - 1][id].info };
});
console.log(`runs=${RUNS} min-cpu-ms=${MIN_CPU_MS}; ns/span: median over fresh processes; ratios: median of per-round ratios`);
console.log('| case | ns/span | / naive | / floor |');
console.log('|---|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.label} (\`${r.id}\`) | ${r.ns.toFixed(1)} | ${r.vsNaive.toFixed(2)} | ${r.vsFloor.toFixed(2)} |`);
for (const r of rows) if (r.info && Object.keys(r.info).length > 0) console.log(`${r.id}: ${JSON.stringify(r.info)}`);
