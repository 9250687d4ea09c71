// What hotspan/auto's SQL instruments (lib/auto/auto-pg.ts,
// lib/auto/auto-mysql.ts) share: a query's span name and attributes by
// OpenTelemetry's database conventions (lib/auto/auto-db.ts lists them), its
// operation (the first keyword), and its text with every literal replaced
// by `?` (sanitizeSql), in the dialect of its database.
//
// The dialects differ in what a quote means. PostgreSQL: '...' is a string
// (E'...' with backslash escapes), "..." an identifier (kept), $tag$...$tag$
// a string, $1 a parameter (kept). MySQL and MariaDB: '...' and "..." are
// strings, with backslash escapes (the server's default: a literal that ends
// in a backslash under NO_BACKSLASH_ESCAPES is read as going on), `...` an
// identifier (kept), # and `-- ` start comments (`--` without a space is two
// minus signs), /*! ... */ and /*+ ... */ hold SQL (read as such), and TRUE
// and FALSE are literals (mysql2 writes a boolean value so).

import type { Attrs } from './auto-http';

export type SqlDialect = 'postgresql' | 'mysql';

const IDENT = /[A-Za-z0-9_$\u0080-\uffff]/;

/**
 * The query with its literals replaced by `?`: strings and numbers (and, in
 * MySQL, TRUE and FALSE). Identifiers, parameters, keywords and comments are
 * kept. Linear in the query's length (a bulk INSERT can be megabytes): the
 * output is built as parts, and only the last part and character are looked
 * at.
 */
export function sanitizeSql(sql: string, dialect: SqlDialect = 'postgresql'): string {
  const mysql = dialect === 'mysql';
  const n = sql.length;
  let i = 0;
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
  /** A comment or quoted identifier from `i` to the first `close` at or after `from` (or the end), kept. */
  const keep = (i: number, from: number, close: string): number => {
    const end = sql.indexOf(close, from);
    const stop = end < 0 ? n : end + close.length;
    emit(sql.slice(i, stop));
    return stop;
  };
  while (i < n) {
    const c = sql[i];
    if ((c === '-' && sql[i + 1] === '-' && (!mysql || i + 2 >= n || /\s/.test(sql[i + 2]))) || (c === '#' && mysql)) {
      // A comment to the line's end (its newline emitted next).
      const end = sql.indexOf('\n', i);
      const stop = end < 0 ? n : end;
      emit(sql.slice(i, stop));
      i = stop;
    } else if (c === '/' && sql[i + 1] === '*') {
      const code = mysql ? match(MYSQL_CODE_COMMENT, i) : '';
      if (code !== '') {
        // Its content is SQL: read on, its */ kept as two characters.
        emit(code);
        i += code.length;
      } else {
        i = keep(i, i + 2, '*/');
      }
    } else if ((c === '"' && !mysql) || (c === '`' && mysql)) {
      i = keep(i, i + 1, c);
    } else if (c === "'" || c === '"') {
      // A prefix letter (E, B, X, N, U&) at the output's end, after a
      // character that is not [A-Za-z0-9_$] or at its start, is part of the
      // literal: read from the last three characters, then taken off.
      let tail = '';
      let j = parts.length - 1;
      while (j >= 0 && tail.length < 3) tail = parts[j--].slice(-3) + tail;
      const whole = j < 0 && tail.length <= 3;
      tail = tail.slice(-3);
      const m = (whole ? WHOLE_PREFIX : PREFIX).exec(tail);
      const escapes = mysql || (m !== null && (m[1] === 'E' || m[1] === 'e'));
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
        else if (sql[i] === c && sql[i + 1] === c) i += 2;
        else if (sql[i] === c) break;
        else i++;
      }
      i++;
      emit('?');
    } else if (c === '$' && !mysql && !IDENT.test(last)) {
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
      emit(mysql && BOOLEAN.test(word) && last !== '.' ? '?' : word);
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
// MySQL's executable comments (/*!50700, /*M!100100) and optimizer hints (/*+): their opener.
const MYSQL_CODE_COMMENT = /\/\*(?:M?!\d*|\+)/y;
const BOOLEAN = /^(?:true|false)$/i;

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
  const m = /^(?:\s+|--[^\n]*(?:\n|$)|#[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/|\()*([A-Za-z]+)/.exec(sql);
  return m === null ? '' : m[1];
}

/** Where a query ran: its database (db.system.name), the database name, the server. */
export interface SqlTarget {
  system: SqlDialect;
  database?: unknown;
  host?: unknown;
  port?: unknown;
}

/**
 * A query's span name and attributes: `{db.operation.name} {db.namespace}`,
 * or `server.address:server.port` in place of an unknown database.
 */
export function sqlSpan(target: SqlTarget, text: string): { name: string; attrs: Attrs } {
  const attrs: Attrs = { 'db.system.name': target.system };
  const op = sqlOperation(text);
  const db = typeof target.database === 'string' ? target.database : '';
  if (db !== '') attrs['db.namespace'] = db;
  if (op !== '') attrs['db.operation.name'] = op;
  attrs['db.query.text'] = sanitizeSql(queryHead(text), target.system);
  const host = typeof target.host === 'string' ? target.host : '';
  if (host !== '') attrs['server.address'] = host;
  const port = Number(target.port);
  if (Number.isInteger(port) && port > 0) attrs['server.port'] = port;
  const where = db !== '' ? db : host !== '' ? (attrs['server.port'] === undefined ? host : `${host}:${String(port)}`) : '';
  const name = op !== '' && where !== '' ? `${op} ${where}` : op !== '' ? op : where !== '' ? where : target.system;
  return { name, attrs };
}
