// hotspan/auto's ioredis and redis (node-redis) instruments: a span per Redis
// command, by OpenTelemetry's database conventions (lib/auto/auto-db.ts lists
// them). Both libraries publish a TracingChannel per command
// (`ioredis:command` when it is written, `node-redis:command` when it is
// called), which is all these instruments subscribe to: a command sent alone
// or in a pipeline is one span, from then to its reply, as in OpenTelemetry's instrumentation-ioredis; so is
// each command of an ioredis MULTI transaction, MULTI and EXEC included.
// node-redis publishes no command of a MULTI transaction (only the
// transaction, on `node-redis:batch`, without its commands): such a
// transaction is one span named MULTI, with `db.operation.batch.size`. A
// pipeline as a whole is no span of its own.
//
// db.query.text is the command and its key (its first argument), never the
// values: the key as the library's own redaction of its arguments gives it
// (the rules of OpenTelemetry's redis-common), so a command whose arguments
// are all secret (AUTH, HELLO, an unknown one) shows `?`.
//
// The span's parent is the request being served when the command is
// published. ioredis publishes a command queued while its client connects
// when it writes it, once the client is ready: then under the context the
// client was created in.

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

/** The ioredis instrument. */
export function instrumentIoredis(rec: DbRecorder): void {
  rec.onLoad(['ioredis'], (_name, exports) => {
    rec.useContext();
    return exports;
  });
  follow(rec, 'ioredis:command', (ctx) => redisCommand(ctx, asList(ctx.args)));
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
