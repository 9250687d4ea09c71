// A tracer's outputs: files written on call, at exit and on a trigger
// (dump.ts), streams, and the OTLP export.

import type { Backend } from '../backends/backend';
import type { WasmBackend } from '../backends/wasm-backend';
import { closedError, describe } from '../common/errors';
import { atExit } from '../common/exit-write';
import { outputFormat, type OutputFormat } from '../common/output';
import { otlpConfig, packageVersion, type OtlpExportOptions } from '../otlp/otlp-config';
import { OtlpExporter, type OtlpFrom } from '../otlp/otlp-exporter';
import { dumpOnCrash, dumpOnSignal, type DumpSource, type DumpSummary } from './dump';
import { endOpenAtExit } from './exit-open';
import type { ResolvedOptions } from './options';
import { openStream, type StreamOptions, type TraceStream } from './stream';

/** What Outputs asks of its tracer. */
export interface OutputsOwner {
  /** The backend recording now (close() and the async context swap it). */
  backend(): Backend;
  closed(): boolean;
  /** tracer.flush(): pending records committed, so a read sees them. */
  flush(): void;
}

export class Outputs {
  private exporter: OtlpExporter | undefined;
  /** Streams started by stream() and not closed: close() finishes them first. */
  private readonly streams = new Set<TraceStream>();

  /** `jsBase`: the js backend the tracer records in, if it does (under any wrapper). */
  constructor(
    private readonly owner: OutputsOwner,
    private readonly jsBase: WasmBackend | undefined,
  ) {}

  /** The exporter exportOtlp() started, if any. */
  get otlp(): OtlpExporter | undefined {
    return this.exporter;
  }

  /** Sets up what the options ask for at exit (writeOnExit) and on triggers (dumpOnSignal, dumpOnCrash). */
  onTriggers(o: ResolvedOptions): void {
    if (o.writeOnExit !== undefined) {
      const path = o.writeOnExit;
      const format = outputFormat(path);
      atExit(`the trace to ${path}`, () => {
        if (!this.owner.closed()) this.owner.backend().collectJoined?.(); // joined js workers ship what they hold
        if (!this.owner.closed()) endOpenAtExit(this.owner.backend()); // open spans go in the file, flagged abandoned
        this.writeNow(path, format);
        const lost = this.owner.backend().lost();
        if (lost > 0) {
          process.stderr.write(`hotspan: ${String(lost)} spans that ended are not in ${path} (lostSpans: js backend joining)\n`);
        }
      });
    }
    const source: DumpSource = {
      kind: this.owner.backend().kind,
      dump: (p) => this.dump(p),
      writeNow: (p, f) => this.writeNow(p, f),
    };
    if (o.dumpOnSignal !== undefined) dumpOnSignal(o.dumpOnSignal.signal, o.dumpOnSignal.path, source);
    if (o.dumpOnCrash !== undefined) dumpOnCrash(o.dumpOnCrash, source);
  }

  /** tracer.exportOtlp(). */
  exportOtlp(options: OtlpExportOptions | undefined): void {
    if (this.owner.closed()) throw closedError();
    if (this.exporter !== undefined) throw new Error('hotspan: exportOtlp() was already called on this tracer');
    const b = this.owner.backend();
    // The js backend hands its records to the exporter's worker.
    const js = this.jsBase;
    if (b.kind !== 'native' && js === undefined) {
      throw new Error(`hotspan: exportOtlp() needs the native or js backend; this tracer runs the '${b.kind}' backend`);
    }
    // First: a joined js worker's refusal says more than an option's error would.
    const info = js?.exportInfo(); // opens the core's export read
    const end = (): void => {
      js?.endExport();
    };
    let config;
    try {
      config = otlpConfig(options, process.env, packageVersion());
    } catch (err) {
      end();
      throw err;
    }
    const from: OtlpFrom = js !== undefined && info !== undefined ? { js: info, take: (max) => js.takeForExport(max), end } : { token: b.share() };
    this.exporter = new OtlpExporter(from, config, () => {
      if (!this.owner.closed()) this.owner.flush();
    });
  }

  /** tracer.write(). */
  async write(path: string): Promise<void> {
    if (typeof path !== 'string' || path.length === 0) {
      throw new TypeError(`hotspan: write() needs a file path, got ${describe(path)}`);
    }
    await this.owner.backend().writeFile(path, outputFormat(path));
  }

  /** tracer.dump(). */
  async dump(path: string): Promise<DumpSummary> {
    if (typeof path !== 'string' || path.length === 0) {
      throw new TypeError(`hotspan: dump() needs a file path, got ${describe(path)}`);
    }
    const format = outputFormat(path);
    if (this.owner.backend().kind === 'noop') {
      throw new Error(`hotspan: dump(${JSON.stringify(path)}): nothing to write, this tracer runs the noop backend, which records nothing`);
    }
    if (!this.owner.closed()) this.owner.flush();
    const b = this.owner.backend();
    const through = b.now();
    const lostSpans = b.lost();
    const w = await b.writeFile(path, format);
    return { path, format, bytes: w.bytes, spans: w.spans, timelines: w.timelines, through, lostSpans };
  }

  /** tracer.stream(). */
  stream(path: string, options: StreamOptions | undefined): TraceStream {
    const b = this.owner.backend();
    const nt = b.native();
    if (nt === undefined) {
      if (this.owner.closed()) throw new Error('hotspan: tracer is closed');
      throw new Error(
        `hotspan: stream() needs the native backend; this tracer runs the ${b.kind} backend ` +
          '(use tracer.dump(path) or the writeOnExit option there)',
      );
    }
    if (this.owner.closed()) throw new Error('hotspan: tracer is closed');
    const s = openStream(
      path,
      options,
      (p, rotate, keep, onError) => nt.stream(p, rotate, keep, onError),
      () => {
        if (!this.owner.closed()) this.owner.flush();
      },
    );
    this.streams.add(s);
    s.on('close', () => this.streams.delete(s));
    return s;
  }

  /** Writes the trace on this thread, after a flush (a closed tracer keeps what it committed); native: in bounded memory. */
  writeNow(path: string, format: OutputFormat): void {
    if (!this.owner.closed()) this.owner.flush();
    this.owner.backend().writeFileNow(path, format);
  }

  /** Finishes the open streams (close(), while this thread's records can still be flushed to them). */
  closeStreams(): void {
    for (const s of [...this.streams]) s.close();
  }
}
