// hotspan/auto's mysql2 instrument against a real MariaDB server, started on
// 127.0.0.1 by the test (test/support/mysql-server.ts): a service answers two
// requests at once through a pool of one connection, each running queries
// with values and literals, prepared statements (execute), failing ones, and
// a pooled connection's transaction, nested callback and stream, in promise
// (mysql2/promise) and callback forms (test/fixtures/db/mysql-app.js), under
// `hotspan run`. Every statement is exactly one span, with its name,
// attributes (OpenTelemetry's database conventions; no literal or value),
// error flag and parent: the request that issued it, across await, a wait
// for the pool's one connection and a callback run from a socket another
// request opened. HOTSPAN_INSTRUMENT without mysql records no statement.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mysqlErrorNumber, mysqlQuery } from '../lib/auto/auto-mysql';
import { sanitizeSql, sqlOperation } from '../lib/auto/auto-sql';
import { startMysql, type MysqlServer } from './support/mysql-server';
import { without } from './support/tools';
import { cliPath, readSpans, repoRoot, type PlainSpan } from './support/trace-files';

const APP = path.join(repoRoot, 'test', 'fixtures', 'db', 'mysql-app.js');

// What each request runs, in order: [span name, db.query.text, error.type].
const QUERIES: Array<[string, string, string | undefined]> = [
  ['SELECT hotspan', 'SELECT ? AS n, ? AS s', undefined],
  ['SELECT hotspan', 'SELECT ? AS s, ? AS n, ? AS d', undefined],
  ['SELECT hotspan', 'SELECT ? AS tag', undefined],
  ['SELECT hotspan', 'SELECT ? AS tag', undefined],
  ['SELECT hotspan', 'SELECT CONCAT(?, ?) AS c', undefined],
  ['SELECT hotspan', 'SELECT * FROM missing_table', '1146'],
  ['SELEC hotspan', 'SELEC ?', '1064'],
  ['START hotspan', 'START TRANSACTION', undefined],
  ['INSERT hotspan', 'INSERT INTO t (tag, n) VALUES (?, ?)', undefined],
  ['COMMIT hotspan', 'COMMIT', undefined],
  ['SELECT hotspan', 'SELECT COUNT(*) AS c FROM t WHERE tag = ?', undefined],
  ['SELECT hotspan', 'SELECT n FROM t WHERE tag = ?', undefined],
];

let server: MysqlServer | undefined;
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-mysql-'));
afterAll(async () => {
  await server?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

function run(out: string, env: NodeJS.ProcessEnv = {}): void {
  const s = server!;
  const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '--', process.execPath, APP], {
    encoding: 'utf8',
    cwd: repoRoot,
    env: {
      ...process.env,
      MYSQL_PORT: String(s.port),
      MYSQL_SOCKET: s.socketPath,
      MYSQL_USER: s.user,
      MYSQL_PASSWORD: s.password,
      MYSQL_DATABASE: s.database,
      ...env,
    },
    timeout: 120_000,
  });
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
}

const mysqlSpans = (spans: PlainSpan[]): PlainSpan[] => spans.filter((s) => s.timeline === 'mysql');

