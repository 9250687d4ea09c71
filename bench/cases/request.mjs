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
import { MODES, SPANS_PER_REQUEST, requestOf } from '../lib/request-modes.mjs';

const opts = { rounds: 40, batch: 300, warmupRounds: 8, ...JSON.parse(process.argv[2] ?? '{}') };

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
