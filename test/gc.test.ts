// The FinalizationRegistry hooks, under `node --expose-gc` in a child process
// running the compiled dist/ (a fresh process: no earlier GC state, and gc()
// is available without changing how vitest starts its workers).
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

import { loadNativeAddon } from '../lib/binding/native-loader';

const root = path.join(__dirname, '..');
// Built by the vitest global setup (test/fixtures/build-consumer.js).
const { consumerPath } = require('./fixtures/build-consumer.js') as { consumerPath: string };
const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';

/** Runs `body` (an async function body) with `Tracer`, `internals`, `ticks` in scope; returns what it prints as JSON. */
function runChild(body: string): Record<string, unknown> {
  const script = `
    const { Tracer } = require(${JSON.stringify(path.join(root, 'dist', 'index.js'))});
    const { internals } = require(${JSON.stringify(path.join(root, 'dist', 'tracer', 'internal.js'))});
    const { GcHook } = require(${JSON.stringify(path.join(root, 'dist', 'common', 'gc-hook.js'))});
    // FinalizationRegistry callbacks run as tasks after the GC: give them turns.
    const ticks = async (n = 5) => { for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 2)); };
    (async () => { ${body} })().then(
      (out) => { process.stdout.write(JSON.stringify(out)); },
      (e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, `child failed: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe('GC hook and abandoned handles', () => {
  it.skipIf(skipNative)('drains records enqueued off-thread after gc(), with no explicit flush', () => {
    const out = runChild(`
      const t = new Tracer({ backend: 'native' });
      const nt = t[internals]().native;
      // One native thread through the C ABI (the non-holder path); it has exited on return.
      require(${JSON.stringify(consumerPath)}).run(nt.nativeApi(), { threads: 1, spansPerThread: 100, depth: 1 });
      const count = () => t.snapshot().filter((r) => r.name === 'consumer.d0').length;
      const before = count();
      const pendingBefore = nt.pending();
      // No GC yet: still not visible after event-loop turns.
      await ticks(3);
      const afterTicks = count();
      const runsBefore = t[internals]().gcHook.runs;
      globalThis.gc();
      let after = 0;
      for (let i = 0; i < 100 && after === 0; i++) { await ticks(1); after = count(); }
      const recs = t.snapshot().filter((r) => r.name === 'consumer.d0');
      return { before, pendingBefore, afterTicks, after, runsBefore, runsAfter: t[internals]().gcHook.runs,
               kinds: [...new Set(recs.map((r) => r.timelineKind))], pendingAfter: nt.pending() };
    `);
    expect(out.before).toBe(0);
    expect(out.afterTicks).toBe(0);
    expect(out.pendingBefore).toBeGreaterThan(0);
    expect(out.after).toBe(100);
    expect(out.runsAfter).toBeGreaterThan(out.runsBefore as number);
    expect(out.kinds).toEqual(['native']);
    expect(out.pendingAfter).toBe(0);
  });

  for (const backend of ['native', 'js'] as const) {
    it.skipIf(backend === 'native' && skipNative)(`${backend}: reports a dropped open start() handle as abandoned after gc()`, () => {
      const out = runChild(`
        const t = new Tracer({ backend: '${backend}' });
        const kept = t.start('kept');
        (function drop() { t.start('dropped'); })();
        const before = t.snapshot().length;
        // Handles are registered for the GC when the job that opened them ends.
        await ticks(1);
        globalThis.gc();
        let rec;
        for (let i = 0; i < 100 && !rec; i++) { await ticks(1); t.flush(); rec = t.snapshot().find((r) => r.name === 'dropped'); }
        kept.end();
        t.flush();
        const recs = t.snapshot();
        const get = (n) => recs.find((r) => r.name === n);
        return { before, dropped: get('dropped'), kept: get('kept'), depthAfter: t[internals]().backend.openDepth() };
      `);
      expect(out.before).toBe(0);
      const dropped = out.dropped as { abandoned: boolean; parent: number; depth: number };
      const kept = out.kept as { abandoned: boolean; id: number };
      expect(dropped.abandoned).toBe(true);
      expect(dropped.parent).toBe(kept.id);
      expect(dropped.depth).toBe(1);
      expect(kept.abandoned).toBe(false);
      expect(out.depthAfter).toBe(0);
    });
  }

  it.skipIf(skipNative)('a handle leaked in a long synchronous run is collectable before the run ends (at most 1024 wait)', () => {
    const out = runChild(`
      const t = new Tracer({ backend: 'native' });
      (function drop() { t.start('dropped'); })();
      // 1024 more handles in the same job: the waiting ones are registered without a microtask.
      for (let i = 0; i < 1024; i++) { const h = t.start('inner'); if (i === 1023) { globalThis.gc(); } h.end(); }
      const waiting = t[internals]().handles.waiting;
      let rec;
      for (let i = 0; i < 100 && !rec; i++) { await ticks(1); t.flush(); rec = t.snapshot().find((r) => r.name === 'dropped'); }
      return { waitingSync: waiting, abandoned: rec ? rec.abandoned : null, depth: t[internals]().backend.openDepth() };
    `);
    expect(out.abandoned).toBe(true);
    expect(out.depth).toBe(0);
  });

  it('ends a collected handle only once it is the innermost open span', () => {
    const out = runChild(`
      const t = new Tracer({ backend: 'js' });
      (function drop() { t.start('dropped'); })();
      const inner = t.start('inner');
      await ticks(1);
      globalThis.gc();
      await ticks(10);
      const waiting = t[internals]().handles.waiting;
      const early = t.snapshot().map((r) => r.name);
      inner.end();   // now 'dropped' is innermost: ended right away
      const recs = t.snapshot();
      return { waiting, early, names: recs.map((r) => r.name), abandoned: recs.map((r) => r.abandoned) };
    `);
    expect(out.waiting).toBe(1);
    expect(out.early).toEqual([]);
    expect(out.names).toEqual(['inner', 'dropped']);
    expect(out.abandoned).toEqual([false, true]);
  });

  it('re-arms after each GC, rate-limits, and stops', () => {
    const out = runChild(`
      let calls = 0;
      const hook = new GcHook(() => { calls++; }, 5);
      globalThis.gc(); await ticks(3);
      const first = calls;
      await new Promise((r) => setTimeout(r, 10));
      globalThis.gc(); await ticks(3);
      const second = calls;
      // Two GCs inside one 5 ms window: one run now, one at the window's end at most.
      globalThis.gc(); await ticks(0); globalThis.gc(); await ticks(0);
      await new Promise((r) => setTimeout(r, 20));
      const burst = calls - second;
      hook.stop();
      const stopped = calls;
      globalThis.gc(); await ticks(3); await new Promise((r) => setTimeout(r, 10)); globalThis.gc(); await ticks(3);
      return { first, second, burst, stopped, after: calls, active: hook.active };
    `);
    expect(out.first).toBe(1);
    expect(out.second).toBe(2);
    expect(out.burst).toBeGreaterThanOrEqual(1);
    expect(out.burst).toBeLessThanOrEqual(2);
    expect(out.after).toBe(out.stopped);
    expect(out.active).toBe(false);
  });

  it.skipIf(skipNative)('close() stops the tracer GC hook', () => {
    const out = runChild(`
      const t = new Tracer({ backend: 'native' });
      const hook = t[internals]().gcHook;
      globalThis.gc(); await ticks(3);
      const before = hook.runs;
      t.close();
      const active = hook.active;
      await new Promise((r) => setTimeout(r, 10));
      globalThis.gc(); await ticks(5);
      return { before, active, after: hook.runs };
    `);
    expect(out.before).toBeGreaterThanOrEqual(1);
    expect(out.active).toBe(false);
    expect(out.after).toBe(out.before);
  });
});
