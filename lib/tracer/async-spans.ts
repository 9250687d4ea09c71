// A tracer's async spans: its named tracks, the pending ends of traceAsync
// spans, and settle(), which waits for them (and, on the js backend, for
// joined threads to ship what they recorded).

import type { Attributes } from '../attrs/attrs';
import type { Backend } from '../backends/backend';
import type { AsyncContext } from './async-context';
import { ChangeSignal } from '../common/change-signal';
import { describe, trackKindError } from '../common/errors';
import { FLAG_ERROR } from '../common/flags';
import { checkNonEmptyName, wellFormed } from '../common/names';
import { checkCallOptions } from './options';

/** Options of `traceAsync()`. */ export interface TraceAsyncOptions {
  /** A track id from tracer.track(), or a track name (created as a concurrent track if new). Default: the "async" track. */
  track?: number | string;
  /** The span's attributes. */ attrs?: Attributes;
}

/** Options of `track()`. */ export interface TrackOptions {
  /** Serial track: each span starts no earlier than the previous one on the track ended. */
  serial?: boolean;
}

/** Options of `settle()`. */ export interface SettleOptions {
  /** Reject if async spans are still open after this many ms. Default: no limit. */
  timeoutMs?: number;
}

/** Poll interval of settle() while async spans begun outside this facade are open. */
const SETTLE_POLL_MS = 2;

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

const TRACE_ASYNC_KEYS: readonly (keyof TraceAsyncOptions)[] = ['track', 'attrs'];

/**
 * checkCallOptions for traceAsync, which is per span: the usual options
 * (only known keys) pass with two comparisons a key instead of a list search.
 */
export function traceAsyncOptions(options: TraceAsyncOptions | undefined): TraceAsyncOptions | undefined {
  if (options === undefined) return undefined;
  if (typeof options === 'object' && options !== null) {
    let known = true;
    for (const key in options) {
      if (key !== 'track' && key !== 'attrs') known = false;
    }
    if (known && !Array.isArray(options)) return options;
  }
  // Throws for what it refuses (inherited keys pass).
  return checkCallOptions(options, 'traceAsync()', TRACE_ASYNC_KEYS);
}

/**
 * A traceAsync span's pending end. Its `then` reactions are the two shared
 * functions below bound to it: fresh closures would cost a span more (a
 * context, two functions, and a lazy compile at the first call of each).
 */
class AsyncSpanEnd {
  constructor(
    readonly ended: (token: number, flags: number) => void,
    readonly token: number,
  ) {}
}

function asyncFulfilled(this: AsyncSpanEnd, value: unknown): unknown {
  this.ended(this.token, 0);
  return value;
}

function asyncRejected(this: AsyncSpanEnd, reason: unknown): never {
  this.ended(this.token, FLAG_ERROR);
  throw reason;
}

/** What AsyncSpans asks of its tracer. */
export interface AsyncSpansOwner {
  /** The backend recording now (close() and the async context swap it). */
  backend(): Backend;
  closed(): boolean;
  flush(): void;
}

export class AsyncSpans {
  private readonly tracks = new Map<string, { id: number; serial: boolean }>();
  /** The default track of traceAsync(), once made. */
  private asyncTrack: number | undefined;
  /** traceAsync spans not ended yet, and settle() waiters woken at each end. */
  private open = 0;
  private readonly change = new ChangeSignal();
  /** ended() for this tracer's AsyncSpanEnds (one function, not one a span). */
  private readonly endedFn = (token: number, flags: number): void => this.ended(token, flags);

  constructor(private readonly owner: AsyncSpansOwner) {}

  /** tracer.track(): a named track, idempotent by name. */
  track(name: string, options?: TrackOptions): number {
    name = wellFormed(checkNonEmptyName(name, 'track name'));
    const serial = checkCallOptions(options, 'track()', ['serial'])?.serial ?? false;
    if (typeof serial !== 'boolean') throw new TypeError(`hotspan: serial must be a boolean, got ${describe(serial)}`);
    const known = this.tracks.get(name);
    if (known !== undefined) {
      if (known.serial !== serial) {
        throw trackKindError(name, known.serial);
      }
      return known.id;
    }
    const id = this.owner.backend().track(name, serial);
    this.tracks.set(name, { id, serial });
    return id;
  }

