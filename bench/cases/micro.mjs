// One JS micro case in a fresh process (fresh JIT state, fresh heap):
//   node --expose-gc bench/cases/micro.mjs <case> <options JSON>
//   node --expose-gc bench/cases/micro.mjs pair '{"pair":["hotspan-id","floor"], ...}'
//   node --expose-gc bench/cases/micro.mjs net '{"net":["hotspan-async-fn","work-async","hotspan-id"], ...}'
// Prints one JSON line: ns per span (the median and the mean of mitata's
// samples, each sample being K spans) plus case-specific facts (dropped spans ...).
import dc from 'node:diagnostics_channel';
import { createRequire } from 'node:module';
import { measure, do_not_optimize } from 'mitata';
import { floorPath } from '../lib/build.mjs';
import { runCase } from '../lib/case-main.mjs';
import { makeTracer } from '../lib/hotspan.mjs';
import { makeOtel } from '../lib/otel.mjs';

const require = createRequire(import.meta.url);
const [caseName, optsJson = '{}'] = process.argv.slice(2);
const opts = { minCpuMs: 400, warmupMs: 300, ...JSON.parse(optsJson) };

// Spans per measured call: large enough that mitata's own per-call overhead
// (a clock read per sample) vanishes, small enough for many samples.
const K = 1000;
const NAME = 'db.query';
const ROUTES = ['/orders/:id', '/cart', '/checkout', '/orders'];

// The budget of the growing cases: large enough that a run never fills it
// (every chunk is fresh memory, as before budgets existed).
const UNBOUNDED = { memoryLimit: 2 ** 36 };
// The steady-state overwrite case: a small budget, full after the warm-up,
// so every chunk is a recycled one.
const OVERWRITE = { memoryLimit: 4 * 2 ** 20, onFull: 'overwrite' };

// asyncContext: the tracer's async context on (tracer.enableAsyncContext()).
function hotspanCase(backend, shape, budget = UNBOUNDED, asyncContext = false) {
  const t = makeTracer(backend, backend === 'noop' ? {} : budget);
  if (asyncContext) t.enableAsyncContext();
  const remote = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };
  const id = t.name(NAME);
  const work = () => 0;
  const workAsync = async () => 0;
  const asyncOpts = { track: t.track('http') };
  const bodies = {
    // begin(id)/end(): the hot path.
    id: () => {
      for (let i = 0; i < K; i++) {
        t.begin(id);
        t.end();
      }
    },
    // begin(id)/end() inside withContext(remote): every span stores the remote parent's context.
    idUnder: () =>
      t.withContext(remote, () => {
        for (let i = 0; i < K; i++) {
          t.begin(id);
          t.end();
        }
      }),
    // begin('string'): the facade's name cache in front of the same path.
    string: () => {
      for (let i = 0; i < K; i++) {
        t.begin(NAME);
        t.end();
      }
    },
    // trace(id, fn): begin/end plus the call and the try/finally.
    trace: () => {
      for (let i = 0; i < K; i++) t.trace(id, work);
    },
    traceString: () => {
      for (let i = 0; i < K; i++) t.trace(NAME, work);
    },
    // start(name).end(): a handle that the GC ends if it is leaked.
    start: () => {
      for (let i = 0; i < K; i++) t.start(NAME).end();
    },
    // begin(id, attrs)/end(): two attributes, a string from a few values and a number.
    attrs: () => {
      for (let i = 0; i < K; i++) {
        t.begin(id, { route: ROUTES[i & 3], bytes: i });
        t.end();
      }
    },
    // traceAsync(id, fn) on a concurrent track: the span ends when fn's
    // promise settles (all K settle before the awaited last one).
    async: async () => {
      let p;
      for (let i = 0; i < K; i++) p = t.traceAsync(id, work, asyncOpts);
      await p;
    },
    // The same with real async work: an async function, its own promise.
    asyncFn: async () => {
      let p;
      for (let i = 0; i < K; i++) p = t.traceAsync(id, workAsync, asyncOpts);
      await p;
    },
  };
  return {
    body: bodies[shape],
    info: () => {
      t.flush();
      const st = t.stats().find((r) => r.name === NAME);
      const c = t.counts();
      return { backend, committed: st ? st.count : 0, overwritten: c.overwritten, dropped: c.dropped };
    },
  };
}

