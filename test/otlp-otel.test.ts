// OTel-only data through OTLP: spans recorded with hotspan/otel's
// TracerProvider keep their kind, status, events, links, dropped counts and
// instrumentation scope in reserved "hotspan.*" attributes; the exporter
// writes them as OTLP Span fields and ScopeSpans, never as attributes.
// Decoded by the loopback receiver with the vendored upstream schema
// (protobufjs) and as OTLP/JSON.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';

import { Tracer } from '../lib';
import { TracerProvider } from '../lib/otel/index';
import { Receiver, type ReceivedRequest } from './support/otlp-receiver';

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

/** A loopback receiver, a tracer exporting to it, and a provider on the tracer. */
async function exporting(protocol: 'http/protobuf' | 'http/json'): Promise<{ r: Receiver; t: Tracer; provider: TracerProvider }> {
  const r = new Receiver();
  receivers.push(r);
  const port = await r.listen();
  const t = new Tracer();
  t.exportOtlp({ endpoint: `http://127.0.0.1:${String(port)}/v1/traces`, protocol, scheduledDelayMs: 20 });
  return { r, t, provider: new TracerProvider(t) };
}

describe('OTLP export of hotspan/otel spans', () => {
  for (const protocol of ['http/protobuf', 'http/json'] as const) {
    it(`kind, status, events, links, dropped counts and scopes (${protocol})`, async () => {
      const { r, t, provider } = await exporting(protocol);
      const a = provider.getTracer('scope-a', '1.2.3');
      const b = provider.getTracer('scope-b');
      const parent = a.startSpan('parent', { kind: SpanKind.SERVER, attributes: { 'http.method': 'GET' } }, ROOT_CONTEXT);
      const child = b.startSpan(
        'child',
        { kind: SpanKind.CLIENT, links: [{ context: parent.spanContext(), attributes: { why: 'test' } }] },
        trace.setSpan(ROOT_CONTEXT, parent),
      );
      child.addEvent('evt', { k: true, n: 2 });
      for (let i = 0; i < 130; i++) child.addEvent('many');  // past the 128-event limit: 3 dropped
      child.setStatus({ code: SpanStatusCode.ERROR, message: 'failed' });
      child.end();
      parent.setStatus({ code: SpanStatusCode.OK });
      parent.end();
      await t.shutdown();

      const reqs: ReceivedRequest[] = r.accepted;
      const spans = reqs.flatMap((q) => q.spans.map((s) => ({ ...s, scope: q.scope })));
      expect(spans.map((s) => s.name).sort()).toEqual(['child', 'parent']);
      const p = spans.find((s) => s.name === 'parent')!;
      const c = spans.find((s) => s.name === 'child')!;
      expect(p.scope).toEqual({ name: 'scope-a', version: '1.2.3' });
      expect(c.scope).toEqual({ name: 'scope-b', version: '' });
      expect(p.kind).toBe(2);  // SERVER
      expect(c.kind).toBe(3);  // CLIENT
      expect(p.statusCode).toBe(1);
      expect(c.statusCode).toBe(2);
      expect(c.statusMessage).toBe('failed');
      expect(c.parentSpanId).toBe(p.spanId);
      expect(c.traceId).toBe(p.traceId);
      expect(c.events).toHaveLength(128);
      expect(c.events[0]).toMatchObject({ name: 'evt', attrs: { k: true, n: 2 } });
      expect(c.events[0]!.time).toBeGreaterThanOrEqual(c.start);
      expect(c.events[0]!.time).toBeLessThanOrEqual(c.end);
      expect(c.dropped).toEqual({ attributes: 0, events: 3, links: 0 });
      expect(c.links).toEqual([{ traceId: p.traceId, spanId: p.spanId, traceState: '', flags: 1, attrs: { why: 'test' } }]);
      expect(p.attrs).toEqual({ 'http.method': 'GET' });
      for (const s of spans) expect(Object.keys(s.attrs).filter((k) => k.startsWith('hotspan.'))).toEqual([]);
      // Grouped: one ScopeSpans per scope in a request.
      for (const q of reqs) expect(q.spans.length).toBeGreaterThan(0);
      t.close();
    });

    it(`scopes cached by their text: repeated, alternating, escaped, same name (${protocol})`, async () => {
      const { r, t, provider } = await exporting(protocol);
      // Two versions of one name (the same text length), an escaped and a non-ASCII name, no version.
      const scopes: Array<[string, string | undefined]> = [
        ['lib-a', '1.0.0'],
        ['lib-a', '2.0.0'],
        ['q"uote\\', undefined],
        ['lib-é', '1.0.0'],
      ];
      const tracers = scopes.map(([n, v]) => provider.getTracer(n, v));
      const kinds = [SpanKind.SERVER, SpanKind.CLIENT, SpanKind.PRODUCER, SpanKind.CONSUMER, SpanKind.INTERNAL];
      const want = new Map<string, { scope: string; kind: number; status: number }>();
      for (let i = 0; i < 40; i++) {
        const k = i % 7 < 3 ? 0 : i % scopes.length;  // runs of one scope, then alternating
        const kind = kinds[i % kinds.length]!;
        const s = tracers[k]!.startSpan(`s${String(i)}`, { kind, attributes: { i } }, ROOT_CONTEXT);
        if (i % 3 === 0) s.setStatus({ code: SpanStatusCode.ERROR, message: `m${String(i)}` });
        s.end();
        want.set(`s${String(i)}`, { scope: `${scopes[k]![0]}@${scopes[k]![1] ?? ''}`, kind: kind + 1, status: i % 3 === 0 ? 2 : 0 });
      }
      await t.shutdown();

      const got = new Map<string, { scope: string; kind: number; status: number }>();
      for (const q of r.accepted) {
        for (const s of q.spans) {
          expect(got.has(s.name)).toBe(false);
          got.set(s.name, { scope: `${q.scope.name}@${q.scope.version}`, kind: s.kind, status: s.statusCode });
          expect(s.attrs).toEqual({ i: Number(s.name.slice(1)) });
          if (s.statusCode === 2) expect(s.statusMessage).toBe(`m${s.name.slice(1)}`);
        }
      }
      expect(Object.fromEntries(got)).toEqual(Object.fromEntries(want));
      t.close();
    });
  }
});
