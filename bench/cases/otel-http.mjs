// The OpenTelemetry HTTP bench (issue 13): node bench/cases/otel-http.mjs [options JSON]
// @opentelemetry/instrumentation-http on a node:http server
// (otel-http-server.mjs) under autocannon, in the modes none, noop, sdk and
// hotspan (see the server). Each round measures every mode once, in a fresh
// server, the order rotating from round to round (bench/lib/http.mjs: a
// warm-up, a saturated run, then a run at a fixed request rate so every mode
// sees the same event-loop batching); sdk and hotspan export to a fresh
// loopback receiver (otlp-receiver.mjs) that decodes every request with the
// vendored OTLP schema. Each measured run ends once the exporter has sent
// what the run produced (the server's /__drain), so its late work is
// charged to that run. After the load the server shuts its exporter down and
// the receiver is asked what arrived: produced - received = lost.
// Then the drop scenario (`slow`; null skips it): sdk and hotspan alone,
// saturated, each sending to a receiver that answers every request
// `receiverDelayMs` late (a slow collector). The SDK's BatchSpanProcessor
// (defaults: a 2048-span queue, one 512-span export at a time) drops what
// does not fit its queue; hotspan's spans wait in the tracer's memory
// budget. Both are counted by the receiver the same way.
// hotspan's exporter thread (a worker isolate) does one memory-reducing
// full GC about 8 s after it starts (V8 starts that timer at the first
// old-space growth of an isolate that has had no full GC; 20-35 ms with the
// helper threads, once per process, seen with --trace-gc). Inside a measured
// stretch it adds several µs per request at the fixed rate (3000 requests);
// the full run's warm-up (bench/run.mjs, 10 s) lets it pass first, in every
// mode alike, so the fixed-rate figures are steady-state costs. With the
// default 1 s warm-up here it still falls in the measured stretches.
// Prints one JSON line: per mode the medians over rounds, the CPU tracing
// adds per request paired with the untraced server of the same round, the
// span counts of every round, and the drop scenario's counts.
import os from 'node:os';
import { runCase } from '../lib/case-main.mjs';
import { getJson, measureMode, startServer, stopServer } from '../lib/http.mjs';
import { paired, summarize } from '../lib/stats.mjs';

const opts = {
  rounds: 3,
  warmupSec: 1,
  seconds: 3,
  connections: 10,
  fixedRate: 1000,
  fixedSeconds: 3,
  modes: ['none', 'noop', 'sdk', 'hotspan'],
  slow: { receiverDelayMs: 1000, rounds: 1, warmupSec: 1, seconds: 3, connections: 10 },
  ...JSON.parse(process.argv[2] ?? '{}'),
};
const EXPORTING = new Set(['sdk', 'hotspan']);

/**
 * One mode once under `load` (measureMode's options), its receiver answering
 * `receiverDelayMs` late: the measurement, and for an exporting mode the
 * spans produced, received, lost.
 */
async function measure(mode, load = opts, receiverDelayMs = 0) {
  if (!EXPORTING.has(mode)) return measureMode(mode, load, { script: 'otel-http-server.mjs', args: [mode] });
  const receiver = await startServer('receiver', 'otlp-receiver.mjs', [String(receiverDelayMs)]);
  try {
    const url = `http://127.0.0.1:${receiver.port}/v1/traces`;
    const m = await measureMode(mode, load, { script: 'otel-http-server.mjs', args: [mode, url], drain: (port) => getJson(port, '/__drain'), finish: (port) => getJson(port, '/__finish') });
    // hotspan's exporter thread alone (CPU µs per request), saturated and at the fixed rate.
    const exporterPer = ([a, b] = []) => (a && b && b.requests > a.requests ? (b.exporterCpuUs - a.exporterCpuUs) / (b.requests - a.requests) : NaN);
    if (mode === 'hotspan') {
      m.exporterCpuUsPerReq = exporterPer(m.saturatedStats);
      m.exporterCpuUsPerReqFixed = exporterPer(m.fixedStats);
    }
    const got = await getJson(receiver.port, '/__count');
    const produced = m.finished.produced;
    m.spans = {
      requests: m.finished.requests,
      produced,
      received: got.spans,
      lost: produced - got.spans,
      duplicates: got.spans - got.uniqueSpanIds,
      badRequests: got.bad,
      exportRequests: got.requests,
      ...(m.finished.otlp ? { otlp: m.finished.otlp } : {}),
    };
    return m;
  } finally {
    await stopServer(receiver.child);
  }
}

/**
 * The spans of one exporting mode's rounds, summed: produced, received, lost,
 * duplicates, and for hotspan the drops its exporter counted (which must
 * equal lost: nothing lost uncounted).
 */
function spanTotals(rounds) {
  const ok = rounds.filter(Boolean);
  const sum = (f) => ok.reduce((a, s) => a + s[f], 0);
  const out = { produced: sum('produced'), received: sum('received'), lost: sum('lost'), duplicates: sum('duplicates') };
  if (ok.some((s) => s.otlp)) out.countedDropped = ok.reduce((a, s) => a + (s.otlp?.dropped ?? 0), 0);
  return out;
}

