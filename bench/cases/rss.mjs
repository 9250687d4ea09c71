// Resident memory per committed span, in a fresh process:
//   node --expose-gc bench/cases/rss.mjs <options JSON>
// RSS after a warm-up and a GC, then `spans` begin(id)/end() pairs, flush,
// GC, RSS again; the growth divided by the committed count (from stats()).
// Prints one JSON line. With { attrs: true } each span is
// begin(id, { route, bytes }) as micro.mjs's hotspan-attrs (an interned
// string of four and a number): the attribute span's stored bytes.
// With { memoryLimit, onFull }: the budget case instead (budgetMain): RSS is
// sampled every 1M spans from before the tracer exists, and the growth is
// compared with the budget; the counts are checked against the spans made.
import { runCase } from '../lib/case-main.mjs';
import { makeTracer } from '../lib/hotspan.mjs';

const opts = { spans: 1e7, backend: 'native', ...JSON.parse(process.argv[2] ?? '{}') };
const gc = globalThis.gc ?? (() => {});
const MiB = 2 ** 20;

function budgetMain() {
  const { memoryLimit, onFull = 'overwrite' } = opts;
  gc();
  gc();
  const before = process.memoryUsage().rss;
  const t = makeTracer(opts.backend, { memoryLimit, onFull });
  const id = t.name('rss.span');
  const n = Math.floor(opts.spans);
  const batch = 1e6;
  let maxRss = before;
  const t0 = performance.now();
  for (let done = 0; done < n; done += batch) {
    const m = Math.min(batch, n - done);
    for (let i = 0; i < m; i++) {
      t.begin(id);
      t.end();
    }
    maxRss = Math.max(maxRss, process.memoryUsage().rss);
  }
  const ms = performance.now() - t0;
  t.flush();
  const c = t.counts();
  const growth = maxRss - before;
  const out = {
    backend: opts.backend,
    spans: n,
    memoryLimit,
    onFull,
    nsPerSpan: (ms * 1e6) / n,
    rssBefore: before,
    rssMax: maxRss,
    rssGrowthMiB: growth / MiB,
    boundMiB: memoryLimit / MiB + 16,
    withinBound: growth <= memoryLimit + 16 * MiB,
    produced: c.produced,
    kept: c.kept,
    overwritten: c.overwritten,
    dropped: c.dropped,
    countsExact: c.produced === n && c.produced === c.kept + c.overwritten + c.dropped,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

function main() {
  if (opts.memoryLimit !== undefined) return budgetMain();
  // The whole run fits the budget: this case measures bytes per kept span.
  const t = makeTracer(opts.backend, { memoryLimit: 2 ** 33 });
  const id = t.name('rss.span');
  const warm = t.name('rss.warmup');
  for (let i = 0; i < 100000; i++) {
    t.begin(warm);
    t.end();
  }
  t.flush();
  gc();
  gc();
  const before = process.memoryUsage();
  const n = Math.floor(opts.spans);
  if (opts.attrs) {
    const ROUTES = ['/users', '/orders', '/items', '/health'];
    for (let i = 0; i < n; i++) {
      t.begin(id, { route: ROUTES[i & 3], bytes: i });
      t.end();
    }
  } else {
    for (let i = 0; i < n; i++) {
      t.begin(id);
      t.end();
    }
  }
  t.flush();
  gc();
  gc();
  const after = process.memoryUsage();
  const row = t.stats().find((r) => r.name === 'rss.span');
  const committed = row ? row.count : 0;
  const out = {
    backend: opts.backend,
    attrs: opts.attrs === true,
    spans: n,
    committed,
    rssBefore: before.rss,
    rssAfter: after.rss,
    bytesPerSpan: committed > 0 ? (after.rss - before.rss) / committed : NaN,
    heapBytesPerSpan: committed > 0 ? (after.heapUsed - before.heapUsed) / committed : NaN,
    externalBytesPerSpan: committed > 0 ? (after.external + after.arrayBuffers - before.external - before.arrayBuffers) / committed : NaN,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

runCase(main);
