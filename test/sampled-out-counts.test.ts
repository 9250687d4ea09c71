// The tracer-wide counts().sampledOut (docs/sampling.md, "What is counted"):
// the spans of traces the sampler did not keep, counted once where the
// tracer decides (the OTLP export's read), and the identity at rest
// produced = otlp.sent + otlp.rejected + otlp.dropped + sampledOut, exact
// also when the memory budget overwrote spans before the export read them.
// With several consuming outputs (an export and streams, native), each span
// left out is counted once tracer-wide, whichever outputs read it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { Tracer } from '../lib';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { Receiver } from './support/otlp-receiver';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-sampled-counts-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const native = loadNativeAddon().addon !== undefined || process.env.CI === 'true';

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

describe.runIf(native)('counts().sampledOut with an export and streams (native backend)', () => {
  it('counts each span left out once, however many outputs read it', async () => {
    const receiver = new Receiver();
    try {
      const t = new Tracer({ backend: 'native', sample: { ratio: 0, keep: { names: ['keep'] } } });
      t.exportOtlp({ endpoint: `http://127.0.0.1:${String(await receiver.listen())}/v1/traces`, scheduledDelayMs: 5, maxBatchSize: 256 });
      const a = t.stream(path.join(tmp, 'a.pftrace'));
      const kept1 = record(t, 300, 10);
      a.close();
      // Opened later: it reads the spans still in memory (those the export and `a` read first) and the new ones.
      const b = t.stream(path.join(tmp, 'b.pftrace'));
      const kept2 = record(t, 300, 10);
      await t.shutdown();
      b.close();
      const c = t.counts();
      const o = c.otlp!;
      const out = 2 * (600 - kept1 - kept2);
      expect(c.produced).toBe(600 * 2 + kept1 + kept2);
      expect(o.dropped + o.rejected + o.inFlight + c.overwritten + c.dropped).toBe(0);
      // Every output left out every span of its read that is not kept: the export and `b` all of them, `a` the first half's.
      expect(o.sampledOut).toBe(out);
      expect(b.status()).toMatchObject({ sampledOut: out, written: 3 * (kept1 + kept2), missed: 0, waiting: 0 });
      expect(a.status()).toMatchObject({ sampledOut: 2 * (300 - kept1), written: 3 * kept1, waiting: 0 });
      // Once each, not once per output.
      expect(c.sampledOut).toBe(out);
      expect(c.produced).toBe(o.sent + c.sampledOut);
      expect(c.produced).toBe(b.status().written + c.sampledOut);
      t.close();
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
