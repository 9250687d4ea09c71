// The wasm recorder's prefault worker (lib/binding/wasm-prefault.ts), flat
// out: the recording thread's own minor page faults (/proc/thread-self/stat,
// minflt) per 4 KiB page of records, and its ns per span, recording into
// fresh memory with the worker on and off. Fault counts do not depend on
// load unless the worker falls behind; timings do (the load is printed).
//   npx tsc -p tsconfig.json && node bench/wasm-prefault.mjs [--spans=2000000] [--runs=3]
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { WasmRecorder } = require('../dist/binding/wasm-recorder.js');
const arg = (name, dflt) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const SPANS = arg('spans', 2_000_000);
const RUNS = arg('runs', 3);

function minorFaults() {
  const stat = readFileSync('/proc/thread-self/stat', 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
}

function once(prefault) {
  const rec = new WasmRecorder({ memoryLimit: 2 ** 40, onFull: 'overwrite', originNs: 0n, ...(prefault ? {} : { prefault: false }) });
  const t = rec.thread('main');
  const name = rec.intern('tick');
  const perf = performance;
  for (let i = 0; i < 50_000; i++) {
    rec.begin(t, name, perf.now());
    rec.end(t, perf.now());
  }
  const f0 = minorFaults();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < SPANS; i++) {
    rec.begin(t, name, perf.now());
    rec.end(t, perf.now());
  }
  const t1 = process.hrtime.bigint();
  const faults = minorFaults() - f0;
  const on = rec.prefaulting();
  rec.free();
  const pages = (SPANS * 28) / 4096;
  return { prefault, workerRan: on, faultsPerPage: +(faults / pages).toFixed(3), faults, pages: Math.round(pages), nsPerSpan: +(Number(t1 - t0) / SPANS).toFixed(1), load: loadavg()[0].toFixed(2) };
}

for (let r = 0; r < RUNS; r++) for (const p of r % 2 ? [true, false] : [false, true]) console.log(JSON.stringify(once(p)));
