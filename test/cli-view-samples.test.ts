// `hotspan view` with CPU samples and with several processes, in headless
// Chromium: a sampled thread's row gets a strip of sample ticks; clicking a
// span shows the flame graph and the function table of the samples inside it
// (the report's rule, hot-functions.ts); a trace of several processes has a
// header row per process, named, the first process first, then by pid.
// Fixtures are Chrome JSON written here with fixed times; one test records a
// real profile and asserts only what holds whatever the machine's load (the
// busy function is among the span's samples, the page agrees with the report).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';

import { loadNativeAddon } from '../lib/binding/native-loader';
import { buildReport } from '../lib/cli/report';
import { buildView, type ViewData } from '../lib/cli/view';
import type { Tracer } from '../lib/index';
import { CHROMIUM, openOffline } from './support/browser';
import { without } from './support/tools';
import { tracerFactory } from './support/tracers';
import { cli } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-view-samples-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const skipNative = loadNativeAddon().addon === undefined && process.env.CI !== 'true';

const MS = 1000; // Chrome JSON times are in us

interface Selection {
  span: number;
  name: string;
  samples: number;
  functions: Array<{ function: string; self: number; total: number; samples: number }>;
}
interface Stats {
  rows: number;
  samples: number;
  samplesShown: number;
  sampleTicks: number;
  groups: string[];
  selection: Selection | null;
  flameRoots: string[];
  frames: number;
  view: { t0: number; t1: number };
  layout: { labelW: number; laneH: number; rowY: number[]; sampleY: number[]; sampleH: number; groupY: number[] };
}

/**
 * One thread (pid 1, tid 1) with spans request 0-10 ms and busy 2-8 ms in
 * it, and a V8 profile of 12 samples, 1 ms apart from 0.5 ms: main >
 * handler > other at 0.5, 1.5, 8.5, 9.5; main > handler > busyFn at 2.5,
 * 3.5, 5.5, 6.5; main > handler > busyFn > helper at 4.5 and 7.5; main alone
 * at 10.5 and 11.5.
 */
function sampledTrace(): string {
  const node = (id: number, fn: string, parent?: number): object => ({
    id,
    ...(parent === undefined ? {} : { parent }),
    callFrame: { functionName: fn, scriptId: 0, url: fn === '(root)' ? '' : 'file:///app.js', lineNumber: id * 10, columnNumber: 0 },
  });
  const at = [5, 5, 4, 4, 6, 4, 4, 6, 5, 5, 2, 2];
  const events = [
    { name: 'process_name', ph: 'M', pid: 1, tid: 0, args: { name: 'svc' } },
    { name: 'thread_name', ph: 'M', pid: 1, tid: 1, args: { name: 'main' } },
    { name: 'request', cat: 'span', ph: 'X', ts: 0, dur: 10 * MS, pid: 1, tid: 1 },
    { name: 'busy', cat: 'span', ph: 'X', ts: 2 * MS, dur: 6 * MS, pid: 1, tid: 1 },
    { name: 'Profile', ph: 'P', ts: 0, pid: 1, tid: 1, id: '0x1', args: { data: { startTime: 0 } } },
    {
      name: 'ProfileChunk', ph: 'P', ts: 0, pid: 1, tid: 1, id: '0x1',
      args: {
        data: {
          cpuProfile: { nodes: [node(1, '(root)'), node(2, 'main', 1), node(3, 'handler', 2), node(4, 'busyFn', 3), node(5, 'other', 3), node(6, 'helper', 4)], samples: at },
          timeDeltas: at.map((_, i) => (i === 0 ? 0.5 * MS : MS)),
        },
      },
    },
  ];
  const file = path.join(tmp, 'sampled.json');
  writeFileSync(file, JSON.stringify({ traceEvents: events }));
  return file;
}

/** Three processes, 300 (named parent, first in the file), 20 (child-a) and 150 (no name); 300 has two threads; 300 and 20 a counter each. */
function processesTrace(): string {
  const X = (name: string, pid: number, tid: number, from: number, to: number): object => ({ name, cat: 'span', ph: 'X', ts: from * MS, dur: (to - from) * MS, pid, tid });
  const events = [
    { name: 'process_name', ph: 'M', pid: 300, tid: 0, args: { name: 'parent' } },
    X('p-main', 300, 300, 0, 5),
    X('p-worker', 300, 301, 1, 4),
    { name: 'process_name', ph: 'M', pid: 20, tid: 0, args: { name: 'child-a' } },
    X('b', 150, 150, 2, 4),
    X('a', 20, 20, 1, 3),
    // Counters of two processes, the child's first in the file.
    { name: 'heap', ph: 'C', ts: 1 * MS, pid: 20, tid: 0, args: { value: 5 } },
    { name: 'heap', ph: 'C', ts: 2 * MS, pid: 300, tid: 0, args: { value: 7 } },
  ];
  const file = path.join(tmp, 'processes.json');
  writeFileSync(file, JSON.stringify({ traceEvents: events }));
  return file;
}

