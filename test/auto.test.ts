// Zero-code tracing: a small HTTP server and client on 127.0.0.1, a fetch, a
// DNS lookup of localhost and a GC-heavy loop run under `hotspan run`; the
// trace holds the spans with their attributes and parents, and the program's
// exit code and signal pass through. `node --import hotspan/auto` with the
// program's own Tracer beside it; HOTSPAN_INSTRUMENT selects.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

import { cliPath, readCounterSamples, readSpans, repoRoot, type PlainSpan } from './support/trace-files';

// hotspan/auto times its spans in JS (performance.now()); the native backend
// stores them on its own clock and the file converts them back, each track
// through its own anchors. Spans begun in the same ms (a request and its
// connection) may then come out a few ns apart in either order: compared
// within this bound (Timeline::tick_of_ns, TracerShared::start_anchor).
const GIVEN_NS = 1000;

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const APP = `
const http = require('node:http');
const dns = require('node:dns');
const server = http.createServer((req, res) => { res.writeHead(201, { 'content-length': '5' }); res.end('hello'); });
server.listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  await new Promise((resolve) => http.get({ host: '127.0.0.1', port, path: '/client?q=1' }, (res) => { res.resume(); res.on('end', resolve); }));
  const r = await fetch('http://127.0.0.1:' + port + '/fetched');
  await r.text();
  await new Promise((resolve, reject) => dns.lookup('localhost', (e, a) => (e ? reject(e) : resolve(a))));
  let keep = [];
  for (let i = 0; i < 300000; i++) { keep.push({ i, s: 'x'.repeat(20) }); if (keep.length > 1000) keep = []; }
  global.gc();
  // GC entries reach observers asynchronously: let them arrive.
  await new Promise((resolve) => setTimeout(resolve, 50));
  server.close(() => {
    if (process.env.APP_SIGNAL) process.kill(process.pid, process.env.APP_SIGNAL);
    else process.exit(Number(process.env.APP_EXIT || 0));
  });
  setInterval(() => {}, 1000);
});
`;
const app = path.join(tmp, 'app.js');
writeFileSync(app, APP);

