// writeOnExit on every exit path, in child processes, with records still
// queued when the process ends: a joined worker's spans (the js backend ships
// them in batches; the native one commits them at end()) and, on the native
// backend, native threads' spans queued below the wake-up's mark. Each path
// runs with and without writeOnExit: exit code, signal, stdout and stderr must
// match, and protobufjs (upstream schema) must find every span in the file.
// SIGKILL and abort() leave no file; a path that cannot be written gives one
// warning naming it and changes nothing else.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadNativeAddon } from '../lib/binding/native-loader';
import { runChild, type ChildResult, type Step } from './support/child-run';
import { protobufjsSpans, repoRoot } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-exit-paths-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const native = loadNativeAddon().addon !== undefined;
const DIST = path.join(repoRoot, 'dist', 'index.js');
let consumerPath = '';
beforeAll(() => {
  if (!native && process.env.CI !== 'true') return;
  const { buildConsumer } = require('./fixtures/build-consumer.js') as { buildConsumer: () => string };
  consumerPath = buildConsumer();
});

const WORKER_SPANS = 50;
const NATIVE_SPANS = 200;

/**
 * The child: spans a, b, c on the main thread; native threads' spans left
 * queued (native backend); a joined worker that records WORKER_SPANS spans,
 * says so and stays alive; then, on the worker's message, `onRecorded`.
 */
function child(
  backend: string,
  options: Record<string, unknown>,
  onRecorded: string,
  steps: Step[] = [],
  workerAfter = 'setInterval(() => {}, 1000);',
): Promise<ChildResult> {
  const worker = [
    `const { Tracer } = require(${JSON.stringify(DIST)});`,
    "const { workerData, parentPort } = require('node:worker_threads');",
    "const j = Tracer.join(workerData.token, { threadName: 'w' });",
    `for (let i = 0; i < ${String(WORKER_SPANS)}; i++) j.trace('w', () => i);`,
    "parentPort.postMessage('recorded');",
    workerAfter,
  ].join('\n');
  const script = [
    `const { Tracer } = require(${JSON.stringify(DIST)});`,
    "const { Worker } = require('node:worker_threads');",
    `const t = new Tracer(${JSON.stringify({ backend, ...options })});`,
    "t.trace('a', () => t.trace('b', () => 1)); t.trace('c', () => 2);",
    backend === 'native'
      ? `require(${JSON.stringify(consumerPath)}).run(t.nativeApi(), { threads: 2, spansPerThread: ${String(NATIVE_SPANS / 2)}, depth: 1, threadNamePrefix: 'enc' });`
      : '',
    `const w = new Worker(${JSON.stringify(worker)}, { eval: true, workerData: { token: t.share() } });`,
    "w.on('message', () => {",
    onRecorded,
    '});',
  ].join('\n');
  return runChild(script, { steps, cwd: tmp });
}

function counts(file: string): Record<string, number> {
  expect(existsSync(file), `${file} written`).toBe(true);
  const out: Record<string, number> = {};
  for (const s of protobufjsSpans(readFileSync(file))) out[s.name] = (out[s.name] ?? 0) + 1;
  return out;
}

const paths: Array<[string, string, Partial<ChildResult>, Step[]?]> = [
  ['normal exit', 'w.unref();', { code: 0, signal: null }],
  ['process.exit(3)', 'process.exit(3);', { code: 3, signal: null }],
  ['an uncaught exception', "throw new Error('the program failed');", { code: 1, signal: null }],
  ['SIGINT', "console.log('ready');", { code: null, signal: 'SIGINT' }, [{ marker: 'ready', signal: 'SIGINT' }]],
  ['SIGTERM', "console.log('ready');", { code: null, signal: 'SIGTERM' }, [{ marker: 'ready', signal: 'SIGTERM' }]],
];

for (const backend of ['native', 'js'] as const) {
  describe.runIf(backend === 'js' || native || process.env.CI === 'true')(`exit paths (${backend})`, () => {
    for (const [what, onRecorded, expected, steps] of paths) {
      it(`${what}: every queued record in the file; the exit as without writeOnExit`, async () => {
        const file = path.join(tmp, `${backend}-${what.replace(/\W+/g, '-')}.pftrace`);
        const without = await child(backend, {}, onRecorded, steps);
        const withFile = await child(backend, { writeOnExit: file }, onRecorded, steps);
        expect(without).toMatchObject(expected);
        expect(withFile).toEqual(without);
        const want: Record<string, number> = { a: 1, b: 1, c: 1, w: WORKER_SPANS };
        if (backend === 'native') want['consumer.d0'] = NATIVE_SPANS;
        expect(counts(file)).toEqual(want);
      });
    }

    it('SIGKILL and abort() leave no file', async () => {
      const killed = path.join(tmp, `${backend}-killed.pftrace`);
      const k = await child(backend, { writeOnExit: killed }, "console.log('ready');", [{ marker: 'ready', signal: 'SIGKILL' }]);
      expect(k.signal).toBe('SIGKILL');
      expect(existsSync(killed)).toBe(false);
      const aborted = path.join(tmp, `${backend}-aborted.pftrace`);
      const a = await child(backend, { writeOnExit: aborted }, 'process.abort();');
      expect(a.signal).toBe('SIGABRT');
      expect(existsSync(aborted)).toBe(false);
    });

    it('a path that cannot be written: one line naming it on stderr, the exit unchanged', async () => {
      const file = '/sys/hotspan-exit-test.pftrace';
      const without = await child(backend, {}, 'process.exit(4);');
      const withFile = await child(backend, { writeOnExit: file }, 'process.exit(4);');
      expect(withFile.code).toBe(4);
      const line = `hotspan: could not write the trace to ${file} at exit: `;
      expect(withFile.stderr.startsWith(line)).toBe(true);
      expect(withFile.stderr.slice(withFile.stderr.indexOf('\n') + 1)).toBe(without.stderr);
    });
  });
}

describe('exit paths (js): a joined worker that cannot answer', () => {
  it('its unshipped spans are counted in one stderr line naming the file; the exit unchanged', async () => {
    const file = path.join(tmp, 'js-blocked-worker.pftrace');
    // The worker spins: it never ships (its timer cannot run) and never answers.
    const r = await child('js', { writeOnExit: file }, 'process.exit(5);', [], 'for (;;);');
    expect(r.code).toBe(5);
    expect(r.stderr).toBe(`hotspan: ${String(WORKER_SPANS)} spans that ended are not in ${file} (lostSpans: js backend joining)\n`);
    expect(counts(file)).toEqual({ a: 1, b: 1, c: 1 });
  });
});
