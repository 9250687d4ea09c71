// An OpenTelemetry ContextManager on AsyncLocalStorage: the active context
// follows async continuations (what instrumentations need to find a parent).
// A context whose span is one of hotspan/otel's is also its tracer's current
// span (HotspanSpan.asCurrent), so hotspan's own spans begun inside it are
// its children. The tracer's async context keeps its current span in this
// manager's AsyncLocalStorage (SharedCurrent) when this manager turned it on:
// a second AsyncLocalStorage run per context, and its propagation to every
// async resource, measured about 24K of the 28K instructions per request
// hotspan's provider added over the no-op one under instrumentation-http
// (bench/cases/otel-http-callgrind.mjs, main thread).

import { AsyncLocalStorage } from 'node:async_hooks';

import { createContextKey, ROOT_CONTEXT, trace, type Context, type ContextManager, type Span } from '@opentelemetry/api';

import type { Current, CurrentStorage } from '../tracer/async-context';
import { internals, type AsyncContextHook } from '../tracer/internal';
import type { Tracer } from '../tracer/tracer';
import { HotspanSpan } from './span';

/** A span hotspan made current (traceAsync, withContext) in an OTel context, and that context's span then. */
interface Entry {
  readonly current: Current | undefined;
  readonly span: Span | undefined;
}

/**
 * One tracer's current span, kept in the OTel context: a span of the tracer
 * that is the context's span, unless hotspan made another one current
 * inside it (an Entry under `key`, which records the context's span then:
 * a different span now was set after it, so it is the inner one).
 */
class SharedCurrent implements CurrentStorage {
  private readonly key = createContextKey('hotspan current span');

  constructor(
    readonly manager: AsyncLocalStorageContextManager,
    readonly tracer: Tracer,
  ) {}

  run<T>(current: Current, fn: () => T): T {
    const ctx = this.manager.active();
    const entry: Entry = { current, span: trace.getSpan(ctx) };
    return this.manager.runIn(ctx.setValue(this.key, entry), fn);
  }

  getStore(): Current | undefined {
    const ctx = this.manager.stored();
    return ctx === undefined ? undefined : this.of(ctx);
  }

  /** The tracer's current span in `ctx`. */
  of(ctx: Context): Current | undefined {
    const e = ctx.getValue(this.key) as Entry | undefined;
    const span = trace.getSpan(ctx);
    if (span !== e?.span && span instanceof HotspanSpan && span.site.tracer === this.tracer) return span.asCurrent();
    return e?.current;
  }

  /**
   * `ctx` entered from the active context, its span not the tracer's: the
   * tracer's current span stays what it was (as with an AsyncLocalStorage
   * of the tracer's own, which such a context does not touch).
   */
  keep(ctx: Context): Context {
    const before = this.getStore();
    if (before === this.of(ctx)) return ctx;
    const entry: Entry = { current: before, span: trace.getSpan(ctx) };
    return ctx.setValue(this.key, entry);
  }
}

/** An OpenTelemetry ContextManager on AsyncLocalStorage, shared with the hotspan tracer's async context. */
export class AsyncLocalStorageContextManager implements ContextManager {
  private storage = new AsyncLocalStorage<Context>();
  // The tracers whose async context this manager turned on (usually one).
  private readonly shared: SharedCurrent[] = [];

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  /** The stored context, undefined outside any (SharedCurrent). */
  stored(): Context | undefined {
    return this.storage.getStore();
  }

  /** Runs `fn` with `ctx` active (SharedCurrent). */
  runIn<T>(ctx: Context, fn: () => T): T {
    return this.storage.run(ctx, fn);
  }

  /**
   * Runs `fn` with `ctx` active.
   * @typeParam A - the arguments of `fn`.
   * @typeParam F - the function run.
   */
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const span = trace.getSpan(ctx);
    const own = span instanceof HotspanSpan ? span : undefined;
    // A span whose tracer keeps its own AsyncLocalStorage (its async context was on before this manager saw it).
    let apart: AsyncContextHook | undefined;
    if (own !== undefined) {
      const cx = this.contextOf(own);
      if (cx !== undefined && !(cx.storage instanceof SharedCurrent && cx.storage.manager === this)) apart = cx;
    }
    for (const s of this.shared) if (own?.site.tracer !== s.tracer) ctx = s.keep(ctx);
    if (apart !== undefined && own !== undefined) {
      const cx = apart;
      return this.storage.run(ctx, () => cx.runAsCurrent(own.asCurrent(), () => fn.apply(thisArg, args)));
    }
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }

  /**
   * The async context of `span`'s tracer, turned on at its first context,
   * keeping its current span in this manager when that turns it on;
   * undefined for a closed tracer.
   */
  private contextOf(span: HotspanSpan): AsyncContextHook | undefined {
    const site = span.site;
    if (site.asyncContext !== undefined) return site.asyncContext;
    const known = this.shared.find((s) => s.tracer === site.tracer);
    const offer = known ?? new SharedCurrent(this, site.tracer);
    const cx = site.tracer[internals]().asyncContext(offer);
    if (cx !== undefined && known === undefined && cx.storage === offer) this.shared.push(offer);
    site.asyncContext = cx;
    return cx;
  }

  /**
   * Functions run in `ctx` when called; other targets (event emitters) are
   * returned as they are. Binding an emitter's listeners through
   * AsyncLocalStorage, as the SDK's context manager does, measured about
   * twice hotspan's added server CPU per request under instrumentation-http
   * (`node bench/run.mjs --only=otelhttp`), so it is left out.
   */
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...a: unknown[]) => unknown;
    const manager = this;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(ctx, fn, this, ...args);
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    this.storage = new AsyncLocalStorage<Context>();
    return this;
  }
}
