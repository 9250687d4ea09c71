// OTLP export with worker_threads joined to the exporting tracer, on both
// backends: every span the workers record (shipped to and merged by the
// owner on the js backend, shared memory on native) reaches a loopback
// receiver that decodes with the vendored schema exactly once, with the ids
// and parents the worker saw (inject() inside its spans), and
// sent + dropped = produced. And exportOtlp() called in a joined worker:
// refused with an Error naming why on the js backend; on native it exports
// the shared tracer (every thread's spans), once.
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

import { describe, expect, it } from 'vitest';

import { loadNativeAddon } from '../lib/binding/native-loader';
import { Receiver } from './support/otlp-receiver';
import { tracerFactory } from './support/tracers';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const dist = path.join(__dirname, '..', 'dist', 'index.js');
const WORKERS = 2;
const TREES = 150;

// Per tree: a root whose inject() and a child whose inject() the worker
// posts back, and a plain span under the root (3 spans).
const RECORDER = `
  const { workerData, parentPort } = require('node:worker_threads');
  const { Tracer } = require(workerData.dist);
  const t = Tracer.join(workerData.token, { threadName: 'w' + workerData.w });
  const trees = [];
  for (let i = 0; i < workerData.trees; i++) {
    trees.push(t.trace('w.root', () => {
      const root = t.inject({}).traceparent;
      const child = t.trace('w.child', () => t.inject({}).traceparent, { w: workerData.w, i });
      t.trace('w.plain', () => 0, { w: workerData.w, i });
      return { root, child };
    }, { w: workerData.w, i }));
    if (i % 50 === 49) t.flush();
  }
  t.close();
  parentPort.postMessage(trees);
`;

// exportOtlp() in a joined worker; on success records one span and shuts the export down.
const EXPORTER = `
  const { workerData, parentPort } = require('node:worker_threads');
  const { Tracer } = require(workerData.dist);
  const t = Tracer.join(workerData.token, { threadName: 'exporter' });
  (async () => {
    try {
      t.exportOtlp({ endpoint: workerData.endpoint, scheduledDelayMs: 5, ...workerData.options });
    } catch (e) {
      t.close();
      parentPort.postMessage({ error: { name: e.constructor.name, message: e.message } });
      return;
    }
    t.trace('w.exported', () => 0);
    await t.shutdown();
    parentPort.postMessage({ otlp: t.counts().otlp });
  })();
`;

async function runWorker<T>(source: string, workerData: Record<string, unknown>): Promise<T> {
  const w = new Worker(source, { eval: true, workerData: { dist, ...workerData } });
  const exited = new Promise((resolve) => w.once('exit', resolve));
  const got = await new Promise<T>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await exited;
  return got;
}

const idsOf = (traceparent: string): { traceId: string; spanId: string } => {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceparent);
  if (m === null) throw new Error(`not a traceparent: ${traceparent}`);
  return { traceId: m[1], spanId: m[2] };
};

