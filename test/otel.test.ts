// hotspan/otel: OpenTelemetry spans recorded as hotspan spans (TracerProvider),
// hotspan's spans out through an OpenTelemetry SpanExporter
// (SpanExporterAdapter, checked with the SDK's InMemorySpanExporter), and
// @opentelemetry/instrumentation-http on a loopback server and client.
import { AsyncLocalStorage } from 'node:async_hooks';
import * as path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import { context, defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, vi } from 'vitest';

import { internals } from '../lib/tracer/internal';
import { SpanExporterAdapter, TraceContextPropagator, TracerProvider } from '../lib/otel/index';
import { Receiver } from './support/otlp-receiver';
import { tracerFactory } from './support/tracers';
import { runChild } from './support/child-run';

const root = path.join(__dirname, '..');

// One spec for both backends: the js backend's ids come from the core's resolver through WebAssembly.
describe.each(['native', 'js'] as const)('hotspan/otel TracerProvider (%s backend)', (kind) => {
  const make = tracerFactory(kind);

  it('records the Span API as a hotspan span with real ids, and the adapter hands the same ids to an exporter', async () => {
    const t = make();
    const provider = new TracerProvider(t);
    const ot = provider.getTracer('scope-a', '1.2.3');
    const parent = ot.startSpan('parent', { kind: SpanKind.SERVER, attributes: { 'http.method': 'GET' } });
    const child = ot.startSpan('child', { links: [{ context: parent.spanContext(), attributes: { why: 'test' } }] }, trace.setSpan(ROOT_CONTEXT, parent));
    child.setAttribute('n', 1).setAttributes({ s: 'x', list: [1, 2] });
    child.addEvent('evt', { k: true });
    child.recordException(new TypeError('boom'));
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'failed' });
    child.updateName('child renamed');
    const t0 = Date.now();
    child.end();
    expect(child.isRecording()).toBe(false);
    // Explicit start and end times (epoch ms, in the past: a reader does not follow ticks past now).
    await delay(5);
    parent.end(t0 + 2);
    const explicit = ot.startSpan('explicit', { startTime: t0 - 100 }, ROOT_CONTEXT);
    explicit.end(t0 - 50);

    expect(parent.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(child.spanContext().spanId).not.toBe(parent.spanContext().spanId);

    const exporter = new InMemorySpanExporter();
    const adapter = new SpanExporterAdapter(t, exporter);
    expect(await adapter.export()).toBe(3);
    const spans = exporter.getFinishedSpans();
    const p = spans.find((s) => s.name === 'parent');
    const c = spans.find((s) => s.name === 'child renamed');
    const e = spans.find((s) => s.name === 'explicit');
    expect(p && c && e).toBeTruthy();
    if (!p || !c || !e) return;
    expect(p.spanContext()).toMatchObject(parent.spanContext());
    expect(c.spanContext().spanId).toBe(child.spanContext().spanId);
    expect(c.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(p.parentSpanContext).toBeUndefined();
    expect(p.kind).toBe(SpanKind.SERVER);
    expect(p.attributes).toEqual({ 'http.method': 'GET' });
    expect(c.attributes).toEqual({ n: 1, s: 'x', list: [1, 2] });
    expect(c.status).toEqual({ code: SpanStatusCode.ERROR, message: 'failed' });
    expect(c.events.map((x) => x.name)).toEqual(['evt', 'exception']);
    expect(c.events[1].attributes).toMatchObject({ 'exception.type': 'TypeError', 'exception.message': 'boom' });
    expect(c.links[0].context.spanId).toBe(parent.spanContext().spanId);
    expect(c.instrumentationScope).toEqual({ name: 'scope-a', version: '1.2.3' });
    // Explicit times survive to the exporter. They are stored as clock ticks
    // and read back through the timeline's (tick, ns) anchors, which a loaded
    // machine measures less exactly (0.5 ms seen under stress-ng): 2 ms.
    const ms = (h: [number, number]) => h[0] * 1000 + h[1] / 1e6;
    const within = (got: number, want: number) => expect(Math.abs(got - want), `${String(got)} vs ${String(want)}`).toBeLessThan(2 + t.clockBoundMs);
    within(ms(e.startTime), t0 - 100);
    within(ms(e.endTime), t0 - 50);
    within(ms(p.endTime), t0 + 2);
    // The same spans in hotspan's own records: on the otel track, error flag, reserved keys.
    const recs = t.snapshot();
    const rc = recs.find((r) => r.name === 'child renamed');
    expect(rc?.timelineName).toBe('track: otel');
    expect(rc?.error).toBe(true);
    expect(rc?.attrs?.['hotspan.status_message']).toBe('failed');
    // Nothing new: nothing exported again.
    expect(await adapter.export()).toBe(0);
  });

  it('a span started on one await path and ended on another lands on an async track, with its parent', async () => {
    const t = make();
    const provider = new TracerProvider(t).register();
    try {
      const ot = trace.getTracer('x');
      let handOff: ReturnType<typeof ot.startSpan> | undefined;
      await ot.startActiveSpan('outer', async (outer) => {
        await delay(1);
        handOff = ot.startSpan('inner'); // parent: outer, found through the context manager across the await
        outer.end();
      });
      await delay(1);
      handOff?.end();
      const exporter = new InMemorySpanExporter();
      await new SpanExporterAdapter(t, exporter).export();
      const spans = exporter.getFinishedSpans();
      const outer = spans.find((s) => s.name === 'outer');
      const inner = spans.find((s) => s.name === 'inner');
      expect(inner?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
      expect(t.snapshot().find((r) => r.name === 'inner')?.async).toBe(true);
    } finally {
      trace.disable();
      context.disable();
      void provider;
    }
  });

  it("hotspan's own spans begun inside an active OTel span are its children, also after an await; outside, roots", async () => {
    const t = make();
    const provider = new TracerProvider(t).register();
    try {
      const ot = trace.getTracer('bridge');
      t.trace('before', () => 0);
      await ot.startActiveSpan('otel-parent', async (span) => {
        t.trace('sync-child', () => t.trace('grandchild', () => 0));
        await delay(1);
        t.begin('after-await');
        t.end();
        span.end();
      });
      t.trace('after', () => 0);
      const mem = new InMemorySpanExporter();
      expect(await new SpanExporterAdapter(t, mem).export()).toBe(6);
      const by = Object.fromEntries(mem.getFinishedSpans().map((s) => [s.name, s]));
      const parent = by['otel-parent'].spanContext();
      for (const name of ['sync-child', 'after-await']) {
        expect(by[name].parentSpanContext?.spanId, name).toBe(parent.spanId);
        expect(by[name].spanContext().traceId, name).toBe(parent.traceId);
      }
      expect(by.grandchild.parentSpanContext?.spanId).toBe(by['sync-child'].spanContext().spanId);
      expect(by.grandchild.spanContext().traceId).toBe(parent.traceId);
      for (const name of ['before', 'after']) {
        expect(by[name].parentSpanContext, name).toBeUndefined();
        expect(by[name].spanContext().traceId, name).not.toBe(parent.traceId);
      }
    } finally {
      trace.disable();
      context.disable();
      void provider;
    }
  });

  it("OTel contexts and hotspan's own current spans nest, the innermost the parent, kept in the provider's one AsyncLocalStorage", async () => {
    const t = make();
    const provider = new TracerProvider(t).register();
    try {
      const ot = trace.getTracer('nest');
      const foreign = trace.wrapSpanContext({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: TraceFlags.SAMPLED });
      await ot.startActiveSpan('outer', async (outer) => {
        // The context manager turned the tracer's async context on: it keeps its current span there, not in an AsyncLocalStorage of its own.
        expect(t[internals]().asyncContext()?.storage).not.toBeInstanceOf(AsyncLocalStorage);
        await t.traceAsync('ta', async () => {
          await delay(1);
          t.trace('in-ta', () => 0);
          // hotspan's current span is not an OTel context: OTel's active span stays the outer one.
          expect(trace.getActiveSpan()).toBe(outer);
          await ot.startActiveSpan('inner', async (inner) => {
            await delay(1);
            t.trace('in-inner', () => 0);
            // A context whose span is not hotspan's leaves the tracer's current span as it was.
            await context.with(trace.setSpan(context.active(), foreign), async () => {
              await delay(1);
              t.trace('in-foreign', () => 0);
            });
            inner.end();
          });
          t.trace('after-inner', () => 0);
        });
        t.trace('after-ta', () => 0);
        outer.end();
      });
      const mem = new InMemorySpanExporter();
      expect(await new SpanExporterAdapter(t, mem).export()).toBe(8);
      const by = Object.fromEntries(mem.getFinishedSpans().map((s) => [s.name, s]));
      const parentOf = (name: string): string | undefined => by[name].parentSpanContext?.spanId;
      const id = (name: string): string => by[name].spanContext().spanId;
      expect(parentOf('ta')).toBe(id('outer'));
      expect(parentOf('in-ta')).toBe(id('ta'));
      expect(parentOf('inner')).toBe(id('outer'));
      expect(parentOf('in-inner')).toBe(id('inner'));
      expect(parentOf('in-foreign')).toBe(id('inner'));
      expect(parentOf('after-inner')).toBe(id('ta'));
      expect(parentOf('after-ta')).toBe(id('outer'));
      for (const s of mem.getFinishedSpans()) expect(s.spanContext().traceId, s.name).toBe(by.outer.spanContext().traceId);
    } finally {
      trace.disable();
      context.disable();
      void provider;
    }
  });

  it('with the async context on, a root OTel span asks the core for no ids until its context is asked', () => {
    const t = make();
    // The backend before the async context wraps it: the wrapper calls this object's idsOf.
    const ids = vi.spyOn(t[internals]().backend, 'idsOf');
    const provider = new TracerProvider(t).register();
    try {
      const ot = trace.getTracer('ids');
      // Its first context turns the tracer's async context on.
      ot.startActiveSpan('first', (s) => s.end());
      ids.mockClear();
      const span = ot.startSpan('root');
      span.end();
      expect(ids).not.toHaveBeenCalled();
      expect(span.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(ids).toHaveBeenCalledTimes(1);
    } finally {
      trace.disable();
      context.disable();
      void provider;
    }
  });

  it('a sampled-out parent gives a non-recording span that keeps the trace', () => {
    const t = make();
    const ot = new TracerProvider(t).getTracer('x');
    const remote = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.NONE,
      isRemote: true,
    });
    const s = ot.startSpan('dropped', {}, remote);
    expect(s.isRecording()).toBe(false);
    expect(s.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    s.end();
    const sampled = ot.startSpan('kept', {}, trace.setSpanContext(ROOT_CONTEXT, { ...trace.getSpanContext(remote)!, traceFlags: TraceFlags.SAMPLED }));
    sampled.end();
    expect(t.snapshot().map((r) => r.name)).toEqual(['kept']);
    expect(sampled.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
  });

  it('{ root: true } starts a new trace with no parent under any hotspan current span; without it the span is a child', async () => {
    const t = make();
    const provider = new TracerProvider(t).register();
    try {
      const ot = trace.getTracer('roots');
      const remote = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true };
      const started: Array<ReturnType<typeof ot.startSpan>> = [];
      const roots = new Map<string, ReturnType<typeof ot.startSpan>>();
      const both = (where: string): void => {
        const r = ot.startSpan(`root ${where}`, { root: true });
        roots.set(`root ${where}`, r);
        started.push(r, ot.startSpan(`child ${where}`));
      };
      t.trace('open-plain', () => both('open-plain')); // async context still off
      t.enableAsyncContext();
      t.trace('open', () => both('open'));
      t.withContext(remote, () => both('withContext'));
      await t.traceAsync('ta', async () => {
        await delay(1);
        both('traceAsync');
      });
      ot.startActiveSpan('active', (a) => {
        both('active');
        a.end();
      });
      for (const s of started) s.end();
      const mem = new InMemorySpanExporter();
      await new SpanExporterAdapter(t, mem).export();
      const by = Object.fromEntries(mem.getFinishedSpans().map((s) => [s.name, s]));
      const traces = new Set<string>();
      for (const where of ['open-plain', 'open', 'withContext', 'traceAsync', 'active']) {
        const r = by[`root ${where}`];
        expect(r.parentSpanContext, where).toBeUndefined();
        expect(r.spanContext().traceId, where).toMatch(/^[0-9a-f]{32}$/);
        expect(r.spanContext().traceId, where).not.toBe(remote.traceId);
        traces.add(r.spanContext().traceId);
      }
      // What the live span says is what the exporter gets.
      for (const [name, r] of roots) expect(by[name].spanContext(), name).toMatchObject(r.spanContext());
      // Each root its own trace, none of them a hotspan span's.
      expect(traces.size).toBe(5);
      for (const name of ['open', 'ta', 'active']) expect(traces.has(by[name].spanContext().traceId), name).toBe(false);
      // The controls: the same spans without { root: true } are children of the current span.
      const parentOf = (name: string): string | undefined => by[name].parentSpanContext?.spanId;
      expect(parentOf('child open')).toBe(by.open.spanContext().spanId);
      expect(parentOf('child withContext')).toBe(remote.spanId);
      expect(by['child withContext'].spanContext().traceId).toBe(remote.traceId);
      expect(parentOf('child traceAsync')).toBe(by.ta.spanContext().spanId);
      expect(parentOf('child active')).toBe(by.active.spanContext().spanId);
    } finally {
      trace.disable();
      context.disable();
      void provider;
    }
  });

  it("the OTel tracer records into the tracer's backend as it is now: enableAsyncContext() and close() swap it", () => {
    const t = make();
    const ot = new TracerProvider(t).getTracer('swap');
    const before = ot.startSpan('before'); // read the plain backend
    t.enableAsyncContext();
    const remote = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, isRemote: true };
    // No OTel context (no manager registered): hotspan's current span is the parent, through the wrapped backend only.
    const under = t.withContext(remote, () => ot.startSpan('under'));
    before.end();
    under.end();
    const by = Object.fromEntries(t.snapshot().map((r) => [r.name, r]));
    expect(by.before && by.under).toBeTruthy();
    const mem = new InMemorySpanExporter();
    return new SpanExporterAdapter(t, mem).export().then(() => {
      const spans = Object.fromEntries(mem.getFinishedSpans().map((s) => [s.name, s]));
      expect(spans.under.parentSpanContext?.spanId).toBe(remote.spanId);
      expect(spans.under.spanContext().traceId).toBe(remote.traceId);
      expect(spans.before.parentSpanContext).toBeUndefined();
      t.close();
      const after = ot.startSpan('after');
      expect(after.isRecording()).toBe(false);
      after.end();
      expect(t.snapshot().map((r) => r.name).sort()).toEqual(['before', 'under']);
    });
  });

  it("the adapter exports hotspan's own spans, holding a child until its parent ended", async () => {
    const t = make();
    const exporter = new InMemorySpanExporter();
    const adapter = new SpanExporterAdapter(t, exporter);
    t.begin('root');
    t.trace('leaf', () => 0);
    expect(await adapter.export()).toBe(0); // leaf's trace is its open root's
    t.end();
    expect(await adapter.export()).toBe(2);
    const [leaf, rootSpan] = exporter.getFinishedSpans();
    expect(leaf.name).toBe('leaf');
    expect(leaf.parentSpanContext?.spanId).toBe(rootSpan.spanContext().spanId);
    expect(leaf.spanContext().traceId).toBe(rootSpan.spanContext().traceId);
    expect(rootSpan.resource.attributes['service.name']).toBeDefined();
  });

  it("the adapter carries the tracestate of a span's trace (a remote parent's, down to its descendants), also through the SDK's OTLP exporter", async () => {
    const t = make();
    const ot = new TracerProvider(t).getTracer('ts');
    // An OTel server span under an extracted remote parent, and its child.
    const remote = new TraceContextPropagator().extract(
      ROOT_CONTEXT,
      { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'vendor=abc,other=1' },
      defaultTextMapGetter,
    );
    const server = ot.startSpan('server', { kind: SpanKind.SERVER }, remote);
    const child = ot.startSpan('child', {}, trace.setSpan(ROOT_CONTEXT, server));
    child.end();
    server.end();
    // hotspan's own spans under an extracted context.
    const own = t.extract({ traceparent: '00-11111111111111111111111111111111-2222222222222222-01', tracestate: 'own=1' });
    expect(own).toBeDefined();
    if (own === undefined) return;
    t.withContext(own, () => t.trace('own', () => t.trace('own.child', () => 0)));
    // A trace of hotspan's own: no tracestate.
    ot.startSpan('plain', {}, ROOT_CONTEXT).end();
    const want: Record<string, string | undefined> = { server: 'vendor=abc,other=1', child: 'vendor=abc,other=1', own: 'own=1', 'own.child': 'own=1', plain: undefined };

    const mem = new InMemorySpanExporter();
    expect(await new SpanExporterAdapter(t, mem).export()).toBe(5);
    const spans = mem.getFinishedSpans();
    expect(Object.fromEntries(spans.map((s) => [s.name, s.spanContext().traceState?.serialize()]))).toEqual(want);
    const c = spans.find((s) => s.name === 'child');
    expect(c?.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(c?.parentSpanContext?.traceState?.serialize()).toBe('vendor=abc,other=1');
    expect(spans.find((s) => s.name === 'own.child')?.parentSpanContext?.traceState?.serialize()).toBe('own=1');

    // The same spans through the SDK's OTLP/HTTP protobuf exporter, decoded with the vendored schema.
    const receiver = new Receiver();
    try {
      const port = await receiver.listen();
      const adapter = new SpanExporterAdapter(t, new OTLPTraceExporter({ url: `http://127.0.0.1:${String(port)}/v1/traces` }));
      expect(await adapter.export()).toBe(5);
      await adapter.shutdown();
      const got = receiver.spans();
      expect(Object.fromEntries(got.map((s) => [s.name, s.traceState]))).toEqual({ ...want, plain: '' });
      expect(got.find((s) => s.name === 'server')?.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    } finally {
      await receiver.close();
    }
  });

  it('an attribute under a key the span keeps its own data in is counted dropped, not stored', async () => {
    const t = make();
    const s = new TracerProvider(t).getTracer('x').startSpan('s', { kind: SpanKind.CLIENT, attributes: { 'hotspan.kind': 'server', ok: 1 } });
    s.setAttribute('hotspan.scope', 'mine').setAttribute('hotspan.other', 'kept');
    s.end();
    const mem = new InMemorySpanExporter();
    await new SpanExporterAdapter(t, mem).export();
    const [got] = mem.getFinishedSpans();
    expect(got.kind).toBe(SpanKind.CLIENT);
    expect(got.instrumentationScope).toEqual({ name: 'x' });
    expect(got.attributes).toEqual({ ok: 1, 'hotspan.other': 'kept' });
    expect(got.droppedAttributesCount).toBe(2);
  });

});

describe.each(['native', 'js'] as const)('@opentelemetry/instrumentation-http on hotspan (loopback, %s backend)', (kind) => {
  it('records client and server spans with their attributes; the client traceparent reaches the server span', async () => {
    const r = await runChild(`globalThis.hotspanTestBackend = '${kind}'; require(${JSON.stringify(path.join(root, 'test/fixtures/otel-http.js'))})`, {
      args: [],
      cwd: root,
    }).catch((e: unknown) => {
      throw e;
    });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout.trim()) as {
      backend: string;
      spans: Array<{ name: string; kind: number; traceId: string; spanId: string; parentSpanId?: string; attributes: Record<string, unknown>; scope: string }>;
      seenHeaders: string[];
      recs: Array<{ name: string; timelineName: string }>;
    };
    expect(out.backend).toBe(kind);
    const client = out.spans.find((s) => s.kind === SpanKind.CLIENT);
    const server = out.spans.find((s) => s.kind === SpanKind.SERVER);
    expect(client && server).toBeTruthy();
    if (!client || !server) return;
    expect(client.name).toBe('GET');
    expect(server.name).toBe('GET');
    expect(client.scope).toBe('@opentelemetry/instrumentation-http');
    expect(client.attributes['http.request.method']).toBe('GET');
    expect(client.attributes['http.response.status_code']).toBe(200);
    expect(server.attributes['url.path']).toBe('/hello');
    expect(server.attributes['http.response.status_code']).toBe(200);
    expect(out.seenHeaders).toEqual([`00-${client.traceId}-${client.spanId}-01`]);
    expect(server.traceId).toBe(client.traceId);
    expect(server.parentSpanId).toBe(client.spanId);
    expect(client.parentSpanId).toBeUndefined();
    // hotspan's own span in the request handler is the server span's child.
    const handler = out.spans.find((s) => s.name === 'handler');
    expect(handler?.parentSpanId).toBe(server.spanId);
    expect(handler?.traceId).toBe(server.traceId);
    expect(out.recs.filter((x) => x.name !== 'handler').map((x) => x.timelineName)).toEqual(['track: otel', 'track: otel']);
  });
});
