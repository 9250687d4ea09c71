// The realistic request (issue 18), in one process, modes alternating:
//   node --expose-gc bench/cases/request.mjs '{"rounds":40,"batch":300}'
// Per request, as a traced service writes it: one async request span on a
// concurrent "http" track with { method, url } string attributes, trace()
// closures around parse, handler, validate, price, render and serialize, a
// begin/end per line item (6), and a trace() per rendered section (4) with a
// numeric `bytes` attribute: 17 spans. The business logic is stubbed (a few
// ns per step), so what a mode adds over `none` is the tracer's own cost.
//
// Modes: none (the same code untraced), hotspan, hotspan-noattrs (the same
// spans without attributes), otel (the SDK: BasicTracerProvider +
// BatchSpanProcessor + an exporter that counts and completes at once; parents
// passed as contexts, as no context manager is installed), naive (a JS object
// per span with its attributes, performance.now(), a parent stack).
// A batch is `batch` requests, each awaited in turn (a server's handler
// awaits its work); its cost is the process's CPU time (every thread) over
// the batch. Rounds alternate the modes, rotating the first. The figure of a
// mode is the median over rounds of (mode - none) in the same round.
import { runCase } from '../lib/case-main.mjs';
import { makeTracer } from '../lib/hotspan.mjs';
import { makeOtel } from '../lib/otel.mjs';

const opts = { rounds: 40, batch: 300, warmupRounds: 8, ...JSON.parse(process.argv[2] ?? '{}') };
export const SPANS_PER_REQUEST = 17;
const ITEMS = 6;
const SECTIONS = 4;
const SECTION_BYTES = [512, 2048, 96, 7000];
const URLS = ['/orders/17', '/orders/18?expand=items', '/cart', '/checkout/confirm'];

// ---- the stubbed business logic (shared by every mode) ----
let sink = 0;
const parse = (req) => ({ id: req.n, items: ITEMS });
const validate = (body) => body.items > 0;
const price = (i) => (i * 7 + 3) % 11;
const renderSection = (s) => SECTION_BYTES[s] + s;
const serialize = (total, bytes) => total * 31 + bytes;

function requestOf(n) {
  return { n, method: n % 5 === 0 ? 'POST' : 'GET', url: URLS[n % URLS.length] };
}

function none() {
  return {
    handle: async (req) => {
      const body = parse(req);
      validate(body);
      let total = 0;
      for (let i = 0; i < ITEMS; i++) total += price(i);
      let bytes = 0;
      for (let s = 0; s < SECTIONS; s++) bytes += renderSection(s);
      sink ^= serialize(total, bytes);
    },
    info: () => ({}),
  };
}

function hotspan(withAttrs) {
  const t = makeTracer('native');
  const [REQ, PARSE, HANDLER, VALIDATE, PRICE, ITEM, RENDER, SECTION, SERIALIZE] = [
    'request', 'parse', 'handler', 'validate', 'price', 'line-item', 'render', 'section', 'serialize',
  ].map((n) => t.name(n));
  const http = t.track('http');
  let requests = 0;
  return {
    handle: (req) =>
      t.traceAsync(
        REQ,
        async () => {
          const body = t.trace(PARSE, () => parse(req));
          t.trace(HANDLER, () => {
            t.trace(VALIDATE, () => validate(body));
            const total = t.trace(PRICE, () => {
              let sum = 0;
              for (let i = 0; i < ITEMS; i++) {
                t.begin(ITEM);
                sum += price(i);
                t.end();
              }
              return sum;
            });
            const bytes = t.trace(RENDER, () => {
              let b = 0;
              for (let s = 0; s < SECTIONS; s++) {
                b += withAttrs
                  ? t.trace(SECTION, () => renderSection(s), { bytes: SECTION_BYTES[s] })
                  : t.trace(SECTION, () => renderSection(s));
              }
              return b;
            });
            sink ^= t.trace(SERIALIZE, () => serialize(total, bytes));
          });
          requests++;
        },
        withAttrs ? { track: http, attrs: { method: req.method, url: req.url } } : { track: http },
      ),
    info: () => {
      t.flush();
      const spans = t.stats().reduce((a, r) => a + r.count, 0);
      t.close();
      return { requests, spans, spansPerRequest: spans / requests };
    },
  };
}

