// `hotspan view`: one self-contained HTML file (no network) showing a trace:
// a row per thread and per lane of a track, nested spans drawn on a canvas,
// a row per counter track (a step chart), zoom and pan, search, tooltips,
// and a flame graph of where time went. The spans are embedded as base64
// typed-array columns (26 bytes a span before base64), sorted by row, depth
// and start, so the page draws only what falls in view and merges spans
// narrower than a pixel; counter samples likewise (16 bytes a sample), in
// time order, drawn as at most a few points per pixel column. CPU samples
// (view-samples.ts) as columns too, drawn in a strip under their thread's
// row. A trace of several processes (hotspan run) has its rows grouped by
// process, the first process the trace names (the program hotspan run
// started, or the tracer's own) first, then by pid.

import { writeFileSync } from 'node:fs';

import { Collected } from './collect';
import { Column } from './layout';
import { readTrace, type ReadOptions } from './read-trace';
import { TraceFileError, type ReadSummary, type TraceSink, type TraceSpan } from './trace-model';
import { flameGraph } from './view-flame';
import { VIEW_PAGE } from './view-page';
import { viewSamples, type ViewSamples } from './view-samples';

export interface ViewData {
  title: string;
  rows: string[];
  /** Depth levels per row. */
  rowDepths: number[];
  names: string[];
  /** base64 columns, span k in (row, depth, start) order: Int32 name, row, depth; Float64 start, dur (ns from the first span's start). */
  name: string;
  row: string;
  depth: string;
  start: string;
  dur: string;
  /** Attributes: span position k -> JSON text. */
  args: Record<number, string>;
  /** Flame graph (view-flame.ts): node k has name fgName[k] (names index), parent fgParent[k] (-1: root), total ns fgTotal[k]. */
  fgName: number[];
  fgParent: number[];
  fgTotal: number[];
  /** Counter tracks, drawn as rows after the span rows, in the trace's order. */
  counters: ViewCounter[];
  /** Process groups when the rows are of several processes: each from row `row` up to the next group's. */
  groups: Array<{ name: string; row: number }>;
  /** CPU samples, when the trace has them. */
  samples?: ViewSamples;
  truncated: boolean;
}

export interface ViewCounter {
  name: string;
  /** base64 Float64 columns in time order: sample times (ns from the same zero as the spans' starts, so negative before the first span) and values. */
  ts: string;
  value: string;
  /** Least and greatest value; 0 and 0 for a track with no sample. */
  min: number;
  max: number;
}

const b64 = (a: Int32Array | Float64Array): string => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');

