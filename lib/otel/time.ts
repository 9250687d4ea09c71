// OpenTelemetry time inputs and outputs against hotspan's axis (ms on the
// performance.now() axis of this thread).

import type { HrTime, TimeInput } from '@opentelemetry/api';

const ORIGIN = performance.timeOrigin;

/** ms on the performance.now() axis of an OTel TimeInput (epoch ms, HrTime, Date, or performance.now() ms). */
export function axisMs(t: TimeInput): number {
  if (Array.isArray(t)) return (t[0] * 1000 - ORIGIN) + t[1] / 1e6;
  if (t instanceof Date) return t.getTime() - ORIGIN;
  if (typeof t === 'number') {
    // As the SDK does: a value below the origin is performance.now() ms.
    return t < ORIGIN ? t : t - ORIGIN;
  }
  throw new TypeError(`hotspan/otel: a time must be a number, an HrTime or a Date, got ${typeof t}`);
}

/** HrTime [seconds, nanoseconds] since the epoch of ms on the axis. */
export function hrTime(ms: number): HrTime {
  // The origin's whole ms and the rest apart, so ns survive the addition.
  const whole = Math.floor(ORIGIN);
  const frac = ORIGIN - whole + ms;
  const fracWhole = Math.floor(frac);
  const totalMs = whole + fracWhole;
  let seconds = Math.floor(totalMs / 1000);
  let nanos = Math.round((totalMs - seconds * 1000) * 1e6 + (frac - fracWhole) * 1e6);
  if (nanos >= 1e9) {
    seconds += 1;
    nanos -= 1e9;
  }
  return [seconds, nanos];
}

/** Decimal ns since the epoch of ms on the axis (the OTel-only data's event times). */
export function unixNano(ms: number): string {
  const [s, ns] = hrTime(ms);
  return (BigInt(s) * 1000000000n + BigInt(ns)).toString();
}

/** ms on the axis of decimal ns since the epoch. */
export function fromUnixNano(text: string): number {
  const ns = BigInt(text);
  return Number(ns / 1000000n) - ORIGIN + Number(ns % 1000000n) / 1e6;
}

/** HrTime of a duration in ms. */
export function hrDuration(ms: number): HrTime {
  const s = Math.floor(ms / 1000);
  return [s, Math.round((ms - s * 1000) * 1e6)];
}
