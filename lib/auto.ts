// hotspan/auto: zero-code tracing. `node --require hotspan/auto app.js` or
// `node --import hotspan/auto app.mjs` records HTTP, fetch, DNS, TCP/TLS,
// GC, PostgreSQL (pg), MySQL (mysql2) and Redis (ioredis, redis) spans, the routes express
// and fastify matched (on the HTTP server spans) and the event-loop delay as
// counters (lib/auto/auto-record.ts) from the program's first line and writes
// the trace when the process ends (lib/common/exit-write.ts).
// Configured by environment:
//   HOTSPAN_OUT         the file written at exit (default hotspan-<pid>.pftrace);
//                       its extension picks the format (.pftrace, .json). The
//                       Node processes the program starts inherit it and are
//                       traced too, each into a file of its own on the same
//                       time axis (lib/auto/auto-out.ts; `hotspan run` joins them)
//   HOTSPAN_INSTRUMENT  a comma list of http, fetch, dns, net, gc, eventloop,
//                       pg, mysql, redis, ioredis, express, fastify (default:
//                       all; the last six only act when their library runs:
//                       lib/auto/auto-db.ts, lib/auto/auto-route.ts), and
//                       `otel` or `otel:<name>,...` for OpenTelemetry
//                       instrumentations on hotspan/otel's provider
//                       (lib/auto/instrument-list.ts, lib/auto/auto-otel.ts)
//   HOTSPAN_REPORT=1    also print a one-screen report to stderr at exit
//   HOTSPAN_CPU_PROFILE V8's CPU samples of the main thread in the trace: 1 for
//                       one every 1 ms, or the interval in us (10 to 1000000);
//                       0 or unset: none (lib/auto/auto-profile.ts)
//   HOTSPAN_DUMP_SLOWER_THAN_MS, HOTSPAN_DUMP_ERRORS, HOTSPAN_DUMP_PATH,
//   HOTSPAN_DUMP_WINDOW_MS, HOTSPAN_DUMP_MAX_PER_MINUTE  the tracer's dumpOn
//                       (docs/sampling.md): a request (a root span) slower or
//                       failed writes the last window to a numbered file
//   HOTSPAN_FLUSH_MS    ms between rewrites of the file with the trace so far
//                       (0: none; default 1000 under hotspan run, else 0), so a killed process leaves
//                       its spans up to the last one (lib/auto/auto-flush.ts)
// Each child process gets TRACEPARENT (the current span's context) and a
// flow id in its environment; a child under a TRACEPARENT runs its spans
// under that parent (lib/auto/auto-spawn.ts).
// and, for OTLP/HTTP export of the automatic spans as they end (lib/auto/auto-export.ts:
// with the file's parents, a trace id per request tree, traceparent in and out;
// what is left is sent at exit, SIGINT and SIGTERM included), the OTEL_* variables
// of tracer.exportOtlp() (lib/otlp/otlp-config.ts):
//   OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  turn it on
//   OTEL_TRACES_EXPORTER    a comma list; export unless it is set without `otlp` (e.g. none)
//   OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL,
//   _HEADERS, _TIMEOUT, _COMPRESSION, OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
//   OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT  as for exportOtlp()
// Each process's trace names it by what it runs (TracerOptions.processName's
// default: `node server.js` -> server.js, a cluster worker's with " (worker N)").
// Runs on the main thread only (workers inherit --require). The program's own
// Tracer instances work beside it; this one is `require('hotspan/auto').tracer`.

import { isMainThread } from 'node:worker_threads';

import { otlpSink, otlpWanted } from './auto/auto-export';
import { SpanAdder, withAutoSpans, writeAutoFile } from './auto/auto-file';
import { flushInterval, markEnded, RUN_FLUSH_MS, startFlushing } from './auto/auto-flush';
import { autoOutPath, PARTS_DIR_ENV, sharedOrigin } from './auto/auto-out';
import { startAutoProfile } from './auto/auto-profile';
import { followChildren, linkToParent } from './auto/auto-spawn';
import { AutoRecorder, type Instrument } from './auto/auto-record';
import { parseInstrumentList } from './auto/instrument-list';
import { calibrate } from './common/clock';
import { atExit } from './common/exit-write';
import { outputFormat } from './common/output';
import { NativeBackend } from './backends/native-backend';
import { createBackend } from './tracer/backend-choice';
import { dumpOnFromEnv } from './tracer/dump-on';
import { unwrapped } from './tracer/async-context';
import { internals } from './tracer/internal';
import { resolveOptions } from './tracer/options';
import { Tracer, tracerOver } from './tracer/tracer';

/** hotspan's instruments HOTSPAN_INSTRUMENT selects, after starting the OpenTelemetry instrumentations it names on `tracer`. */
function instruments(tracer: Tracer): Set<Instrument> {
  const warn = (m: string): void => process.emitWarning(m);
  const list = parseInstrumentList(process.env.HOTSPAN_INSTRUMENT, warn);
  if (list.otel === undefined) return list.hotspan;
  // Only now: hotspan/otel needs @opentelemetry/api (an optional peer dependency).
  let otel: typeof import('./otel/provider');
  try {
    otel = require('./otel/provider') as typeof import('./otel/provider');
  } catch (e) {
    warn(`hotspan/auto: HOTSPAN_INSTRUMENT names otel, but @opentelemetry/api did not load (${(e as Error).message.split('\n')[0]}); no OpenTelemetry instrumentation`);
    return list.hotspan;
  }
  const { startOtel } = require('./auto/auto-otel') as typeof import('./auto/auto-otel');
  const provider = new otel.TracerProvider(tracer).register();
  return startOtel(list.otel, provider, list.hotspan, warn, (line) => process.stderr.write(`${line}\n`)).hotspan;
}

