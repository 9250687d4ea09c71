// hotspan/auto's pg instrument against a real PostgreSQL server, started on
// 127.0.0.1 by the test (test/support/pg-server.ts): a service answers two
// requests at once, each running pooled, parameterised, literal, prepared,
// failing and transaction queries, in promise and callback forms
// (test/fixtures/db/pg-app.js), under `hotspan run`. Every query is exactly
// one span, with its name, attributes (OpenTelemetry's database
// conventions; no literal or parameter value), error flag and parent: the
// request that issued it, across await and a wait for the pool's one client.
// An ES module importing pg is traced too; HOTSPAN_INSTRUMENT without pg
// records no query.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { pgQuery } from '../lib/auto/auto-pg';
import { MAX_QUERY_TEXT, sanitizeSql, sqlOperation } from '../lib/auto/auto-sql';
import { startPostgres, type PgServer } from './support/pg-server';
import { without } from './support/tools';
import { cliPath, readSpans, repoRoot, type PlainSpan } from './support/trace-files';

const APP = path.join(repoRoot, 'test', 'fixtures', 'db', 'pg-app.js');

// What each request runs, in order: [span name, db.query.text, error.type].
const QUERIES: Array<[string, string, string | undefined]> = [
  ['SELECT postgres', 'SELECT $1::int AS n', undefined],
  ['SELECT postgres', 'SELECT ? AS s, ? AS n', undefined],
  ['SELECT postgres', 'SELECT $1::text AS tag', undefined],
  ['SELECT postgres', 'SELECT $1::text AS tag', undefined],
  ['SELECT postgres', 'SELECT * FROM missing_table', '42P01'],
  ['SELEC postgres', 'SELEC ?', '42601'],
  ['BEGIN postgres', 'BEGIN', undefined],
  ['INSERT postgres', 'INSERT INTO t (tag, n) VALUES ($1, ?)', undefined],
  ['COMMIT postgres', 'COMMIT', undefined],
];

let server: PgServer | undefined;
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-pg-'));
afterAll(async () => {
  await server?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

function run(out: string, args: string[], env: NodeJS.ProcessEnv = {}): void {
  const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '--', process.execPath, ...args], {
    encoding: 'utf8',
    cwd: repoRoot,
    env: { ...process.env, PG_PORT: String(server!.port), ...env },
    timeout: 120_000,
  });
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
}

const pgSpans = (spans: PlainSpan[]): PlainSpan[] => spans.filter((s) => s.timeline === 'pg');

