// hotspan/auto honours the OTEL_* variables: a child under
// `--require hotspan/auto` with OTEL_EXPORTER_OTLP_ENDPOINT at a loopback
// receiver serves on 127.0.0.1 and makes requests to itself; the receiver
// decodes (vendored upstream proto) every span. The exported spans have the
// parents of the file written at exit (a client request made while serving
// is the server span's child, connections and lookups the request's), one
// trace id per tree, the incoming traceparent as the server span's remote
// parent, and the client's own traceparent on each outgoing request (http
// and fetch). The child ends by process.exit(), by an empty event loop, or
// by SIGINT / SIGTERM: each sends everything, the GC entries taken at exit
// included, and keeps its exit status.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { Receiver, type ReceivedSpan } from './support/otlp-receiver';
import { readSpans, repoRoot, type PlainSpan } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-auto-otlp-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// SpanKind in the upstream proto.
const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;

const REMOTE_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const REMOTE_SPAN = '00f067aa0ba902b7';

// /outer makes an HTTPS request to /inner and a fetch of /fetched while it
// is served; each handler answers with the traceparent it received. Main
// requests /outer, then /remote with a traceparent of its own, then GCs and
// ends as APP_END says: process.exit(3), a signal to itself, or an empty
// loop with one more GC at beforeExit (the spans' end at exit). The
// requests that name localhost look it up in their connect().
const APP = `
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const dir = ${JSON.stringify(path.join(__dirname, 'fixtures', 'tls'))};
const cert = fs.readFileSync(dir + '/cert.pem');
const secure = https.createServer({ key: fs.readFileSync(dir + '/key.pem'), cert }, handle);
const server = http.createServer(handle);
async function handle(req, res) {
  if (req.url === '/outer') {
    const port = server.address().port;
    const inner = await get(https, secure.address().port, '/inner', { host: 'localhost', ca: cert });
    const f = await fetch('http://127.0.0.1:' + port + '/fetched');
    const fetched = await f.text();
    return send(res, JSON.stringify({ mine: req.headers.traceparent ?? null, inner: JSON.parse(inner).mine, fetched: JSON.parse(fetched).mine }));
  }
  send(res, JSON.stringify({ mine: req.headers.traceparent ?? null, state: req.headers.tracestate ?? null }));
}
function send(res, body) { res.writeHead(200, { 'content-length': Buffer.byteLength(body) }); res.end(body); }
function get(mod, port, path, extra) {
  return new Promise((resolve, reject) => {
    mod.get({ host: '127.0.0.1', family: 4, port, path, agent: false, ...extra }, (r) => { let b = ''; r.on('data', (c) => (b += c)); r.on('end', () => resolve(b)); }).on('error', reject);
  });
}
secure.listen(0, '127.0.0.1', () => server.listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  const outer = await get(http, port, '/outer', { host: 'localhost' });
  const remote = await get(http, port, '/remote', { headers: { traceparent: '00-${REMOTE_TRACE}-${REMOTE_SPAN}-01', tracestate: 'k=v' } });
  console.log(JSON.stringify({ outer: JSON.parse(outer), remote: JSON.parse(remote) }));
  global.gc();
  const end = process.env.APP_END;
  if (end === 'exit') process.exit(3);
  if (end === 'SIGINT' || end === 'SIGTERM') {
    setInterval(() => {}, 1000);
    process.kill(process.pid, end);
    return;
  }
  // Ending on its own, with a last GC once the loop is empty (its entry arrives while the process ends).
  process.once('beforeExit', () => {
    global.gc();
    setTimeout(() => {}, 100);
  });
  for (const s of [server, secure]) {
    s.close();
    s.closeAllConnections();
  }
}));
`;

let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const AUTO = path.join(repoRoot, 'dist', 'auto.js');

