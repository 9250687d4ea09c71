// `hotspan report` and the trace readers: exact figures on a trace of known
// content in both formats; the Perfetto reader against protobufjs with the
// upstream schema and against snapshot(), for files of both backends; the
// schema features hotspan may write (clock snapshots, defaults, incremental
// clocks, interning resets); cut-off files and the errors for non-traces.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Tracer } from '../lib/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { buildReport } from '../lib/cli/report';
import { readTrace } from '../lib/cli/read-trace';
import { WasmDocumentWriter } from '../lib/binding/wasm-core';
import {
  cli,
  cliOk,
  knownTrace,
  perfettoType,
  protobufjsSpans,
  readSpans,
  relative,
  sortSpans,
  type PlainSpan,
} from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-report-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const MS = 1e6;

let known: { json: string; pftrace: string };
beforeAll(async () => {
  known = await knownTrace(tmp);
});

/** Recording counts as hotspan writes them (docs: coord.md / the stream writer); k varies them. */
function countsOf(k: number): Record<string, number> {
  return { produced: 15 + 2 * k, kept: 10, released: 1 + k, overwritten: 2 + k, dropped: 3 + k, ...(k > 0 ? { stream_written: 4 * k + 4, stream_missed: k } : {}) };
}

/** Offsets after each packet of a Perfetto trace (tag 0x0a, varint length, body). */
function packetEnds(bytes: Uint8Array): number[] {
  const ends: number[] = [];
  for (let p = 0; p < bytes.length; ) {
    let len = 0;
    let shift = 1;
    let q = p + 1;
    for (;;) {
      const b = bytes[q++];
      len += (b & 0x7f) * shift;
      shift *= 128;
      if (b < 0x80) break;
    }
    p = q + len;
    ends.push(p);
  }
  expect(ends[ends.length - 1]).toBe(bytes.length);
  return ends;
}

/**
 * A streamed file: the core's incremental writer fed three batches, each with
 * a name new to it (interned in a packet of its own, SEQ_NEEDS_INCREMENTAL_STATE)
 * and a root span "step k" with a child "inner k" on thread "main". When
 * `counts` > 0 the file ends with the "hotspan.counts" track descriptor a
 * finished stream file carries (countsOf(counts) as its description),
 * encoded with the upstream schema.
 */
function streamedTrace(file: string, counts: number): string {
  const w = new WasmDocumentWriter('perfetto', { monotonicNs: 5_000_000n, realtimeNs: 1_800_000_000_000_000_000n }, 0n);
  const parts: Uint8Array[] = [];
  const timelines = [{ id: 1, name: 'main', kind: 'js' as const, exited: false }];
  for (let k = 0; k < 3; k++) {
    const at = 1 + 10 * k; // ms
    const times = new Float64Array([at + 1, at + 3, at, at + 5]);
    // [name, timeline, local, parent timeline, parent local, depth << 16]; end order: the child first.
    const fields = new Uint32Array([2 * k + 1, 1, 2 * k + 2, 1, 2 * k + 1, 1 << 16, 2 * k, 1, 2 * k + 1, 0, 0, 0]);
    const names = [`step ${String(k)}`, `inner ${String(k)}`];
    parts.push(Buffer.from(w.append({ names, timelines, count: 2, times, fields, attrs: [] }, new Set())));
  }
  parts.push(Buffer.from(w.finish()));
  if (counts > 0) {
    const t = perfettoType();
    const trackDescriptor = {
      uuid: (0xfffffffd00000000n).toString(),
      parentUuid: (0xffffffff00000000n).toString(), // the process track
      name: 'hotspan.counts',
      description: JSON.stringify(countsOf(counts)),
    };
    parts.push(t.encode(t.fromObject({ packet: [{ trustedPacketSequenceId: 1, trackDescriptor }] })).finish());
  }
  writeFileSync(file, Buffer.concat(parts));
  return file;
}

