// The HTTP workload's server: node bench/cases/http-server.mjs <none|hotspan|hotspan-profile|otel>
// (hotspan-profile: hotspan with tracer.profile({ intervalUs: 1000 }) running
// from the start, for the profiling cost: bench/cases/http-profile.mjs)
// Listens on 127.0.0.1 (ephemeral port, printed as a JSON line), and records
// 20 spans per request as a traced service writes them, around a little
// synchronous work: an async request span with { method, url } attributes
// (hotspan: traceAsync on a concurrent "http" track) > parse, auth (trace()
// closures), 12 x db.query (begin/end), render > 4 x render.part (with a
// numeric `bytes` attribute). GET /__stats answers the span counts, the
// request count and the process CPU time (not traced, not part of the load).
import { serve, work } from '../lib/serve.mjs';
import { makeTracer } from '../lib/hotspan.mjs';
import { makeOtel } from '../lib/otel.mjs';

const mode = process.argv[2] ?? 'none';
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
        cpuUsBefore: before.user + before.system,
        cpuUsAfter: after.user + after.system,
      }),
    );
    return;
  }
  requests++;
  rec.request(req, async () => {
    const path = rec.span(PARSE, () => req.url.split('?')[0]);
    const user = rec.span(AUTH, () => work(path.length, 64));
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
    res.setHeader('content-type', 'application/json');
    res.end(body);
  });
}

serve(handle, mode);
