// Added CPU per Redis command on loopback (issue 33's figures): hotspan's own
// ioredis instrument, and @opentelemetry/instrumentation-ioredis on the no-op
// provider (its floor), on hotspan/otel and on the SDK, each against no
// tracing (bench/lib/client-cost.mjs says how it is measured).
//
//   node bench/cases/redis-command.mjs [--rounds=5] [--ops=4000] [--warm=5000]
//
// An ioredis client runs `GET key:<i mod 100>` (a short key, a nil answer)
// in sequence against its own redis-server. instrumentation-ioredis records a
// command only under a parent span unless `requireParentSpan` is false, which
// the otel modes set; zero-code (otel-hotspan) has no way to set it, so that
// mode would record nothing here and is not run.
import { createRequire } from 'node:module';

import { clientCost } from '../lib/client-cost.mjs';
import { startRedis } from '../lib/servers.mjs';

const require = createRequire(import.meta.url);

await clientCost({
  file: import.meta.url,
  unit: 'command',
  target: 'ioredis',
  hotspan: 'ioredis',
  otel: 'ioredis',
  instrumentation: () => new (require('@opentelemetry/instrumentation-ioredis').IORedisInstrumentation)({ requireParentSpan: false }),
  spanNames: { hotspan: (port) => `GET 127.0.0.1:${String(port)}` },
  skip: { 'otel-hotspan': 'instrumentation-ioredis records no command without a parent span unless configured, which zero-code cannot' },
  startServer: startRedis,
  async connect(port) {
    const Redis = require('ioredis');
    const client = new Redis(port, '127.0.0.1', { lazyConnect: true });
    await client.connect();
    return { run: (i) => client.get(`key:${String(i % 100)}`), close: () => client.quit() };
  },
});
