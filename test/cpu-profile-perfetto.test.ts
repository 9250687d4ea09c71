// tracer.profile()'s samples in Perfetto output: PerfSample packets with
// interned frames and callstacks, decoded by protoc against the vendored
// schema, on the thread track and clock of the spans, at the same times as
// the Chrome JSON's; and hotspan's own reader gives the same hot functions
// from either file. Checks use where a sample was taken (the functions on its
// stack), not how long anything took.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { buildReport } from '../lib/cli/report';
import type { Tracer } from '../lib/index';
import { loadNativeAddon } from '../lib/binding/native-loader';
import { internals } from '../lib/tracer/internal';
import { STATUS_OK } from '../lib/common/flags';
import { protoPath } from './support/trace-files';
import { toolBin } from './support/tools';
import { msgs, one, parseText, type Text } from './support/trace-samples';
import { tracerFactory } from './support/tracers';

const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';
const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-cpu-perfetto-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));


interface Decoded {
  pid: number;
  /** The main thread's descriptor: its tid. */
  tid: number;
  /** Slices of the main thread by name: [begin, end] timestamps (the trace clock's ns). */
  slices: Map<string, Array<[number, number]>>;
  /** Per sample: time, pid, tid, its stack's function names (innermost first) and the top frame. */
  samples: Array<{ ts: number; pid: number; tid: number; stack: string[]; top: { function: string; url: string; line: number } }>;
  /** Every interned iid, per kind, in file order (a kind's iids must not repeat). */
  iids: Map<string, number[]>;
  countsJson: string | undefined;
}

function decode(file: string): Decoded {
  const text = execFileSync(toolBin('protoc'), [`--proto_path=${path.dirname(protoPath)}`, '--decode=perfetto.protos.Trace', protoPath], {
    input: readFileSync(file),
    maxBuffer: 1 << 28,
  }).toString();
  const packets = msgs(parseText(text), 'packet');
  const functions = new Map<string, string>();
  const sources = new Map<string, string>();
  const frames = new Map<string, Text>();
  const stacks = new Map<string, string[]>();
  const iids = new Map<string, number[]>();
  const out: Decoded = { pid: 0, tid: 0, slices: new Map(), samples: [], iids, countsJson: undefined };
  const names = new Map<string, string>();
  let mainUuid: string | undefined;
  const open: Array<{ name: string; ts: number }> = [];
  for (const p of packets) {
    for (const interned of msgs(p, 'interned_data')) {
      for (const [kind, table] of [['function_names', functions], ['source_paths', sources], ['event_names', names]] as const) {
        for (const e of msgs(interned, kind)) table.set(one(e, 'iid') as string, (one(e, 'str') ?? one(e, 'name')) as string);
      }
      for (const kind of ['function_names', 'source_paths', 'mapping_paths', 'mappings', 'frames', 'callstacks']) {
        for (const e of msgs(interned, kind)) {
          const list = iids.get(kind) ?? [];
          list.push(Number(one(e, 'iid')));
          iids.set(kind, list);
        }
      }
      for (const f of msgs(interned, 'frames')) frames.set(one(f, 'iid') as string, f);
      for (const c of msgs(interned, 'callstacks')) stacks.set(one(c, 'iid') as string, (c.get('frame_ids') ?? []) as string[]);
    }
    for (const td of msgs(p, 'track_descriptor')) {
      const th = msgs(td, 'thread')[0];
      if (th !== undefined && one(th, 'thread_name') === 'main') {
        mainUuid = one(td, 'uuid');
        out.pid = Number(one(th, 'pid'));
        out.tid = Number(one(th, 'tid'));
      }
      if (one(td, 'name') === 'hotspan.counts') out.countsJson = one(td, 'description');
    }
    const ts = Number(one(p, 'timestamp'));
    for (const ev of msgs(p, 'track_event')) {
      if (one(ev, 'track_uuid') !== mainUuid) continue;
      if (one(ev, 'type') === 'TYPE_SLICE_BEGIN') open.push({ name: names.get(one(ev, 'name_iid') as string) as string, ts });
      if (one(ev, 'type') === 'TYPE_SLICE_END') {
        const b = open.pop() as { name: string; ts: number };
        const list = out.slices.get(b.name) ?? [];
        list.push([b.ts, ts]);
        out.slices.set(b.name, list);
      }
    }
    for (const s of msgs(p, 'perf_sample')) {
      const frameIds = stacks.get(one(s, 'callstack_iid') as string);
      if (frameIds === undefined) throw new Error('a sample of a callstack not interned before it');
      const stack = frameIds.map((id) => functions.get(one(frames.get(id) as Text, 'function_name_id') as string) as string).reverse();
      const top = frames.get(frameIds[frameIds.length - 1]) as Text;
      out.samples.push({
        ts,
        pid: Number(one(s, 'pid')),
        tid: Number(one(s, 'tid')),
        stack,
        top: { function: stack[0], url: sources.get(one(top, 'source_path_iid') ?? '') ?? '', line: Number(one(top, 'line_number') ?? 0) },
      });
    }
  }
  return out;
}

