// `npm run bench`: every case, each run in a fresh process, cases alternating
// within each round, warm-up inside each process, >= 5 measured rounds; prints
// the table and the pairwise ratios and writes bench/results/<date>-<commit>.json.
//
//   node bench/run.mjs [--quick] [--only=micro,pairs,request,native,hpp,holder,writers,stream,rss,bigread,otlp,http,otelhttp] [--runs=N] [--out=FILE]
//
// Groups: micro (JS spans), pairs (in-process ratios), request (realistic
// request), native (native threads), hpp (HOTSPAN_SCOPE of hotspan.hpp
// against the C ABI and the bare loop, on 1 and 2 threads, in one process:
// cases/hpp.mjs), holder (the core in C++), writers,
// stream (tracer.stream()), rss (memory per span and the 64 MiB overwrite
// budget over 100M spans), bigread (reads of 100M spans), otlp (native OTLP
// export to a loopback receiver), http, otelhttp (instrumentation-http).
//
// --quick: a short smoke run (< 1 minute) proving the harness works; its
// results go to bench/results/quick-latest.json, never to a dated file.
import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildFloor, benchDir, rootDir } from './lib/build.mjs';
import { buildCoreBench, coreBenchPath } from './lib/core-bench.mjs';
import { addonPath, hotspanMissing } from './lib/hotspan.mjs';
import { measureMode } from './lib/http.mjs';
import { fmt, paired, summarize } from './lib/stats.mjs';
import { budgetSummary, evaluateTargets, floorRatioText, otelHttpFloor } from './lib/targets.mjs';
import { renderMarkdown, renderSvg } from './render.mjs';