function run(out: string, env: NodeJS.ProcessEnv = {}, extra: string[] = []): ReturnType<typeof spawnSync> {
  return spawnSync(process.execPath, [cliPath, 'run', '-o', out, ...extra, '--', process.execPath, '--expose-gc', app], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
}

function one(spans: PlainSpan[], timeline: string, name: string, urlPath?: string): PlainSpan {
  const found = spans.filter((s) => s.timeline === timeline && s.name === name && (urlPath === undefined || s.args['url.path'] === urlPath));
  expect(found, `${timeline} / ${name} ${urlPath ?? ''} in ${JSON.stringify(spans.map((s) => [s.timeline, s.name]))}`).toHaveLength(1);
  return found[0];
}

describe('hotspan run', () => {
  for (const ext of ['json', 'pftrace']) {
    it(`records HTTP, fetch, DNS, TCP and GC spans with attributes and parents (.${ext}); the exit code passes through`, () => {
      const out = path.join(tmp, `run.${ext}`);
      const r = run(out, { APP_EXIT: '5' });
      expect(r.status, String(r.stderr)).toBe(5);
      expect(String(r.stderr)).toContain('per name');
      const { spans } = readSpans(out);

      // HTTP spans are named by the method alone (OpenTelemetry's HTTP conventions: no route without a framework).
      const server = one(spans, 'http server', 'GET', '/client');
      expect(server.args).toMatchObject({ 'http.request.method': 'GET', 'url.path': '/client', 'url.query': 'q=1', 'http.response.status_code': 201 });
      const client = one(spans, 'http client', 'GET', '/client');
      expect(client.args).toMatchObject({
        'http.request.method': 'GET',
        'server.address': '127.0.0.1',
        'url.path': '/client',
        'url.query': 'q=1',
        'http.response.status_code': 201,
        'http.response.body.size': 5,
      });
      // The server handled the request inside the client's span.
      expect(server.start).toBeGreaterThanOrEqual(client.start - GIVEN_NS);
      expect(server.end).toBeLessThanOrEqual(client.end + GIVEN_NS);

      const connects = spans.filter((s) => s.timeline === 'net' && s.name === 'tcp.connect');
      const own = connects.filter((s) => s.args.parent_id === client.args.span_id);
      expect(own, 'the client request parents its connection').toHaveLength(1);
      expect(own[0].args).toMatchObject({ address: '127.0.0.1' });
      expect(own[0].start).toBeGreaterThanOrEqual(client.start - GIVEN_NS);

      const fetched = one(spans, 'fetch', 'GET', '/fetched');
      expect(fetched.args).toMatchObject({ 'http.request.method': 'GET', 'url.path': '/fetched', 'http.response.status_code': 201 });
      expect(String(fetched.args['url.full'])).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/fetched$/);
      one(spans, 'http server', 'GET', '/fetched');

      const lookups = spans.filter((s) => s.timeline === 'dns' && s.args.host === 'localhost');
      expect(lookups).toHaveLength(1);
      expect(String(lookups[0].args.address)).toMatch(/^(127\.0\.0\.1|::1)$/);

      const gcs = spans.filter((s) => s.timeline === 'GC');
      expect(gcs.length).toBeGreaterThan(0);
      for (const g of gcs) {
        expect(['minor', 'major', 'incremental', 'weakcb']).toContain(g.args.kind);
        expect(g.name).toBe(`gc.${String(g.args.kind)}`);
        expect(g.end).toBeGreaterThanOrEqual(g.start);
      }
      expect(gcs.some((g) => g.args.kind === 'major'), 'global.gc() shows as a major GC').toBe(true);
    }, 120_000);
  }

  it('a program killed by a signal makes hotspan run die of it, with the trace written', () => {
    const out = path.join(tmp, 'signal.pftrace');
    const r = run(out, { APP_SIGNAL: 'SIGTERM' }, ['--no-report']);
    expect(r.signal).toBe('SIGTERM');
    expect(r.stderr).toBe('');
    expect(readSpans(out).spans.some((s) => s.timeline === 'http client')).toBe(true);
  }, 120_000);

  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    it(`${sig} sent to hotspan run reaches the program, which writes its trace and dies of it; so does hotspan run`, async () => {
      const out = path.join(tmp, `forward-${sig}.json`);
      // The program's own work: a span in the automatic tracer, then it waits
      // (30 s at most: a signal not passed on fails the test, leaving nothing behind).
      const code = `require(${JSON.stringify(path.join(repoRoot, 'dist', 'auto.js'))}).tracer.trace('waiting', () => 1); setTimeout(() => process.exit(9), 30000); console.log('ready');`;
      // Pipes, no terminal: hotspan run is the only one to pass a SIGINT on.
      const c = spawn(process.execPath, [cliPath, 'run', '-o', out, '--no-report', '--', process.execPath, '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      c.stdout.on('data', (d: Buffer) => {
        if (d.toString().includes('ready')) c.kill(sig);
      });
      const [status, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => c.on('close', (s, g) => resolve([s, g])));
      expect([status, signal], stderr).toEqual([null, sig]);
      expect(readSpans(out).spans.map((s) => s.name)).toContain('waiting');
    }, 120_000);
  }

  it('--instrument selects; a command that cannot start is an error', () => {
    const out = path.join(tmp, 'gc-only.json');
    const r = run(out, {}, ['--instrument', 'gc', '--no-report']);
    expect(r.status).toBe(0);
    expect(new Set(readSpans(out).spans.map((s) => s.timeline))).toEqual(new Set(['GC']));
    const bad = spawnSync(process.execPath, [cliPath, 'run', '--', path.join(tmp, 'no-such-program')], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/cannot run .*no-such-program/);
    const none = spawnSync(process.execPath, [cliPath, 'run'], { encoding: 'utf8' });
    expect(none.status).toBe(2);
  }, 120_000);
});

