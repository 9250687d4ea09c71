// A tracer factory for one describe block: every tracer it made is closed
// after each test, so a failing test cannot leak a tracer into the next.
import { afterEach } from 'vitest';

import { Tracer, type TracerOptions } from '../../lib/index';
import { jsBackend } from '../../lib/tracer/backend-choice';
import { resolveOptions } from '../../lib/tracer/options';
import { tracerOver } from '../../lib/tracer/tracer';

/** A tracer's options, and for the js backend a clock the test drives. */
export type TestTracerOptions = TracerOptions & { clock?: () => number };

/**
 * A js-backend tracer (on the engine HOTSPAN_JS_ENGINE picks) that reads `clock` (ms on the performance.now() axis)
 * instead of performance.now(), its other options resolved as new Tracer
 * resolves them. Not an option users can spell: tests build it over the backend.
 */
export function clockedTracer(clock: () => number, options: TracerOptions = {}): Tracer {
  const o = resolveOptions({ ...options, backend: 'js' });
  return tracerOver(jsBackend(o.threadName, { memoryLimit: o.memoryLimit, onFull: o.onFull, sampler: 0n, keep: 0n, clock }));
}

/**
 * 'wasm': the js backend on the core in WebAssembly, chosen as users choose
 * it (HOTSPAN_JS_ENGINE=wasm while the tracer is made).
 */
export function tracerFactory(backend: 'native' | 'js' | 'noop' | 'wasm'): (options?: TestTracerOptions) => Tracer {
  const live: Tracer[] = [];
  afterEach(() => {
    for (const t of live.splice(0)) t.close();
  });
  return ({ clock, ...options }: TestTracerOptions = {}): Tracer => {
    if (clock !== undefined && backend !== 'js') throw new Error(`tracerFactory: a clock needs the js backend, not ${backend}`);
    const t = clock !== undefined ? clockedTracer(clock, options) : backend === 'wasm' ? wasmTracer(options) : new Tracer({ backend, ...options });
    live.push(t);
    return t;
  };
}

/** A js-backend tracer on the wasm engine, made as users make one (HOTSPAN_JS_ENGINE=wasm while it is made). */
export function wasmTracer(options: TracerOptions): Tracer {
  const before = process.env.HOTSPAN_JS_ENGINE;
  process.env.HOTSPAN_JS_ENGINE = 'wasm';
  try {
    return new Tracer({ ...options, backend: 'js' });
  } finally {
    if (before === undefined) delete process.env.HOTSPAN_JS_ENGINE;
    else process.env.HOTSPAN_JS_ENGINE = before;
  }
}
