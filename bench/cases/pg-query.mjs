// Added CPU per pg query on loopback (issue 33's figures), each mode over the
// same program with no tracing (`none`):
//   hotspan       hotspan/auto's own pg instrument (HOTSPAN_INSTRUMENT=pg)
//   otel-noop     @opentelemetry/instrumentation-pg on @opentelemetry/api's
//                 no-op provider, with the SDK's AsyncLocalStorage context
//                 manager: the instrumentation's own floor, what every
//                 provider pays before its tracer records anything
//   otel-hotspan  instrumentation-pg on hotspan/otel's provider, zero-code:
//                 hotspan/auto with HOTSPAN_INSTRUMENT=otel:pg
//   otel-sdk      instrumentation-pg on the OpenTelemetry SDK
//                 (bench/lib/otel.mjs: BasicTracerProvider, BatchSpanProcessor,
//                 an exporter that counts and forgets) and the SDK's context
//                 manager
//
//   node bench/cases/pg-query.mjs [--rounds=5] [--queries=4000]
//
// Starts its own PostgreSQL (initdb into a temporary directory, postgres on
// 127.0.0.1; as nobody through setpriv when run as root), then per round runs
// each mode in a fresh process, the order rotating: a pg.Client runs
// `SELECT $1::int` (one parameter, a one-row answer) in sequence, 500 untimed
// then `queries` timed; the figure is the process's CPU time (user + system,
// all threads) over the timed queries, per query. A mode's figure is its
// median over rounds, and its minimum (a busy machine only adds CPU time);
// "added" is that minus the untraced one. The
// server's CPU is not the client's and is not counted. hotspan writes its
// trace at exit, after the timed stretch: its cost per span there is in the
// bench's writers group, not here. Every traced mode keeps the request
// context in an AsyncLocalStorage (hotspan from when pg loads; the
// context managers), which on Node 20 rides on async_hooks and costs on every
// promise: on a busy 2-core machine a scratch mode with only an
// AsyncLocalStorage entered took most of hotspan's added CPU (33 of 35 us
// per query by the minimums, 63 of 82 by the medians).
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const MODES = ['none', 'hotspan', 'otel-noop', 'otel-hotspan', 'otel-sdk'];

