// The link from a traced process to the Node processes it starts (lib/auto.ts).
//
// Parent side (followChildren): every asynchronous child process starts
// through ChildProcess.prototype.spawn (spawn, fork, exec, execFile, and
// cluster workers, which fork); the synchronous ones through spawnSync,
// execSync and execFileSync (which call Node's internal spawnSync, not the
// export). hotspan/auto wraps all four, and at the moment of the spawn puts
// into the child's environment:
// - TRACEPARENT (and TRACESTATE): the W3C context of the parent's current span
//   (tracer.currentContext(): the innermost open span of the main thread, else
//   the async context's), as OpenTelemetry's environment carriers spell it.
//   Nothing when no span is current.
// - HOTSPAN_PARENT_LINK: a flow id of 16 hex digits, new per spawn.
// Under `hotspan run` (a parts directory) the parent also appends a line to
// `<pid>.links` in it: the flow's start, on the thread of the current span
// (the main thread when none is open), at the spawn's time.
//
// Child side (linkToParent): a valid TRACEPARENT becomes the current span of
// the automatic tracer's async context for the whole program (entered before
// its first line), so the child's local roots are the parent span's children,
// in its trace (exportOtlp() sends them with that parent span id). An invalid
// one is ignored with a warning naming it. A HOTSPAN_PARENT_LINK appends the
// flow's end to the child's own `<pid>.links`, on its main thread at its start.
// `hotspan run` turns the two ends into a flow arrow (lib/cli/join-links.ts).

import { AsyncLocalStorage } from 'node:async_hooks';
import childProcess = require('node:child_process');
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';

import type { Current } from '../tracer/async-context';
import { remoteCurrent } from '../tracer/async-context';
import { internals } from '../tracer/internal';
import { contextFromValues, formatTraceparent, parseTracestate } from '../tracer/trace-context';
import type { Tracer } from '../tracer/tracer';

export const TRACEPARENT_ENV = 'TRACEPARENT';
export const TRACESTATE_ENV = 'TRACESTATE';
export const LINK_ENV = 'HOTSPAN_PARENT_LINK';

/** The main thread's timeline (the automatic tracer's first). */
const MAIN_TID = 1;

/** One end of a flow between two processes, a line of `<pid>.links` (JSON). */
export interface LinkEnd {
  /** The flow id: 16 hex digits. */
  readonly flow: string;
  /** 'out' in the process that spawned, 'in' in the child. */
  readonly dir: 'out' | 'in';
  /** The thread (timeline id, the Chrome JSON tid) the end is on. */
  readonly tid: number;
  /** Microseconds on the run's shared axis (the Chrome JSON ts). */
  readonly ts: number;
  /** CLOCK_MONOTONIC ns, as a decimal string (the Perfetto timestamp). */
  readonly mono: string;
  /** What the end shows: `spawn <file>` or `started by pid <pid>`. */
  readonly name: string;
}

/** The links file of `pid` in a parts directory. */
export function linksName(pid: number): string {
  return `${String(pid)}.links`;
}

/** Where this process's times sit: its own performance.now() origin and the run's shared one (ns, MONOTONIC). */
export interface Axis {
  readonly own: bigint;
  readonly shared: bigint;
}

function endAt(axis: Axis, flow: string, dir: 'out' | 'in', tid: number, name: string): LinkEnd {
  const mono = axis.own + BigInt(Math.round(performance.now() * 1e6));
  return { flow, dir, tid, ts: Number(mono - axis.shared) / 1000, mono: mono.toString(), name };
}

function append(dir: string | undefined, pid: number, end: LinkEnd): void {
  if (dir === undefined || dir === '') return;
  try {
    appendFileSync(path.join(dir, linksName(pid)), JSON.stringify(end) + '\n');
  } catch {
    // The directory is gone (hotspan run ended first): nothing to link into.
  }
}

/** `envPairs` ("K=V") without `keys`, plus `add`. */
function withEnv(pairs: string[], keys: readonly string[], add: Record<string, string>): string[] {
  const out = pairs.filter((p) => !keys.some((k) => p.startsWith(`${k}=`)));
  for (const [k, v] of Object.entries(add)) out.push(`${k}=${v}`);
  return out;
}

const KEYS = [TRACEPARENT_ENV, TRACESTATE_ENV, LINK_ENV];

/** What a child started now gets in its environment; the flow's start appended to the links file. */
function carried(tracer: Tracer, partsDir: string | undefined, axis: Axis, file: unknown): Record<string, string> {
  const add: Record<string, string> = {};
  const ctx = tracer.currentContext();
  if (ctx !== undefined) {
    add[TRACEPARENT_ENV] = formatTraceparent(ctx);
    const state = ctx.traceState === undefined ? undefined : parseTracestate(ctx.traceState);
    if (state !== undefined) add[TRACESTATE_ENV] = state;
  }
  const flow = randomBytes(8).toString('hex');
  add[LINK_ENV] = flow;
  const open = tracer[internals]().backend.openIds();
  const tid = open === undefined ? MAIN_TID : Math.floor(open.spanId / 2 ** 32);
  append(partsDir, process.pid, endAt(axis, flow, 'out', tid, `spawn ${path.basename(String(file ?? '?'))}`));
  return add;
}

