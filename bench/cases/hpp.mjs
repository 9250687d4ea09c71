// HOTSPAN_SCOPE (native/include/hotspan.hpp) per span against the C ABI it
// calls and the bare loop, in one process on one native thread, in rotating
// order (bench/floor/hpp.cc). A figure, not a test:
//   node bench/cases/hpp.mjs '{"spans":1e6,"rounds":9}'
// Prints one JSON line: per variant the median, min and max ns per span over
// rounds, and the medians' differences to bare. With "threads":true, also the
// 2-thread case (hpp.cc scaling): bare and hpp on 1 and 2 threads, thread CPU
// ns per span, and each one's scaling (1-thread ns / 2-thread ns: 1 when a
// second thread costs the first nothing), side by side in one process:
//   node bench/cases/hpp.mjs '{"spans":1e6,"rounds":9,"threads":true}'
import { createRequire } from 'node:module';
import { buildFloor, hppPath } from '../lib/build.mjs';
import { runCase } from '../lib/case-main.mjs';
import { makeTracer } from '../lib/hotspan.mjs';

const require = createRequire(import.meta.url);
const opts = { spans: 1e6, rounds: 9, threads: false, ...JSON.parse(process.argv[2] ?? '{}') };

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round2 = (x) => Math.round(x * 100) / 100;

runCase(() => {
  if (!buildFloor()) throw new Error('could not build bench/floor');
  const hpp = require(hppPath);
  // An overwrite budget, full after the warm-up: the steady state, no growth.
  const t = makeTracer('native', { memoryLimit: 4 * 2 ** 20, onFull: 'overwrite' });
  const per = hpp.compare(t.nativeApi(), Math.floor(opts.spans), Math.floor(opts.rounds));
  const { counts, ...scale } = opts.threads ? hpp.scaling(t.nativeApi(), Math.floor(opts.spans), Math.floor(opts.rounds)) : {};
  t.close();
  const out = { case: 'hpp-scope', spans: opts.spans, rounds: opts.rounds };
  for (const [k, xs] of Object.entries({ ...per, ...scale })) {
    out[k] = { median: round2(median(xs)), min: round2(Math.min(...xs)), max: round2(Math.max(...xs)) };
  }
  out.overBare = Object.fromEntries(Object.keys(per).filter((k) => k !== 'bare').map((k) => [k, round2(out[k].median - out.bare.median)]));
  if (opts.threads) {
    const bareScale = out['bare-1t'].median / out['bare-2t'].median;
    const hppScale = out['hpp-1t'].median / out['hpp-2t'].median;
    out.scaling = { bare: round2(bareScale), hpp: round2(hppScale), hppOverBare: round2(hppScale / bareScale) };
    // Page faults, blocking and preemption of the timed threads, per 1M spans.
    const per1M = (k, threads) => {
      const spans = opts.spans * opts.rounds * threads;
      const [faults, waits, preempted] = counts[k];
      return { faults: round2((faults * 1e6) / spans), waits: round2((waits * 1e6) / spans), preempted: round2((preempted * 1e6) / spans) };
    };
    out.per1MSpans = Object.fromEntries(Object.keys(counts).map((k) => [k, per1M(k, k.endsWith('2t') ? 2 : 1)]));
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
});
