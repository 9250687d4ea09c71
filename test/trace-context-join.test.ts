// Trace context in a worker joined to a tracer, on both backends: the ids a
// joined worker derives (inject(), currentContext(), hotspan/otel's
// spanContext()) are the ones the owner's outputs show after the merge. On
// the js backend the worker numbers its timelines and tracks from the shared
// state and derives with the owner's salt (lib/backends/share-transport.ts SharedState).
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';

import { SpanExporterAdapter, TracerProvider } from '../lib/otel/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { Receiver } from './support/otlp-receiver';
import { tracerFactory } from './support/tracers';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const dist = path.join(__dirname, '..', 'dist', 'index.js');
const otel = path.join(__dirname, '..', 'dist', 'otel', 'index.js');
const api = require.resolve('@opentelemetry/api');
const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

interface Ctx {
  traceId: string;
  spanId: string;
}
interface Got {
  headers: { traceparent?: string };
  current: Ctx;
  given: { traceparent?: string };
  otelParent: Ctx;
  otelChild: Ctx;
}

const WORKER = `
  const { workerData, parentPort } = require('node:worker_threads');
  const { Tracer } = require(workerData.dist);
  const { TracerProvider } = require(workerData.otel);
  const api = require(workerData.api);
  const t = Tracer.join(workerData.token, { threadName: 'w' });
  const out = {};
  out.headers = t.trace('w-span', () => t.inject({}));
  out.current = t.trace('w-outer', () => t.trace('w-inner', () => t.currentContext()));
  out.given = t.withContext(t.extract({ traceparent: workerData.parent }), () => t.trace('w-given', () => t.inject({})));
  new TracerProvider(t).register();
  const ot = api.trace.getTracer('w');
  ot.startActiveSpan('w-otel-parent', (p) => {
    out.otelParent = p.spanContext();
    t.trace('w-in-otel', () => 0);
    const c = ot.startSpan('w-otel-child');
    out.otelChild = c.spanContext();
    c.end();
    p.end();
  });
  t.close();
  parentPort.postMessage(JSON.parse(JSON.stringify(out)));
`;

const ctxOf = (traceparent: string | undefined): Ctx => {
  const [, traceId, spanId] = (traceparent ?? '').split('-');
  return { traceId, spanId };
};

describe.each(['native', 'js'] as const)('trace context in a joined worker (%s backend)', (kind) => {
  const make = tracerFactory(kind);

  it.skipIf(kind === 'native' && skipNative)(
    "inject(), currentContext() and hotspan/otel in the worker give the ids the owner's outputs show after the merge",
    async () => {
      const t = make();
      const ot = new TracerProvider(t).getTracer('owner');
      // Made before share(): the worker's 'otel' track must be this one.
      ot.startSpan('owner-before').end();
      t.trace('owner-plain', () => 0);
      const w = new Worker(WORKER, { eval: true, workerData: { token: t.share(), dist, otel, api, parent: PARENT } });
      const exited = new Promise((resolve) => w.once('exit', resolve));
      const got = await new Promise<Got>((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
      });
      await exited;
      ot.startSpan('owner-after').end();
      t.flush();

      const mem = new InMemorySpanExporter();
      const adapter = new SpanExporterAdapter(t, mem);
      expect(await adapter.export()).toBe(10);
      const by = Object.fromEntries(mem.getFinishedSpans().map((s) => [s.name, s]));
      const ids = (name: string): Ctx => ({ traceId: by[name].spanContext().traceId, spanId: by[name].spanContext().spanId });
      const parentOf = (name: string): string | undefined => by[name].parentSpanContext?.spanId;

      // inject() inside a span: that span's ids, a root of its own trace.
      expect(got.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(ids('w-span')).toEqual(ctxOf(got.headers.traceparent));
      expect(parentOf('w-span')).toBeUndefined();
      // currentContext(): the innermost open span, in its root's trace.
      expect(ids('w-inner')).toEqual({ traceId: got.current.traceId, spanId: got.current.spanId });
      expect(parentOf('w-inner')).toBe(ids('w-outer').spanId);
      expect(ids('w-outer').traceId).toBe(got.current.traceId);
      // Under an extracted context: the remote trace, the span's own id.
      expect(ids('w-given')).toEqual(ctxOf(got.given.traceparent));
      expect(ids('w-given').traceId).toBe(ctxOf(PARENT).traceId);
      expect(parentOf('w-given')).toBe(ctxOf(PARENT).spanId);
      // The worker's OTel spans: their spanContext() ids, parents right, hotspan's span inside the active one its child.
      expect(ids('w-otel-parent')).toEqual({ traceId: got.otelParent.traceId, spanId: got.otelParent.spanId });
      expect(ids('w-otel-child')).toEqual({ traceId: got.otelParent.traceId, spanId: got.otelChild.spanId });
      expect(parentOf('w-otel-child')).toBe(got.otelParent.spanId);
      expect(parentOf('w-in-otel')).toBe(got.otelParent.spanId);
      expect(ids('w-in-otel').traceId).toBe(got.otelParent.traceId);
      expect(parentOf('w-otel-parent')).toBeUndefined();
      // Every span its own id, owner's and worker's alike.
      expect(new Set(Object.keys(by).map((n) => ids(n).spanId)).size).toBe(10);

      // One 'otel' track for the owner's and the worker's OTel spans.
      const recs = t.snapshot();
      const onTrack = (name: string) => recs.find((r) => r.name === name)?.timelineName;
      for (const name of ['owner-before', 'w-otel-parent', 'w-otel-child', 'owner-after']) expect(onTrack(name), name).toBe('track: otel');
      expect(onTrack('w-span')).toBe('w');

      // The same ids through the SDK's OTLP/HTTP protobuf exporter, decoded with the vendored schema.
      const receiver = new Receiver();
      try {
        const port = await receiver.listen();
        const otlp = new SpanExporterAdapter(t, new OTLPTraceExporter({ url: `http://127.0.0.1:${String(port)}/v1/traces` }));
        expect(await otlp.export()).toBe(10);
        await otlp.shutdown();
        const sent = Object.fromEntries(receiver.spans().map((s) => [s.name, s]));
        for (const name of Object.keys(by)) {
          expect({ traceId: sent[name]?.traceId, spanId: sent[name]?.spanId }, name).toEqual(ids(name));
        }
        expect(sent['w-otel-child'].parentSpanId).toBe(got.otelParent.spanId);
      } finally {
        await receiver.close();
      }
    },
  );
});