// The floor of a pure-JS span: the two performance.now() reads it cannot avoid.
function perfNowFloorCase() {
  const perf = performance;
  let sum = 0;
  return {
    body: () => {
      for (let i = 0; i < K; i++) {
        sum += perf.now();
        sum += perf.now();
      }
      do_not_optimize(sum);
    },
    info: () => ({}),
  };
}

// A bare pure-JS recorder: the floor's two performance.now() reads and a
// 28-byte record (a StoredSpan's size) stored into a WebAssembly.Memory.
// fresh: every record in memory never touched before (the memory grown in
// 64 MiB steps, a new one at the 4 GiB limit), as a recorder keeping every
// record must; else a 4 MiB ring reused. fresh minus ring is the first-touch
// page-fault cost per span on this thread, with no recorder's work around it.
function bareStoreCase(fresh) {
  const REC = 28;
  const STEP = 1024; // wasm pages (64 KiB): 64 MiB
  const perf = performance;
  let mem = new WebAssembly.Memory({ initial: 64, maximum: 65536 });
  let view = new DataView(mem.buffer);
  let at = 0;
  let grown = 0;
  const room = () => {
    if (!fresh) {
      at = 0;
      return;
    }
    try {
      mem.grow(STEP);
    } catch {
      mem = new WebAssembly.Memory({ initial: STEP, maximum: 65536 });
      at = 0;
    }
    grown++;
    view = new DataView(mem.buffer);
  };
  return {
    body: () => {
      for (let i = 0; i < K; i++) {
        const start = perf.now();
        const end = perf.now();
        if (at + REC > view.byteLength) room();
        view.setFloat64(at, start, true);
        view.setFloat64(at + 8, end, true);
        view.setUint32(at + 16, i, true);
        view.setUint32(at + 20, 7, true);
        view.setUint32(at + 24, 0, true);
        at += REC;
      }
    },
    info: () => ({ fresh, grows: grown }),
  };
}

function floorCase(tsc) {
  const f = require(floorPath);
  const b = tsc ? f.beginTsc : f.begin;
  const e = tsc ? f.endTsc : f.end;
  return {
    body: () => {
      for (let i = 0; i < K; i++) {
        b(7);
        e();
      }
    },
    info: () => ({ checksum: f.checksum() }),
  };
}

// Naive pure-JS span: an object per span on an array, performance.now() for
// the clock, an explicit stack for parents. The array is cut back at 1M spans
// so memory stays bounded (the objects then become garbage, as they would
// when a naive tracer ships and forgets them).
function naiveCase() {
  let spans = [];
  const stack = [];
  let total = 0;
  function begin(name) {
    const parent = stack.length > 0 ? stack[stack.length - 1] : null;
    const s = { name, start: performance.now(), end: 0, parent };
    stack.push(s);
    spans.push(s);
  }
  function end() {
    const s = stack.pop();
    s.end = performance.now();
  }
  return {
    body: () => {
      for (let i = 0; i < K; i++) {
        begin(NAME);
        end();
      }
      if (spans.length >= 1 << 20) {
        total += spans.length;
        spans = [];
      }
    },
    info: () => ({ spans: total + spans.length }),
  };
}

// OpenTelemetry SDK: BasicTracerProvider + BatchSpanProcessor (default limits:
// queue 2048, batch 512) + a counting exporter (../lib/otel.mjs). `yieldEvery` true: the body is
// async and gives the event loop one turn per K spans, as a server would, so
// the processor can export; false: a synchronous loop, where the processor's
// queue fills and it drops spans (counted).
async function otelCase(yieldEvery) {
  const { provider, tracer, exported } = makeOtel();
  let ended = 0;
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const loop = () => {
    for (let i = 0; i < K; i++) tracer.startSpan(NAME).end();
    ended += K;
  };
  return {
    body: yieldEvery
      ? async () => {
          loop();
          await turn();
        }
      : loop,
    info: async () => {
      await provider.forceFlush();
      return { ended, exported: exported(), dropped: ended - exported(), droppedFraction: (ended - exported()) / ended };
    },
  };
}