  /** The track a traceAsync option names (an id, a name, or undefined for the "async" track). */
  trackId(track: unknown): number {
    if (track === undefined) return (this.asyncTrack ??= this.track('async'));
    if (typeof track === 'string') {
      const known = this.tracks.get(track);
      return known !== undefined ? known.id : this.track(track);
    }
    if (typeof track === 'number' && track >>> 0 === track) return track;
    throw new TypeError(`hotspan: track must be a track id or name, got ${describe(track)}`);
  }

  /**
   * traceAsync's work, async span `token` begun on `b`: runs `work` (under
   * the span, with the async context `cx` on) and ends the span when it settles.
   */
  run<T>(b: Backend, token: number, work: (() => T | PromiseLike<T>) | PromiseLike<T>, cx: AsyncContext | undefined): Promise<Awaited<T>> {
    let p: Promise<Awaited<T>>;
    if (typeof work === 'function') {
      let value: T | PromiseLike<T>;
      let settled: boolean;
      try {
        const under = cx?.lastAsync;
        value = under === undefined ? work() : (cx as AsyncContext).storage.run(under, work);
        // A `then` getter that throws rejects, as Promise.resolve would.
        settled = !isThenable(value);
      } catch (e) {
        // The work failed before it could go async: the span ends now, flagged.
        b.asyncEnd(token, FLAG_ERROR);
        return Promise.reject(e as Error);
      }
      // The work settled synchronously (no thenable): the span ends now, the
      // exact end, with no reaction, no end object and no microtask.
      if (settled) {
        b.asyncEnd(token, 0);
        return Promise.resolve(value as Awaited<T>);
      }
      p = Promise.resolve(value);
    } else {
      p = Promise.resolve(work);
    }
    this.open++;
    const end = new AsyncSpanEnd(this.endedFn, token);
    return p.then(asyncFulfilled.bind(end), asyncRejected.bind(end)) as Promise<Awaited<T>>;
  }

  private ended(token: number, flags: number): void {
    // Never throws: a closed tracer must not turn a resolution into a rejection.
    this.owner.backend().asyncEnd(token, flags);
    this.open--;
    this.change.notify();
  }

  /** Wakes settle() waiters (close() ends their wait). */
  wake(): void {
    this.change.notify();
  }

  /** tracer.settle(). */
  async settle(options: SettleOptions | undefined): Promise<void> {
    // Any non-negative duration, Infinity included: waits longer than
    // setTimeout's 2^31-1 ms are chained (../common/change-signal).
    const timeoutMs = checkCallOptions(options, 'settle()', ['timeoutMs'])?.timeoutMs ?? Infinity;
    if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0) {
      throw new RangeError(`hotspan: timeoutMs must be a non-negative number, got ${describe(timeoutMs)}`);
    }
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (this.owner.closed()) return;
      const open = this.owner.backend().openAsync();
      if (open.length === 0) {
        await this.settleJoined(deadline, timeoutMs);
        this.owner.flush();
        return;
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        const list = open.map(([token, n]) => `"${n}" (span ${String(token)})`).join(', ');
        throw new Error(
          `hotspan: settle() timed out after ${String(timeoutMs)} ms; ${String(open.length)} async span(s) still open: ${list}`,
        );
      }
      // Spans begun outside this facade (the C ABI) end without telling us: poll.
      await this.change.next(open.length > this.open ? Math.min(left, SETTLE_POLL_MS) : left);
    }
  }

  /** js backend: waits for the threads joined to this tracer to ship what they recorded. */
  private async settleJoined(deadline: number, timeoutMs: number): Promise<void> {
    const b = this.owner.backend();
    if (b.settleJoined === undefined) return;
    const late = await b.settleJoined(deadline);
    if (late.length === 0) return;
    const list = late.map((n) => JSON.stringify(n)).join(', ');
    throw new Error(
      `hotspan: settle() timed out after ${String(timeoutMs)} ms; ${String(late.length)} joined thread(s) did not ship their records: ${list}`,
    );
  }
}
