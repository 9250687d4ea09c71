// Parents across `await` (opt-in): an AsyncLocalStorage holds the span that
// was current when work was scheduled, and spans begun with no open span on
// this thread (an async continuation, a callback) become its children, in
// its trace. The Tracer swaps its backend for a ContextBackend when the
// async context is turned on, so a tracer without it keeps its plain path.

import { AsyncLocalStorage } from 'node:async_hooks';

import type { Backend, BackendKind, Given, OpenIds } from '../backends/backend';
import type { NativeSnapshot, NativeTracer } from '../binding/native-binding';
import type { BackendCounts } from '../common/counts';
import type { OutputFormat, WrittenFile } from '../common/output';
import type { FrozenView } from '../read/frozen-view';
import type { StatsRow } from '../read/stats';
import { halves, hex64, type SpanContext } from './trace-context';

/** The current span of an async context: what its children are begun under, and its own context (inject). */
export interface Current {
  readonly given: Given;
  readonly context: SpanContext;
}

function current(traceHi: bigint, traceLo: bigint, wire: bigint, spanId: number, flags: number, tracestate: string, remote: boolean): Current {
  const ids = new BigUint64Array([traceHi, traceLo, wire, BigInt(spanId)]);
  let context: SpanContext | undefined;
  return {
    given: { ids, flags, tracestate },
    // Formatted only when asked (inject, currentContext): most spans never are.
    get context(): SpanContext {
      return (context ??= {
        traceId: hex64(traceHi) + hex64(traceLo),
        spanId: hex64(wire),
        traceFlags: flags,
        ...(tracestate !== '' ? { traceState: tracestate } : {}),
        ...(remote ? { isRemote: true } : {}),
      });
    },
  };
}

/**
 * A span of this tracer (tracer-wide id `spanId`) as the parent of the spans
 * begun under it, its ids asked of `ids` only when a span is begun under it
 * (hotspan/otel's bridge: most OTel contexts never see one).
 */
export function localCurrent(ids: () => { traceHi: bigint; traceLo: bigint; wire: bigint; flags: number; tracestate: string }, spanId: number): Current {
  let made: Current | undefined;
  const make = (): Current => {
    if (made === undefined) {
      const x = ids();
      made = current(x.traceHi, x.traceLo, x.wire, spanId, x.flags, x.tracestate, false);
    }
    return made;
  };
  return {
    get given(): Given {
      return make().given;
    },
    get context(): SpanContext {
      return make().context;
    },
  };
}

/** A remote (or user-given) context as the parent of the spans begun under it. */
export function remoteCurrent(ctx: SpanContext): Current {
  const [hi, lo] = halves(ctx.traceId);
  return current(hi, lo, BigInt('0x' + ctx.spanId), 0, ctx.traceFlags, ctx.traceState ?? '', ctx.isRemote === true);
}

/** The open span `ids` as current, with its trace's tracestate `ts`. */
function openCurrent(ids: OpenIds, ts: string): Current {
  return current(ids.traceHi, ids.traceLo, ids.span, ids.spanId, ids.flags, ts, false);
}

/** The backend under `b`'s async-context wrapper, or `b`: what begins a span under no current one (an OTel root). */
export function unwrapped(b: Backend): Backend {
  return b instanceof ContextBackend ? b.inner : b;
}

const ofTrace = (given: Given | undefined, ids: OpenIds): given is Given => given !== undefined && given.ids[0] === ids.traceHi && given.ids[1] === ids.traceLo;

/**
 * Where an async context keeps its current span: an AsyncLocalStorage of its
 * own, or hotspan/otel's context manager (otel/context-manager.ts), so one
 * AsyncLocalStorage carries both the OTel context and hotspan's current span.
 */
export interface CurrentStorage {
  run<T>(store: Current, fn: () => T): T;
  getStore(): Current | undefined;
}

export class AsyncContext {
  readonly storage: CurrentStorage;

  constructor(storage?: CurrentStorage) {
    this.storage = storage ?? new AsyncLocalStorage<Current>();
  }

  // The async span begun last, its current made only when read (lastAsync):
  // traceAsync reads it at once, an OTel span never does (its context is the
  // OTel one), and making it costs a native ids call and typed arrays.
  private lastInner: Backend | undefined;
  private lastToken = 0;
  private lastParent: Current | undefined;
  private lastMade: Current | undefined;
  // The context the outermost open span was begun under: its trace's
  // tracestate after that context's callback returned (open ids carry none).
  private outermost: Given | undefined;

