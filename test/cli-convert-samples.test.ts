// `hotspan convert` keeps what a trace of CPU samples and of several
// processes holds, both ways: every sample (its time, thread, process and
// stack), every process (its pid, its name, its threads and spans). Checked
// with the real consumers, each against the same consumer's reading of the
// source: a Perfetto file through protoc against the vendored schema, a
// Chrome JSON file through DevTools' trace engine; and across the formats
// through hotspan's own reader (exact ns). The sources are real runs: a
// tracer whose profile sampled a known function inside a span, and
// `hotspan run --cpu-profile` over a program that starts three Node
// children (test/fixtures/processes). Whether V8 took a sample at a given
// moment is the machine's business; what is compared is that the converted
// file holds exactly the samples its source holds.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { Tracer } from '../lib/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { readTrace } from '../lib/cli/read-trace';
import { traceEngineProcessNames } from './support/consumers';
import { devtoolsSamples, perfettoRead, type ReadSample } from './support/trace-samples';
import { cli, cliPath, repoRoot } from './support/trace-files';

const native = loadNativeAddon().addon !== undefined;
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-convert-samples-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Perfetto has no anonymous name: the core writes '' as '(anonymous)' (perfetto_writer.cc), so a JSON read back through it says so. */
const named = (f: string): string => (f === '' ? '(anonymous)' : f);
const normalized = (s: ReadSample): ReadSample => ({ ...s, stack: s.stack.map(named) });
/** Samples by process, thread and time (a converted file may order processes' packets otherwise). */
const ordered = (list: ReadSample[]): ReadSample[] => [...list].sort((x, y) => x.pid - y.pid || x.tid - y.tid || x.ts - y.ts);

function events(file: string): unknown[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: unknown[] }).traceEvents;
}

function convert(input: string, output: string): void {
  const r = cli(['convert', input, output]);
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
}

/** A file's CPU samples through hotspan's reader: ns from its origin, process, stack (function, url, line), in file order. */
function readerSamples(file: string): Array<{ ns: number; pid: number | undefined; stack: string[] }> {
  const out: Array<{ ns: number; pid: number | undefined; stack: string[] }> = [];
  readTrace(file, {
    timeline() {},
    span() {},
    sample(_tl, ns, frame, pid, stack) {
      out.push({ ns, pid, stack: (stack ?? [frame]).map((f) => `${named(f.function)} ${f.url}:${String(f.line)}`) });
    },
  });
  return out;
}

