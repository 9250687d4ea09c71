// Added client CPU per operation against a real server on loopback (issue
// 33's figures), each mode over the same program with no tracing (`none`):
//   hotspan       hotspan/auto's own instrument for the library
//   otel-noop     the OpenTelemetry instrumentation on @opentelemetry/api's
//                 no-op provider, with the SDK's AsyncLocalStorage context
//                 manager: the instrumentation's own floor, what every
//                 provider pays before its tracer records anything
//   otel-hotspan  the instrumentation on hotspan/otel's provider, zero-code:
//                 hotspan/auto with HOTSPAN_INSTRUMENT=otel:<name>
//   otel-sdk      the instrumentation on the OpenTelemetry SDK
//                 (bench/lib/otel.mjs: BasicTracerProvider, BatchSpanProcessor,
//                 an exporter that counts and forgets) and the SDK's context
//                 manager
//
// A case (bench/cases/pg-query.mjs, redis-command.mjs) gives its server, its
// workload and its instrumentation, and calls clientCost(). Per round each
// mode runs in a fresh process, the order rotating: `warm` operations
// untimed (--warm, default 5000, the same for every mode: V8 optimizes the
// instruments' and the SDK's code within the first thousands, so a shorter
// warm-up times their compilation, not their steady state), then `ops` timed; the figure is the process's CPU time (user +
// system, all threads) over the timed operations, per operation. A mode's
// figure is its median over rounds, and its minimum (a busy machine only adds
// CPU time); "added" is that minus the untraced one. The server's CPU is not
// the client's and is not counted. hotspan writes its trace at exit, after
// the timed stretch: its cost per span there is in the bench's writers group,
// not here. Every traced mode keeps the request context in an
// AsyncLocalStorage (hotspan from when the library loads; the context
// managers), which on Node 20 rides on async_hooks and costs on every promise.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { median } from './stats.mjs';

const require = createRequire(import.meta.url);
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const MODES = ['none', 'hotspan', 'otel-noop', 'otel-hotspan', 'otel-sdk'];
/** Untimed operations per process before the timed ones (--warm). */
const WARM = 5000;

/**
 * spec:
 *   file          the case's import.meta.url (its child processes run it)
 *   unit          what one operation is ('query', 'command')
 *   target        the library's name in the output ('pg')
 *   hotspan       HOTSPAN_INSTRUMENT for the hotspan mode ('pg')
 *   otel          the OpenTelemetry instrumentation's short name ('pg')
 *   instrumentation()  a new instance of that instrumentation (otel modes)
 *   spanNames     { hotspan, 'otel-hotspan' }: port => the name every operation's span has
 *   startServer() { port, stop() }
 *   connect(port) { run(i): Promise, close(): Promise }: the client, after the instrumentation
 *   skip          modes left out, each with the reason printed ({ 'otel-hotspan': '...' })
 */
export async function clientCost(spec) {
  if (process.argv[2] === 'child') return child(spec, process.argv[3], Number(process.argv[4]), Number(process.argv[5]), Number(process.argv[6]));
  const arg = (name, d) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? d);
  const rounds = arg('rounds', 5);
  const ops = arg('ops', 4000);
  const warm = arg('warm', WARM);
  if (!Number.isInteger(warm) || warm < 0) throw new RangeError(`--warm must be a whole number of ${spec.unit}s, got ${String(warm)}`);
  console.log(`${String(rounds)} rounds; per process ${String(warm)} operations (one ${spec.unit} each) untimed, then ${String(ops)} timed`);
  const server = await spec.startServer();
  const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-bench-client-'));
  const modes = MODES.filter((m) => spec.skip?.[m] === undefined);
  const got = Object.fromEntries(modes.map((m) => [m, []]));
  try {
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < modes.length; k++) {
        const mode = modes[(r + k) % modes.length];
        got[mode].push(runMode(spec, mode, server.port, warm, ops, path.join(tmp, `t${r}.json`)));
      }
    }
  } finally {
    await server.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
  report(spec, got);
}

async function child(spec, mode, port, warm, ops) {
  if (mode === 'otel-sdk' || mode === 'otel-noop') {
    const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
    const { registerInstrumentations } = require('@opentelemetry/instrumentation');
    const api = require('@opentelemetry/api');
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    if (mode === 'otel-sdk') {
      const { makeOtel } = await import('./otel.mjs');
      const otel = makeOtel();
      api.trace.setGlobalTracerProvider(otel.provider);
      registerInstrumentations({ instrumentations: [spec.instrumentation()], tracerProvider: otel.provider });
    } else {
      // No provider registered: the API's no-op one.
      registerInstrumentations({ instrumentations: [spec.instrumentation()] });
    }
  }
  const client = await spec.connect(port);
  for (let i = 0; i < warm; i++) await client.run(i);
  const before = process.cpuUsage();
  for (let i = 0; i < ops; i++) await client.run(i);
  const used = process.cpuUsage(before);
  await client.close();
  process.stdout.write(JSON.stringify({ mode, usPerOp: (used.user + used.system) / ops }) + '\n');
}

