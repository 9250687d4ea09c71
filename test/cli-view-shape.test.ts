// `hotspan view` shows the trace's shape: the initial range fits the spans
// (a counter sampled at exit, long after the last span, does not stretch it),
// counter tracks of 0, 1, 2 and many samples are all visible, and the flame
// graph nests by call path, through parent_id across tracks as well as by
// time on a thread. Checked on the page's own layout (window.hotspanView)
// and on the pixels it painted, in headless Chromium.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { buildView, viewHtml } from '../lib/cli/view';
import { CHROMIUM, openOffline } from './support/browser';
import { cli, writeGeneratedPerfetto } from './support/trace-files';

const tmp = mkdtempSync(path.join(tmpdir(), 'hotspan-view-shape-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Shown {
  counterSamplesShown: number;
  counterDots: number;
  counterEdgeMarks: number;
  view: { t0: number; t1: number };
  spanExtent: { t0: number; t1: number };
  flameLevels: number;
  layout: { labelW: number; laneH: number; counterH: number; rowY: number[]; counterY: number[]; flameTop: number };
}

const MS = 1000; // Chrome JSON times are in us

/**
 * A service's trace, by hand (Chrome JSON, times in ms from 0): main thread
 * handle 100-216 (parse 101-110, render 120-200 (template 122-150, json
 * 152-190)); async track db: query 130-205, child of render by parent_id;
 * track net: connect 131-140, child of query by parent_id. Counters: "exit"
 * one sample at 700 (as the event-loop delay is sampled when the process
 * exits), "one" one sample at 150, "two" at 110 and 180, "many" 200 samples
 * over 100-216.
 */
function serviceTrace(): string {
  const id = (k: number): number => 4294967296 + k;
  const X = (name: string, from: number, to: number, k: number, parent: number): object => ({
    name, cat: 'span', ph: 'X', ts: from * MS, dur: (to - from) * MS, pid: 1, tid: 1, args: { span_id: id(k), parent_id: parent === 0 ? 0 : id(parent) },
  });
  const async = (name: string, tid: number, from: number, to: number, k: number, parent: number): object[] => [
    { name, cat: 'async', ph: 'b', ts: from * MS, pid: 1, tid, id: String(id(k)), args: { span_id: id(k), parent_id: id(parent) } },
    { name, cat: 'async', ph: 'e', ts: to * MS, pid: 1, tid, id: String(id(k)) },
  ];
  const C = (name: string, at: number, value: number): object => ({ name, ph: 'C', ts: at * MS, pid: 1, tid: 0, args: { value } });
  const events: object[] = [
    { name: 'process_name', ph: 'M', pid: 1, tid: 0, args: { name: 'svc' } },
    { name: 'thread_name', ph: 'M', pid: 1, tid: 1, args: { name: 'main' } },
    { name: 'thread_name', ph: 'M', pid: 1, tid: 2, args: { name: 'track: db' } },
    { name: 'thread_name', ph: 'M', pid: 1, tid: 3, args: { name: 'track: net' } },
    X('parse', 101, 110, 2, 1),
    X('template', 122, 150, 4, 3),
    X('json', 152, 190, 5, 3),
    X('render', 120, 200, 3, 1),
    X('handle', 100, 216, 1, 0),
    ...async('query', 2, 130, 205, 6, 3),
    ...async('connect', 3, 131, 140, 7, 6),
    C('one', 150, 5),
    C('two', 110, 2),
    C('two', 180, 6),
    ...Array.from({ length: 200 }, (_, k) => C('many', 100 + (k * 116) / 199, k % 7)),
    C('exit', 700, 40),
  ];
  const file = path.join(tmp, 'service.json');
  writeFileSync(file, JSON.stringify({ traceEvents: events }));
  return file;
}

/** Flame graph nodes as "a;b;c" paths with their totals (ns). */
function flamePaths(file: string): Map<string, number> {
  const d = buildView(file).data;
  const pathOf = (k: number): string => (d.fgParent[k] < 0 ? '' : `${pathOf(d.fgParent[k])};`) + d.names[d.fgName[k]];
  return new Map(d.fgName.map((_, k) => [pathOf(k), d.fgTotal[k]]));
}

describe('hotspan view: flame graph data', () => {
  it('nests by call path: by time on a thread and through parent_id across tracks', () => {
    const ms = 1e6;
    expect(flamePaths(serviceTrace())).toEqual(
      new Map([
        ['handle', 116 * ms],
        ['handle;parse', 9 * ms],
        ['handle;render', 80 * ms],
        ['handle;render;template', 28 * ms],
        ['handle;render;json', 38 * ms],
        ['handle;render;query', 75 * ms],
        ['handle;render;query;connect', 9 * ms],
      ]),
    );
  });

  it('merges the same name path: two requests are one node, their times summed', () => {
    const file = path.join(tmp, 'two-requests.json');
    const X = (name: string, from: number, to: number): object => ({ name, ph: 'X', ts: from * MS, dur: (to - from) * MS, pid: 1, tid: 1 });
    writeFileSync(file, JSON.stringify({ traceEvents: [X('req', 0, 10), X('db', 1, 4), X('db', 5, 6), X('req', 20, 32), X('db', 21, 29)] }));
    expect(flamePaths(file)).toEqual(new Map([['req', 22e6], ['req;db', 12e6]]));
  });
});

const haveChromium = existsSync(CHROMIUM);

/** RGBA pixels of a canvas, read back once (more readbacks make Chromium warn). */
interface Pixels {
  width: number;
  height: number;
  dpr: number;
  data: number[];
}

async function pixels(page: import('playwright-core').Page, id: string): Promise<Pixels> {
  // Page code as text: the tests are typed without the DOM library.
  return page.evaluate<Pixels>(`(() => {
    const c = document.getElementById(${JSON.stringify(id)});
    const img = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    return { width: c.width, height: c.height, dpr: window.devicePixelRatio || 1, data: Array.from(img.data) };
  })()`);
}

/** [r, g, b, a] at CSS px (x, y). */
function at(p: Pixels, x: number, y: number): number[] {
  const i = 4 * (Math.round(y * p.dpr) * p.width + Math.round(x * p.dpr));
  return p.data.slice(i, i + 4);
}

/** The page's backgrounds: nothing painted (transparent), white, and the two row shades. */
const background = (px: number[]): boolean => px[3] === 0 || ['255,255,255', '250,250,250', '242,244,247'].includes(px.slice(0, 3).join(','));

/** Pixels in [x0, x1) x [y0, y1) (CSS px) that are not background. */
function painted(p: Pixels, x0: number, x1: number, y0: number, y1: number): number {
  let n = 0;
  for (let y = Math.ceil(y0); y < y1; y++) for (let x = Math.ceil(x0); x < x1; x++) if (!background(at(p, x, y))) n++;
  return n;
}

describe.runIf(haveChromium)('hotspan view in Chromium', () => {
  it('fits the initial range to the spans, shows counters of 1, 2 and many samples, nests the flame graph', async () => {
    const html = path.join(tmp, 'service.html');
    const r = cli(['view', serviceTrace(), '-o', html]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('7 spans on 3 rows, 4 counter tracks');
    const width = 1280;
    const o = await openOffline(html, { width, height: 720 });
    try {
      const s = await o.page.evaluate(() => (globalThis as unknown as { hotspanView: Shown }).hotspanView);
      const L = s.layout;
      const plotW = width - L.labelW;
      const tl = await pixels(o.page, 'tl');
      const handleY = L.rowY[0] + L.laneH / 2;
      // First the pixels alone: handle (0..116 ms, the last end) reaches the
      // right 5% of the plot, and the last 1% is empty.
      expect(background(at(tl, L.labelW + 0.95 * plotW, handleY)), 'handle at 95% of the plot').toBe(false);
      expect(painted(tl, L.labelW + 0.99 * plotW, width, L.rowY[0], L.rowY[0] + L.laneH - 2)).toBe(0);
      // "exit": its one sample, 600 ms after zero, lies right of the range: a mark at the right edge.
      expect(painted(tl, width - 10, width, L.counterY[3], L.counterY[3] + L.counterH)).toBeGreaterThan(10);

      // Zero is the first span's start: the spans cover 0..116 ms, the range adds 2% each side.
      expect(s.spanExtent).toEqual({ t0: 0, t1: 116e6 });
      expect(s.view.t0).toBeCloseTo(-0.02 * 116e6, 0);
      expect(s.view.t1).toBeCloseTo(1.02 * 116e6, 0);
      const xOf = (ms: number): number => L.labelW + ((ms * 1e6 - s.view.t0) / (s.view.t1 - s.view.t0)) * plotW;
      // The last span's right edge is in the right 10% of the plot.
      expect(xOf(116)).toBeGreaterThan(L.labelW + 0.9 * plotW);

      // handle (depth 0) is painted up to its end, and nothing is right of it.
      expect(background(at(tl, xOf(115), handleY)), `at 115 ms: ${String(at(tl, xOf(115), handleY))}`).toBe(false);
      expect(painted(tl, xOf(116) + 2, width, L.rowY[0], L.rowY[0] + L.laneH - 2)).toBe(0);

      // Counter rows in the trace's order: one, two, many, exit.
      const rowPainted = (c: number, x0 = L.labelW): number => painted(tl, x0, width, L.counterY[c], L.counterY[c] + L.counterH);
      // "one": a sample at 50 ms holds to the right edge: painted right of 60 ms.
      expect(rowPainted(0, xOf(60))).toBeGreaterThan(100);
      // "two" and "many": painted.
      expect(rowPainted(1, xOf(90))).toBeGreaterThan(100);
      expect(rowPainted(2)).toBeGreaterThan(100);
      // Counted: a dot on each of one's and two's samples, many's 200 drawn as a chart, one edge mark.
      expect(s.counterSamplesShown).toBe(1 + 2 + 200);
      expect(s.counterDots).toBe(3);
      expect(s.counterEdgeMarks).toBe(1);

      // The flame graph: four levels (handle > render > query > connect).
      expect(s.flameLevels).toBe(4);
      const fg = await pixels(o.page, 'fg');
      const level = (d: number): number => L.flameTop + d * L.laneH + L.laneH / 2;
      let row3 = 0;
      for (let x = 0; x < width; x++) if (!background(at(fg, x, level(3)))) row3++;
      // connect is 9 of handle's 116 ms, drawn under render's 80 ms, whose
      // children (template 28, json 38, query 75) shrink by 80/141 to fit: ~56 px.
      const connectPx = (9 / 116) * (80 / 141) * width;
      expect(row3).toBeGreaterThanOrEqual(Math.floor(connectPx) - 2);
      expect(row3).toBeLessThanOrEqual(Math.ceil(connectPx));
      let row4 = 0;
      for (let x = 0; x < width; x++) if (!background(at(fg, x, level(4)))) row4++;
      expect(row4).toBe(0);

      await o.page.screenshot({ path: path.join(tmp, 'service.png') });
      if (process.env.HOTSPAN_VIEW_SHOTS !== undefined) await o.page.screenshot({ path: path.join(process.env.HOTSPAN_VIEW_SHOTS, 'service.png') });
      expect(o.errors).toEqual([]);
      expect(o.requests).toEqual([]);
    } finally {
      await o.close();
    }
  }, 600_000);

  it('shows a counter of one sample in a trace of no span', async () => {
    const file = path.join(tmp, 'counter-only.pftrace');
    writeGeneratedPerfetto(file, {
      names: [],
      threads: [],
      trees: 0,
      originNs: 0n,
      clocks: { monotonicNs: 0n, realtimeNs: 1_800_000_000_000_000_000n },
      records: () => [],
      counters: [{ name: 'single', times: Float64Array.of(5), values: Float64Array.of(3), dropped: 0 }],
    });
    const html = path.join(tmp, 'counter-only.html');
    const r = cli(['view', file, '-o', html]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(': 0 spans on 0 rows, 1 counter track\n');
    const o = await openOffline(html);
    try {
      const s = await o.page.evaluate(() => (globalThis as unknown as { hotspanView: Shown }).hotspanView);
      const L = s.layout;
      const tl = await pixels(o.page, 'tl');
      // The sample's step runs from it to the right edge: painted over most of the plot.
      expect(painted(tl, L.labelW, 1280, L.counterY[0], L.counterY[0] + L.counterH)).toBeGreaterThan(0.5 * (1280 - L.labelW) * L.counterH);
      expect(s.counterSamplesShown).toBe(1);
      expect(s.counterDots).toBe(1);
      expect(o.errors).toEqual([]);
    } finally {
      await o.close();
    }
  }, 600_000);

  it('says a counter track has no sample', async () => {
    // The readers report a counter track only with its first sample; the
    // page still draws a track given with none (the data built by hand).
    const data = buildView(serviceTrace()).data;
    data.counters.push({ name: 'none', ts: '', value: '', min: 0, max: 0 });
    const html = path.join(tmp, 'no-sample.html');
    writeFileSync(html, viewHtml(data));
    const o = await openOffline(html);
    try {
      const s = await o.page.evaluate(() => (globalThis as unknown as { hotspanView: Shown }).hotspanView);
      const L = s.layout;
      const tl = await pixels(o.page, 'tl');
      // Its row (the fifth counter) carries the words "no samples" in the plot.
      expect(painted(tl, L.labelW, L.labelW + 100, L.counterY[4], L.counterY[4] + L.counterH)).toBeGreaterThan(20);
      expect(s.counterSamplesShown).toBe(1 + 2 + 200);
      expect(o.errors).toEqual([]);
    } finally {
      await o.close();
    }
  }, 600_000);
});
