// `hotspan convert <in> <out>`: Perfetto <-> Chrome JSON, streamed: the
// readers' spans go in batches (span-batches.ts) to the core's incremental
// writers (through WebAssembly, lib/wasm-core.ts), whose bytes go to the
// file as each batch is written.

import { closeSync, openSync, writeSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { outputFormat } from '../output';
import { WasmDocumentWriter } from '../wasm-core';
import type { Command } from './main';
import { EXIT_OK, UsageError } from './main';
import { Progress } from './progress';
import { readTrace } from './read-trace';
import { SpanBatches } from './span-batches';
import { describeCut, TraceFileError, type ReadSummary } from './trace-model';

export type ConvertSummary = ReadSummary;

function openOut(path: string): number {
  try {
    return openSync(path, 'w');
  } catch (e) {
    throw new TraceFileError(path, `cannot write: ${(e as Error).message}`);
  }
}

function writeAll(fd: number, bytes: Uint8Array, path: string): void {
  try {
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
  } catch (e) {
    throw new TraceFileError(path, `cannot write: ${(e as Error).message}`);
  }
}

export function convert(input: string, output: string, onProgress?: (done: number, total: number) => void): ConvertSummary {
  let format;
  try {
    format = outputFormat(output);
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/^hotspan: /, ''));
  }
  const fd = openOut(output);
  try {
    let writer: WasmDocumentWriter | undefined;
    // The document begins with the first batch, once the reader has told the
    // input's clocks (before its first span); an input that says none gets
    // zeros: its times are written as they are.
    const begin = (): WasmDocumentWriter => {
      const c = batches.inputClocks;
      return new WasmDocumentWriter(
        format,
        { monotonicNs: c?.monotonicNs ?? 0n, realtimeNs: c?.realtimeNs ?? 0n, boottimeNs: c?.boottimeNs ?? -1n },
        c?.originNs ?? 0n,
      );
    };
    const batches = new SpanBatches((batch, serial) => {
      writer ??= begin();
      writeAll(fd, writer.append(batch, serial), output);
    });
    const summary = readTrace(input, batches, { onProgress });
    batches.end();
    writer ??= begin();
    writeAll(fd, writer.finish(), output);
    return summary;
  } finally {
    closeSync(fd);
  }
}

export const convertCommand: Command = {
  help: `Usage: hotspan convert <in> <out>

Converts a trace between Perfetto protobuf and Chrome JSON. The input's
format is read from its content; the output's from its extension (.json,
.pftrace, .perfetto-trace). Streamed: memory stays bounded for any input size.
A cut-off input converts up to its last whole record, with a warning saying
where it was cut. The input's clock metadata (hotspan's origin and clock
readings) and its counter tracks are carried over.
On a terminal, a progress bar shows for conversions that take over a second.

Options:
  -h, --help   this text
`,
  run(argv) {
    const { positionals } = parseArgs({ args: argv, allowPositionals: true, options: {} });
    if (positionals.length !== 2) throw new UsageError('convert needs an input and an output file');
    const [input, output] = positionals;
    const progress = new Progress(process.stderr, `converting ${input}`);
    let summary: ConvertSummary;
    try {
      summary = convert(input, output, (done, total) => progress.update(done, total));
    } finally {
      progress.done();
    }
    if (summary.truncated) {
      process.stderr.write(`hotspan convert: ${input} is cut off: ${describeCut(summary)}, and converted that\n`);
    }
    return EXIT_OK;
  },
};
