// An OpenTelemetry ContextManager on AsyncLocalStorage: the active context
// follows async continuations (what instrumentations need to find a parent).
// A context whose span is one of hotspan/otel's is also made current in its
// tracer's async context (HotspanSpan.runAsCurrent), so hotspan's own spans
// begun inside it are its children; other contexts cost nothing more.

import { AsyncLocalStorage } from 'node:async_hooks';

import { ROOT_CONTEXT, trace, type Context, type ContextManager } from '@opentelemetry/api';

import { HotspanSpan } from './span';

type Listener = (...args: unknown[]) => unknown;
type ListenerMethod = (this: Emitter, event: string | symbol, listener: Listener) => unknown;

const ADDERS = ['on', 'addListener', 'prependListener', 'once', 'prependOnceListener'] as const;
const REMOVERS = ['removeListener', 'off'] as const;
type Emitter = Record<(typeof ADDERS)[number] | (typeof REMOVERS)[number], ListenerMethod>;

/** Emitters already bound (their methods replaced once). */
const BOUND = new WeakSet<object>();
/** The listener wrappers bind() made: Node's once() adds its own wrapper of one through on(), not to be wrapped again. */
const WRAPPERS = new WeakSet<Listener>();

function isEmitter(x: unknown): x is Emitter {
  if (x === null || typeof x !== 'object') return false;
  const o = x as Record<string, unknown>;
  return [...ADDERS, ...REMOVERS].every((m) => typeof o[m] === 'function');
}

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
   * A function runs in `ctx` when called. An EventEmitter's listeners added
   * after this call run in `ctx` (its first bind wins, as in OpenTelemetry's
   * own context managers), and removing the original listener removes them.
   * Anything else is returned as it is.
   */
  bind<T>(ctx: Context, target: T): T {
    if (typeof target === 'function') return this.bindFunction(ctx, target as unknown as (...a: unknown[]) => unknown) as unknown as T;
    if (isEmitter(target)) this.bindEmitter(ctx, target);
    return target;
  }

  private bindFunction(ctx: Context, fn: (...a: unknown[]) => unknown): (...a: unknown[]) => unknown {
    const self = this;
    return function (this: unknown, ...args: unknown[]) {
      return self.with(ctx, fn, this, ...args);
    };
  }

  private bindEmitter(ctx: Context, ee: Emitter): void {
    if (BOUND.has(ee)) return;
    // One wrapper per (event, listener): a listener added twice is removed once per removal, as Node counts it.
    const wrappers = new Map<string | symbol, WeakMap<Listener, Listener>>();
    BOUND.add(ee);
    const wrapped = (event: string | symbol, listener: Listener): Listener => {
      let m = wrappers.get(event);
      if (m === undefined) wrappers.set(event, (m = new WeakMap()));
      let w = m.get(listener);
      if (w === undefined) {
        w = this.bindFunction(ctx, listener);
        WRAPPERS.add(w);
        m.set(listener, w);
      }
      return w;
    };
    for (const method of ADDERS) {
      const original = ee[method];
      ee[method] = function (this: Emitter, event: string | symbol, listener: Listener) {
        const asIs = typeof listener !== 'function' || WRAPPERS.has(listener) || WRAPPERS.has((listener as { listener?: Listener }).listener as Listener);
        return original.call(this, event, asIs ? listener : wrapped(event, listener));
      };
    }
    for (const method of REMOVERS) {
      const original = ee[method];
      ee[method] = function (this: Emitter, event: string | symbol, listener: Listener) {
        return original.call(this, event, wrappers.get(event)?.get(listener) ?? listener);
      };
    }
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
