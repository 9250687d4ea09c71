// A loopback OTLP/HTTP receiver for the export tests: decodes every request
// with the vendored upstream schema (protobufjs over
// vendor/opentelemetry/.../trace_service.proto) or JSON.parse, answers as a
// scenario says, and keeps the spans of the requests it answered 2xx.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';

import * as protobuf from 'protobufjs';

const vendor = path.join(__dirname, '..', '..', 'vendor', 'opentelemetry');

let requestType: protobuf.Type | undefined;
let responseType: protobuf.Type | undefined;
function types(): { request: protobuf.Type; response: protobuf.Type } {
  if (requestType === undefined || responseType === undefined) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => path.join(vendor, target);
    root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
    requestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
    responseType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
  }
  return { request: requestType, response: responseType };
}

/** A received span, ids as lowercase hex, times as bigint ns. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  /** W3C tracestate ('' when none). */
  traceState: string;
  name: string;
  kind: number;
  start: bigint;
  end: bigint;
  attrs: Record<string, unknown>;
  statusCode: number;
  statusMessage: string;
  flags: number;
  events: Array<{ name: string; time: bigint; attrs: Record<string, unknown> }>;
  links: Array<{ traceId: string; spanId: string; traceState: string; flags: number; attrs: Record<string, unknown> }>;
  dropped: { attributes: number; events: number; links: number };
}

export interface ReceivedRequest {
  resource: Record<string, unknown>;
  scope: { name: string; version: string };
  spans: ReceivedSpan[];
}

/** What the receiver does with request number n (0-based). */
export interface Answer {
  status?: number;
  /** Never answer (the client's timeout ends it). */
  hang?: boolean;
  retryAfter?: string;
  /** partial_success.rejected_spans in a 2xx response. */
  rejected?: number;
  /** A 2xx response with this JSON body (content-type application/json). */
  json?: unknown;
  /**
   * A hostile 2xx body after the headers: 'endless' writes as fast as the
   * client reads, until it goes; 'slow' writes one byte every 50 ms.
   */
  body?: 'endless' | 'slow';
}

const hex = (b: Uint8Array | string | undefined): string =>
  b === undefined ? '' : typeof b === 'string' ? Buffer.from(b, 'base64').toString('hex') : Buffer.from(b).toString('hex');

interface AnyValueObj {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
function anyValue(v: AnyValueObj | undefined): unknown {
  if (v === undefined) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  return undefined;
}
const attrMap = (list: Array<{ key: string; value?: AnyValueObj }> | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));

interface SpanObj {
  traceId?: Uint8Array | string;
  spanId?: Uint8Array | string;
  parentSpanId?: Uint8Array | string;
  traceState?: string;
  name?: string;
  kind?: number;
  startTimeUnixNano?: string;
  endTimeUnixNano?: string;
  attributes?: Array<{ key: string; value?: AnyValueObj }>;
  status?: { code?: number; message?: string };
  flags?: number;
  events?: Array<{ name?: string; timeUnixNano?: string; attributes?: Array<{ key: string; value?: AnyValueObj }> }>;
  links?: Array<{
    traceId?: Uint8Array | string;
    spanId?: Uint8Array | string;
    traceState?: string;
    flags?: number;
    attributes?: Array<{ key: string; value?: AnyValueObj }>;
  }>;
  droppedAttributesCount?: number;
  droppedEventsCount?: number;
  droppedLinksCount?: number;
}
interface RequestObj {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value?: AnyValueObj }> };
    scopeSpans?: Array<{ scope?: { name?: string; version?: string }; spans?: SpanObj[] }>;
  }>;
}

