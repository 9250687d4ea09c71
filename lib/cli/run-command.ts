// `hotspan run [options] -- node app.js ...`: runs the program with
// hotspan/auto preloaded (NODE_OPTIONS --require), then prints the report of
// the trace it wrote. The program's exit code is hotspan's; a program killed
// by a signal makes hotspan die of the same signal. SIGTERM and SIGHUP sent
// to hotspan run are passed on to the program; so is SIGINT, unless hotspan
// run is on a terminal, whose Ctrl-C reaches the program directly.
//
// Every Node process the program starts inherits the preload and is traced
// too: each writes a part of its own into a directory hotspan run owns
// (lib/auto/auto-out.ts), and when the program ends the parts are joined
// into the one output file, a process per pid (lib/cli/join-parts.ts).

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';

import { PARTS_DIR_ENV } from '../auto/auto-out';
import { CPU_PROFILE_ENV, cpuProfileInterval } from '../auto/auto-profile';
import { DEFAULT_INTERVAL_US } from '../tracer/cpu-profile';
import { INSTRUMENTS } from '../auto/auto-record';
import { outputFormat } from '../common/output';
import type { Command } from './command';
import { UsageError } from './command';
import { joinParts } from './join-parts';
import { buildReport, formatReport } from './report';

const AUTO = path.join(__dirname, '..', 'auto.js');

/** Whether `us` is an interval tracer.profile() takes, written as digits only. */
function validInterval(us: string): boolean {
  if (!/^\d+$/.test(us)) return false;
  try {
    return cpuProfileInterval(us) === Number(us);
  } catch {
    return false;
  }
}

export const runCommand: Command = {
  help: `Usage: hotspan run [options] -- <command> [args...]

Runs a node program with zero-code tracing (hotspan/auto, preloaded through
NODE_OPTIONS): HTTP server and client requests, fetch, DNS lookups, TCP/TLS
connections, GC pauses, and the event-loop delay as counters. The Node
processes it starts (spawn, fork, exec, cluster workers) are traced too, into
the same trace, a process per pid, each named by what it runs (server.js;
a cluster worker: server.js (worker 1)). When it ends, the trace is written and its
report printed to stderr. Exit code and signal are the program's.

Options:
  -o, --output FILE        the trace (default hotspan-trace.pftrace; .json for Chrome JSON)
  -i, --instrument LIST    comma list of ${INSTRUMENTS.join(', ')} (default all);
                           otel: every @opentelemetry/instrumentation-* installed,
                           otel:NAME,... those named (pg: instrumentation-pg)
  --cpu-profile[=US]       V8's CPU samples of each traced process's main thread
                           in the trace, one every US microseconds (10 to 1000000,
                           default 1000); the report lists the hot functions per span name
  --no-report              do not print the report
  -h, --help               this text

Environment: HOTSPAN_FLUSH_MS, ms between rewrites of each process's part
with its trace so far (default 1000; 0: none), so a killed process leaves
its spans up to its last one. HOTSPAN_DUMP_SLOWER_THAN_MS, HOTSPAN_DUMP_ERRORS,
HOTSPAN_DUMP_PATH, HOTSPAN_DUMP_WINDOW_MS, HOTSPAN_DUMP_MAX_PER_MINUTE: each
process dumps its last window to a numbered file when a request is slow or
fails (docs/sampling.md, Triggered dumps).
`,
  run(argv) {
    const dash = argv.indexOf('--');
    const own = dash < 0 ? argv : argv.slice(0, dash);
    const command = dash < 0 ? [] : argv.slice(dash + 1);
    // --cpu-profile takes an optional value, which parseArgs cannot say.
    let cpuProfile: string | undefined;
    const rest = own.filter((a) => {
      const m = /^--cpu-profile(?:=(.*))?$/.exec(a);
      if (m === null) return true;
      cpuProfile = m[1] ?? String(DEFAULT_INTERVAL_US);
      return false;
    });
    if (cpuProfile !== undefined && !validInterval(cpuProfile)) {
      throw new UsageError(`--cpu-profile takes a sampling interval in microseconds, an integer from 10 to 1000000, got ${JSON.stringify(cpuProfile)}`);
    }
    const { values } = parseArgs({
      args: rest,
      options: {
        output: { type: 'string', short: 'o', default: 'hotspan-trace.pftrace' },
        instrument: { type: 'string', short: 'i' },
        'no-report': { type: 'boolean', default: false },
      },
    });
    if (command.length === 0) throw new UsageError('run needs a command after --, for example: hotspan run -- node app.js');
    const out = path.resolve(values.output as string);
    let format;
    try {
      format = outputFormat(out);
    } catch (e) {
      throw new UsageError((e as Error).message.replace(/^hotspan: /, ''));
    }
    const parts = mkdtempSync(path.join(tmpdir(), 'hotspan-run-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOTSPAN_OUT: out,
      [PARTS_DIR_ENV]: parts,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(AUTO)}`.trim(),
    };
    if (values.instrument !== undefined) env.HOTSPAN_INSTRUMENT = values.instrument;
    if (cpuProfile !== undefined) env[CPU_PROFILE_ENV] = cpuProfile;
    return new Promise<number>((resolve, reject) => {
      const child = spawn(command[0], command.slice(1), { stdio: 'inherit', env });
      // A terminal's Ctrl-C reaches the child too (same process group): then
      // wait for it instead of passing a second SIGINT on. Without a terminal
      // (a supervisor's kill) only hotspan run got it: pass it on.
      const onTerminal = process.stdin.isTTY === true || process.stdout.isTTY === true || process.stderr.isTTY === true;
      const forward = (sig: NodeJS.Signals): void => {
        if (sig !== 'SIGINT' || !onTerminal) child.kill(sig);
      };
      const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
      for (const s of signals) process.on(s, forward);
      child.on('error', (e) => {
        for (const s of signals) process.removeListener(s, forward);
        rmSync(parts, { recursive: true, force: true });
        reject(new UsageError(`cannot run ${command[0]}: ${e.message}`));
      });
      child.on('exit', (code, signal) => {
        for (const s of signals) process.removeListener(s, forward);
        try {
          const joined = joinParts(parts, out, format, child.pid);
          for (const why of joined.skipped) process.stderr.write(`hotspan run: left out ${why}\n`);
          if (joined.missing.length > 0) {
            process.stderr.write(
              `hotspan run: ${String(joined.missing.length)} traced process(es) wrote no trace (killed, or still running): pid ${joined.missing.join(', ')}\n`,
            );
          }
          if (joined.unfinished.length > 0) {
            process.stderr.write(
              `hotspan run: ${String(joined.unfinished.length)} traced process(es) ended without writing their trace at exit (killed, or still running): their spans up to their last flush are in, later ones are lost: pid ${joined.unfinished.join(', ')}\n`,
            );
          }
          if (joined.pids.length === 0) rmSync(out, { force: true });
        } finally {
          rmSync(parts, { recursive: true, force: true });
        }
        if (values['no-report'] !== true) {
          if (existsSync(out)) process.stderr.write('\n' + formatReport(buildReport(out, 15, 'total')));
          else process.stderr.write(`hotspan run: no trace was written to ${out}\n`);
        }
        if (signal !== null) {
          process.kill(process.pid, signal);
          return;
        }
        resolve(code ?? 1);
      });
    });
  },
};
