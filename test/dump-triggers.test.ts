// dumpOnSignal and dumpOnCrash in child processes. A crash runs twice, with
// and without dumpOnCrash, and the exit code, signal and stderr must be the
// same byte for byte; the dump is read by protobufjs with the upstream
// schema. Signals are sent only after the child says it is ready, and the
// next step waits for the child's own line: nothing waits on a clock.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { loadNativeAddon } from '../lib/binding/native-loader';
import { runChild, type ChildResult, type Step } from './support/child-run';
import { protobufjsSpans, repoRoot } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-triggers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const native = loadNativeAddon().addon !== undefined;
const DIST = JSON.stringify(path.join(repoRoot, 'dist', 'index.js'));

/**
 * Runs a child whose line 2 constructs `t` with `options` (so the lines
 * after it are numbered the same with and without an option) and which has
 * recorded spans a, b (inside a) and c before `body`.
 */
function child(options: Record<string, unknown>, body: string, steps: Step[] = [], args: string[] = []): Promise<ChildResult> {
  const script = [
    `const { Tracer } = require(${DIST});`,
    `const t = new Tracer(${JSON.stringify(options)});`,
    "t.trace('a', () => t.trace('b', () => 1)); t.trace('c', () => 2);",
    body,
  ].join('\n');
  return runChild(script, { steps, args, cwd: tmp });
}

function names(file: string): string[] {
  expect(existsSync(file), `${file} written`).toBe(true);
  return protobufjsSpans(readFileSync(file))
    .map((s) => s.name)
    .sort();
}

const KEEP_ALIVE = "setInterval(() => {}, 1000); console.log('ready');";

const crashes: Array<[string, string, string[]?]> = [
  ['a synchronous throw', "throw new Error('the program failed');"],
  ['a throw in a timer', "setTimeout(() => { throw new Error('the program failed'); }, 0);"],
  ['an unhandled rejection', "Promise.reject(new Error('the program failed'));"],
  ['an unhandled rejection of a non-Error', 'Promise.reject(42);'],
  ['a throw under --unhandled-rejections=strict', "Promise.reject(new Error('strict'));", ['--unhandled-rejections=strict']],
];

