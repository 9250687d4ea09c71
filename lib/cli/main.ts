#!/usr/bin/env node
// The `hotspan` command: report, convert, view and run. Exit codes: 0 done,
// 1 a file could not be read or written (the message names it and why),
// 2 a usage error; `run` exits with its program's code or signal.

import { parseArgs } from 'node:util';

import { formatReport, buildReport, SORT_KEYS, type SortKey } from './report';
import { TraceFileError } from './trace-model';
import { type Command, EXIT_OK, EXIT_FAILURE, EXIT_USAGE, UsageError } from './command';

/** Commands, each loaded when used. */
const COMMANDS: Record<string, { summary: string; load: () => Command }> = {
  report: {
    summary: 'summarize a trace: per-name figures, busy time per thread, the slowest spans',
    load: () => reportCommand,
  },
  convert: {
    summary: 'convert between Perfetto and Chrome JSON, streamed',
    load: () => (require('./convert-command') as { convertCommand: Command }).convertCommand,
  },
  view: {
    summary: 'write a self-contained HTML timeline of a trace',
    load: () => (require('./view-command') as { viewCommand: Command }).viewCommand,
  },
  run: {
    summary: 'run a node program with zero-code tracing, then write and report its trace',
    load: () => (require('./run-command') as { runCommand: Command }).runCommand,
  },
};

const reportCommand: Command = {
  help: `Usage: hotspan report <trace> [<trace>...] [--sort KEY] [--top N] [--json]

Reads a Perfetto (.pftrace) or Chrome JSON trace and prints per name: count,
total, self time, mean, p50, p90, p99, max (ms; percentiles exact, nearest
rank); busy time per thread and track; the slowest spans with their
attributes; and the recording counts the file carries (produced, kept,
released, overwritten, dropped; a stream's written and missed), or that it
carries none.

Several files are read as one trace: the files of a rotated stream
(trace-1.pftrace, trace-2.pftrace, ...); the counts are the newest file's.

A file cut off mid-write (a stream still being written, a killed process) is
read up to its last whole record and the report says where it was cut:
Perfetto, its last whole packet; Chrome JSON written one event per line (as
hotspan writes it), its last whole event. A JSON document on one line that is
cut off is an error naming the file and the byte where it ends.

Options:
  --sort KEY   order of the per-name table: ${SORT_KEYS.join(', ')} (default total)
  --top N      rows of the per-name table and of the slowest spans (default 20)
  --json       the whole report as JSON, times in ns (hotFunctions' selfMs in ms)
  -h, --help   this text
`,
  run(argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        sort: { type: 'string', default: 'total' },
        top: { type: 'string', default: '20' },
        json: { type: 'boolean', default: false },
      },
    });
    if (positionals.length === 0) throw new UsageError('report needs a trace file');
    const sort = values.sort as SortKey;
    if (!SORT_KEYS.includes(sort)) throw new UsageError(`--sort must be one of ${SORT_KEYS.join(', ')}, got "${String(values.sort)}"`);
    const top = Number(values.top);
    if (!Number.isInteger(top) || top < 1) throw new UsageError(`--top must be a positive integer, got "${String(values.top)}"`);
    const r = buildReport(positionals, top, sort);
    process.stdout.write(values.json === true ? JSON.stringify(r, null, 2) + '\n' : formatReport(r));
    return EXIT_OK;
  },
};

function mainHelp(): string {
  return `Usage: hotspan <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`)
  .join('\n')}

Run "hotspan <command> --help" for a command's options.
`;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(mainHelp());
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const entry = COMMANDS[name];
  if (entry === undefined) {
    process.stderr.write(`hotspan: unknown command "${name}"\n\n${mainHelp()}`);
    return EXIT_USAGE;
  }
  const cmd = entry.load();
  // `run` passes everything after its options to the program, --help included.
  const own = name === 'run' ? rest.slice(0, rest.indexOf('--') < 0 ? rest.length : rest.indexOf('--')) : rest;
  if (own.includes('--help') || own.includes('-h')) {
    process.stdout.write(cmd.help);
    return EXIT_OK;
  }
  try {
    return await cmd.run(rest);
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true) {
      process.stderr.write(`hotspan ${name}: ${(e as Error).message}\n\n${cmd.help}`);
      return EXIT_USAGE;
    }
    if (e instanceof TraceFileError) {
      process.stderr.write(`hotspan ${name}: ${e.message}\n`);
      return EXIT_FAILURE;
    }
    throw e;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`hotspan: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = EXIT_FAILURE;
    },
  );
}
