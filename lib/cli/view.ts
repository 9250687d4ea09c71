// `hotspan view`: one self-contained HTML file (no network) showing a trace:
// a row per thread and per lane of a track, nested spans drawn on a canvas,
// a row per counter track (a step chart), zoom and pan, search, tooltips,
// and a flame graph of where time went. The spans are embedded as base64
// typed-array columns (26 bytes a span before base64), sorted by row, depth
// and start, so the page draws only what falls in view and merges spans
// narrower than a pixel; counter samples likewise (16 bytes a sample), in
// time order, drawn as at most a few points per pixel column.

import { writeFileSync } from 'node:fs';

import { Collected } from './collect';
import { readTrace, type ReadOptions } from './read-trace';
import { TraceFileError, type ReadSummary } from './trace-model';
import { VIEW_PAGE } from './view-page';

export interface ViewData {
  title: string;
  rows: string[];
  /** Depth levels per row. */
  rowDepths: number[];
  names: string[];
  /** base64 columns, span k in (row, depth, start) order: Int32 name, row, depth; Float64 start, dur (ns from the first span). */
  name: string;
  row: string;
  depth: string;
  start: string;
  dur: string;
  /** Attributes: span position k -> JSON text. */
  args: Record<number, string>;
  /** Flame graph: node k has name fgName[k] (names index), parent fgParent[k] (-1: root), total ns fgTotal[k]. */
  fgName: number[];
  fgParent: number[];
  fgTotal: number[];
  /** Counter tracks, drawn as rows after the span rows, in the trace's order. */
  counters: ViewCounter[];
  truncated: boolean;
}

export interface ViewCounter {
  name: string;
  /** base64 Float64 columns in time order: sample times (ns from the same zero as the spans' starts) and values. */
  ts: string;
  value: string;
  min: number;
  max: number;
}

const b64 = (a: Int32Array | Float64Array): string => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');

export function buildView(
  path: string,
  opts?: ReadOptions,
): { data: ViewData; summary: ReadSummary; spans: number; rows: number; counters: number } {
  const c = new Collected('all');
  const summary = readTrace(path, c, opts);
  const n = c.count;
  const lay = c.layout();
  const start = c.startNs.view();
  const end = c.endNs.view();
  const tl = c.timelineOf.view();
  const nameOf = c.nameOf.view();

  // Rows: each timeline's lanes, in timeline order.
  const firstRow = new Int32Array(c.timelines.length);
  const rows: string[] = [];
  c.timelines.forEach((t, k) => {
    firstRow[k] = rows.length;
    const lanes = lay.lanesOf[k];
    for (let l = 0; l < lanes; l++) rows.push(lanes > 1 ? `${t.name} #${String(l + 1)}` : t.name);
  });
  const rowOf = (i: number): number => firstRow[tl[i]] + lay.lane[i];
  const rowDepths = new Array<number>(rows.length).fill(1);
  let t0 = Infinity;
  for (let i = 0; i < n; i++) {
    const r = rowOf(i);
    rowDepths[r] = Math.max(rowDepths[r], lay.depth[i] + 1);
    if (start[i] < t0) t0 = start[i];
  }
  const series = [...c.counters.values()].map((k) => ({ name: c.timelines[k.timeline]?.name ?? '?', ...timeOrdered(k.ts.view(), k.values.view()) }));
  for (const k of series) if (k.ts.length > 0 && k.ts[0] < t0) t0 = k.ts[0];
  if (t0 === Infinity) t0 = 0;
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => rowOf(a) - rowOf(b) || lay.depth[a] - lay.depth[b] || start[a] - start[b] || a - b,
  );
  const cName = new Int32Array(n);
  const cRow = new Int32Array(n);
  const cDepth = new Int32Array(n);
  const cStart = new Float64Array(n);
  const cDur = new Float64Array(n);
  const args: Record<number, string> = {};
  order.forEach((i, k) => {
    cName[k] = nameOf[i];
    cRow[k] = rowOf(i);
    cDepth[k] = lay.depth[i];
    cStart[k] = start[i] - t0;
    cDur[k] = end[i] - start[i];
    const a = c.argsText.get(i);
    if (a !== undefined) args[k] = a;
  });

  // Flame graph: the same name path under the same parent path is one node.
  const fgName: number[] = [];
  const fgParent: number[] = [];
  const fgTotal: number[] = [];
  const child = new Map<string, number>();
  const node = new Int32Array(n);
  const byDepth = Array.from({ length: n }, (_, i) => i).sort((a, b) => lay.depth[a] - lay.depth[b]);
  for (const i of byDepth) {
    const up = lay.parent[i] >= 0 ? node[lay.parent[i]] : -1;
    const key = `${String(up)}:${String(nameOf[i])}`;
    let id = child.get(key);
    if (id === undefined) {
      id = fgName.length;
      child.set(key, id);
      fgName.push(nameOf[i]);
      fgParent.push(up);
      fgTotal.push(0);
    }
    node[i] = id;
    fgTotal[id] += end[i] - start[i];
  }

  const data: ViewData = {
    title: path,
    rows,
    rowDepths,
    names: c.names,
    name: b64(cName),
    row: b64(cRow),
    depth: b64(cDepth),
    start: b64(cStart),
    dur: b64(cDur),
    args,
    fgName,
    fgParent,
    fgTotal,
    counters: series.map((k) => {
      let min = Infinity;
      let max = -Infinity;
      for (let i = 0; i < k.values.length; i++) {
        k.ts[i] -= t0;
        if (k.values[i] < min) min = k.values[i];
        if (k.values[i] > max) max = k.values[i];
      }
      return { name: k.name, ts: b64(k.ts), value: b64(k.values), min, max };
    }),
    truncated: summary.truncated,
  };
  return { data, summary, spans: n, rows: rows.length, counters: series.length };
}

/** Copies of a series' columns sorted by time (stable: samples at one time keep their file order). */
function timeOrdered(ts: Float64Array, values: Float64Array): { ts: Float64Array; values: Float64Array } {
  let sorted = true;
  for (let i = 1; i < ts.length && sorted; i++) sorted = ts[i - 1] <= ts[i];
  if (sorted) return { ts: ts.slice(), values: values.slice() };
  const order = Array.from({ length: ts.length }, (_, i) => i).sort((a, b) => ts[a] - ts[b] || a - b);
  return { ts: Float64Array.from(order, (i) => ts[i]), values: Float64Array.from(order, (i) => values[i]) };
}

/** The page with `data` embedded; '<' escaped so no string in the trace can close the script element. */
export function viewHtml(data: ViewData): string {
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return VIEW_PAGE.replace('/*HOTSPAN_TITLE*/', () => escapeHtml(data.title)).replace('/*HOTSPAN_DATA*/', () => json);
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (ch) => `&#${String(ch.charCodeAt(0))};`);
}

export function writeView(input: string, output: string, opts?: ReadOptions): { spans: number; rows: number; counters: number; summary: ReadSummary } {
  const v = buildView(input, opts);
  try {
    writeFileSync(output, viewHtml(v.data));
  } catch (e) {
    throw new TraceFileError(output, `cannot write: ${(e as Error).message}`);
  }
  return { spans: v.spans, rows: v.rows, counters: v.counters, summary: v.summary };
}
