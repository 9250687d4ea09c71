// `hotspan convert <in> <out>`: Perfetto <-> Chrome JSON, streamed.

import { parseArgs } from 'node:util';

import { outputFormat } from '../output';
import type { Command } from './main';
import { EXIT_OK, UsageError } from './main';
import { Progress } from './progress';
import { readTrace } from './read-trace';
import { ChromeJsonSink, OutFile, PerfettoSink, type TraceWriter } from './trace-writers';
import type { ReadSummary } from './trace-model';

export function convert(input: string, output: string, onProgress?: (done: number, total: number) => void): ReadSummary {
  let format;
  try {
    format = outputFormat(output);
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/^hotspan: /, ''));
  }
  const out = new OutFile(output);
  try {
    const sink: TraceWriter = format === 'json' ? new ChromeJsonSink(out) : new PerfettoSink(out);
    const summary = readTrace(input, sink, { onProgress });
    sink.finish();
    return summary;
  } finally {
    out.close();
  }
}

export const convertCommand: Command = {
  help: `Usage: hotspan convert <in> <out>

Converts a trace between Perfetto protobuf and Chrome JSON. The input's
format is read from its content; the output's from its extension (.json,
.pftrace, .perfetto-trace). Streamed: memory stays bounded for any input size.
A cut-off input converts up to its last whole record, with a warning.
On a terminal, a progress bar shows for conversions that take over a second.

Options:
  -h, --help   this text
`,
  run(argv) {
    const { positionals } = parseArgs({ args: argv, allowPositionals: true, options: {} });
    if (positionals.length !== 2) throw new UsageError('convert needs an input and an output file');
    const [input, output] = positionals;
    const progress = new Progress(process.stderr, `converting ${input}`);
    let summary: ReadSummary;
    try {
      summary = convert(input, output, (done, total) => progress.update(done, total));
    } finally {
      progress.done();
    }
    if (summary.truncated) {
      process.stderr.write(`hotspan convert: ${input} is cut off; converted up to its last whole record\n`);
    }
    return EXIT_OK;
  },
};