const i32 = (b64: string): Int32Array => {
  const b = Buffer.from(b64, 'base64');
  return new Int32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const f64 = (b64: string): Float64Array => {
  const b = Buffer.from(b64, 'base64');
  return new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
};

/** Per span position with samples: its samples' stacks as function names, outermost first, and the samples' times (ns). */
function modelSamples(d: ViewData): Map<number, Array<{ ts: number; stack: string[] }>> {
  const s = d.samples;
  if (s === undefined) return new Map();
  const parent = i32(s.stackParent);
  const frame = i32(s.stackFrame);
  const stack = i32(s.stack);
  const ts = f64(s.ts);
  const first = i32(s.first);
  const count = i32(s.count);
  const list = i32(s.list);
  const names = (node: number): string[] => {
    const out: string[] = [];
    for (let n = node; n >= 0; n = parent[n]) out.unshift(s.fnNames[s.frameFn[frame[n]]]);
    return out;
  };
  const out = new Map<number, Array<{ ts: number; stack: string[] }>>();
  i32(s.span).forEach((k, i) => {
    const js = Array.from({ length: count[i] }, (_, c) => (first[i] >= 0 ? first[i] + c : list[-1 - first[i] + c]));
    out.set(k, js.map((j) => ({ ts: ts[j], stack: names(stack[j]) })));
  });
  return out;
}

const spanPos = (d: ViewData, name: string): number[] => {
  const ids = i32(d.name);
  const id = d.names.indexOf(name);
  return [...ids.keys()].filter((k) => ids[k] === id);
};

describe('hotspan view: the model of a sampled trace', () => {
  it('keeps each span the samples inside it, with their stacks', () => {
    const d = buildView(sampledTrace()).data;
    const samples = modelSamples(d);
    const [busy] = spanPos(d, 'busy');
    const [request] = spanPos(d, 'request');
    expect(samples.get(busy)?.map((x) => x.ts / 1e6)).toEqual([2.5, 3.5, 4.5, 5.5, 6.5, 7.5]);
    expect(samples.get(busy)?.[2].stack).toEqual(['main', 'handler', 'busyFn', 'helper']);
    expect(samples.get(request)?.map((x) => x.ts / 1e6)).toEqual([0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5]);
    expect(samples.get(request)?.[0].stack).toEqual(['main', 'handler', 'other']);
    // V8's (root) node is no frame; 12 samples in all, on the thread's row.
    expect(d.samples?.fnNames).not.toContain('(root)');
    expect([...i32(d.samples?.row ?? '')]).toEqual(Array(12).fill(0));
    expect(d.groups).toEqual([]);
  });

  it('groups rows by process: the first process of the file first, then by pid', () => {
    const d = buildView(processesTrace()).data;
    expect(d.groups).toEqual([
      { name: 'parent (pid 300)', row: 0 },
      { name: 'child-a (pid 20)', row: 2 },
      { name: 'process (pid 150)', row: 3 },
    ]);
    expect(d.rows).toHaveLength(4);
    // Each counter named with its process, in the groups' order.
    expect(d.counters.map((c) => c.name)).toEqual(['heap · parent (pid 300)', 'heap · child-a (pid 20)']);
  });
});

describe.skipIf(without('chromium'))(`hotspan view with samples and processes (Chromium at ${CHROMIUM})`, () => {
  const stats = (page: Page): Promise<Stats> => page.evaluate(() => (globalThis as unknown as { hotspanView: Stats }).hotspanView);
  /** Clicks the middle of span position k's rectangle, from the model's times and the page's layout. */
  async function clickSpan(page: Page, d: ViewData, k: number): Promise<void> {
    const s = await stats(page);
    const box = await page.locator('#tl').boundingBox();
    if (box === null) throw new Error('no canvas');
    const start = f64(d.start)[k];
    const mid = start + f64(d.dur)[k] / 2;
    const x = s.layout.labelW + ((mid - s.view.t0) / (s.view.t1 - s.view.t0)) * (box.width - s.layout.labelW);
    const y = s.layout.rowY[i32(d.row)[k]] + i32(d.depth)[k] * s.layout.laneH + s.layout.laneH / 2;
    const frames = s.frames;
    await page.mouse.click(box.x + x, box.y + y);
    await page.waitForFunction((n) => (globalThis as unknown as { hotspanView: Stats }).hotspanView.frames > n, frames);
  }

  it('draws the sample strip and shows a clicked span\'s samples as a flame graph and a table', async () => {
    const trace = sampledTrace();
    const html = path.join(tmp, 'sampled.html');
    const r = cli(['view', trace, '-o', html]);
    expect(r.status, r.stderr).toBe(0);
    const d = buildView(trace).data;
    const o = await openOffline(html);
    try {
      const page = o.page;
      const s = await stats(page);
      // The range is the spans' (0-10 ms and a margin): the 10 samples up to 9.5 ms are in it.
      expect(s).toMatchObject({ rows: 1, samples: 12, samplesShown: 10, sampleTicks: 10, selection: null, groups: [] });
      // The strip: under the row's two depths.
      expect(s.layout.sampleY).toEqual([s.layout.rowY[0] + 2 * s.layout.laneH]);
      const box = await page.locator('#tl').boundingBox();
      if (box === null) throw new Error('no canvas');
      const plotX = (ms: number): number => s.layout.labelW + ((ms * 1e6 - s.view.t0) / (s.view.t1 - s.view.t0)) * (box.width - s.layout.labelW);
      const y = s.layout.sampleY[0] + s.layout.sampleH / 2;
      const px = await page.evaluate<number[][]>(`(() => {
        const dpr = window.devicePixelRatio || 1;
        const c = document.getElementById('tl');
        const img = c.getContext('2d').getImageData(0, 0, c.width, c.height);
        const at = (x) => [...img.data.subarray(4 * (Math.round(${String(y)} * dpr) * c.width + Math.round(x * dpr)), 4 * (Math.round(${String(y)} * dpr) * c.width + Math.round(x * dpr)) + 4)];
        return [at(${String(plotX(3))}), at(${String(plotX(0.2))}), at(${String(plotX(4.9))})];
      })()`);
      // Row 0's background is #f2f4f7.
      const background = (p: number[]): boolean => p.join() === '242,244,247,255';
      expect(background(px[0]), `tick of busyFn at 3 ms: ${String(px[0])}`).toBe(false);
      expect(background(px[1]), `before the first sample: ${String(px[1])}`).toBe(true);
      // Coloured by the top function: helper's tick (4.5-5.5 ms) differs from busyFn's.
      expect(px[2]).not.toEqual(px[0]);
      // A tick's tooltip: its stack, top first.
      await page.mouse.move(box.x + plotX(5), box.y + y);
      expect(await page.textContent('#tip')).toMatch(/^sample at 4\.500 ms, weight 1\.000 ms\nhelper {2}file:\/\/\/app\.js:61\nbusyFn {2}file:\/\/\/app\.js:41\nhandler/);

      // Click busy: its 6 samples, busyFn first by self time.
      const [busy] = spanPos(d, 'busy');
      await clickSpan(page, d, busy);
      const sel = (await stats(page)).selection;
      expect(sel).toMatchObject({ span: busy, name: 'busy', samples: 6 });
      expect(sel?.functions).toEqual([
        { function: 'busyFn', self: 4e6, total: 6e6, samples: 4 },
        { function: 'helper', self: 2e6, total: 2e6, samples: 2 },
        { function: 'handler', self: 0, total: 6e6, samples: 0 },
        { function: 'main', self: 0, total: 6e6, samples: 0 },
      ]);
      expect((await stats(page)).flameRoots).toEqual(['main']);
      expect(await page.isVisible('#hot')).toBe(true);
      expect(await page.textContent('#hot tr:nth-child(2) td:first-child')).toBe('busyFn');
      // The same as the report's hot functions of busy (one rule).
      const hot = buildReport(trace, 10, 'total').names.find((n) => n.name === 'busy')?.hotFunctions;
      expect(hot?.map((h) => [h.function, h.samples, h.selfMs])).toEqual([
        ['busyFn', 4, 4],
        ['helper', 2, 2],
      ]);

      // Click request: 10 samples; busyFn and other have 4 ms of self time each, busyFn more in all; then empty space clears the selection.
      const [request] = spanPos(d, 'request');
      await clickSpan(page, d, request);
      expect((await stats(page)).selection?.samples).toBe(10);
      expect((await stats(page)).selection?.functions.slice(0, 2)).toEqual([
        { function: 'busyFn', self: 4e6, total: 6e6, samples: 4 },
        { function: 'other', self: 4e6, total: 4e6, samples: 4 },
      ]);
      const frames = (await stats(page)).frames;
      await page.mouse.click(box.x + plotX(-0.15), box.y + s.layout.rowY[0] + 5);
      await page.waitForFunction((n) => (globalThis as unknown as { hotspanView: Stats }).hotspanView.frames > n, frames);
      expect((await stats(page)).selection).toBeNull();
      expect(await page.isVisible('#hot')).toBe(false);
      expect((await stats(page)).flameRoots).toEqual(['request']);
      expect(o.errors).toEqual([]);
      expect(o.requests).toEqual([]);
    } finally {
      await o.close();
    }
  }, 180_000);

  it('shows a header row per process, named, in the order the model gives', async () => {
    const trace = processesTrace();
    const html = path.join(tmp, 'processes.html');
    const r = cli(['view', trace, '-o', html]);
    expect(r.status, r.stderr).toBe(0);
    const o = await openOffline(html);
    try {
      const s = await stats(o.page);
      expect(s.groups).toEqual(['parent (pid 300)', 'child-a (pid 20)', 'process (pid 150)']);
      // Each header sits right above its group's first row (rows 0, 2, 3).
      expect(s.layout.groupY).toHaveLength(3);
      expect([0, 2, 3].map((row, g) => s.layout.rowY[row] - s.layout.groupY[g])).toEqual([20, 20, 20]);
      // Painted: the headers' colour at their right end (their names are at the left).
      const ys = s.layout.groupY.map((g) => g + 8);
      const px = await o.page.evaluate<number[][]>(`(() => {
        const dpr = window.devicePixelRatio || 1;
        const c = document.getElementById('tl');
        const img = c.getContext('2d').getImageData(0, 0, c.width, c.height);
        const x = Math.round(c.width - 5 * dpr);
        return ${JSON.stringify(ys)}.map((y) => [...img.data.subarray(4 * (Math.round(y * dpr) * c.width + x), 4 * (Math.round(y * dpr) * c.width + x) + 4)]);
      })()`);
      for (const p of px) expect(p).toEqual([0xdf, 0xe4, 0xec, 255]);
      expect(o.errors).toEqual([]);
    } finally {
      await o.close();
    }
  }, 180_000);

  describe.skipIf(skipNative)('a recorded profile', () => {
    const make = tracerFactory('native');
    /** 30 ms of arithmetic inside a span. */
    function burnInSpan(): number {
      const end = performance.now() + 30;
      let x = 0;
      while (performance.now() < end) for (let i = 0; i < 20_000; i++) x = (x * 31 + i) | 0;
      return x;
    }
    /** Records until the busy span's samples have burnInSpan on their stack (the sampler may starve on a busy machine), at most 50 rounds. */
    async function record(file: string): Promise<void> {
      for (let round = 0; round < 50; round++) {
        const t: Tracer = make();
        const h = t.profile({ intervalUs: 100 });
        t.trace('busy', burnInSpan);
        h.stop();
        await t.write(file);
        await t.write(file.replace(/\.json$/, '.pftrace'));
        t.close();
        const d = buildView(file).data;
        if ([...modelSamples(d).values()].some((l) => l.some((x) => x.stack.includes('burnInSpan')))) return;
      }
    }

    it('shows the busy function among a span\'s samples, as the report does (json and pftrace)', async () => {
      const json = path.join(tmp, 'recorded.json');
      await record(json);
      // Both readers hand over whole stacks (burnInSpan under its callers), the same from either file of one recording.
      const stacks = [json, json.replace(/\.json$/, '.pftrace')].map((file) => {
        const d = buildView(file).data;
        return (modelSamples(d).get(spanPos(d, 'busy')[0]) ?? []).map((x) => x.stack);
      });
      expect(stacks[0].some((st) => st.indexOf('burnInSpan') > 0)).toBe(true);
      expect(stacks[1]).toEqual(stacks[0]);
      for (const file of [json, json.replace(/\.json$/, '.pftrace')]) {
        const d = buildView(file).data;
        const [busy] = spanPos(d, 'busy');
        const mine = modelSamples(d).get(busy) ?? [];
        expect(mine.some((x) => x.stack.includes('burnInSpan')), file).toBe(true);
        const html = `${file}.html`;
        const r = cli(['view', file, '-o', html]);
        expect(r.status, r.stderr).toBe(0);
        const o = await openOffline(html);
        try {
          await clickSpan(o.page, d, busy);
          const sel = (await stats(o.page)).selection;
          expect(sel?.name).toBe('busy');
          expect(sel?.samples).toBe(mine.length);
          expect(sel?.functions.map((f) => f.function)).toContain('burnInSpan');
          // Every hot function the report gives for busy, with the same samples and self time.
          const hot = buildReport(file, 10, 'total').names.find((n) => n.name === 'busy')?.hotFunctions ?? [];
          expect(hot.length).toBeGreaterThan(0);
          for (const h of hot) {
            const f = sel?.functions.find((x) => x.function === h.function);
            expect(f?.samples, h.function).toBe(h.samples);
            expect(Math.abs((f?.self ?? 0) / 1e6 - h.selfMs), h.function).toBeLessThan(1e-6);
          }
          expect(o.errors).toEqual([]);
        } finally {
          await o.close();
        }
      }
    }, 300_000);
  });
});
