// The tracer's side of OTLP export: starts the exporter's worker (which
// reads, encodes and sends off this thread, see otlp-worker.ts), stops it
// within a deadline on shutdown() and at process exit, reads its counts.
// A js tracer's records are handed to the worker when it asks (a copy of
// the columns, its only work here), and all of them at a stop.

import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

import { atExit } from '../common/exit-write';
import type { OtlpConfig } from './otlp-config';
import { OtlpCounters, type OtlpCounts } from './otlp-counters';
import type { ExportSlice, JsExportInfo } from './otlp-export-slice';

/** Where the worker reads: a native tracer by its share token, or a js tracer's hand-overs. */
export type OtlpFrom =
  | { token: string }
  | {
      js: JsExportInfo;
      /** Up to `max` records committed and not handed over yet (WasmBackend.takeForExport). */
      take: (max: number) => ExportSlice;
      /** After the last take: the source stops keeping records for the export. */
      end?: () => void;
    };

// dist/ holds the compiled worker next to this file; the TypeScript sources
// (lib/, under vitest) use the compiled one.
function workerFile(): string {
  const here = path.join(__dirname, 'otlp-worker.js');
  return existsSync(here) ? here : path.join(__dirname, '..', '..', 'dist', 'otlp', 'otlp-worker.js');
}

export class OtlpExporter {
  private readonly counters = new OtlpCounters();
  private readonly worker: Worker;
  private failure: Error | undefined;
  private stopped: Promise<void> | undefined;
  private readonly cancelExit: () => void;
  // When the event loop empties (a process ending on its own), export what
  // is left before it exits; at process.exit() and at SIGINT / SIGTERM (no
  // promise runs any more; lib/common/exit-write.ts passes the signal on after),
  // this thread blocks while the worker, on its own event loop, sends.
  private readonly onExit = (): void => {
    if (this.stopped !== undefined || this.counters.finished()) return;
    const stop = this.stopMessage();
    this.flush();
    this.handOverAll();
    this.worker.postMessage(stop);
    Atomics.wait(this.counters.state, 0, 0, this.config.shutdownTimeoutMs + 1000);
  };
  private readonly onBeforeExit = (): void => {
    this.stop().catch((err: unknown) => process.emitWarning(`hotspan: OTLP export at exit failed: ${String(err)}`));
  };

  /** `flush` commits what waits in the tracer before the last read. */
  constructor(private readonly from: OtlpFrom, private readonly config: OtlpConfig, private readonly flush: () => void) {
    const source = 'token' in from ? { token: from.token } : { js: from.js };
    this.worker = new Worker(workerFile(), { workerData: { ...source, config, counters: this.counters.buffer } });
    this.worker.on('message', (m: { pull?: number }) => {
      if (typeof m.pull === 'number' && 'take' in from && !this.handedAll) this.handOver(from.take(m.pull));
    });
    this.worker.on('error', (err) => {
      this.failure = err;
      this.counters.markFinished();
    });
    // The exporter never keeps the process alive; beforeExit sends what is left.
    this.worker.unref();
    process.on('beforeExit', this.onBeforeExit);
    this.cancelExit = atExit('the OTLP export', this.onExit);
  }

  /**
   * What is left is sent at exit only, not when the event loop empties: for
   * a caller whose own exit hook, installed before, ends spans (hotspan/auto).
   */
  sendOnlyAtExit(): void {
    process.off('beforeExit', this.onBeforeExit);
  }

  /** Set once a stop handed every record over: later asks get nothing. */
  private handedAll = false;

  private handOver(slice: ExportSlice): void {
    this.worker.postMessage({ slice }, [slice.snap.times.buffer, slice.snap.fields.buffer] as ArrayBuffer[]);
  }

  /** A js tracer's records, all of them, in batches the worker's reads take whole. */
  private handOverAll(): void {
    const from = this.from;
    if (!('take' in from)) return;
    for (;;) {
      const slice = from.take(this.config.maxBatchSize);
      this.handOver(slice);
      if (slice.left === 0) break;
    }
    this.handedAll = true;
  }

  /** After the worker ended: a js tracer's records committed since the last hand-over are not sent (counted dropped). */
  private countLeft(): void {
    const from = this.from;
    if (!('take' in from)) return;
    const rest = from.take(Number.MAX_SAFE_INTEGER);
    this.counters.add('dropped', rest.lost + rest.snap.count);
    from.end?.();
  }

  /** The deadline from now, on the epoch axis both threads share (their performance.now() origins differ). */
  private stopMessage(): { stop: number; until: number } {
    const ms = this.config.shutdownTimeoutMs;
    return { stop: ms, until: performance.timeOrigin + performance.now() + ms };
  }

  counts(): OtlpCounts {
    return this.counters.read();
  }

  /** Sends what is left within the shutdown deadline, then ends the worker. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      // The deadline runs from the call: the hand-over below is part of it.
      const stop = this.stopMessage();
      process.off('beforeExit', this.onBeforeExit);
      this.cancelExit();
      this.flush();
      this.handOverAll();
      this.worker.ref();
      this.worker.postMessage(stop);
      await new Promise<void>((resolve) => {
        // The worker says 'finished' (or fails); a worker that hangs is cut at the deadline.
        const timer = setTimeout(resolve, this.config.shutdownTimeoutMs + 1000);
        const done = (): void => {
          clearTimeout(timer);
          resolve();
        };
        if (this.counters.finished()) done();
        this.worker.on('message', (m: unknown) => {
          if (m === 'finished') done();
        });
        this.worker.once('exit', done);
      });
      await this.worker.terminate();
      this.countLeft();
      if (this.failure !== undefined) throw this.failure;
    })();
    return this.stopped;
  }
}
