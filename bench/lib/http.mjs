// Drives a bench server (bench/cases/http-server.mjs unless told otherwise)
// with autocannon (in this process) on loopback: a fresh server per
// measurement, a warm-up run that is discarded, then a measured run; modes
// alternate within each round. A server answers GET /__stats with
// { requests, cpuUsBefore, cpuUsAfter } and prints { port } as its first line.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { benchDir } from './build.mjs';

const require = createRequire(import.meta.url);

/**
 * Starts bench/cases/<script> with `args`; resolves with { child, port } once it printed its port.
 * `how`: { command, args } to run instead (e.g. under valgrind), cwd, env (over this process's), timeoutMs to start (20 s).
 */
export function startServer(mode, script = 'http-server.mjs', args = [mode], how = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(how.command ?? process.execPath, how.args ?? [path.join(benchDir, 'cases', script), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(how.cwd ? { cwd: how.cwd } : {}),
      ...(how.env ? { env: { ...process.env, ...how.env } } : {}),
    });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    const rl = readline.createInterface({ input: child.stdout });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server ${mode} did not start: ${err.slice(-500)}`));
    }, how.timeoutMs ?? 20000);
    rl.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve({ child, port: JSON.parse(line).port });
      } catch (e) {
        reject(e);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server ${mode} exited (${code}): ${err.slice(-500)}`));
    });
  });
}

export function stopServer(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

// autocannon's own histogram keeps whole milliseconds; on loopback the
// latencies are around 1 ms, so p50/p99 are taken from its 'response' events
// (float ms from hrtime) instead.
function load(url, seconds, connections, keepLatencies, overallRate) {
  const autocannon = require('autocannon');
  return new Promise((resolve, reject) => {
    const lat = [];
    const opts = { url, connections, duration: seconds, pipelining: 1 };
    if (overallRate) opts.overallRate = overallRate;
    const inst = autocannon(opts, (err, res) =>
      err ? reject(err) : resolve({ res, lat }),
    );
    if (keepLatencies) {
      inst.on('response', (_client, status, _bytes, responseTime) => {
        if (status >= 200 && status < 300) lat.push(responseTime);
      });
    }
  });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))];
}

/** GET http://127.0.0.1:<port><path> as JSON (a non-2xx answer is an Error). */
export async function getJson(port, urlPath) {
  const res = await fetch(`http://127.0.0.1:${port}${urlPath}`);
  if (!res.ok) throw new Error(`GET ${urlPath}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  return res.json();
}

const getStats = (port) => getJson(port, '/__stats');

/**
 * One measurement: returns { rps, p99Ms, p50Ms, cpuUsPerReq, cpuUsPerReqFixed, errors, non2xx, stats, saturatedStats, fixedStats, finished }.
 * `server`: { script, args, env } of another server than http-server.mjs,
 * drain(port), awaited after the warm-up and after each measured run, before
 * the stats that open and close it (an exporter's late work belongs to the
 * run that made it), and finish(port),
 * awaited after the load and before the server stops (its result is
 * `finished`).
 */
export async function measureMode(mode, { warmupSec, seconds, connections, fixedRate, fixedSeconds }, server = {}) {
  const { child, port } = await startServer(mode, server.script, server.args, { env: server.env });
  try {
    const url = `http://127.0.0.1:${port}/`;
    await load(url, warmupSec, connections, false);
    // The warm-up's export is the warm-up's: sent before the measured run starts.
    if (server.drain) await server.drain(port);
    const s0 = await getStats(port);
    const { res: r, lat } = await load(url, seconds, connections, true);
    // An exporter's work for this run is charged to it, not to the next.
    if (server.drain) await server.drain(port);
    const stats = await getStats(port);
    const served = stats.requests - s0.requests;
    // Then a fixed request rate below saturation: server CPU per request at
    // the same rate for every mode is the tracing cost per request, with the
    // same batching of the event loop (at saturation batching shifts with speed).
    let cpuUsPerReqFixed = NaN;
    let fixedStats;
    if (fixedRate) {
      await load(url, 0.5, connections, false, fixedRate);
      const f0 = await getStats(port);
      await load(url, fixedSeconds, connections, false, fixedRate);
      if (server.drain) await server.drain(port);
      const f1 = await getStats(port);
      fixedStats = [f0, f1];
      const n = f1.requests - f0.requests;
      if (n > 0) cpuUsPerReqFixed = (f1.cpuUsBefore - f0.cpuUsAfter) / n;
    }
    const finished = server.finish ? await server.finish(port) : undefined;
    const sorted = Float64Array.from(lat).sort();
    return {
      rps: r.requests.total / r.duration,
      p99Ms: percentile(sorted, 0.99),
      p50Ms: percentile(sorted, 0.5),
      cpuUsPerReq: served > 0 ? (stats.cpuUsBefore - s0.cpuUsAfter) / served : NaN,
      cpuUsPerReqFixed,
      errors: r.errors + r.timeouts,
      non2xx: r.non2xx,
      stats,
      // The /__stats answers around the saturated run and the fixed-rate one.
      saturatedStats: [s0, stats],
      fixedStats,
      finished,
    };
  } finally {
    await stopServer(child);
  }
}
