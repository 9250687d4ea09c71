// hotspan/auto's pg instrument: a span per query of node-postgres (`pg`), by
// OpenTelemetry's database conventions (lib/auto/auto-db.ts lists them). pg
// publishes no diagnostics channel, so Client.prototype.query is wrapped when
// pg's lib/client.js loads (require-in-the-middle): a query on a pg.Client, a
// pg.Pool (pool.query runs a client's query) or a pooled client, in text,
// parameterised ($1; the values are never recorded) or prepared (named) form,
// with a callback or a promise, is one span from the call to its result.
// Queries given as a Submittable (pg-cursor, pg-query-stream) are not traced.
//
// The span's parent is the request being served when query() is called.
// pg-pool hands a client to a waiting connect(callback) from whatever released
// one: the callback is bound to its caller's context so that pool.query's
// span has its own request as parent, not the releaser's.

import type { Attrs } from './auto-http';
import { setDbFailure, type DbRecorder } from './auto-db';
import { sqlSpan } from './auto-sql';

const WRAPPED = Symbol('hotspan.wrapped');

type PgClient = { host?: unknown; port?: unknown; database?: unknown };
type QueryConfig = { text?: unknown; submit?: unknown; callback?: unknown };

/** A query's span name and attributes, on `client`'s connection. */
export function pgQuery(client: PgClient, text: string): { name: string; attrs: Attrs } {
  return sqlSpan({ system: 'postgresql', database: client.database, host: client.host, port: client.port }, text);
}

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  // A server error's SQLSTATE: five digits or capitals (42P01). Client-side errors have other codes or none.
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

function wrapQuery(rec: DbRecorder, Client: { prototype: Record<string | symbol, unknown> }): void {
  const proto = Client.prototype;
  const original = proto.query;
  if (typeof original !== 'function' || (original as { [WRAPPED]?: boolean })[WRAPPED]) return;
  const query = function query(this: PgClient, config: unknown, ...rest: unknown[]): unknown {
    const cfg = config as QueryConfig | string | null | undefined;
    const text = typeof cfg === 'string' ? cfg : typeof cfg?.text === 'string' && typeof cfg.submit !== 'function' ? cfg.text : undefined;
    if (text === undefined || (typeof cfg === 'object' && typeof cfg?.callback === 'function')) {
      return Reflect.apply(original, this, [config, ...rest]);
    }
    const { name, attrs } = pgQuery(this, text);
    const span = rec.open('pg', name, attrs);
    const done = (err: unknown): void => {
      if (err !== null && err !== undefined) setDbFailure(span, err, sqlState(err));
      rec.close(span);
    };
    // query(text, cb), query(text, values, cb): the callback is the last function given.
    const at = rest.findIndex((a) => typeof a === 'function');
    if (at >= 0) {
      const cb = rest[at] as (...a: unknown[]) => unknown;
      rest[at] = function (this: unknown, err: unknown, ...more: unknown[]): unknown {
        done(err);
        return Reflect.apply(cb, this, [err, ...more]);
      };
    }
    let result: unknown;
    try {
      result = Reflect.apply(original, this, [config, ...rest]);
    } catch (e) {
      done(e);
      throw e;
    }
    if (at < 0 && typeof (result as Promise<unknown> | undefined)?.then === 'function') {
      // A second branch of the program's promise: its rejection still reaches the program.
      (result as Promise<unknown>).then(
        () => done(undefined),
        (e: unknown) => done(e ?? new Error('rejected')),
      );
    }
    return result;
  };
  (query as unknown as { [WRAPPED]: boolean })[WRAPPED] = true;
  proto.query = query;
  rec.onStop(() => {
    if (proto.query === query) proto.query = original;
  });
}

function wrapPoolConnect(rec: DbRecorder, Pool: { prototype: Record<string | symbol, unknown> }): void {
  const proto = Pool.prototype;
  const original = proto.connect;
  if (typeof original !== 'function' || (original as { [WRAPPED]?: boolean })[WRAPPED]) return;
  const connect = function connect(this: unknown, ...args: unknown[]): unknown {
    if (typeof args[0] === 'function') args[0] = rec.bind(args[0] as (...a: never[]) => unknown);
    return Reflect.apply(original, this, args);
  };
  (connect as unknown as { [WRAPPED]: boolean })[WRAPPED] = true;
  proto.connect = connect;
  rec.onStop(() => {
    if (proto.connect === connect) proto.connect = original;
  });
}

/** The pg instrument: wraps pg's Client and pg-pool's Pool as they load. */
export function instrumentPg(rec: DbRecorder): void {
  rec.onLoad(['pg', 'pg-pool'], (name, exports) => {
    rec.useContext();
    if (name === 'pg/lib/client.js' && typeof exports === 'function') wrapQuery(rec, exports as { prototype: Record<string, unknown> });
    if (name === 'pg-pool' && typeof exports === 'function') wrapPoolConnect(rec, exports as { prototype: Record<string, unknown> });
    return exports;
  });
}