interface ChromeEvent {
  name: string;
  ph: string;
  ts: number;
  id?: string;
  args?: { data?: { cpuProfile?: { nodes: Array<{ id: number; callFrame: { functionName: string } }>; samples: number[] }; timeDeltas?: number[] } };
}
/** The Chrome JSON's sample times (us) and top function names, in file order. */
function chromeSamples(file: string): Array<{ us: number; fn: string }> {
  const events = (JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: ChromeEvent[] }).traceEvents;
  const out: Array<{ us: number; fn: string }> = [];
  const names = new Map<number, string>();
  let last = 0;
  for (const e of events) {
    if (e.ph !== 'P') continue;
    if (e.name === 'Profile') {
      last = e.ts;
      continue;
    }
    const data = e.args?.data;
    for (const n of data?.cpuProfile?.nodes ?? []) names.set(n.id, n.callFrame.functionName);
    (data?.cpuProfile?.samples ?? []).forEach((id, i) => {
      last += (data?.timeDeltas ?? [])[i];
      out.push({ us: last, fn: names.get(id) as string });
    });
  }
  return out;
}

/** 20 ms of arithmetic, inside a span. */
function burnInSpan(): number {
  const end = performance.now() + 20;
  let x = 0;
  while (performance.now() < end) for (let i = 0; i < 20_000; i++) x = (x * 31 + i) | 0;
  return x;
}
/** 20 ms of arithmetic, outside every span. */
function burnOutside(): number {
  const end = performance.now() + 20;
  let x = 0;
  while (performance.now() < end) for (let i = 0; i < 20_000; i++) x = (x * 37 + i) | 0;
  return x;
}

/** Profiles `work` (one profile per round) until both functions were sampled (a busy machine may starve the sampler), at most 50 rounds. */
function untilSampled(t: Tracer, work: () => void, file: string): Promise<Decoded> {
  const run = async (round: number): Promise<Decoded> => {
    const h = t.profile({ intervalUs: 100 });
    work();
    h.stop();
    await t.write(file);
    const d = decode(file);
    const has = (f: string) => d.samples.some((s) => s.stack.includes(f));
    return (has('burnInSpan') && has('burnOutside')) || round === 49 ? d : run(round + 1);
  };
  return run(0);
}

