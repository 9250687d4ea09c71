// The HTTP workload's server: node bench/cases/http-server.mjs <none|hotspan|hotspan-profile|otel>
//   or node bench/cases/http-server.mjs <none|hotspan-otlp> [<OTLP traces URL>] --mix
// (hotspan-profile: hotspan with tracer.profile({ intervalUs: 1000 }) running
// from the start, for the profiling cost: bench/cases/http-profile.mjs)
// Listens on 127.0.0.1 (ephemeral port, printed as a JSON line), and records
// 20 spans per request as a traced service writes them, around a little
// synchronous work: an async request span with { method, url } attributes
// (hotspan: traceAsync on a concurrent "http" track) > parse, auth (trace()
// closures), 12 x db.query (begin/end), render > 4 x render.part (with a
// numeric `bytes` attribute). GET /__stats answers the span counts, the
// request count and the process CPU time (not traced, not part of the load).
import { setTimeout as sleep } from 'node:timers/promises';
import { serve, work } from '../lib/serve.mjs';
import { makeTracer } from '../lib/hotspan.mjs';
import { makeOtel } from '../lib/otel.mjs';

const mode = process.argv[2] ?? 'none';
// --mix (the sampling figures, bench/cases/http-sampling.mjs): of every 200
// requests, 2 are slow (the request waits SLOW_MS before it answers) and 1
// fails (its auth span throws, flagged error; it answers 500). Their request
// spans carry `bench.kind: 'slow'` or `'fail'`, so a receiver can tell their
// traces apart. `hotspan-otlp`: the hotspan mode, exporting to the URL by
// exportOtlp(), sampled as the environment says (OTEL_TRACES_SAMPLER,
// HOTSPAN_KEEP_*), with parents across await (enableAsyncContext(): a
// request's spans are in its trace); GET /__drain answers once every span ended so far is sent,
// sampled out or dropped, GET /__finish shuts the exporter down and answers
// counts().otlp.
const mix = process.argv.includes('--mix');
const SLOW_MS = 60;
const NAMES = ['request', 'parse', 'auth', 'db.query', 'render', 'render.part'];
const [REQUEST, PARSE, AUTH, DB, RENDER, PART] = [0, 1, 2, 3, 4, 5];

/**
 * The three modes behind one interface: request(req, fn) runs the handler
 * inside the async request span; span(k, fn, attrs) a child around fn;
 * begin(k)/end() a child in a loop. Spans nest strictly.
 */
