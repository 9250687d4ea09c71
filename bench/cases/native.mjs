// Native-thread cases in a fresh process:
//   node bench/cases/native.mjs <case> <options JSON>
// bare-1t / bare-2t: the bare C++ loop (two clock reads and a store per span)
// on 1 or 2 std::threads; cabi-1t / cabi-2t: the same threads recording
// through hotspan's C ABI (tracer.nativeApi()), then one tracer.flush() on the
// JS thread, timed: the drain of everything they queued; -overwrite: the
// same into a 4 MiB budget full after the warm-up. bare-inline /
// bare-inline-tsc: the bare loop on the calling thread (clock_gettime / rdtsc);
// bare-fresh / bare-fresh-thp: the same storing every span into new memory
// (4 KiB pages / MADV_HUGEPAGE), the first-touch cost a recording tracer pays.
// Prints one JSON line.
import { createRequire } from 'node:module';
import { cabiPath, floorPath } from '../lib/build.mjs';
import { runCase } from '../lib/case-main.mjs';
import { makeTracer } from '../lib/hotspan.mjs';

const require = createRequire(import.meta.url);
const [caseName, optsJson = '{}'] = process.argv.slice(2);
const opts = { spans: 5e6, ...JSON.parse(optsJson) };
const n = Math.max(1000, Math.floor(opts.spans));

function bare(threads) {
  const f = require(floorPath);
  // opts.tsc: read the same clock as hotspan's records (the bench passes it).
  const tsc = opts.tsc ? 1 : 0;
  f.bareThreads(Math.floor(n / 10), threads, tsc); // warm-up: page in, spin up cores
  const [wallNs, perThreadNs] = f.bareThreads(n, threads, tsc);
  return { threads, spansPerThread: n, nsPerSpan: perThreadNs, wallNs, spansPerSec: (n * threads * 1e9) / wallNs };
}

// fresh: 0 a reused ring, 1 memory never touched before, 2 the same with MADV_HUGEPAGE.
function bareInline(tsc, fresh = 0) {
  const f = require(floorPath);
  f.bareLoop(Math.floor(n / 10), tsc ? 1 : 0, fresh);
  return { threads: 1, spansPerThread: n, nsPerSpan: f.bareLoop(n, tsc ? 1 : 0, fresh) };
}

// budget: a limit never reached (every chunk fresh), or a 4 MiB overwrite
// budget full after the warm-up (every chunk recycled: the steady state).
function cabi(threads, overwrite = false) {
  const c = require(cabiPath);
  const t = makeTracer('native', overwrite ? { memoryLimit: 4 * 2 ** 20, onFull: 'overwrite' } : { memoryLimit: 2 ** 36 });
  const api = t.nativeApi();
  const id = c.intern(api, 'native.work');
  // Warm-up on other threads than the measured ones (new timelines), then
  // drain it so the measured run starts with an empty queue.
  c.run(api, id, Math.floor(n / 10), threads, true);
  t.flush();
  const [wallNs, perThreadNs, failed, faults, waits, preempted] = c.run(api, id, n, threads, true);
  const f0 = process.hrtime.bigint();
  t.flush();
  const drainNs = Number(process.hrtime.bigint() - f0);
  const st = t.stats().find((r) => r.name === 'native.work');
  const counts = t.counts();
  // Overwrite: what is gone is counted, so "committed" is what was produced.
  const committed = overwrite ? counts.produced : st ? st.count : 0;
  const expected = (n + Math.floor(n / 10) + 2) * threads;
  t.close();
  return {
    threads,
    spansPerThread: n,
    nsPerSpan: perThreadNs,
    wallNs,
    spansPerSec: (n * threads * 1e9) / wallNs,
    failed,
    // Counts over the recording threads' timed parts, per 1M spans: page
    // faults taken by the recording threads themselves (fresh chunks the
    // reserve did not fault in first), and how often they blocked or were
    // preempted.
    per1MSpans: {
      faults: Math.round((faults * 1e6) / (n * threads)),
      waits: Math.round((waits * 1e6) / (n * threads)),
      preempted: Math.round((preempted * 1e6) / (n * threads)),
    },
    drainNsPerSpan: drainNs / (n * threads),
    committed,
    expected,
    lost: expected - committed,
    overwritten: counts.overwritten,
    dropped: counts.dropped,
  };
}

const cases = {
  'bare-inline': () => bareInline(false),
  'bare-inline-tsc': () => bareInline(true),
  'bare-fresh': () => bareInline(false, 1),
  'bare-fresh-thp': () => bareInline(false, 2),
  'bare-1t': () => bare(1),
  'bare-2t': () => bare(2),
  'cabi-1t': () => cabi(1),
  'cabi-2t': () => cabi(2),
  'cabi-1t-overwrite': () => cabi(1, true),
  'cabi-2t-overwrite': () => cabi(2, true),
};

runCase(() => {
  const make = cases[caseName];
  if (!make) throw new Error(`unknown case ${caseName}; known: ${Object.keys(cases).join(', ')}`);
  const r = make();
  process.stdout.write(`${JSON.stringify({ case: caseName, ...r })}\n`);
});
