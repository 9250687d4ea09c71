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

const WRAPPED = Symbol('hotspan.wrapped');

const IDENT = /[A-Za-z0-9_$\u0080-\uffff]/;

/**
 * The query with its literals replaced by `?`: strings ('...', E'...',
 * B'...', X'...', $tag$...$tag$) and numbers. Identifiers ("quoted" too),
 * parameters ($1), keywords and comments are kept. Linear in the query's
 * length (a bulk INSERT can be megabytes): the output is built as parts, and
 * only the last part and character are looked at.
 */
export function sanitizeSql(sql: string): string {
  const parts: string[] = [];
  let last = ' '; // the output's last character
  const emit = (text: string): void => {
    parts.push(text);
    last = text[text.length - 1];
  };
  const match = (re: RegExp, at: number): string => {
    re.lastIndex = at;
    return re.exec(sql)?.[0] ?? '';
  };
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i];
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end < 0 ? n : end;
      emit(sql.slice(i, stop));
      i = stop;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      emit(sql.slice(i, stop));
      i = stop;
    } else if (c === '"') {
      const end = sql.indexOf('"', i + 1);
      const stop = end < 0 ? n : end + 1;
      emit(sql.slice(i, stop));
      i = stop;
    } else if (c === "'") {
      // A prefix letter (E, B, X, N, U&) at the output's end, after a
      // character that is not [A-Za-z0-9_$] or at its start, is part of the
      // literal: read from the last three characters, then taken off.
      let tail = '';
      let j = parts.length - 1;
      while (j >= 0 && tail.length < 3) tail = parts[j--].slice(-3) + tail;
      const whole = j < 0 && tail.length <= 3;
      tail = tail.slice(-3);
      const m = (whole ? WHOLE_PREFIX : PREFIX).exec(tail);
      const escapes = m !== null && (m[1] === 'E' || m[1] === 'e');
      for (let drop = m === null ? 0 : m[1].length; drop > 0; ) {
        const part = parts[parts.length - 1];
        if (part.length <= drop) {
          parts.pop();
          drop -= part.length;
        } else {
          parts[parts.length - 1] = part.slice(0, part.length - drop);
          drop = 0;
        }
      }
      i++;
      while (i < n) {
        if (escapes && sql[i] === '\\') i += 2;
        else if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
        else if (sql[i] === "'") break;
        else i++;
      }
      i++;
      emit('?');
    } else if (c === '$' && !IDENT.test(last)) {
      const tag = match(DOLLAR_TAG, i);
      if (tag === '') {
        // A parameter ($1) or a lone $.
        const p = match(PARAMETER, i);
        emit(p);
        i += p.length;
        continue;
      }
      const end = sql.indexOf(tag, i + tag.length);
      i = end < 0 ? n : end + tag.length;
      emit('?');
    } else if (DIGIT.test(c) || (c === '.' && DIGIT.test(sql[i + 1] ?? ''))) {
      if (IDENT.test(last)) {
        emit(c);
        i++;
        continue;
      }
      const num = match(NUMBER, i);
      i += num === '' ? 1 : num.length;
      emit('?');
    } else if (IDENT.test(c)) {
      const word = match(WORD, i);
      emit(word);
      i += word.length;
    } else {
      emit(c);
      i++;
    }
  }
  return parts.join('');
}

// A letter (or U&) glued to a quote that makes it part of the literal
// (E'..', B'..', X'..', N'..', U&'..'), at the end of the output's last three
// characters: after a character that is not an identifier's, or (WHOLE_PREFIX,
// when those are the whole output) at its start.
const PREFIX = /[^A-Za-z0-9_$]([EeBbXxNn]|[Uu]&)$/;
const WHOLE_PREFIX = /(?:^|[^A-Za-z0-9_$])([EeBbXxNn]|[Uu]&)$/;
// Sticky: each matches at lastIndex only.
const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;
const PARAMETER = /\$\d*/y;
const NUMBER = /0[xXoObB][0-9A-Fa-f_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?/y;
const WORD = /[A-Za-z0-9_$\u0080-\uffff]+/y;
const DIGIT = /[0-9]/;

/**
 * Of a query's text, what db.query.text is made from: its first
 * MAX_QUERY_TEXT characters (a literal cut there still becomes `?`), so a
 * bulk INSERT of megabytes costs neither the service's thread nor the
 * trace's budget more than that.
 */
export const MAX_QUERY_TEXT = 16384;

function queryHead(text: string): string {
  if (text.length <= MAX_QUERY_TEXT) return text;
  const cut = MAX_QUERY_TEXT - (/[\uD800-\uDBFF]/.test(text[MAX_QUERY_TEXT - 1]) ? 1 : 0); // never half a surrogate pair
  return text.slice(0, cut);
}

/** The first keyword of the query (as written), past comments and parentheses; '' when there is none. */
export function sqlOperation(sql: string): string {
  const m = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/|\()*([A-Za-z]+)/.exec(sql);
  return m === null ? '' : m[1];
}

type PgClient = { host?: unknown; port?: unknown; database?: unknown };
type QueryConfig = { text?: unknown; submit?: unknown; callback?: unknown };

/** A query's span name and attributes, on `client`'s connection. */
export function pgQuery(client: PgClient, text: string): { name: string; attrs: Attrs } {
  const attrs: Attrs = { 'db.system.name': 'postgresql' };
  const op = sqlOperation(text);
  const db = typeof client.database === 'string' ? client.database : '';
  if (db !== '') attrs['db.namespace'] = db;
  if (op !== '') attrs['db.operation.name'] = op;
  attrs['db.query.text'] = sanitizeSql(queryHead(text));
  if (typeof client.host === 'string' && client.host !== '') attrs['server.address'] = client.host;
  const port = Number(client.port);
  if (Number.isInteger(port) && port > 0) attrs['server.port'] = port;
  const target = db !== '' ? db : typeof client.host === 'string' ? `${client.host}:${String(port)}` : '';
  const name = op !== '' && target !== '' ? `${op} ${target}` : op !== '' ? op : target !== '' ? target : 'postgresql';
  return { name, attrs };
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