// HTTPS and HTTP clients that name their server by host name: each request
// opens a connection, whose connect() looks the name up.
const TLS_APP = `
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const dir = ${JSON.stringify(path.join(__dirname, 'fixtures', 'tls'))};
const cert = fs.readFileSync(dir + '/cert.pem');
const get = (mod, port, extra) => new Promise((resolve, reject) =>
  mod.get({ host: 'localhost', family: 4, port, agent: false, ...extra }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject));
const secure = https.createServer({ key: fs.readFileSync(dir + '/key.pem'), cert }, (req, res) => res.end('tls'));
const plain = http.createServer((req, res) => res.end('tcp'));
secure.listen(0, '127.0.0.1', () => plain.listen(0, '127.0.0.1', async () => {
  await get(https, secure.address().port, { path: '/secure', ca: cert });
  await get(http, plain.address().port, { path: '/plain' });
  secure.close();
  plain.close();
}));
`;
const tlsApp = path.join(tmp, 'tls-app.js');
writeFileSync(tlsApp, TLS_APP);

// On Node 22 and later a TLS socket also reaches net.client.socket from
// inside tls.connect(): it stays one tls.connect span (no extra tcp.connect),
// and the lookup its connect() makes is that span's child. CI runs this
// suite under Node 20, 22 and 24 (.ci/run).
describe('connections and lookups', () => {
  function traceWithTimelines(instruments: string): ReturnType<typeof readSpans> {
    const out = path.join(tmp, `tls-${instruments.replace(/,/g, '-')}.pftrace`);
    const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '-i', instruments, '--no-report', '--', process.execPath, tlsApp], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    return readSpans(out);
  }
  const trace = (instruments: string): PlainSpan[] => traceWithTimelines(instruments).spans;

  it('a TLS connection and its DNS lookup are children of the HTTPS request; a TCP one of the HTTP request', () => {
    const { spans, timelines } = traceWithTimelines('http,dns,net');
    // One span per connection, each on the async track of its kind in the main process.
    expect(spans.filter((s) => s.timeline === 'net').map((s) => s.name).sort()).toEqual(['tcp.connect', 'tls.connect']);
    for (const name of ['net', 'dns']) expect(timelines.filter((t) => t.name === name).map((t) => t.kind)).toEqual(['track']);
    const secure = one(spans, 'http client', 'GET', '/secure');
    const tlsConnect = one(spans, 'net', 'tls.connect');
    expect(tlsConnect.args).toMatchObject({ servername: 'localhost', address: '127.0.0.1', authorized: true, parent_id: secure.args.span_id });
    expect(String(tlsConnect.args.protocol)).toMatch(/^TLSv1\.[23]$/);
    expect(tlsConnect.args.port).toBeGreaterThan(0);
    expect(tlsConnect.start).toBeGreaterThanOrEqual(secure.start - GIVEN_NS);
    expect(tlsConnect.end).toBeLessThanOrEqual(secure.end + GIVEN_NS);

    const plainReq = one(spans, 'http client', 'GET', '/plain');
    const tcpConnect = one(spans, 'net', 'tcp.connect');
    expect(tcpConnect.args).toMatchObject({ address: '127.0.0.1', parent_id: plainReq.args.span_id });

    const lookups = spans.filter((s) => s.timeline === 'dns' && s.args.host === 'localhost');
    expect(lookups.map((s) => s.args.parent_id)).toEqual([tlsConnect.args.span_id, tcpConnect.args.span_id]);
    for (const l of lookups) expect(l.args.address).toBe('127.0.0.1');
    expect(lookups[0].start).toBeGreaterThanOrEqual(tlsConnect.start - GIVEN_NS);
  }, 120_000);

  it('without the net instrument, the parent of a lookup is the request itself', () => {
    const spans = trace('http,dns');
    expect(spans.filter((s) => s.timeline === 'net')).toEqual([]);
    const lookups = spans.filter((s) => s.timeline === 'dns' && s.args.host === 'localhost');
    expect(lookups.map((s) => s.args.parent_id)).toEqual([
      one(spans, 'http client', 'GET', '/secure').args.span_id,
      one(spans, 'http client', 'GET', '/plain').args.span_id,
    ]);
  }, 120_000);
});

/** Counter values by counter name. */
function readCounters(file: string): Map<string, number[]> {
  return new Map([...readCounterSamples(file)].map(([name, samples]) => [name, samples.map(([, v]) => v)]));
}

