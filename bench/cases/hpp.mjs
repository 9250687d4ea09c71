// HOTSPAN_SCOPE (native/include/hotspan.hpp) per span against the C ABI it
// calls and the bare loop, in one process on one native thread, in rotating
// order (bench/floor/hpp.cc). A figure, not a test:
//   node bench/cases/hpp.mjs '{"spans":1e6,"rounds":9}'
// Prints one JSON line: per variant the median, min and max ns per span over
// rounds, the medians' differences to bare and their ratios to it (overBare,
// ratioBare). With "threads":true, also the 2-thread case (hpp.cc scaling):
// bare and hpp on 1 and 2 threads, thread CPU ns per span, and each one's
// scaling (1-thread ns / 2-thread ns: 1 when a second thread costs the first
// nothing), side by side in one process.
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
  const { inlinePath, ...per } = hpp.compare(t.nativeApi(), Math.floor(opts.spans), Math.floor(opts.rounds));
  const scale = opts.threads ? hpp.scaling(t.nativeApi(), Math.floor(opts.spans), Math.floor(opts.rounds)) : {};
  t.close();
  const out = { case: 'hpp-scope', spans: opts.spans, rounds: opts.rounds, inlinePath };
  for (const [k, xs] of Object.entries({ ...per, ...scale })) {
    out[k] = { median: round2(median(xs)), min: round2(Math.min(...xs)), max: round2(Math.max(...xs)) };
  }
  const others = Object.keys(per).filter((k) => k !== 'bare');
  out.overBare = Object.fromEntries(others.map((k) => [k, round2(out[k].median - out.bare.median)]));
  out.ratioBare = Object.fromEntries(others.map((k) => [k, round2(out[k].median / out.bare.median)]));
  if (opts.threads) {
    const bareScale = out['bare-1t'].median / out['bare-2t'].median;
    const hppScale = out['hpp-1t'].median / out['hpp-2t'].median;
    out.scaling = { bare: round2(bareScale), hpp: round2(hppScale), hppOverBare: round2(hppScale / bareScale) };
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
});
