// hotspan/auto's mysql2 instrument: a span per query or execute of mysql2 (a
// MySQL and MariaDB client), by OpenTelemetry's database conventions
// (lib/auto/auto-db.ts lists them). mysql2 (3.x, from 3.20) publishes a
// TracingChannel per statement, `mysql2:query` and `mysql2:execute`, which is
// all this instrument subscribes to for its spans: a connection's query() or
// execute() (a prepared statement: prepared, then run), with a callback, a
// promise (mysql2/promise) or as an event emitter, directly or through a pool
// (pool.query, pool.execute, pool.getConnection's connection), is one span
// from the call to its result. A failure is flagged, with error.type and
// db.response.status_code the MySQL error number ('1146'); a client-side
// failure (a lost connection) has its code (PROTOCOL_CONNECTION_LOST).
//
// db.system.name is `mysql`: the conventions name the system as the client
// identifies it, and mysql2 is a MySQL client whichever server answers (a
// MariaDB server too). db.query.text is the statement as sent, its literals
// replaced by `?` in MySQL's dialect (lib/auto/auto-sql.ts): for query(sql,
// values) mysql2 writes the values into the text before sending it, so they
// become `?` there; execute's values travel apart and are never read.
//
// The span's parent is the request being served when query() or execute()
// is called. A callback of mysql2 runs from the connection's socket, whose
// context is the request that opened the connection, and a pool hands a
// connection to a waiting getConnection(callback) from whatever released one.
// So, once mysql2 loads, the callbacks of the statements and of the pool's
// getConnection (`mysql2:pool:connect`) run in the request context of their
// call: a query made from a callback, or by pool.query once a connection is
// free, is its own request's child, not the releaser's.

import * as dc from 'node:diagnostics_channel';
import type { AsyncLocalStorage } from 'node:async_hooks';

import type { Attrs } from './auto-http';
import { setDbFailure, type DbRecorder, type DbSpan } from './auto-db';
import { sqlSpan } from './auto-sql';

/** A statement's trace context as mysql2 publishes it (its `values` are never read). */
interface StatementContext {
  query?: unknown;
  database?: unknown;
  serverAddress?: unknown;
  serverPort?: unknown;
  error?: unknown;
}

const STATEMENTS = ['mysql2:query', 'mysql2:execute'];
/** The channels whose callbacks run in their caller's context. */
const CALLBACKS = [...STATEMENTS, 'mysql2:pool:connect'];

/** A statement's span name and attributes. */
export function mysqlQuery(ctx: StatementContext): { name: string; attrs: Attrs } {
  return sqlSpan({ system: 'mysql', database: ctx.database, host: ctx.serverAddress, port: ctx.serverPort }, String(ctx.query));
}

/** A server error's number ('1146'): it comes with a SQLSTATE. Client-side errors (a socket's, negative; PROTOCOL_*) have none. */
export function mysqlErrorNumber(error: unknown): string | undefined {
  const e = error as { errno?: unknown; sqlState?: unknown } | null | undefined;
  return typeof e?.errno === 'number' && Number.isInteger(e.errno) && e.errno > 0 && typeof e.sqlState === 'string' ? String(e.errno) : undefined;
}

/** A span per statement published on `channel`, ended when its result arrives (before the program's callback runs). */
function follow(rec: DbRecorder, channel: string): void {
  const spans = new WeakMap<object, DbSpan>();
  const end = (ctx: StatementContext): void => {
    const s = spans.get(ctx);
    if (s === undefined) return;
    spans.delete(ctx);
    if (ctx.error !== undefined) setDbFailure(s, ctx.error, mysqlErrorNumber(ctx.error));
    rec.close(s);
  };
  const handlers = {
    start(m: unknown): void {
      const ctx = m as StatementContext;
      if (typeof ctx.query !== 'string') return;
      const { name, attrs } = mysqlQuery(ctx);
      spans.set(ctx, rec.open('mysql', name, attrs));
    },
    // A statement that threw where it was called: its error came before its end.
    end(m: unknown): void {
      if ((m as StatementContext).error !== undefined) end(m as StatementContext);
    },
    asyncStart(m: unknown): void {
      end(m as StatementContext);
    },
    asyncEnd(): void {},
    error(): void {},
  };
  const tc = dc.tracingChannel(channel);
  tc.subscribe(handlers);
  rec.onStop(() => tc.unsubscribe(handlers));
}

/**
 * Runs the callbacks each channel traces (its asyncStart) in the request
 * context of the call that started them (its start), whatever resumes them.
 */
function resumeInCaller(rec: DbRecorder, context: AsyncLocalStorage<object>, channels: readonly string[]): void {
  for (const name of channels) {
    const tc = dc.tracingChannel(name);
    const callers = new WeakMap<object, object | undefined>();
    const remember = (ctx: object): object | undefined => {
      const caller = context.getStore();
      callers.set(ctx, caller);
      return caller;
    };
    tc.start.bindStore(context, remember as (ctx: unknown) => object);
    tc.asyncStart.bindStore(context, ((ctx: object) => callers.get(ctx)) as (ctx: unknown) => object);
    rec.onStop(() => {
      tc.start.unbindStore(context);
      tc.asyncStart.unbindStore(context);
    });
  }
}

/** The mysql2 instrument. */
export function instrumentMysql(rec: DbRecorder): void {
  let loaded = false;
  rec.onLoad(['mysql2'], (_name, exports) => {
    if (!loaded) {
      loaded = true;
      resumeInCaller(rec, rec.useContext(), CALLBACKS);
    }
    return exports;
  });
  for (const channel of STATEMENTS) follow(rec, channel);
}
