// hotspan/auto's ioredis and redis (node-redis) instruments: a span per Redis
// command, by OpenTelemetry's database conventions (lib/auto/auto-db.ts lists
// them): a command sent alone or in a pipeline is one span, from when it is
// sent to its reply, as in OpenTelemetry's instrumentation-ioredis; so is
// each command of an ioredis MULTI transaction, MULTI and EXEC included.
//
// ioredis is wrapped as it loads: its client's `sendCommand`, which every
// command passes (a cluster's go through its nodes' clients). Its
// `ioredis:command` TracingChannel would tell the same, but subscribing to it
// makes ioredis take its traced path for every command (a promise wrapped by
// `tracePromise`, its context object with every argument turned to a
// string), which cost more than the whole span (bench/cases/redis-command.mjs).
// A command queued while its client connects is sent again once the client is
// ready; its span starts when it was first sent, under that caller's request.
//
// node-redis publishes a TracingChannel per command (`node-redis:command`,
// when it is called), which is all its instrument subscribes to. It publishes
// no command of a MULTI transaction (only the transaction, on
// `node-redis:batch`, without its commands): such a transaction is one span
// named MULTI, with `db.operation.batch.size`. A pipeline as a whole is no
// span of its own.
//
// db.query.text is the command and its key (its first argument), never the
// values: the key as the library's own redaction of its arguments gives it
// (the rules of OpenTelemetry's redis-common), so a command whose arguments
// are all secret (AUTH, HELLO, an unknown one) shows `?`.
//
// The span's parent is the request being served when the command is sent
// (ioredis) or published (node-redis).

import * as dc from 'node:diagnostics_channel';

import type { Attrs } from './auto-http';
import { setDbFailure, type DbRecorder, type DbSpan } from './auto-db';

/** A command's trace context as both libraries publish it (node-redis's args start with the command). */
interface CommandContext {
  command?: unknown;
  args?: unknown;
  database?: unknown;
  batchMode?: unknown;
  batchSize?: unknown;
  serverAddress?: unknown;
  serverPort?: unknown;
  error?: unknown;
}

/** A command's span name and attributes; `args` are its arguments after the command, redacted by the library. */
export function redisCommand(ctx: CommandContext, args: readonly unknown[]): { name: string; attrs: Attrs } {
  const op = String(ctx.command ?? '').toUpperCase();
  const attrs: Attrs = { 'db.system.name': 'redis', 'db.operation.name': op };
  if (typeof ctx.database === 'number' || typeof ctx.database === 'string') attrs['db.namespace'] = String(ctx.database);
  attrs['db.query.text'] = args.length > 0 ? `${op} ${String(args[0])}` : op;
  const address = typeof ctx.serverAddress === 'string' ? ctx.serverAddress : '';
  if (address !== '') attrs['server.address'] = address;
  const port = Number(ctx.serverPort);
  if (Number.isInteger(port) && port > 0) attrs['server.port'] = port;
  const target = address === '' ? '' : attrs['server.port'] === undefined ? address : `${address}:${String(port)}`;
  return { name: target === '' ? op : `${op} ${target}`, attrs };
}

/** A Redis error reply's prefix (WRONGTYPE, ERR); undefined for other failures (a closed connection). */
const REPLY_ERRORS = new Set(['ReplyError', 'ErrorReply', 'SimpleError', 'BlobError']);
function errorPrefix(error: unknown): string | undefined {
  const e = error as { name?: unknown; message?: unknown; constructor?: { name?: unknown } } | null | undefined;
  if (!REPLY_ERRORS.has(String(e?.name)) && !REPLY_ERRORS.has(String(e?.constructor?.name))) return undefined;
  const m = /^([A-Z][A-Z0-9_]*)(?:\s|$)/.exec(String(e?.message ?? ''));
  return m === null ? undefined : m[1];
}

/**
 * Subscribes to one of a library's TracingChannels: `spanOf` gives a
 * command's span name and attributes (or undefined: no span).
 */