  /** The tracestate of the open span `ids`'s trace. */
  openTracestate(ids: OpenIds): string {
    const store = this.storage.getStore()?.given;
    if (ofTrace(store, ids)) return store.tracestate;
    return ofTrace(this.outermost, ids) ? this.outermost.tracestate : '';
  }

  /** Runs `fn` with `current` as the current span (hotspan/otel's bridge, internal.ts AsyncContextHook). */
  runAsCurrent<T>(current: Current, fn: () => T): T {
    return this.storage.run(current, fn);
  }

  /** The parent a span begun now gets: the innermost open span of this thread, else the stored current. */
  parent(inner: Backend): Current | undefined {
    const store = this.storage.getStore();
    if (inner.openDepth() === 0) return store;
    const ids = inner.openIds();
    return ids !== undefined && ids.resolved ? openCurrent(ids, this.openTracestate(ids)) : store;
  }

  /** Runs `fn` with the innermost open span of this thread as the current span. */
  runInOpen<T>(inner: Backend, fn: () => T): T {
    const ids = inner.openIds();
    if (ids === undefined || !ids.resolved) return fn();
    return this.storage.run(openCurrent(ids, this.openTracestate(ids)), fn);
  }

  /** Wraps `inner` so spans begun with no open span on this thread get the current one as parent. */
  wrap(inner: Backend): Backend {
    return new ContextBackend(this, inner);
  }

  /**
   * Begins span `nameId` on `inner` under the stored current span when no
   * span is open on this thread; false (nothing done) otherwise.
   */
  beginUnder(inner: Backend, nameId: number, json: string): boolean {
    if (inner.openDepth() !== 0) return false;
    const parent = this.storage.getStore();
    if (parent === undefined) return false;
    this.outermost = parent.given;
    inner.beginContext(nameId, json, parent.given);
    return true;
  }

  /** The current span of the async span begun last (traceAsync runs its work under it). */
  get lastAsync(): Current | undefined {
    const inner = this.lastInner;
    if (this.lastMade !== undefined || inner === undefined) return this.lastMade;
    const token = this.lastToken;
    const own = inner.idsOf(token);
    const p = this.lastParent?.given;
    this.lastMade =
      p === undefined
        ? current(own[1], own[2], own[0], token, 1, '', false)
        : current(p.ids[0], p.ids[1], own[0], token, p.flags, p.tracestate, false);
    return this.lastMade;
  }

  /** An async span under the current parent; lastAsync answers its own current. */
  asyncBegin(inner: Backend, track: number, nameId: number, json: string): number {
    const parent = this.parent(inner);
    const token = parent === undefined ? inner.asyncBegin(track, nameId, json) : inner.asyncBeginContext(track, nameId, json, parent.given);
    this.lastInner = inner;
    this.lastToken = token;
    this.lastParent = parent;
    this.lastMade = undefined;
    return token;
  }
}

/**
 * tracer.currentContext(): the W3C context of the innermost open span of
 * this thread, else (`cx` on) of the async context's current span.
 */
export function currentContextOf(b: Backend, cx: AsyncContext | undefined): SpanContext | undefined {
  const store = cx?.storage.getStore();
  const ids = b.openIds();
  if (ids === undefined || !ids.resolved) return store?.context;
  const ts = cx?.openTracestate(ids) ?? '';
  return {
    traceId: hex64(ids.traceHi) + hex64(ids.traceLo),
    spanId: hex64(ids.span),
    traceFlags: ids.flags,
    ...(ts !== '' ? { traceState: ts } : {}),
  };
}

/**
 * A backend with the async context on: the span-opening calls begin under the
 * stored current span when no span is open on this thread; every other call
 * is `inner`'s. Written out member by member, so the compiler checks that it
 * is a whole Backend.
 */
class ContextBackend implements Backend {
  readonly kind: BackendKind;
  readonly clockBoundMs: number;

  constructor(
    private readonly cx: AsyncContext,
    readonly inner: Backend,
  ) {
    this.kind = inner.kind;
    this.clockBoundMs = inner.clockBoundMs;
  }

