// W3C Trace Context (https://www.w3.org/TR/trace-context/): the traceparent
// and tracestate headers in and out. The one place hotspan reads or writes
// them; ids themselves are derived by the core (native/core/record/trace_id.h) and
// arrive here as 64-bit halves to format.

import { describe } from '../common/errors';

/** A span's context as W3C Trace Context carries it (the shape OpenTelemetry's SpanContext has). */
export interface SpanContext {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  readonly spanId: string;
  /** W3C trace-flags: bit 0 = sampled. */
  readonly traceFlags: number;
  /** The tracestate header's list, as received (validated). */
  readonly traceState?: string;
  /** True for a context from extract() (a parent in another process). */
  readonly isRemote?: boolean;
}

/** Header carriers inject() writes into and extract() reads from. */
export type HeaderCarrier =
  | Record<string, string | string[] | number | undefined>
  | {
      /** The value of a header, as Headers.get() gives it. */
      get(name: string): string | null | undefined;
      /** Sets a header, as Headers.set() does. */
      set?(name: string, value: string): void;
    };

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const HEX2 = /^[0-9a-f]{2}$/;
const ZERO32 = '0'.repeat(32);
const ZERO16 = '0'.repeat(16);
/** tracestate: list members (spec section 3.3.1). */
const MAX_MEMBERS = 32;
const MAX_TRACESTATE = 512;
const KEY = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/;
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/** The 16 hex digits of an unsigned 64-bit value. */
export function hex64(v: bigint): string {
  return v.toString(16).padStart(16, '0');
}

/** Big-endian halves of 32 (or 16) hex digits. */
export function halves(traceId: string): [bigint, bigint] {
  return [BigInt('0x' + traceId.slice(0, 16)), BigInt('0x' + traceId.slice(16, 32))];
}

/**
 * The context a traceparent value carries, or undefined when it is invalid.
 * Version 00 must be exactly 55 characters; a higher version (not ff) may be
 * longer, its first 55 characters parsed as version 00 and the rest ignored
 * if it starts with '-' (spec section 3.2.4).
 */
export function parseTraceparent(value: string): SpanContext | undefined {
  const v = value.trim();
  const version = v.slice(0, 2);
  if (!HEX2.test(version) || version === 'ff') return undefined;
  if (version === '00' ? v.length !== 55 : v.length < 55 || (v.length > 55 && v[55] !== '-')) return undefined;
  if (v[2] !== '-' || v[35] !== '-' || v[52] !== '-') return undefined;
  const traceId = v.slice(3, 35);
  const spanId = v.slice(36, 52);
  const flags = v.slice(53, 55);
  if (!HEX32.test(traceId) || traceId === ZERO32) return undefined;
  if (!HEX16.test(spanId) || spanId === ZERO16) return undefined;
  if (!HEX2.test(flags)) return undefined;
  // A future version's other flag bits mean nothing to version 00.
  const traceFlags = Number.parseInt(flags, 16) & (version === '00' ? 0xff : 0x01);
  return { traceId, spanId, traceFlags, isRemote: true };
}

/**
 * The tracestate list with its empty members removed, or undefined when it
 * is invalid (a bad key or value, a duplicate key, more than 32 members):
 * the whole header is then discarded (spec section 3.3.1.1).
 */
export function parseTracestate(value: string): string | undefined {
  const members: string[] = [];
  const keys = new Set<string>();
  for (const raw of value.split(',')) {
    const m = raw.trim();
    if (m === '') continue;
    const eq = m.indexOf('=');
    if (eq <= 0) return undefined;
    const key = m.slice(0, eq);
    if (!KEY.test(key) || !VALUE.test(m.slice(eq + 1)) || keys.has(key)) return undefined;
    keys.add(key);
    members.push(m);
  }
  if (members.length === 0 || members.length > MAX_MEMBERS) return undefined;
  const joined = members.join(',');
  return joined.length <= MAX_TRACESTATE ? joined : undefined;
}

/** The values of header `name` (case-insensitive), as received. */
function headerValues(headers: HeaderCarrier, name: string): string[] {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const v = (headers as { get(n: string): string | null | undefined }).get(name);
    return typeof v === 'string' ? [v] : [];
  }
  const h = headers as Record<string, unknown>;
  let v = h[name];
  if (v === undefined) {
    for (const k of Object.keys(h)) {
      if (k.toLowerCase() === name) {
        v = h[k];
        break;
      }
    }
  }
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return [];
}