// performance.mark + performance.measure by mark name, the usual idiom; marks
// and measures are cleared every K spans so the timeline buffer stays small.
function perfMarkCase() {
  const startMark = `${NAME}:start`;
  return {
    body: () => {
      for (let i = 0; i < K; i++) {
        performance.mark(startMark);
        performance.measure(NAME, startMark);
      }
      performance.clearMarks();
      performance.clearMeasures();
    },
    info: () => ({}),
  };
}

// diagnostics_channel TracingChannel.traceSync with one subscriber that
// timestamps start and end on the context object (what a tracer would do).
function dcCase() {
  const tc = dc.tracingChannel('hotspan.bench');
  let n = 0;
  tc.subscribe({
    start(ctx) {
      ctx.start = performance.now();
    },
    end(ctx) {
      ctx.end = performance.now();
      n++;
    },
    asyncStart() {},
    asyncEnd() {},
    error() {},
  });
  const work = () => 0;
  return {
    body: () => {
      for (let i = 0; i < K; i++) tc.traceSync(work, { name: NAME });
    },
    info: () => ({ observed: n }),
  };
}

function emptyCase() {
  return {
    body: () => {
      for (let i = 0; i < K; i++) {
        // nothing: the loop itself is the baseline
      }
    },
    info: () => ({}),
  };
}

// What traceAsync does with no tracing at all: call the work, take its value
// as a promise, and attach two reactions (shared functions: no per-span
// state, so below any tracer, which must carry the span's token to its end).
// `asyncWork` false: a sync work function (the 'async' case's () => 0).
function promiseFloorCase(asyncWork) {
  const work = asyncWork ? async () => 0 : () => 0;
  const fulfilled = (v) => v;
  const rejected = (e) => {
    throw e;
  };
  return {
    body: async () => {
      let p;
      for (let i = 0; i < K; i++) p = Promise.resolve(work()).then(fulfilled, rejected);
      await p;
    },
    info: () => ({}),
  };
}

// The async work alone, as the traced cases call it: K calls of an async
// function, then await the last; what a traced async span is net of.
function workAsyncCase() {
  const workAsync = async () => 0;
  return {
    body: async () => {
      let p;
      for (let i = 0; i < K; i++) p = workAsync();
      await p;
    },
    info: () => ({}),
  };
}