describe('report on a trace of known content', () => {
  for (const format of ['json', 'pftrace'] as const) {
    it(`gives the exact figures (${format})`, () => {
      const r = buildReport(known[format], 3, 'total');
      expect(r.format).toBe(format === 'json' ? 'json' : 'perfetto');
      expect(r.truncated).toBe(false);
      expect(r.unclosed).toBe(0);
      expect(r.spans).toBe(7);
      expect(r.duration).toBe(32 * MS);
      expect(r.names).toEqual([
        { name: 'req', count: 2, total: 22 * MS, self: 10 * MS, mean: 11 * MS, p50: 10 * MS, p90: 12 * MS, p99: 12 * MS, max: 12 * MS },
        { name: 'db', count: 3, total: 12 * MS, self: 12 * MS, mean: 4 * MS, p50: 3 * MS, p90: 8 * MS, p99: 8 * MS, max: 8 * MS },
        { name: 'fetch', count: 1, total: 11 * MS, self: 11 * MS, mean: 11 * MS, p50: 11 * MS, p90: 11 * MS, p99: 11 * MS, max: 11 * MS },
      ]);
      expect(r.timelines.map((t) => [t.name, t.spans, t.busy])).toEqual([
        ['main', 5, 22 * MS],
        ['track: net', 2, 11 * MS],
      ]);
      expect(r.slowest.map((s) => [s.name, s.timeline, s.start, s.dur])).toEqual([
        ['req', 'main', 20 * MS, 12 * MS],
        ['fetch', 'track: net', 2 * MS, 11 * MS],
        ['req', 'main', 0, 10 * MS],
      ]);
      expect(r.slowest[0].args.route).toBe('/a');
    });
  }

  it('--sort, --top and the text table', () => {
    const out = cli(['report', known.pftrace, '--sort', 'count', '--top', '2']);
    expect(out.status).toBe(0);
    const lines = out.stdout.split('\n');
    const head = lines.findIndex((l) => l.startsWith('name '));
    expect(lines[head].split(/\s+/)).toEqual(['name', 'count', 'total', 'self', 'mean', 'p50', 'p90', 'p99', 'max']);
    expect(lines[head + 2].split(/\s+/)).toEqual(['db', '3', '12.000', '12.000', '4.000', '3.000', '8.000', '8.000', '8.000']);
    expect(lines[head + 3].split(/\s+/)).toEqual(['req', '2', '22.000', '10.000', '11.000', '10.000', '12.000', '12.000', '12.000']);
    expect(lines[head + 4]).toBe('');
    expect(out.stdout).toMatch(/main\s+thread\s+5\s+22\.000\s+68\.8/);
    expect(out.stdout).toMatch(/req\s+main\s+20\.000\s+12\.000\s+\{"route":"\/a"\}/);
  });

  it('--json prints the report in ns', () => {
    const out = cli(['report', known.json, '--json', '--sort', 'self']);
    expect(out.status).toBe(0);
    const r = JSON.parse(out.stdout) as { names: Array<{ name: string; self: number }> };
    expect(r.names.map((n) => [n.name, n.self])).toEqual([
      ['db', 12 * MS],
      ['fetch', 11 * MS],
      ['req', 10 * MS],
      ['fetch2', 4 * MS],
    ]);
  });

  it('usage errors exit 2 and name the problem; --help exits 0', () => {
    const bad = cli(['report', known.json, '--sort', 'nope']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--sort must be one of');
    expect(cli(['report']).status).toBe(2);
    expect(cli(['frobnicate']).status).toBe(2);
    for (const cmd of ['report', 'convert', 'view', 'run']) {
      const h = cli([cmd, '--help']);
      expect(h.status, cmd).toBe(0);
      expect(h.stdout, cmd).toContain(`Usage: hotspan ${cmd}`);
    }
    expect(cli(['--help']).status).toBe(0);
  });
});

const native = loadNativeAddon().addon !== undefined;

describe('the Perfetto reader against protobufjs and snapshot()', () => {
  for (const backend of ['js', 'native'] as const) {
    it.runIf(backend === 'js' || native || process.env.CI === 'true')(`reads what the ${backend} backend writes`, async () => {
      const t = new Tracer({ backend });
      const g = t.group('step', () => {
        t.trace('outer', () => {
          t.trace('inner', () => 1, { n: -3, big: 2 ** 40, x: 1.5, ok: true, s: 'é"\\' });
          try {
            t.trace('fails', () => {
              throw new Error('boom');
            });
          } catch {
            // flagged error
          }
        });
        return 0;
      });
      expect(g).toBe(0);
      const waits = [3, 1, 2].map((ms, k) => t.traceAsync(`io${String(k)}`, new Promise((r) => setTimeout(r, ms)), { track: 'net' }));
      await Promise.all(waits);
      t.flush();
      const file = path.join(tmp, `${backend}.pftrace`);
      await t.write(file);
      const snap = t.snapshot();
      const names = new Map(t.timelines().map((tl) => [tl.id, tl.name]));
      t.close();

      const mine = readSpans(file);
      expect(mine.summary).toMatchObject({ format: 'perfetto', truncated: false, unclosed: 0 });
      const theirs = protobufjsSpans(readFileSync(file));
      expect(theirs).toHaveLength(snap.length);
      // protobufjs gives the raw timestamps (the writer's sequence clock); the
      // reader converts them to the trace clock through the ClockSnapshot, an
      // offset: compared relative to the first span.
      expect(relative(mine.spans)).toEqual(relative(theirs));

      // And against the recorded records themselves (times relative: the file's clock origin is the writer's).
      const truth = sortSpans(
        snap.map((r) => ({
          timeline: names.get(r.timeline) ?? '?',
          name: r.name,
          start: Math.round(r.start * 1e6),
          end: Math.round(r.end * 1e6),
          args: {},
        })),
      );
      const strip = (s: PlainSpan[]): PlainSpan[] => relative(s).map((x) => ({ ...x, args: {} }));
      expect(strip(mine.spans)).toEqual(strip(truth));
      const inner = mine.spans.find((s) => s.name === 'inner');
      expect(inner?.args).toMatchObject({ n: -3, big: 2 ** 40, x: 1.5, ok: true, s: 'é"\\' });
      expect(mine.spans.find((s) => s.name === 'fails')?.args.error).toBe(true);
    });
  }
});

describe('the Perfetto reader follows the schema', () => {
  /** Encodes packets with protobufjs from plain objects (the upstream schema's field names). */
  function encode(packets: object[]): Uint8Array {
    const t = perfettoType();
    return t.encode(t.fromObject({ packet: packets })).finish();
  }

  it('converts clocks through ClockSnapshot, packet defaults and incremental clocks', () => {
    // BOOTTIME (6) is the reference (the first clock used). MONOTONIC (3) reads 1000 ns
    // behind it; sequence clock 64 counts µs incrementally from 5 µs on MONOTONIC...
    const bytes = encode([
      {
        trustedPacketSequenceId: 1,
        clockSnapshot: { clocks: [{ clockId: 6, timestamp: 10_000 }, { clockId: 3, timestamp: 9_000 }] },
      },
      { trustedPacketSequenceId: 1, trackDescriptor: { uuid: 7, thread: { pid: 1, tid: 2, threadName: 'T' } } },
      {
        trustedPacketSequenceId: 1,
        timestamp: 10_100, // BOOTTIME, no clock id: the default
        sequenceFlags: 1,
        internedData: { eventNames: [{ iid: 1, name: 'a' }], debugAnnotationNames: [{ iid: 1, name: 'k' }] },
        trackEvent: { type: 'TYPE_SLICE_BEGIN', trackUuid: 7, nameIid: 1, debugAnnotations: [{ nameIid: 1, intValue: 5 }] },
      },
      { trustedPacketSequenceId: 1, timestamp: 9_500, timestampClockId: 3, trackEvent: { type: 'TYPE_SLICE_END', trackUuid: 7 } },
      // Sequence 2: defaults put events on clock 64 (µs, incremental) and track 7.
      {
        trustedPacketSequenceId: 2,
        sequenceFlags: 1,
        tracePacketDefaults: { timestampClockId: 64, trackEventDefaults: { trackUuid: 7 } },
        clockSnapshot: {
          clocks: [
            { clockId: 64, timestamp: 20, unitMultiplierNs: 1000, isIncremental: true },
            { clockId: 6, timestamp: 30_000 },
          ],
        },
        internedData: { eventNames: [{ iid: 1, name: 'b' }] },
      },
      { trustedPacketSequenceId: 2, timestamp: 1, trackEvent: { type: 'TYPE_SLICE_BEGIN', nameIid: 1 } },
      { trustedPacketSequenceId: 2, timestamp: 2, trackEvent: { type: 'TYPE_SLICE_END' } },
      // Sequence 1 cleared: iid 1 now means "c".
      {
        trustedPacketSequenceId: 1,
        timestamp: 40_000,
        incrementalStateCleared: true,
        internedData: { eventNames: [{ iid: 1, name: 'c' }] },
        trackEvent: { type: 'TYPE_SLICE_BEGIN', trackUuid: 7, nameIid: 1 },
      },
      { trustedPacketSequenceId: 1, timestamp: 40_010, trackEvent: { type: 'TYPE_SLICE_END', trackUuid: 7 } },
    ]);
    const file = path.join(tmp, 'clocks.pftrace');
    writeFileSync(file, bytes);
    const { spans } = readSpans(file);
    expect(spans).toEqual([
      { timeline: 'T', name: 'a', start: 10_100, end: 10_500, args: { k: 5 } },
      // clock 64 at the snapshot: 20 µs = 20000 ns <-> BOOTTIME 30000; +1 µs, then +2 more.
      { timeline: 'T', name: 'b', start: 31_000, end: 33_000, args: {} },
      { timeline: 'T', name: 'c', start: 40_000, end: 40_010, args: {} },
    ]);
  });
});

describe('cut-off and non-trace files', () => {
  for (const which of ['known', 'streamed'] as const) {
    it(`a Perfetto file cut at any byte reads up to its last whole packet and says so (${which})`, () => {
      const file = which === 'known' ? known.pftrace : streamedTrace(path.join(tmp, 'streamed.pftrace'), 0);
      const bytes = readFileSync(file);
      const ends = packetEnds(bytes);
      const cutFile = path.join(tmp, `cut-${which}.pftrace`);
      for (let cut = 1; cut < bytes.length; cut++) {
        writeFileSync(cutFile, bytes.subarray(0, cut));
        if (cut < ends[0]) {
          expect(() => readSpans(cutFile)).toThrow(`${cutFile}: truncated at byte ${String(cut)}, before its first whole Perfetto packet`);
          continue;
        }
        const lastWhole = Math.max(...ends.filter((e) => e <= cut));
        const r = readSpans(cutFile);
        expect(r.summary, `cut at ${String(cut)}`).toMatchObject({ truncated: lastWhole < cut, lastWhole: { unit: 'byte', at: lastWhole }, counts: undefined });
        expect(relative(r.spans), `cut at ${String(cut)}`).toEqual(relative(protobufjsSpans(bytes.subarray(0, lastWhole))));
        // Every name interned by then resolves (the streamed file interns new names batch by batch).
        for (const x of r.spans) expect(x.name).not.toBe('?');
      }
      const mid = (ends[ends.length - 3] + ends[ends.length - 2]) >> 1;
      writeFileSync(cutFile, bytes.subarray(0, mid));
      const out = cli(['report', cutFile]);
      expect(out.status, out.stderr).toBe(0);
      expect(out.stdout).toContain(`truncated: the file ends at byte ${String(mid)} inside a packet; read up to its last whole packet, which ends at byte ${String(ends[ends.length - 3])}`);
      expect(out.stdout).toContain('recording counts: unknown');
    });
  }

  it('a streamed file: its recording counts, its names interned batch by batch', () => {
    const file = streamedTrace(path.join(tmp, 'streamed-counts.pftrace'), 1);
    const { spans, summary } = readSpans(file);
    expect(spans.map((x) => x.name)).toEqual(['step 0', 'inner 0', 'step 1', 'inner 1', 'step 2', 'inner 2']);
    expect(summary.counts).toEqual(countsOf(1));
    const out = cli(['report', file]);
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain('lost while recording: dropped 4, overwritten 3\n');
    expect(out.stdout).toContain('recorded: produced 17, kept 10, released 2\n');
    expect(out.stdout).toContain('stream: wrote 8 records in its files, missed 1');
    const json = JSON.parse(cliOk(['report', file, '--json'])) as { counts: unknown; dropped: number; overwritten: number };
    expect(json).toMatchObject({ counts: countsOf(1), dropped: 4, overwritten: 3 });
  });

  it("a rotated stream's files read as one trace; the counts are the newest file's", () => {
    const first = streamedTrace(path.join(tmp, 'rotated.0.pftrace'), 1);
    const second = streamedTrace(path.join(tmp, 'rotated.1.pftrace'), 2);
    const r = buildReport([first, second], 20, 'total');
    expect(r.spans).toBe(12);
    expect(r.timelines.map((t) => [t.name, t.spans])).toEqual([['main', 12]]);
    expect(r.names.find((n) => n.name === 'step 0')?.count).toBe(2);
    expect(r).toMatchObject({ counts: countsOf(2), countsFrom: second, truncated: false });
    // In any order (a shell's glob sorts trace-10 before trace-2).
    const out = cli(['report', second, first]);
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain('(2 files read as one trace), 12 spans');
    expect(out.stdout).toContain(`lost while recording: dropped 5, overwritten 4 (from ${second})`);
  });

  it('a file that begins mid-stream: the packets that need names from before its start are skipped and counted', () => {
    const bytes = readFileSync(streamedTrace(path.join(tmp, 'streamed-front.pftrace'), 0));
    const ends = packetEnds(bytes);
    // Without its first packet (the one that clears the state and interns the first names).
    const rest = bytes.subarray(ends[0]);
    const file = path.join(tmp, 'front-cut.pftrace');
    writeFileSync(file, rest);
    // What needs the state, by protobufjs: every packet flagged SEQ_NEEDS_INCREMENTAL_STATE (2).
    const t = perfettoType();
    const packets = (t.toObject(t.decode(rest)) as { packet: Array<{ sequenceFlags?: number }> }).packet;
    const needing = packets.filter((p) => ((p.sequenceFlags ?? 0) & 2) !== 0).length;
    expect(needing).toBeGreaterThan(0);
    const { spans, summary } = readSpans(file);
    expect(summary.skipped).toBe(needing);
    expect(spans).toEqual([]);
    const out = cli(['report', file]);
    expect(out.stdout).toContain(`${String(needing)} packet(s) skipped: they need interned names from before the file's start`);
  });

  it('a JSON file cut mid-event reads up to its last whole event', () => {
    const text = readFileSync(known.json, 'utf8');
    const lines = text.split('\n');
    const cutAt = text.indexOf(lines[lines.length - 4]) + 10; // inside the third-last event line
    const file = path.join(tmp, 'cut.json');
    writeFileSync(file, text.slice(0, cutAt));
    const r = readSpans(file);
    expect(r.summary.truncated).toBe(true);
    const full = readSpans(known.json);
    expect(r.spans.length).toBeLessThan(full.spans.length);
    for (const s of r.spans) expect(full.spans).toContainEqual(s);
  });

  it('a JSON file cut at any byte reads up to its last whole event, or names the byte where it ends', () => {
    // known.json with recording counts in its metadata, as hotspan writes them.
    // The file's own counts member (hotspan writes one) is replaced by these.
    const text = readFileSync(known.json, 'utf8')
      .replace(/,"hotspan":\{[^{}]*\}/, '')
      .replace('"metadata":{', `"metadata":{"hotspan":${JSON.stringify(countsOf(0))},`);
    const bytes = Buffer.from(text);
    const full = path.join(tmp, 'counted.json');
    writeFileSync(full, bytes);
    const all = readSpans(full);
    expect(all.summary).toMatchObject({ truncated: false, counts: countsOf(0) });
    expect(all.spans).toHaveLength(7);
    const cutFile = path.join(tmp, 'cut-any.json');
    let read = 0;
    for (let cut = 1; cut <= bytes.length; cut++) {
      writeFileSync(cutFile, bytes.subarray(0, cut));
      let r: ReturnType<typeof readSpans>;
      try {
        r = readSpans(cutFile);
      } catch (e) {
        // Only inside the first line, before the event list opens.
        expect(String(e), `cut at ${String(cut)}`).toContain(`${cutFile}: truncated: the JSON document ends at byte ${String(cut)}`);
        expect(cut).toBeLessThan(text.indexOf('\n'));
        continue;
      }
      // Complete once the closing metadata is: only the last newline may be missing.
      const complete = cut >= bytes.length - 1;
      expect(r.summary.truncated, `cut at ${String(cut)}`).toBe(!complete);
      expect(r.summary.counts, `cut at ${String(cut)}`).toEqual(complete ? countsOf(0) : undefined);
      for (const x of r.spans) expect(all.spans).toContainEqual(x);
      expect(r.spans.length).toBeGreaterThanOrEqual(read);
      read = r.spans.length;
    }
    expect(read).toBe(7);
    // Inside the metadata: every event read, the counts lost.
    const inMeta = text.indexOf('"hotspan":') + 5;
    writeFileSync(cutFile, bytes.subarray(0, inMeta));
    const out = cli(['report', cutFile]);
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain(`truncated: the file ends at byte ${String(inMeta)} inside an event or its closing metadata; read up to its last whole event, on line ${String(text.split('\n').length - 2)}`);
    expect(out.stdout).toContain('recording counts: unknown');
    expect(out.stdout).toMatch(/ 7 spans /);
    // The whole file's counts, printed.
    const whole = cli(['report', full]);
    expect(whole.stdout).toContain('lost while recording: dropped 3, overwritten 2\nrecorded: produced 15, kept 10, released 1\n');
    // A JSON document on one line cannot be read in part: the error names the file and the byte.
    const oneLine = path.join(tmp, 'one-line.json');
    writeFileSync(oneLine, JSON.stringify(JSON.parse(text)).slice(0, 200));
    const bad = cli(['report', oneLine]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(`hotspan report: ${oneLine}: truncated: the JSON document ends at byte 200 before it is complete`);
  });

  it('names the file and what is wrong', () => {
    const cases: Array<[string, string | Uint8Array, RegExp]> = [
      ['empty.pftrace', '', /empty file, not a trace/],
      ['text.json', 'hello world\n', /not a trace: neither Chrome JSON nor Perfetto/],
      ['obj.json', '{"a": 1}', /not a trace: JSON without a traceEvents array/],
      ['bad.pftrace', new Uint8Array([0x0a, 0x02, 0x08, 0x01, 0x12, 0x05]), /not a Perfetto trace: unexpected field tag 0x12 at byte 4/],
      ['garbled.pftrace', new Uint8Array([0x0a, 0x03, 0x08, 0x01, 0x12]), /malformed packet at byte 0: bad varint/],
      ['short.pftrace', new Uint8Array([0x0a, 0x40, 0x08]), /truncated at byte 3, before its first whole Perfetto packet/],
      ['bad-end.json', '{"traceEvents":[\n{"ph":"X","ts":1,"dur":1}\n],"metadata":{"a":1} x}\n', /malformed end of document at line 3/],
      ['mid.json', '{"traceEvents":[\n{"ph":"X",\n{"ph":"X","ts":1,"dur":1}\n]}\n', /malformed event at line 2/],
    ];
    for (const [name, content, re] of cases) {
      const file = path.join(tmp, name);
      writeFileSync(file, content);
      expect(() => readTrace(file, { timeline() {}, span() {} }), name).toThrow(re);
      const out = cli(['report', file]);
      expect(out.status, name).toBe(1);
      expect(out.stderr, name).toContain(file);
      expect(out.stderr, name).toMatch(re);
    }
    const missing = cli(['report', path.join(tmp, 'missing.pftrace')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/missing\.pftrace: cannot open: ENOENT/);
  });

  it('a directory is one line naming it, no stack', () => {
    const dir = mkdtempSync(path.join(tmp, 'dir-'));
    const out = cli(['report', dir]);
    expect(out.status).toBe(1);
    expect(out.stderr).toBe(`hotspan report: ${dir}: is a directory, not a trace file\n`);
  });

  it('malformed JSON events (ts not a number, a negative dur, args nested 1e6 deep) are skipped and counted', () => {
    const deep = '['.repeat(1e6) + ']'.repeat(1e6);
    const ev = (o: Record<string, unknown>): string => JSON.stringify({ ph: 'X', pid: 1, tid: 1, ...o });
    const lines = [
      ev({ name: 'ok1', ts: 1, dur: 2 }),
      ev({ name: 'badts', ts: 'x', dur: 2 }),
      ev({ name: 'negdur', ts: 1, dur: -5 }),
      ev({ name: 'ok2', ts: 10, dur: 0 }),
      `{"ph":"X","pid":1,"tid":1,"name":"deep","ts":1,"dur":1,"args":{"x":${deep}}}`,
      ev({ name: 'nots', ph: 'B' }),
    ];
    for (const [name, text] of [
      ['malformed.json', `{"traceEvents":[\n${lines.join(',\n')}\n]}\n`],
      ['malformed-one-line.json', `{"traceEvents":[${lines.join(',')}]}`],
    ]) {
      const file = path.join(tmp, name);
      writeFileSync(file, text);
      const names: string[] = [];
      const summary = readTrace(file, { timeline() {}, span: (sp) => void names.push(sp.name) });
      expect(names, name).toEqual(['ok1', 'ok2']);
      expect(summary.malformed, name).toBe(4);
      expect(summary.firstMalformed, name).toBe('ts "x" is not a number (event 2, "badts")');
      const out = cli(['report', file]);
      expect(out.status, out.stderr).toBe(0);
      expect(out.stderr).toBe('');
      expect(out.stdout).toContain(`${file}: Chrome JSON, 2 spans`);
      expect(out.stdout).toContain('4 malformed event(s) skipped (not counted); the first: ts "x" is not a number (event 2, "badts")');
    }
  });
});
