// The OpenTelemetry HTTP workload's server (issue 13):
//   node bench/cases/otel-http-server.mjs <none|noop|sdk|hotspan> <OTLP traces URL>
// @opentelemetry/instrumentation-http on a node:http server, one SERVER span
// per request, the span as that instrumentation makes it (attributes of the
// semantic conventions, the request handled inside the span's context):
//   none     no instrumentation, no tracing
//   noop     the instrumentation on @opentelemetry/api's no-op provider, with
//            the SDK's context manager and propagator (info: what every
//            provider pays before its tracer records anything)
//   sdk      the OpenTelemetry SDK: BatchSpanProcessor with its default
//            settings, the OTLP/HTTP protobuf exporter, the SDK's
//            AsyncLocalStorage context manager and W3C propagator
//   hotspan  hotspan/otel's TracerProvider (register(): its AsyncLocalStorage
//            context manager and W3C propagator), tracer.exportOtlp()
// Both exporters send to the same kind of loopback receiver
// (otlp-receiver.mjs). Listens on 127.0.0.1 (port 0, printed as a JSON line).
// GET /__stats answers the request count, the process CPU time (all
// threads: an exporter's off-thread work counts too; bench/lib/http.mjs) and
// the CPU time of hotspan's exporter thread alone; GET /__drain answers once
// the exporter has sent what has ended so far (the SDK: forceFlush), so its
// late work is charged to the run that made it; GET /__finish shuts
// the exporter down (what is queued is sent, within its deadline) and answers
// the spans produced. Neither is traced (ignoreIncomingRequestHook).
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { rootDir } from '../lib/build.mjs';
import { distIndex } from '../lib/hotspan.mjs';
import { serve, work } from '../lib/serve.mjs';

const require = createRequire(import.meta.url);
const mode = process.argv[2] ?? 'none';
const url = process.argv[3];
if (mode !== 'none' && mode !== 'noop' && url === undefined) throw new Error(`mode ${mode} needs the receiver's URL`);

/** This process's thread ids (Linux). */
const threads = () => readdirSync('/proc/self/task');
// hotspan's exporter threads, whose CPU /__stats reports apart (none for the
// other modes: the SDK exports on the main thread).
let exporterThreads = [];

/** CPU µs the exporter's threads ran (schedstat: ns on a CPU, exact, unlike stat's ticks). */
function exporterCpuUs() {
  let ns = 0;
  for (const t of exporterThreads) {
    try {
      ns += Number(readFileSync(`/proc/self/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread has ended (after the shutdown).
    }
  }
  return ns / 1000;
}

const control = (req) => req.url === '/__stats' || req.url === '/__drain' || req.url === '/__finish';

/** Sets tracing up before node:http is loaded (the instrumentation patches it as it is required). */
function setup() {
  if (mode === 'none') return { produced: () => 0, drain: async () => {}, finish: async () => ({}) };
  const api = require('@opentelemetry/api');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http');
  const instrumentation = new HttpInstrumentation({ ignoreIncomingRequestHook: control });
  const sdkContext = () => {
    const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
    const { W3CTraceContextPropagator } = require('@opentelemetry/core');
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  };
  if (mode === 'noop') {
    sdkContext();
    instrumentation.enable();
    return { produced: () => 0, drain: async () => {}, finish: async () => ({}) };
  }
  if (mode === 'sdk') {
    const { BasicTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');
    const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
    // Every span that ends, counted before the batch processor sees it (which
    // drops silently once its queue is full): produced - received = lost.
    let ended = 0;
    const counter = { onStart() {}, onEnd() { ended++; }, forceFlush: () => Promise.resolve(), shutdown: () => Promise.resolve() };
    const provider = new BasicTracerProvider({ spanProcessors: [counter, new BatchSpanProcessor(new OTLPTraceExporter({ url }))] });
    api.trace.setGlobalTracerProvider(provider);
    sdkContext();
    instrumentation.setTracerProvider(provider);
    instrumentation.enable();
    return {
      produced: () => ended,
      drain: () => provider.forceFlush(),
      finish: async () => {
        await provider.shutdown();
        return {};
      },
    };
  }
  if (mode === 'hotspan') {
    const { Tracer } = require(distIndex);
    const { TracerProvider } = require(`${rootDir}/dist/otel/index.js`);
    const tracer = new Tracer({ backend: 'native', requireNative: true });
    const provider = new TracerProvider(tracer).register();
    // The threads exportOtlp() starts (its worker): their CPU time apart.
    const before = new Set(threads());
    tracer.exportOtlp({ endpoint: url });
    exporterThreads = threads().filter((t) => !before.has(t));
    instrumentation.setTracerProvider(provider);
    instrumentation.enable();
    return {
      produced: () => tracer.counts().produced,
      // Until the worker has sent (or dropped) every span ended so far, at its own pace.
      drain: async () => {
        const produced = tracer.counts().produced;
        const deadline = Date.now() + 60000;
        for (;;) {
          const o = tracer.counts().otlp;
          if (o.sent + o.dropped >= produced) return;
          if (Date.now() > deadline) throw new Error(`the exporter did not send ${produced - o.sent - o.dropped} spans within 60 s`);
          await new Promise((r) => setTimeout(r, 100));
        }
      },
      finish: async () => {
        await tracer.shutdown();
        // shutdown() closed the tracer; counts() still answers.
        return { otlp: tracer.counts().otlp };
      },
    };
  }
  throw new Error(`unknown mode ${mode} (none, noop, sdk, hotspan)`);
}

const tracing = setup();
const http = require('node:http');

let requests = 0;
let finishing = false;

function handle(req, res) {
  if (req.url === '/__stats') {
    const c = process.cpuUsage();
    // Reading the exporter's CPU is left out of the process CPU bench/lib/http.mjs takes apart.
    const exporterUs = exporterCpuUs();
    const a = process.cpuUsage();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ requests, cpuUsBefore: c.user + c.system, cpuUsAfter: a.user + a.system, exporterCpuUs: exporterUs, exporterThreads }));
    return;
  }
  if (req.url === '/__drain') {
    tracing.drain().then(
      () => res.end('{}'),
      (e) => {
        res.statusCode = 500;
        res.end(String(e?.stack ?? e));
      },
    );
    return;
  }
  if (req.url === '/__finish') {
    if (finishing) {
      res.statusCode = 409;
      res.end();
      return;
    }
    finishing = true;
    tracing.finish().then(
      (extra) => {
        res.setHeader('content-type', 'application/json');
        // Read after the shutdown: every request's span has ended by then.
        res.end(JSON.stringify({ requests, produced: tracing.produced(), ...extra }));
      },
      (e) => {
        res.statusCode = 500;
        res.end(String(e?.stack ?? e));
      },
    );
    return;
  }
  requests++;
  const body = JSON.stringify({ path: req.url, h: work(req.url.length, 256) });
  res.setHeader('content-type', 'application/json');
  res.end(body);
}

// The createServer of the node:http required after setup(), as an
// instrumented application would have it.
serve(handle, mode, http.createServer);