async function child(mode, port, queries) {
  if (mode === 'otel-sdk' || mode === 'otel-noop') {
    const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
    const { registerInstrumentations } = require('@opentelemetry/instrumentation');
    const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg');
    const api = require('@opentelemetry/api');
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    if (mode === 'otel-sdk') {
      const { makeOtel } = await import('../lib/otel.mjs');
      const otel = makeOtel();
      api.trace.setGlobalTracerProvider(otel.provider);
      registerInstrumentations({ instrumentations: [new PgInstrumentation()], tracerProvider: otel.provider });
    } else {
      // No provider registered: the API's no-op one.
      registerInstrumentations({ instrumentations: [new PgInstrumentation()] });
    }
  }
  const pg = require('pg');
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  await client.connect();
  for (let i = 0; i < 500; i++) await client.query('SELECT $1::int AS n', [i]);
  const before = process.cpuUsage();
  for (let i = 0; i < queries; i++) await client.query('SELECT $1::int AS n', [i]);
  const used = process.cpuUsage(before);
  await client.end();
  process.stdout.write(JSON.stringify({ mode, usPerQuery: (used.user + used.system) / queries }) + '\n');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startPostgres() {
  const versions = readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)).sort((a, b) => b - a);
  const bin = `/usr/lib/postgresql/${versions[0]}/bin`;
  const asRoot = process.getuid() === 0;
  const as = (file, args) => (asRoot ? ['setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--reset-env', file, ...args]] : [file, args]);
  const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-bench-pg-'));
  if (asRoot) chownSync(dir, 65534, 65534);
  const [f, a] = as(path.join(bin, 'initdb'), ['-D', path.join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync']);
  const init = spawnSync(f, a, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb: ${init.stderr}`);
  const port = await freePort();
  const [pf, pa] = as(path.join(bin, 'postgres'), ['-D', path.join(dir, 'data'), '-h', '127.0.0.1', '-p', String(port), '-k', dir, '-c', 'fsync=off']);
  const server = spawn(pf, pa, { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise((resolve, reject) => {
    let out = '';
    const take = (c) => {
      out += c;
      if (/ready to accept connections/.test(out)) resolve();
    };
    server.stdout.on('data', take);
    server.stderr.on('data', take);
    server.once('exit', () => reject(new Error(`postgres exited: ${out}`)));
  });
  return {
    port,
    stop: async () => {
      const gone = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGINT');
      await gone;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// hotspan/auto's instruments per mode (HOTSPAN_INSTRUMENT), for the modes that run under it.
const AUTO = { hotspan: 'pg', 'otel-hotspan': 'otel:pg' };

function runMode(mode, port, queries, out) {
  const pre = AUTO[mode] !== undefined ? ['--require', path.join(root, 'dist', 'auto.js')] : [];
  const r = spawnSync(process.execPath, [...pre, fileURLToPath(import.meta.url), 'child', mode, String(port), String(queries)], {
    encoding: 'utf8',
    cwd: root,
    env: { ...process.env, HOTSPAN_OUT: out, HOTSPAN_INSTRUMENT: AUTO[mode] ?? '' },
  });
  if (r.status !== 0) throw new Error(`${mode}: ${r.stderr}`);
  if (AUTO[mode] !== undefined) {
    // The traced modes did trace: a span per query in the file (Chrome JSON, one event per line), nothing warned.
    if (r.stderr !== '') throw new Error(`${mode}: ${r.stderr}`);
    const name = mode === 'hotspan' ? 'SELECT postgres' : 'pg.query:SELECT postgres';
    const spans = readFileSync(out, 'utf8').split('\n').filter((l) => l.startsWith(`{"name":${JSON.stringify(name)},"cat":"async","ph":"b"`)).length;
    if (spans < queries + 500) throw new Error(`${mode}: ${String(spans)} spans named ${name} in ${out}, for ${String(queries + 500)} queries`);
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()).usPerQuery;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const arg = (name, d) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? d);
  const rounds = arg('rounds', 5);
  const queries = arg('queries', 4000);
  const pg = await startPostgres();
  const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-bench-pgq-'));
  const got = Object.fromEntries(MODES.map((m) => [m, []]));
  try {
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < MODES.length; k++) {
        const mode = MODES[(r + k) % MODES.length];
        got[mode].push(runMode(mode, pg.port, queries, path.join(tmp, `t${r}.json`)));
      }
    }
  } finally {
    await pg.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
  for (const m of MODES) {
    console.log(`${m.padEnd(13)} CPU per query: median ${median(got[m]).toFixed(1)} us, min ${Math.min(...got[m]).toFixed(1)} us (rounds: ${got[m].map((x) => x.toFixed(1)).join(', ')})`);
  }
  // The median, and the minimum (a process preempted or slowed by a busy machine only adds CPU time).
  for (const [what, of] of [['median', median], ['min', (xs) => Math.min(...xs)]]) {
    const added = (m) => of(got[m]) - of(got.none);
    const us = (m) => `${added(m).toFixed(1)} us`;
    console.log(`added CPU per query (${what}s): hotspan's pg instrument ${us('hotspan')}; instrumentation-pg on the no-op provider (its floor) ${us('otel-noop')}, on hotspan/otel ${us('otel-hotspan')}, on the SDK ${us('otel-sdk')}`);
    const over = (m) => of(got[m]) - of(got['otel-noop']);
    console.log(`  over instrumentation-pg's floor (${what}s): hotspan/otel ${over('otel-hotspan').toFixed(1)} us, SDK ${over('otel-sdk').toFixed(1)} us; ratio ${(over('otel-hotspan') / over('otel-sdk')).toFixed(2)}`);
    console.log(`  hotspan's pg instrument over instrumentation-pg on the SDK (${what}s): ratio ${(added('hotspan') / added('otel-sdk')).toFixed(2)} (target at most 0.2)`);
  }
  // Paired within each round (the modes of a round ran back to back), then the median over rounds.
  const paired = (m, base) => median(got[m].map((x, r) => x - got[base][r])).toFixed(1);
  console.log(
    `added CPU per query (paired by round, median): hotspan's pg ${paired('hotspan', 'none')} us; instrumentation-pg floor ${paired('otel-noop', 'none')} us, ` +
      `on hotspan/otel ${paired('otel-hotspan', 'none')} us (${paired('otel-hotspan', 'otel-noop')} over the floor), on the SDK ${paired('otel-sdk', 'none')} us (${paired('otel-sdk', 'otel-noop')} over the floor)`,
  );
}

if (process.argv[2] === 'child') await child(process.argv[3], Number(process.argv[4]), Number(process.argv[5]));
else await main();
