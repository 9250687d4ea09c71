// The OpenTelemetry HTTP workload (otel-http-server.mjs) in instructions
// instead of CPU time, so the figure does not move with the machine's load:
//   node bench/cases/otel-http-callgrind.mjs ['{"warm":1000,"requests":2000,"modes":["none","noop","sdk","hotspan"]}']
// Each mode's server runs under valgrind --tool=callgrind (threads counted
// apart); autocannon (10 connections) sends `warm` requests, the counters are
// zeroed (callgrind_control), `requests` more are sent and the counters
// dumped. Per mode: instructions per request of every thread (summed, and
// each apart in threadIrPerRequest), of the main thread alone (thread 1:
// the instrumentation, the tracer's JS and the binding), and what each
// adds to the uninstrumented server's. The V8 platform threads' share (GC,
// compilers) is counted in the total; valgrind runs threads one at a time,
// so their waiting can count too: the main thread's figure is the steadier
// one. Slow (about a minute per mode), so not part of `npm run bench`.
// Prints one JSON line.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { runCase } from '../lib/case-main.mjs';
import { getJson, startServer, stopServer } from '../lib/http.mjs';

const require = createRequire(import.meta.url);
const opts = { warm: 1000, requests: 2000, connections: 10, modes: ['none', 'noop', 'sdk', 'hotspan'], ...JSON.parse(process.argv[2] ?? '{}') };

function drive(url, amount) {
  const autocannon = require('autocannon');
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: opts.connections, amount, timeout: 120 }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

/** Instructions of the first dump in `dir` (callgrind_control --dump), per thread (the file suffix after '-'). */
function dumped(dir) {
  const perThread = {};
  for (const f of readdirSync(dir)) {
    const m = /^cg\.out\.\d+\.1-(\d+)$/.exec(f);
    if (!m) continue;
    const total = /^(?:summary|totals): (\d+)/m.exec(readFileSync(path.join(dir, f), 'utf8'));
    if (total) perThread[Number(m[1])] = Number(total[1]);
  }
  return perThread;
}

async function measure(mode) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `otel-http-cg-${mode}-`));
  const receiver = await startServer('receiver', 'otlp-receiver.mjs', []);
  try {
    const script = path.join(path.dirname(new URL(import.meta.url).pathname), 'otel-http-server.mjs');
    const { child, port } = await startServer(mode, undefined, undefined, {
      command: 'valgrind',
      args: ['--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${path.join(dir, 'cg.out.%p')}`, process.execPath, script, mode, `http://127.0.0.1:${receiver.port}/v1/traces`],
      cwd: dir,
      timeoutMs: 120000,
    });
    try {
      const url = `http://127.0.0.1:${port}/`;
      await drive(url, opts.warm);
      execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' });
      const s0 = await getJson(port, '/__stats');
      const res = await drive(url, opts.requests);
      const s1 = await getJson(port, '/__stats');
      execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
      const served = s1.requests - s0.requests;
      const perThread = dumped(dir);
      const all = Object.values(perThread).reduce((a, b) => a + b, 0);
      // Every thread's figure too (callgrind's thread numbers, in creation order): the OTLP exporter's worker is
      // the one the hotspan mode has beside the V8 platform threads the other modes have as well.
      const threadIrPerRequest = Object.fromEntries(Object.entries(perThread).map(([t, ir]) => [t, Math.round(ir / served)]));
      return { served, failed: res.errors + res.timeouts + res.non2xx, irPerRequest: all / served, mainIrPerRequest: (perThread[1] ?? NaN) / served, threads: Object.keys(perThread).length, threadIrPerRequest };
    } finally {
      await stopServer(child);
    }
  } finally {
    await stopServer(receiver.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

runCase(async () => {
  const loadavgStart = os.loadavg();
  const modes = {};
  for (const m of opts.modes) {
    modes[m] = await measure(m);
    process.stderr.write(`otel-http-callgrind ${m}: ${Math.round(modes[m].irPerRequest)} Ir/request (main thread ${Math.round(modes[m].mainIrPerRequest)})\n`);
  }
  const none = modes.none;
  for (const [m, x] of Object.entries(modes)) {
    if (m === 'none' || !none) continue;
    x.addedIrPerRequest = x.irPerRequest - none.irPerRequest;
    x.addedMainIrPerRequest = x.mainIrPerRequest - none.mainIrPerRequest;
  }
  const ratio = (f) => (modes.hotspan && modes.sdk ? modes.hotspan[f] / modes.sdk[f] : NaN);
  process.stdout.write(
    `${JSON.stringify({
      config: opts,
      modes,
      // hotspan's added instructions per request / the SDK's.
      hotspanOverSdk: ratio('addedIrPerRequest'),
      hotspanOverSdkMainThread: ratio('addedMainIrPerRequest'),
      loadavgStart,
      loadavgEnd: os.loadavg(),
    })}\n`,
  );
});
