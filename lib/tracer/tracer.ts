// The public Tracer: argument checks, the name cache, handles, async spans,
// groups and settle on top of one Backend (native, js or noop). What it
// holds, and reading, writing, exporting and trace context, are in
// ./tracer-base.ts.

import { threadId } from 'node:worker_threads';

import type { CurrentStorage } from './async-context';
import { isThenable, traceAsyncOptions, type SettleOptions, type TraceAsyncOptions, type TrackOptions } from './async-spans';
import { attrsToJson, type Attributes } from '../attrs/attrs';
import type { Backend } from '../backends/backend';
import { createBackend, joinBackend } from './backend-choice';
import { checkProfileOptions, CpuProfileRun, ProfileAnnouncer, ProfileFollower, type CpuProfileHandle, type ProfileOptions } from './cpu-profile';
import { closedError, describe, nameTypeError } from '../common/errors';
import { FLAG_ERROR } from '../common/flags';
import { inGroup } from './groups';
import type { SpanHandle } from './handles';
import { internals, recording, type AsyncContextHook, type TracerInternals } from './internal';
import { checkName, checkNonEmptyName, wellFormed } from '../common/names';
import { checkCallOptions, checkThreadName, resolveOptions, type ResolvedOptions, type TracerOptions } from './options';
import type { OverDumpOn } from './dump-on';
import { TracerBase } from './tracer-base';

export type { SettleOptions, TraceAsyncOptions, TrackOptions } from './async-spans';

/** Options of `Tracer.join()` in a worker. */ export interface JoinOptions {
  /** Display name of this thread's timeline. Default: "worker <threadId>". */
  threadName?: string;
}

/**
 * The key of the one argument Tracer.join and tracerOver pass the
 * constructor: the backend they made. A symbol no other module holds, so it
 * is neither an option users can spell nor state between calls.
 */
const joined = Symbol('hotspan.joined');
type Joined = { readonly [joined]: Backend; readonly dumpOn?: OverDumpOn };
const joinedWith = (backend: Backend, dumpOn?: OverDumpOn): TracerOptions => ({ [joined]: backend, dumpOn }) as Joined as TracerOptions;