describe.each(['native', 'js'] as const)('OTLP export with joined workers (%s backend)', (kind) => {
  const make = tracerFactory(kind);

  it.skipIf(kind === 'native' && skipNative)(
    "the owner's export sends every span its joined workers record exactly once, with the ids and parents the workers saw",
    async () => {
      const receiver = new Receiver();
      try {
        const port = await receiver.listen();
        const t = make();
        t.exportOtlp({ endpoint: `http://127.0.0.1:${String(port)}/v1/traces`, scheduledDelayMs: 5, maxBatchSize: 64 });
        t.trace('owner.before', () => 0);
        const token = t.share();
        const trees = await Promise.all(
          Array.from({ length: WORKERS }, (_, w) => runWorker<Array<{ root: string; child: string }>>(RECORDER, { token, w, trees: TREES })),
        );
        await t.settle();
        t.trace('owner.after', () => 0);
        await t.shutdown();

        const c = t.counts();
        const produced = 2 + WORKERS * TREES * 3;
        expect(c.produced).toBe(produced);
        const otlp = c.otlp ?? { sent: -1, dropped: -1 };
        expect(otlp.sent + otlp.dropped).toBe(c.produced);
        expect(otlp.dropped).toBe(0);

        const spans = receiver.spans();
        expect(spans.length).toBe(produced);
        const bySpanId = new Map(spans.map((s) => [s.spanId, s]));
        expect(bySpanId.size).toBe(produced); // no span received twice
        const count = (name: string) => spans.filter((s) => s.name === name).length;
        expect([count('owner.before'), count('owner.after'), count('w.root'), count('w.child'), count('w.plain')]).toEqual([
          1,
          1,
          WORKERS * TREES,
          WORKERS * TREES,
          WORKERS * TREES,
        ]);

        const roots = new Set<string>();
        for (const [w, list] of trees.entries()) {
          expect(list.length).toBe(TREES);
          for (const [i, tree] of list.entries()) {
            const root = idsOf(tree.root);
            const child = idsOf(tree.child);
            const r = bySpanId.get(root.spanId);
            const ch = bySpanId.get(child.spanId);
            expect({ name: r?.name, traceId: r?.traceId, parent: r?.parentSpanId, attrs: r?.attrs }, `root ${String(w)}/${String(i)}`).toEqual({
              name: 'w.root',
              traceId: root.traceId,
              parent: '',
              attrs: { w, i },
            });
            expect({ name: ch?.name, traceId: ch?.traceId, parent: ch?.parentSpanId, attrs: ch?.attrs }, `child ${String(w)}/${String(i)}`).toEqual({
              name: 'w.child',
              traceId: root.traceId,
              parent: root.spanId,
              attrs: { w, i },
            });
            roots.add(root.traceId);
          }
        }
        // Each root began its own trace; every plain span sits under one of those roots.
        expect(roots.size).toBe(WORKERS * TREES);
        for (const s of spans.filter((x) => x.name === 'w.plain')) {
          const parent = bySpanId.get(s.parentSpanId);
          expect({ name: parent?.name, traceId: parent?.traceId, attrs: parent?.attrs }).toEqual({ name: 'w.root', traceId: s.traceId, attrs: s.attrs });
        }
      } finally {
        await receiver.close();
      }
    },
  );

  if (kind === 'js') {
    it('exportOtlp() in a joined worker throws an Error saying to export from the tracer that shared the token, whatever its options', async () => {
      const receiver = new Receiver();
      try {
        const port = await receiver.listen();
        const t = make();
        const got = await runWorker<{ error?: { name: string; message: string } }>(EXPORTER, {
          token: t.share(),
          endpoint: `http://127.0.0.1:${String(port)}/v1/traces`,
          // Refused before the options are read: that error, not one about an option.
          options: { protocol: 'grpc' },
        });
        expect(got.error?.name).toBe('Error');
        expect(got.error?.message).toBe(
          'hotspan: exportOtlp() is not available on a tracer joined with the js backend: its records are shipped to ' +
            'the tracer that shared the token; export them there',
        );
        expect(receiver.requests).toBe(0);
      } finally {
        await receiver.close();
      }
    });
  } else {
    it.skipIf(skipNative)("exportOtlp() in a joined worker exports the shared tracer: every thread's spans, once", async () => {
      const receiver = new Receiver();
      try {
        const port = await receiver.listen();
        const t = make();
        t.trace('owner.before', () => 0);
        const got = await runWorker<{ otlp?: { sent: number; dropped: number }; error?: unknown }>(EXPORTER, {
          token: t.share(),
          endpoint: `http://127.0.0.1:${String(port)}/v1/traces`,
        });
        expect(got.error).toBeUndefined();
        expect(got.otlp).toMatchObject({ sent: 2, dropped: 0 });
        expect(receiver.spans().map((s) => s.name).sort()).toEqual(['owner.before', 'w.exported']);
        expect(new Set(receiver.spans().map((s) => s.spanId)).size).toBe(2);
      } finally {
        await receiver.close();
      }
    });
  }
});