describe.skipIf(skipNative)('CPU samples in Perfetto output', () => {
  const make = tracerFactory('native');

  it('protoc decodes them on the thread and clock of the spans, at the Chrome JSON times', async () => {
    const t = make();
    const file = path.join(tmp, 'clock.pftrace');
    const d = await untilSampled(
      t,
      () => {
        burnOutside();
        t.trace('busy', burnInSpan);
      },
      file,
    );
    expect(d.samples.length).toBeGreaterThan(0);
    // Every sample on the main thread's track (its pid and tid).
    for (const s of d.samples) expect([s.pid, s.tid]).toEqual([d.pid, d.tid]);
    const busy = d.slices.get('busy') ?? [];
    const inSpan = d.samples.filter((s) => s.stack.includes('burnInSpan'));
    const outside = d.samples.filter((s) => s.stack.includes('burnOutside'));
    expect(inSpan.length).toBeGreaterThan(0);
    expect(outside.length).toBeGreaterThan(0);
    // V8 stamps a sample while the function runs: inside its span's slice, on the same clock.
    for (const s of inSpan) expect(busy.some(([b, e]) => b <= s.ts && s.ts <= e)).toBe(true);
    for (const s of outside) expect(busy.some(([b, e]) => b <= s.ts && s.ts <= e)).toBe(false);
    // Frames carry the script and its 1-based line.
    const top = inSpan.find((s) => s.top.function === 'burnInSpan')?.top;
    expect(top?.url).toMatch(/cpu-profile-perfetto\.test\.ts$/);
    expect(top?.line).toBeGreaterThan(0);
    // The same samples as the Chrome JSON: times on its 1/1024 us grid of the same ns (Perfetto's clock is the origin + 1 s).
    const json = path.join(tmp, 'clock.json');
    await t.write(json);
    const chrome = chromeSamples(json);
    expect(chrome.length).toBe(d.samples.length);
    chrome.forEach((c, i) => {
      expect(Math.abs(c.us * 1000 - (d.samples[i].ts - 1e9))).toBeLessThan(1);
      expect(d.samples[i].top.function).toBe(c.fn === '' ? '(anonymous)' : c.fn);
    });
    // Interned once per file: no kind repeats an iid, though the rounds' profiles share frames.
    for (const [kind, list] of d.iids) expect(new Set(list).size, kind).toBe(list.length);
    expect(d.iids.get('callstacks')?.length).toBeGreaterThan(0);
    t.close();
  });

  it('hotspan report gives the same hot functions from the .pftrace as from the Chrome JSON', async () => {
    const t = make();
    const file = path.join(tmp, 'report.pftrace');
    await untilSampled(
      t,
      () => {
        t.trace('request', () => {
          t.trace('busy', burnInSpan);
        });
        burnOutside();
      },
      file,
    );
    const json = path.join(tmp, 'report.json');
    await t.write(json);
    const fromPerfetto = buildReport(file, 10, 'total').names.map((n) => [n.name, n.hotFunctions]);
    const fromJson = buildReport(json, 10, 'total').names.map((n) => [n.name, n.hotFunctions]);
    expect(fromPerfetto).toEqual(fromJson);
    const busy = buildReport(file, 10, 'total').names.find((n) => n.name === 'busy');
    // (Which of the busy span's functions is on top is cpu-profile.test.ts's check; V8 may credit some samples to a caller.)
    expect(busy?.hotFunctions?.some((f) => f.function === 'burnInSpan')).toBe(true);
    for (const n of buildReport(file, 10, 'total').names) expect(n.hotFunctions?.some((f) => f.function === 'burnOutside')).toBe(false);
    t.close();
  });

  it('counts the samples the memory budget refused in the counts track', async () => {
    const t = make({ memoryLimit: 1 << 20 });
    const nt = t[internals]().native;
    if (nt === undefined) throw new Error('no native tracer');
    const n = 40_000; // 12 bytes each: past a quarter of 1 MiB
    const times = Float64Array.from({ length: n }, (_, i) => 1e6 + i * 10);
    const status = nt.cpuProfile(
      ['(root)', 'hot'],
      ['', 'file:///x.js'],
      Int32Array.from([-1, -1, 4, 2]),
      Uint32Array.from([0, 1]),
      Int32Array.from([-1, 0]),
      new Uint32Array(n).fill(1),
      times,
    );
    expect(status).toBe(STATUS_OK);
    const file = path.join(tmp, 'budget.pftrace');
    await t.write(file);
    const d = decode(file);
    const counts = JSON.parse(d.countsJson ?? '{}') as { cpu_samples_dropped?: number };
    expect(d.samples.length).toBeGreaterThan(0);
    expect((counts.cpu_samples_dropped ?? 0) + d.samples.length).toBe(n);
    // A frame with a line (V8's 0-based 4) says line 5; the sample's stack is the frame alone (the root is no frame).
    expect(d.samples[0].stack).toEqual(['hot']);
    expect(d.samples[0].top).toEqual({ function: 'hot', url: 'file:///x.js', line: 5 });
    t.close();
  });
});
