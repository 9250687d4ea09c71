// OTLP export in a fresh process: node bench/cases/otlp.mjs <options JSON>
// The receiver runs in its own child process (127.0.0.1, port 0) and only
// counts bodies and answers 200, so the figures are the exporter's.
//
// 1. throughput: `spans` spans recorded first (request > 3 children), then
//    exportOtlp() to shutdown() timed: reading, encoding (protobuf, no gzip
//    unless `gzip`), sending, `batch` spans per request. Reps: `reps`.
//    Beside it the process's CPU time over the same window (the exporter's
//    worker; this thread only awaits): spans per CPU-second, which a loaded
//    machine moves less than the wall rate.
// 2. JS-thread cost: two tracers in this process, one exporting (to the
//    same receiver), one not; the recording loop (1000 begin/end pairs) is
//    timed in alternating stretches, so both see the same machine state.
//    The figure is the median over stretches of on/off. Both tracers have
//    the same 64 MiB overwrite budget, filled in the warm-up, so neither
//    faults in fresh memory while the other recycles (with the default
//    budget the exporting tracer, whose sent chunks come back, read 0.91 -
//    0.99x the one that kept growing). The loop records faster than any exporter
//    sends, so the exporter runs flat out and what it did not read in time
//    is overwritten: counted in its `dropped`, sent + dropped + rejected = produced.
// `backend`: 'native' (default, the figures the README table shows) or 'js'.
// Prints one JSON line.
import { spawn } from 'node:child_process';
import { runCase } from '../lib/case-main.mjs';
import { makeTracer } from '../lib/hotspan.mjs';
import { median } from '../lib/stats.mjs';

const opts = { spans: 2e6, reps: 3, batch: 16384, gzip: false, stretches: 40, backend: 'native', ...JSON.parse(process.argv[2] ?? '{}') };

const receiverScript = `
const http = require('node:http');
let bytes = 0;
const server = http.createServer((req, res) => {
  req.on('data', (c) => { bytes += c.length; });
  req.on('end', () => { res.writeHead(200); res.end(); });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
process.on('SIGTERM', () => { process.stdout.write('bytes ' + bytes + '\\n'); process.exit(0); });
`;

function startReceiver() {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['-e', receiverScript], { stdio: ['ignore', 'pipe', 'inherit'] });
    c.stdout.once('data', (d) => resolve({ child: c, port: Number(String(d).trim()) }));
    c.on('error', reject);
  });
}

function record(t, spans) {
  const parent = t.name('request');
  const child = t.name('db.query');
  for (let g = 0; g < spans / 4; g++) {
    t.begin(parent);
    for (let c = 0; c < 3; c++) {
      t.begin(child);
      t.end();
    }
    t.end();
  }
}

async function throughput(url) {
  const rates = [];
  const cpuRates = [];
  for (let r = 0; r < opts.reps; r++) {
    const t = makeTracer(opts.backend, { memoryLimit: 512 * 1024 * 1024 });
    record(t, opts.spans);
    t.flush();
    const produced = t.counts().produced;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    t.exportOtlp({ endpoint: url, maxBatchSize: opts.batch, compression: opts.gzip ? 'gzip' : 'none', scheduledDelayMs: 1 });
    await t.shutdown();
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const c = t.counts().otlp;
    if (c.sent !== produced) throw new Error(`sent ${c.sent} of ${produced} (dropped ${c.dropped})`);
    rates.push(produced / (ms / 1000));
    cpuRates.push(produced / ((cpu.user + cpu.system) / 1e6));
  }
  return { rates, cpuRates };
}

async function jsThreadCost(url) {
  const budget = { memoryLimit: 64 * 2 ** 20, onFull: 'overwrite' };
  const off = makeTracer(opts.backend, budget);
  const on = makeTracer(opts.backend, budget);
  on.exportOtlp({ endpoint: url, maxBatchSize: 2048, scheduledDelayMs: 50 });
  const ids = [off.name('x'), on.name('x')];
  const loop = (t, id) => {
    const s = performance.now();
    for (let i = 0; i < 1000; i++) {
      t.begin(id);
      t.end();
    }
    return (performance.now() - s) * 1e3;  // ns per span
  };
  // Warm-up: both paths JIT-compiled, the exporter running, both budgets full (2.4M spans).
  for (let i = 0; i < 3000; i++) {
    loop(off, ids[0]);
    loop(on, ids[1]);
  }
  const ratios = [];
  const offNs = [];
  const onNs = [];
  for (let s = 0; s < opts.stretches; s++) {
    const a = [];
    const b = [];
    const end = performance.now() + 30;
    // Which goes first alternates from stretch to stretch.
    for (let k = s % 2; performance.now() < end; k++) {
      if (k % 2 === 0) a.push(loop(off, ids[0]));
      else b.push(loop(on, ids[1]));
    }
    offNs.push(median(a));
    onNs.push(median(b));
    ratios.push(median(b) / median(a));
    // Let the exporter's worker and timers run between stretches.
    await new Promise((r) => setImmediate(r));
  }
  await on.shutdown();
  off.close();
  const c = on.counts();
  return { ratio: median(ratios), offNs: median(offNs), onNs: median(onNs), sent: c.otlp.sent, dropped: c.otlp.dropped, rejected: c.otlp.rejected, produced: c.produced };
}

runCase(async () => {
  const { child, port } = await startReceiver();
  const url = `http://127.0.0.1:${port}/v1/traces`;
  try {
    const { rates, cpuRates } = await throughput(url);
    const cost = await jsThreadCost(url);
    process.stdout.write(
      JSON.stringify({ backend: opts.backend, spans: opts.spans, batch: opts.batch, gzip: opts.gzip, spansPerSecond: rates, medianSpansPerSecond: median(rates), spansPerCpuSecond: cpuRates, medianSpansPerCpuSecond: median(cpuRates), jsThread: cost }) + '\n',
    );
  } finally {
    child.kill('SIGTERM');
  }
});