describe.skipIf(without('mariadbd'))('the mysql2 instrument (a real MariaDB server)', () => {
  beforeAll(async () => {
    server = await startMysql();
  });

  it('records every statement once, named and attributed by the conventions, under the request that made it', () => {
    const out = path.join(tmp, 'mysql.json');
    run(out);
    const { spans } = readSpans(out);
    const requests = spans.filter((s) => s.timeline === 'http server');
    expect(requests.map((s) => s.args['url.path']).sort()).toEqual(['/alpha', '/bravo']);
    const queries = mysqlSpans(spans);
    for (const req of requests) {
      const mine = queries.filter((s) => s.args.parent_id === req.args.span_id).sort((x, y) => x.start - y.start);
      expect(
        mine.map((s) => [s.name, s.args['db.query.text'], s.args['error.type']]),
        `the statements of ${String(req.args['url.path'])}`,
      ).toEqual(QUERIES);
      for (const s of mine) {
        expect(s.args).toMatchObject({ 'db.system.name': 'mysql', 'db.namespace': 'hotspan', 'server.address': '127.0.0.1', 'server.port': server!.port });
        expect(s.args['db.operation.name']).toBe(s.name.split(' ')[0]);
        const failed = s.args['error.type'] !== undefined;
        expect(s.args.error === true, `${s.name} ${String(s.args['db.query.text'])} flagged as an error`).toBe(failed);
        if (failed) expect(s.args['db.response.status_code']).toBe(s.args['error.type']);
        else expect(s.args['db.response.status_code']).toBeUndefined();
        expect(s.start).toBeGreaterThanOrEqual(req.start);
        expect(s.end).toBeLessThanOrEqual(req.end);
      }
    }
    // The table is made outside any request, by the unix socket: its path is the address, and there is no port.
    const outside = queries.filter((s) => !requests.some((r) => r.args.span_id === s.args.parent_id));
    expect(outside.map((s) => [s.name, s.args['db.query.text'], s.args.parent_id, s.args['server.address'], s.args['server.port']])).toEqual([
      ['CREATE hotspan', 'CREATE TABLE IF NOT EXISTS t (tag varchar(?), n int)', undefined, server!.socketPath, undefined],
    ]);
    expect(queries).toHaveLength(2 * QUERIES.length + 1);
    // No value of a literal or a parameter is in a statement's text.
    for (const s of queries) expect(String(s.args['db.query.text'])).not.toMatch(/'|"|secret|7\.5|42|10|alpha|bravo/);
  });

  it('HOTSPAN_INSTRUMENT without mysql records no statement', () => {
    const out = path.join(tmp, 'off.json');
    run(out, { HOTSPAN_INSTRUMENT: 'http,pg' });
    const { spans } = readSpans(out);
    expect(mysqlSpans(spans)).toEqual([]);
    expect(spans.filter((s) => s.timeline === 'http server')).toHaveLength(2);
  });
});

describe("MySQL's query text without values (sanitizeSql(sql, 'mysql'))", () => {
  it('replaces every literal by ?, and keeps identifiers, placeholders, keywords and comments', () => {
    const cases: Array<[string, string]> = [
      // mysql2 writes a query's values in with backslash escapes.
      ["SELECT * FROM users WHERE name = 'O\\'Brien' AND note = 'a''b' AND id = 42", 'SELECT * FROM users WHERE name = ? AND note = ? AND id = ?'],
      // "..." is a string in MySQL, `...` an identifier.
      ['SELECT "it\\"s", "x""y" AS `col "1"`, `a``b` FROM `T2`', 'SELECT ?, ? AS `col "1"`, `a``b` FROM `T2`'],
      ["SELECT X'ff', x'0A', B'1010', N'x', _utf8mb4'y', 0x1F, 0b101, 1.5e10, -7, t1.c2 FROM t1", 'SELECT ?, ?, ?, ?, _utf8mb4?, ?, ?, ?, -?, t1.c2 FROM t1'],
      ['SELECT ?, ? FROM t WHERE a = TRUE AND b IS FALSE AND c IS NULL', 'SELECT ?, ? FROM t WHERE a = ? AND b IS ? AND c IS NULL'],
      // Comments: # and "-- " to the line's end; --5 is two minus signs.
      ["SELECT 1 # 'five'\n, 2 -- 'six'\n, 3--4", "SELECT ? # 'five'\n, ? -- 'six'\n, ?--?"],
      // Executable comments and hints hold SQL: their literals are replaced too.
      ["SELECT /*! STRAIGHT_JOIN 'k' */ a /*+ MAX_EXECUTION_TIME(1000) */ /* 'kept' */ FROM t", "SELECT /*! STRAIGHT_JOIN ? */ a /*+ MAX_EXECUTION_TIME(?) */ /* 'kept' */ FROM t"],
      // No dollar quoting: $ is an identifier's character.
      ["SELECT $a, 'x$y$' FROM t$1", 'SELECT $a, ? FROM t$1'],
      ["INSERT INTO t VALUES ('unterminated \\'", 'INSERT INTO t VALUES (?'],
    ];
    for (const [sql, want] of cases) expect(sanitizeSql(sql, 'mysql'), sql).toBe(want);
  });

  it('names and attributes a statement from what mysql2 publishes', () => {
    expect(mysqlQuery({ query: "  /* q */ select 'x'", database: 'shop', serverAddress: 'db.local', serverPort: 3306 })).toEqual({
      name: 'select shop',
      attrs: { 'db.system.name': 'mysql', 'db.namespace': 'shop', 'db.operation.name': 'select', 'db.query.text': '  /* q */ select ?', 'server.address': 'db.local', 'server.port': 3306 },
    });
    // No database: the server names the span.
    expect(mysqlQuery({ query: 'SHOW TABLES', database: '', serverAddress: 'db.local', serverPort: 3306 }).name).toBe('SHOW db.local:3306');
    expect(sqlOperation('# note\nDELETE FROM t')).toBe('DELETE');
  });

  it("takes a server error's number, never a client-side code", () => {
    expect(mysqlErrorNumber(Object.assign(new Error('x'), { code: 'ER_NO_SUCH_TABLE', errno: 1146, sqlState: '42S02' }))).toBe('1146');
    expect(mysqlErrorNumber(Object.assign(new Error('x'), { code: 'ECONNREFUSED', errno: -111 }))).toBeUndefined();
    expect(mysqlErrorNumber(Object.assign(new Error('x'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true }))).toBeUndefined();
    expect(mysqlErrorNumber(null)).toBeUndefined();
  });
});
