// What the dumpOn option (docs/sampling.md) costs: a local root trace() span
// with and without it (a threshold that never triggers), side by side in one
// process with the bare loop, medians of 7 alternating rounds; then the time
// the event loop waits for one dump of a full window, by records in memory.
//   node bench/dump-on-cost.mjs [native|js]
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const { Tracer } = createRequire(import.meta.url)('../dist/index.js');
const backend = process.argv[2] ?? 'native';
const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-dump-on-cost-'));
const N = 200_000;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const tick = () => new Promise((r) => setImmediate(r));

const plain = new Tracer({ backend });
const armed = new Tracer({ backend, dumpOn: { slowerThanMs: 1e9, errors: true, path: path.join(dir, 'never.json') } });
let sink = 0;
const body = () => {
  sink++;
};
const cases = {
  bare: () => {
    for (let i = 0; i < N; i++) body();
  },
  plain: () => {
    for (let i = 0; i < N; i++) plain.trace('request', body);
  },
  dumpOn: () => {
    for (let i = 0; i < N; i++) armed.trace('request', body);
  },
};
const ns = { bare: [], plain: [], dumpOn: [] };
const order = Object.keys(cases);
for (let round = 0; round < 8; round++) {
  for (let k = 0; k < order.length; k++) {
    const name = order[(k + round) % order.length];
    const t0 = process.hrtime.bigint();
    cases[name]();
    const t = Number(process.hrtime.bigint() - t0) / N;
    if (round > 0) ns[name].push(t); // round 0 warms up
  }
  plain.flush();
  armed.flush();
  await tick();
}
const m = Object.fromEntries(order.map((k) => [k, median(ns[k])]));
console.log(`${backend}: ns per root trace() (median of 7): bare loop ${m.bare.toFixed(1)}, plain ${m.plain.toFixed(1)}, dumpOn ${m.dumpOn.toFixed(1)} (+${(m.dumpOn - m.plain).toFixed(1)})`);
plain.close();
armed.close();

for (const spans of [10_000, 100_000, 1_000_000]) {
  const t = new Tracer({ backend, dumpOn: { errors: true, path: path.join(dir, `d${spans}.pftrace`), windowMs: 3_600_000, maxPerMinute: 1000 } });
  for (let i = 0; i < spans; i++) t.trace('work', body);
  t.flush();
  const waits = [];
  for (let r = 0; r < 5; r++) {
    try {
      t.trace('job', () => {
        throw new Error('x');
      });
    } catch {}
    const t0 = performance.now();
    await tick(); // runs after the dump's setImmediate
    waits.push(performance.now() - t0);
  }
  console.log(`${backend}: one dump of ${spans} spans (Perfetto): the event loop waits ${median(waits).toFixed(1)} ms (median of 5)`);
  t.close();
}
rmSync(dir, { recursive: true, force: true });
