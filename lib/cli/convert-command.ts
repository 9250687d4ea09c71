// `hotspan convert <in> <out>`: Perfetto <-> Chrome JSON, streamed: the
// readers' spans go in batches (span-batches.ts) to the core's incremental
// writers (through WebAssembly, lib/binding/wasm-core.ts), whose bytes go to the
// file as each batch is written. The bytes go to a new file beside the
// output, renamed over it only once the conversion succeeded: a failed
// conversion leaves the output as it was, and the input is never the output.

import { closeSync, openSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

import { outputFormat } from '../common/output';
import { WasmDocumentWriter } from '../binding/wasm-core';
import type { Command } from './command';
import { EXIT_OK, UsageError } from './command';
import { Progress } from './progress';
import { readTrace } from './read-trace';
import { SpanBatches } from './span-batches';
import { describeCut, TraceFileError, type ReadSummary } from './trace-model';

export type ConvertSummary = ReadSummary;

/** The file `path` names after symlinks, or undefined when there is none. */
function existing(path: string): { real: string; dev: number; ino: number; regular: boolean } | undefined {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new TraceFileError(path, `cannot read: ${(e as Error).message}`);
  }
  const st = statSync(real);
  return { real, dev: st.dev, ino: st.ino, regular: st.isFile() };
}

/**
 * Where the output really goes (its symlinks followed, so the rename replaces
 * the file, not the link), once sure it is not the input: by path after
 * realpath or by inode (a hard link). The input must exist. `direct`: the
 * output is there and not a regular file (a device such as /dev/stdout, a
 * FIFO), so it is written in place: a rename would replace the device node.
 */
function target(input: string, output: string): { path: string; direct: boolean } {
  const inFile = existing(input);
  if (inFile === undefined) throw new TraceFileError(input, 'cannot open: no such file');
  const outFile = existing(output);
  if (outFile === undefined) return { path: output, direct: false };
  if (outFile.real === inFile.real || (outFile.dev === inFile.dev && outFile.ino === inFile.ino)) {
    throw new TraceFileError(output, `is the input ${input}; not converted (convert to another file, then rename it)`);
  }
  return { path: outFile.real, direct: !outFile.regular };
}

/** A new file beside `path` (same directory, so a rename replaces `path` atomically). */
function openTemp(path: string): { fd: number; temp: string } {
  for (let attempt = 0; ; attempt++) {
    const temp = join(dirname(path), `.${basename(path)}.${String(process.pid)}-${Math.random().toString(36).slice(2, 10)}.tmp`);
    try {
      return { fd: openSync(temp, 'wx'), temp };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 8) continue;
      throw new TraceFileError(path, `cannot write: ${(e as Error).message}`);
    }
  }
}

function openDirect(path: string): number {
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
  const { path: final, direct } = target(input, output);
  const { fd, temp } = direct ? { fd: openDirect(final), temp: undefined } : openTemp(final);
  let done = false;
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
    const batches = new SpanBatches((batch, serial, pid, processName) => {
      writer ??= begin();
      writer.process(pid, processName ?? '');
      writeAll(fd, writer.append(batch, serial), output);
    });
    const summary = readTrace(input, batches, { onProgress });
    batches.end();
    writer ??= begin();
    writeAll(fd, writer.finish(), output);
    closeSync(fd);
    done = true;
    if (temp === undefined) return summary;
    try {
      renameSync(temp, final);
    } catch (e) {
      throw new TraceFileError(output, `cannot write: ${(e as Error).message}`);
    }
    return summary;
  } catch (e) {
    if (!done) closeSync(fd);
    if (temp === undefined) throw e;
    try {
      unlinkSync(temp);
    } catch {
      // Renamed already, or never made.
    }
    throw e;
  }
}

export const convertCommand: Command = {
  help: `Usage: hotspan convert <in> <out>

Converts a trace between Perfetto protobuf and Chrome JSON. The input's
format is read from its content; the output's from its extension (.json,
.pftrace, .perfetto-trace). Streamed: memory stays bounded for any input size.
A cut-off input converts up to its last whole record, with a warning saying
where it was cut. The input's clock metadata (hotspan's origin and clock
readings), its processes (pid, name, threads and tracks), its counter
tracks and its CPU samples are carried over. The output is replaced
only when the conversion succeeds, and never when it is the input.
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
