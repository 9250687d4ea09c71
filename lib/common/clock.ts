// Calibration of the native clock against performance.now().
//
// The core records raw CLOCK_MONOTONIC ns; performance.now() reads the same
// clock minus the process time origin. Each sample brackets one
// performance.now() reading p between two hrtime readings b <= a, so the
// origin lies in [b - p, a - p]. Intersecting many brackets narrows the
// interval; its midpoint is the origin and its half-width the bound.

import { performance } from 'node:perf_hooks';

export interface Calibration {
  /** Raw monotonic ns at performance.now() == 0. */
  originNs: bigint;
  /** Half-width of the origin interval, in ms: how far a converted native timestamp may be off. */
  boundMs: number;
}

export function calibrate(samples = 200, nowNs: () => bigint = process.hrtime.bigint): Calibration {
  if (!Number.isInteger(samples) || samples < 1) {
    throw new RangeError(`hotspan: calibration samples must be a positive integer, got ${String(samples)}`);
  }
  // Offsets relative to the first hrtime reading keep the arithmetic in
  // exact doubles (ns differences well below 2^53).
  const base = nowNs();
  let lo = -Infinity;
  let hi = Infinity;
  // The narrowest single bracket, used if the intersection comes out empty
  // (a performance.now() that rounds its readings).
  let bestLo = 0;
  let bestHi = Infinity;
  for (let i = 0; i < samples; i++) {
    const b = nowNs();
    const p = performance.now();
    const a = nowNs();
    const pNs = p * 1e6;
    const l = Number(b - base) - pNs;
    const h = Number(a - base) - pNs;
    if (l > lo) lo = l;
    if (h < hi) hi = h;
    if (h - l < bestHi - bestLo) {
      bestLo = l;
      bestHi = h;
    }
  }
  if (lo > hi) {
    lo = bestLo;
    hi = bestHi;
  }
  const mid = (lo + hi) / 2;
  // +0.5 ns: the rounding of the midpoint to a whole ns.
  const halfNs = (hi - lo) / 2 + 0.5;
  return { originNs: base + BigInt(Math.round(mid)), boundMs: halfNs / 1e6 };
}

/**
 * System clocks read together, for the writers' clock metadata (the core's
 * ClockReadings). BOOTTIME cannot be read from JS: left out, and the
 * Perfetto writer then names MONOTONIC the trace clock.
 */
export interface ClockReadings {
  /** CLOCK_MONOTONIC ns (process.hrtime on Linux). */
  monotonicNs: bigint;
  /** ns since the Unix epoch (Date.now(): ms resolution). */
  realtimeNs: bigint;
  boottimeNs?: bigint;
}

export function readClocks(): ClockReadings {
  const realtimeNs = BigInt(Date.now()) * 1_000_000n;
  return { monotonicNs: process.hrtime.bigint(), realtimeNs };
}
