// Flight recorder dumps: what tracer.dump() resolves with, and the opt-in
// triggers (a signal; an uncaught exception or unhandled rejection).
//
// The triggers keep the program's own behaviour: the crash dump listens on
// 'uncaughtExceptionMonitor', which Node calls before its own handling (or
// the program's 'uncaughtException' listener) and which, unlike an
// 'uncaughtException' or 'unhandledRejection' listener, changes neither the
// exit code nor what is printed. It writes synchronously, since the process
// may end as soon as the listener returns. A signal dump runs on the writer
// thread like dump(); the signal's listener is what the program asked for.

import { extname } from 'node:path';

import type { BackendKind } from '../backends/backend';
import { outputFormat, type OutputFormat } from '../common/output';

/** What `tracer.dump(path)` wrote. */
export interface DumpSummary {
  /** The file written. */
  path: string;
  /** The file's format: 'perfetto' or 'json'. */
  format: OutputFormat;
  /** The file's size. */
  bytes: number;
  /** Records in the file (spans, async spans and groups: what snapshot() would have returned then). */
  spans: number;
  /** Timelines in the file (threads, tracks, the group timeline). */
  timelines: number;
  /**
   * What it covers: every record committed up to this time (ms on the
   * performance.now() axis), native threads' queued records flushed first.
   * Spans still open then are not in it; recording went on meanwhile.
   */
  through: number;
  /** `tracer.lostSpans` then: spans that ended but are in no trace (js backend joining only). */
  lostSpans: number;
}

/** What the triggers dump. */
export interface DumpSource {
  readonly kind: BackendKind;
  dump(path: string): Promise<DumpSummary>;
  /** Writes the trace to `path` on this thread (records flushed first; native: in bounded memory). */
  writeNow(path: string, format: OutputFormat): void;
}

/** Signal dumps of every tracer share one sequence, so default names never collide. */
let signalDumps = 0;

/** `dumps/app.pftrace`, 3 -> `dumps/app-3.pftrace`. */
function numbered(template: string, n: number): string {
  const ext = extname(template);
  return `${template.slice(0, template.length - ext.length)}-${String(n)}${ext}`;
}

/**
 * On each `signal`, dumps to `template` numbered (`-1`, `-2`, ...: a file of
 * its own, so dumps never share a file), frozen before the program's own
 * listeners run, and says on stderr where it went (or warns why it failed).
 */
export function dumpOnSignal(signal: string, template: string, source: DumpSource): void {
  process.on(signal as NodeJS.Signals, () => {
    const file = numbered(template, ++signalDumps);
    source.dump(file).then(
      (s) => {
        process.stderr.write(`hotspan: ${signal}: dumped ${String(s.spans)} spans, ${String(s.bytes)} bytes, to ${file}\n`);
      },
      (e: unknown) => {
        process.emitWarning(`hotspan: ${signal}: no dump written: ${(e as Error).message}`, {
          type: 'HotspanWarning',
          code: 'HOTSPAN_DUMP_FAILED',
        });
      },
    );
  });
}

/** Before an uncaught exception (or an unhandled rejection Node raises as one) is handled, writes `path`. */
export function dumpOnCrash(path: string, source: DumpSource): void {
  if (source.kind === 'noop') return; // records nothing: nothing to write, nothing said
  const format = outputFormat(path);
  process.on('uncaughtExceptionMonitor', () => {
    try {
      source.writeNow(path, format);
    } catch (e) {
      // Never thrown from here: the program's own handling comes next.
      try {
        process.stderr.write(`hotspan: could not write the crash dump to ${path}: ${(e as Error).message}\n`);
      } catch {
        // stderr is gone too.
      }
    }
  });
}
