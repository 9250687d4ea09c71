// Zero-code instrumentation: spans for HTTP server and client requests, fetch
// (undici), DNS lookups, TCP/TLS connections and V8 garbage collections,
// from Node's diagnostics channels, a dns.lookup wrapper and perf_hooks. Each
// only subscribes: nothing runs until its channel has traffic. The event-loop
// delay is the exception: an unref'd timer that measures the time between its
// ticks and records counter samples (lib/auto/event-loop-delay.ts).
//
// These spans begin and end at times known only afterwards (a GC entry
// arrives after the pause; a status code at the response's end), which the
// Tracer API has no call for, so they are added to the trace as async tracks
// by a SpanTaker: on the native backend as each ends (lib/auto/auto-file.ts,
// SpanAdder), into the tracer itself, whose budget counts them and whose
// write then streams; on the others they are kept here (bounded, overflow
// counted) and added to its snapshot when the trace is written at exit
// (withAutoSpans).
//
// With a SpanSink (OTLP export, lib/auto/auto-export.ts) the recorder also keeps a
// request context: an AsyncLocalStorage holds the HTTP server span being
// served, so the client requests and fetches made while serving it are its
// children, and http(s).request/get are wrapped so a client request's
// traceparent can be set before its headers are stored. The database and
// cache instruments (lib/auto/auto-pg.ts, lib/auto/auto-mysql.ts, lib/auto/auto-redis.ts) keep that
// context too, from when their library loads: their spans are the request's
// children. Without a sink or such a library neither is installed: async_hooks
// stay off.
// The express and fastify instruments give a server span its route (found by
// its request, no context needed: lib/auto/auto-route.ts).

import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import * as dc from 'node:diagnostics_channel';
// The module objects themselves (an ES namespace's properties cannot be replaced).
import dns = require('node:dns');
import http = require('node:http');
import https = require('node:https');
import nodeModule = require('node:module');
import tls = require('node:tls');
import { PerformanceObserver, performance, constants as perfConstants, type PerformanceEntry } from 'node:perf_hooks';

import { EVENT_LOOP_INTERVAL_MS, sampleEventLoop, type CounterSink } from './event-loop-delay';
import { instrumentPg } from './auto-pg';
import { instrumentMysql } from './auto-mysql';
import { instrumentIoredis, instrumentRedis } from './auto-redis';
import { instrumentExpress } from './auto-express';
import { instrumentFastify } from './auto-fastify';
import { routeName, type RouteRecorder } from './auto-route';
import { loadHook, type DbRecorder, type Loaded } from './auto-db';
import { bodySize, clientRequest, serverRequest, setFailure, setStatus, type Attrs } from './auto-http';

export { EVENT_LOOP_MAX, EVENT_LOOP_MEAN, type CounterSink } from './event-loop-delay';

export const INSTRUMENTS = ['http', 'fetch', 'dns', 'net', 'gc', 'eventloop', 'pg', 'mysql', 'redis', 'ioredis', 'express', 'fastify'] as const;
export type Instrument = (typeof INSTRUMENTS)[number];

export interface AutoSpan {
  track: string;
  name: string;
  start: number;
  end: number;
  attrs: Attrs;
  error: boolean;
  parent: AutoSpan | undefined;
  /** A connection no request has adopted yet, still open: its parent may still be set. */
  adoptable?: boolean;
  /** Never in the trace (a connection kept only as its DNS lookup's link to the request). */
  untraced?: boolean;
}

/** Spans kept at most (without a taker); later ones are counted in `dropped`. */
export const MAX_SPANS = 1_000_000;


/** Takes each span that ends into the trace (lib/auto/auto-file.ts, SpanAdder). */
export interface SpanTaker {
  /** `s` ended and is in the trace; false: it was not taken (no room), and is counted in `dropped`. */
  take(s: AutoSpan): boolean;
  /** `s` ended without being in the trace (a connection without the net instrument): its children may go on. */
  passed(s: AutoSpan): void;
}

