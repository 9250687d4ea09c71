// The tracer's side of OTLP export: starts the exporter's worker (which
// reads, encodes and sends off this thread, see otlp-worker.ts), stops it
// within a deadline on shutdown() and at process exit, reads its counts.

import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

import { atExit } from './exit-write';
import type { OtlpConfig } from './otlp-config';
import { OtlpCounters, type OtlpCounts } from './otlp-counters';

// dist/ holds the compiled worker next to this file; the TypeScript sources
// (lib/, under vitest) use the compiled one.
function workerFile(): string {
  const here = path.join(__dirname, 'otlp-worker.js');
  return existsSync(here) ? here : path.join(__dirname, '..', 'dist', 'otlp-worker.js');
}

export class OtlpExporter {
  private readonly counters = new OtlpCounters();
  private readonly worker: Worker;
  private failure: Error | undefined;
  private stopped: Promise<void> | undefined;
  private readonly cancelExit: () => void;
  // When the event loop empties (a process ending on its own), export what
  // is left before it exits; at process.exit() and at SIGINT / SIGTERM (no
  // promise runs any more; lib/exit-write.ts passes the signal on after),
  // this thread blocks while the worker, on its own event loop, sends.
  private readonly onExit = (): void => {
    if (this.stopped !== undefined || this.counters.finished()) return;
    this.flush();
    this.worker.postMessage({ stop: this.config.shutdownTimeoutMs });
    Atomics.wait(this.counters.state, 0, 0, this.config.shutdownTimeoutMs + 1000);
  };
  private readonly onBeforeExit = (): void => {
    this.stop().catch((err: unknown) => process.emitWarning(`hotspan: OTLP export at exit failed: ${String(err)}`));
  };

  /** `flush` commits what waits in the tracer before the last read. */
  constructor(token: string, private readonly config: OtlpConfig, private readonly flush: () => void) {
    this.worker = new Worker(workerFile(), { workerData: { token, config, counters: this.counters.buffer } });
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

  counts(): OtlpCounts {
    return this.counters.read();
  }

  /** Sends what is left within the shutdown deadline, then ends the worker. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      process.off('beforeExit', this.onBeforeExit);
      this.cancelExit();
      this.flush();
      this.worker.ref();
      this.worker.postMessage({ stop: this.config.shutdownTimeoutMs });
      await new Promise<void>((resolve) => {
        // The worker says 'finished' (or fails); a worker that hangs is cut at the deadline.
        const timer = setTimeout(resolve, this.config.shutdownTimeoutMs + 1000);
        const done = (): void => {
          clearTimeout(timer);
          resolve();
        };
        if (this.counters.finished()) done();
        this.worker.once('message', done);
        this.worker.once('exit', done);
      });
      await this.worker.terminate();
      if (this.failure !== undefined) throw this.failure;
    })();
    return this.stopped;
  }
}