function follow(rec: DbRecorder, channel: string, spanOf: (ctx: CommandContext) => { name: string; attrs: Attrs } | undefined): void {
  const spans = new WeakMap<object, DbSpan>();
  const end = (ctx: CommandContext): void => {
    const s = spans.get(ctx);
    if (s === undefined) return;
    spans.delete(ctx);
    if (ctx.error !== undefined) setDbFailure(s, ctx.error, errorPrefix(ctx.error));
    rec.close(s);
  };
  const handlers = {
    start(m: unknown): void {
      const ctx = m as CommandContext;
      const span = spanOf(ctx);
      if (span !== undefined) spans.set(ctx, rec.open('redis', span.name, span.attrs));
    },
    // A command that threw before it was queued: its error came before its end (a rejection comes after).
    end(m: unknown): void {
      if ((m as CommandContext).error !== undefined) end(m as CommandContext);
    },
    asyncStart(): void {},
    asyncEnd(m: unknown): void {
      end(m as CommandContext);
    },
    error(): void {},
  };
  const tc = dc.tracingChannel(channel);
  tc.subscribe(handlers);
  rec.onStop(() => tc.unsubscribe(handlers));
}

const asList = (a: unknown): readonly unknown[] => (Array.isArray(a) ? a : []);

/** What the ioredis instrument reads of a command (ioredis's built/Command.js). */
interface IoCommand {
  name?: unknown;
  args?: unknown;
  resolve?: (value: unknown) => unknown;
  reject?: (error: unknown) => unknown;
  [SPAN]?: DbSpan;
}
/** What it reads of a client (ioredis's built/Redis.js). */
interface IoClient {
  options?: { host?: unknown; port?: unknown; path?: unknown; db?: unknown };
  condition?: { select?: unknown } | null;
}
type SendCommand = (this: IoClient, command: IoCommand, ...rest: unknown[]) => unknown;

/** Marks a command already given its span (it passes `sendCommand` again when it leaves the offline queue). */
const SPAN = Symbol('hotspan.redis.span');

/**
 * Whether a command's first argument may be shown, by ioredis's own redaction
 * (`sanitizeArgs` of its built/tracing.js; without it, never), asked once per
 * command name.
 */
class KeyRule {
  private sanitize: ((name: string, args: unknown[]) => unknown[]) | undefined;
  private readonly shown = new Map<string, boolean>();
  use(tracing: unknown): void {
    const f = (tracing as { sanitizeArgs?: unknown } | null)?.sanitizeArgs;
    if (typeof f === 'function') this.sanitize = f as (name: string, args: unknown[]) => unknown[];
  }
  showsKey(name: string): boolean {
    let shown = this.shown.get(name);
    if (shown === undefined) {
      shown = this.sanitize !== undefined && this.sanitize(name, ['k'])[0] === 'k';
      if (this.shown.size < 1024) this.shown.set(name, shown);
    }
    return shown;
  }
}

/** A command's span name and attributes but db.query.text's value, as a client's commands of that name share them. */
interface IoShape {
  name: string;
  attrs: Attrs;
  op: string;
  showsKey: boolean;
}

/**
 * The span names and attributes of a client's commands, made once per client
 * and command name. A span keeps its strings and attributes until the trace
 * is written, so what is made afresh per command is copied by each young
 * collection it survives: the name and operation strings and the attributes
 * object grown key by key, made per command, were a large part of the
 * instrument's cost (bench/cases/redis-command.mjs). Each span still has an
 * attributes object of its own (a failure adds to it). A client whose
 * address or database changed starts over.
 */
