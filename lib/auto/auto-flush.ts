// hotspan/auto's periodic flush (lib/auto.ts): a process killed by SIGKILL
// runs no exit hook, so its trace would be lost whole. Every
// HOTSPAN_FLUSH_MS (0: off; default 1000 under `hotspan run`, which joins
// the parts of processes that may be killed, else off: a flush rewrites the
// whole file, a cost a service should choose) the trace so far, which holds
// the recorder's ended spans (lib/auto/auto-file.ts, SpanAdder), is written to a
// temporary file by the addon's worker thread (writeFile: never this one) and
// renamed over the process's file, so the file is always a whole document:
// the last flush's, or the one written at exit. On the native backend only
// (the others build a document whole, in this thread). A flush is skipped
// when nothing was recorded since the last one, and the next waits at least
// nine times as long as the last write took, so however large the trace
// grows, flushing keeps the writer busy at most a tenth of the time.
//
// Under `hotspan run` the write at exit also leaves `<pid>.ended` in the
// parts directory: a part without it is the last flush of a process that
// did not end cleanly, and the join says so (lib/cli/join-parts.ts).

import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import * as path from 'node:path';

import type { NativeBackend } from '../backends/native-backend';
import { totalCounts } from '../common/counts';
import type { OutputFormat } from '../common/output';

export const FLUSH_ENV = 'HOTSPAN_FLUSH_MS';
/** The interval under `hotspan run` when HOTSPAN_FLUSH_MS is unset. */
export const RUN_FLUSH_MS = 1000;
/** Below this a flush would rewrite the file more often than it is worth. */
const MIN_FLUSH_MS = 10;

/** The marker a traced process leaves in the parts directory once its trace is written at exit. */
export function endedName(pid: number): string {
  return `${String(pid)}.ended`;
}

/**
 * HOTSPAN_FLUSH_MS: ms between flushes, 0 for none; unset: `byDefault`. A
 * bad value is named in a warning and `byDefault` used.
 */
export function flushInterval(env: NodeJS.ProcessEnv, byDefault: number, warn: (m: string) => void): number {
  const v = env[FLUSH_ENV];
  if (v === undefined || v.trim() === '') return byDefault;
  const ms = /^\s*\d{1,10}\s*$/.test(v) ? Number(v) : NaN;
  if (ms === 0 || (ms >= MIN_FLUSH_MS && ms <= 2 ** 31 - 1)) return ms;
  const then = byDefault === 0 ? 'not flushing' : `flushing every ${String(byDefault)} ms`;
  warn(`hotspan/auto: ${FLUSH_ENV} must be 0 (no flush) or a whole number of ms from ${String(MIN_FLUSH_MS)} to ${String(2 ** 31 - 1)}, got ${JSON.stringify(v)}; ${then}`);
  return byDefault;
}

/** The file a flush writes before renaming it to `out`: hidden, so a parts directory's join never takes it. */
export function flushingPath(out: string): string {
  return path.join(path.dirname(out), `.${path.basename(out)}.flushing`);
}

/** Flushes every `ms` (unref'd: it keeps no process alive); returns the stop, which removes a flush's leftover file. */
export function startFlushing(b: NativeBackend, out: string, format: OutputFormat, ms: number): () => void {
  if (ms === 0) return () => {};
  const tmp = flushingPath(out);
  let busy = false;
  let stopped = false;
  let written = -1;  // spans produced at the last flush
  let notBefore = 0;  // performance.now() ms: 9 x the last write's time after it ended
  const tick = (): void => {
    if (busy || stopped || performance.now() < notBefore) return;
    busy = true;
    try {
      b.flush();
      const produced = totalCounts(b.counts()).produced;
      if (produced === written) {
        busy = false;
        return;
      }
      written = produced;
      const started = performance.now();
      b.writeFile(tmp, format).then(
        () => {
          busy = false;
          const ended = performance.now();
          notBefore = ended + 9 * (ended - started);
          try {
            if (!stopped) renameSync(tmp, out);
          } catch {
            // The directory is gone (hotspan run ended first): nothing to keep it in.
          }
        },
        () => {
          // A failed flush (a full disk) leaves the last one; the write at exit says what fails.
          busy = false;
          written = -1;
        },
      );
    } catch {
      busy = false;
    }
  };
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
    rmSync(tmp, { force: true });
  };
}

/** Leaves the clean-end marker in the parts directory `dir` (if any). */
export function markEnded(dir: string | undefined, pid: number): void {
  if (dir === undefined || dir === '') return;
  try {
    writeFileSync(path.join(dir, endedName(pid)), '');
  } catch {
    // The directory is gone (hotspan run ended first).
  }
}
