// OTLP export under head sampling: node bench/cases/otlp-sampling.mjs <options JSON>
// What reaches a loopback receiver (bench/cases/otlp-receiver.mjs, its own
// process) when the same workload is exported with no sampling (ratio 1) and
// at `ratio`: `trees` trees (request > 3 children) per run, recorded first,
// then exportOtlp() to shutdown(). Each rep runs both, side by side in one
// process (fresh tracers), in alternating order. Per run: bytes and spans
// received, and the process CPU time from exportOtlp() to the end of
// shutdown() (the exporter's worker reading, deciding, encoding, sending).
// Figures: medians over `reps`, and the ratios sampled / unsampled. A third
// run per rep samples at `ratio` with the tail keep on (slow roots, errors;
// none here, so the same spans are sent): its export CPU less the head-only
// run's, per span, is what deciding with the keep adds, quoted against the
// CPU of recording a plain span (the recording loops of the same runs).
// `backend`: 'native' (default) or 'js'. Prints one JSON line.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCase } from '../lib/case-main.mjs';
import { makeTracer } from '../lib/hotspan.mjs';
import { median } from '../lib/stats.mjs';

const opts = { trees: 100000, ratio: 0.01, reps: 5, backend: 'native', ...JSON.parse(process.argv[2] ?? '{}') };
const here = path.dirname(fileURLToPath(import.meta.url));

function startReceiver() {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [path.join(here, 'otlp-receiver.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
    c.stdout.once('data', (d) => resolve({ child: c, port: JSON.parse(String(d).split('\n')[0]).port }));
    c.on('error', reject);
  });
}

async function counted(port) {
  const res = await fetch(`http://127.0.0.1:${port}/__count`);
  return res.json();
}

async function run(port, ratio, keep) {
  const t = makeTracer(opts.backend, { sample: keep ? { ratio, keep: { slowerThanMs: 60000, errors: true } } : { ratio } });
  const parent = t.name('request');
  const child = t.name('db.query');
  const rec0 = process.cpuUsage();
  for (let g = 0; g < opts.trees; g++) {
    t.begin(parent);
    for (let c = 0; c < 3; c++) {
      t.begin(child);
      t.end();
    }
    t.end();
  }
  const rec = process.cpuUsage(rec0);
  const before = await counted(port);
  const cpu0 = process.cpuUsage();
  t.exportOtlp({ endpoint: `http://127.0.0.1:${port}/v1/traces`, compression: 'none', scheduledDelayMs: 10 });
  await t.shutdown();
  const cpu = process.cpuUsage(cpu0);
  const after = await counted(port);
  const o = t.counts().otlp;
  if (o.sent + o.sampledOut + o.dropped + o.rejected !== t.counts().produced) throw new Error('counts do not add up');
  return {
    bytes: after.bytes - before.bytes,
    spans: after.spans - before.spans,
    sampledOut: o.sampledOut,
    dropped: o.dropped,
    cpuMs: (cpu.user + cpu.system) / 1000,
    recordNsPerSpan: ((rec.user + rec.system) * 1000) / t.counts().produced,
    produced: t.counts().produced,
  };
}

runCase(async () => {
  const { child, port } = await startReceiver();
  try {
    const all = { 1: [], [opts.ratio]: [], keep: [] };
    const modes = [['1', 1, false], [String(opts.ratio), opts.ratio, false], ['keep', opts.ratio, true]];
    for (let r = 0; r < opts.reps; r++) {
      // The starting mode rotates from rep to rep.
      for (let i = 0; i < modes.length; i++) {
        const [key, ratio, keep] = modes[(i + r) % modes.length];
        all[key].push(await run(port, ratio, keep));
      }
    }
    const med = (ratio, k) => median(all[ratio].map((x) => x[k]));
    const out = { case: 'otlp-sampling', ...opts };
    for (const ratio of [1, opts.ratio]) {
      out[`ratio ${ratio}`] = { bytes: med(ratio, 'bytes'), spans: med(ratio, 'spans'), sampledOut: med(ratio, 'sampledOut'), dropped: med(ratio, 'dropped'), cpuMs: med(ratio, 'cpuMs') };
    }
    out.bytesRatio = med(opts.ratio, 'bytes') / med(1, 'bytes');
    out.cpuRatio = med(opts.ratio, 'cpuMs') / med(1, 'cpuMs');
    out.keep = { bytes: med('keep', 'bytes'), spans: med('keep', 'spans'), sampledOut: med('keep', 'sampledOut'), cpuMs: med('keep', 'cpuMs') };
    // Paired within each rep: the keep run's export CPU less the head-only run's, per span.
    const added = all.keep.map((k, i) => ((k.cpuMs - all[opts.ratio][i].cpuMs) * 1e6) / k.produced);
    out.keepDecisionNsPerSpan = median(added);
    out.plainSpanRecordNs = median([...all[1], ...all[opts.ratio], ...all.keep].map((x) => x.recordNsPerSpan));
    out.keepDecisionOverPlainSpan = out.keepDecisionNsPerSpan / out.plainSpanRecordNs;
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    child.kill('SIGTERM');
  }
});