for (const backend of ['native', 'js'] as const) {
  describe.runIf(backend === 'js' || native || process.env.CI === 'true')(`dumpOnCrash (${backend})`, () => {
    for (const [what, body, args] of crashes) {
      it(`${what}: dumped first; exit code and stderr as without the option`, async () => {
        const file = path.join(tmp, `${backend}-crash-${what.replace(/\W+/g, '-')}.pftrace`);
        const without = await child({ backend }, body, [], args);
        const withDump = await child({ backend, dumpOnCrash: file }, body, [], args);
        expect(without.code).toBe(1);
        expect(withDump.code).toBe(without.code);
        expect(withDump.signal).toBe(without.signal);
        expect(withDump.stderr).toBe(without.stderr);
        expect(withDump.stdout).toBe(without.stdout);
        expect(names(file)).toEqual(['a', 'b', 'c']);
      });
    }

    it("the program's uncaughtException listener runs after the dump and keeps the process going", async () => {
      const file = path.join(tmp, `${backend}-crash-handled.pftrace`);
      const body = [
        "process.on('uncaughtException', (e) => { t.trace('handler', () => 0); console.log('handled', e.message); });",
        "setTimeout(() => { throw new Error('caught'); }, 0);",
        "setTimeout(() => console.log('still running'), 20);",
      ].join('\n');
      const without = await child({ backend }, body);
      const withDump = await child({ backend, dumpOnCrash: file }, body);
      expect(withDump).toEqual(without);
      expect(withDump.code).toBe(0);
      expect(withDump.stdout).toBe('handled caught\nstill running\n');
      // Written before the program's handler recorded its span.
      expect(names(file)).toEqual(['a', 'b', 'c']);
    });

    it("a rejection the program handles with its own 'unhandledRejection' listener is not a crash: no dump", async () => {
      const file = path.join(tmp, `${backend}-crash-own-rejection.pftrace`);
      const body = "process.on('unhandledRejection', (r) => console.log('mine', r)); Promise.reject(7);";
      const withDump = await child({ backend, dumpOnCrash: file }, body);
      expect(withDump).toEqual(await child({ backend }, body));
      expect(withDump.stdout).toBe('mine 7\n');
      expect(existsSync(file)).toBe(false);
    });

    it('a crash dump that cannot be written: one line naming the path, the rest unchanged', async () => {
      const file = '/sys/hotspan-crash-test.pftrace';
      const body = "throw new Error('the program failed');";
      const without = await child({ backend }, body);
      const withDump = await child({ backend, dumpOnCrash: file }, body);
      expect(withDump.code).toBe(without.code);
      const line = `hotspan: could not write the crash dump to ${file}: `;
      expect(withDump.stderr.startsWith(line)).toBe(true);
      expect(withDump.stderr.slice(withDump.stderr.indexOf('\n') + 1)).toBe(without.stderr);
    });
  });

  describe.runIf(backend === 'js' || native || process.env.CI === 'true')(`dumpOnSignal (${backend})`, () => {
    it('each signal writes a numbered dump frozen before the program\'s own listener; the process goes on', async () => {
      const template = path.join(tmp, `${backend}-sig.pftrace`);
      const body = `process.on('SIGUSR2', () => t.trace('tick', () => 0)); ${KEEP_ALIVE}`;
      const first = path.join(tmp, `${backend}-sig-`);
      const r = await child({ backend, dumpOnSignal: { signal: 'SIGUSR2', path: template } }, body, [
        { marker: 'ready', signal: 'SIGUSR2' },
        { marker: `.pftrace\n`, signal: 'SIGUSR2' },
        { marker: `-2.pftrace\n`, signal: 'SIGTERM' },
      ]);
      expect(r.signal).toBe('SIGTERM');
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(new RegExp(`^hotspan: SIGUSR2: dumped 3 spans, \\d+ bytes, to ${first}(\\d)\\.pftrace$`));
      const n1 = Number(/-(\d+)\.pftrace$/.exec(lines[0])?.[1]);
      expect(lines[1]).toMatch(/^hotspan: SIGUSR2: dumped 4 spans, \d+ bytes, to /);
      expect(lines[1].endsWith(`${first}${String(n1 + 1)}.pftrace`)).toBe(true);
      expect(names(`${first}${String(n1)}.pftrace`)).toEqual(['a', 'b', 'c']);
      expect(names(`${first}${String(n1 + 1)}.pftrace`)).toEqual(['a', 'b', 'c', 'tick']);
    });

    it('the default path: hotspan-<pid>-dump-<n>.pftrace in the working directory', async () => {
      const r = await child({ backend, dumpOnSignal: 'SIGUSR2' }, `console.log('pid', process.pid); ${KEEP_ALIVE}`, [
        { marker: 'ready', signal: 'SIGUSR2' },
        { marker: '.pftrace\n', signal: 'SIGTERM' },
      ]);
      const pid = /pid (\d+)/.exec(r.stdout)?.[1] ?? '?';
      expect(r.stderr).toMatch(new RegExp(`to hotspan-${pid}-dump-1\\.pftrace\\n$`));
      expect(names(path.join(tmp, `hotspan-${pid}-dump-1.pftrace`))).toEqual(['a', 'b', 'c']);
    });

    it('a dump that cannot be written: a warning naming the path; the process goes on', async () => {
      const r = await child(
        { backend, dumpOnSignal: { signal: 'SIGUSR2', path: '/sys/hotspan-signal-test.pftrace' } },
        KEEP_ALIVE,
        [
          { marker: 'ready', signal: 'SIGUSR2' },
          { marker: 'HOTSPAN_DUMP_FAILED', signal: 'SIGTERM' },
        ],
      );
      expect(r.signal).toBe('SIGTERM');
      expect(r.stderr).toMatch(/HotspanWarning: hotspan: SIGUSR2: no dump written: hotspan: cannot write "\/sys\/hotspan-signal-test-\d+\.pftrace"/);
    });
  });
}

describe('dump triggers on the noop backend', () => {
  it('a signal: a warning that there is nothing to dump; the process goes on', async () => {
    const r = await child({ backend: 'noop', dumpOnSignal: 'SIGUSR2' }, KEEP_ALIVE, [
      { marker: 'ready', signal: 'SIGUSR2' },
      { marker: 'HOTSPAN_DUMP_FAILED', signal: 'SIGTERM' },
    ]);
    expect(r.signal).toBe('SIGTERM');
    expect(r.stderr).toMatch(/no dump written: .*nothing to write, this tracer runs the noop backend/);
  });

  it('a crash: nothing written, nothing printed beyond the program\'s own', async () => {
    const file = path.join(tmp, 'noop-crash.pftrace');
    const body = "throw new Error('the program failed');";
    const withDump = await child({ backend: 'noop', dumpOnCrash: file }, body);
    expect(withDump).toEqual(await child({ backend: 'noop' }, body));
    expect(existsSync(file)).toBe(false);
  });
});
