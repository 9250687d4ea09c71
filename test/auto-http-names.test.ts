// hotspan/auto's HTTP spans follow OpenTelemetry's HTTP semantic conventions:
// a server hit with 1,000 distinct paths by http.get and by fetch gives one
// span name per method on each track (`GET`: no route is known without a
// framework), the path in `url.path`, the rest of the request and answer in
// the conventions' attributes, and errors by status (server >= 500, client
// >= 400). `hotspan report` then has one row per method, not one per URL.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { cliPath, readSpans, type PlainSpan } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-http-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const PATHS = 1000;

const APP = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  const status = req.url.startsWith('/fail') ? 500 : req.url.startsWith('/missing') ? 404 : 200;
  res.writeHead(status, { 'content-length': '2' });
  res.end('ok');
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
function get(port, p, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method, agent }, (res) => { res.resume(); res.on('end', resolve); });
    req.on('error', reject);
    req.end();
  });
}
async function pool(n, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => { while (next < n) await fn(next++); }));
}
server.listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  await pool(${PATHS}, (i) => get(port, '/item/' + i));
  await pool(${PATHS}, async (i) => { const r = await fetch('http://127.0.0.1:' + port + '/f/' + i); await r.text(); });
  await get(port, '/search?q=1&sig=secret');
  await get(port, '/fail');
  await get(port, '/missing');
  await get(port, '/purge', 'PURGE');
  await (await fetch('http://127.0.0.1:' + port + '/missing?x=1')).text();
  agent.destroy();
  server.close();
});
`;

let spans: PlainSpan[] = [];
let out = '';

beforeAll(() => {
  const app = path.join(tmp, 'app.js');
  writeFileSync(app, APP);
  out = path.join(tmp, 'http.pftrace');
  const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '-i', 'http,fetch', '--no-report', '--', process.execPath, app], {
    encoding: 'utf8',
    timeout: 600_000,
  });
  expect(r.status, r.stderr).toBe(0);
  spans = readSpans(out).spans;
}, 600_000);

function on(track: string): PlainSpan[] {
  return spans.filter((s) => s.timeline === track);
}

function byPath(track: string, p: string): PlainSpan {
  const found = on(track).filter((s) => s.args['url.path'] === p);
  expect(found, `${track} ${p}`).toHaveLength(1);
  return found[0];
}

describe('hotspan/auto HTTP spans by the semantic conventions', () => {
  it('1,000 distinct paths give one name per method on each track, the path in url.path', () => {
    // Server: 1,000 by http, 1,000 by fetch, and the 5 others.
    const counts = (track: string): Record<string, number> => {
      const c: Record<string, number> = {};
      for (const s of on(track)) c[s.name] = (c[s.name] ?? 0) + 1;
      return c;
    };
    expect(counts('http server')).toEqual({ GET: 2 * PATHS + 4, HTTP: 1 });
    expect(counts('http client')).toEqual({ GET: PATHS + 3, HTTP: 1 });
    expect(counts('fetch')).toEqual({ GET: PATHS + 1 });
    const paths = (track: string, prefix: string): number => new Set(on(track).map((s) => String(s.args['url.path'])).filter((p) => p.startsWith(prefix))).size;
    expect(paths('http server', '/item/')).toBe(PATHS);
    expect(paths('http server', '/f/')).toBe(PATHS);
    expect(paths('http client', '/item/')).toBe(PATHS);
    expect(paths('fetch', '/f/')).toBe(PATHS);
  });

  it('records the request and answer in the conventions attributes', () => {
    const server = byPath('http server', '/item/7');
    expect(server.args).toMatchObject({
      'http.request.method': 'GET',
      'url.path': '/item/7',
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'network.protocol.version': '1.1',
      'http.response.status_code': 200,
      'client.address': '127.0.0.1',
    });
    expect(server.args['server.port']).toEqual(expect.any(Number));
    expect(server.args).not.toHaveProperty('url.query');
    const port = server.args['server.port'] as number;
    expect(byPath('http client', '/item/7').args).toMatchObject({
      'http.request.method': 'GET',
      'url.path': '/item/7',
      'url.scheme': 'http',
      'url.full': `http://127.0.0.1:${String(port)}/item/7`,
      'server.address': '127.0.0.1',
      'server.port': port,
      'network.protocol.version': '1.1',
      'http.response.status_code': 200,
      'http.response.body.size': 2,
    });
    expect(byPath('fetch', '/f/7').args).toMatchObject({
      'http.request.method': 'GET',
      'url.path': '/f/7',
      'url.scheme': 'http',
      'url.full': `http://127.0.0.1:${String(port)}/f/7`,
      'server.address': '127.0.0.1',
      'server.port': port,
      'http.response.status_code': 200,
    });
    // The query apart from the path, its secrets redacted.
    expect(byPath('http client', '/search').args).toMatchObject({ 'url.query': 'q=1&sig=REDACTED', 'url.full': `http://127.0.0.1:${String(port)}/search?q=1&sig=REDACTED` });
    expect(byPath('http server', '/search').args).toMatchObject({ 'url.query': 'q=1&sig=REDACTED' });
    // A method the conventions do not know.
    expect(byPath('http client', '/purge')).toMatchObject({ name: 'HTTP', args: { 'http.request.method': '_OTHER', 'http.request.method_original': 'PURGE' } });
    // No attribute of the old names is left.
    for (const s of [...on('http server'), ...on('http client'), ...on('fetch')]) {
      for (const old of ['method', 'path', 'status', 'host', 'origin', 'request_bytes', 'response_bytes']) expect(s.args).not.toHaveProperty(old);
    }
  });

  it('errors by status: a server span at 500, a client span (http, fetch) at 404; both ends of a 404 otherwise', () => {
    const isError = (s: PlainSpan): boolean => s.args['error.type'] !== undefined;
    expect(byPath('http server', '/fail').args).toMatchObject({ 'http.response.status_code': 500, 'error.type': '500' });
    expect(byPath('http client', '/fail').args).toMatchObject({ 'http.response.status_code': 500, 'error.type': '500' });
    const missing = on('http server').filter((s) => s.args['url.path'] === '/missing');
    expect(missing).toHaveLength(2);
    for (const s of missing) expect(isError(s), 'a 404 is no server error').toBe(false);
    expect(byPath('http client', '/missing').args).toMatchObject({ 'http.response.status_code': 404, 'error.type': '404' });
    expect(byPath('fetch', '/missing').args).toMatchObject({ 'http.response.status_code': 404, 'error.type': '404', 'url.query': 'x=1' });
    expect(on('http server').filter(isError)).toHaveLength(1);
    expect(on('http client').filter(isError)).toHaveLength(2);
  });

  it('hotspan report has one row per method, not one per URL', () => {
    const r = spawnSync(process.execPath, [cliPath, 'report', out, '--json', '--top', '1000'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const names = (JSON.parse(r.stdout) as { names: Array<{ name: string; count: number }> }).names;
    expect(names.map((n) => n.name).sort()).toEqual(['GET', 'HTTP']);
    expect(names.find((n) => n.name === 'GET')?.count).toBe(2 * PATHS + 4 + PATHS + 3 + PATHS + 1);
  });
});
