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
 * A js-backend tracer that reads `clock` (ms on the performance.now() axis)
 * instead of performance.now(), its other options resolved as new Tracer
 * resolves them. Not an option users can spell: tests build it over the backend.
 */
export function clockedTracer(clock: () => number, options: TracerOptions = {}): Tracer {
  const o = resolveOptions({ ...options, backend: 'js' });
  return tracerOver(jsBackend(o.threadName, { memoryLimit: o.memoryLimit, onFull: o.onFull, sampler: 0n, keep: 0n, clock, processName: o.processName }));
}

/** A tracer on `backend`, closed after each test of the describe block. */
export function tracerFactory(backend: 'native' | 'js' | 'noop'): (options?: TestTracerOptions) => Tracer {
  const live: Tracer[] = [];
  afterEach(() => {
    for (const t of live.splice(0)) t.close();
  });
  return ({ clock, ...options }: TestTracerOptions = {}): Tracer => {
    if (clock !== undefined && backend !== 'js') throw new Error(`tracerFactory: a clock needs the js backend, not ${backend}`);
    const t = clock !== undefined ? clockedTracer(clock, options) : new Tracer({ backend, ...options });
    live.push(t);
    return t;
  };
}
