// The tracer-wide counts().sampledOut (docs/sampling.md, "What is counted"):
// the spans of traces the sampler did not keep, counted once where the
// tracer decides (the OTLP export's read), and the identity at rest
// produced = otlp.sent + otlp.rejected + otlp.dropped + sampledOut, exact
// also when the memory budget overwrote spans before the export read them.
import { afterEach, describe, expect, it } from 'vitest';

import { Tracer } from '../lib';
import { Receiver } from './support/otlp-receiver';

const rows = ['native', 'js'] as const;

/** `trees` trees of a root 'req' and a child 'db', every `every`th with a child 'keep' too, recorded without a turn of the event loop. */
function record(t: Tracer, trees: number, every: number): number {
  let kept = 0;
  for (let i = 0; i < trees; i++) {
    t.trace('req', () => {
      t.trace('db', () => 0);
      if (i % every === 0) {
        kept++;
        t.trace('keep', () => 0);
      }
    });
  }
  return kept;
}

for (const backend of rows) {
  describe(`counts().sampledOut (${backend} backend)`, () => {
    const receivers: Receiver[] = [];
    afterEach(async () => {
      await Promise.all(receivers.splice(0).map((r) => r.close()));
    });
    const listen = async (): Promise<string> => {
      const r = new Receiver();
      receivers.push(r);
      return `http://127.0.0.1:${String(await r.listen())}/v1/traces`;
    };

    it('is 0 without an export, and the memory figures count every span recorded', () => {
      const t = new Tracer({ backend, sample: { ratio: 0 } });
      record(t, 50, 10);
      const c = t.counts();
      expect(c.sampledOut).toBe(0);
      expect(c.produced).toBe(50 * 2 + 5);
      expect(c.kept).toBe(c.produced);
      expect(t.stats().counts.sampledOut).toBe(0);
      t.close();
    });

    it('counts the spans of the traces not kept, exactly, and produced = sent + sampledOut at rest', async () => {
      const t = new Tracer({ backend, sample: { ratio: 0, keep: { names: ['keep'] } } });
      t.exportOtlp({ endpoint: await listen(), scheduledDelayMs: 5, maxBatchSize: 256 });
      const trees = 600;
      const kept = record(t, trees, 10);
      await t.shutdown();
      const c = t.counts();
      const o = c.otlp!;
      expect(c.produced).toBe(trees * 2 + kept);
      expect(o.dropped + o.rejected + o.inFlight).toBe(0);
      expect(o.sent).toBe(3 * kept);
      expect(c.sampledOut).toBe(2 * (trees - kept));
      expect(c.sampledOut).toBe(o.sampledOut);
      expect(c.produced).toBe(o.sent + c.sampledOut);
    }, 60_000);

    it('holds produced = sent + rejected + dropped + sampledOut exactly when the budget overwrote spans', async () => {
      const t = new Tracer({ backend, memoryLimit: 1 << 20, onFull: 'overwrite', sample: { ratio: 0, keep: { names: ['keep'] } } });
      t.exportOtlp({ endpoint: await listen(), scheduledDelayMs: 5, maxBatchSize: 512 });
      const trees = 60_000;
      const kept = record(t, trees, 10);
      await t.shutdown();
      const c = t.counts();
      const o = c.otlp!;
      expect(c.produced).toBe(trees * 2 + kept);
      expect(o.inFlight).toBe(0);
      expect(c.sampledOut).toBe(o.sampledOut);
      expect(c.sampledOut).toBeGreaterThan(0);
      // The js backend hands its records to the export on the event loop, which this test holds: the budget overwrote.
      if (backend === 'js') expect(c.overwritten).toBeGreaterThan(0);
      expect(c.produced).toBe(o.sent + o.rejected + o.dropped + c.sampledOut);
    }, 120_000);
  });
}