  // ---- what the context changes ----
  begin(nameId: number): void {
    if (!this.cx.beginUnder(this.inner, nameId, '')) this.inner.begin(nameId);
  }
  beginAttrs(nameId: number, attrsJson: string): void {
    if (!this.cx.beginUnder(this.inner, nameId, attrsJson)) this.inner.beginAttrs(nameId, attrsJson);
  }
  /** Values are taken only when no context applies; else the caller falls back to beginAttrs. */
  beginValues(nameId: number, attrs: unknown): boolean {
    const under = this.inner.openDepth() === 0 && this.cx.storage.getStore() !== undefined;
    return !under && this.inner.beginValues(nameId, attrs);
  }
  beginDepth(nameId: number): number {
    if (!this.cx.beginUnder(this.inner, nameId, '')) return this.inner.beginDepth(nameId);
    return this.inner.openDepth();
  }
  asyncBegin(track: number, nameId: number, attrsJson: string): number {
    return this.cx.asyncBegin(this.inner, track, nameId, attrsJson);
  }
  /** Never takes values: asyncBegin (its parent) takes the JSON form. */
  asyncBeginValues(): number {
    return 0;
  }

  // ---- the rest is inner's ----
  end(): void {
    this.inner.end();
  }
  endFlags(flags: number): void {
    this.inner.endFlags(flags);
  }
  endAt(depth: number, flags: number, name: number | string): void {
    this.inner.endAt(depth, flags, name);
  }
  intern(name: string): number {
    return this.inner.intern(name);
  }
  openDepth(): number {
    return this.inner.openDepth();
  }
  innermost(): number {
    return this.inner.innermost();
  }
  lastBegun(): number {
    return this.inner.lastBegun();
  }
  now(): number {
    return this.inner.now();
  }
  track(name: string, serial: boolean): number {
    return this.inner.track(name, serial);
  }
  asyncEnd(token: number, flags: number): number {
    return this.inner.asyncEnd(token, flags);
  }
  openAsync(): Array<[number, string]> {
    return this.inner.openAsync();
  }
  groupBegin(nameId: number, attrsJson: string): void {
    this.inner.groupBegin(nameId, attrsJson);
  }
  groupEnd(): void {
    this.inner.groupEnd();
  }
  openGroups(): number {
    return this.inner.openGroups();
  }
  counter(name: string, value: number): void {
    this.inner.counter(name, value);
  }
  flush(): void {
    this.inner.flush();
  }
  pending(): number {
    return this.inner.pending();
  }
  lost(): number {
    return this.inner.lost();
  }
  snapshot(): NativeSnapshot {
    return this.inner.snapshot();
  }
  freeze(): FrozenView {
    return this.inner.freeze();
  }
  stats(): readonly StatsRow[] {
    return this.inner.stats();
  }
  counts(): BackendCounts {
    return this.inner.counts();
  }
  chromeJson(): Uint8Array {
    return this.inner.chromeJson();
  }
  perfetto(): Uint8Array {
    return this.inner.perfetto();
  }
  writeFile(path: string, format: OutputFormat): Promise<WrittenFile> {
    return this.inner.writeFile(path, format);
  }
  writeFileNow(path: string, format: OutputFormat): WrittenFile {
    return this.inner.writeFileNow(path, format);
  }
  beginContext(nameId: number, attrsJson: string, given: Given): void {
    this.inner.beginContext(nameId, attrsJson, given);
  }
  asyncBeginContext(track: number, nameId: number, attrsJson: string, given: Given): number {
    return this.inner.asyncBeginContext(track, nameId, attrsJson, given);
  }
  asyncFinish(token: number, flags: number, startMs: number, endMs: number, nameId: number, attrsJson?: string): number {
    return this.inner.asyncFinish(token, flags, startMs, endMs, nameId, attrsJson);
  }
  openIds(): OpenIds | undefined {
    return this.inner.openIds();
  }
  idsOf(span: number): BigUint64Array {
    return this.inner.idsOf(span);
  }
  share(): string {
    return this.inner.share();
  }
  nativeApi(): unknown {
    return this.inner.nativeApi();
  }
  native(): NativeTracer | undefined {
    return this.inner.native();
  }
  close(): void {
    this.inner.close();
  }
}
