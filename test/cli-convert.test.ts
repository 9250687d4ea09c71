// `hotspan convert`: both directions give the same spans as the source (for
// files of both backends and a trace of known content), the Perfetto it
// writes decodes with protoc and protobufjs under the upstream schema, memory
// stays flat as the input grows (max RSS of the converting process), and the
// progress bar shows on a terminal only.
import { execFileSync, spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Tracer } from '../lib/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { toolBin } from './support/tools';
import { cli, knownTrace, protobufjsSpans, protoPath, readSpans, relative, repoRoot, writeGeneratedPerfetto, type PlainSpan } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-convert-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const native = loadNativeAddon().addon !== undefined;

async function richTrace(backend: 'js' | 'native'): Promise<{ json: string; pftrace: string }> {
  const t = new Tracer({ backend });
  t.group('step', () => {
    t.trace('outer', () => {
      t.trace('inner', () => 1, { n: -3, x: 1.5, ok: false, s: 'q"\\é' });
      try {
        t.trace('fails', () => {
          throw new Error('x');
        });
      } catch {
        // flagged error
      }
    });
  });
  const serial = t.track('disk', { serial: true });
  await Promise.all([
    ...[3, 1, 2].map((ms, k) => t.traceAsync(`io${String(k)}`, new Promise((r) => setTimeout(r, ms)), { track: 'net' })),
    ...[2, 1].map((ms, k) => t.traceAsync(`w${String(k)}`, new Promise((r) => setTimeout(r, ms)), { track: serial })),
  ]);
  t.flush();
  const json = path.join(tmp, `${backend}.json`);
  const pftrace = path.join(tmp, `${backend}.pftrace`);
  await t.write(json);
  await t.write(pftrace);
  t.close();
  return { json, pftrace };
}