type SyncName = 'spawnSync' | 'execSync' | 'execFileSync';

/**
 * Where the options of a sync spawn are: execSync(command, options);
 * spawnSync / execFileSync(file, args?, options?), the options second when
 * the args are left out (as Node's normalizeSpawnArguments reads them).
 */
function optionsAt(name: SyncName, args: unknown[]): number {
  if (name === 'execSync') return 1;
  const second = args[1];
  return Array.isArray(second) || second === undefined || second === null ? 2 : 1;
}

/**
 * Wraps ChildProcess.prototype.spawn and the sync spawns so each child gets
 * the current span's context and a flow id in its environment; returns the undo.
 */
export function followChildren(tracer: Tracer, partsDir: string | undefined, axis: Axis): () => void {
  const proto = childProcess.ChildProcess.prototype as unknown as { spawn(this: unknown, options: unknown): unknown };
  const original = proto.spawn;
  proto.spawn = function spawn(this: unknown, options: unknown): unknown {
    try {
      const o = options as { envPairs?: unknown; file?: unknown } | null;
      if (typeof o === 'object' && o !== null && (o.envPairs === undefined || Array.isArray(o.envPairs))) {
        const add = carried(tracer, partsDir, axis, o.file);
        o.envPairs = withEnv((o.envPairs as string[] | undefined) ?? [], KEYS, add);
      }
    } catch {
      // The program's spawn goes on untouched.
    }
    return original.call(this, options);
  };
  // The sync spawns: a copy of the options with the environment added (the caller's object is left alone).
  const cp = childProcess as unknown as Record<SyncName, (...args: unknown[]) => unknown>;
  const originals = new Map<SyncName, (...args: unknown[]) => unknown>();
  for (const name of ['spawnSync', 'execSync', 'execFileSync'] as const) {
    const sync = cp[name];
    originals.set(name, sync);
    cp[name] = {
      [name](this: unknown, ...args: unknown[]): unknown {
        try {
          const at = optionsAt(name, args);
          const o = args[at];
          if (o === undefined || o === null || typeof o === 'object') {
            const opts = (o ?? {}) as { env?: NodeJS.ProcessEnv };
            const file = typeof args[0] === 'string' && name !== 'execSync' ? args[0] : 'sh';
            const env: NodeJS.ProcessEnv = { ...(opts.env ?? process.env) };
            for (const k of KEYS) delete env[k];
            args[at] = { ...opts, env: { ...env, ...carried(tracer, partsDir, axis, file) } };
          }
        } catch {
          // The program's spawn goes on untouched.
        }
        return sync.apply(this, args);
      },
    }[name];
  }
  return () => {
    if (proto.spawn !== original) proto.spawn = original;
    for (const [name, sync] of originals) cp[name] = sync;
  };
}

/**
 * The child's side: its parent's span (TRACEPARENT) as the current span of
 * `tracer`'s async context for the whole program, and the flow's end
 * (HOTSPAN_PARENT_LINK). The parent's context, or undefined.
 */
export function linkToParent(tracer: Tracer, env: NodeJS.ProcessEnv, partsDir: string | undefined, axis: Axis, warn: (m: string) => void) {
  const flow = env[LINK_ENV];
  if (flow !== undefined && flow !== '') {
    if (/^[0-9a-f]{16}$/.test(flow)) append(partsDir, process.pid, endAt(axis, flow, 'in', MAIN_TID, `started by pid ${String(process.ppid)}`));
    else warn(`hotspan/auto: ${LINK_ENV} must be 16 lowercase hex digits, got ${JSON.stringify(flow)}; not linked to the parent's flow`);
  }
  const tp = env[TRACEPARENT_ENV];
  if (tp === undefined || tp === '') return undefined;
  const ctx = contextFromValues([tp], env[TRACESTATE_ENV] !== undefined ? [env[TRACESTATE_ENV] as string] : []);
  if (ctx === undefined) {
    warn(`hotspan/auto: ${TRACEPARENT_ENV} is not a W3C traceparent, got ${JSON.stringify(tp)}; the process's spans start traces of their own`);
    return undefined;
  }
  const storage = new AsyncLocalStorage<Current>();
  // Another storage (hotspan/otel's context manager turned the context on first): the parent is not entered.
  if (tracer[internals]().asyncContext(storage)?.storage !== storage) return undefined;
  // Entered here, before the program's first line: the program and every continuation of it run under it.
  storage.enterWith(remoteCurrent(ctx));
  return ctx;
}
