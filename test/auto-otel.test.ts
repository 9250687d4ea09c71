// OpenTelemetry instrumentations under hotspan/auto (lib/auto/auto-otel.ts):
// HOTSPAN_INSTRUMENT=otel loads every @opentelemetry/instrumentation-*
// package installed where the program is (here instrumentation-http and
// instrumentation-pg, dev dependencies), `otel:<name>,...` those named, on
// hotspan/otel's provider over the automatic tracer. Against a real
// PostgreSQL server (test/support/pg-server.ts), a service answers two
// requests at once (test/fixtures/db/pg-otel-app.js): every query is exactly
// one span made by instrumentation-pg (its name, attributes and scope) in the
// written file, under the HTTP server span of its request. An OpenTelemetry
// instrumentation turns off hotspan's own instrument for its library (one
// line on stderr), so a query or a request is never two spans. A name that is
// not installed is one warning; without otel in HOTSPAN_INSTRUMENT no
// OpenTelemetry module is loaded.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { INSTRUMENTS } from '../lib/auto/auto-record';
import { parseInstrumentList } from '../lib/auto/instrument-list';
import { startPostgres, type PgServer } from './support/pg-server';
import { without } from './support/tools';
import { readSpans, repoRoot, type PlainSpan } from './support/trace-files';

const APP = path.join(repoRoot, 'test', 'fixtures', 'db', 'pg-otel-app.js');
const AUTO = path.join(repoRoot, 'dist', 'auto.js');