/** sdk and hotspan, saturated, against a slow receiver: who loses spans (module comment). */
async function dropScenario(cfg, errors) {
  const load = { warmupSec: cfg.warmupSec, seconds: cfg.seconds, connections: cfg.connections, fixedRate: 0 };
  const order = ['sdk', 'hotspan'];
  const per = { sdk: [], hotspan: [] };
  for (let r = 0; r < cfg.rounds; r++) {
    for (let k = 0; k < order.length; k++) {
      const mode = order[(k + r) % order.length];
      try {
        per[mode][r] = await measure(mode, load, cfg.receiverDelayMs);
      } catch (e) {
        errors.push(`otel-http slow receiver ${mode}: ${e.message}`);
        per[mode][r] = null;
      }
      process.stderr.write(`otel-http slow receiver round ${r + 1}/${cfg.rounds} ${mode} done\n`);
    }
  }
  const modes = {};
  for (const m of order) {
    const spans = per[m].map((x) => (x ? x.spans : null));
    modes[m] = { rps: summarize(per[m].map((x) => (x ? x.rps : NaN))), spans, ...spanTotals(spans) };
  }
  return { config: cfg, modes };
}

runCase(async () => {
  const loadavgStart = os.loadavg();
  const per = Object.fromEntries(opts.modes.map((m) => [m, []]));
  const errors = [];
  for (let r = 0; r < opts.rounds; r++) {
    for (let k = 0; k < opts.modes.length; k++) {
      const mode = opts.modes[(k + r) % opts.modes.length];
      try {
        per[mode][r] = await measure(mode);
      } catch (e) {
        errors.push(`otel-http ${mode}: ${e.message}`);
        per[mode][r] = null;
      }
      process.stderr.write(`otel-http round ${r + 1}/${opts.rounds} ${mode} done\n`);
    }
  }
  const field = (m, f) => (per[m] ?? []).map((x) => (x ? x[f] : NaN));
  const modes = {};
  for (const m of opts.modes) {
    const out = {
      rps: summarize(field(m, 'rps')),
      p99Ms: summarize(field(m, 'p99Ms')),
      p50Ms: summarize(field(m, 'p50Ms')),
      cpuUsPerReq: summarize(field(m, 'cpuUsPerReq')),
      cpuUsPerReqFixed: summarize(field(m, 'cpuUsPerReqFixed')),
      loadErrors: per[m].map((x) => (x ? x.errors + x.non2xx : null)),
    };
    if (m === 'hotspan') {
      // Its exporter thread's share of cpuUsPerReq (info: what the worker costs per request).
      out.exporterCpuUsPerReq = summarize(field(m, 'exporterCpuUsPerReq'));
      out.exporterCpuUsPerReqFixed = summarize(field(m, 'exporterCpuUsPerReqFixed'));
    }
    if (m !== 'none' && per.none) {
      out.rpsLoss = summarize(paired(field(m, 'rps'), field('none', 'rps'), (x, y) => 1 - x / y));
      // What tracing adds to the server's CPU per request, paired within the
      // round: at saturation, and at the fixed rate (the goal's figure).
      out.addedCpuUs = summarize(paired(field(m, 'cpuUsPerReq'), field('none', 'cpuUsPerReq'), (x, y) => x - y));
      out.addedCpuUsFixed = summarize(paired(field(m, 'cpuUsPerReqFixed'), field('none', 'cpuUsPerReqFixed'), (x, y) => x - y));
    }
    if (EXPORTING.has(m)) {
      out.spans = per[m].map((x) => (x ? x.spans : null));
      Object.assign(out, spanTotals(out.spans));
      // What the tracer itself adds over the instrumentation on the no-op
      // provider (its context propagation included), paired within the round.
      if (per.noop) {
        out.overNoopCpuUs = summarize(paired(field(m, 'cpuUsPerReq'), field('noop', 'cpuUsPerReq'), (x, y) => x - y));
        out.overNoopCpuUsFixed = summarize(paired(field(m, 'cpuUsPerReqFixed'), field('noop', 'cpuUsPerReqFixed'), (x, y) => x - y));
      }
    }
    modes[m] = out;
  }
  const slow = opts.slow ? await dropScenario(opts.slow, errors) : null;
  const ratio = (f) => (modes.hotspan?.[f] && modes.sdk?.[f] ? summarize(paired(modes.hotspan[f].runs, modes.sdk[f].runs, (x, y) => x / y)) : summarize([]));
  process.stdout.write(
    `${JSON.stringify({
      config: opts,
      // Each exporting run's CPU was read after /__drain (render.mjs says so).
      drained: true,
      modes,
      // hotspan's added CPU per request / the SDK's, paired within each round.
      hotspanOverSdkFixed: ratio('addedCpuUsFixed'),
      hotspanOverSdk: ratio('addedCpuUs'),
      // The same over the no-op provider: the tracers' own parts (info).
      hotspanOverSdkOverNoop: ratio('overNoopCpuUs'),
      hotspanOverSdkOverNoopFixed: ratio('overNoopCpuUsFixed'),
      slow,
      errors,
      loadavgStart,
      loadavgEnd: os.loadavg(),
    })}\n`,
  );
});
