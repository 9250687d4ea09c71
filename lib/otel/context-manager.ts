// An OpenTelemetry ContextManager on AsyncLocalStorage: the active context
// follows async continuations (what instrumentations need to find a parent).
// A context whose span is one of hotspan/otel's is also made current in its
// tracer's async context (HotspanSpan.runAsCurrent), so hotspan's own spans
// begun inside it are its children; other contexts cost nothing more.

import { AsyncLocalStorage } from 'node:async_hooks';

import { ROOT_CONTEXT, trace, type Context, type ContextManager } from '@opentelemetry/api';

import { HotspanSpan } from './span';

export class AsyncLocalStorageContextManager implements ContextManager {
  private storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const span = trace.getSpan(ctx);
    const run = span instanceof HotspanSpan ? () => span.runAsCurrent(() => fn.apply(thisArg, args)) : () => fn.apply(thisArg, args);
    return this.storage.run(ctx, run);
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
