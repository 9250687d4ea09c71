// Resident memory per committed span, in a fresh process:
//   node --expose-gc bench/cases/rss.mjs <options JSON>
// RSS after a warm-up and a GC, then `spans` begin(id)/end() pairs, flush,
// GC, RSS again; the growth divided by the committed count (from stats()).
// Prints one JSON line.
import { runCase } from '../lib/case-main.mjs';
import { makeTracer } from '../lib/hotspan.mjs';

const opts = { spans: 1e7, backend: 'native', ...JSON.parse(process.argv[2] ?? '{}') };
const gc = globalThis.gc ?? (() => {});

function main() {
  const t = makeTracer(opts.backend);
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
  for (let i = 0; i < n; i++) {
    t.begin(id);
    t.end();
  }
  t.flush();
  gc();
  gc();
  const after = process.memoryUsage();
  const row = t.stats().find((r) => r.name === 'rss.span');
  const committed = row ? row.count : 0;
  const out = {
    backend: opts.backend,
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