// A refused connection that the program does not handle crashes it with the
// error, as without hotspan: the instruments add no 'error' listener (which
// would swallow it) to the request or its socket, yet record the error.
describe('errors the program does not handle', () => {
  const programs = {
    'an http.get': "http.get({ host: '127.0.0.1', port, path: '/refused', agent: false }, () => {})",
    'a net.connect': "net.connect(port, '127.0.0.1')",
  };
  for (const [what, call] of Object.entries(programs)) {
    it(`${what} to a closed port still throws; the spans record the error`, () => {
      const code = `const http = require('node:http'); const net = require('node:net');
const probe = net.createServer().listen(0, '127.0.0.1', () => { const port = probe.address().port; probe.close(() => { ${call}; setTimeout(() => {}, 30000); }); });`;
      const plain = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 120_000 });
      expect(plain.status).toBe(1);
      expect(plain.stderr).toContain('ECONNREFUSED');
      const out = path.join(tmp, `refused-${what.replace(/[ .]/g, '-')}.json`);
      const r = spawnSync(process.execPath, ['--require', path.join(repoRoot, 'dist', 'auto.js'), '-e', code], {
        encoding: 'utf8',
        env: { ...process.env, HOTSPAN_OUT: out },
        timeout: 120_000,
      });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain('ECONNREFUSED');
      const { spans } = readSpans(out);
      const connect = one(spans, 'net', 'tcp.connect');
      // The error flag and the message both survive (the message has a key
      // of its own: the Chrome JSON writer's "error": true used to shadow it).
      expect(connect.args.error).toBe(true);
      expect(connect.args['error.message']).toContain('ECONNREFUSED');
      if (what === 'an http.get') {
        const client = one(spans, 'http client', 'GET', '/refused');
        expect(client.args.error).toBe(true);
        expect(client.args['error.message']).toContain('ECONNREFUSED');
        expect(client.args['error.type']).toBe('ECONNREFUSED');
      }
    }, 120_000);
  }
});

describe('event-loop delay', () => {
  // A 300 ms block: the 10 ms timer that measures the delay ticks at least
  // 300 ms after its last tick (more on a loaded machine, never less). Before
  // exit, the sampler's last sample counts the tick still due.
  const programs = {
    'caught by the timer': 'setTimeout(() => { const t = Date.now(); while (Date.now() - t < 300); setTimeout(() => {}, 30); }, 50)',
    'caught at exit': 'setTimeout(() => { const t = Date.now(); while (Date.now() - t < 300); process.exit(0); }, 50)',
  };
  for (const [what, code] of Object.entries(programs)) {
    for (const ext of ['json', 'pftrace']) {
      it(`is recorded as counters (${what}, .${ext})`, () => {
        const out = path.join(tmp, `loop-${what.replace(/ /g, '-')}.${ext}`);
        const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '-i', 'eventloop', '--', process.execPath, '-e', code], {
          encoding: 'utf8',
          timeout: 120_000,
        });
        expect(r.status, r.stderr).toBe(0);
        expect(r.stderr).toMatch(/counters\n.*\n.*\nevent loop delay max \(ms\) +\d+/);
        const counters = readCounters(out);
        expect([...counters.keys()]).toEqual(['event loop delay max (ms)', 'event loop delay mean (ms)']);
        const max = counters.get('event loop delay max (ms)') ?? [];
        const mean = counters.get('event loop delay mean (ms)') ?? [];
        expect(max.length).toBe(mean.length);
        expect(Math.max(...max)).toBeGreaterThanOrEqual(200);
        for (const v of [...max, ...mean]) expect(v).toBeGreaterThanOrEqual(0);
        expect(readSpans(out).spans).toEqual([]);
      }, 120_000);
    }
  }

  it('is not sampled unless selected, and its timer keeps no program alive', () => {
    const out = path.join(tmp, 'no-loop.json');
    const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '-i', 'gc', '--no-report', '--', process.execPath, '-e', 'setTimeout(() => {}, 600)'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(readCounters(out).size).toBe(0);
    // Default: every instrument; a program with nothing to do ends at once.
    const idle = path.join(tmp, 'idle.json');
    const i = spawnSync(process.execPath, ['--require', path.join(repoRoot, 'dist', 'auto.js'), '-e', ''], {
      encoding: 'utf8',
      env: { ...process.env, HOTSPAN_OUT: idle },
      timeout: 60_000,
    });
    expect(i.status, i.stderr).toBe(0);
    expect(i.signal).toBe(null);
  }, 120_000);
});