/**
 * The remote parent context that incoming `headers` carry, or undefined.
 * Malformed headers are ignored (undefined, or no traceState), never thrown
 * on. Several traceparent values are invalid; several tracestate values are
 * one list.
 */
export function extractContext(headers: unknown): SpanContext | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const carrier = headers as HeaderCarrier;
  let parents: string[];
  let states: string[];
  try {
    // A carrier's get(), getters or Proxy traps are the program's code: one that throws carries no context.
    parents = headerValues(carrier, 'traceparent');
    states = parents.length === 1 ? headerValues(carrier, 'tracestate') : [];
  } catch {
    return undefined;
  }
  return contextFromValues(parents, states);
}

/** The context of the received traceparent and tracestate values (extractContext's rules). */
export function contextFromValues(parents: readonly string[], states: readonly string[]): SpanContext | undefined {
  if (parents.length !== 1) return undefined;
  const ctx = parseTraceparent(parents[0]);
  if (ctx === undefined) return undefined;
  const traceState = states.length === 0 ? undefined : parseTracestate(states.join(','));
  return traceState === undefined ? ctx : { ...ctx, traceState };
}

/** traceparent (version 00) of `ctx`. */
export function formatTraceparent(ctx: SpanContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${(ctx.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * Writes `ctx` into `headers` (traceparent, and tracestate when it has a
 * valid one: an invalid tracestate, one that breaks the W3C list grammar or
 * its limits of 32 members and 512 characters, is left out, as a receiver
 * would discard it). A TypeError naming the carrier when it cannot be
 * written (a frozen object, a set() that throws).
 */
export function injectContext(headers: HeaderCarrier, ctx: SpanContext): void {
  const set = (headers as { set?: unknown }).set;
  const put =
    typeof set === 'function'
      ? (k: string, v: string) => {
          (set as (k: string, v: string) => void).call(headers, k, v);
        }
      : (k: string, v: string) => {
          (headers as Record<string, string>)[k] = v;
        };
  const state = ctx.traceState === undefined || ctx.traceState === '' ? undefined : parseTracestate(ctx.traceState);
  const write = (k: string, v: string): void => {
    try {
      put(k, v);
    } catch (e) {
      throw new TypeError(
        `hotspan: inject() cannot write the ${k} header into its headers, ${describe(headers)} ` +
          `(frozen, sealed or read-only?): ${(e as Error).message}`,
        { cause: e },
      );
    }
  };
  write('traceparent', formatTraceparent(ctx));
  if (state !== undefined) write('tracestate', state);
}

/** Checks a user-given context: a TypeError naming the bad field. */
export function checkSpanContext(ctx: unknown, what: string): SpanContext {
  const c = ctx as Partial<SpanContext> | null;
  if (typeof c !== 'object' || c === null) throw new TypeError(`hotspan: ${what} must be a SpanContext object, got ${String(ctx)}`);
  if (typeof c.traceId !== 'string' || !HEX32.test(c.traceId) || c.traceId === ZERO32) {
    throw new TypeError(`hotspan: ${what}.traceId must be 32 lowercase hex digits, not all zero, got ${JSON.stringify(c.traceId)}`);
  }
  if (typeof c.spanId !== 'string' || !HEX16.test(c.spanId) || c.spanId === ZERO16) {
    throw new TypeError(`hotspan: ${what}.spanId must be 16 lowercase hex digits, not all zero, got ${JSON.stringify(c.spanId)}`);
  }
  if (typeof c.traceFlags !== 'number' || c.traceFlags >>> 0 !== c.traceFlags || c.traceFlags > 0xff) {
    throw new TypeError(`hotspan: ${what}.traceFlags must be an integer in [0, 255], got ${String(c.traceFlags)}`);
  }
  if (c.traceState !== undefined && typeof c.traceState !== 'string') {
    throw new TypeError(`hotspan: ${what}.traceState must be a string, got ${typeof c.traceState}`);
  }
  return c as SpanContext;
}
