// hotspan/auto's express and fastify instruments: a real express 5 app and a
// real fastify 5 app (test/fixtures/routes/) serve on 127.0.0.1 and request
// themselves, one request at a time, under `hotspan run`. Each HTTP server
// span of a request that matched a route is named `{method} {http.route}`
// and carries `http.route`, the route's template with the mount paths and
// prefixes it is under (a router in a router, a router mounted twice, a
// sub-app, a fastify plugin's prefix, a route passed on to another); a 404
// keeps the method alone; a handler that throws or rejects leaves its route
// on a span with status 500, an error. Without these instruments in
// HOTSPAN_INSTRUMENT no span has a route. With OTLP export on, the exported
// server spans have the same names and routes, the one whose child request
// began it in the exporter before its route was known too.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { joinRoute } from '../lib/auto/auto-route';
import { Receiver } from './support/otlp-receiver';
import { cliPath, readSpans, repoRoot, type PlainSpan } from './support/trace-files';

const FIXTURES = path.join(repoRoot, 'test', 'fixtures', 'routes');
const EXPRESS = path.join(FIXTURES, 'express-app.js');
const FASTIFY = path.join(FIXTURES, 'fastify-app.js');

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-routes-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// The server spans of each app, in the order its requests are made: [name, http.route, url.path, status].
type Served = [string, string | undefined, string, number];
const EXPRESS_SPANS: Served[] = [
  ['GET /items/:id', '/items/:id', '/items/42', 200],
  ['GET /items/all', '/items/all', '/items/all', 200],
  ['GET /api/users/:uid/posts/:pid', '/api/users/:uid/posts/:pid', '/api/users/7/posts/3', 200],
  ['GET /api/health', '/api/health', '/api/health', 200],
  // The plain http server the /api middleware asked, while /api/health was served: no framework, no route.
  ['GET', undefined, '/upstream', 200],
  ['GET /v2/health', '/v2/health', '/v2/health', 200],
  ['GET /admin/stats', '/admin/stats', '/admin/stats', 200],
  ['GET', undefined, '/missing', 404],
  ['GET /boom', '/boom', '/boom', 500],
];
const FASTIFY_SPANS: Served[] = [
  ['GET /items/:id', '/items/:id', '/items/42', 200],
  ['GET /api/users/:uid/posts/:pid', '/api/users/:uid/posts/:pid', '/api/users/7/posts/3', 200],
  ['GET', undefined, '/missing', 404],
  ['GET /boom', '/boom', '/boom', 500],
  ['GET /reject', '/reject', '/reject', 500],
];

/** Runs `app` under `hotspan run`; its HTTP server spans, by start (the requests are made one after another). */
function serverSpans(app: string, file: string, env: NodeJS.ProcessEnv = {}): PlainSpan[] {
  const out = path.join(tmp, file);
  const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '--', process.execPath, app], {
    encoding: 'utf8',
    cwd: repoRoot,
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  return readSpans(out).spans.filter((s) => s.timeline === 'http server');
}

const served = (spans: PlainSpan[]): Served[] =>
  spans.map((s) => [s.name, s.args['http.route'] as string | undefined, String(s.args['url.path']), Number(s.args['http.response.status_code'])]);

function expectErrors(spans: PlainSpan[]): void {
  for (const s of spans) {
    const status = Number(s.args['http.response.status_code']);
    expect(s.args.error === true, `${s.name} ${String(s.args['url.path'])} an error`).toBe(status >= 500);
    if (status >= 500) expect(s.args['error.type']).toBe(String(status));
  }
}

describe('the express and fastify instruments', () => {
  it('express: a matched route names the server span and is its http.route, mount paths included', () => {
    const spans = serverSpans(EXPRESS, 'express.json');
    expect(served(spans)).toEqual(EXPRESS_SPANS);
    expectErrors(spans);
    // The request's own attributes are as without a route.
    expect(spans[2].args).toMatchObject({ 'http.request.method': 'GET', 'url.scheme': 'http', 'server.address': '127.0.0.1', 'client.address': '127.0.0.1' });
    expect(spans[3].args['url.query']).toBe('up=1');
  });

  it('fastify: a matched route names the server span and is its http.route, plugin prefixes included', () => {
    const spans = serverSpans(FASTIFY, 'fastify.json');
    expect(served(spans)).toEqual(FASTIFY_SPANS);
    expectErrors(spans);
  });

  it('without express and fastify in HOTSPAN_INSTRUMENT no span has a route', () => {
    for (const [app, list] of [
      [EXPRESS, EXPRESS_SPANS],
      [FASTIFY, FASTIFY_SPANS],
    ] as const) {
      const spans = serverSpans(app, `off-${path.basename(app)}.json`, { HOTSPAN_INSTRUMENT: 'http,net,dns' });
      expect(served(spans)).toEqual(list.map(([, , p, status]) => ['GET', undefined, p, status]));
    }
  });

  it('with OTLP export the exported server spans have the same names and routes', async () => {
    const rcv = new Receiver();
    try {
      const port = await rcv.listen();
      const out = path.join(tmp, 'otlp.json');
      const child = spawn(process.execPath, ['--require', path.join(repoRoot, 'dist', 'auto.js'), EXPRESS], {
        env: { ...process.env, HOTSPAN_OUT: out, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${String(port)}` },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      expect(code, stderr).toBe(0);
      expect(served(readSpans(out).spans.filter((s) => s.timeline === 'http server'))).toEqual(EXPRESS_SPANS);
      const spans = rcv.spans();
      const SERVER = 2;
      const exported = spans.filter((s) => s.kind === SERVER).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
      expect(exported.map((s) => [s.name, s.attrs['http.route'], s.attrs['url.path'], s.attrs['http.response.status_code']])).toEqual(EXPRESS_SPANS);
      // /api/health's request to /upstream, made before its route was known, is its child.
      const health = exported[3];
      const upstream = spans.filter((s) => s.kind !== SERVER && s.attrs['url.path'] === '/upstream');
      expect(upstream.map((s) => s.parentSpanId)).toEqual([health.spanId]);
    } finally {
      await rcv.close();
    }
  });
});

describe('a route under its mount path (joinRoute)', () => {
  it('puts exactly one slash between them, and adds nothing for a mount at / or a route at /', () => {
    const cases: Array<[string, string, string]> = [
      ['', '/items/:id', '/items/:id'],
      ['/api', '/items/:id', '/api/items/:id'],
      ['/api/', '/items', '/api/items'],
      ['/api', 'items', '/api/items'],
      ['/api', '/', '/api'],
      ['/api', '', '/api'],
      ['', '/', '/'],
      ['/', '/', '/'],
      ['/', '/x', '/x'],
    ];
    for (const [prefix, route, want] of cases) expect(joinRoute(prefix, route), `${prefix} + ${route}`).toBe(want);
  });
});