function otel() {
  const { api, provider, tracer, exported } = makeOtel();
  let ended = 0;
  // trace(): a child span of `ctx` around fn, ended (with an error status) however fn leaves.
  const trace = (ctx, name, fn, attributes) => {
    const span = tracer.startSpan(name, attributes === undefined ? undefined : { attributes }, ctx);
    try {
      return fn(api.trace.setSpan(ctx, span));
    } catch (e) {
      span.setStatus({ code: api.SpanStatusCode.ERROR });
      throw e;
    } finally {
      span.end();
      ended++;
    }
  };
  return {
    handle: async (req) => {
      const span = tracer.startSpan('request', { kind: api.SpanKind.SERVER, attributes: { method: req.method, url: req.url } });
      const root = api.trace.setSpan(api.ROOT_CONTEXT, span);
      try {
        const body = trace(root, 'parse', () => parse(req));
        trace(root, 'handler', (hc) => {
          trace(hc, 'validate', () => validate(body));
          const total = trace(hc, 'price', (pc) => {
            let sum = 0;
            for (let i = 0; i < ITEMS; i++) {
              const item = tracer.startSpan('line-item', undefined, pc);
              sum += price(i);
              item.end();
              ended++;
            }
            return sum;
          });
          const bytes = trace(hc, 'render', (rc) => {
            let b = 0;
            for (let s = 0; s < SECTIONS; s++) b += trace(rc, 'section', () => renderSection(s), { bytes: SECTION_BYTES[s] });
            return b;
          });
          sink ^= trace(hc, 'serialize', () => serialize(total, bytes));
        });
      } finally {
        span.end();
        ended++;
      }
    },
    info: async () => {
      await provider.forceFlush();
      return { ended, exported: exported(), dropped: ended - exported() };
    },
  };
}

function naive() {
  let spans = [];
  const stack = [];
  let total = 0;
  const begin = (name, attrs) => {
    const parent = stack.length > 0 ? stack[stack.length - 1] : null;
    const s = { name, start: performance.now(), end: 0, parent, attrs };
    stack.push(s);
    spans.push(s);
  };
  const end = () => {
    stack.pop().end = performance.now();
  };
  const trace = (name, fn, attrs) => {
    begin(name, attrs);
    try {
      return fn();
    } finally {
      end();
    }
  };
  return {
    handle: async (req) => {
      // The async span sits on no stack: it ends when the handler's promise settles.
      const span = { name: 'request', start: performance.now(), end: 0, parent: null, attrs: { method: req.method, url: req.url } };
      spans.push(span);
      const body = trace('parse', () => parse(req));
      trace('handler', () => {
        trace('validate', () => validate(body));
        const sum = trace('price', () => {
          let s = 0;
          for (let i = 0; i < ITEMS; i++) {
            begin('line-item');
            s += price(i);
            end();
          }
          return s;
        });
        const bytes = trace('render', () => {
          let b = 0;
          for (let s = 0; s < SECTIONS; s++) b += trace('section', () => renderSection(s), { bytes: SECTION_BYTES[s] });
          return b;
        });
        sink ^= trace('serialize', () => serialize(sum, bytes));
      });
      span.end = performance.now();
      if (spans.length >= 1 << 20) {
        total += spans.length;
        spans = [];
      }
    },
    info: () => ({ spans: total + spans.length }),
  };
}

const MODES = {
  none,
  hotspan: () => hotspan(true),
  'hotspan-noattrs': () => hotspan(false),
  otel,
  naive,
};

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** CPU µs (all threads) per request over one batch. */
async function batchCpu(m, n0) {
  const c0 = process.cpuUsage();
  for (let i = 0; i < opts.batch; i++) await m.handle(requestOf(n0 + i));
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / opts.batch;
}

function median(xs) {
  const v = xs.filter(Number.isFinite).sort((a, b) => a - b);
  const h = v.length >> 1;
  return v.length === 0 ? NaN : v.length % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

async function main() {
  const names = opts.modes ?? Object.keys(MODES);
  const modes = Object.fromEntries(names.map((k) => [k, MODES[k]()]));
  const cpu = Object.fromEntries(names.map((k) => [k, []]));
  let n = 0;
  for (let r = -opts.warmupRounds; r < opts.rounds; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + Math.max(r, 0)) % names.length];
      // A turn of the event loop between batches: the processors' timers run.
      await turn();
      const us = await batchCpu(modes[name], n);
      n += opts.batch;
      if (r >= 0) cpu[name].push(us);
    }
  }
  const out = { spansPerRequest: SPANS_PER_REQUEST, batch: opts.batch, rounds: opts.rounds, modes: {} };
  for (const k of names) {
    const added = k === 'none' ? cpu[k].map(() => 0) : cpu[k].map((x, i) => x - cpu.none[i]);
    out.modes[k] = {
      cpuUsPerRequest: median(cpu[k]),
      addedUsPerRequest: median(added),
      addedUsPerSpan: median(added) / SPANS_PER_REQUEST,
      addedRuns: added,
      info: await modes[k].info(),
    };
  }
  // Paired within each round: hotspan's added CPU over the SDK's.
  if (out.modes.hotspan && out.modes.otel) {
    const h = out.modes.hotspan.addedRuns;
    const o = out.modes.otel.addedRuns;
    out.hotspanOverOtel = median(h.map((x, i) => x / o[i]));
  }
  if (out.modes.hotspan && out.modes['hotspan-noattrs']) {
    const a = out.modes.hotspan.addedRuns;
    const b = out.modes['hotspan-noattrs'].addedRuns;
    out.attrsOverNoattrs = median(a.map((x, i) => x / b[i]));
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

runCase(main);
