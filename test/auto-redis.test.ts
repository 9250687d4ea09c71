// hotspan/auto's ioredis and redis (node-redis) instruments against a real
// Redis server, started on 127.0.0.1 by the test
// (test/support/redis-server.ts): a service answers two requests at once,
// each sending single commands, pipelines, transactions and failing commands
// through both clients (test/fixtures/db/redis-app.js), under `hotspan run`.
// Every command is exactly one span with its name, attributes (OpenTelemetry's
// database conventions; the key, never a value), error flag and parent: the
// request that sent it. The clients' own commands while connecting (HELLO,
// INFO: they vary with the server's version) have no parent. Each instrument
// is selected on its own by HOTSPAN_INSTRUMENT.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startRedis, type RedisServer } from './support/redis-server';
import { without } from './support/tools';
import { cliPath, readSpans, repoRoot, type PlainSpan } from './support/trace-files';

const APP = path.join(repoRoot, 'test', 'fixtures', 'db', 'redis-app.js');

// What each request (tag t) sends: [operation, db.query.text, error.type].
const IOREDIS = (t: string): Array<[string, string, string | undefined]> => [
  ['SET', `SET k:${t}`, undefined],
  ['GET', `GET k:${t}`, undefined],
  // A pipeline: each command one span.
  ['SET', `SET n:${t}`, undefined],
  ['INCR', `INCR n:${t}`, undefined],
  ['GET', `GET n:${t}`, undefined],
  // A transaction: MULTI, the commands, EXEC.
  ['MULTI', 'MULTI', undefined],
  ['INCR', `INCR n:${t}`, undefined],
  ['EXPIRE', `EXPIRE n:${t}`, undefined],
  ['EXEC', 'EXEC', undefined],
  // INCR of a string.
  ['INCR', `INCR k:${t}`, 'ERR'],
];
const NODE_REDIS = (t: string): Array<[string, string, string | undefined]> => [
  ['SET', `SET r:${t}`, undefined],
  ['GET', `GET r:${t}`, undefined],
  // A pipeline (execAsPipeline): each command one span.
  ['INCR', `INCR m:${t}`, undefined],
  ['GET', `GET m:${t}`, undefined],
  // A transaction: node-redis publishes it whole, without its commands.
  ['MULTI', 'MULTI', undefined],
  // HGET of a string; node-redis redacts HGET's arguments, key included.
  ['HGET', 'HGET ?', 'WRONGTYPE'],
];

let server: RedisServer | undefined;
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-redis-'));
afterAll(async () => {
  await server?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

function run(out: string, env: NodeJS.ProcessEnv = {}): { spans: PlainSpan[]; requests: PlainSpan[]; commands: PlainSpan[] } {
  const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '--', process.execPath, APP], {
    encoding: 'utf8',
    cwd: repoRoot,
    env: { ...process.env, REDIS_PORT: String(server!.port), ...env },
    timeout: 120_000,
  });
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  const { spans } = readSpans(out);
  const requests = spans.filter((s) => s.timeline === 'http server');
  expect(requests.map((s) => s.args['url.path']).sort()).toEqual(['/a', '/b']);
  return { spans, requests, commands: spans.filter((s) => s.timeline === 'redis') };
}

/**
 * The commands `req` sent as [operation, text, error.type], sorted: a
 * pipeline's commands start within microseconds of each other, closer than
 * the file's times can order them, so the lists are compared as sets with
 * their counts.
 */
function sentBy(commands: PlainSpan[], req: PlainSpan): string[] {
  return commands
    .filter((s) => s.args.parent_id === req.args.span_id)
    .map((s) => JSON.stringify([s.args['db.operation.name'], s.args['db.query.text'], s.args['error.type'] ?? null]))
    .sort();
}

const expected = (list: Array<[string, string, string | undefined]>): string[] => list.map(([o, t, e]) => JSON.stringify([o, t, e ?? null])).sort();

describe.skipIf(without('redis-server'))('the ioredis and redis instruments (a real Redis server)', () => {
  beforeAll(async () => {
    server = await startRedis();
  });

  it('records every command once, named and attributed by the conventions, under the request that sent it', () => {
    const { requests, commands } = run(path.join(tmp, 'redis.json'));
    for (const req of requests) {
      const t = String(req.args['url.path']).slice(1);
      expect(sentBy(commands, req), `the commands of /${t}`).toEqual(expected([...IOREDIS(t), ...NODE_REDIS(t)]));
    }
    const inRequests = commands.filter((s) => requests.some((r) => r.args.span_id === s.args.parent_id));
    expect(inRequests).toHaveLength(2 * (IOREDIS('').length + NODE_REDIS('').length));
    for (const s of commands) {
      const op = String(s.args['db.operation.name']);
      expect(s.name).toBe(`${op} 127.0.0.1:${String(server!.port)}`);
      expect(s.args).toMatchObject({ 'db.system.name': 'redis', 'db.namespace': '0', 'server.address': '127.0.0.1', 'server.port': server!.port });
      if (!inRequests.includes(s)) {
        // The clients' connection set-up: outside any request.
        expect(s.args.parent_id, `${s.name} ${String(s.args['db.query.text'])}`).toBeUndefined();
        continue;
      }
      const failed = s.args['error.type'] !== undefined;
      expect(s.args.error === true, `${s.name} ${String(s.args['db.query.text'])} flagged as an error`).toBe(failed);
      if (failed) expect(s.args['db.response.status_code']).toBe(s.args['error.type']);
      if (op === 'MULTI' && s.args['db.operation.batch.size'] !== undefined) expect(s.args['db.operation.batch.size']).toBe(2);
      // Never a value.
      expect(JSON.stringify(s.args)).not.toMatch(/value-secret|"60"|EXPIRE n:\w 60/);
    }
  });

  it('HOTSPAN_INSTRUMENT selects each client on its own', () => {
    const io = run(path.join(tmp, 'io.json'), { HOTSPAN_INSTRUMENT: 'http,ioredis' });
    for (const req of io.requests) {
      const t = String(req.args['url.path']).slice(1);
      expect(sentBy(io.commands, req)).toEqual(expected(IOREDIS(t)));
    }
    const nr = run(path.join(tmp, 'nr.json'), { HOTSPAN_INSTRUMENT: 'http,redis' });
    for (const req of nr.requests) {
      const t = String(req.args['url.path']).slice(1);
      expect(sentBy(nr.commands, req)).toEqual(expected(NODE_REDIS(t)));
    }
    expect(run(path.join(tmp, 'none.json'), { HOTSPAN_INSTRUMENT: 'http' }).commands).toEqual([]);
  });
});