export function buildView(
  path: string,
  opts?: ReadOptions,
): { data: ViewData; summary: ReadSummary; spans: number; rows: number; counters: number } {
  const c = new Collected('all');
  const ids = new SpanIds(c);
  const summary = readTrace(path, ids, opts);
  const n = c.count;
  const lay = c.layout();
  const start = c.startNs.view();
  const end = c.endNs.view();
  const tl = c.timelineOf.view();
  const nameOf = c.nameOf.view();

  // Rows: each timeline's lanes, in timeline order within a process group;
  // a thread that has samples and no timeline of its own gets a row.
  const sampled = sampledThreads(c);
  const timelines: Array<{ name: string; pid: number | undefined; lanes: number; k: number; key: string }> = c.timelines.flatMap((t, k) =>
    t.kind === 'counter' ? [] : [{ name: t.name, pid: t.pid, lanes: lay.lanesOf[k], k, key: t.key }],
  );
  // (A trace need not name a thread that has no span: its row is "CPU samples", numbered when its process has several.)
  const perPid = new Map<number | undefined, number>();
  for (const [, pid] of sampled.missing) perPid.set(pid, (perPid.get(pid) ?? 0) + 1);
  const nth = new Map<number | undefined, number>();
  for (const [key, pid] of sampled.missing) {
    nth.set(pid, (nth.get(pid) ?? 0) + 1);
    timelines.push({ name: (perPid.get(pid) ?? 0) > 1 ? `CPU samples #${String(nth.get(pid))}` : 'CPU samples', pid, lanes: 1, k: -1, key });
  }
  const { order: tlOrder, groups: groupOf } = processGroups(timelines, c.processNames);
  const firstRow = new Int32Array(c.timelines.length);
  const rowOfKey = new Map<string, number>();
  const rows: string[] = [];
  const groups: ViewData['groups'] = [];
  for (const x of tlOrder) {
    const g = groupOf.get(x);
    if (g !== undefined) groups.push({ name: g, row: rows.length });
    if (x.k >= 0) firstRow[x.k] = rows.length;
    rowOfKey.set(x.key, rows.length);
    for (let l = 0; l < x.lanes; l++) rows.push(x.lanes > 1 ? `${x.name} #${String(l + 1)}` : x.name);
  }
  const rowOf = (i: number): number => firstRow[tl[i]] + lay.lane[i];
  const rowDepths = new Array<number>(rows.length).fill(1);
  // Zero: the first span's start (the report's zero too); samples before it
  // get negative times. With no span, the first counter or CPU sample.
  let t0 = Infinity;
  for (let i = 0; i < n; i++) {
    const r = rowOf(i);
    rowDepths[r] = Math.max(rowDepths[r], lay.depth[i] + 1);
    if (start[i] < t0) t0 = start[i];
  }
  // Counters of several processes: each after its process's (in the groups' order), named with it.
  const series = processCounters(counterSeries(c), groups.length > 0 ? tlOrder : [], c.processNames);
  if (n === 0) for (const k of series) if (k.ts.length > 0 && k.ts[0] < t0) t0 = k.ts[0];
  if (n === 0) for (const ts of c.samples.tsNs.view()) if (ts < t0) t0 = ts;
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
  const posOf = new Int32Array(n);
  order.forEach((i, k) => {
    posOf[i] = k;
    cName[k] = nameOf[i];
    cRow[k] = rowOf(i);
    cDepth[k] = lay.depth[i];
    cStart[k] = start[i] - t0;
    cDur[k] = end[i] - start[i];
    const a = c.argsText.get(i);
    if (a !== undefined) args[k] = a;
  });

  const parentOf = ids.parents(lay.parent);
  const fg = flameGraph(n, nameOf, (i) => end[i] - start[i], (i) => parentOf[i]);

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
    fgName: fg.name,
    fgParent: fg.parent,
    fgTotal: fg.total,
    counters: series.map((k) => {
      let min = k.values.length === 0 ? 0 : Infinity;
      let max = k.values.length === 0 ? 0 : -Infinity;
      for (let i = 0; i < k.values.length; i++) {
        k.ts[i] -= t0;
        if (k.values[i] < min) min = k.values[i];
        if (k.values[i] > max) max = k.values[i];
      }
      return { name: k.name, ts: b64(k.ts), value: b64(k.values), min, max };
    }),
    groups,
    truncated: summary.truncated,
  };
  const samples = viewSamples(c, (key) => rowOfKey.get(key) ?? -1, posOf, t0);
  if (samples !== undefined) data.samples = samples;
  return { data, summary, spans: n, rows: rows.length, counters: series.length };
}

/**
 * A sink in front of Collected that keeps each span's span_id and parent_id
 * (hotspan's attributes; a file without them nests by time only).
 */
class SpanIds implements TraceSink {
  private readonly id = new Column(new Float64Array(1024));
  private readonly parent = new Column(new Float64Array(1024));

  constructor(private readonly c: Collected) {}

  timeline: TraceSink['timeline'] = (t) => this.c.timeline(t);
  counter: NonNullable<TraceSink['counter']> = (t, ts, v) => this.c.counter(t, ts, v);
  process: NonNullable<TraceSink['process']> = (pid, name) => this.c.process(pid, name);
  sample: NonNullable<TraceSink['sample']> = (t, ts, frame, pid, stack) => this.c.sample(t, ts, frame, pid, stack);
  span(s: TraceSpan): void {
    this.c.span(s);
    const id = s.args?.span_id;
    const parent = s.args?.parent_id;
    this.id.push(typeof id === 'number' && id > 0 ? id : -1);
    this.parent.push(typeof parent === 'number' && parent > 0 ? parent : -1);
  }

  /** Each span's parent index: the span its parent_id names, else byTime's (the span it nests in on its thread). */
  parents(byTime: Int32Array): Int32Array {
    const ids = this.id.view();
    const parentIds = this.parent.view();
    const at = new Map<number, number>();
    for (let i = 0; i < ids.length; i++) if (ids[i] > 0 && !at.has(ids[i])) at.set(ids[i], i);
    const out = Int32Array.from(byTime);
    for (let i = 0; i < parentIds.length; i++) {
      const p = parentIds[i] > 0 ? at.get(parentIds[i]) : undefined;
      if (p !== undefined && p !== i) out[i] = p;
    }
    return out;
  }
}