function start(): { tracer: Tracer; out: string } | undefined {
  if (!isMainThread) return undefined;
  const asked = process.env.HOTSPAN_OUT ?? `hotspan-${String(process.pid)}.pftrace`;
  let format;
  try {
    format = outputFormat(asked);
  } catch (e) {
    process.emitWarning(`hotspan/auto: HOTSPAN_OUT: ${(e as Error).message}; not tracing`);
    return undefined;
  }
  // A file of its own, on the time axis of the traced process that started this one (lib/auto/auto-out.ts).
  const out = autoOutPath(process.env, asked, format, process.pid);
  const own = calibrate().originNs;
  const origin = sharedOrigin(process.env, () => own);
  const options = resolveOptions({ threadName: 'main' });
  // Triggered dumps of slow or failed requests (HOTSPAN_DUMP_*: lib/tracer/dump-on.ts), by the recorder's roots below.
  const dumpOn = dumpOnFromEnv(process.pid);
  const tracer = tracerOver(createBackend(options, origin), dumpOn === undefined ? undefined : { on: dumpOn, processName: options.processName });
  // Linked to the span of the traced process that started this one, and each child to its span (lib/auto/auto-spawn.ts).
  const parts = process.env[PARTS_DIR_ENV];
  const axis = { own, shared: origin };
  linkToParent(tracer, process.env, parts, axis, (m) => process.emitWarning(m));
  followChildren(tracer, parts, axis);
  // The recording backend under the async context a parent's TRACEPARENT turned on (lib/auto/auto-spawn.ts).
  const backend = unwrapped(tracer[internals]().backend);
  // The recorder's times are on this process's own origin; the tracer's, on the run's (lib/auto/auto-file.ts).
  const adder = backend instanceof NativeBackend ? new SpanAdder(backend, Number(own - origin) / 1e6) : undefined;
  let stopFlushing = (): void => {};
  const stopProfile = startAutoProfile(tracer, process.env, (m) => process.emitWarning(m));
  atExit(`the trace to ${out}`, () => {
    stopFlushing();
    stopProfile(); // its samples go into the trace before the write
    rec.stop();
    tracer.flush();
    if (rec.dropped > 0) process.stderr.write(`hotspan/auto: ${String(rec.dropped)} spans dropped past the limit\n`);
    // Streamed in bounded memory on the native backend (lib/auto/auto-file.ts).
    writeAutoFile(backend, rec, out, format, options.processName, adder);
    markEnded(parts, process.pid);
  });
  // After atExit above: at exit the recorder's last spans (rec.stop() above) end before the exporter's exit hook sends
  // (lib/common/exit-write.ts runs its hooks in order, on every exit path).
  const sink = otlpWanted(process.env) ? otlpSink() : undefined;
  const rec = new AutoRecorder(instruments(tracer), (name, value) => tracer.counter(name, value), sink);
  // On the native backend each span goes into the tracer as it ends, not held until exit (lib/auto/auto-file.ts).
  if (adder !== undefined) rec.handTo(adder);
  const dumps = tracer[internals]().dumps;
  if (dumps !== undefined) {
    // On the tracer's axis as the adder puts them; elsewhere the dump adds the held spans as the exit write does.
    const shift = adder === undefined ? 0 : Number(own - origin) / 1e6;
    if (adder === undefined) dumps.withSpans((snap) => withAutoSpans(snap, rec));
    rec.onRootEnd((s) => dumps.recordedRoot(s.name, s.start + shift, s.end + shift, s.error));
  }
  // The trace so far rewritten every HOTSPAN_FLUSH_MS, for a process killed before its exit write (lib/auto/auto-flush.ts).
  const every = flushInterval(process.env, parts !== undefined && parts !== '' ? RUN_FLUSH_MS : 0, (m) => process.emitWarning(m));
  if (backend instanceof NativeBackend && adder !== undefined) stopFlushing = startFlushing(backend, out, format, every);
  if (process.env.HOTSPAN_REPORT === '1') {
    // After the write above ('exit' listeners run in order).
    process.on('exit', () => {
      const { buildReport, formatReport } = require('./cli/report') as typeof import('./cli/report');
      try {
        process.stderr.write(formatReport(buildReport(out, 10, 'total')));
      } catch (e) {
        process.stderr.write(`hotspan/auto: no report: ${(e as Error).message}\n`);
      }
    });
  }
  return { tracer, out };
}

const started = start();

/** The automatic tracer (undefined in workers or when HOTSPAN_OUT is unusable). */
export const tracer: Tracer | undefined = started?.tracer;
/** The file written at exit. */
export const outPath: string | undefined = started?.out;