function roundTrip(source: { json: string; pftrace: string }, tag: string): void {
  // Perfetto -> JSON: the spans read from the JSON are those of the Perfetto file.
  const toJson = path.join(tmp, `${tag}.from-pf.json`);
  const a = cli(['convert', source.pftrace, toJson]);
  expect(a.status, a.stderr).toBe(0);
  expect(a.stderr).toBe('');
  const fromPf = readSpans(source.pftrace).spans;
  expect(readSpans(toJson).spans).toEqual(fromPf);

  // JSON -> Perfetto: likewise, and the file decodes with the upstream schema.
  const toPf = path.join(tmp, `${tag}.from-json.pftrace`);
  const b = cli(['convert', source.json, toPf]);
  expect(b.status, b.stderr).toBe(0);
  const fromJson = readSpans(source.json).spans;
  expect(readSpans(toPf).spans).toEqual(fromJson);
  // protobufjs reads raw timestamps: hotspan's clock (the origin + 1 s) that the reader puts on MONOTONIC.
  expect(relative(protobufjsSpans(readFileSync(toPf)))).toEqual(relative(fromJson));
  const text = execFileSync(toolBin('protoc'), ['--decode=perfetto.protos.Trace', '-I', path.dirname(protoPath), protoPath], {
    input: readFileSync(toPf),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  expect(text.match(/type: TYPE_SLICE_BEGIN/g)?.length).toBe(fromJson.length);

  // And back: JSON -> Perfetto -> JSON gives the same spans again.
  const back = path.join(tmp, `${tag}.back.json`);
  expect(cli(['convert', toPf, back]).status).toBe(0);
  expect(readSpans(back).spans).toEqual(fromJson);
}

describe('convert round trips', () => {
  it('a trace of known content', async () => {
    const k = await knownTrace(tmp);
    roundTrip(k, 'known');
    // Both formats of one recording hold the same spans (times relative: each format has its own origin).
    const j = readSpans(k.json).spans;
    const p = readSpans(k.pftrace).spans;
    // Except parent_id on the concurrent track: today's Perfetto writers put fetch2 on fetch's lane,
    // inside it, which Perfetto reads as its child (issue 11 changes the lanes).
    const shape = (s: PlainSpan): unknown[] => {
      const { parent_id: parent, ...rest } = s.args;
      return [s.timeline, s.name, s.end - s.start, s.timeline === 'track: net' ? rest : { ...rest, parent_id: parent }];
    };
    expect(p.map(shape)).toEqual(j.map(shape));
  });

  for (const backend of ['js', 'native'] as const) {
    it.runIf(backend === 'js' || native || process.env.CI === 'true')(`files of the ${backend} backend`, async () => {
      roundTrip(await richTrace(backend), backend);
    });
  }

  it('converts a trace without hotspan ids, nesting by time, with its counter samples', () => {
    const file = path.join(tmp, 'foreign.json');
    const events = [
      { name: 'outer', ph: 'B', ts: 1, pid: 7, tid: 3 },
      { name: 'inner', ph: 'X', ts: 2, dur: 3, pid: 7, tid: 3, args: { a: 1 } },
      { name: 'outer', ph: 'E', ts: 10, pid: 7, tid: 3 },
      { name: 'c', ph: 'C', ts: 4, pid: 7, args: { value: 5 } },
    ];
    writeFileSync(file, JSON.stringify({ traceEvents: events }));
    const out = path.join(tmp, 'foreign.pftrace');
    const r = cli(['convert', file, out]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const spans = readSpans(out).spans;
    expect(spans.map((s) => [s.timeline, s.name, s.start, s.end, s.args.a])).toEqual([
      ['thread 3', 'outer', 1000, 10000, undefined],
      ['thread 3', 'inner', 2000, 5000, 1],
    ]);
    expect(spans[1].args.parent_id).toBe(spans[0].args.span_id);
    // The counter sample arrives in both directions (a Perfetto counter track, then "C" again).
    const back = path.join(tmp, 'foreign-back.json');
    expect(cli(['convert', out, back]).status).toBe(0);
    for (const f of [out, back]) {
      const report = cli(['report', f, '--json']);
      expect(report.status, report.stderr).toBe(0);
      const counters = (JSON.parse(report.stdout) as { counters: unknown[] }).counters;
      expect(counters).toEqual([{ name: 'c', samples: 1, min: 5, mean: 5, max: 5 }]);
    }
  });

  it('refuses an output extension it cannot tell, and a missing input', () => {
    const k = path.join(tmp, 'known.json');
    const bad = cli(['convert', k, path.join(tmp, 'out.txt')]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/cannot tell the output format of .*out\.txt/);
    const missing = cli(['convert', path.join(tmp, 'nope.pftrace'), path.join(tmp, 'o.json')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/nope\.pftrace: cannot open/);
  });

  it('a write that fails names the output file (a full device)', async () => {
    const k = await knownTrace(tmp);
    const full = path.join(tmp, 'full.json');
    symlinkSync('/dev/full', full);
    const r = cli(['convert', k.pftrace, full]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`hotspan convert: ${full}: cannot write: ENOSPC: no space left on device, write\n`);
    // Written in place: a temporary file renamed over the link's target would
    // have replaced the device node itself.
    expect(statSync('/dev/full').isCharacterDevice()).toBe(true);
  });

  it('a cut-off input converts up to its last whole record and says where it was cut', async () => {
    const bytes = readFileSync((await knownTrace(tmp)).pftrace);
    const cut = path.join(tmp, 'cut.pftrace');
    writeFileSync(cut, bytes.subarray(0, bytes.length - 3));
    const out = path.join(tmp, 'cut-out.json');
    const r = cli(['convert', cut, out]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(`^hotspan convert: ${cut.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is cut off: the file ends at byte ${String(bytes.length - 3)} inside a packet; read up to its last whole packet, which ends at byte \\d+, and converted that\n$`),
    );
    expect(relative(readSpans(out).spans)).toEqual(relative(readSpans(cut).spans));
  });
});

/**
 * Writes a Perfetto file of n root spans with two children each (ids as
 * hotspan writes them), with clock readings taken at the origin, which is
 * all a Chrome JSON file can say: so it converts to JSON and back exactly.
 */
function generate(file: string, roots: number): void {
  writeGeneratedPerfetto(file, {
    names: ['child', 'child2', 'root'],
    threads: ['main'],
    trees: roots,
    originNs: 5_000_000_000n,
    clocks: { monotonicNs: 5_000_000_000n, realtimeNs: 1_800_000_000_000_000_000n, boottimeNs: -1n },
    records: (_, i) => {
      const t = 1000 * i;
      const root = 3 * i + 1;
      return [
        { name: 0, start: t + 10, end: t + 100, local: root + 1, parent: root, depth: 1, attrs: `{"k":${String(i)}}` },
        { name: 1, start: t + 200, end: t + 300, local: root + 2, parent: root, depth: 1 },
        { name: 2, start: t, end: t + 1000, local: root, parent: 0, depth: 0 },
      ];
    },
  });
}

/** Max RSS (MiB) of a process that runs `hotspan convert in out` with its JS heap capped at `heapMiB`. */
function withoutPreload(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.LD_PRELOAD;
  return env;
}

function convertRss(input: string, output: string, heapMiB: number): number {
  const main = path.join(repoRoot, 'dist', 'cli', 'main.js');
  const r = spawnSync(
    process.execPath,
    [`--max-old-space-size=${String(heapMiB)}`, '-e', `require(${JSON.stringify(main)}).main(process.argv.slice(1)).then((c) => { if (c !== 0) process.exit(c); console.log(process.resourceUsage().maxRSS); })`, 'convert', input, output],
    // The converter is JS only: a sanitizer run's preloaded runtime
    // (native/test/sanitizers.sh) would measure its own allocator, not it.
    { encoding: 'utf8', env: withoutPreload() },
  );
  expect(r.status, `${input}: ${r.stderr.slice(0, 3000)}`).toBe(0);
  return Number(r.stdout.trim()) / 1024;
}

/** Heap caps (MiB) below the big inputs' sizes (about 30 MiB Perfetto, 78 MiB JSON), with room for GC under load. */
const PF_HEAP = 24;
const JSON_HEAP = 64;

describe('convert in bounded memory', () => {
  it('a JS heap smaller than the input converts it, in both directions', () => {
    const sizes: number[] = [];
    for (const roots of [25_000, 200_000]) {
      const pf = path.join(tmp, `gen${String(roots)}.pftrace`);
      const json = path.join(tmp, `gen${String(roots)}.json`);
      const back = path.join(tmp, `gen${String(roots)}.back.pftrace`);
      generate(pf, roots);
      convertRss(pf, json, PF_HEAP);
      convertRss(json, back, JSON_HEAP);
      sizes.push(statSync(pf).size, statSync(json).size);
      // The JSON -> Perfetto direction rebuilds the generated file exactly.
      expect(readFileSync(back).equals(readFileSync(pf))).toBe(true);
      rmSync(json);
      rmSync(back);
    }
    const mib = (b: number): number => b / 1048576;
    // The big inputs are larger than the converting process's JS heap
    // (--max-old-space-size), which a converter that held its input would
    // exceed. Max RSS is not compared: it moved with the machine's load and
    // the Node version (Node 24 under load grew 33 MiB for a 27 MiB input).
    expect(mib(sizes[2])).toBeGreaterThan(PF_HEAP);
    expect(mib(sizes[3])).toBeGreaterThan(JSON_HEAP);
  }, 300_000);
});

describe('the progress bar', () => {
  const main = path.join(repoRoot, 'dist', 'cli', 'main.js');
  it('is not drawn when stderr is piped', () => {
    const k = path.join(tmp, 'gen25000.pftrace');
    const r = spawnSync(process.execPath, [main, 'convert', k, path.join(tmp, 'p.json')], {
      encoding: 'utf8',
      env: { ...process.env, HOTSPAN_PROGRESS_DELAY_MS: '0' },
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
  });

  it('is drawn on a terminal once the conversion has run past the delay', () => {
    const k = path.join(tmp, 'gen25000.pftrace');
    // script(1) gives the command a pseudo-terminal.
    const cmd = `HOTSPAN_PROGRESS_DELAY_MS=0 ${JSON.stringify(process.execPath)} ${JSON.stringify(main)} convert ${JSON.stringify(k)} ${JSON.stringify(path.join(tmp, 't.json'))}`;
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/converting .*gen25000\.pftrace \[=*\s*\]\s+\d+% [\d.]+\/[\d.]+ MiB/);
    expect(r.stdout).toContain('\x1b[K');
  });
});

describe('the output is replaced only when the conversion succeeds', () => {
  const dir = path.join(tmp, 'replace');
  let source = '';
  beforeAll(async () => {
    mkdirSync(dir);
    const t = new Tracer({ backend: 'js' });
    t.trace('a', () => t.trace('b', () => 1));
    source = path.join(dir, 'source.pftrace');
    await t.write(source);
    t.close();
  });
  /** The directory's files other than these (a temporary file left behind). */
  const strays = (...known: string[]): string[] => readdirSync(dir).filter((f) => !known.includes(f));

  it('refuses the input as the output, by path, symlink or hard link, and leaves it whole', () => {
    const before = readFileSync(source);
    symlinkSync(source, path.join(dir, 'link.pftrace'));
    linkSync(source, path.join(dir, 'hard.pftrace'));
    for (const out of [source, path.join(dir, '.', 'source.pftrace'), path.join(dir, 'link.pftrace'), path.join(dir, 'hard.pftrace')]) {
      const r = cli(['convert', source, out]);
      expect(r.status, out).toBe(1);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toContain('is the input');
      expect(readFileSync(source).equals(before)).toBe(true);
    }
    expect(strays('source.pftrace', 'link.pftrace', 'hard.pftrace')).toEqual([]);
    rmSync(path.join(dir, 'link.pftrace'));
    rmSync(path.join(dir, 'hard.pftrace'));
  });

  it('a missing or unreadable input leaves an existing output as it was', () => {
    const out = path.join(dir, 'keep.json');
    writeFileSync(out, '{"traceEvents":[]}');
    const missing = cli(['convert', path.join(dir, 'missing.pftrace'), out]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('missing.pftrace');
    const garbage = path.join(dir, 'garbage.pftrace');
    writeFileSync(garbage, Buffer.from('\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7fnot a trace'));
    const bad = cli(['convert', garbage, out]);
    expect(bad.status, bad.stderr).toBe(1);
    expect(readFileSync(out, 'utf8')).toBe('{"traceEvents":[]}');
    expect(strays('source.pftrace', 'keep.json', 'garbage.pftrace')).toEqual([]);
    rmSync(out);
    rmSync(garbage);
  });

  it('a successful conversion replaces the output (through a symlink: its target) and leaves no other file', () => {
    const real = path.join(dir, 'real.json');
    writeFileSync(real, 'old');
    symlinkSync(real, path.join(dir, 'out.json'));
    const r = cli(['convert', source, path.join(dir, 'out.json')]);
    expect(r.status, r.stderr).toBe(0);
    expect(readSpans(real).spans.map((s) => s.name).sort()).toEqual(['a', 'b']);
    expect(readSpans(path.join(dir, 'out.json')).spans).toEqual(readSpans(real).spans);
    expect(strays('source.pftrace', 'real.json', 'out.json')).toEqual([]);
  });
});
