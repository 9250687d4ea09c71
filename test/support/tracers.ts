// A tracer factory for one describe block: every tracer it made is closed
// after each test, so a failing test cannot leak a tracer into the next.
import { afterEach } from 'vitest';

import { Tracer, type TracerOptions } from '../../lib/index';

export function tracerFactory(backend: 'native' | 'js' | 'noop'): (options?: TracerOptions) => Tracer {
  const live: Tracer[] = [];
  afterEach(() => {
    for (const t of live.splice(0)) t.close();
  });
  return (options: TracerOptions = {}): Tracer => {
    const t = new Tracer({ backend, ...options });
    live.push(t);
    return t;
  };
}