class IoShapes {
  private readonly byClient = new WeakMap<object, { host: unknown; port: unknown; path: unknown; db: unknown; byName: Map<string, IoShape> }>();
  constructor(private readonly keys: KeyRule) {}
  of(client: IoClient, name: string): IoShape {
    const o = client.options ?? {};
    const db = client.condition?.select ?? o.db ?? 0;
    let c = this.byClient.get(client);
    if (c === undefined || c.host !== o.host || c.port !== o.port || c.path !== o.path || c.db !== db) {
      c = { host: o.host, port: o.port, path: o.path, db, byName: new Map() };
      this.byClient.set(client, c);
    }
    let shape = c.byName.get(name);
    if (shape === undefined) {
      const path = typeof o.path === 'string' && o.path !== '' ? o.path : undefined;
      const span = redisCommand(
        {
          command: name,
          database: db,
          serverAddress: path ?? (typeof o.host === 'string' && o.host !== '' ? o.host : 'localhost'),
          serverPort: path === undefined ? (o.port ?? 6379) : undefined,
        },
        [],
      );
      shape = { ...span, op: String(span.attrs['db.operation.name']), showsKey: this.keys.showsKey(name) };
      if (c.byName.size < 1024) c.byName.set(name, shape);
    }
    return shape;
  }
}

/** A command's span name and attributes, from the client that sends it (redisCommand's, its strings shared). */
function ioredisCommand(client: IoClient, command: IoCommand, shapes: IoShapes): { name: string; attrs: Attrs } {
  const args = asList(command.args);
  const shape = shapes.of(client, String(command.name));
  // db.query.text keeps its place among the attributes.
  const text = args.length === 0 ? shape.op : `${shape.op} ${shape.showsKey ? String(args[0]) : '?'}`;
  return { name: shape.name, attrs: { ...shape.attrs, 'db.query.text': text } };
}

/** Wraps a client class's `sendCommand`: a span from a command's first send to its reply. */
function wrapSendCommand(rec: DbRecorder, proto: { sendCommand?: unknown }, shapes: IoShapes): void {
  const send = proto.sendCommand;
  if (typeof send !== 'function' || (send as { [SPAN]?: true })[SPAN] === true) return;
  const original = send as SendCommand;
  const wrapped: SendCommand = function (this: IoClient, command: IoCommand, ...rest: unknown[]) {
    if (command === null || typeof command !== 'object' || command[SPAN] !== undefined || typeof command.resolve !== 'function' || typeof command.reject !== 'function') {
      return original.call(this, command, ...rest);
    }
    const { name, attrs } = ioredisCommand(this, command, shapes);
    const span = rec.open('redis', name, attrs);
    command[SPAN] = span;
    const resolve = command.resolve;
    const reject = command.reject;
    let open = true;
    command.resolve = (value: unknown): unknown => {
      if (open) {
        open = false;
        rec.close(span);
      }
      return resolve(value);
    };
    command.reject = (error: unknown): unknown => {
      if (open) {
        open = false;
        setDbFailure(span, error, errorPrefix(error));
        rec.close(span);
      }
      return reject(error);
    };
    return original.call(this, command, ...rest);
  };
  (wrapped as { [SPAN]?: true })[SPAN] = true;
  proto.sendCommand = wrapped;
  rec.onStop(() => {
    if (proto.sendCommand === wrapped) proto.sendCommand = original;
  });
}

/** The ioredis instrument. */
export function instrumentIoredis(rec: DbRecorder): void {
  const keys = new KeyRule();
  const shapes = new IoShapes(keys);
  rec.onLoad(['ioredis'], (name, exports) => {
    if (name === 'ioredis') rec.useContext();
    else if (name === 'ioredis/built/tracing.js') keys.use(exports);
    else if (name === 'ioredis/built/Redis.js') {
      const Redis = (exports as { default?: { prototype?: { sendCommand?: unknown } } } | null)?.default;
      if (Redis?.prototype !== undefined) wrapSendCommand(rec, Redis.prototype, shapes);
    }
    return exports;
  });
}

/** The redis (node-redis) instrument. */
export function instrumentRedis(rec: DbRecorder): void {
  rec.onLoad(['@redis/client'], (_name, exports) => {
    rec.useContext();
    return exports;
  });
  follow(rec, 'node-redis:command', (ctx) => redisCommand(ctx, asList(ctx.args).slice(1)));
  follow(rec, 'node-redis:batch', (ctx) => {
    if (ctx.batchMode !== 'MULTI') return undefined;
    const span = redisCommand({ ...ctx, command: 'MULTI' }, []);
    if (typeof ctx.batchSize === 'number') span.attrs['db.operation.batch.size'] = ctx.batchSize;
    return span;
  });
}