async function runApp(env: NodeJS.ProcessEnv, out: string, args: string[] = ['--require', AUTO, '-e', APP]): Promise<Run> {
  const child = spawn(process.execPath, ['--expose-gc', ...args], {
    env: { ...process.env, HOTSPAN_OUT: out, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  return { code, signal, stdout, stderr };
}

/** Runs the app exporting to a fresh receiver (OTEL_EXPORTER_OTLP_ENDPOINT) with `env`, writing tmp/`file`. */
async function exportRun(file: string, env: NodeJS.ProcessEnv, args?: string[]): Promise<{ rcv: Receiver; out: string; run: Run }> {
  const rcv = (receiver = new Receiver());
  const port = await rcv.listen();
  const out = path.join(tmp, file);
  const run = await runApp({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${String(port)}`, ...env }, out, args);
  expect(run.stderr).toBe('');
  return { rcv, out, run };
}

/** The file's track of an exported span, from its kind and name. */
function trackOf(s: ReceivedSpan): string {
  if (s.kind === SERVER) return 'http server';
  // Both client kinds carry the same request attributes; only an http client span (answered) says its protocol version.
  if (s.kind === CLIENT) return 'network.protocol.version' in s.attrs ? 'http client' : 'fetch';
  if (s.name.startsWith('gc.')) return 'GC';
  return s.name === 'dns.lookup' ? 'dns' : 'net';
}

interface Node {
  label: string;
  children: Node[];
}

/** A forest as one canonical string: each node "label[children]", siblings sorted. */
function canonical(nodes: Node[]): string {
  return nodes
    .map((n) => `${n.label}[${canonical(n.children)}]`)
    .sort()
    .join(',');
}

function forest<T>(spans: T[], id: (s: T) => string, parent: (s: T) => string, label: (s: T) => string): Node[] {
  const nodes = new Map<string, Node>();
  for (const s of spans) nodes.set(id(s), { label: label(s), children: [] });
  const roots: Node[] = [];
  for (const s of spans) {
    const p = nodes.get(parent(s));
    (p === undefined ? roots : p.children).push(nodes.get(id(s))!);
  }
  return roots;
}

/** The file's spans as a forest (Chrome JSON args span_id / parent_id). */
function fileForest(spans: PlainSpan[]): Node[] {
  return forest(
    spans,
    (s) => String(s.args.span_id),
    (s) => String(s.args.parent_id ?? ''),
    (s) => `${s.timeline}:${s.name}`,
  );
}

/**
 * The exported spans as a forest, a server span's parent edge cut: the file
 * has no remote parents (the in-process traceparent is checked apart).
 */
function exportedForest(spans: ReceivedSpan[]): Node[] {
  return forest(
    spans,
    (s) => s.spanId,
    (s) => (s.kind === SERVER ? '' : s.parentSpanId),
    (s) => `${trackOf(s)}:${s.name}`,
  );
}

/** An HTTP span of a GET of `path` (named by the method alone, the path in url.path). */
function isGet(s: ReceivedSpan, path: string): boolean {
  return s.name === 'GET' && s.attrs['url.path'] === path;
}

function one(spans: ReceivedSpan[], pred: (s: ReceivedSpan) => boolean, what: string): ReceivedSpan {
  const found = spans.filter(pred);
  expect(found, `${what} in ${JSON.stringify(spans.map((s) => [s.kind, s.name]))}`).toHaveLength(1);
  return found[0];
}

function childrenOf(spans: ReceivedSpan[], parent: ReceivedSpan, kind?: number): ReceivedSpan[] {
  return spans.filter((s) => s.parentSpanId === parent.spanId && (kind === undefined || s.kind === kind));
}

/** Every span of the tree under `root` (parent links), the root included. */
function tree(spans: ReceivedSpan[], root: ReceivedSpan): ReceivedSpan[] {
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...childrenOf(spans, out[i]));
  return out;
}

const traceparentOf = (s: ReceivedSpan): string => `00-${s.traceId}-${s.spanId}-01`;

/** The checks every ending shares: the exported forest is the file's, the trees are traces, context went in and out. */
function checkRun(rcv: Receiver, out: string, run: Run): void {
  const spans = rcv.spans();
  const file = readSpans(out).spans;
  // Every span once; the same forest as the file, GC spans included.
  expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
  expect(canonical(exportedForest(spans))).toBe(canonical(fileForest(file)));
  // The GC entries, the ones taken at exit included, are in both (the forests above); global.gc()'s
  // entry is made after the GC, so a process.exit() right after it may come first.
  expect(file.filter((s) => s.timeline === 'GC').length).toBeGreaterThan(0);

  const byName = (kind: number, path: string) => one(spans, (s) => s.kind === kind && isGet(s, path) && trackOf(s) !== 'fetch', `${String(kind)} GET ${path}`);
  const clientOuter = byName(CLIENT, '/outer');
  const serverOuter = byName(SERVER, '/outer');
  const clientInner = byName(CLIENT, '/inner');
  const serverInner = byName(SERVER, '/inner');
  const fetched = one(spans, (s) => trackOf(s) === 'fetch', 'the fetch');
  const serverFetched = byName(SERVER, '/fetched');
  const clientRemote = byName(CLIENT, '/remote');
  const serverRemote = byName(SERVER, '/remote');

  // The outer request's tree is one trace, rooted at the client span.
  expect(clientOuter.parentSpanId).toBe('');
  expect(serverOuter.parentSpanId, 'the server span is a child of the client request (traceparent)').toBe(clientOuter.spanId);
  expect(clientInner.parentSpanId, 'a request made while serving is the server span child').toBe(serverOuter.spanId);
  expect(fetched.parentSpanId, 'a fetch made while serving too').toBe(serverOuter.spanId);
  expect(serverInner.parentSpanId).toBe(clientInner.spanId);
  expect(serverFetched.parentSpanId).toBe(fetched.spanId);
  for (const [client, connection] of [
    [clientOuter, 'tcp.connect'],
    [clientInner, 'tls.connect'],
  ] as const) {
    const connects = childrenOf(spans, client, INTERNAL);
    expect(connects.map((s) => s.name), `${client.name} parents its connection`).toEqual([connection]);
    expect(childrenOf(spans, connects[0]).map((s) => [s.name, s.attrs.host]), 'which parents its lookup').toEqual([['dns.lookup', 'localhost']]);
  }
  expect(childrenOf(spans, fetched, INTERNAL).map((s) => s.name), 'the fetch parents its connection').toEqual(['tcp.connect']);
  const outerTree = tree(spans, clientOuter);
  expect(outerTree, "the client, server, inner request, fetch, connections and lookups").toHaveLength(11);
  expect(new Set(outerTree.map((s) => s.traceId))).toEqual(new Set([clientOuter.traceId]));

  // The remote request: the user's traceparent goes out as given and is the server span's remote parent.
  const remoteTree = tree(spans, serverRemote);
  expect(serverRemote).toMatchObject({ traceId: REMOTE_TRACE, parentSpanId: REMOTE_SPAN });
  expect(new Set(remoteTree.map((s) => s.traceId))).toEqual(new Set([REMOTE_TRACE]));
  expect(clientRemote.traceId).not.toBe(REMOTE_TRACE);
  // Trace ids: one per tree, distinct trees distinct.
  const roots = spans.filter((s) => s.parentSpanId === '' || !spans.some((p) => p.spanId === s.parentSpanId));
  const treesTraces = roots.map((r) => r.traceId);
  expect(new Set(treesTraces).size, 'one trace per tree').toBe(treesTraces.length);

  // What the server handlers received: each client span's own traceparent.
  const seen = JSON.parse(run.stdout) as { outer: { mine: string; inner: string; fetched: string }; remote: { mine: string; state: string } };
  expect(seen.outer.mine).toBe(traceparentOf(clientOuter));
  expect(seen.outer.inner).toBe(traceparentOf(clientInner));
  expect(seen.outer.fetched).toBe(traceparentOf(fetched));
  expect(seen.remote).toEqual({ mine: `00-${REMOTE_TRACE}-${REMOTE_SPAN}-01`, state: 'k=v' });

  for (const s of spans) expect(s.end).toBeGreaterThanOrEqual(s.start);
  const gcs = spans.filter((s) => s.name.startsWith('gc.'));
  for (const g of gcs) expect(g).toMatchObject({ kind: INTERNAL, parentSpanId: '' });
}

describe('hotspan/auto with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('exports the spans with their attributes and service.name; the file keeps them', async () => {
    const { rcv, out, run } = await exportRun('exported.json', { OTEL_SERVICE_NAME: 'auto-otlp-test', APP_END: 'exit' });
    expect(run.code).toBe(3);
    expect(rcv.accepted.length).toBeGreaterThan(0);
    for (const req of rcv.accepted) expect(req.resource['service.name']).toBe('auto-otlp-test');
    const spans = rcv.spans();
    const server = one(spans, (s) => s.kind === SERVER && isGet(s, '/inner'), 'server /inner');
    const client = one(spans, (s) => s.kind === CLIENT && isGet(s, '/inner'), 'client /inner');
    expect(server).toMatchObject({ attrs: { 'http.request.method': 'GET', 'url.path': '/inner', 'url.scheme': 'https', 'http.response.status_code': 200 } });
    expect(client).toMatchObject({ attrs: { 'http.request.method': 'GET', 'server.address': 'localhost', 'url.path': '/inner', 'http.response.status_code': 200 } });
    expect(String(client.attrs['url.full'])).toMatch(/^https:\/\/localhost:\d+\/inner$/);
    expect(one(spans, (s) => s.kind === CLIENT && isGet(s, '/fetched'), 'the fetch').attrs).toMatchObject({ 'http.request.method': 'GET', 'url.path': '/fetched', 'http.response.status_code': 200 });
    const [connect] = childrenOf(spans, client, INTERNAL);
    expect(connect).toMatchObject({ name: 'tls.connect', kind: INTERNAL, attrs: { address: '127.0.0.1', servername: 'localhost', authorized: true } });
    expect(childrenOf(spans, connect)[0]).toMatchObject({ name: 'dns.lookup', kind: INTERNAL, attrs: { host: 'localhost', address: '127.0.0.1' } });
    // The server received the request after the client began it.
    expect(server.start).toBeGreaterThanOrEqual(client.start);
    checkRun(rcv, out, run);
  });

  it('an empty event loop sends everything, the GC made at beforeExit included', async () => {
    const { rcv, out, run } = await exportRun('normal.json', { APP_END: 'normal' });
    expect(run.code).toBe(0);
    checkRun(rcv, out, run);
    // Both global.gc() calls (checkRun showed the export has the file's GC spans).
    expect(readSpans(out).spans.filter((s) => s.name === 'gc.major').length).toBeGreaterThanOrEqual(2);
  });

  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    it(`${sig} sends everything, then the program dies of it`, async () => {
      const { rcv, out, run } = await exportRun(`${sig}.json`, { APP_END: sig });
      expect(run.signal).toBe(sig);
      checkRun(rcv, out, run);
    });
  }

  it('OTEL_TRACES_SAMPLER=parentbased_always_off: its own traces propagate unsampled and are not sent; a sampled parent is followed', async () => {
    const { rcv, run } = await exportRun('sampled.json', { APP_END: 'exit', OTEL_TRACES_SAMPLER: 'parentbased_always_off' });
    expect(run.code).toBe(3);
    const seen = JSON.parse(run.stdout.split('\n')[0]) as { outer: { mine: string; inner: string; fetched: string }; remote: { mine: string } };
    for (const tp of [seen.outer.mine, seen.outer.inner, seen.outer.fetched]) expect(tp).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    const spans = rcv.spans();
    // Only the tree under the incoming sampled traceparent: its server span, nothing of /outer's trees or the GCs.
    expect(spans.length).toBeGreaterThan(0);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([REMOTE_TRACE]));
    expect(one(spans, (s) => s.kind === SERVER && isGet(s, '/remote'), 'server /remote').parentSpanId).toBe(REMOTE_SPAN);
    expect(spans.some((s) => isGet(s, '/outer') || isGet(s, '/inner'))).toBe(false);
  });

  it('without the net instrument, a lookup is the child of its request, as in the file', async () => {
    const { rcv, out, run } = await exportRun('dns-only.json', { APP_END: 'exit', HOTSPAN_INSTRUMENT: 'http,fetch,dns,gc' });
    expect(run.code).toBe(3);
    const spans = rcv.spans();
    expect(canonical(exportedForest(spans))).toBe(canonical(fileForest(readSpans(out).spans)));
    expect(spans.filter((s) => trackOf(s) === 'net')).toEqual([]);
    for (const path of ['/outer', '/inner']) {
      const client = one(spans, (s) => s.kind === CLIENT && isGet(s, path) && trackOf(s) === 'http client', path);
      expect(childrenOf(spans, client, INTERNAL).map((s) => [s.name, s.attrs.host])).toEqual([['dns.lookup', 'localhost']]);
    }
  });

  // node:http's ES module is made before hotspan/auto loads (an earlier --import): its named exports must follow the wrap.
  it('an ES module importing get and createServer by name (--import) sends its traceparent too', async () => {
    const app = path.join(tmp, 'named.mjs');
    writeFileSync(
      app,
      `import { createServer, get } from 'node:http';
const server = createServer((req, res) => res.end(JSON.stringify(req.headers.traceparent ?? null)));
server.listen(0, '127.0.0.1', () => {
  get({ host: '127.0.0.1', port: server.address().port, path: '/named', agent: false }, (r) => {
    let b = '';
    r.on('data', (c) => (b += c));
    r.on('end', () => { console.log(b); server.close(); });
  });
});
`,
    );
    const { rcv, run } = await exportRun('named.json', {}, ['--import', 'data:text/javascript,import "node:http";', '--import', pathToFileURL(AUTO).href, app]);
    expect(run.code).toBe(0);
    const spans = rcv.spans();
    const client = one(spans, (s) => s.kind === CLIENT && isGet(s, '/named'), 'the client span');
    expect(JSON.parse(run.stdout)).toBe(traceparentOf(client));
    expect(one(spans, (s) => s.kind === SERVER, 'the server span').parentSpanId).toBe(client.spanId);
  });

  it('a connection destroyed while it looks its host up ends (closed before connecting), so its lookup is not held', async () => {
    const app = `
const net = require('node:net');
const server = net.createServer((c) => c.end()).listen(0, '127.0.0.1', () => {
  const socket = net.connect({ host: 'localhost', family: 4, port: server.address().port });
  socket.on('close', () => server.close());
  socket.destroy();
});`;
    const { rcv, out, run } = await exportRun('destroyed.json', { HOTSPAN_INSTRUMENT: 'dns,net' }, ['--require', AUTO, '-e', app]);
    expect(run.code).toBe(0);
    const file = readSpans(out).spans;
    expect(file.filter((s) => s.name === 'tcp.connect').map((s) => s.args.error)).toEqual([true]);
    const spans = rcv.spans();
    expect(canonical(exportedForest(spans))).toBe(canonical(fileForest(file)));
    const exported = one(spans, (s) => s.name === 'tcp.connect', 'the connection');
    expect(exported).toMatchObject({ statusCode: 2, attrs: { 'error.message': 'closed before connecting' } });
    expect(childrenOf(spans, exported).map((s) => [s.name, s.attrs.host])).toEqual([['dns.lookup', 'localhost']]);
  });

  it('exports nothing and sends no traceparent when OTEL_TRACES_EXPORTER=none', async () => {
    const { rcv, out, run } = await exportRun('none.json', { OTEL_TRACES_EXPORTER: 'none', APP_END: 'exit' });
    expect(run.code).toBe(3);
    expect(rcv.requests).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ outer: { mine: null, inner: null, fetched: null } });
    expect(readSpans(out).spans.filter((s) => s.timeline === 'http server')).toHaveLength(4);
  });
});
