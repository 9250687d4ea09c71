// What hotspan/auto's database and cache instruments (lib/auto/auto-pg.ts,
// lib/auto/auto-mysql.ts, lib/auto/auto-redis.ts) share: the recorder's calls they use, the hook that
// sees their libraries load, and how a failure is recorded.
//
// Names and attributes follow OpenTelemetry's database semantic conventions
// (the stable ones, v1.33 on; the Redis page is still in development):
//   db.system.name      postgresql, redis      (older conventions: db.system)
//   db.namespace        the database name; for Redis its index ('0')  (db.name)
//   db.operation.name   the SQL keyword or Redis command  (db.operation)
//   db.query.text       the query (its first 16,384 characters), literals
//                       replaced by ?; for Redis the command and its key
//                       only  (db.statement)
//   server.address, server.port                   (net.peer.name, net.peer.port)
//   error.type, db.response.status_code  on a failure: the SQLSTATE, or the
//                       Redis error prefix (WRONGTYPE); else the error's code
//                       or name. No error message: one can quote a value.
// The span name is `{db.operation.name} {target}`, the target being the
// database name for PostgreSQL and `server.address:server.port` for Redis
// (whose numeric namespace the conventions keep out of the name).
//
// A library that publishes a TracingChannel (node-redis and mysql2: older
// versions without the channels give no spans) is only subscribed to. pg
// publishes none, and ioredis's channel makes every command slower once
// subscribed: they are wrapped as they load, through require-in-the-middle. That hook also tells when any of these
// libraries loads, which is when the recorder starts keeping the request
// context (an AsyncLocalStorage): a program that loads none of them pays
// nothing per request for it.

import type { AsyncLocalStorage } from 'node:async_hooks';

import { Hook } from 'require-in-the-middle';

import type { Attrs } from './auto-http';

/** What an instrument sets on its span (an AutoSpan of lib/auto/auto-record.ts, which imports the instruments). */
export interface DbSpan {
  attrs: Attrs;
  error: boolean;
}

/** What the library instruments use of the recorder (lib/auto/auto-record.ts). */
export interface DbRecorder {
  /**
   * Keeps the request context from now on, so the spans opened below have
   * their request as parent; returns it (the HTTP server span being served),
   * for an instrument that carries it into callbacks (lib/auto/auto-mysql.ts).
   */
  useContext(): AsyncLocalStorage<object>;
  /** A span opened now, under the request being served (when the context is kept). */
  open(track: string, name: string, attrs: Attrs): DbSpan;
  /** Ends the span and keeps it in the trace. */
  close(span: DbSpan): void;
  /** `fn` bound to the caller's context (unchanged when the context is not kept). */
  bind<F extends (...args: never[]) => unknown>(fn: F): F;
  /** Called at stop. */
  onStop(fn: () => void): void;
  /**
   * Calls `loaded(name, exports)` for each module of `modules` (and their
   * own files, named `pkg/path/file.js`) as it is required; it returns what
   * to return instead of the exports (loadHook below).
   */
  onLoad(modules: string[], loaded: Loaded): void;
}

export type Loaded = (name: string, exports: unknown) => unknown;

/**
 * One require hook for every instrument's `onLoad`, installed once they are
 * all known (require-in-the-middle resolves each require of the program once
 * per hook); returns what removes it, or undefined when none is wanted. ES
 * modules that import one of these libraries load it through the CommonJS
 * loader, whose own files are then seen here.
 */
export function loadHook(loads: ReadonlyArray<{ modules: string[]; loaded: Loaded }>): (() => void) | undefined {
  if (loads.length === 0) return undefined;
  const hook = new Hook(
    loads.flatMap((l) => l.modules),
    { internals: true },
    (exports, name) => {
      let out: unknown = exports;
      for (const l of loads) {
        if (!l.modules.some((m) => name === m || name.startsWith(`${m}/`))) continue;
        try {
          out = l.loaded(name, out);
        } catch {
          // Tracing never breaks the program's require.
        }
      }
      return out as typeof exports;
    },
  );
  return () => hook.unhook();
}

/** Records a failure: `type` (a SQLSTATE, a Redis error prefix) or else the error's code or name. */
export function setDbFailure(span: DbSpan, error: unknown, type: string | undefined): void {
  span.error = true;
  if (type !== undefined) {
    span.attrs['db.response.status_code'] = type;
    span.attrs['error.type'] = type;
    return;
  }
  const e = error as { code?: unknown; name?: unknown } | null | undefined;
  span.attrs['error.type'] = typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : '_OTHER';
}