describe.skipIf(without('postgres'))('the pg instrument (a real PostgreSQL server)', () => {
  beforeAll(async () => {
    server = await startPostgres();
  });

  it('records every query once, named and attributed by the conventions, under the request that made it', () => {
    const out = path.join(tmp, 'pg.json');
    run(out, [APP]);
    const { spans } = readSpans(out);
    const requests = spans.filter((s) => s.timeline === 'http server');
    expect(requests.map((s) => s.args['url.path']).sort()).toEqual(['/a', '/b']);
    const queries = pgSpans(spans);
    // Each request's queries, in order; the two setup queries (a pg.Client outside any request) apart.
    for (const req of requests) {
      const mine = queries.filter((s) => s.args.parent_id === req.args.span_id).sort((x, y) => x.start - y.start);
      expect(
        mine.map((s) => [s.name, s.args['db.query.text'], s.args['error.type']]),
        `the queries of ${String(req.args['url.path'])}`,
      ).toEqual(QUERIES);
      for (const s of mine) {
        expect(s.args).toMatchObject({ 'db.system.name': 'postgresql', 'db.namespace': 'postgres', 'server.address': '127.0.0.1', 'server.port': server!.port });
        expect(s.args['db.operation.name']).toBe(s.name.split(' ')[0]);
        const failed = s.args['error.type'] !== undefined;
        expect(s.args.error === true, `${s.name} ${String(s.args['db.query.text'])} flagged as an error`).toBe(failed);
        if (failed) expect(s.args['db.response.status_code']).toBe(s.args['error.type']);
        expect(s.start).toBeGreaterThanOrEqual(req.start);
        expect(s.end).toBeLessThanOrEqual(req.end);
      }
    }
    const outside = queries.filter((s) => !requests.some((r) => r.args.span_id === s.args.parent_id));
    expect(outside.map((s) => [s.name, s.args['db.query.text'], s.args.parent_id])).toEqual([
      ['CREATE postgres', 'CREATE TABLE IF NOT EXISTS t (tag text, n int)', undefined],
    ]);
    expect(queries).toHaveLength(2 * QUERIES.length + 1);
    // No value of a literal or a parameter is in a query's text.
    for (const s of queries) expect(String(s.args['db.query.text'])).not.toMatch(/'|secret|7\.5|42|10/);
  });

  it('an ES module importing pg (--import hotspan/auto) is traced too', () => {
    const out = path.join(tmp, 'esm.json');
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(path.join(repoRoot, 'esm', 'auto.mjs')).href, path.join(repoRoot, 'test', 'fixtures', 'db', 'pg-esm-app.mjs')], {
      encoding: 'utf8',
      env: { ...process.env, PG_PORT: String(server!.port), HOTSPAN_OUT: out },
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(pgSpans(readSpans(out).spans).map((s) => [s.name, s.args['db.query.text']])).toEqual([['SELECT postgres', 'SELECT ? AS one']]);
  });

  it('HOTSPAN_INSTRUMENT without pg records no query', () => {
    const out = path.join(tmp, 'off.json');
    run(out, [APP], { HOTSPAN_INSTRUMENT: 'http' });
    const { spans } = readSpans(out);
    expect(pgSpans(spans)).toEqual([]);
    expect(spans.filter((s) => s.timeline === 'http server')).toHaveLength(2);
  });
});

describe('query text without values (sanitizeSql)', () => {
  it('replaces every literal by ?, and keeps identifiers, parameters, keywords and comments', () => {
    const cases: Array<[string, string]> = [
      ["SELECT * FROM users WHERE name = 'O''Brien' AND id = 42", 'SELECT * FROM users WHERE name = ? AND id = ?'],
      ["SELECT E'it\\'s', B'1010', X'ff', N'x', U&'d\\0061t'", 'SELECT ?, ?, ?, ?, ?'],
      ['SELECT $$a $1 \'b\'$$, $tag$x$tag$, $1, $2::int', 'SELECT ?, ?, $1, $2::int'],
      ['SELECT 1.5e10, .5, 0x1F, -7, t1.c2 FROM t1', 'SELECT ?, ?, ?, -?, t1.c2 FROM t1'],
      ['SELECT "col 1", "x\'y" FROM "T2" -- 5 rows\n/* 6 */', 'SELECT "col 1", "x\'y" FROM "T2" -- 5 rows\n/* 6 */'],
      ["INSERT INTO t VALUES ('unterminated", 'INSERT INTO t VALUES (?'],
      // A prefix only after a character that is not an identifier's: $1E'..' keeps its E.
      ["SELECT $1E'x', (U&'y'), xE'z', E'w'", 'SELECT $1E?, (?), xE?, ?'],
    ];
    for (const [sql, want] of cases) expect(sanitizeSql(sql), sql).toBe(want);
  });

  it('a bulk INSERT of megabytes: db.query.text is its first MAX_QUERY_TEXT characters, without values', () => {
    const rows = Array.from({ length: 60000 }, (_, i) => `('name ${String(i)}', ${String(i)}, E'a\\'b')`);
    const sql = `INSERT INTO t (name, n, s) VALUES ${rows.join(', ')}`;
    expect(sql.length).toBeGreaterThan(1_000_000);
    const text = pgQuery({ database: 'db' }, sql).attrs['db.query.text'] as string;
    expect(text.length).toBeLessThanOrEqual(MAX_QUERY_TEXT);
    expect(text.startsWith('INSERT INTO t (name, n, s) VALUES (?, ?, ?), (?, ?, ?)')).toBe(true);
    expect(text).not.toMatch(/[0-9]|name |a\\|'/);
    // Cut inside a surrogate pair: the high half is left out with its low one.
    const emoji = `SELECT '${'x'.repeat(MAX_QUERY_TEXT - 15)}' AS "${'😀'.repeat(20)}"`;
    expect(/[\uD800-\uDBFF]/.test(emoji[MAX_QUERY_TEXT - 1])).toBe(true);
    const cut = pgQuery({}, emoji).attrs['db.query.text'] as string;
    expect(cut).toBe(`SELECT ? AS "`);
    expect(/[\uD800-\uDBFF]$/.test(cut)).toBe(false);
  });

  it('names the operation by the first keyword, past comments and parentheses', () => {
    expect(sqlOperation('  /* hint */ -- x\n(select 1) UNION (SELECT 2)')).toBe('select');
    expect(sqlOperation('WITH a AS (SELECT 1) SELECT * FROM a')).toBe('WITH');
    expect(sqlOperation('  ')).toBe('');
  });
});