let server: PgServer | undefined;
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-otel-'));
afterAll(async () => {
  await server?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

interface Run {
  spans: PlainSpan[];
  stderr: string;
  loaded: string[];
}

function run(name: string, instrument: string | undefined, pre: string[] = []): Run {
  const out = path.join(tmp, `${name}.json`);
  const env: NodeJS.ProcessEnv = { ...process.env, PG_PORT: String(server!.port), HOTSPAN_OUT: out };
  delete env.HOTSPAN_INSTRUMENT;
  if (instrument !== undefined) env.HOTSPAN_INSTRUMENT = instrument;
  const r = spawnSync(process.execPath, [...pre, '--require', AUTO, APP], { encoding: 'utf8', cwd: repoRoot, env, timeout: 120_000 });
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  const { loaded } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { loaded: string[] };
  return { spans: readSpans(out).spans, stderr: r.stderr, loaded };
}

const PG_PKG = '@opentelemetry/instrumentation-pg';
const HTTP_PKG = '@opentelemetry/instrumentation-http';
// What each request runs, in order: db.query.text, and whether it failed.
const QUERIES: Array<[string, boolean]> = [
  ['SELECT $1::int AS n', false],
  ["SELECT 'secret' AS s", false],
  ['SELECT * FROM missing_table', true],
];

const scope = (s: PlainSpan): string | undefined => (s.args['hotspan.scope'] as { name?: string } | undefined)?.name;
const queries = (spans: PlainSpan[]): PlainSpan[] => spans.filter((s) => scope(s) === PG_PKG && s.name.startsWith('pg.query:'));

/** Each query is one span of instrumentation-pg, under the server span of its request (`servers`). */
function expectQueriesUnder(spans: PlainSpan[], servers: PlainSpan[]): void {
  expect(servers.map((s) => s.args['url.path']).sort()).toEqual(['/a', '/b']);
  const all = queries(spans);
  for (const req of servers) {
    const mine = all.filter((s) => s.args.parent_id === req.args.span_id).sort((x, y) => x.start - y.start);
    expect(mine.map((s) => [s.args['db.query.text'], s.args.error === true]), `the queries of ${String(req.args['url.path'])}`).toEqual(QUERIES);
    for (const s of mine) {
      expect(s.timeline).toBe('track: otel');
      expect(s.name).toBe('pg.query:SELECT postgres');
      expect(s.args).toMatchObject({ 'db.system.name': 'postgresql', 'db.namespace': 'postgres', 'server.address': '127.0.0.1', 'server.port': server!.port, 'hotspan.kind': 'client' });
      expect(s.start).toBeGreaterThanOrEqual(req.start);
      expect(s.end).toBeLessThanOrEqual(req.end);
    }
  }
  // Exactly one span per query: none outside a request, none twice, none from hotspan's own pg instrument.
  expect(all).toHaveLength(2 * QUERIES.length);
  expect(spans.filter((s) => s.timeline === 'pg')).toEqual([]);
}

const otelServers = (spans: PlainSpan[]): PlainSpan[] => spans.filter((s) => scope(s) === HTTP_PKG && s.args['hotspan.kind'] === 'server');

describe.skipIf(without('postgres'))('OpenTelemetry instrumentations under hotspan/auto (a real PostgreSQL server)', () => {
  beforeAll(async () => {
    server = await startPostgres();
  });

  it('otel: every installed instrumentation records, each query one span under its request', () => {
    const r = run('all', 'otel');
    expect(r.loaded.some((f) => f.includes(`${PG_PKG}/`))).toBe(true);
    expect(r.loaded.some((f) => f.includes(`${HTTP_PKG}/`))).toBe(true);
    expectQueriesUnder(r.spans, otelServers(r.spans));
    // Only otel was named: none of hotspan's own instruments ran, and nothing was said about them.
    expect(r.spans.filter((s) => s.timeline !== 'track: otel')).toEqual([]);
    expect(r.stderr).toBe('');
  });

  it("otel:http,pg beside hotspan's http and pg: theirs replace hotspan's, one line each, no span twice", () => {
    const r = run('overlap', 'http,pg,dns,otel:http,pg');
    expect(r.stderr).toContain(`hotspan/auto: ${HTTP_PKG} records http; hotspan's own http instrument is off`);
    expect(r.stderr).toContain(`hotspan/auto: ${PG_PKG} records pg; hotspan's own pg instrument is off`);
    expect(r.stderr.trim().split('\n')).toHaveLength(2);
    expectQueriesUnder(r.spans, otelServers(r.spans));
    expect(r.spans.filter((s) => s.timeline === 'http server')).toEqual([]);
    // hotspan's dns instrument, which no OpenTelemetry instrumentation named here replaces, still records.
    expect(r.spans.some((s) => s.timeline === 'dns')).toBe(true);
  });

  it('otel:pg loads instrumentation-pg only; a name not installed is one warning and the rest goes on', () => {
    const r = run('named', 'otel:pg,no-such-thing');
    expect(r.stderr).toContain('HOTSPAN_INSTRUMENT names @opentelemetry/instrumentation-no-such-thing, which is not installed');
    expect(r.stderr.match(/Warning: /g)).toHaveLength(1);
    expect(r.loaded.some((f) => f.includes(`${PG_PKG}/`))).toBe(true);
    expect(r.loaded.some((f) => f.includes(`${HTTP_PKG}/`))).toBe(false);
    // No HTTP instrument at all: each query is one span, and every span is instrumentation-pg's.
    const q = queries(r.spans);
    expect(q.map((s) => s.args['db.query.text']).sort()).toEqual([...QUERIES, ...QUERIES].map(([t]) => t).sort());
    expect(r.spans.filter((s) => scope(s) !== PG_PKG)).toEqual([]);
  });

  it('without otel in HOTSPAN_INSTRUMENT no OpenTelemetry module is loaded', () => {
    for (const instrument of [undefined, 'http,pg']) {
      const r = run(`plain-${String(instrument)}`, instrument);
      expect(r.loaded, `HOTSPAN_INSTRUMENT=${String(instrument)}`).toEqual([]);
      // hotspan's own pg instrument did record them.
      expect(r.spans.filter((s) => s.timeline === 'pg')).toHaveLength(2 * QUERIES.length);
    }
  });

  it('without @opentelemetry/api: one warning naming it, and hotspan\'s own instruments stay on', () => {
    const r = run('no-api', 'http,pg,otel:pg', ['--require', path.join(repoRoot, 'test', 'fixtures', 'otel-api-missing.js')]);
    expect(r.stderr).toContain('HOTSPAN_INSTRUMENT names otel, but @opentelemetry/api did not load');
    expect(r.stderr.match(/Warning: /g)).toHaveLength(1);
    expect(r.loaded).toEqual([]);
    expect(r.spans.filter((s) => s.timeline === 'pg')).toHaveLength(2 * QUERIES.length);
  });
});

describe('HOTSPAN_INSTRUMENT with otel (parseInstrumentList)', () => {
  const parse = (v: string | undefined) => {
    const warnings: string[] = [];
    const l = parseInstrumentList(v, (m) => warnings.push(m));
    return { hotspan: [...l.hotspan].sort(), otel: l.otel, warnings };
  };
  it('reads otel, otel:<name>,... (the rest of the list), short and package names, and all', () => {
    expect(parse('otel')).toEqual({ hotspan: [], otel: 'installed', warnings: [] });
    expect(parse('http, otel:pg,ioredis')).toEqual({ hotspan: ['http'], otel: [PG_PKG, '@opentelemetry/instrumentation-ioredis'], warnings: [] });
    expect(parse('otel:instrumentation-pg,@opentelemetry/instrumentation-pg,otel:@fastify/otel')).toEqual({ hotspan: [], otel: [PG_PKG, '@fastify/otel'], warnings: [] });
    expect(parse('all,otel').hotspan).toEqual([...INSTRUMENTS].sort());
    expect(parse(undefined)).toEqual({ hotspan: [...INSTRUMENTS].sort(), otel: undefined, warnings: [] });
    const bad = parse('gc,bogus,otel:pg x');
    expect(bad.hotspan).toEqual(['gc']);
    expect(bad.otel).toBeUndefined();
    expect(bad.warnings).toHaveLength(2);
    expect(bad.warnings[0]).toContain('names "bogus"');
    expect(bad.warnings[1]).toContain('names "pg x" after otel:');
  });
});