function runMode(spec, mode, port, warm, ops, out) {
  const auto = { hotspan: spec.hotspan, 'otel-hotspan': `otel:${spec.otel}` }[mode];
  const pre = auto !== undefined ? ['--require', path.join(root, 'dist', 'auto.js')] : [];
  const r = spawnSync(process.execPath, [...pre, fileURLToPath(spec.file), 'child', mode, String(port), String(warm), String(ops)], {
    encoding: 'utf8',
    cwd: root,
    env: { ...process.env, HOTSPAN_OUT: out, HOTSPAN_INSTRUMENT: auto ?? '' },
  });
  if (r.status !== 0) throw new Error(`${mode}: ${r.stderr}`);
  if (auto !== undefined) {
    // The traced modes did trace: a span per operation in the file (Chrome JSON, one event per line), nothing warned.
    if (r.stderr !== '') throw new Error(`${mode}: ${r.stderr}`);
    const name = spec.spanNames[mode](port);
    const head = `{"name":${JSON.stringify(name)},"cat":"async","ph":"b"`;
    const spans = readFileSync(out, 'utf8').split('\n').filter((l) => l.startsWith(head)).length;
    if (spans < ops + warm) throw new Error(`${mode}: ${String(spans)} spans named ${name} in ${out}, for ${String(ops + warm)} ${spec.unit}s`);
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()).usPerOp;
}

function report(spec, got) {
  const { unit, target } = spec;
  const inst = `the OpenTelemetry ${target} instrumentation`;
  for (const [m, why] of Object.entries(spec.skip ?? {})) console.log(`${m.padEnd(13)} not run: ${why}`);
  const ran = (m) => got[m] !== undefined;
  for (const m of MODES.filter(ran)) {
    console.log(`${m.padEnd(13)} CPU per ${unit}: median ${median(got[m]).toFixed(1)} us, min ${Math.min(...got[m]).toFixed(1)} us (rounds: ${got[m].map((x) => x.toFixed(1)).join(', ')})`);
  }
  // The median, and the minimum (a process preempted or slowed by a busy machine only adds CPU time).
  for (const [what, of] of [['median', median], ['min', (xs) => Math.min(...xs)]]) {
    const added = (m) => of(got[m]) - of(got.none);
    const us = (m) => `${added(m).toFixed(1)} us`;
    const onHotspan = ran('otel-hotspan') ? `, on hotspan/otel ${us('otel-hotspan')}` : '';
    console.log(`added CPU per ${unit} (${what}s): hotspan's ${target} instrument ${us('hotspan')}; ${inst} on the no-op provider (its floor) ${us('otel-noop')}${onHotspan}, on the SDK ${us('otel-sdk')}`);
    const over = (m) => of(got[m]) - of(got['otel-noop']);
    if (ran('otel-hotspan')) {
      console.log(`  over the instrumentation's floor (${what}s): hotspan/otel ${over('otel-hotspan').toFixed(1)} us, SDK ${over('otel-sdk').toFixed(1)} us; ratio ${(over('otel-hotspan') / over('otel-sdk')).toFixed(2)}`);
    }
    console.log(`  hotspan's ${target} instrument over ${inst} on the SDK (${what}s): ratio ${(added('hotspan') / added('otel-sdk')).toFixed(2)} (target at most 0.2)`);
  }
  // Paired within each round (the modes of a round ran back to back), then the median over rounds.
  const paired = (m, base) => median(got[m].map((x, r) => x - got[base][r])).toFixed(1);
  const pairedHotspan = ran('otel-hotspan') ? `on hotspan/otel ${paired('otel-hotspan', 'none')} us (${paired('otel-hotspan', 'otel-noop')} over the floor), ` : '';
  console.log(
    `added CPU per ${unit} (paired by round, median): hotspan's ${target} ${paired('hotspan', 'none')} us; instrumentation floor ${paired('otel-noop', 'none')} us, ` +
      `${pairedHotspan}on the SDK ${paired('otel-sdk', 'none')} us (${paired('otel-sdk', 'otel-noop')} over the floor)`,
  );
}
