// A loopback OTLP/HTTP receiver for the benches:
//   node bench/cases/otlp-receiver.mjs [delayMs] [--traces]
// Listens on 127.0.0.1 (port 0, printed as a JSON line); decodes each POSTed
// ExportTraceServiceRequest (protobuf, gzip or not) with protobufjs on the
// vendored upstream schema (vendor/opentelemetry), counts its spans and
// answers 200 with an empty ExportTraceServiceResponse (`delayMs` after the
// body arrived: a slow collector, default 0); a body that does not decode is
// answered 400 and counted. GET /__count answers
// { spans, requests, bytes, bad, uniqueSpanIds }. Runs in its own process so
// its decoding is not charged to the server it receives from. With --traces it
// also counts spans per trace id, and GET /__traces answers, for each
// `bench.kind` a root span carries (bench/cases/http-server.mjs --mix), how
// many traces arrived and how many spans each had: { slow: { "20": 31 } }.
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { rootDir } from '../lib/build.mjs';

const require = createRequire(import.meta.url);
const protobuf = require('protobufjs');

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => path.join(rootDir, 'vendor', 'opentelemetry', target);
root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
const Request = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const Response = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
const empty = Buffer.from(Response.encode(Response.create({})).finish());

const delayMs = Number(process.argv[2] !== undefined && !process.argv[2].startsWith('--') ? process.argv[2] : 0);
const byTrace = process.argv.includes('--traces') ? new Map() : undefined;
if (!(delayMs >= 0)) throw new RangeError(`otlp-receiver: delayMs must be a number >= 0, got ${process.argv[2]}`);

const count = { spans: 0, requests: 0, bytes: 0, bad: 0 };
// Span ids seen (hex), so a duplicate delivery shows as spans > uniqueSpanIds.
const ids = new Set();

function receive(body, gzip) {
  const msg = Request.decode(gzip ? gunzipSync(body) : body);
  let n = 0;
  for (const rs of msg.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        ids.add(Buffer.from(s.spanId).toString('hex'));
        if (byTrace !== undefined) tally(s);
        n++;
      }
    }
  }
  return n;
}

/** One span into its trace's tally: the count, and the root's `bench.kind`. */
function tally(s) {
  const id = Buffer.from(s.traceId).toString('hex');
  const t = byTrace.get(id) ?? { spans: 0, kind: undefined };
  t.spans++;
  if (s.parentSpanId === undefined || s.parentSpanId.length === 0) {
    t.kind = s.attributes.find((a) => a.key === 'bench.kind')?.value?.stringValue ?? 'other';
  }
  byTrace.set(id, t);
}

function traces() {
  const out = {};
  for (const t of byTrace?.values() ?? []) {
    const k = t.kind ?? 'no root';
    out[k] ??= {};
    out[k][t.spans] = (out[k][t.spans] ?? 0) + 1;
  }
  return out;
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/__traces') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(traces()));
    return;
  }
  if (req.method === 'GET' && req.url === '/__count') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ...count, uniqueSpanIds: ids.size }));
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    count.bytes += body.length;
    try {
      const n = receive(body, req.headers['content-encoding'] === 'gzip');
      count.spans += n;
      count.requests++;
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/x-protobuf' });
        res.end(empty);
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    } catch (e) {
      count.bad++;
      res.writeHead(400);
      res.end(String(e.message));
    }
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on('SIGTERM', () => {
  // An exporter's keep-alive connection must not hold the exit.
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