const argv = process.argv.slice(2);
const arg = (name) => {
  const a = argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : undefined;
};
const quick = argv.includes('--quick');
const only = arg('only') ? new Set(arg('only').split(',')) : null;
const want = (group) => !only || only.has(group);
const RUNS = Number(arg('runs') ?? (quick ? 2 : 5));
const started = Date.now();
const log = (...a) => console.error(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s]`, ...a);

const cfg = quick
  ? { micro: { minCpuMs: 40, warmupMs: 40 }, pairs: { warmupMs: 40, stretches: 4, stretchMs: 10 }, request: { rounds: 8, batch: 100, warmupRounds: 2 }, nativeSpans: 5e5, hpp: { spans: 2e5, rounds: 4 }, holderSpans: 2e5, writerSpans: 2e5, writerReps: 1, stream: { spans: 5e5, stretches: 4, stretchSpans: 2e5 }, rssSpans: 1e6, budgetSpans: 4e6, bigreadSpans: 1e6, otlp: { spans: 2e5, reps: 1, stretches: 6 }, http: { rounds: 1, warmupSec: 0.5, seconds: 1, connections: 10, fixedRate: 3000, fixedSeconds: 1 }, otelHttp: { rounds: 1, warmupSec: 0.5, seconds: 1, connections: 10, fixedRate: 1000, fixedSeconds: 1, slow: { receiverDelayMs: 1000, rounds: 1, warmupSec: 0.5, seconds: 1, connections: 10 } } }
  : { micro: { minCpuMs: 400, warmupMs: 300 }, pairs: { warmupMs: 300, stretches: 12, stretchMs: 30 }, request: { rounds: 40, batch: 300, warmupRounds: 8 }, nativeSpans: 5e6, hpp: { spans: 1e6, rounds: 9 }, holderSpans: 2e6, writerSpans: 1e6, writerReps: 3, stream: { spans: 4e6, stretches: 12, stretchSpans: 1e6 }, rssSpans: 1e7, budgetSpans: 1e8, bigreadSpans: 1e8, otlp: { spans: 2e6, reps: 3, stretches: 40 }, http: { rounds: 5, warmupSec: 1, seconds: 3, connections: 10, fixedRate: 3000, fixedSeconds: 3 }, otelHttp: { rounds: 5, warmupSec: 10, seconds: 3, connections: 10, fixedRate: 1000, fixedSeconds: 3, slow: { receiverDelayMs: 1000, rounds: 3, warmupSec: 1, seconds: 3, connections: 10 } } };

// ---- the cases ----
// needs: 'hotspan' = the compiled facade + addon; 'floor' = bench/floor.
const MICRO = [
  { id: 'empty', label: 'empty loop', needs: [] },
  { id: 'floor', label: 'floor: 2 Node-API calls + clock_gettime + store', needs: ['floor'] },
  { id: 'floor-tsc', label: 'floor: 2 Node-API calls + rdtsc + store', needs: ['floor'] },
  { id: 'hotspan-id', label: "hotspan begin(id)/end()", needs: ['hotspan'] },
  { id: 'hotspan-id-noreserve', label: 'hotspan begin(id)/end(), chunk reserve off (HOTSPAN_CHUNK_RESERVE=0; info)', needs: ['hotspan'] },
  { id: 'hotspan-id-overwrite', label: 'hotspan begin(id)/end(), 4 MiB budget full (overwrite)', needs: ['hotspan'] },
  { id: 'hotspan-string', label: "hotspan begin('string')/end()", needs: ['hotspan'] },
  { id: 'hotspan-trace', label: 'hotspan trace(id, fn)', needs: ['hotspan'] },
  { id: 'hotspan-trace-string', label: "hotspan trace('string', fn)", needs: ['hotspan'] },
  { id: 'hotspan-start', label: 'hotspan start(name).end() (GC hook armed)', needs: ['hotspan'] },
  { id: 'hotspan-attrs', label: "hotspan begin(id, { route, bytes })/end()", needs: ['hotspan'] },
  { id: 'hotspan-async', label: 'hotspan traceAsync(id, () => 0) on a concurrent track (sync work: ends at once)', needs: ['hotspan'] },
  { id: 'hotspan-async-fn', label: 'hotspan traceAsync(id, async fn) on a concurrent track (the fn included)', needs: ['hotspan'] },
  { id: 'js-id', label: 'hotspan js backend begin(id)/end()', needs: ['hotspan'] },
  { id: 'noop-id', label: 'hotspan noop backend begin(id)/end()', needs: ['hotspan'] },
  { id: 'naive', label: 'naive pure-JS span (object per span)', needs: [] },
  { id: 'perf-mark', label: 'performance.mark + measure', needs: [] },
  { id: 'dc-tracing', label: 'diagnostics_channel TracingChannel.traceSync, 1 subscriber', needs: [] },
  { id: 'otel', label: 'OpenTelemetry SDK, BatchSpanProcessor (event loop turns)', needs: [] },
  { id: 'otel-sync', label: 'OpenTelemetry SDK, sync loop (queue full: drops)', needs: [] },
];
const NATIVE = [
  { id: 'bare-inline', label: 'bare C++ loop, clock_gettime (calling thread)', needs: ['floor'] },
  { id: 'bare-inline-tsc', label: 'bare C++ loop, rdtsc (info)', needs: ['floor'] },
  { id: 'bare-fresh', label: 'bare C++ loop into never-touched memory (info)', needs: ['floor'] },
  { id: 'bare-fresh-thp', label: 'same, MADV_HUGEPAGE (info)', needs: ['floor'] },
  { id: 'bare-1t', label: "bare C++ loop, 1 std::thread (hotspan's clock)", needs: ['floor'] },
  { id: 'bare-2t', label: "bare C++ loop, 2 std::threads (hotspan's clock)", needs: ['floor'] },
  { id: 'cabi-1t', label: 'hotspan C ABI, 1 native thread', needs: ['floor', 'hotspan'] },
  { id: 'cabi-2t', label: 'hotspan C ABI, 2 native threads', needs: ['floor', 'hotspan'] },
  { id: 'cabi-1t-overwrite', label: 'hotspan C ABI, 1 native thread, 4 MiB budget full (overwrite)', needs: ['floor', 'hotspan'] },
];

// In-process pairs: both cases in one fresh process, alternating short
// stretches, so the ratio is immune to load that shifts between processes.
// These feed the targets; the cross-process ratios are kept beside them.
// "floor" in the pairs and targets is the floor that reads the same clock as
// hotspan's records (SAME_FLOOR, set from the addon's clockSource).
let SAME_FLOOR = 'floor';
const PAIRS = [
  { id: 'hotspan-id/floor', a: 'hotspan-id', b: () => SAME_FLOOR, needs: ['hotspan', 'floor'] },
  { id: 'hotspan-id-overwrite/floor', a: 'hotspan-id-overwrite', b: () => SAME_FLOOR, needs: ['hotspan', 'floor'] },
  { id: 'hotspan-trace/floor', a: 'hotspan-trace', b: () => SAME_FLOOR, needs: ['hotspan', 'floor'] },
  { id: 'naive/hotspan-id', a: 'naive', b: 'hotspan-id', needs: ['hotspan'] },
  { id: 'otel/hotspan-id', a: 'otel', b: 'hotspan-id', needs: ['hotspan'] },
  { id: 'js-id/naive', a: 'js-id', b: 'naive', needs: ['hotspan'] },
  { id: 'noop-id-empty', a: 'noop-id', b: 'empty', needs: ['hotspan'], diff: true },
  { id: 'hotspan-attrs/hotspan-id', a: 'hotspan-attrs', b: 'hotspan-id', needs: ['hotspan'] },
  { id: 'hotspan-async/hotspan-id', a: 'hotspan-async', b: 'hotspan-id', needs: ['hotspan'] },
  // net: (a - w) / b in one process (micro.mjs net): a traced async
  // function net of the function's own promise, and the untraced promise
  // floor (Promise.resolve + then with two reactions) net of the same.
  { id: 'hotspan-async-fn-net/hotspan-id', a: 'hotspan-async-fn', w: 'work-async', b: 'hotspan-id', needs: ['hotspan'] },
  { id: 'promise-floor-fn-net/hotspan-id', a: 'promise-floor-fn', w: 'work-async', b: 'hotspan-id', needs: ['hotspan'] },
  { id: 'hotspan-start/hotspan-id', a: 'hotspan-start', b: 'hotspan-id', needs: ['hotspan'] },
  // Recording under a sampler: the decision is made at export, not per span.
  { id: 'hotspan-id-sampled/hotspan-id', a: 'hotspan-id-sampled', b: 'hotspan-id', needs: ['hotspan'] },
];
// The realistic request (cases/request.mjs): its modes alternate inside one process.
const REQUEST_MODES = ['none', 'hotspan', 'hotspan-noattrs', 'otel', 'naive'];

function gitInfo() {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: rootDir, encoding: 'utf8' }).trim();
    // Earlier results and renderings under bench/results are outputs, not code.
    const dirty = execFileSync('git', ['status', '--porcelain', '--', '.', ':(exclude)bench/results'], { cwd: rootDir, encoding: 'utf8' }).trim().length > 0;
    return { commit, dirty };
  } catch {
    return { commit: 'nogit', dirty: true };
  }
}

function machine() {
  const cpus = os.cpus();
  let clocksource = null;
  try {
    clocksource = readFileSync('/sys/devices/system/clocksource/clocksource0/current_clocksource', 'utf8').trim();
  } catch {
    // not Linux
  }
  return {
    cpus: cpus.length,
    model: cpus[0] ? cpus[0].model.trim() : 'unknown',
    arch: process.arch,
    platform: `${os.type()} ${os.release()}`,
    totalMemGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    clocksource,
  };
}

/** Runs one child; returns the parsed last JSON line or { error }. */
function child(script, args, { expose = false, timeoutMs = 180000 } = {}) {
  const nodeArgs = [...(expose ? ['--expose-gc'] : []), path.join(benchDir, 'cases', script), ...args];
  const r = spawnSync(process.execPath, nodeArgs, { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 16 << 20 });
  const lines = (r.stdout || '').trim().split('\n').filter(Boolean);
  if (r.status !== 0 || lines.length === 0) {
    return { error: `${script} ${args[0] ?? ''}: exit ${r.status}${r.signal ? ` (${r.signal})` : ''}: ${(r.stderr || '').trim().split('\n').slice(-6).join(' | ').slice(0, 800)}` };
  }
  try {
    return JSON.parse(lines[lines.length - 1]);
  } catch (e) {
    return { error: `${script}: bad output: ${lines[lines.length - 1].slice(0, 200)}` };
  }
}

/** Medians over the bigread runs of every time they report (ms). */
function summarizeBigread(runs) {
  if (runs.length === 0) return { error: 'no run finished' };
  const ms = (get) => summarize(runs.map(get));
  const out = {
    spans: runs[0].spans,
    committed: runs[0].committed,
    runs: runs.length,
    recordMs: ms((x) => x.recordMs),
    statsMs: ms((x) => x.statsMs),
    queryOpenMs: ms((x) => x.queryOpenMs),
    queryGroupsMs: ms((x) => x.queryGroupsMs),
    query: {},
    boundedSnapshotMs: ms((x) => x.boundedSnapshotMs),
    boundedSnapshotRecords: runs[0].boundedSnapshotRecords,
    firstBatchMs: ms((x) => x.firstBatchMs),
    columnsMs: ms((x) => x.columnsMs),
    columnsRecords: runs[0].columnsRecords,
    plainSnapshotMs: ms((x) => x.plainSnapshotMs),
    plainSnapshot: runs[0].plainSnapshot,
    heapBytesPerRecord: ms((x) => x.heapBytesPerRecord),
  };
  for (const k of Object.keys(runs[0].query)) out.query[k] = ms((x) => x.query[k].ms);
  return out;
}

// The hpp case's rows: each process's in-process median (its rounds rotate
// the variants), summarized over the processes; its scaling figures and
// per-1M-span counts (page faults, blocking waits, preemptions of the timed
// threads) likewise.
const HPP_ROWS = [
  ['bare', 'bare C++ loop, rdtsc + 28-byte store (calling thread)'],
  ['cabi', 'C ABI begin/end through the table (calling thread)'],
  ['hpp', 'HOTSPAN_SCOPE (calling thread)'],
  ['bare-1t', 'bare C++ loop, 1 std::thread'],
  ['bare-2t', 'bare C++ loop, 2 std::threads'],
  ['hpp-1t', 'HOTSPAN_SCOPE, 1 std::thread'],
  ['hpp-2t', 'HOTSPAN_SCOPE, 2 std::threads'],
];
function summarizeHpp(runs) {
  if (runs.length === 0) return { error: 'no run finished' };
  const rows = {};
  for (const [id, label] of HPP_ROWS) rows[id] = { label, ...summarize(runs.map((x) => x[id]?.median ?? NaN)) };
  const per1MSpans = {};
  for (const k of Object.keys(runs[0].per1MSpans ?? {})) {
    per1MSpans[k] = {};
    for (const f of ['faults', 'waits', 'preempted']) per1MSpans[k][f] = summarize(runs.map((x) => x.per1MSpans[k]?.[f] ?? NaN));
  }
  return {
    spans: runs[0].spans,
    rounds: runs[0].rounds,
    processes: runs.length,
    rows,
    hppOverBare: summarize(runs.map((x) => x.hpp.median / x.bare.median)),
    scalingBare: summarize(runs.map((x) => x.scaling.bare)),
    scalingHpp: summarize(runs.map((x) => x.scaling.hpp)),
    scalingHppOverBare: summarize(runs.map((x) => x.scaling.hppOverBare)),
    per1MSpans,
  };
}

function available(needs, have) {
  const missing = needs.filter((n) => !have[n]);
  return missing.length ? missing.map((n) => have.why[n]).join('; ') : null;
}

/** Rounds of fresh processes; the case order rotates each round. */
function rounds(cases, runOne, have, errors) {
  const out = {};
  const live = [];
  for (const c of cases) {
    const skip = available(c.needs, have);
    out[c.id] = { label: c.label, runs: [], meanRuns: [], results: [], skipped: skip };
    if (!skip) live.push(c);
  }
  for (let r = 0; r < RUNS; r++) {
    for (let k = 0; k < live.length; k++) {
      const c = live[(k + r) % live.length];
      const res = runOne(c);
      const slot = out[c.id];
      if (res.error) {
        errors.push(res.error);
        log(`  ! ${res.error}`);
        slot.runs[r] = NaN;
        slot.meanRuns[r] = NaN;
      } else {
        slot.runs[r] = res.nsPerSpan;
        slot.meanRuns[r] = res.mean ?? res.nsPerSpan;
        slot.results[r] = res;
      }
    }
    log(`  round ${r + 1}/${RUNS} done`);
  }
  for (const c of cases) {
    Object.assign(out[c.id], summarize(out[c.id].runs));
    out[c.id].meanMedian = summarize(out[c.id].meanRuns).median;
  }
  return out;
}

function ratio(name, a, b, op = (x, y) => x / y, unit = 'x') {
  if (!a || !b || a.skipped || b.skipped) return { name, unit, ...summarize([]) };
  return { name, unit, ...summarize(paired(a.runs, b.runs, op)) };
}

async function main() {
  const t0 = Date.now();
  const errors = [];
  const have = { why: {} };
  have.floor = buildFloor({ log });
  if (!have.floor) have.why.floor = 'bench/floor did not build';
  const missing = hotspanMissing();
  have.hotspan = !missing;
  if (missing) have.why.hotspan = missing;
  if (missing) log(`hotspan cases skipped: ${missing}`);
  // The clock hotspan's records read: the floor and the bare loops it is
  // compared with read the same one.
  let clockSource = 'monotonic';
  if (have.hotspan) {
    try {
      clockSource = createRequire(import.meta.url)(addonPath).clockSource === 'tsc' ? 'tsc' : 'monotonic';
    } catch {
      // hotspanMissing() said it loads; keep the monotonic default if not.
    }
  }
  SAME_FLOOR = clockSource === 'tsc' ? 'floor-tsc' : 'floor';
  log(`hotspan's clock: ${clockSource}; the floor it is compared with: ${SAME_FLOOR}`);

  const results = {
    schema: 1,
    date: new Date().toISOString(),
    quick,
    only: only ? [...only] : null,
    ...gitInfo(),
    node: process.version,
    napi: process.versions.napi,
    v8: process.versions.v8,
    machine: machine(),
    clockSource,
    sameFloor: SAME_FLOOR,
    loadavgStart: os.loadavg(),
    config: { runs: RUNS, ...cfg },
  };

  if (want('micro')) {
    log(`micro cases: ${RUNS} rounds of ${MICRO.length} fresh processes`);
    results.micro = rounds(MICRO, (c) => child('micro.mjs', [c.id, JSON.stringify(cfg.micro)], { expose: true }), have, errors);
  }
  if (want('pairs')) {
    log(`in-process pairs: ${RUNS} rounds of ${PAIRS.length} fresh processes`);
    const pairs = {};
    const live = [];
    for (const p of PAIRS) {
      const skip = available(p.needs, have);
      pairs[p.id] = { a: p.a, ...(p.w ? { w: p.w, wNs: [] } : {}), b: typeof p.b === 'function' ? p.b() : p.b, diff: !!p.diff, runs: [], aNs: [], bNs: [], skipped: skip };
      if (!skip) live.push(p);
    }
    for (let r = 0; r < RUNS; r++) {
      for (let k = 0; k < live.length; k++) {
        const p = live[(k + r) % live.length];
        const b = typeof p.b === 'function' ? p.b() : p.b;
        const res = p.w
          ? child('micro.mjs', ['net', JSON.stringify({ ...cfg.pairs, net: [p.a, p.w, b] })], { expose: true })
          : child('micro.mjs', ['pair', JSON.stringify({ ...cfg.pairs, pair: [p.a, b] })], { expose: true });
        const slot = pairs[p.id];
        if (res.error) {
          errors.push(res.error);
          log(`  ! ${res.error}`);
          slot.runs[r] = NaN;
        } else {
          slot.runs[r] = p.diff ? res.diffNs : res.ratio;
          slot.aNs[r] = res.aNs;
          slot.bNs[r] = res.bNs;
          if (p.w) slot.wNs[r] = res.wNs;
        }
      }
      log(`  round ${r + 1}/${RUNS} done`);
    }
    for (const p of Object.values(pairs)) Object.assign(p, summarize(p.runs));
    results.pairs = pairs;
  }
  if (want('request')) {
    log(`realistic request: ${RUNS} fresh processes, modes alternating inside each`);
    const skip = available(['hotspan'], have);
    if (skip) results.request = { skipped: skip };
    else {
      const runs = [];
      for (let r = 0; r < RUNS; r++) {
        const res = child('request.mjs', [JSON.stringify({ ...cfg.request, modes: REQUEST_MODES })], { expose: true });
        if (res.error) {
          errors.push(res.error);
          log(`  ! ${res.error}`);
        } else runs.push(res);
      }
      const modes = {};
      for (const m of REQUEST_MODES) {
        const of = (f) => summarize(runs.map((x) => x.modes[m]?.[f] ?? NaN));
        modes[m] = { cpuUsPerRequest: of('cpuUsPerRequest'), addedUsPerRequest: of('addedUsPerRequest'), addedUsPerSpan: of('addedUsPerSpan'), info: runs.map((x) => x.modes[m]?.info) };
      }
      results.request = { spansPerRequest: runs[0]?.spansPerRequest, config: cfg.request, modes, hotspanOverOtel: summarize(runs.map((x) => x.hotspanOverOtel)), attrsOverNoattrs: summarize(runs.map((x) => x.attrsOverNoattrs)) };
    }
  }
  if (want('native')) {
    log(`native-thread cases: ${RUNS} rounds`);
    results.native = rounds(NATIVE, (c) => child('native.mjs', [c.id, JSON.stringify({ spans: cfg.nativeSpans, tsc: clockSource === 'tsc' })]), have, errors);
  }
  if (want('hpp')) {
    log(`hotspan.hpp: HOTSPAN_SCOPE, the C ABI and the bare loop, 1 and 2 threads; ${RUNS} fresh processes`);
    const skip = available(['floor', 'hotspan'], have);
    if (skip) results.hpp = { skipped: skip };
    else {
      const runs = [];
      for (let r = 0; r < RUNS; r++) {
        const res = child('hpp.mjs', [JSON.stringify({ ...cfg.hpp, threads: true })]);
        if (res.error) {
          errors.push(res.error);
          log(`  ! ${res.error}`);
        } else runs.push(res);
      }
      results.hpp = summarizeHpp(runs);
    }
  }
  if (want('holder')) {
    log('holder check (core, C++)');
    const ok = buildCoreBench({ log });
    if (!ok) {
      results.holder = { skipped: 'core bench did not build (native/core sources missing or failing)' };
    } else {
      const runs = [];
      for (let r = 0; r < RUNS; r++) {
        const p = spawnSync(coreBenchPath, [String(cfg.holderSpans)], { encoding: 'utf8', timeout: 180000 });
        try {
          runs.push(JSON.parse(p.stdout.trim().split('\n').pop()));
        } catch {
          errors.push(`core_bench: exit ${p.status}: ${(p.stderr || '').slice(-300)}`);
        }
      }
      const rows = {};
      for (const key of Object.keys(runs[0]?.rows ?? {})) {
        rows[key] = { label: runs[0].rows[key].label, ...summarize(runs.map((x) => x.rows[key].ns)) };
      }
      results.holder = { rows, missing: runs[0]?.missing ?? [], spans: cfg.holderSpans };
      if (runs[0]?.writer) {
        results.coreWriter = {
          spans: runs[0].writer.spans,
          chromeJsonSpansPerSec: summarize(runs.map((x) => x.writer.chromeJsonSpansPerSec)),
          chromeJsonBytesPerSpan: summarize(runs.map((x) => x.writer.chromeJsonBytesPerSpan)),
          snapshotSpansPerSec: summarize(runs.map((x) => x.writer.snapshotSpansPerSec)),
          perfettoSpansPerSec: summarize(runs.map((x) => x.writer.perfettoSpansPerSec)),
          // What the Perfetto row reads: "freeze" (in place), or a snapshot copy in older results.
          perfettoInput: runs[0].writer.perfettoInput ?? 'snapshot',
        };
      }
    }
  }
  if (want('writers')) {
    log('writers');
    if (!have.hotspan) results.writers = { skipped: have.why.hotspan };
    else {
      const runs = [];
      for (let r = 0; r < Math.min(RUNS, 3); r++) {
        const res = child('writers.mjs', [JSON.stringify({ spans: cfg.writerSpans, reps: cfg.writerReps })]);
        if (res.error) errors.push(res.error);
        else runs.push(res);
      }
      const names = new Set(runs.flatMap((x) => Object.keys(x.writers)));
      const w = {};
      for (const n of names) {
        const ok = runs.map((x) => x.writers[n]).filter((x) => x && !x.error);
        if (ok.length === 0) {
          w[n] = { error: runs.map((x) => x.writers[n]?.error).find(Boolean) };
          continue;
        }
        w[n] = {
          spansPerSec: summarize(ok.map((x) => x.spansPerSec)),
          bytesPerSpan: summarize(ok.map((x) => x.bytesPerSpan)),
        };
      }
      results.writers = { spans: runs[0]?.spans, writers: w };
    }
  }
  if (want('stream')) {
    log('stream: writer throughput, JS cost with streaming on vs off (side by side in one process)');
    if (!have.hotspan) results.stream = { skipped: have.why.hotspan };
    else {
      const runs = [];
      for (let r = 0; r < Math.min(RUNS, 3); r++) {
        const res = child('stream.mjs', [JSON.stringify(cfg.stream)], { timeoutMs: 300000 });
        if (res.error) errors.push(res.error);
        else runs.push(res);
      }
      results.stream = runs.length === 0 ? { error: 'no run finished' } : {
        spans: runs[0].throughput.spans,
        spansPerSec: summarize(runs.map((x) => x.throughput.spansPerSec)),
        bytesPerSpan: summarize(runs.map((x) => x.throughput.bytesPerSpan)),
        onNsPerSpan: summarize(runs.map((x) => x.jsCost.onNsPerSpan)),
        offNsPerSpan: summarize(runs.map((x) => x.jsCost.offNsPerSpan)),
        ratio: summarize(runs.map((x) => x.jsCost.ratio)),
        pairRatio: summarize(runs.map((x) => x.jsCost.pairRatio)),
        cpuRatio: summarize(runs.map((x) => x.jsCost.cpuRatio)),
        missed: runs.map((x) => x.jsCost.streamMissed),
      };
    }
  }
  if (want('rss')) {
    log(`RSS per committed span (${cfg.rssSpans} spans, fresh process)`);
    if (!have.hotspan) results.rss = { skipped: have.why.hotspan };
    else {
      const res = child('rss.mjs', [JSON.stringify({ spans: cfg.rssSpans })], { expose: true, timeoutMs: 300000 });
      if (res.error) errors.push(res.error);
      results.rss = res;
      const budgetRuns = Math.min(RUNS, 3);
      log(`RSS under a 64 MiB overwrite budget (${cfg.budgetSpans} spans, ${budgetRuns} fresh processes)`);
      const runs = [];
      for (let r = 0; r < budgetRuns; r++) {
        const b = child('rss.mjs', [JSON.stringify({ spans: cfg.budgetSpans, memoryLimit: 64 * 2 ** 20, onFull: 'overwrite' })], { expose: true, timeoutMs: 600000 });
        if (b.error) errors.push(b.error);
        else runs.push(b);
      }
      // Each run's own line; budgetSummary() (lib/targets.mjs) reads this and the one-run form of older results.
      results.rssBudget = runs.length === 0 ? { error: 'no run finished' } : { runs };
    }
  }
  if (want('bigread')) {
    log(`reads of a big trace (${cfg.bigreadSpans} spans, fresh process per run)`);
    if (!have.hotspan) results.bigread = { skipped: have.why.hotspan };
    else {
      const runs = [];
      for (let r = 0; r < Math.min(RUNS, 3); r++) {
        const res = child('bigread.mjs', [JSON.stringify({ spans: cfg.bigreadSpans })], { expose: true, timeoutMs: 1800000 });
        if (res.error) errors.push(res.error);
        else runs.push(res);
      }
      results.bigread = summarizeBigread(runs);
    }
  }
  if (want('otlp')) {
    const otlpRuns = Math.min(RUNS, 3);
    log(`OTLP export: throughput to a loopback receiver, JS cost with export on vs off (side by side in one process); ${otlpRuns} fresh processes`);
    if (!have.hotspan) results.otlp = { skipped: have.why.hotspan };
    else {
      const runs = [];
      for (let r = 0; r < otlpRuns; r++) {
        const res = child('otlp.mjs', [JSON.stringify(cfg.otlp)], { timeoutMs: 300000 });
        if (res.error) errors.push(res.error);
        else runs.push(res);
      }
      results.otlp = runs.length === 0 ? { error: 'no run finished' } : {
        spans: runs[0].spans,
        batch: runs[0].batch,
        gzip: runs[0].gzip,
        runs: runs.length,
        // Each process's figure is the median of its reps.
        spansPerSec: summarize(runs.map((x) => x.medianSpansPerSecond)),
        spansPerCpuSec: summarize(runs.map((x) => x.medianSpansPerCpuSecond)),
        onNsPerSpan: summarize(runs.map((x) => x.jsThread.onNs)),
        offNsPerSpan: summarize(runs.map((x) => x.jsThread.offNs)),
        ratio: summarize(runs.map((x) => x.jsThread.ratio)),
        // The exporting tracer of the JS-cost part: its exporter's counts after shutdown().
        exported: runs.map((x) => ({ produced: x.jsThread.produced, sent: x.jsThread.sent, dropped: x.jsThread.dropped })),
      };
    }
  }
  if (want('http')) {
    log(`HTTP workload: ${cfg.http.rounds} rounds x (none, hotspan, otel), ${cfg.http.seconds}s each`);
    const modes = ['none', ...(have.hotspan ? ['hotspan'] : []), 'otel'];
    const per = Object.fromEntries(modes.map((m) => [m, []]));
    for (let r = 0; r < cfg.http.rounds; r++) {
      for (let k = 0; k < modes.length; k++) {
        const m = modes[(k + r) % modes.length];
        try {
          per[m][r] = await measureMode(m, cfg.http);
        } catch (e) {
          errors.push(`http ${m}: ${e.message}`);
          per[m][r] = null;
        }
      }
      log(`  round ${r + 1}/${cfg.http.rounds} done`);
    }
    const field = (m, f) => per[m].map((x) => (x ? x[f] : NaN));
    const http = { modes: {}, skipped: have.hotspan ? null : { hotspan: have.why.hotspan } };
    for (const m of modes) {
      http.modes[m] = {
        rps: summarize(field(m, 'rps')),
        p99Ms: summarize(field(m, 'p99Ms')),
        p50Ms: summarize(field(m, 'p50Ms')),
        cpuUsPerReq: summarize(field(m, 'cpuUsPerReq')),
        cpuUsPerReqFixed: summarize(field(m, 'cpuUsPerReqFixed')),
        stats: per[m].map((x) => x && x.stats),
      };
      // Throughput loss against no tracing, paired within the round.
      if (m !== 'none') {
        http.modes[m].rpsLoss = summarize(paired(field(m, 'rps'), field('none', 'rps'), (x, y) => 1 - x / y));
        http.modes[m].p99Increase = summarize(paired(field(m, 'p99Ms'), field('none', 'p99Ms'), (x, y) => x / y - 1));
        // The same loss from server CPU per request (robust to outside load):
        // 1 - cpu(none) / cpu(mode), the throughput lost if the server were CPU-bound.
        http.modes[m].cpuLoss = summarize(paired(field(m, 'cpuUsPerReq'), field('none', 'cpuUsPerReq'), (x, y) => 1 - y / x));
        // Tracing's own CPU per request at the fixed rate (µs), paired.
        http.modes[m].extraCpuUsFixed = summarize(paired(field(m, 'cpuUsPerReqFixed'), field('none', 'cpuUsPerReqFixed'), (x, y) => x - y));
      }
    }
    results.http = http;
  }
  if (want('otelhttp')) {
    // cases/otel-http.mjs pairs its modes within each of its rounds itself.
    const modes = ['none', 'noop', 'sdk', ...(have.hotspan ? ['hotspan'] : [])];
    log(`OpenTelemetry HTTP instrumentation: ${cfg.otelHttp.rounds} rounds x (${modes.join(', ')}), ${cfg.otelHttp.seconds}s each`);
    // The slow-collector drop scenario compares hotspan with the SDK: not without hotspan.
    const res = child('otel-http.mjs', [JSON.stringify({ ...cfg.otelHttp, modes, slow: have.hotspan ? cfg.otelHttp.slow : null })], { timeoutMs: 1800000 });
    if (res.error) errors.push(res.error);
    else errors.push(...res.errors);
    results.otelHttp = res.error ? { error: res.error } : { ...res, skipped: have.hotspan ? null : { hotspan: have.why.hotspan } };
  }

  // ---- pairwise ratios (same round) ----
  const m = results.micro ?? {};
  const n = results.native ?? {};
  const spsRuns = (c) => (c ? c.results.map((x) => (x ? x.spansPerSec : NaN)) : []);
  const pr = results.pairs ?? {};
  const inProc = (name, id, unit = 'x') => ({ name, unit, inProcess: true, ...summarize(pr[id] && !pr[id].skipped ? pr[id].runs : []) });
  results.ratios = [
    inProc('in-process: hotspan begin(id)/end() / floor', 'hotspan-id/floor'),
    inProc('in-process: hotspan begin(id)/end(), overwrite budget full / floor', 'hotspan-id-overwrite/floor'),
    inProc('in-process: hotspan trace(id, fn) / floor', 'hotspan-trace/floor'),
    inProc('in-process: naive / hotspan begin(id)', 'naive/hotspan-id'),
    inProc('in-process: OTel SDK / hotspan begin(id)', 'otel/hotspan-id'),
    inProc('in-process: js backend / naive', 'js-id/naive'),
    inProc('in-process: noop - empty loop', 'noop-id-empty', 'ns'),
    inProc('in-process: begin(id, 2 attributes) / begin(id)', 'hotspan-attrs/hotspan-id'),
    inProc('in-process: traceAsync(id, () => 0), sync work / begin(id)', 'hotspan-async/hotspan-id'),
    inProc('in-process: traceAsync(id, async fn) net of the fn / begin(id)', 'hotspan-async-fn-net/hotspan-id'),
    inProc('in-process: untraced promise floor (Promise.resolve(fn()).then(f, r)) net of the fn / begin(id)', 'promise-floor-fn-net/hotspan-id'),
    inProc('in-process: start(name).end() / begin(id)', 'hotspan-start/hotspan-id'),
    ratio('hotspan begin(id)/end() / floor', m['hotspan-id'], m[SAME_FLOOR]),
    ratio('hotspan begin(id)/end(), overwrite budget full / floor', m['hotspan-id-overwrite'], m[SAME_FLOOR]),
    ratio("hotspan begin('string') / floor", m['hotspan-string'], m[SAME_FLOOR]),
    ratio('hotspan trace(id, fn) / floor', m['hotspan-trace'], m[SAME_FLOOR]),
    ratio("hotspan trace('string', fn) / floor", m['hotspan-trace-string'], m[SAME_FLOOR]),
    ratio('hotspan start().end() / floor', m['hotspan-start'], m[SAME_FLOOR]),
    ratio('naive / hotspan begin(id)', m.naive, m['hotspan-id']),
    ratio('OTel SDK / hotspan begin(id)', m.otel, m['hotspan-id']),
    // What the OTel target would read if hotspan cost exactly the floor.
    ratio('OTel SDK / floor', m.otel, m[SAME_FLOOR]),
    ratio('performance.mark+measure / hotspan begin(id)', m['perf-mark'], m['hotspan-id']),
    ratio('TracingChannel / hotspan begin(id)', m['dc-tracing'], m['hotspan-id']),
    ratio('js backend / naive', m['js-id'], m.naive),
    ratio('noop - empty loop', m['noop-id'], m.empty, (x, y) => x - y, 'ns'),
    ratio('floor (clock_gettime) / floor (rdtsc)', m.floor, m['floor-tsc']),
    ratio('native thread (C ABI) / bare loop, 1 thread', n['cabi-1t'], n['bare-1t']),
    ratio('native thread (C ABI) / bare loop, 2 threads', n['cabi-2t'], n['bare-2t']),
    ratio('native thread (C ABI), overwrite budget full / bare loop, 1 thread', n['cabi-1t-overwrite'], n['bare-1t']),
    ratio('bare loop: never-touched memory / ring', n['bare-fresh'], n['bare-inline']),
    ratio('bare loop: never-touched memory with MADV_HUGEPAGE / ring', n['bare-fresh-thp'], n['bare-inline']),
  ];
  if (n['cabi-1t'] && !n['cabi-1t'].skipped) {
    results.ratios.push({ name: 'C ABI spans/s, 2 threads / 1 thread', unit: 'x', ...summarize(paired(spsRuns(n['cabi-2t']), spsRuns(n['cabi-1t']), (x, y) => x / y)) });
  }
  if (n['bare-1t'] && !n['bare-1t'].skipped) {
    results.ratios.push({ name: 'bare loop spans/s, 2 threads / 1 thread', unit: 'x', ...summarize(paired(spsRuns(n['bare-2t']), spsRuns(n['bare-1t']), (x, y) => x / y)) });
  }
  if (n['cabi-1t'] && !n['cabi-1t'].skipped && n['bare-1t'] && !n['bare-1t'].skipped) {
    // hotspan's scaling relative to what the machine itself scales in the same round.
    const c = paired(spsRuns(n['cabi-2t']), spsRuns(n['cabi-1t']), (x, y) => x / y);
    const b = paired(spsRuns(n['bare-2t']), spsRuns(n['bare-1t']), (x, y) => x / y);
    results.ratios.push({ name: 'C ABI 2-thread scaling / bare loop 2-thread scaling', unit: 'x', ...summarize(paired(c, b, (x, y) => x / y)) });
  }
  if (results.hpp?.rows) {
    results.ratios.push({ name: 'HOTSPAN_SCOPE span / bare C++ loop (in one process)', unit: 'x', inProcess: true, ...results.hpp.hppOverBare });
    results.ratios.push({ name: 'HOTSPAN_SCOPE 2-thread scaling / bare loop 2-thread scaling (in one process)', unit: 'x', inProcess: true, ...results.hpp.scalingHppOverBare });
  }
  if (results.http && results.http.modes.hotspan && results.http.modes.otel) {
    const h = results.http.modes.hotspan.rpsLoss.runs;
    const o = results.http.modes.otel.rpsLoss.runs;
    results.ratios.push({ name: 'HTTP throughput loss, hotspan / OTel', unit: 'x', ...summarize(paired(h, o, (x, y) => x / y)) });
    const hc = results.http.modes.hotspan.cpuLoss.runs;
    const oc = results.http.modes.otel.cpuLoss.runs;
    results.ratios.push({ name: 'HTTP CPU-per-request loss, hotspan / OTel', unit: 'x', ...summarize(paired(hc, oc, (x, y) => x / y)) });
    const hf = results.http.modes.hotspan.extraCpuUsFixed.runs;
    const of = results.http.modes.otel.extraCpuUsFixed.runs;
    results.ratios.push({ name: 'HTTP added CPU per request at a fixed rate, hotspan / OTel', unit: 'x', ...summarize(paired(hf, of, (x, y) => x / y)) });
  }
  if (results.otelHttp?.modes?.hotspan) {
    results.ratios.push({ name: 'OTel HTTP instrumentation: added server CPU per request, hotspan / SDK', unit: 'x', ...results.otelHttp.hotspanOverSdk });
    results.ratios.push({ name: 'OTel HTTP instrumentation: added server CPU per request at a fixed rate, hotspan / SDK', unit: 'x', ...results.otelHttp.hotspanOverSdkFixed });
    if (results.otelHttp.hotspanOverSdkOverNoop) {
      results.ratios.push({ name: 'OTel HTTP instrumentation: server CPU per request over the no-op provider, hotspan / SDK', unit: 'x', ...results.otelHttp.hotspanOverSdkOverNoop });
      results.ratios.push({ name: 'OTel HTTP instrumentation: server CPU per request over the no-op provider at a fixed rate, hotspan / SDK', unit: 'x', ...results.otelHttp.hotspanOverSdkOverNoopFixed });
    }
  }
  if (results.request?.modes) {
    results.ratios.push({ name: 'realistic request: added CPU, hotspan / OTel SDK', unit: 'x', inProcess: true, ...results.request.hotspanOverOtel });
    results.ratios.push({ name: 'realistic request: added CPU, with attributes / without', unit: 'x', inProcess: true, ...results.request.attrsOverNoattrs });
  }
  results.targets = evaluateTargets(results);
  results.loadavgEnd = os.loadavg();
  results.elapsedSec = (Date.now() - t0) / 1000;
  results.errors = errors;

  // ---- output ----
  const resultsDir = path.join(benchDir, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const day = results.date.slice(0, 10);
  // Smoke (--quick) and partial (--only) runs never land in a dated file, so
  // render.mjs only ever picks a full run.
  const tag = quick ? 'quick' : only ? 'partial' : '';
  const file = arg('out') ?? path.join(resultsDir, tag ? `${tag}-latest.json` : `${day}-${results.commit}${results.dirty ? '-dirty' : ''}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 1)}\n`);
  printTables(results);
  // The README table and chart of this run (render.mjs does the same from the newest file).
  const suffix = tag ? `-${tag}` : '';
  writeFileSync(path.join(resultsDir, `README-table${suffix}.md`), renderMarkdown(results, file, `chart${suffix}.svg`));
  writeFileSync(path.join(resultsDir, `chart${suffix}.svg`), renderSvg(results));
  log(`\nwrote ${path.relative(process.cwd(), file)} (+ README-table${suffix}.md, chart${suffix}.svg) in ${results.elapsedSec.toFixed(0)} s`);
  if (errors.length) {
    log(`${errors.length} case error(s):`);
    for (const e of errors) log(`  ${e}`);
    process.exitCode = 1;
  }
}