describe('node --import hotspan/auto', () => {
  it("traces an ES module program, beside the program's own Tracer", () => {
    const mine = path.join(tmp, 'mine.json');
    const esm = path.join(tmp, 'app.mjs');
    writeFileSync(
      esm,
      `import http from 'node:http';
       import hotspan from ${JSON.stringify(pathToFileURL(path.join(repoRoot, 'esm', 'index.mjs')).href)};
       const t = new hotspan.Tracer({ writeOnExit: ${JSON.stringify(mine)} });
       const server = http.createServer((req, res) => t.trace('handler', () => res.end('ok')));
       server.listen(0, '127.0.0.1', () => {
         http.get({ host: '127.0.0.1', port: server.address().port, path: '/esm' }, (res) => {
           res.resume();
           res.on('end', () => server.close());
         });
       });`,
    );
    const out = path.join(tmp, 'esm.pftrace');
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(path.join(repoRoot, 'esm', 'auto.mjs')).href, esm], {
      encoding: 'utf8',
      env: { ...process.env, HOTSPAN_OUT: out },
    });
    expect(r.status, r.stderr).toBe(0);
    const auto = readSpans(out).spans;
    one(auto, 'http server', 'GET', '/esm');
    one(auto, 'http client', 'GET', '/esm');
    expect(auto.some((s) => s.name === 'handler')).toBe(false);
    expect(readSpans(mine).spans.map((s) => s.name)).toEqual(['handler']);
  }, 120_000);

  it('HOTSPAN_REPORT=1 prints a one-screen report to stderr after the trace is written', () => {
    const out = path.join(tmp, 'report.json');
    // 40 span names and as many slow spans: the report keeps to the top 10 of each.
    const code = `const t = require(${JSON.stringify(path.join(repoRoot, 'dist', 'auto.js'))}).tracer;
      for (let i = 0; i < 40; i++) t.trace('name ' + i, () => { const e = Date.now() + 1; while (Date.now() < e); });`;
    const r = spawnSync(process.execPath, ['--require', path.join(repoRoot, 'dist', 'auto.js'), '-e', code], {
      encoding: 'utf8',
      env: { ...process.env, HOTSPAN_OUT: out, HOTSPAN_REPORT: '1', HOTSPAN_INSTRUMENT: 'gc' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.startsWith(`${out}: Chrome JSON, 40 spans`), r.stderr).toBe(true);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.length, r.stderr).toBeLessThanOrEqual(45);
    expect(lines.filter((l) => /^name \d+ /.test(l))).toHaveLength(20); // 10 in the per-name table, 10 slowest
    expect(readSpans(out).spans).toHaveLength(40);
    // Without it, nothing is printed.
    const quiet = spawnSync(process.execPath, ['--require', path.join(repoRoot, 'dist', 'auto.js'), '-e', code], {
      encoding: 'utf8',
      env: { ...process.env, HOTSPAN_OUT: out, HOTSPAN_INSTRUMENT: 'gc' },
    });
    expect(quiet.stderr).toBe('');
  }, 120_000);

  it('warns about an unknown HOTSPAN_INSTRUMENT name and keeps the others', () => {
    const out = path.join(tmp, 'warn.json');
    const r = spawnSync(process.execPath, ['--require', path.join(repoRoot, 'dist', 'auto.js'), '--expose-gc', '-e', 'global.gc(); setTimeout(() => {}, 50)'], {
      encoding: 'utf8',
      env: { ...process.env, HOTSPAN_OUT: out, HOTSPAN_INSTRUMENT: 'gc,bogus' },
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('HOTSPAN_INSTRUMENT names "bogus"');
    expect(readSpans(out).spans.some((s) => s.timeline === 'GC')).toBe(true);
  });
});