/** DevTools' samples of a Chrome JSON file, every thread's, by pid and tid, with the anonymous named as Perfetto names it. */
async function devtools(file: string): Promise<Array<[number, number, ReadSample[]]>> {
  const out: Array<[number, number, ReadSample[]]> = [];
  for (const [pid, threads] of await devtoolsSamples(events(file))) {
    for (const [tid, list] of threads) out.push([pid, tid, list.map(normalized)]);
  }
  return out.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

const burnSink = new Int32Array(1);
/** 20 ms of arithmetic: the function the profile should find on the CPU. */
function burnConvert(): number {
  const end = performance.now() + 20;
  let x = 0;
  while (performance.now() < end) for (let i = 0; i < 20_000; i++) x = (x * 31 + i) | 0;
  burnSink[0] = x;
  return x;
}

describe.skipIf(!native)('hotspan convert keeps CPU samples', () => {
  it('Perfetto -> Chrome JSON and Chrome JSON -> Perfetto: every sample, its time, stack, thread and process', async () => {
    const t = new Tracer({ backend: 'native', processName: 'convert samples' });
    // Profiled until a sample caught burnConvert (a busy machine may starve V8's sampler for a while), at most 50 rounds.
    for (let round = 0; round < 50; round++) {
      const h = t.profile({ intervalUs: 100 });
      t.trace('busy', burnConvert);
      h.stop();
      const json = path.join(tmp, 'probe.json');
      await t.write(json);
      if (readerSamples(json).some((s) => s.stack.some((f) => f.startsWith('burnConvert ')))) break;
    }
    const json0 = path.join(tmp, 'source.json');
    const pf0 = path.join(tmp, 'source.pftrace');
    await t.write(json0);
    await t.write(pf0);
    t.close();
    const json1 = path.join(tmp, 'from-pf.json');
    const pf1 = path.join(tmp, 'from-json.pftrace');
    convert(pf0, json1);
    convert(json0, pf1);

    // Perfetto -> JSON: DevTools reads the converted file's samples as it reads the tracer's own JSON of them.
    const source = await devtools(json0);
    const total = source.reduce((n, [, , list]) => n + list.length, 0);
    expect(total).toBeGreaterThan(0);
    expect(source.map(([pid]) => pid)).toEqual(source.map(() => process.pid));
    expect(source.some(([, , list]) => list.some((s) => s.stack.includes('burnConvert')))).toBe(true);
    expect(await devtools(json1)).toEqual(source);
    expect(await traceEngineProcessNames(events(json1))).toEqual(await traceEngineProcessNames(events(json0)));

    // JSON -> Perfetto: protoc reads the converted file's samples as it reads the tracer's own Perfetto of them.
    const a = perfettoRead(readFileSync(pf0));
    const b = perfettoRead(readFileSync(pf1));
    expect(a.samples).toHaveLength(total);
    expect(ordered(b.samples)).toEqual(ordered(a.samples));
    expect(b.processes).toEqual(new Map([[process.pid, 'convert samples']]));
    expect(b.processes).toEqual(a.processes);

    // Across the formats, through hotspan's reader: the same samples at the same ns.
    expect(readerSamples(json1)).toEqual(readerSamples(pf0));
    expect(readerSamples(pf1)).toEqual(readerSamples(json0));
  });
});

const PARENT = path.join(__dirname, 'fixtures', 'processes', 'parent.js');
const AUTO = path.join(repoRoot, 'dist', 'auto.js');

/** `hotspan run --cpu-profile` over the parent fixture (three Node children) into `out`. */
function hotspanRun(out: string): void {
  const env: NodeJS.ProcessEnv = { ...process.env, HOTSPAN_AUTO_MODULE: AUTO, HOLD_MS: '50' };
  for (const k of ['HOTSPAN_FLUSH_MS', 'HOTSPAN_OUT', 'HOTSPAN_OUT_PID', 'HOTSPAN_PARTS_DIR', 'HOTSPAN_TRACE_ORIGIN_NS', 'NODE_OPTIONS', 'TRACEPARENT', 'TRACESTATE', 'HOTSPAN_PARENT_LINK', 'HOTSPAN_CPU_PROFILE']) {
    delete env[k];
  }
  const r = spawnSync(process.execPath, [cliPath, 'run', '-o', out, '-i', 'http', '--no-report', '--cpu-profile=100', '--', process.execPath, PARENT], {
    encoding: 'utf8',
    env,
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
}

/** Spans per pid of a Chrome JSON file: its X and b events. */
function jsonSpans(file: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const e of events(file) as Array<{ ph: string; pid: number }>) if (e.ph === 'X' || e.ph === 'b') out.set(e.pid, (out.get(e.pid) ?? 0) + 1);
  return out;
}

const perPid = (samples: ReadSample[]): Map<number, number> => {
  const out = new Map<number, number>();
  for (const s of samples) out.set(s.pid, (out.get(s.pid) ?? 0) + 1);
  return out;
};
const sorted = <K, V>(m: Map<K, V>): Array<[K, V]> => [...m].sort((x, y) => String(x[0]).localeCompare(String(y[0])));

describe.skipIf(!native)('hotspan convert keeps every process', () => {
  it('a hotspan run trace of four processes, Chrome JSON -> Perfetto -> Chrome JSON', async () => {
    const json0 = path.join(tmp, 'run.json');
    hotspanRun(json0);
    const pf1 = path.join(tmp, 'run.from-json.pftrace');
    const json2 = path.join(tmp, 'run.back.json');
    convert(json0, pf1);
    convert(pf1, json2);
    const names = await traceEngineProcessNames(events(json0));
    expect(names.size).toBe(4);
    const pf = perfettoRead(readFileSync(pf1));
    // Every process with its pid and name, its spans, its samples.
    expect(sorted(pf.processes)).toEqual(sorted(names));
    expect(sorted(pf.slices)).toEqual(sorted(jsonSpans(json0)));
    const source = await devtools(json0);
    const counts = new Map<number, number>();
    for (const [pid, , list] of source) counts.set(pid, (counts.get(pid) ?? 0) + list.length);
    expect([...counts.values()].reduce((x, y) => x + y, 0)).toBeGreaterThan(0);
    expect(sorted(perPid(pf.samples))).toEqual(sorted(counts));
    // And back: DevTools reads the same processes, spans and samples.
    expect(await traceEngineProcessNames(events(json2))).toEqual(names);
    expect(sorted(jsonSpans(json2))).toEqual(sorted(jsonSpans(json0)));
    expect(await devtools(json2)).toEqual(source);
  });

  it('a hotspan run trace of four processes, Perfetto -> Chrome JSON -> Perfetto', async () => {
    const pf0 = path.join(tmp, 'run.pftrace');
    hotspanRun(pf0);
    const json1 = path.join(tmp, 'run.from-pf.json');
    const pf2 = path.join(tmp, 'run.back.pftrace');
    convert(pf0, json1);
    convert(json1, pf2);
    const a = perfettoRead(readFileSync(pf0));
    expect(a.processes.size).toBe(4);
    expect(a.samples.length).toBeGreaterThan(0);
    // Every process with its pid and name, its spans and samples, as DevTools reads the JSON.
    expect(sorted(await traceEngineProcessNames(events(json1)))).toEqual(sorted(a.processes));
    expect(sorted(jsonSpans(json1))).toEqual(sorted(a.slices));
    const counts = new Map<number, number>();
    for (const [pid, , list] of await devtools(json1)) counts.set(pid, (counts.get(pid) ?? 0) + list.length);
    expect(sorted(counts)).toEqual(sorted(perPid(a.samples)));
    // And back: protoc reads the same processes, threads (pid, tid, name), spans and samples.
    const b = perfettoRead(readFileSync(pf2));
    expect(sorted(b.processes)).toEqual(sorted(a.processes));
    expect(sorted(b.threads).map(([pid, tids]) => [pid, sorted(tids)])).toEqual(sorted(a.threads).map(([pid, tids]) => [pid, sorted(tids)]));
    expect(sorted(b.slices)).toEqual(sorted(a.slices));
    expect(ordered(b.samples)).toEqual(ordered(a.samples));
  });
});