const cases = {
  empty: emptyCase,
  'promise-floor': () => promiseFloorCase(false),
  'promise-floor-fn': () => promiseFloorCase(true),
  'work-async': workAsyncCase,
  floor: () => floorCase(false),
  'floor-tsc': () => floorCase(true),
  'hotspan-id': () => hotspanCase('native', 'id'),
  // The chunk reserve off: the recording thread faults in its own chunks.
  'hotspan-id-noreserve': () => {
    process.env.HOTSPAN_CHUNK_RESERVE = '0';
    return hotspanCase('native', 'id');
  },
  'hotspan-id-overwrite': () => hotspanCase('native', 'id', OVERWRITE),
  // Head sampling at 1% with the tail keep on: every span here is a local
  // root, so every one is a trace the export decides.
  'hotspan-id-sampled': () => hotspanCase('native', 'id', { ...UNBOUNDED, sample: { ratio: 0.01, keep: { slowerThanMs: 100, errors: true } } }),
  'hotspan-string': () => hotspanCase('native', 'string'),
  'hotspan-trace': () => hotspanCase('native', 'trace'),
  'hotspan-trace-string': () => hotspanCase('native', 'traceString'),
  'hotspan-start': () => hotspanCase('native', 'start'),
  'hotspan-attrs': () => hotspanCase('native', 'attrs'),
  'hotspan-async': () => hotspanCase('native', 'async'),
  'hotspan-async-fn': () => hotspanCase('native', 'asyncFn'),
  // The async context on (parents across await): the same shapes.
  'hotspan-id-ctx': () => hotspanCase('native', 'id', UNBOUNDED, true),
  'hotspan-id-under': () => hotspanCase('native', 'idUnder', UNBOUNDED, true),
  'hotspan-trace-ctx': () => hotspanCase('native', 'trace', UNBOUNDED, true),
  'hotspan-async-ctx': () => hotspanCase('native', 'async', UNBOUNDED, true),
  'js-id': () => hotspanCase('js', 'id'),
  'js-id-overwrite': () => hotspanCase('js', 'id', OVERWRITE),
  // The js backend's chunk reserve (its prefault worker) off: the JS thread faults in its own pages.
  'js-id-noreserve': () => {
    process.env.HOTSPAN_CHUNK_RESERVE = '0';
    return hotspanCase('js', 'id');
  },
  'floor-perf-now': perfNowFloorCase,
  'js-trace': () => hotspanCase('js', 'trace'),
  'js-async': () => hotspanCase('js', 'async'),
  // The js backend's async context on: the native ctx cases' shapes.
  'js-id-ctx': () => hotspanCase('js', 'id', UNBOUNDED, true),
  'js-id-under': () => hotspanCase('js', 'idUnder', UNBOUNDED, true),
  'js-trace-ctx': () => hotspanCase('js', 'trace', UNBOUNDED, true),
  'js-async-ctx': () => hotspanCase('js', 'async', UNBOUNDED, true),
  'noop-id': () => hotspanCase('noop', 'id'),
  naive: naiveCase,
  'bare-store-fresh': () => bareStoreCase(true),
  'bare-store-ring': () => bareStoreCase(false),
  otel: () => otelCase(true),
  'otel-sync': () => otelCase(false),
  'perf-mark': perfMarkCase,
  'dc-tracing': dcCase,
};

// Calls the body for at least `ms` and `minCalls` times; returns the calls.
async function runFor(c, ms, minCalls) {
  const end = performance.now() + ms;
  let calls = 0;
  while (performance.now() < end || calls < minCalls) {
    const r = c.body();
    if (r instanceof Promise) await r;
    calls++;
  }
  return calls;
}

// Untimed warm-up: enough calls for the JIT to reach its optimized code.
function warm(c) {
  return runFor(c, opts.warmupMs, 50);
}

