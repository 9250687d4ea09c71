// hotspan/auto honours the OTEL_* variables: a child under
// `--require hotspan/auto` with OTEL_EXPORTER_OTLP_ENDPOINT at a loopback
// receiver serves and makes one HTTP request on 127.0.0.1; the receiver
// decodes (vendored upstream proto) the server and client spans with their
// attributes and OTEL_SERVICE_NAME's service.name, and the file written at
// exit still holds them. The child ends by process.exit(): the exporter's
// exit hook sends, so nothing waits on a clock.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { Receiver } from './support/otlp-receiver';
import { readSpans, repoRoot } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-otlp-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// SpanKind in the upstream proto.
const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;

const APP = `
const http = require('node:http');
const server = http.createServer((req, res) => { res.writeHead(201, { 'content-length': '5' }); res.end('hello'); });
server.listen(0, '127.0.0.1', () => {
  http.get({ host: '127.0.0.1', port: server.address().port, path: '/client?q=1' }, (res) => {
    res.resume();
    res.on('end', () => server.close(() => process.exit(0)));
  });
});
`;

let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function runApp(env: NodeJS.ProcessEnv, out: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--require', path.join(repoRoot, 'dist', 'auto.js'), '-e', APP], {
    env: { ...process.env, HOTSPAN_OUT: out, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stderr };
}

/** Runs the app exporting to a fresh receiver (OTEL_EXPORTER_OTLP_ENDPOINT) with `env`, writing tmp/`file`; it exits cleanly. */
async function exportRun(file: string, env: NodeJS.ProcessEnv): Promise<{ rcv: Receiver; out: string }> {
  const rcv = (receiver = new Receiver());
  const port = await rcv.listen();
  const out = path.join(tmp, file);
  const r = await runApp({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${String(port)}`, ...env }, out);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return { rcv, out };
}

describe('hotspan/auto with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('exports the HTTP server and client spans with their attributes and service.name; the file keeps them', async () => {
    const { rcv, out } = await exportRun('exported.json', { OTEL_SERVICE_NAME: 'auto-otlp-test' });
    expect(rcv.accepted.length).toBeGreaterThan(0);
    for (const req of rcv.accepted) expect(req.resource['service.name']).toBe('auto-otlp-test');
    const spans = rcv.spans();
    // Only the program's own traffic (GC spans come as V8 pleases): the exporter's requests (its worker thread) are not traced.
    const own = spans.filter((s) => !s.name.startsWith('gc.'));
    expect(own.map((s) => s.name).sort()).toEqual(['GET /client', 'GET /client', 'dns.lookup', 'tcp.connect']);
    const server = own.find((s) => s.kind === SERVER);
    const client = own.find((s) => s.kind === CLIENT);
    expect(server).toMatchObject({ name: 'GET /client', attrs: { method: 'GET', path: '/client', status: 201 } });
    expect(client).toMatchObject({ name: 'GET /client', attrs: { method: 'GET', host: '127.0.0.1', path: '/client', status: 201, response_bytes: 5 } });
    expect(own.find((s) => s.name === 'tcp.connect')).toMatchObject({ kind: INTERNAL, attrs: { address: '127.0.0.1' } });
    expect(own.find((s) => s.name === 'dns.lookup')).toMatchObject({ kind: INTERNAL, attrs: { host: '127.0.0.1', address: '127.0.0.1' } });
    // Each a root (lib/auto-export.ts says why), of its own trace.
    expect(own.map((s) => s.parentSpanId)).toEqual(['', '', '', '']);
    expect(new Set(own.map((s) => s.traceId)).size).toBe(4);
    for (const s of own) expect(s.end).toBeGreaterThan(s.start);
    // The server received the request after the client began it.
    expect(server!.start).toBeGreaterThanOrEqual(client!.start);

    // The trace file at exit is written as without export.
    const file = readSpans(out).spans;
    expect(file.filter((s) => s.timeline === 'http server').map((s) => s.name)).toEqual(['GET /client']);
    expect(file.filter((s) => s.timeline === 'http client').map((s) => s.name)).toEqual(['GET /client']);
  });

  it('exports nothing when OTEL_TRACES_EXPORTER=none', async () => {
    const { rcv, out } = await exportRun('none.json', { OTEL_TRACES_EXPORTER: 'none' });
    expect(rcv.requests).toBe(0);
    expect(readSpans(out).spans.filter((s) => s.timeline === 'http server')).toHaveLength(1);
  });
});
