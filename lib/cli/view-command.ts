// `hotspan view <trace> [-o trace.html]`.

import { parseArgs } from 'node:util';

import type { Command } from './command';
import { EXIT_OK, UsageError } from './command';
import { Progress } from './progress';
import { describeCut } from './trace-model';
import { writeView } from './view';

export const viewCommand: Command = {
  help: `Usage: hotspan view <trace> [-o trace.html]

Writes one self-contained HTML file (no network, nothing fetched) showing the
trace: a row per thread and per lane of a track, nested spans, a row per
counter track (tracer.counter(), the event-loop delay) drawn as a step chart,
zoom (wheel) and pan (drag), search by name, a tooltip with times and
attributes (a counter's: the value at that time), and a flame graph of where
time went. CPU samples (tracer.profile(), hotspan run --cpu-profile) are drawn
in a strip under their thread's row; clicking a span shows the flame graph and
the functions of the samples inside it. Rows of several processes are grouped
under a header per process. Open it in any browser.

Options:
  -o, --output FILE   the HTML file (default: the trace's name + .html)
  -h, --help          this text
`,
  run(argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { output: { type: 'string', short: 'o' } },
    });
    if (positionals.length !== 1) throw new UsageError('view needs exactly one trace file');
    const input = positionals[0];
    const output = values.output ?? `${input}.html`;
    const progress = new Progress(process.stderr, `reading ${input}`);
    let r;
    try {
      r = writeView(input, output, { onProgress: (done, total) => progress.update(done, total) });
    } finally {
      progress.done();
    }
    if (r.summary.truncated) process.stderr.write(`hotspan view: ${input} is cut off: ${describeCut(r.summary)}, and shows that\n`);
    const counters = r.counters > 0 ? `, ${String(r.counters)} counter track${r.counters === 1 ? '' : 's'}` : '';
    process.stdout.write(`${output}: ${String(r.spans)} spans on ${String(r.rows)} rows${counters}\n`);
    return EXIT_OK;
  },
};