/** The threads with samples whose timeline the trace never announced: their keys and pids. */
function sampledThreads(c: Collected): { missing: Array<[string, number | undefined]> } {
  const known = new Set(c.timelines.map((t) => t.key));
  const s = c.samples;
  const missing: Array<[string, number | undefined]> = [];
  s.timelineKeys.forEach((key, k) => {
    if (!known.has(key)) missing.push([key, s.processOf[k] === '' ? undefined : Number(s.processOf[k])]);
  });
  return { missing };
}

/**
 * The timelines grouped by process when they are of several: the process of
 * the first timeline that names one first (a joined trace's first part is
 * the program hotspan run started), then by pid, timelines of no process
 * last; in the trace's order within a group. groups: each group's first
 * timeline and its header ("name (pid N)").
 */
function processGroups<T extends { pid: number | undefined }>(
  timelines: T[],
  names: ReadonlyMap<number, string>,
): { order: T[]; groups: Map<T, string> } {
  const pids = [...new Set(timelines.flatMap((t) => (t.pid === undefined ? [] : [t.pid])))];
  const groups = new Map<T, string>();
  if (pids.length < 2) return { order: timelines, groups };
  const first = pids[0];
  pids.sort((a, b) => (a === first ? -1 : b === first ? 1 : a - b));
  const rank = new Map(pids.map((p, i) => [p, i]));
  const at = new Map(timelines.map((t, i) => [t, i]));
  const key = (t: T): number => (t.pid === undefined ? pids.length : (rank.get(t.pid) as number));
  const order = [...timelines].sort((a, b) => key(a) - key(b) || (at.get(a) as number) - (at.get(b) as number));
  let last = -1;
  for (const t of order) {
    if (key(t) === last) continue;
    last = key(t);
    const name = t.pid === undefined ? undefined : names.get(t.pid);
    groups.set(t, t.pid === undefined ? 'no process' : `${name ?? 'process'} (pid ${String(t.pid)})`);
  }
  return { order, groups };
}

/**
 * The counter tracks of a trace of several processes (`order`: the rows'
 * timelines, grouped by process; empty for one process): ordered as the
 * process groups, each named "name · process (pid N)", as its group's header.
 */
function processCounters<T extends { name: string; pid: number | undefined }>(
  series: T[],
  order: ReadonlyArray<{ pid: number | undefined }>,
  names: ReadonlyMap<number, string>,
): T[] {
  if (order.length === 0) return series;
  const rank = new Map<number | undefined, number>();
  for (const t of order) if (!rank.has(t.pid)) rank.set(t.pid, rank.size);
  const at = (k: T): number => rank.get(k.pid) ?? rank.size;
  return series
    .map((k, i) => ({ k, i }))
    .sort((a, b) => at(a.k) - at(b.k) || a.i - b.i)
    .map(({ k }) => ({ ...k, name: k.pid === undefined ? k.name : `${k.name} · ${names.get(k.pid) ?? 'process'} (pid ${String(k.pid)})` }));
}

/** Counter tracks in the trace's order, a track with no sample included, each time ordered. */
function counterSeries(c: Collected): Array<{ name: string; pid: number | undefined; ts: Float64Array; values: Float64Array }> {
  const out: Array<{ name: string; pid: number | undefined; ts: Float64Array; values: Float64Array }> = [];
  const seen = new Set<number>();
  c.timelines.forEach((t, k) => {
    if (t.kind !== 'counter') return;
    seen.add(k);
    const s = c.counters.get(k);
    out.push({ name: t.name, pid: t.pid, ...(s === undefined ? { ts: new Float64Array(0), values: new Float64Array(0) } : timeOrdered(s.ts.view(), s.values.view())) });
  });
  // Samples on a timeline the trace never described (or not as a counter).
  for (const [k, s] of c.counters) if (!seen.has(k)) out.push({ name: c.timelines[k]?.name ?? '?', pid: c.timelines[k]?.pid, ...timeOrdered(s.ts.view(), s.values.view()) });
  return out;
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
