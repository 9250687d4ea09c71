// Added CPU per pg query on loopback (issue 33's figures): hotspan's own pg
// instrument, and @opentelemetry/instrumentation-pg on the no-op provider (its
// floor), on hotspan/otel and on the SDK, each against no tracing
// (bench/lib/client-cost.mjs says how it is measured).
//
//   node bench/cases/pg-query.mjs [--rounds=5] [--ops=4000] [--warm=5000]
//
// A pg.Client runs `SELECT $1::int` (one parameter, a one-row answer) in
// sequence against its own PostgreSQL. On a busy 2-core machine a scratch
// mode with only an AsyncLocalStorage entered took most of hotspan's added
// CPU (33 of 35 us per query by the minimums, 63 of 82 by the medians).
import { createRequire } from 'node:module';

import { clientCost } from '../lib/client-cost.mjs';
import { startPostgres } from '../lib/servers.mjs';

const require = createRequire(import.meta.url);

await clientCost({
  file: import.meta.url,
  unit: 'query',
  target: 'pg',
  hotspan: 'pg',
  otel: 'pg',
  instrumentation: () => new (require('@opentelemetry/instrumentation-pg').PgInstrumentation)(),
  spanNames: { hotspan: () => 'SELECT postgres', 'otel-hotspan': () => 'pg.query:SELECT postgres' },
  startServer: startPostgres,
  async connect(port) {
    const pg = require('pg');
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
    await client.connect();
    return { run: (i) => client.query('SELECT $1::int AS n', [i]), close: () => client.end() };
  },
});
