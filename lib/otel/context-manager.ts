// An OpenTelemetry ContextManager on AsyncLocalStorage: the active context
// follows async continuations (what instrumentations need to find a parent).

import { AsyncLocalStorage } from 'node:async_hooks';

import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';

export class AsyncLocalStorageContextManager implements ContextManager {
  private storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }

  /** Functions run in `ctx` when called; other targets (event emitters) are returned as they are. */
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...a: unknown[]) => unknown;
    const storage = this.storage;
    return function (this: unknown, ...args: unknown[]) {
      return storage.run(ctx, () => fn.apply(this, args));
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