/** The request in either encoding, as one shape (protobufjs's toObject for protobuf; OTLP/JSON is the same shape with hex ids). */
export function decodeRequest(body: Buffer, contentType: string): ReceivedRequest[] {
  let obj: RequestObj;
  if (contentType.includes('json')) {
    obj = JSON.parse(body.toString('utf8')) as RequestObj;
  } else {
    const { request } = types();
    obj = request.toObject(request.decode(body), { longs: String, enums: Number, bytes: String }) as RequestObj;
  }
  const isJson = contentType.includes('json');
  const id = (v: Uint8Array | string | undefined): string => (isJson ? String(v ?? '') : hex(v));
  return (obj.resourceSpans ?? []).flatMap((rs) =>
    (rs.scopeSpans ?? []).map((ss) => ({
      resource: attrMap(rs.resource?.attributes),
      scope: { name: ss.scope?.name ?? '', version: ss.scope?.version ?? '' },
      spans: (ss.spans ?? []).map((s) => ({
        traceId: id(s.traceId),
        spanId: id(s.spanId),
        parentSpanId: id(s.parentSpanId),
        traceState: s.traceState ?? '',
        name: s.name ?? '',
        kind: s.kind ?? 0,
        start: BigInt(s.startTimeUnixNano ?? '0'),
        end: BigInt(s.endTimeUnixNano ?? '0'),
        attrs: attrMap(s.attributes),
        statusCode: s.status?.code ?? 0,
        statusMessage: s.status?.message ?? '',
        flags: s.flags ?? 0,
        events: (s.events ?? []).map((e) => ({ name: e.name ?? '', time: BigInt(e.timeUnixNano ?? '0'), attrs: attrMap(e.attributes) })),
        links: (s.links ?? []).map((l) => ({
          traceId: id(l.traceId),
          spanId: id(l.spanId),
          traceState: l.traceState ?? '',
          flags: l.flags ?? 0,
          attrs: attrMap(l.attributes),
        })),
        dropped: { attributes: s.droppedAttributesCount ?? 0, events: s.droppedEventsCount ?? 0, links: s.droppedLinksCount ?? 0 },
      })),
    })),
  );
}

export class Receiver {
  readonly accepted: ReceivedRequest[] = [];
  requests = 0;
  readonly headers: http.IncomingHttpHeaders[] = [];
  /** Bytes of hostile bodies ('endless', 'slow') the socket took, per response. */
  readonly hostileBytes: number[] = [];
  private server: http.Server | undefined;
  private readonly hanging = new Set<http.ServerResponse>();

  constructor(private readonly answer: (n: number) => Answer = () => ({})) {}

  /** Listens on 127.0.0.1 (port 0: any free one). */
  async listen(port = 0): Promise<number> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks)));
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer): void {
    const a = this.answer(this.requests++);
    this.headers.push(req.headers);
    if (a.hang === true) {
      this.hanging.add(res);
      return;
    }
    const status = a.status ?? 200;
    const headers: http.OutgoingHttpHeaders = { 'content-type': a.json !== undefined ? 'application/json' : 'application/x-protobuf' };
    if (a.retryAfter !== undefined) headers['retry-after'] = a.retryAfter;
    let body = Buffer.alloc(0);
    if (status >= 200 && status < 300) {
      const plain = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      this.accepted.push(...decodeRequest(plain, String(req.headers['content-type'] ?? '')));
      if (a.rejected !== undefined) {
        const { response } = types();
        body = Buffer.from(response.encode(response.fromObject({ partialSuccess: { rejectedSpans: a.rejected, errorMessage: 'test' } })).finish());
      }
      if (a.json !== undefined) body = Buffer.from(JSON.stringify(a.json));
    }
    if (a.body !== undefined) {
      this.hostile(res, status, headers, a.body);
      return;
    }
    res.writeHead(status, headers);
    res.end(body);
  }

  /** Headers, then a body that never ends: as fast as the client takes it, or a byte per 50 ms. */
  private hostile(res: http.ServerResponse, status: number, headers: http.OutgoingHttpHeaders, mode: 'endless' | 'slow'): void {
    const at = this.hostileBytes.push(0) - 1;
    this.hanging.add(res);
    res.writeHead(status, headers);
    res.flushHeaders();
    const chunk = Buffer.alloc(mode === 'endless' ? 64 * 1024 : 1, 0x41);
    let timer: NodeJS.Timeout | undefined;
    const stop = (): void => {
      clearInterval(timer);
      this.hanging.delete(res);
    };
    res.on('close', stop);
    const write = (): void => {
      // Until the socket will not take more (then on 'drain'), or the client is gone.
      while (!res.destroyed) {
        this.hostileBytes[at] = (this.hostileBytes[at] ?? 0) + chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', write);
          return;
        }
      }
    };
    if (mode === 'endless') {
      write();
    } else {
      timer = setInterval(() => {
        if (res.destroyed) return;
        this.hostileBytes[at] = (this.hostileBytes[at] ?? 0) + 1;
        res.write(chunk);
      }, 50);
    }
  }

  spans(): ReceivedSpan[] {
    return this.accepted.flatMap((r) => r.spans);
  }

  async close(): Promise<void> {
    for (const r of this.hanging) r.destroy();
    const s = this.server;
    if (s === undefined) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

/** A port that was free a moment ago (a receiver "down at start" comes up on it later). */
export async function freePort(): Promise<number> {
  const r = new Receiver();
  const port = await r.listen();
  await r.close();
  return port;
}
