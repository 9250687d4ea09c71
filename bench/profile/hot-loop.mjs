// A plain loop over one hot case for a profiler (perf record, callgrind):
//   node --perf-basic-prof bench/profile/hot-loop.mjs <hotspan-id|hotspan-trace|hotspan-start|hotspan-attrs|hotspan-async|hotspan-async-fn|hotspan-otel|work-async|promise-floor-fn|floor|js-id> [spans] [warm-up spans]
// Instructions per span (load-independent): run `valgrind --tool=callgrind
// node --hash-seed=1 bench/profile/hot-loop.mjs <case> N` at two N and divide
// the difference of the totals by the difference of the N. A traced async
// function net of the function: hotspan-async-fn's figure - work-async's.
// request-<mode> (a mode of lib/request-modes.mjs: none, hotspan,
// hotspan-noattrs, otel, naive): the realistic request, each awaited in turn;
// "spans" counts requests. What the tracer adds to a request: request-hotspan's
// figure - request-none's; request-hotspan+tracer: with a second tracer in the process.
import { createRequire } from 'node:module';
import { floorPath, rootDir } from '../lib/build.mjs';
import { makeTracer } from '../lib/hotspan.mjs';
import { MODES, requestOf } from '../lib/request-modes.mjs';

const require = createRequire(import.meta.url);
const [which = 'hotspan-id', spansArg = '2e7', warmArg = '1e5'] = process.argv.slice(2);
const n = Math.floor(Number(spansArg));
let begin;
let end;
let trace;
let start;
let attrs;
const ROUTES = ['/users', '/orders', '/items', '/health'];
let traceAsync;
let otelSpan;
let request;
if (which.startsWith('request-')) {
  // request-<mode>+tracer: a second native tracer records spans through the same facade code first (what
  // a second tracer in the process costs the first one's spans).
  const [modeName, extra] = which.slice('request-'.length).split('+');
  const mode = MODES[modeName];
  if (mode === undefined || (extra !== undefined && extra !== 'tracer')) throw new Error(`hot-loop: no request mode ${JSON.stringify(which)}`);
  request = mode();
  if (extra === 'tracer') {
    const t2 = makeTracer('native');
    const id = t2.name('other');
    for (let i = 0; i < 2e5; i++) {
      t2.trace(id, () => i, { bytes: i });
      t2.begin(id);
      t2.end();
    }
  }
} else if (which === 'floor') {
  const f = require(floorPath);
  begin = f.begin;
  end = f.end;
} else {
  const t = makeTracer(which.startsWith('js') ? 'js' : 'native');
  const id = t.name('profile.span');
  begin = () => t.begin(id);
  end = () => t.end();
  trace = (fn) => t.trace(id, fn);
  start = () => t.start('profile.span').end();
  // micro.mjs's hotspan-attrs: a string from a few values and a number.
  attrs = (i) => t.begin(id, { route: ROUTES[i & 3], bytes: i });
  const asyncOpts = { track: t.track('http') };
  traceAsync = (fn) => t.traceAsync(id, fn, asyncOpts);
  // hotspan-otel: an OTel span from hotspan/otel's provider (no context manager: a root each time).
  if (which === 'hotspan-otel') {
    const ot = new (require(`${rootDir}/dist/otel/index.js`).TracerProvider)(t).getTracer('profile');
    otelSpan = () => ot.startSpan('profile.span').end();
  }
}
const work = () => 0;
// hotspan-async-fn: real async work, an async function whose promise settles a microtask later.
const workAsync = async () => 0;
const fulfilled = (v) => v;
const rejected = (e) => {
  throw e;
};
async function loop(count) {
  if (request !== undefined) {
    for (let i = 0; i < count; i++) await request.handle(requestOf(i));
    return;
  }
  if (which === 'hotspan-async' || which === 'hotspan-async-fn' || which === 'work-async' || which === 'promise-floor-fn') {
    // As bench/cases/micro.mjs: 1000 concurrent spans, then wait for them to
    // end; work-async: the same loop calling the async fn untraced;
    // promise-floor-fn: that fn's promise with two shared reactions, no tracer.
    const call =
      which === 'work-async'
        ? workAsync
        : which === 'promise-floor-fn'
          ? () => Promise.resolve(workAsync()).then(fulfilled, rejected)
          : which === 'hotspan-async'
            ? () => traceAsync(work)
            : () => traceAsync(workAsync);
    for (let i = 0; i < count; i += 1000) {
      let p;
      for (let j = 0; j < 1000; j++) p = call();
      await p;
    }
    return;
  }
  if (which === 'hotspan-otel') {
    for (let i = 0; i < count; i++) otelSpan();
    return;
  }
  if (which === 'hotspan-start') {
    for (let i = 0; i < count; i++) start();
    return;
  }
  if (which === 'hotspan-attrs') {
    for (let i = 0; i < count; i++) {
      attrs(i);
      end();
    }
    return;
  }
  if (which === 'hotspan-trace') {
    for (let i = 0; i < count; i++) trace(work);
    return;
  }
  for (let i = 0; i < count; i++) {
    begin(7);
    end();
  }
}
await loop(Math.floor(Number(warmArg))); // warm-up
const t0 = process.hrtime.bigint();
const c0 = process.cpuUsage();
await loop(n);
const c = process.cpuUsage(c0);
const dt = Number(process.hrtime.bigint() - t0);
// cpuNsPerSpan: every thread's CPU (the GC's and a writer's too), as the request bench counts it.
console.log(JSON.stringify({ case: which, spans: n, nsPerSpan: dt / n, cpuNsPerSpan: ((c.user + c.system) * 1e3) / n }));