function medianOf(xs) {
  const v = [...xs].sort((x, y) => x - y);
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// `pair A B`: both cases in one process, measured in short alternating
// stretches (A B, B A, ...), so both see the same machine state (the other
// hyperthread's load, frequency); the figure is the median over stretches of
// A's median sample / B's. Never pairs two hotspan backends (that would make
// the facade's call sites polymorphic).
async function pairMain(aName, bName) {
  const a = await cases[aName]();
  const b = await cases[bName]();
  await warm(a);
  await warm(b);
  const stretches = opts.stretches ?? 12;
  // batch_samples 256 (mitata's default 4096): a body under 65.5 µs is run
  // batch_samples times per sample, so a "30 ms" stretch was at least 5 x 4096
  // calls (20M spans) and the growing cases recorded ~250M spans a process;
  // once the attribute case got under the threshold it outgrew a 24 GiB
  // machine (OOM-killed). 256 keeps batched samples and ~2 GB at most.
  const each = { min_cpu_time: (opts.stretchMs ?? 30) * 1e6, min_samples: 5, max_samples: 5000, batch_samples: 256 };
  const ra = [];
  const rb = [];
  const ratios = [];
  for (let j = 0; j < stretches; j++) {
    let sa;
    let sb;
    if (j % 2 === 0) {
      sa = await measure(a.body, each);
      sb = await measure(b.body, each);
    } else {
      sb = await measure(b.body, each);
      sa = await measure(a.body, each);
    }
    ra.push(sa.p50 / K);
    rb.push(sb.p50 / K);
    ratios.push(sa.p50 / sb.p50);
  }
  const out = {
    pair: [aName, bName],
    ratio: medianOf(ratios),
    diffNs: medianOf(ra.map((x, i) => x - rb[i])),
    aNs: medianOf(ra),
    bNs: medianOf(rb),
    ratios,
    aInfo: await a.info(),
    bInfo: await b.info(),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

// `net A W B`: three cases in one process in alternating stretches (the
// order rotates each stretch); the figure is the median over stretches of
// (A - W) / B: A's cost net of the work W it wraps, per B (traceAsync of an
// async function, net of that function's own promise, per plain span).
async function netMain(names) {
  const cs = [];
  for (const n of names) cs.push(await cases[n]());
  for (const c of cs) await warm(c);
  const stretches = opts.stretches ?? 12;
  // As pairMain's: batch_samples 256 bounds what the growing cases record.
  const each = { min_cpu_time: (opts.stretchMs ?? 30) * 1e6, min_samples: 5, max_samples: 5000, batch_samples: 256 };
  const ns = cs.map(() => []);
  const ratios = [];
  for (let j = 0; j < stretches; j++) {
    const p50 = [];
    for (let k = 0; k < cs.length; k++) {
      const i = (j + k) % cs.length;
      p50[i] = (await measure(cs[i].body, each)).p50;
    }
    p50.forEach((x, i) => ns[i].push(x / K));
    ratios.push((p50[0] - p50[1]) / p50[2]);
  }
  const out = {
    net: names,
    ratio: medianOf(ratios),
    // A - W per span: what the wrapping adds to the work.
    netNs: medianOf(ns[0].map((x, i) => x - ns[1][i])),
    aNs: medianOf(ns[0]),
    wNs: medianOf(ns[1]),
    bNs: medianOf(ns[2]),
    ratios,
    aInfo: await cs[0].info(),
    bInfo: await cs[2].info(),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

// Process CPU time (user + system, all threads) and wall time per span over
// about 300 ms of the body: what the case costs the machine, not only the
// calling thread (mitata's figure).
async function processCpu(c) {
  const u0 = process.cpuUsage();
  const w0 = performance.now();
  const calls = await runFor(c, 300, 20);
  const wallMs = performance.now() - w0;
  const u = process.cpuUsage(u0);
  const spans = calls * K;
  return { cpuNs: ((u.user + u.system) * 1e3) / spans, wallNs: (wallMs * 1e6) / spans };
}

async function main() {
  if (caseName === 'pair') {
    const [aName, bName] = JSON.parse(optsJson).pair;
    if (!cases[aName] || !cases[bName]) throw new Error(`unknown pair ${aName}, ${bName}`);
    return pairMain(aName, bName);
  }
  if (caseName === 'net') {
    const names = JSON.parse(optsJson).net;
    if (!Array.isArray(names) || names.length !== 3 || !names.every((n) => cases[n])) throw new Error(`net needs three known cases, got ${JSON.stringify(names)}`);
    return netMain(names);
  }
  const make = cases[caseName];
  if (!make) throw new Error(`unknown case ${caseName}; known: ${Object.keys(cases).join(', ')}`);
  const c = await make();
  // Warm-up: enough calls for the JIT to reach its optimized code, untimed.
  const wCalls = await warm(c);
  const stats = await measure(c.body, {
    min_cpu_time: opts.minCpuMs * 1e6,
    min_samples: 20,
    max_samples: opts.maxSamples ?? 20000,
  });
  do_not_optimize(stats);
  const cpu = await processCpu(c);
  const info = await c.info();
  const out = {
    case: caseName,
    // The process's figure: the median sample (robust to preemption on a
    // shared machine); the mean (every amortized cost, and any preemption) too.
    nsPerSpan: stats.p50 / K,
    mean: stats.avg / K,
    min: stats.min / K,
    max: stats.max / K,
    samples: stats.samples.length,
    spansPerSample: K,
    warmupCalls: wCalls,
    // Whole-process CPU (every thread: hotspan's chunk reserve, V8's GC and
    // compiler threads) per span over a timed stretch, against its wall time.
    cpuNsPerSpan: cpu.cpuNs,
    wallNsPerSpan: cpu.wallNs,
    info,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

runCase(main);