function makeRecorder() {
  if (mode === 'none') {
    return {
      request: (req, fn) => fn(),
      span: (k, fn) => fn(),
      begin() {},
      end() {},
      stats: () => ({ spans: 0 }),
    };
  }
  if (mode === 'hotspan' || mode === 'hotspan-profile') {
    const t = makeTracer('native');
    if (mode === 'hotspan-profile') t.profile({ intervalUs: 1000 });
    const ids = NAMES.map((n) => t.name(n));
    const http = t.track('http');
    let n = 0;
    return {
      request: (req, fn) => {
        n++;
        return t.traceAsync(ids[REQUEST], fn, { track: http, attrs: { method: req.method, url: req.url } });
      },
      span: (k, fn, attrs) => {
        n++;
        return t.trace(ids[k], fn, attrs);
      },
      begin(k) {
        t.begin(ids[k]);
      },
      end() {
        t.end();
        n++;
      },
      stats: () => {
        t.flush();
        const committed = t.stats().reduce((a, r) => a + r.count, 0);
        return { spans: n, committed };
      },
    };
  }
  if (mode === 'hotspan-otlp') {
    const url = process.argv[3];
    if (url === undefined || url.startsWith('--')) throw new Error('mode hotspan-otlp needs the receiver URL');
    const t = makeTracer('native');
    // A request's spans are its children, in its trace (parents across await), as a traced service has them.
    t.enableAsyncContext();
    t.exportOtlp({ endpoint: url });
    const ids = NAMES.map((n) => t.name(n));
    const http = t.track('http');
    const settled = () => {
      const o = t.counts().otlp;
      return o.sent + o.sampledOut + o.dropped + o.rejected;
    };
    return {
      request: (req, fn, kind) =>
        t.traceAsync(ids[REQUEST], fn, { track: http, attrs: kind === undefined ? { method: req.method, url: req.url } : { method: req.method, url: req.url, 'bench.kind': kind } }),
      span: (k, fn, attrs) => t.trace(ids[k], fn, attrs),
      begin(k) {
        t.begin(ids[k]);
      },
      end() {
        t.end();
      },
      stats: () => ({ produced: t.counts().produced }),
      // Until the worker has settled every span ended so far, at its own pace.
      drain: async () => {
        const produced = t.counts().produced;
        const deadline = Date.now() + 60000;
        const t0 = Date.now();
        while (settled() < produced) {
          if (Date.now() > deadline) throw new Error(`the exporter did not settle ${produced - settled()} spans within 60 s: ${JSON.stringify({ produced, otlp: t.counts().otlp })}`);
          await sleep(50);
        }
        return { ms: Date.now() - t0 };
      },
      finish: async () => {
        await t.shutdown();
        return { produced: t.counts().produced, otlp: t.counts().otlp };
      },
    };
  }
  if (mode === 'otel') {
    const { api, tracer, exported } = makeOtel();
    // No context manager is installed: parents are passed as contexts.
    const stack = [];
    let n = 0;
    const child = (k, attributes) => {
      const parent = api.trace.setSpan(api.ROOT_CONTEXT, stack[stack.length - 1]);
      stack.push(tracer.startSpan(NAMES[k], attributes === undefined ? undefined : { attributes }, parent));
    };
    const done = () => {
      stack.pop().end();
      n++;
    };
    return {
      request: async (req, fn) => {
        const span = tracer.startSpan(NAMES[REQUEST], { kind: api.SpanKind.SERVER, attributes: { method: req.method, url: req.url } });
        // Its children are the spans begun while fn runs synchronously.
        stack.push(span);
        let p;
        try {
          p = fn();
        } finally {
          stack.pop();
        }
        try {
          return await p;
        } finally {
          span.end();
          n++;
        }
      },
      span: (k, fn, attrs) => {
        child(k, attrs);
        try {
          return fn();
        } finally {
          done();
        }
      },
      begin(k) {
        child(k);
      },
      end: done,
      stats: () => ({ spans: n, exported: exported(), dropped: n - exported() }),
    };
  }
  throw new Error(`unknown mode ${mode}`);
}

const rec = makeRecorder();

let requests = 0;
const kinds = { slow: 0, fail: 0 };

function handle(req, res) {
  if (req.url === '/__stats') {
    // Process CPU time (user + system, µs) and the request count, so the
    // driver can compute CPU per request over its measured window: a figure
    // that other load on the machine does not inflate, unlike req/s. The
    // span counts (a flush and a stats query over every recorded span) are
    // not request work: CPU is read before them (the end of a window) and
    // after them (the start of the next), so no window contains them.
    const before = process.cpuUsage();
    const stats = rec.stats();
    const after = process.cpuUsage();
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        ...stats,
        requests,
        kinds,
        cpuUsBefore: before.user + before.system,
        cpuUsAfter: after.user + after.system,
      }),
    );
    return;
  }
  if (req.url === '/__drain' || req.url === '/__finish') {
    const what = req.url === '/__drain' ? rec.drain : rec.finish;
    if (what === undefined) return void res.end('{}');
    what().then(
      (r) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(r ?? {}));
      },
      (e) => {
        res.statusCode = 500;
        res.end(String(e?.message ?? e));
      },
    );
    return;
  }
  requests++;
  const kind = !mix ? undefined : requests % 100 === 50 ? 'slow' : requests % 200 === 7 ? 'fail' : undefined;
  if (kind !== undefined) kinds[kind]++;
  rec.request(req, async () => {
    const path = rec.span(PARSE, () => req.url.split('?')[0]);
    let user = 0;
    try {
      user = rec.span(AUTH, () => {
        const h = work(path.length, 64);
        if (kind === 'fail') throw new Error('bench: a failing request');
        return h;
      });
    } catch {
      res.statusCode = 500;
    }
    const rows = [];
    for (let q = 0; q < 12; q++) {
      rec.begin(DB);
      rows.push(work(user + q, 64));
      rec.end();
    }
    const body = rec.span(RENDER, () => {
      const parts = [];
      for (let p = 0; p < 4; p++) {
        const part = rows[p * 3] ^ rows[p * 3 + 1];
        parts.push(rec.span(PART, () => part, { bytes: 64 * (p + 1) }));
      }
      return JSON.stringify({ path, user, parts });
    });
    if (kind === 'slow') await sleep(SLOW_MS);
    res.setHeader('content-type', 'application/json');
    res.end(body);
  }, kind);
}

serve(handle, mode);
