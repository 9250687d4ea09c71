// hotspan/auto's event-loop delay counters read as perf_hooks'
// monitorEventLoopDelay() does, in the same process over the same window
// (both started in one callback and stopped in one, so they see the same
// delays, whatever the machine's load): max and mean within 20% of each
// other, or within one sampling period (10 ms, both samplers' resolution:
// a stall lands between two ticks of each at its own phase) when that is
// more. Idle, blocked 200 ms, busy, and a process that ends after its loop
// drained (its 'beforeExit' work delays nothing).
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const MODULE = path.join(__dirname, '..', 'dist', 'auto', 'event-loop-delay.js');
const RESOLUTION_MS = 10;

interface Reading {
  max: number;
  mean: number;
}

/**
 * Runs `scenario` (which calls done() when its window ends) in a child with
 * both samplers on; the window's samples of each. Ours: one interval (its
 * interval longer than any run), so its single max/mean pair is the window's.
 */
function measure(scenario: string, stopAt: 'done' | 'exit' = 'done'): { ours: Reading; theirs: Reading } {
  const code = `
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { sampleEventLoop } = require(${JSON.stringify(MODULE)});
const got = {};
const h = monitorEventLoopDelay({ resolution: ${String(RESOLUTION_MS)} });
const stopOurs = sampleEventLoop((name, v) => { got[name.includes('max') ? 'max' : 'mean'] = v; }, 1e9);
h.enable();
function stop() {
  stopOurs();
  h.disable();
  process.stdout.write(JSON.stringify({ ours: got, theirs: { max: h.max / 1e6, mean: h.mean / 1e6, count: h.count } }));
}
const block = (ms) => { const t = performance.now(); while (performance.now() - t < ms); };
// Runs fn once monitorEventLoopDelay has taken n more samples: each phase spans
// a known number of samples whatever the load, so a stall of the whole process
// (which both samplers see) never leaves one with a window of a handful.
const after = (n, fn) => { const target = h.count + n; (function wait() { if (h.count >= target) fn(); else setTimeout(wait, 1); })(); };
${stopAt === 'exit' ? "process.on('exit', stop); const done = () => {};" : 'const done = stop;'}
${scenario}
`;
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { ours: Reading; theirs: Reading };
}

function agree(a: number, b: number, what: string): void {
  const tolerance = Math.max(0.2 * Math.max(a, b), RESOLUTION_MS);
  expect(Math.abs(a - b), `${what}: ours ${String(a)}, monitorEventLoopDelay ${String(b)}`).toBeLessThanOrEqual(tolerance);
}

function agreeBoth(m: { ours: Reading; theirs: Reading }): void {
  agree(m.ours.max, m.theirs.max, 'max');
  agree(m.ours.mean, m.theirs.mean, 'mean');
}

describe('event-loop delay against monitorEventLoopDelay, same process, same window', () => {
  it('idle', () => {
    const m = measure('after(40, done);');
    agreeBoth(m);
    // An idle loop reads about the period, as monitorEventLoopDelay does.
    expect(m.ours.mean).toBeGreaterThanOrEqual(RESOLUTION_MS * 0.9);
  });

  it('blocked 200 ms', () => {
    const m = measure('after(20, () => { block(200); after(20, done); });');
    expect(m.ours.max).toBeGreaterThanOrEqual(200);
    expect(m.theirs.max).toBeGreaterThanOrEqual(200);
    expect(Math.abs(m.ours.max - m.theirs.max), JSON.stringify(m)).toBeLessThanOrEqual(0.2 * Math.max(m.ours.max, m.theirs.max));
    agreeBoth(m);
  });

  it('busy: 5 ms of work per turn for 100 turns', () => {
    const m = measure('after(10, () => { let n = 0; (function turn() { block(5); if (++n < 100) setImmediate(turn); else after(10, done); })(); });');
    agreeBoth(m);
  });

  it("a loop that drained: 200 ms of 'beforeExit' work delays nothing, as monitorEventLoopDelay says", () => {
    const m = measure("after(20, () => process.once('beforeExit', () => block(200)));", 'exit');
    agreeBoth(m);
  });
});