/** Follows the spans as they open and end (OTLP export, lib/auto/auto-export.ts). */
export interface SpanSink {
  /**
   * An HTTP server or client span, or a fetch, opened for `message` (the
   * incoming request, the ClientRequest before its headers are stored, the
   * undici request): where trace context comes in or goes out.
   */
  opened(span: AutoSpan, message: object): void;
  /** `span` ended and is in the trace; its parent may not have ended yet, and an ancestor may still be adoptable. */
  ended(span: AutoSpan): void;
  /** `span` is no longer adoptable (a request adopted it, or it ended). */
  settled(span: AutoSpan): void;
  /** The recorder stopped: nothing opens, ends or settles any more. */
  stopped(): void;
}

const GC_KINDS: Record<number, string> = {
  [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** A fetch's (undici request's) name and attributes: its origin is `scheme://host[:port]`. */
function fetchRequest(request: { method?: string; origin?: string; path?: string }): { name: string; attrs: Attrs } {
  const origin = String(request.origin ?? '');
  const at = origin.indexOf('://');
  const scheme = at < 0 ? 'http' : origin.slice(0, at);
  return clientRequest(request.method, scheme, at < 0 ? origin : origin.slice(at + 3), request.path);
}

export class AutoRecorder {
  /** The ended spans kept until the trace is written (none once handTo() was called). */
  readonly spans: AutoSpan[] = [];
  dropped = 0;
  private taker: SpanTaker | undefined;
  private rootEnded: ((s: AutoSpan) => void) | undefined;
  private readonly stops: Array<() => void> = [];
  /** The HTTP server span being served (only with a sink or a database library: see the top of this file). */
  private serving: AsyncLocalStorage<AutoSpan> | undefined;

  /** `eventLoopInterval`: ms between the event-loop delay's samples (the last one is taken at stop). */
  constructor(instruments: ReadonlySet<Instrument>, counter?: CounterSink, private readonly sink?: SpanSink, eventLoopInterval = EVENT_LOOP_INTERVAL_MS) {
    if (sink !== undefined) this.serving = new AsyncLocalStorage();
    if (instruments.has('http')) this.http();
    if (instruments.has('fetch')) this.fetch();
    if (instruments.has('dns')) this.dns();
    if (instruments.has('net') || instruments.has('dns')) this.connections(instruments.has('net'));
    if (instruments.has('gc')) this.gc();
    if (instruments.has('eventloop') && counter !== undefined) this.stops.push(sampleEventLoop(counter, eventLoopInterval));
    if (instruments.has('pg')) instrumentPg(this.db);
    if (instruments.has('mysql')) instrumentMysql(this.db);
    if (instruments.has('redis')) instrumentRedis(this.db);
    if (instruments.has('ioredis')) instrumentIoredis(this.db);
    if (instruments.has('express')) instrumentExpress(this.routes);
    if (instruments.has('fastify')) instrumentFastify(this.routes);
    const unhook = loadHook(this.loads);
    if (unhook !== undefined) this.stops.push(unhook);
  }

  /** The libraries the instruments wait for (one require hook for all: lib/auto/auto-db.ts). */
  private readonly loads: Array<{ modules: string[]; loaded: Loaded }> = [];

  /** What the database and cache instruments use (lib/auto/auto-db.ts). */
  private readonly db: DbRecorder = {
    useContext: () => (this.serving ??= new AsyncLocalStorage()),
    open: (track, name, attrs) => this.open(track, name, attrs, this.serving?.getStore()),
    close: (s) => this.close(s as AutoSpan),
    bind: <F extends (...args: never[]) => unknown>(fn: F): F =>
      this.serving === undefined ? fn : (AsyncResource.bind(fn as unknown as (...args: unknown[]) => unknown) as unknown as F),
    onStop: (fn) => this.stops.push(fn),
    onLoad: (modules, loaded) => this.loads.push({ modules, loaded }),
  };

  /** Each open HTTP server span by its request (an IncomingMessage), for the route instruments. */
  private readonly serverOf = new WeakMap<object, AutoSpan>();

  /** What the web framework instruments use (lib/auto/auto-route.ts): the route renames the request's span while it is open. */
  private readonly routes: RouteRecorder = {
    route: (request, route) => {
      const s = this.serverOf.get(request);
      if (s === undefined || !Number.isNaN(s.end)) return;
      s.attrs['http.route'] = route;
      s.name = routeName(s.attrs['http.request.method'] === '_OTHER' ? 'HTTP' : String(s.attrs['http.request.method']), route);
    },
    onStop: (fn) => this.stops.push(fn),
  };

  private open(track: string, name: string, attrs: Attrs, parent?: AutoSpan, start = performance.now()): AutoSpan {
    return { track, name, start, end: NaN, attrs, error: false, parent };
  }

  /** An outgoing request's span (http client, fetch; name and attributes by lib/auto/auto-http.ts), under the server span being served. */
  private openRequest(track: string, req: { name: string; attrs: Attrs }): AutoSpan {
    return this.open(track, req.name, req.attrs, this.serving?.getStore());
  }

  /** From now on each span that ends goes to `taker` (those ended so far first), not into `spans`. */
  handTo(taker: SpanTaker): void {
    this.taker = taker;
    for (const s of this.spans.splice(0)) if (!taker.take(s)) this.dropped++;
  }

  /**
   * `fn` is called with each root that ends once it is in the trace: a span
   * with no parent, but for GC pauses and connections (a request served, or
   * a query, command, request or lookup made outside any).
   */
  onRootEnd(fn: (s: AutoSpan) => void): void {
    this.rootEnded = fn;
  }

  private close(s: AutoSpan, end = performance.now()): void {
    if (!Number.isNaN(s.end)) return;
    s.end = end;
    if (this.taker !== undefined) {
      if (!this.taker.take(s)) this.dropped++;
    } else if (this.spans.length >= MAX_SPANS) this.dropped++;
    else this.spans.push(s);
    this.sink?.ended(s);
    if (this.rootEnded !== undefined && s.parent === undefined && s.track !== 'GC' && s.track !== 'net') this.rootEnded(s);
  }

  private on(channel: string, fn: (msg: unknown) => void): void {
    dc.subscribe(channel, fn);
    this.stops.push(() => dc.unsubscribe(channel, fn));
  }

  private http(): void {
    type Req = {
      method?: string;
      url?: string;
      path?: string;
      host?: string;
      protocol?: string;
      httpVersion?: string;
      headers?: Record<string, unknown>;
      socket?: unknown;
      once(e: string, f: (...a: unknown[]) => void): void;
      getHeader?(n: string): unknown;
    };
    type Res = { statusCode?: number; httpVersion?: string; headers?: Record<string, unknown>; getHeader?(n: string): unknown };
    const server = new WeakMap<object, AutoSpan>();
    this.on('http.server.request.start', (m) => {
      const { request, response } = m as { request: Req; response: Res };
      const { name, attrs } = serverRequest(request as Parameters<typeof serverRequest>[0]);
      const s = this.open('http server', name, attrs);
      server.set(response, s);
      this.serverOf.set(request, s);
      if (this.serving !== undefined) {
        // Published right before the 'request' event, in the connection's context: the handler and what it schedules see s.
        this.serving.enterWith(s);
        this.sink?.opened(s, request);
      }
    });
    this.on('http.server.response.finish', (m) => {
      const { response } = m as { response: Res };
      const s = server.get(response);
      if (s === undefined) return;
      s.error = setStatus(s.attrs, response.statusCode, 500);
      const bytes = bodySize(response.getHeader?.('content-length'));
      if (bytes !== undefined) s.attrs['http.response.body.size'] = bytes;
      this.close(s);
    });
    const client = new WeakMap<object, AutoSpan>();
    // The span of a client request: opened when the request is published, or earlier by the wrapped http(s).request.
    const clientSpan = (request: Req): AutoSpan => {
      const known = client.get(request);
      if (known !== undefined) return known;
      const scheme = request.protocol === 'https:' ? 'https' : 'http';
      const hostHeader = request.getHeader?.('host');
      const host = typeof hostHeader === 'string' ? hostHeader : String(request.host ?? '');
      const s = this.openRequest('http client', clientRequest(request.method, scheme, host, request.path));
      client.set(request, s);
      // The connection this request opened (net.client.socket came first) becomes its child.
      const adopt = (socket: unknown): void => {
        const c = socket !== null && typeof socket === 'object' ? this.connecting.get(socket) : undefined;
        if (c === undefined || c.adoptable !== true) return;
        c.parent = s;
        c.adoptable = false;
        // The request began when it asked for this connection (its start is published after).
        if (c.start < s.start) s.start = c.start;
        this.sink?.settled(c);
      };
      if (request.socket) adopt(request.socket);
      else request.once('socket', adopt);
      return s;
    };
    this.on('http.client.request.start', (m) => {
      clientSpan((m as { request: Req }).request);
    });
    // Published right before the request's 'error' event. Not an 'error' listener of ours: one would keep an
    // error the program does not handle from being thrown.
    this.on('http.client.request.error', (m) => {
      const { request, error } = m as { request: Req; error: unknown };
      const s = client.get(request);
      if (s === undefined) return;
      s.error = true;
      setFailure(s.attrs, error);
      this.close(s);
    });
    if (this.sink !== undefined) {
      const sink = this.sink;
      for (const mod of [http, https]) this.wrapRequest(mod, (request) => sink.opened(clientSpan(request as unknown as Req), request));
    }
    this.on('http.client.response.finish', (m) => {
      const { request, response } = m as { request: Req; response: Res };
      const s = client.get(request);
      if (s === undefined) return;
      s.error = setStatus(s.attrs, response.statusCode, 400);
      if (response.httpVersion !== undefined) s.attrs['network.protocol.version'] = response.httpVersion;
      const bytes = bodySize(response.headers?.['content-length']);
      if (bytes !== undefined) s.attrs['http.response.body.size'] = bytes;
      this.close(s);
    });
  }

  /**
   * Wraps `mod.request` and `mod.get` so `created` sees each ClientRequest
   * before its headers are stored (http.client.request.start comes after).
   * get() is request() then end(), as in Node itself, whose get calls its
   * own request, not the export.
   */
  private wrapRequest(mod: typeof http | typeof https, created: (request: http.ClientRequest) => void): void {
    const m = mod as { request: unknown; get: unknown };
    const original = { request: mod.request, get: mod.get };
    const request = function request(this: unknown, ...args: unknown[]): http.ClientRequest {
      const req = Reflect.apply(original.request, this, args) as http.ClientRequest;
      try {
        created(req);
      } catch {
        // Tracing never breaks the program's request.
      }
      return req;
    };
    const get = function get(this: unknown, ...args: unknown[]): http.ClientRequest {
      const req = Reflect.apply(request, this, args);
      req.end();
      return req;
    };
    m.request = request;
    m.get = get;
    // `import { get } from 'node:http'` reads the ES module's own bindings.
    nodeModule.syncBuiltinESMExports();
    this.stops.push(() => {
      m.request = original.request;
      m.get = original.get;
      nodeModule.syncBuiltinESMExports();
    });
  }

  private fetch(): void {
    type UReq = { method?: string; origin?: string; path?: string };
    const open = new WeakMap<object, AutoSpan>();
    this.on('undici:request:create', (m) => {
      const { request } = m as { request: UReq };
      const s = this.openRequest('fetch', fetchRequest(request));
      open.set(request, s);
      // undici connects, when it must, right away in this dispatch (Client's connect() runs up to its first await).
      this.dispatching = s;
      queueMicrotask(() => {
        if (this.dispatching === s) this.dispatching = undefined;
      });
      this.sink?.opened(s, request);
    });
    this.on('undici:request:headers', (m) => {
      const { request, response } = m as { request: UReq; response: { statusCode?: number } };
      const s = open.get(request);
      if (s !== undefined) s.error = setStatus(s.attrs, response.statusCode, 400);
    });
    this.on('undici:request:trailers', (m) => {
      const s = open.get((m as { request: UReq }).request);
      if (s !== undefined) this.close(s);
    });
    this.on('undici:request:error', (m) => {
      const { request, error } = m as { request: UReq; error: Error };
      const s = open.get(request);
      if (s === undefined) return;
      s.error = true;
      setFailure(s.attrs, error);
      this.close(s);
    });
  }

  private dns(): void {
    const original = dns.lookup;
    const recorder = this;
    const wrapped = function lookup(this: unknown, hostname: string, ...rest: unknown[]): unknown {
      const cb = rest[rest.length - 1];
      if (typeof cb !== 'function') return Reflect.apply(original, this, [hostname, ...rest]);
      // A connection being opened now called it (synchronously): its child.
      const s = recorder.open('dns', 'dns.lookup', { host: String(hostname) }, recorder.connectingNow);
      rest[rest.length - 1] = (err: Error | null, address: unknown, family: unknown): void => {
        if (err) {
          s.error = true;
          s.attrs['error.message'] = err.message;
        } else if (typeof address === 'string') {
          s.attrs.address = address;
          s.attrs.family = Number(family);
        } else if (Array.isArray(address)) {
          // { all: true } (net.connect's autoSelectFamily asks so): the count and the first.
          s.attrs.addresses = address.length;
          const first = address[0] as { address?: unknown } | undefined;
          if (typeof first?.address === 'string') s.attrs.address = first.address;
        }
        recorder.close(s);
        Reflect.apply(cb as (...a: unknown[]) => void, undefined, [err, address, family]);
      };
      return Reflect.apply(original, this, [hostname, ...rest]);
    };
    (dns as { lookup: unknown }).lookup = wrapped;
    this.stops.push(() => {
      (dns as { lookup: unknown }).lookup = original;
    });
  }

  /** Sockets connecting now, for the HTTP client request that opened them. */
  private readonly connecting = new WeakMap<object, AutoSpan>();
  /**
   * The connection whose connect() is running on the stack now: net.connect
   * and tls.connect look the host up synchronously inside it, so a DNS span
   * begun meanwhile is that connection's child.
   */
  private connectingNow: AutoSpan | undefined;
  /**
   * The TLS connection whose wrapped tls.connect() is running now. From Node
   * 22 on, Socket.prototype.connect publishes net.client.socket for the
   * TLSSocket too: that socket is this connection's, not a second one.
   */
  private tlsOpening: AutoSpan | undefined;
  /** Per connection not ready nor closed yet: what closes its span at stop if its socket failed. */
  private readonly connectingSockets = new Set<() => void>();
  /** The fetch being dispatched now: a connection opened meanwhile is its own. */
  private dispatching: AutoSpan | undefined;
  /** Connection spans are kept (the net instrument), or only parent DNS spans. */
  private keepConnections = false;

  /**
   * TCP connections (net.connect publishes net.client.socket) and TLS
   * connections (tls.connect publishes nothing of its own in Node 20: it is
   * wrapped, as dns.lookup is; in Node 22 and later its socket also reaches
   * net.client.socket, and is given to the TLS span). Also installed for the dns instrument alone, then
   * without keeping the connection spans, so a lookup still gets the request
   * that opened its connection as its parent.
   */
  private connections(keep: boolean): void {
    this.keepConnections = keep;
    type Sock = {
      remoteAddress?: string;
      remotePort?: number;
      authorized?: boolean;
      alpnProtocol?: string | false;
      getProtocol?(): string | null;
      errored?: unknown;
      once(e: string, f: (...a: unknown[]) => void): void;
      removeListener(e: string, f: (...a: unknown[]) => void): void;
    };
    // Closes `s` when `socket` is ready, or is closed before (failed: its error is socket.errored; or destroyed
    // while connecting). No 'error' listener: one would keep an error the program does not handle from being thrown.
    const follow = (socket: Sock, s: AutoSpan, ready: 'connect' | 'secureConnect', done: () => void): void => {
      // At stop (exit): a socket whose error the program did not handle ended the process before its 'close'.
      const atStop = (): void => {
        if (socket.errored !== null && socket.errored !== undefined) closed();
      };
      this.connectingSockets.add(atStop);
      const ok = (): void => {
        this.connectingSockets.delete(atStop);
        socket.removeListener('close', closed);
        s.attrs.address = socket.remoteAddress ?? '';
        s.attrs.port = socket.remotePort ?? 0;
        done();
        this.finishConnection(s);
      };
      const closed = (): void => {
        this.connectingSockets.delete(atStop);
        socket.removeListener(ready, ok);
        const e = socket.errored;
        s.error = true;
        s.attrs['error.message'] = e === null || e === undefined ? 'closed before connecting' : String((e as Error).message ?? e);
        this.finishConnection(s);
      };
      socket.once(ready, ok);
      socket.once('close', closed);
    };
    const onSocket = (m: unknown): void => {
      const socket = (m as { socket: Sock }).socket;
      if (this.tlsOpening !== undefined) {
        this.connecting.set(socket, this.tlsOpening);
        return;
      }
      const s = this.connection('tcp.connect');
      this.connecting.set(socket, s);
      follow(socket, s, 'connect', () => undefined);
      // net.connect() calls socket.connect() right after publishing.
      this.connectingNow = s;
      queueMicrotask(() => {
        if (this.connectingNow === s) this.connectingNow = undefined;
      });
    };
    this.on('net.client.socket', onSocket);
    // Looked up at call time (https.Agent calls tls.connect), so replacing the export is seen.
    const original = tls.connect;
    const recorder = this;
    const wrapped = function connect(this: unknown, ...args: unknown[]): unknown {
      const opts = args.find((a): a is { servername?: string; host?: string } => a !== null && typeof a === 'object');
      const s = recorder.connection('tls.connect');
      const servername = opts?.servername ?? opts?.host;
      if (typeof servername === 'string' && servername !== '') s.attrs.servername = servername;
      const outer = recorder.connectingNow;
      const outerTls = recorder.tlsOpening;
      recorder.connectingNow = recorder.tlsOpening = s;
      let socket: Sock;
      try {
        socket = Reflect.apply(original, this, args) as Sock;
      } finally {
        recorder.connectingNow = outer;
        recorder.tlsOpening = outerTls;
      }
      recorder.connecting.set(socket, s);
      follow(socket, s, 'secureConnect', () => {
        s.attrs.protocol = socket.getProtocol?.() ?? '';
        s.attrs.authorized = socket.authorized === true;
        if (typeof socket.alpnProtocol === 'string') s.attrs.alpn = socket.alpnProtocol;
      });
      return socket;
    };
    (tls as { connect: unknown }).connect = wrapped;
    this.stops.push(() => {
      (tls as { connect: unknown }).connect = original;
    });
  }

  /** A connection span: a fetch's being dispatched now, else adoptable until a request adopts it or it ends. */
  private connection(name: string): AutoSpan {
    const s = this.open('net', name, {}, this.dispatching);
    s.adoptable = this.dispatching === undefined;
    if (!this.keepConnections) s.untraced = true;
    return s;
  }

  /** A connection span ends: kept with the net instrument, else only a DNS span's link to its request. */
  private finishConnection(s: AutoSpan): void {
    const was = s.adoptable === true;
    s.adoptable = false;
    if (this.keepConnections) this.close(s);
    else {
      s.end = performance.now();
      this.taker?.passed(s);
    }
    if (was) this.sink?.settled(s);
  }

  private gc(): void {
    const take = (entries: readonly PerformanceEntry[]): void => {
      for (const e of entries) {
        const kind = GC_KINDS[(e as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'unknown';
        const s = this.open('GC', `gc.${kind}`, { kind }, undefined, e.startTime);
        this.close(s, e.startTime + e.duration);
      }
    };
    const obs = new PerformanceObserver((list) => take(list.getEntries()));
    obs.observe({ entryTypes: ['gc'] });
    this.stops.push(() => {
      // Entries not delivered yet (the observer is called asynchronously, and exit is not).
      take(obs.takeRecords());
      obs.disconnect();
    });
  }

  stop(): void {
    for (const s of this.stops.splice(0)) s();
    for (const c of [...this.connectingSockets]) c();
    this.sink?.stopped();
  }
}
