// The fault suite (issue 16): each fault runs in a child process
// (test/fixtures/faults/), and each test states what is kept and what is
// counted as lost; nothing may be lost without being counted. README
// "Guarantees" says the same, per backend.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import { loadNativeAddon } from '../lib/binding/native-loader';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const fixtures = path.join(__dirname, 'fixtures', 'faults');
let consumerPath = '';
const dirs: string[] = [];

beforeAll(() => {
  if (skipNative) return;
  const { buildConsumer } = require('./fixtures/build-consumer.js') as { buildConsumer: () => string };
  consumerPath = buildConsumer();
});
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  dir: string;
  result: Record<string, unknown>;
}

/** Runs one fault child; its last stdout line is its JSON report. */
function child(script: string, args: string[], env: Record<string, string> = {}): Run {
  const dir = mkdtempSync(path.join(tmpdir(), 'hotspan-fault-'));
  dirs.push(dir);
  const r = spawnSync(process.execPath, [path.join(fixtures, script), ...args, dir], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, HOTSPAN_CONSUMER: consumerPath, ...env },
  });
  const line = r.stdout.trim().split('\n').at(-1) ?? '';
  let result: Record<string, unknown> = {};
  if (line.startsWith('{')) result = JSON.parse(line) as Record<string, unknown>;
  // Children that exit or die mid-write print no report; the caller checks files instead.
  if (r.status !== 0 && r.signal === null) throw new Error(`fault child ${args.join(' ')} failed: ${r.stderr}`);
  return { status: r.status, signal: r.signal, dir, result };
}

const both = ['native', 'js'] as const;

describe.each(both)('faults, %s backend', (backend) => {
  const skip = backend === 'native' && skipNative;

  it.skipIf(skip)('worker.terminate() mid-span: keeps what the worker shipped, counts the rest lost', () => {
    const { result: r } = child('child.js', ['terminate', backend]);
    // Shipped by the worker's flush() before the loop: kept.
    expect(r.pre).toBe(100);
    const ended = r.loopEnded as number;
    // terminate() may stop the worker between an end() and its count: at most one more.
    const accounted = (r.loopKept as number) + (r.lost as number);
    expect(accounted - ended).toBeGreaterThanOrEqual(0);
    expect(accounted - ended).toBeLessThanOrEqual(1);
    if (backend === 'native') {
      // Native: every ended span is kept; the open one is ended, flagged abandoned.
      expect(r.lost).toBe(0);
      expect(r.held).toEqual([true]);
    } else {
      // js: the open span is never ended, so it is neither kept nor counted (it never ended).
      expect(r.held).toEqual([]);
    }
  });

  it.skipIf(skip)('process.exit() with a write() in flight: the file is complete', () => {
    const run = child('child.js', ['exit-in-write', backend]);
    expect(run.status).toBe(0);
    const doc = JSON.parse(readFileSync(path.join(run.dir, 'exit.json'), 'utf8')) as { traceEvents: Array<{ name: string }> };
    expect(doc.traceEvents.filter((e) => e.name === 'span').length).toBe(300_000);
  });

  it.skipIf(skip)('a signal that kills the process mid-write: the file is absent or a cut-short prefix, never claimed whole', () => {
    const run = child('child.js', ['signal-in-write', backend]);
    expect(run.signal).toBe('SIGTERM');
    const file = path.join(run.dir, 'signal.json');
    // Lost: the document (the process is gone; nothing can count it).
    if (existsSync(file)) {
      const text = readFileSync(file, 'utf8');
      if (text.length > 0) expect(text.startsWith('{')).toBe(true);
    }
  });

  it.skipIf(skip)('close() while write() runs: the write holds what was committed when called', () => {
    const { result: r } = child('child.js', ['close-vs-write', backend]);
    expect(r).toEqual({ error: null, inA: 200_000, inB: 200_000, kept: 200_000 });
  });

  it.skipIf(skip)('a full disk (/dev/full): write() rejects with ENOSPC, the trace stays whole', () => {
    const { result: r } = child('child.js', ['dev-full', backend]);
    expect((r.error as { code: string }).code).toBe('ENOSPC');
    expect(r.kept).toBe(50_000);
    expect(r.inGood).toBe(50_000);
  });

  it.skipIf(skip)('the directory removed mid-write: write() settles (ENOENT or done), the trace stays whole', () => {
    const { result: r } = child('child.js', ['dir-removed', backend]);
    if (r.error !== null) expect((r.error as { code: string }).code).toBe('ENOENT');
    expect(r.kept).toBe(300_000);
    expect(r.inGood).toBe(300_000);
  });
});

describe.skipIf(skipNative)('faults, native threads', () => {
  it('close() racing native threads: every OK end() is in the closed trace, nothing OK after', () => {
    const { result: r } = child('child.js', ['close-vs-native-threads', 'native']);
    const threads = r.threads as Array<{ okEnds: number; kept: number; okAfterClosed: number; errors: number }>;
    expect(threads.length).toBe(3);
    for (const t of threads) {
      expect(t.kept).toBe(t.okEnds);
      expect(t.okAfterClosed).toBe(0);
      expect(t.errors).toBe(0);
    }
  });

  // The issue asks for 30 s; the suite blocks 3 s by default (the same check,
  // wall time bounded), HOTSPAN_FAULT_BLOCK_MS=30000 runs the full length.
  it('the event loop blocked while native threads record: all kept, memory only the records', () => {
    const { result: r } = child('child.js', ['blocked-loop', 'native']);
    expect(r.errors).toBe(0);
    expect(r.recordedDuringBlock as number).toBeGreaterThan(1000);
    expect(r.kept).toBe(r.okEnds);
    // 28-byte records plus chunk bookkeeping; an unbounded queue would show.
    expect(r.rssBytesPerSpan as number).toBeLessThan(1000);
  });
});

describe('faults, js backend joining', () => {
  it('joined workers outrunning the owner: close() returns, timers run, every span kept or counted lost', () => {
    const run = child('js-flood.js', ['1000']);
    const r = run.result as {
      closeMs: number;
      maxLag: number;
      ok: number;
      kept: number;
      lost: number;
      overwritten: number;
      dropped: number;
      errors: string[];
    };
    // Before the fix close() never returned (the child timed out) and timers ran 2+ s late.
    expect(r.closeMs).toBeLessThan(5000);
    expect(r.maxLag).toBeLessThan(1000);
    expect(r.kept + r.lost + r.overwritten + r.dropped).toBe(r.ok);
    expect(r.errors).toEqual(['hotspan: tracer is closed']);
  });
});