/** A span tracer: records spans, async spans, groups and counters, and reads, writes and exports them. See docs/api.md. */ export class Tracer extends TracerBase {
  constructor(options?: TracerOptions) {
    const injected = typeof options === 'object' && options !== null && joined in options ? (options as Joined) : undefined;
    const resolved = injected === undefined ? resolveOptions(options) : undefined;
    super(injected?.[joined] ?? createBackend(resolved as ResolvedOptions), resolved, injected?.dumpOn);
  }

  /**
   * Attaches this worker's thread to the tracer that made `token` with share():
   * its spans land on a timeline of their own there. Throws an Error naming the
   * token when it names no open tracer. See docs/workers-and-native.md.
   */
  static join(token: string, options?: JoinOptions): Tracer {
    if (typeof token !== 'string' || token.length === 0) {
      throw new TypeError(`hotspan: join token must be the string from tracer.share(), got ${describe(token)}`);
    }
    const threadName = checkThreadName(checkCallOptions(options, 'join()', ['threadName'])?.threadName ?? `worker ${String(threadId)}`);
    const t = new Tracer(joinedWith(joinBackend(token, threadName)));
    t.followOwnerProfile();
    return t;
  }

  /** A joined tracer profiles this thread while its owner profiles (ProfileFollower, ./cpu-profile.ts). */
  private followOwnerProfile(): void {
    const b = this.b;
    if (b.profileInterval === undefined) return;
    this.follower = new ProfileFollower(
      { profileInterval: (us) => b.profileInterval?.(us) ?? 0, share: () => b.share() },
      () => this.profiling?.active === true,
      (samples) => {
        this.b.cpuProfile?.(samples);
        // Published now: the owner may write its trace before this thread flushes again.
        this.b.flush();
      },
    );
  }

  /** Interns `name` and returns its id, for the fastest begin(). */
  name(name: string): number {
    return this.names.id(checkName(name));
  }

  // ---- spans on this thread ----

  /** Opens a span on this thread. Spans nest strictly: end() closes the innermost. */
  begin(name: number | string, attrs?: Attributes): void {
    if (typeof name === 'number' && name >>> 0 === name && name < this.names.limit) {
      if (attrs === undefined) {
        this.b.begin(name);
        return;
      }
      if (this.b.beginValues(name, attrs)) return;
    }
    this.beginId(this.nameId(name), attrs);
  }

  /** Closes the innermost open span of this thread. */
  end(): void {
    this.b.end();
  }

  /** Opens span `id` with `attrs` (validated here unless the backend took them as values). */
  private beginId(id: number, attrs: unknown): void {
    if (id < this.names.limit) {
      if (attrs === undefined) {
        this.b.begin(id);
        return;
      }
      if (this.b.beginValues(id, attrs)) return;
    }
    const json = this.attrsText(attrs);
    if (json === '' && id < this.names.limit) {
      this.b.begin(id);
    } else {
      // beginAttrs reports an unknown id (begin cannot).
      this.b.beginAttrs(id, json);
      this.names.known(id);
    }
  }

  private nameId(name: unknown): number {
    if (typeof name === 'string') return this.names.id(name);
    if (typeof name === 'number') {
      if (name >>> 0 !== name) throw new RangeError(`hotspan: a name id is a non-negative integer, got ${String(name)}`);
      return name;
    }
    throw nameTypeError(name);
  }

  private attrsText(attrs: unknown): string {
    if (attrs === undefined) return '';
    const json = attrsToJson(attrs);
    return json === '{}' ? '' : json;
  }

  /**
   * Runs `fn` inside a span and returns its value; if it throws, the span is
   * flagged error and the exception rethrown. If `fn` ended that span itself
   * or left spans open inside it, trace() throws and ends nothing.
   */
  trace<T>(name: number | string, fn: () => T, attrs?: Attributes): T {
    if (typeof fn !== 'function') throw new TypeError(`hotspan: trace() needs a function, got ${describe(fn)}`);
    const b = this.b;
    const id = this.nameId(name);
    let depth: number;
    if (attrs === undefined && id < this.names.limit) {
      depth = b.beginDepth(id);
    } else {
      // Attributes, or an id not known yet (beginAttrs checks it).
      this.beginId(id, attrs);
      depth = b.openDepth();
    }
    const dumps = this.dumps;
    const began = dumps !== undefined && depth === 1 && this.localRoot() ? dumps.syncRootBegin(b) : -1;
    let value: T;
    try {
      value = this.cx === undefined ? fn() : this.cx.runInOpen(b, fn);
    } catch (e) {
      try {
        this.b.endAt(depth, FLAG_ERROR, name);
      } catch {
        // The caller's exception matters more than a failed end.
      }
      dumps?.error(name);
      if (began >= 0) dumps?.syncRootEnd(b, name, began);
      throw e;
    }
    this.b.endAt(depth, 0, name);
    if (began >= 0) dumps?.syncRootEnd(b, name, began);
    return value;
  }

  /** No span open under the async context, or only a remote one (extract()'s): a span begun now with no open span is a local root. */
  private localRoot(): boolean {
    const under = this.cx?.storage.getStore();
    return under === undefined || under.given.ids[3] === 0n;
  }

  /** Opens a span and returns a handle whose end() closes it. A handle collected while open is ended as abandoned. */
  start(name: number | string, attrs?: Attributes): SpanHandle {
    const id = this.nameId(name);
    const label = typeof name === 'string' ? name : `name id ${String(id)}`;
    return this.handles.open(label, () => this.beginId(id, attrs));
  }

  // ---- async spans and tracks ----

  /** A named async track (idempotent by name). Serial: spans on it do not overlap. */
  track(name: string, options?: TrackOptions): number {
    return this.asyncs.track(name, options);
  }

  /**
   * An async span that begins now and ends when the promise (or fn's promise)
   * settles; flagged error on rejection, and the rejection passed through.
   * A fn that returns a non-thenable or throws has settled: its span ends at
   * once (flagged error for a throw), and the promise returned resolves to
   * the value (rejects with the error).
   */
  traceAsync<T>(
    name: number | string,
    work: (() => T | PromiseLike<T>) | PromiseLike<T>,
    options?: TraceAsyncOptions,
  ): Promise<Awaited<T>> {
    if (typeof work !== 'function' && !isThenable(work)) {
      throw new TypeError(`hotspan: traceAsync() needs a function or a promise, got ${describe(work)}`);
    }
    const o = traceAsyncOptions(options);
    const id = this.nameId(name);
    const attrs = o?.attrs;
    const track = this.asyncs.trackId(o?.track);
    let token = attrs !== undefined && id < this.names.limit ? this.b.asyncBeginValues(track, id, attrs) : 0;
    if (token === 0) token = this.b.asyncBegin(track, id, this.attrsText(attrs));
    this.names.known(id);
    const dumps = this.dumps;
    if (dumps === undefined || this.b.openDepth() !== 0 || !this.localRoot()) return this.asyncs.run(this.b, token, work, this.cx);
    return dumps.asyncRoot(this.b, name, dumps.rootBegin(this.b), this.asyncs.run(this.b, token, work, this.cx));
  }

  /**
   * Waits until every async span has ended, then flushes. On timeout rejects
   * with an Error naming the spans still open; they stay open.
   */
  settle(options?: SettleOptions): Promise<void> {
    return this.asyncs.settle(options);
  }

  // ---- groups ----

  /** Runs `fn` inside a span group (a phase bracketing every timeline); a returned promise ends the group when it settles. */
  group<T>(name: number | string, fn: () => T, attrs?: Attributes): T {
    if (typeof fn !== 'function') throw new TypeError(`hotspan: group() needs a function, got ${describe(fn)}`);
    const label = typeof name === 'string' ? name : `name id ${String(name)}`;
    return inGroup(() => this.b, () => this.groupBegin(name, attrs), label, fn);
  }

  /** Opens a span group; groupEnd() closes the innermost. */
  groupBegin(name: number | string, attrs?: Attributes): void {
    const id = this.nameId(name);
    this.b.groupBegin(id, this.attrsText(attrs));
    this.names.known(id);
  }

  /** Closes the innermost open group; throws (changing nothing) when none is open. */
  groupEnd(): void {
    this.b.groupEnd();
  }

  // ---- counters ----

  /**
   * Records a sample of the counter `name` at now: a counter track in both
   * output formats. For values sampled now and then, not per span (each takes
   * a lock); a series keeps 1,048,576 samples, later ones counted as dropped.
   */
  counter(name: string, value: number): void {
    name = wellFormed(checkNonEmptyName(name, 'counter name'));
    if (typeof value !== 'number') throw new TypeError(`hotspan: counter("${name}") value must be a number, got ${describe(value)}`);
    if (!Number.isFinite(value)) throw new RangeError(`hotspan: counter("${name}") value must be finite, got ${String(value)}`);
    this.b.counter(name, value);
  }

  // ---- CPU samples ----

  /**
   * Starts V8's CPU profiler on this thread (through node:inspector), every
   * `intervalUs` microseconds (default 1000), and on the owner of a native
   * tracer on every worker joined to it (each on its own track). `stop()` on
   * the handle adds the samples to the trace, on this thread's track and the
   * spans' clock (a worker's follow when it next turns its event loop): a
   * Profile in Chrome JSON, hot functions per span in `hotspan report`. One
   * profile at a time per tracer; close() stops a running one. The noop
   * backend returns a handle that samples nothing; the js backend throws (it
   * does not carry samples). See docs/profiling.md.
   */
  profile(options?: ProfileOptions): CpuProfileHandle {
    const intervalUs = checkProfileOptions(options);
    if (this.isClosed) throw closedError();
    const b = this.b;
    if (b.kind === 'noop') return { stop() {}, active: false };
    if (b.cpuProfile === undefined) {
      throw new Error(`hotspan: profile() needs the native backend; the ${b.kind} backend does not record CPU samples`);
    }
    if (this.profiling?.active === true) {
      throw new Error('hotspan: profile() is already running on this tracer; stop() its handle first');
    }
    if (this.follower?.active === true) {
      throw new Error("hotspan: profile() is already running on this worker: the profile of the tracer it joined runs on every joined worker");
    }
    // The owner (not a joined tracer) of a native tracer profiles its joined workers too.
    const announce = this.follower === undefined && b.profileInterval !== undefined;
    const run = new CpuProfileRun(
      intervalUs,
      (samples) => this.b.cpuProfile?.(samples),
      announce ? () => this.announcer?.announce(0) : undefined,
    );
    if (announce) {
      this.announcer ??= new ProfileAnnouncer({ profileInterval: (us) => b.profileInterval?.(us) ?? 0, share: () => b.share() });
      this.announcer.announce(intervalUs);
    }
    this.profiling = run;
    return run;
  }

  /** TracerInternals.asyncContext: made once (hotspan/otel reads internals on every span). */
  private readonly asyncContextHook = (storage?: object): AsyncContextHook | undefined => {
    this.startAsyncContext(storage as CurrentStorage | undefined);
    return this.cx;
  };

  /** @internal the backend recording now (hotspan/otel's per-span path) */
  get [recording](): Backend {
    return this.b;
  }

  /** @internal test and demo hooks */
  [internals](): TracerInternals {
    return {
      backend: this.b,
      gcHook: this.gcHook,
      handles: this.handles,
      native: this.b.native(),
      asyncContext: this.asyncContextHook,
      otlp: this.outputs.otlp,
      dumps: this.dumps,
    };
  }
}

/**
 * A tracer over a backend already made (a js backend on a clock the caller
 * drives, in the tests; hotspan/auto's, with the dumpOn of its environment). Not exported by any entry: the options users can
 * spell make every public tracer.
 * @internal
 */
export function tracerOver(backend: Backend, dumpOn?: OverDumpOn): Tracer {
  return new Tracer(joinedWith(backend, dumpOn));
}
