// `hotspan report`: per-name figures, per-timeline busy time, the slowest
// spans and what the trace says it lost, from a trace file of either format,
// or the files of a rotated stream read as one trace. Percentiles are exact
// (nearest rank over every duration read, lib/read/percentile.ts).

import { percentileOfSorted } from '../read/percentile';
import { Collected } from './collect';
import { hotFunctions, type HotFunction } from './hot-functions';
import { readTrace, type ReadOptions } from './read-trace';
import { describeCut, type Args, type ReadSummary, type RecordingCounts } from './trace-model';

export const SORT_KEYS = ['total', 'self', 'count', 'mean', 'p50', 'p90', 'p99', 'max', 'name'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

/** All times in ns. */
export interface NameRow {
  name: string;
  count: number;
  total: number;
  self: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /**
   * Only when the trace has CPU samples (tracer.profile()): the functions on
   * top of the samples taken inside spans of this name, most self time first
   * (at most HOT_FUNCTIONS).
   */
  hotFunctions?: HotFunction[];
}

/** Hot functions listed per span name. */
export const HOT_FUNCTIONS = 5;

export interface TimelineRow {
  name: string;
  kind: string;
  spans: number;
  /** Time covered by at least one span of the timeline. */
  busy: number;
  /** The process it belongs to, when the trace says. */
  pid?: number;
}

/** One file read. */
export interface FileRead {
  file: string;
  format: ReadSummary['format'];
  bytes: number;
  /** Cut off inside a record: read up to `lastWhole` (a byte offset for Perfetto, a line for Chrome JSON). */
  truncated: boolean;
  lastWhole: NonNullable<ReadSummary['lastWhole']> | null;
  unclosed: number;
  /** Perfetto packets skipped: they need interned data from before the file's start. */
  skipped: number;
  /** Chrome JSON events skipped as malformed (not counted as spans), and what was wrong with the first. */
  malformed: number;
  firstMalformed: string | null;
  /** The recording counts the file carries; null when it has none. */
  counts: RecordingCounts | null;
  /** Traced processes the file lacks (hotspan run: `missing` wrote nothing, `unfinished` only up to their last flush); null when it says nothing. */
  processes: { missing: readonly number[]; unfinished: readonly number[] } | null;
}

/** One process of a trace that holds several (hotspan run's): its own per-name figures and timelines. */
export interface ProcessGroup {
  pid: number;
  /** Its name as the trace gives it (process_name, the process descriptor's); null when it gives none. */
  name: string | null;
  spans: number;
  names: NameRow[];
  timelines: TimelineRow[];
}

export interface Report {
  /** The file read, or the files joined by ", " (a rotated stream's, oldest first). */
  file: string;
  files: FileRead[];
  format: ReadSummary['format'];
  truncated: boolean;
  unclosed: number;
  /** The newest recording counts among the files (the tracer's totals when that file was finished); null when none has them. */
  counts: RecordingCounts | null;
  /** Which file `counts` came from. */
  countsFrom: string | null;
  dropped: number | null;
  overwritten: number | null;
  spans: number;
  /** From the first span's start to the last span's end. */
  duration: number;
  names: NameRow[];
  timelines: TimelineRow[];
  slowest: Array<{ name: string; timeline: string; start: number; dur: number; args: Args }>;
  counters: Array<{ name: string; samples: number; min: number; max: number; mean: number }>;
  /**
   * Per process (by pid, ascending), when the trace holds the spans of
   * several; empty for one process. Its spans are those of its timelines;
   * spans on a timeline of no known process are in the totals only.
   */
  processes: ProcessGroup[];
}

/**
 * The report of one trace file, or of several read as one trace (a rotated
 * stream's files: its timelines continue from file to file; the counts are
 * the newest file's, the one whose totals have produced the most).
 */
export function buildReport(paths: string | readonly string[], top: number, sort: SortKey, opts?: ReadOptions): Report {
  const c = new Collected(top);
  const list = typeof paths === 'string' ? [paths] : paths;
  const files: FileRead[] = list.map((file) => {
    const r = readTrace(file, c, opts);
    return { file, format: r.format, bytes: r.bytes, truncated: r.truncated, lastWhole: r.lastWhole ?? null, unclosed: r.unclosed, skipped: r.skipped, malformed: r.malformed, firstMalformed: r.firstMalformed ?? null, counts: r.counts ?? null, processes: r.processes ?? null };
  });
  // The counts are totals when each file was finished: the newest have produced the most.
  let newest: FileRead | undefined;
  for (const f of files) {
    if (f.counts !== null && (f.counts.produced ?? 0) >= (newest?.counts?.produced ?? -1)) newest = f;
  }
  const n = c.count;
  const start = c.startNs.view();
  const end = c.endNs.view();
  const nameOf = c.nameOf.view();
  const timelineOf = c.timelineOf.view();
  const { parent } = c.layout();

  // Self time: a span's time minus its children's (see layout.ts for what nests).
  const childTotal = new Float64Array(n);
  for (let i = 0; i < n; i++) if (parent[i] >= 0) childTotal[parent[i]] += end[i] - start[i];

  let names = nameRows(c, childTotal, null);
  if (c.samples.count > 0) {
    const hot = hotFunctions(
      c.samples,
      { count: n, nameOf, startNs: start, endNs: end, timelineKeyOf: (i) => c.timelines[timelineOf[i]]?.key ?? '' },
      HOT_FUNCTIONS,
    );
    names.forEach((row, id) => (row.hotFunctions = hot.get(id) ?? []));
  }
  const order = (rows: NameRow[]): NameRow[] =>
    rows.sort((a, b) => (sort === 'name' ? a.name.localeCompare(b.name) : b[sort] - a[sort] || a.name.localeCompare(b.name))).slice(0, top);
  names = order(names);

  // Busy time: the union of each timeline's spans.
  const timelines: TimelineRow[] = c.timelines.map((t) => ({ name: t.name, kind: t.kind, spans: 0, busy: 0, ...(t.pid === undefined ? {} : { pid: t.pid }) }));
  const byTimeline = c.timelines.map(() => [] as number[]);
  for (let i = 0; i < n; i++) byTimeline[timelineOf[i]]?.push(i);
  byTimeline.forEach((ids, t) => {
    ids.sort((a, b) => start[a] - start[b]);
    let busy = 0;
    let from = 0;
    let to = -Infinity;
    for (const i of ids) {
      if (start[i] > to) {
        if (to > -Infinity) busy += to - from;
        from = start[i];
        to = end[i];
      } else if (end[i] > to) {
        to = end[i];
      }
    }
    if (to > -Infinity) busy += to - from;
    timelines[t].spans = ids.length;
    timelines[t].busy = busy;
  });

  // Per process, when there are several: the spans of its timelines.
  const pidOfTimeline = c.timelines.map((t) => t.pid);
  const pids = [...new Set(timelines.flatMap((t) => (t.spans > 0 && t.pid !== undefined ? [t.pid] : [])))];
  const processes: ProcessGroup[] =
    pids.length < 2
      ? []
      : pids
          .sort((a, b) => a - b)
          .map((pid) => {
            const mine = new Uint8Array(c.timelines.length);
            pidOfTimeline.forEach((p, k) => (mine[k] = p === pid ? 1 : 0));
            const rows = nameRows(c, childTotal, (i) => mine[timelineOf[i]] === 1).filter((r) => r.count > 0);
            const tls = timelines.filter((t, k) => mine[k] === 1 && t.spans > 0);
            return { pid, name: c.processNames.get(pid) ?? null, spans: tls.reduce((sum, t) => sum + t.spans, 0), names: order(rows), timelines: tls };
          });

  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < n; i++) {
    if (start[i] < first) first = start[i];
    if (end[i] > last) last = end[i];
  }
  const counters = [...c.counters.values()].map((k) => {
    // A loop, not Math.min(...values): a long series would overflow the call stack.
    let sum = 0;
    let min = Infinity;
    let max = -Infinity;
    for (const v of k.values.view()) {
      sum += v;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    return { name: c.timelines[k.timeline]?.name ?? '?', samples: k.values.length, min, max, mean: sum / k.values.length };
  });
  return {
    file: list.join(', '),
    files,
    format: files[0].format,
    truncated: files.some((f) => f.truncated),
    unclosed: files.reduce((sum, f) => sum + f.unclosed, 0),
    counts: newest?.counts ?? null,
    countsFrom: newest?.file ?? null,
    dropped: newest?.counts?.dropped ?? null,
    overwritten: newest?.counts?.overwritten ?? null,
    spans: n,
    duration: n === 0 ? 0 : last - first,
    names,
    timelines: timelines.filter((t) => t.spans > 0),
    slowest: c.slowest().map((s) => ({
      name: c.names[nameOf[s.index]],
      timeline: c.timelines[timelineOf[s.index]]?.name ?? '?',
      start: start[s.index] - first,
      dur: s.durNs,
      args: s.args ?? {},
    })),
    counters,
    processes,
  };
}

/** Per-name figures over the spans `keep` picks (all when null); names with no span have count 0. */
function nameRows(c: Collected, childTotal: Float64Array, keep: ((i: number) => boolean) | null): NameRow[] {
  const n = c.count;
  const start = c.startNs.view();
  const end = c.endNs.view();
  const nameOf = c.nameOf.view();
  // Durations grouped by name (counting sort by name id), for exact percentiles.
  const counts = new Int32Array(c.names.length + 1);
  for (let i = 0; i < n; i++) if (keep === null || keep(i)) counts[nameOf[i] + 1]++;
  for (let k = 1; k < counts.length; k++) counts[k] += counts[k - 1];
  const durs = new Float64Array(counts[c.names.length]);
  const fill = counts.slice(0, c.names.length);
  const self = new Float64Array(c.names.length);
  for (let i = 0; i < n; i++) {
    if (keep !== null && !keep(i)) continue;
    const d = end[i] - start[i];
    durs[fill[nameOf[i]]++] = d;
    self[nameOf[i]] += d - childTotal[i];
  }
  return c.names.map((name, id) => {
    const ds = durs.subarray(counts[id], counts[id + 1]).sort();
    let total = 0;
    for (const d of ds) total += d;
    return {
      name,
      count: ds.length,
      total,
      self: self[id],
      mean: total / ds.length,
      p50: percentileOfSorted(ds, 50),
      p90: percentileOfSorted(ds, 90),
      p99: percentileOfSorted(ds, 99),
      max: ds[ds.length - 1],
    };
  });
}

/** ns as ms with three decimals (µs resolution). */
export function ms(ns: number): string {
  return (ns / 1e6).toFixed(3);
}

/** A counter value: six significant digits, no exponent for everyday magnitudes. */
function value(v: number): string {
  return String(Number(v.toPrecision(6)));
}

/** The loss the trace reports about itself, or that it reports none. */
function countsText(r: Report): string[] {
  const k = r.counts;
  if (k === null) {
    return ['recording counts: unknown (the file carries none: cut off or killed before it was finished, or not written by hotspan)'];
  }
  const from = r.files.length > 1 ? ` (from ${r.countsFrom ?? '?'})` : '';
  const n = (v: number | undefined): string => (v === undefined ? '?' : String(v));
  const out = [
    `lost while recording: dropped ${n(k.dropped)}, overwritten ${n(k.overwritten)}${from}`,
    `recorded: produced ${n(k.produced)}, kept ${n(k.kept)}, released ${n(k.released)}`,
  ];
  if (k.stream_written !== undefined || k.stream_missed !== undefined) {
    out.push(`stream: wrote ${n(k.stream_written)} records in its files, missed ${n(k.stream_missed)} (lost to the memory budget before it wrote them)`);
  }
  const sampled = k.sampled_out ?? k.stream_sampled_out;
  if (sampled !== undefined) out.push(`sampling: left out ${n(sampled)} spans of traces not kept (not lost: docs/sampling.md)`);
  return out;
}

/** Columns before `leftCols`, and a last column of free text, are left-aligned. */
function table(head: string[], rows: string[][], leftCols = 1, textLast = false): string {
  const w = head.map((h, k) => Math.max(h.length, ...rows.map((r) => r[k].length)));
  const left = (k: number): boolean => k < leftCols || (textLast && k === head.length - 1);
  const line = (r: string[]): string =>
    r.map((cell, k) => (left(k) ? cell.padEnd(w[k]) : cell.padStart(w[k]))).join('  ').trimEnd();
  return [line(head), line(w.map((x) => '-'.repeat(x))), ...rows.map(line)].join('\n');
}

/** Attributes for people: hotspan's span ids left out (they are in --json). */
function shownArgs(args: Args): string {
  const { span_id: _id, parent_id: _parent, ...rest } = args;
  if (Object.keys(rest).length === 0) return '';
  try {
    return JSON.stringify(rest);
  } catch {
    return '(attributes too deeply nested to show)';
  }
}

/** The per-name table: the whole trace's, or one process's. */
function nameTable(names: readonly NameRow[]): string {
  return table(
    ['name', 'count', 'total', 'self', 'mean', 'p50', 'p90', 'p99', 'max'],
    names.map((x) => [x.name, String(x.count), ms(x.total), ms(x.self), ms(x.mean), ms(x.p50), ms(x.p90), ms(x.p99), ms(x.max)]),
  );
}

export function formatReport(r: Report): string {
  const out: string[] = [];
  const formats = [...new Set(r.files.map((f) => (f.format === 'perfetto' ? 'Perfetto protobuf' : 'Chrome JSON')))].join(' and ');
  const several = r.files.length > 1 ? ` (${String(r.files.length)} files read as one trace)` : '';
  out.push(`${r.file}: ${formats}${several}, ${String(r.spans)} spans over ${ms(r.duration)} ms`);
  for (const f of r.files) {
    const who = r.files.length > 1 ? `${f.file}: ` : '';
    if (f.truncated) out.push(`${who}truncated: ${describeCut({ ...f, lastWhole: f.lastWhole ?? undefined })}`);
    if (f.unclosed > 0) out.push(`${who}${String(f.unclosed)} span(s) begun and never ended in the file (not counted)`);
    if (f.skipped > 0) {
      out.push(`${who}${String(f.skipped)} packet(s) skipped: they need interned names from before the file's start (it begins mid-stream)`);
    }
    if (f.malformed > 0) {
      out.push(`${who}${String(f.malformed)} malformed event(s) skipped (not counted); the first: ${f.firstMalformed ?? '?'}`);
    }
    const p = f.processes;
    if (p !== null && p.missing.length > 0) {
      out.push(`${who}${String(p.missing.length)} traced process(es) wrote no trace (killed before their first flush): pid ${p.missing.join(', ')}`);
    }
    if (p !== null && p.unfinished.length > 0) {
      out.push(`${who}${String(p.unfinished.length)} traced process(es) did not finish their trace (killed): spans after their last flush are lost, not counted: pid ${p.unfinished.join(', ')}`);
    }
  }
  out.push(...countsText(r));
  out.push('', 'per name (ms)');
  out.push(nameTable(r.names));
  const hot = r.names.filter((x) => x.hotFunctions !== undefined && x.hotFunctions.length > 0);
  if (hot.length > 0) {
    out.push('', 'hot functions per name (self time of the CPU samples inside its spans, ms)');
    const rows: string[][] = [];
    for (const x of hot) {
      for (const f of x.hotFunctions ?? []) {
        const at = f.url === '' ? '' : `${f.url}${f.line > 0 ? `:${String(f.line)}` : ''}`;
        rows.push([x.name, f.function, ms(f.selfMs * 1e6), String(f.samples), at]);
      }
    }
    out.push(table(['name', 'function', 'self', 'samples', 'location'], rows, 2, true));
  }
  for (const p of r.processes) {
    out.push('', `process ${String(p.pid)}${p.name === null ? '' : ` (${p.name})`}: ${String(p.spans)} spans, per name (ms)`);
    out.push(nameTable(p.names));
  }
  out.push('', 'busy time per thread and track (ms)');
  out.push(
    table(
      ['timeline', 'kind', 'spans', 'busy', 'busy %'],
      r.timelines.map((t) => [
        r.processes.length > 0 && t.pid !== undefined ? `${t.name} (pid ${String(t.pid)})` : t.name,
        t.kind,
        String(t.spans),
        ms(t.busy),
        r.duration > 0 ? ((100 * t.busy) / r.duration).toFixed(1) : '0.0',
      ]),
      2,
    ),
  );
  if (r.counters.length > 0) {
    out.push('', 'counters');
    out.push(
      table(
        ['counter', 'samples', 'min', 'mean', 'max'],
        r.counters.map((k) => [k.name, String(k.samples), value(k.min), value(k.mean), value(k.max)]),
      ),
    );
  }
  out.push('', 'slowest spans (ms from the first span)');
  out.push(
    table(
      ['name', 'timeline', 'start', 'dur', 'attributes'],
      r.slowest.map((s) => [s.name, s.timeline, ms(s.start), ms(s.dur), shownArgs(s.args)]),
      2,
      true,
    ),
  );
  return out.join('\n') + '\n';
}
