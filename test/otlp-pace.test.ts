// The OTLP exporter reads again at once while records it has not read wait,
// not a scheduled delay later. Children end before their parent, so the
// exporter holds a span back until its root is read; a read whose records
// wait for a root further on sends fewer spans than it read. The exporter
// used to take such a read for "nothing more to read" and pause for
// scheduledDelayMs (5 s by default) after each, so the spans of a burst
// reached the collector one such read per 5 s. Here the requests are larger
// than a batch and the delay is ten minutes: every span must arrive without
// it.
import { afterEach, describe, expect, it } from 'vitest';

import { Tracer } from '../lib';
import { Receiver } from './support/otlp-receiver';

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const REQUESTS = 40;
const CHILDREN = 300;
const BATCH = 64;

for (const backend of ['native', 'js'] as const) {
  describe(`OTLP export pace (${backend} backend)`, () => {
    it('reads on while records wait, not a scheduled delay later', async () => {
      const r = new Receiver();
      receivers.push(r);
      const endpoint = `http://127.0.0.1:${String(await r.listen())}/v1/traces`;
      const t = new Tracer({ backend });
      for (let i = 0; i < REQUESTS; i++) {
        t.trace('request', () => {
          for (let k = 0; k < CHILDREN; k++) t.trace('db.query', () => k);
        });
      }
      const produced = t.counts().produced;
      expect(produced).toBe(REQUESTS * (CHILDREN + 1));
      t.exportOtlp({ endpoint, maxBatchSize: BATCH, scheduledDelayMs: 600_000 });
      // No bound of its own but the test's: with the pause, the rest of the
      // first read's request would wait ten minutes.
      while (t.counts().otlp!.sent < produced) await new Promise((res) => setTimeout(res, 20));
      await t.shutdown();
      const o = t.counts().otlp!;
      expect(o.sent).toBe(produced);
      expect(o.dropped + o.rejected + o.sampledOut).toBe(0);
      const spans = r.accepted.flatMap((q) => q.spans);
      expect(spans).toHaveLength(produced);
      // Every child in its request's trace.
      const traceOf = new Map(spans.filter((s) => s.name === 'request').map((s) => [s.spanId, s.traceId]));
      const children = spans.filter((s) => s.name === 'db.query');
      expect(children).toHaveLength(REQUESTS * CHILDREN);
      for (const c of children) expect(c.traceId).toBe(traceOf.get(c.parentSpanId));
    }, 60_000);
  });
}
