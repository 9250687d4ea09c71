// HOTSPAN_SCOPE (native/include/hotspan.hpp) per span against the C ABI it
// calls and the bare loop, in one process on one native thread, in rotating
// order (bench/floor/hpp.cc). A figure, not a test:
//   node bench/cases/hpp.mjs '{"spans":1e6,"rounds":9}'
// Prints one JSON line: per variant the median, min and max ns per span over
// rounds, and the medians' differences to bare.
import { createRequire } from 'node:module';
import { buildFloor, hppPath } from '../lib/build.mjs';
import { runCase } from '../lib/case-main.mjs';
import { makeTracer } from '../lib/hotspan.mjs';

const require = createRequire(import.meta.url);
const opts = { spans: 1e6, rounds: 9, ...JSON.parse(process.argv[2] ?? '{}') };

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
  t.close();
  const out = { case: 'hpp-scope', spans: opts.spans, rounds: opts.rounds };
  for (const [k, xs] of Object.entries(per)) {
    out[k] = { median: round2(median(xs)), min: round2(Math.min(...xs)), max: round2(Math.max(...xs)) };
  }
  out.overBare = Object.fromEntries(Object.keys(per).filter((k) => k !== 'bare').map((k) => [k, round2(out[k].median - out.bare.median)]));
  process.stdout.write(`${JSON.stringify(out)}\n`);
});
