// Where hotspan/auto writes this process's trace, and the time axis it
// shares with the traced processes it starts (lib/auto.ts).
//
// Node child processes inherit the environment, NODE_OPTIONS's --require of
// hotspan/auto included, so every Node process a traced program starts is
// traced too, with the same HOTSPAN_OUT. Each must write a file of its own:
// - Under `hotspan run`, HOTSPAN_PARTS_DIR names a directory it owns: every
//   process writes `<pid>.<ext>` there, and `hotspan run` joins them into
//   HOTSPAN_OUT when the program ends (lib/cli/join-parts.ts). Each process
//   also leaves `<pid>.started` there as it starts, so a process that was
//   traced but wrote nothing (killed) is counted.
// - Otherwise the first traced process (the one that finds no
//   HOTSPAN_OUT_PID) writes HOTSPAN_OUT and sets HOTSPAN_OUT_PID to its pid;
//   a process that inherited both writes `<name>-<pid><ext>` beside it.
// The first traced process also sets HOTSPAN_TRACE_ORIGIN_NS to its
// performance.now() origin on CLOCK_MONOTONIC; every process it starts writes
// its times relative to that origin (the native backend: its automatic
// tracer's query() times too), so the files of one run share one time axis.

import { writeFileSync } from 'node:fs';
import * as path from 'node:path';

import type { OutputFormat } from '../common/output';

export const PARTS_DIR_ENV = 'HOTSPAN_PARTS_DIR';
export const OUT_PID_ENV = 'HOTSPAN_OUT_PID';
export const ORIGIN_ENV = 'HOTSPAN_TRACE_ORIGIN_NS';

/** A part's file name in a parts directory: `<pid>.pftrace` or `<pid>.json`. */
export function partName(pid: number, format: OutputFormat): string {
  return `${String(pid)}${format === 'json' ? '.json' : '.pftrace'}`;
}

/** The marker a traced process leaves in the parts directory as it starts. */
export function startedName(pid: number): string {
  return `${String(pid)}.started`;
}

/**
 * The file this process writes, given the file asked for, `out` (HOTSPAN_OUT, or the default), its format
 * and the environment; marks the environment (OUT_PID_ENV) for the processes
 * it starts, and leaves the started marker in a parts directory.
 */
export function autoOutPath(env: NodeJS.ProcessEnv, out: string, format: OutputFormat, pid: number): string {
  const dir = env[PARTS_DIR_ENV];
  if (dir !== undefined && dir !== '') {
    try {
      writeFileSync(path.join(dir, startedName(pid)), '');
    } catch {
      // The directory is gone (hotspan run ended first): the write at exit fails and says so.
    }
    return path.join(dir, partName(pid, format));
  }
  // Without HOTSPAN_OUT the default name has the pid already.
  if (env.HOTSPAN_OUT === undefined) return out;
  const owner = env[OUT_PID_ENV];
  if (owner === undefined || owner === '') {
    env[OUT_PID_ENV] = String(pid);
    return out;
  }
  if (owner === String(pid)) return out;
  const ext = path.extname(out);
  return `${out.slice(0, out.length - ext.length)}-${String(pid)}${ext}`;
}

/**
 * The origin the processes of one run share: HOTSPAN_TRACE_ORIGIN_NS when a
 * traced process above set it, else `own` (this process's), which is then set
 * for the processes this one starts.
 */
export function sharedOrigin(env: NodeJS.ProcessEnv, own: () => bigint): bigint {
  const given = env[ORIGIN_ENV];
  if (given !== undefined && /^-?\d{1,20}$/.test(given)) return BigInt(given);
  const origin = own();
  env[ORIGIN_ENV] = origin.toString();
  return origin;
}
