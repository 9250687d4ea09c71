// The realistic request's modes (issue 18), shared by bench/cases/request.mjs
// (CPU per request, modes alternating) and bench/profile/hot-loop.mjs
// (instructions per request under callgrind). What they trace is described
// in cases/request.mjs.
import { makeTracer } from './hotspan.mjs';
import { makeOtel } from './otel.mjs';

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

export function requestOf(n) {
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

// Both hotspan modes record into one tracer, as a service has one: a second
// native tracer would give the facade's call sites two sets of addon
// functions to call (each binding has its own), a cost a service never pays.
// Each mode has its own names, so its spans are counted apart.
let shared;
function sharedTracer() {
  shared ??= { t: makeTracer('native'), users: 0 };
  shared.users++;
  return shared;
}

function hotspan(withAttrs) {
  const one = sharedTracer();
  const t = one.t;
  const suffix = withAttrs ? '' : ' (no attrs)';
  const names = ['request', 'parse', 'handler', 'validate', 'price', 'line-item', 'render', 'section', 'serialize'].map(
    (n) => n + suffix,
  );
  const [REQ, PARSE, HANDLER, VALIDATE, PRICE, ITEM, RENDER, SECTION, SERIALIZE] = names.map((n) => t.name(n));
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
      const mine = new Set(names);
      const spans = t.stats().reduce((a, r) => a + (mine.has(r.name) ? r.count : 0), 0);
      if (--one.users === 0) t.close();
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

export const MODES = {
  none,
  hotspan: () => hotspan(true),
  'hotspan-noattrs': () => hotspan(false),
  otel,
  naive,
};

