// A joined worker's span against the owner thread's on the js backend (the
// core in WebAssembly): the worker records in a core instance of its own
// through the same hot path, plus one count per end for its hand-over. Per
// round, side by side: begin(id)/end() spans on the owner thread, the same
// loop in a joined worker, and the floor (2 x performance.now()) on each.
// Prints the median ns/span of each over the rounds and the median of the
// per-round worker/owner ratios.
//   node bench/wasm-joined-span.mjs [--runs=5] [--spans=300000]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, '..', 'dist', 'index.js');
const arg = (name, dflt) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const RUNS = arg('runs', 5);
const SPANS = arg('spans', 300_000);
const { Tracer } = await import(dist).then((m) => m.default ?? m);

// One loop body for both threads, as text: ns per span, and the floor's.
const LOOP = `(t, n) => {
  const id = t.name('span');
  // Warm-up long enough for the module's optimized tier on a fresh thread.
  for (let i = 0; i < n; i++) { t.begin(id); t.end(); }
  let t0 = performance.now();
  for (let i = 0; i < n; i++) { t.begin(id); t.end(); }
  const span = ((performance.now() - t0) * 1e6) / n;
  let x = 0;
  t0 = performance.now();
  for (let i = 0; i < n; i++) { x += performance.now(); x -= performance.now(); }
  const floor = ((performance.now() - t0) * 1e6) / n;
  return { span, floor, x };
}`;
const loop = eval(LOOP);

function inWorker(token) {
  const w = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     const { Tracer } = require(workerData.dist);
     const t = Tracer.join(workerData.token, { threadName: 'bench' });
     parentPort.postMessage((${LOOP})(t, workerData.n));
     t.close();`,
    { eval: true, workerData: { dist, token, n: SPANS } },
  );
  return new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const rows = { owner: [], worker: [], ownerFloor: [], workerFloor: [], ratio: [] };
for (let r = 0; r < RUNS; r++) {
  const t = new Tracer({ backend: 'js', memoryLimit: 64 << 20 });
  const token = t.share();
  const o = loop(t, SPANS);
  const w = await inWorker(token);
  await t.settle({ timeoutMs: 60_000 });
  t.close();
  rows.owner.push(o.span);
  rows.worker.push(w.span);
  rows.ownerFloor.push(o.floor);
  rows.workerFloor.push(w.floor);
  rows.ratio.push(w.span / o.span);
}
const f = (x) => x.toFixed(1);
console.log(`js backend, ${String(SPANS)} spans a thread, median of ${String(RUNS)} rounds (ns/span):`);
console.log(`  owner thread  ${f(median(rows.owner))}  (floor ${f(median(rows.ownerFloor))})`);
console.log(`  joined worker ${f(median(rows.worker))}  (floor ${f(median(rows.workerFloor))})`);
console.log(`  worker / owner: ${median(rows.ratio).toFixed(2)}`);