function printTables(r) {
  const out = [];
  const row = (cells) => out.push(cells.map((c, i) => (i === 0 ? String(c).padEnd(62) : String(c).padStart(10))).join(' '));
  const section = (title, cases) => {
    if (!cases) return;
    out.push('', title);
    row(['case (ns per span)', 'median', 'min', 'max']);
    for (const c of Object.values(cases)) {
      if (c.skipped) row([c.label, 'skipped', '', '']);
      else row([c.label, fmt(c.median), fmt(c.min), fmt(c.max)]);
    }
  };
  section('JS spans', r.micro);
  section('native threads', r.native);
  if (r.hpp?.rows) {
    section(`hotspan.hpp (in one process; medians over ${r.hpp.processes} processes of ${r.hpp.rounds} rounds each)`, r.hpp.rows);
    out.push(`  2-thread scaling (1-thread ns / 2-thread ns): bare ${fmt(r.hpp.scalingBare.median)}, HOTSPAN_SCOPE ${fmt(r.hpp.scalingHpp.median)}: ${fmt(r.hpp.scalingHppOverBare.median)}x the bare loop's`);
    for (const [k, c] of Object.entries(r.hpp.per1MSpans)) out.push(`  ${k} per 1M spans: ${fmt(c.faults.median)} faults, ${fmt(c.waits.median)} waits, ${fmt(c.preempted.median)} preempted`);
  } else if (r.hpp) out.push('', `hotspan.hpp: ${r.hpp.skipped ?? r.hpp.error}`);
  if (r.holder && r.holder.rows) {
    out.push('', 'holder check (core, C++, ns per record)');
    for (const h of Object.values(r.holder.rows)) row([h.label, fmt(h.median), fmt(h.min), fmt(h.max)]);
    for (const mm of r.holder.missing) out.push(`  missing: ${mm}`);
  }
  if (r.writers && r.writers.writers) {
    out.push('', `writers (${r.writers.spans} spans)`);
    for (const [k, w] of Object.entries(r.writers.writers)) {
      if (w.error) row([k, 'n/a', w.error.slice(0, 40), '']);
      else row([k, `${fmt(w.spansPerSec.median / 1e6)} M/s`, `${fmt(w.bytesPerSpan.median)} B`, '']);
    }
  }
  const st = r.stream;
  if (st && !st.error && !st.skipped) {
    out.push('', `stream (tracer.stream(), native backend; medians of ${st.spansPerSec.runs.length} runs)`);
    out.push(`  writer thread: ${fmt(st.spansPerSec.median / 1e6)} M spans/s into a file (${st.spans} spans, ${fmt(st.bytesPerSpan.median)} B/span; goal >= 20 M/s)`);
    out.push(`  JS begin(id)/end(): ${fmt(st.onNsPerSpan.median)} ns streaming vs ${fmt(st.offNsPerSpan.median)} ns not: ${fmt(st.ratio.median)}x (per-pair ${fmt(st.pairRatio.median)}x; goal <= 1.1x); the JS thread's CPU time alone: ${fmt(st.cpuRatio.median)}x; stream missed ${st.missed.join(', ')}`);
  }
  if (r.rss && !r.rss.error && !r.rss.skipped) out.push('', `RSS per committed span: ${fmt(r.rss.bytesPerSpan)} bytes over ${r.rss.committed} spans`);
  if (r.bigread && !r.bigread.error && !r.bigread.skipped) {
    const b = r.bigread;
    out.push('', `reads of a big trace (${b.committed} spans, native backend; ms, median of ${b.runs})`);
    row(['read', 'median', 'min', 'max']);
    const line = (label, s) => row([label, fmt(s.median), fmt(s.min), fmt(s.max)]);
    line('stats()', b.statsMs);
    line('query() + group("step")', { median: b.queryOpenMs.median + b.queryGroupsMs.median, min: b.queryOpenMs.min + b.queryGroupsMs.min, max: b.queryOpenMs.max + b.queryGroupsMs.max });
    for (const [k, s] of Object.entries(b.query)) line(`query: ${k}`, s);
    line(`snapshot({ offset, limit: ${b.boundedSnapshotRecords} })`, b.boundedSnapshotMs);
    line('snapshotBatches(): first batch', b.firstBatchMs);
    line(`snapshotColumns() of ${b.columnsRecords} records`, b.columnsMs);
    line('snapshot() (plain): its refusal', b.plainSnapshotMs);
  }
  const rb = budgetSummary(r.rssBudget);
  if (rb) {
    out.push('', `RSS growth under a ${fmt(rb.memoryLimitMiB)} MiB '${rb.onFull}' budget: ${fmt(rb.growthMiB.median)} MiB (${fmt(rb.growthMiB.min)} – ${fmt(rb.growthMiB.max)}, ${rb.runs.length} runs) over ${rb.spans} spans (bound ${rb.boundMiB} MiB: ${rb.withinBound} of ${rb.runs.length} runs within); counts exact in ${rb.countsExact} of ${rb.runs.length} runs (first run: kept ${rb.counts.kept}, overwritten ${rb.counts.overwritten}, dropped ${rb.counts.dropped})`);
  }
  const ot = r.otlp;
  if (ot && !ot.error && !ot.skipped) {
    out.push('', `OTLP export (tracer.exportOtlp(), native backend; medians of ${ot.runs} runs)`);
    out.push(`  throughput: ${fmt(ot.spansPerSec.median / 1e6)} M spans/s encoded and sent to a loopback receiver (${ot.spans} spans, ${ot.batch} per request${ot.gzip ? ', gzip' : ''}; goal >= 2 M/s); ${fmt(ot.spansPerCpuSec.median / 1e6)} M spans per CPU-second of the process`);
    out.push(`  JS begin(id)/end(): ${fmt(ot.onNsPerSpan.median)} ns exporting vs ${fmt(ot.offNsPerSpan.median)} ns not: ${fmt(ot.ratio.median)}x (goal <= 1.1x); exporter sent / dropped / rejected / produced ${ot.exported.map((e) => `${e.sent} / ${e.dropped} / ${e.rejected ?? 0} / ${e.produced}`).join(', ')}`);
  }
  if (r.http) {
    out.push('', 'HTTP workload (20 spans per request)');
    row(['mode', 'req/s', 'p99 ms', 'loss', 'CPU µs/req', 'CPU loss', '+CPU µs @rate']);
    const pct = (x) => (x ? `${(x.median * 100).toFixed(1)}%` : '');
    for (const [k, h] of Object.entries(r.http.modes)) row([k, fmt(h.rps.median), fmt(h.p99Ms.median), pct(h.rpsLoss), fmt(h.cpuUsPerReq.median), pct(h.cpuLoss), h.extraCpuUsFixed ? fmt(h.extraCpuUsFixed.median) : '']);
  }
  const oh = r.otelHttp;
  if (oh?.modes) {
    out.push('', 'OpenTelemetry instrumentation-http (1 server span per request)');
    row(['mode', 'req/s', 'CPU µs/req', '+CPU µs', `+CPU µs @${oh.config.fixedRate}/s`, 'produced', 'received', 'lost']);
    for (const [k, h] of Object.entries(oh.modes)) {
      row([k, fmt(h.rps.median), fmt(h.cpuUsPerReq.median), h.addedCpuUs ? fmt(h.addedCpuUs.median) : '', h.addedCpuUsFixed ? fmt(h.addedCpuUsFixed.median) : '', h.produced ?? '', h.received ?? '', h.lost ?? '']);
    }
    const f = otelHttpFloor(oh);
    if (f) out.push(`  over the no-op floor, (hotspan - no-op) / (SDK - no-op): ${floorRatioText(f.saturated)} saturated, ${floorRatioText(f.fixed)} @${oh.config.fixedRate}/s; floor / SDK added ${fmt(f.saturated.floorOverSdk)}, ${fmt(f.fixed.floorOverSdk)} @${oh.config.fixedRate}/s`);
    for (const [k, h] of Object.entries(oh.slow?.modes ?? {})) out.push(`  slow collector (${oh.slow.config.receiverDelayMs} ms per answer), ${k}: ${h.lost} of ${h.produced} spans lost${h.countedDropped === undefined ? '' : `, ${h.countedDropped} counted dropped`}`);
  }
  out.push('', 'ratios (paired within each round)');
  row(['ratio', 'median', 'min', 'max']);
  for (const q of r.ratios) row([q.name, fmt(q.median), fmt(q.min), fmt(q.max)]);
  out.push('', 'targets');
  for (const t of r.targets) out.push(`  ${t.status.padEnd(5)}${t.noisy ? ' (noisy)' : ''} ${t.text}: ${t.valueText}${t.note ? ` (${t.note})` : ''}`);
  console.log(out.join('\n'));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
