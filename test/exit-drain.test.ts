// The trace written at exit holds what other threads recorded: spans from
// native threads (the C ABI consumer fixture, test/fixtures/consumer) and
// from a worker_thread joined with Tracer.join(), for hotspan/auto (under
// `hotspan run`) and for new Tracer({ writeOnExit }). The program exits right
// after the other threads recorded, without an event-loop turn in between
// (process.exit), or naturally; so only the exit path's own drain can have
// committed the native threads' records (they sit in the pending queue until
// a holder drains it).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadNativeAddon } from '../lib/binding/native-loader';
import { cliPath, readSpans, repoRoot } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-exit-drain-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const native = loadNativeAddon().addon !== undefined || process.env.CI === 'true';

// 3000 records: below the pending queue's wake mark (4096), so nothing but
// the exit path drains them.
const THREADS = 3;
const SPANS_PER_THREAD = 1000;
const WORKER_SPANS = 300;

let consumerPath = '';
beforeAll(() => {
  if (!native) return;
  const { buildConsumer } = require(path.join(__dirname, 'fixtures', 'build-consumer.js')) as { buildConsumer: () => string };
  consumerPath = buildConsumer();
}, 180_000);

const indexPath = JSON.stringify(path.join(repoRoot, 'dist', 'index.js'));

/**
 * Program lines: a worker joined to the program's `tracer` records
 * WORKER_SPANS spans, ships them (flush) and says so, then stays alive until
 * the process ends (its teardown, a holder leaving, drains nothing before
 * the exit path does). `onDone` runs when it has said so.
 */
function joinedWorker(onDone: string): string {
  const code = `
const { Tracer } = require(${indexPath});
const { parentPort, workerData } = require('node:worker_threads');
const t = Tracer.join(workerData, { threadName: 'joined worker' });
for (let i = 0; i < ${WORKER_SPANS}; i++) t.trace('worker.span', () => i);
t.flush();
parentPort.postMessage('done');
parentPort.on('message', () => {});
`;
  return `
const worker = new (require('node:worker_threads').Worker)(${JSON.stringify(code)}, { eval: true, workerData: tracer.share() });
worker.on('message', () => {
  // Here, not before: attaching the 'message' listener refs the worker again.
  worker.unref();
  ${onDone}
});
`;
}

/**
 * The program: `tracerExpr` is the tracer to record into. A joined worker
 * records and says so; then native threads record (run() returns once they
 * have exited), and the program prints their tallies and ends by `end`.
 * A background native thread keeps recording until after the trace is
 * written, and how many spans it had ended before the exit began is printed
 * too: all of those must be there.
 */
function program(tracerExpr: string, end: 'exit' | 'natural'): string {
  return `
const { Tracer } = require(${indexPath});
const consumer = require(${JSON.stringify(consumerPath)});
const tracer = ${tracerExpr};
const api = tracer.nativeApi();
consumer.startBackground(api, { threads: 1, depth: 1, threadNamePrefix: 'bg', pauseUs: 50 });
// After the trace is written ('exit' listeners run in order): the background
// thread still records while it is written.
process.on('exit', () => consumer.stopBackground());
${joinedWorker(`
  // Right before the end, with no event-loop turn after it.
  const tallies = consumer.run(api, { threads: ${THREADS}, spansPerThread: ${SPANS_PER_THREAD}, depth: 2, threadNamePrefix: 'nt' });
  const background = consumer.backgroundRecorded();
  process.stdout.write(JSON.stringify({ native: tallies.reduce((n, t) => n + t.recorded, 0), background }) + '\\n');
  ${end === 'exit' ? 'process.exit(0);' : ''}`)}
`;
}

function check(file: string, stdout: string): void {
  const told = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { native: number; background: number };
  expect(told.native).toBe(THREADS * SPANS_PER_THREAD);
  const { spans, summary } = readSpans(file);
  expect(summary.truncated).toBe(false);
  const count = (pred: (s: { timeline: string; name: string }) => boolean): number => spans.filter(pred).length;
  expect(count((s) => s.timeline.includes('nt#') && s.name.startsWith('consumer.d'))).toBe(told.native);
  expect(count((s) => s.timeline === 'joined worker' && s.name === 'worker.span')).toBe(WORKER_SPANS);
  // Ended before the exit began: in the trace (more may have ended since).
  expect(count((s) => s.timeline.includes('bg#'))).toBeGreaterThanOrEqual(told.background);
}

describe.runIf(native)('records of native threads and workers are in the trace written at exit', () => {
  for (const end of ['exit', 'natural'] as const) {
    it(`hotspan/auto under hotspan run (${end === 'exit' ? 'process.exit()' : 'natural end'})`, () => {
      const app = path.join(tmp, `auto-${end}.js`);
      writeFileSync(app, program(`require(${JSON.stringify(path.join(repoRoot, 'dist', 'auto.js'))}).tracer`, end));
      const out = path.join(tmp, `auto-${end}.pftrace`);
      const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '--no-report', '--', process.execPath, app], { encoding: 'utf8', timeout: 120_000 });
      expect(r.status, r.stderr).toBe(0);
      check(out, r.stdout);
    }, 120_000);

    for (const ext of ['json', 'pftrace']) {
      it(`new Tracer({ writeOnExit }) (${end === 'exit' ? 'process.exit()' : 'natural end'}, .${ext})`, () => {
        const out = path.join(tmp, `own-${end}.${ext}`);
        const app = path.join(tmp, `own-${end}-${ext}.js`);
        writeFileSync(app, program(`new Tracer({ backend: 'native', writeOnExit: ${JSON.stringify(out)} })`, end));
        const r = spawnSync(process.execPath, [app], { encoding: 'utf8', timeout: 120_000 });
        expect(r.status, r.stderr).toBe(0);
        check(out, r.stdout);
      }, 120_000);
    }
  }
});

describe('the js backend: a joined worker', () => {
  for (const end of ['exit', 'natural'] as const) {
    it(`its shipped records are merged into the trace written at exit (${end === 'exit' ? 'process.exit()' : 'natural end'})`, () => {
      const out = path.join(tmp, `js-${end}.json`);
      const app = path.join(tmp, `js-${end}.js`);
      // Only the owner's exit path merges the worker's shipped batch (the hub drains at flush).
      writeFileSync(
        app,
        `const { Tracer } = require(${indexPath});
         const tracer = new Tracer({ backend: 'js', writeOnExit: ${JSON.stringify(out)} });
         tracer.trace('main.span', () => 1);
         ${joinedWorker(end === 'exit' ? 'process.exit(0);' : '')}`,
      );
      const r = spawnSync(process.execPath, [app], { encoding: 'utf8', timeout: 120_000 });
      expect(r.status, r.stderr).toBe(0);
      const { spans } = readSpans(out);
      expect(spans.filter((s) => s.timeline === 'joined worker' && s.name === 'worker.span')).toHaveLength(WORKER_SPANS);
      expect(spans.filter((s) => s.name === 'main.span')).toHaveLength(1);
    }, 120_000);
  }
});
