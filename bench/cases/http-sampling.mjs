// Issue 32's figures: what sampling saves on the HTTP workload.
//   node bench/cases/http-sampling.mjs ['{"rounds":3,"ratio":0.01,"keepSlowerThanMs":30}']
// The HTTP workload's server (http-server.mjs --mix: 20 spans a request; of
// every 200 requests 2 slow, waiting 60 ms, and 1 failing, its auth span
// flagged error) under autocannon, in three modes, each round every mode once
// in a fresh server, the order rotating (bench/lib/http.mjs: a warm-up, a
// saturated run, a run at a fixed request rate):
//   none     no tracing: the floor the CPU figures are taken against
//   all      hotspan exporting every trace (OTEL_TRACES_SAMPLER=always_on)
//   head     hotspan at `ratio` (traceidratio), the head decision alone
//   sampled  hotspan at `ratio`, keeping slow traces
//            (HOTSPAN_KEEP_SLOWER_THAN_MS) and failed ones
//            (HOTSPAN_KEEP_ERRORS) whole
// Both exporting modes send to a fresh loopback receiver
// (otlp-receiver.mjs --traces) that decodes every request with the vendored
// OTLP schema and counts spans per trace. Figures, medians over rounds:
//   - bytes received per request served, sampled over all (target <= 1/30);
//   - the slow and failed traces that arrived complete (all 20 spans), over
//     the slow and failed requests served, every span counted (target 100%);
//   - the server CPU per request that tracing adds at the fixed rate, paired
//     with the untraced server of the same round (target: sampled below all;
//     head tells what the tail keep adds to the head decision's cost).
// Every exporting run also checks produced = sent + sampledOut + dropped +
// rejected. Prints one JSON line.
import { runCase } from '../lib/case-main.mjs';
import { getJson, measureMode, startServer, stopServer } from '../lib/http.mjs';
import { paired, summarize } from '../lib/stats.mjs';

const opts = {
  rounds: 3,
  warmupSec: 2,
  seconds: 4,
  connections: 10,
  fixedRate: 1000,
  fixedSeconds: 4,
  ratio: 0.01,
  keepSlowerThanMs: 30,
  ...JSON.parse(process.argv[2] ?? '{}'),
};
const MODES = ['none', 'all', 'head', 'sampled'];
const SPANS_PER_REQUEST = 20;

const envOf = (mode) => {
  const ratio = { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: String(opts.ratio) };
  if (mode === 'sampled') return { ...ratio, HOTSPAN_KEEP_SLOWER_THAN_MS: String(opts.keepSlowerThanMs), HOTSPAN_KEEP_ERRORS: 'true' };
  if (mode === 'head') return { ...ratio, HOTSPAN_KEEP_SLOWER_THAN_MS: '', HOTSPAN_KEEP_ERRORS: '' };
  return { OTEL_TRACES_SAMPLER: 'always_on', HOTSPAN_KEEP_SLOWER_THAN_MS: '', HOTSPAN_KEEP_ERRORS: '' };
};

async function measure(mode, load) {
  if (mode === 'none') {
    const m = await measureMode('none', load, { args: ['none', '--mix'] });
    return { cpuUsPerReqFixed: m.cpuUsPerReqFixed, rps: m.rps };
  }
  const receiver = await startServer('receiver', 'otlp-receiver.mjs', ['--traces']);
  try {
    const url = `http://127.0.0.1:${receiver.port}/v1/traces`;
    const m = await measureMode(mode, load, {
      args: ['hotspan-otlp', url, '--mix'],
      env: envOf(mode),
      drain: (port) => getJson(port, '/__drain'),
      finish: async (port) => ({ ...(await getJson(port, '/__finish')), served: await getJson(port, '/__stats') }),
    });
    const { otlp, produced, served } = m.finished;
    if (otlp.sent + otlp.sampledOut + otlp.dropped + otlp.rejected !== produced) {
      throw new Error(`${mode}: counts do not add up: ${JSON.stringify({ produced, otlp })}`);
    }
    const got = await getJson(receiver.port, '/__count');
    const traces = await getJson(receiver.port, '/__traces');
    const complete = (kind) => traces[kind]?.[SPANS_PER_REQUEST] ?? 0;
    const arrived = (kind) => Object.values(traces[kind] ?? {}).reduce((a, b) => a + b, 0);
    return {
      cpuUsPerReqFixed: m.cpuUsPerReqFixed,
      rps: m.rps,
      requests: served.requests,
      bytes: got.bytes,
      bytesPerRequest: got.bytes / served.requests,
      spansReceived: got.spans,
      produced,
      otlp,
      slow: { served: served.kinds.slow, arrived: arrived('slow'), complete: complete('slow') },
      fail: { served: served.kinds.fail, arrived: arrived('fail'), complete: complete('fail') },
      other: { served: served.requests - served.kinds.slow - served.kinds.fail, arrived: arrived('other'), complete: complete('other') },
      incomplete: traces,
    };
  } finally {
    await stopServer(receiver.child);
  }
}

runCase(async () => {
  const load = { warmupSec: opts.warmupSec, seconds: opts.seconds, connections: opts.connections, fixedRate: opts.fixedRate, fixedSeconds: opts.fixedSeconds };
  const per = Object.fromEntries(MODES.map((m) => [m, []]));
  for (let r = 0; r < opts.rounds; r++) {
    for (let k = 0; k < MODES.length; k++) {
      const mode = MODES[(k + r) % MODES.length];
      per[mode][r] = await measure(mode, load);
      process.stderr.write(`http-sampling round ${r + 1}/${opts.rounds} ${mode} done\n`);
    }
  }
  const field = (m, f) => per[m].map((x) => x[f]);
  const added = (m) => paired(field(m, 'cpuUsPerReqFixed'), field('none', 'cpuUsPerReqFixed'), (x, y) => x - y);
  const share = (kind) => {
    const served = per.sampled.reduce((a, x) => a + x[kind].served, 0);
    const complete = per.sampled.reduce((a, x) => a + x[kind].complete, 0);
    return { served, complete, share: complete / served };
  };
  const result = {
    options: opts,
    bytesPerRequest: { all: summarize(field('all', 'bytesPerRequest')), head: summarize(field('head', 'bytesPerRequest')), sampled: summarize(field('sampled', 'bytesPerRequest')) },
    bytesRatio: summarize(paired(field('sampled', 'bytesPerRequest'), field('all', 'bytesPerRequest'), (s, a) => s / a)),
    keptWhole: { slow: share('slow'), fail: share('fail') },
    addedCpuUsPerReqFixed: { all: summarize(added('all')), head: summarize(added('head')), sampled: summarize(added('sampled')) },
    cpuUsPerReqFixed: Object.fromEntries(MODES.map((m) => [m, summarize(field(m, 'cpuUsPerReqFixed'))])),
    rounds: per,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
});
