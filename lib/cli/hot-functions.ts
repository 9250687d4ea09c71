// CPU samples as a trace reader hands them over (the function on top of each
// sample's stack), and the report's hot functions per span name: the
// functions whose samples fell inside spans of that name, by self time.
//
// Which spans a sample falls inside: the spans of its own thread that contain
// its time, and the spans of its process's async tracks (hotspan/auto's
// `http server`, `fetch`, ...) that contain its time. A trace says which
// process wrote a track, not which thread began each of its spans, so a track
// span takes the samples of every sampled thread of its process (the main
// thread and its joined workers); spans that overlap in time (concurrent
// requests) share the samples taken while both were open.

import { Column } from './layout';
import { StackTrie } from './cpu-profile-batch';
import type { TraceFrame, TraceTimeline } from './trace-model';

/** One function of a span name's hot list. */
export interface HotFunction {
  /** '(anonymous)' for a function without a name; V8's '(program)', '(garbage collector)', '(idle)' as V8 names them. */
  function: string;
  url: string;
  /** 1-based line of the function's start; 0 when unknown. */
  line: number;
  /** Self time: the samples' weight, in ms. */
  selfMs: number;
  samples: number;
}

/**
 * The samples of a trace: per sample its thread's timeline key, time (ns) and
 * top frame; per sampled thread its process; per async track its process.
 */
export class SampleColumns {
  readonly frames: TraceFrame[] = [];
  private readonly frameIndex = new Map<string, number>();
  readonly timelineKeys: string[] = [];
  /** The process of each sampled thread (by index in timelineKeys). */
  readonly processOf: string[] = [];
  private readonly timelineIndex = new Map<string, number>();
  /** Per async (concurrent) track's timeline key, the process that wrote it. */
  readonly trackProcess = new Map<string, string>();
  readonly timelineOf = new Column(new Int32Array(256));
  readonly tsNs = new Column(new Float64Array(256));
  readonly frameOf = new Column(new Int32Array(256));
  /**
   * Stacks as a tree of nodes: node k is frame stackFrame[k] called from node
   * stackParent[k] (-1: outermost). A parent's node is made before its
   * children's. Per sample, its stack's top node.
   */
  private readonly stacks = new StackTrie((f) => this.frameId(f));
  readonly stackParent: readonly number[] = this.stacks.nodeParent;
  readonly stackFrame: readonly number[] = this.stacks.nodeFrame;
  readonly stackOf = new Column(new Int32Array(256));

  get count(): number {
    return this.tsNs.length;
  }

  /** A timeline of the trace: an async track's process is kept (the first announcement of a key counts). */
  timeline(t: TraceTimeline): void {
    if (t.kind === 'track' && t.concurrent && t.pid !== undefined && !this.trackProcess.has(t.key)) {
      this.trackProcess.set(t.key, String(t.pid));
    }
  }

  private frameId(frame: TraceFrame): number {
    const key = `${frame.function}\0${frame.url}\0${String(frame.line)}`;
    let f = this.frameIndex.get(key);
    if (f === undefined) {
      f = this.frames.length;
      this.frames.push(frame);
      this.frameIndex.set(key, f);
    }
    return f;
  }

  add(timeline: string, tsNs: number, frame: TraceFrame, pid: number | undefined, stack?: readonly TraceFrame[]): void {
    const f = this.frameId(frame);
    // A sample without a stack: its top frame alone.
    const s = this.stacks.node(stack !== undefined && stack.length > 0 ? stack : [frame]);
    let t = this.timelineIndex.get(timeline);
    if (t === undefined) {
      t = this.timelineKeys.length;
      this.timelineKeys.push(timeline);
      this.processOf.push(pid === undefined ? '' : String(pid)); // '': no track's process
      this.timelineIndex.set(timeline, t);
    }
    this.timelineOf.push(t);
    this.tsNs.push(tsNs);
    this.frameOf.push(f);
    this.stackOf.push(s);
  }
}

/** The spans the samples are matched with: per span its name id, timeline key, start and end (ns). */
export interface SpanColumns {
  readonly count: number;
  readonly nameOf: Int32Array;
  readonly timelineKeyOf: (span: number) => string;
  readonly startNs: Float64Array;
  readonly endNs: Float64Array;
}

/**
 * The one rule of which spans a sample falls inside (see the top of this
 * file) and what it weighs: visit(sample, weight ns, spans) for every sample,
 * thread by thread in time order, with the spans containing it (its thread's,
 * nested, outermost first, then its process's async track spans; none when
 * it fell outside every span). A sample weighs the time to its thread's next
 * sample, at most twice the thread's median interval (so the gap between two
 * profiles counts nothing); the last sample weighs the median interval.
 */
export function sweepSamples(samples: SampleColumns, spans: SpanColumns, visit: (sample: number, weightNs: number, containing: readonly number[]) => void): void {
  if (samples.count === 0) return;
  const sTl = samples.timelineOf.view();
  const sTs = samples.tsNs.view();
  // Spans grouped by timeline key (a thread's) or by process (an async track's), by start.
  const spansBy = new Map<string, number[]>();
  const trackSpansBy = new Map<string, number[]>();
  for (let i = 0; i < spans.count; i++) {
    const key = spans.timelineKeyOf(i);
    const proc = samples.trackProcess.get(key);
    const by = proc === undefined ? spansBy : trackSpansBy;
    let list = by.get(proc ?? key);
    if (list === undefined) by.set(proc ?? key, (list = []));
    list.push(i);
  }
  const byStart = (a: number, b: number): number => spans.startNs[a] - spans.startNs[b] || spans.endNs[b] - spans.endNs[a] || a - b;
  for (const list of spansBy.values()) list.sort(byStart);
  for (const list of trackSpansBy.values()) list.sort(byStart);
  const samplesBy = new Map<number, number[]>();
  for (let i = 0; i < samples.count; i++) {
    let list = samplesBy.get(sTl[i]);
    if (list === undefined) samplesBy.set(sTl[i], (list = []));
    list.push(i);
  }
  const containing: number[] = [];
  for (const [tl, ids] of samplesBy) {
    ids.sort((a, b) => sTs[a] - sTs[b] || a - b);
    const deltas: number[] = [];
    for (let k = 1; k < ids.length; k++) deltas.push(sTs[ids[k]] - sTs[ids[k - 1]]);
    deltas.sort((a, b) => a - b);
    const median = deltas.length === 0 ? 0 : deltas[deltas.length >> 1];
    const list = spansBy.get(samples.timelineKeys[tl]) ?? [];
    const tracks = trackSpansBy.get(samples.processOf[tl]) ?? [];
    // A sweep: `open` holds the thread's spans (nested, innermost last) that
    // contain the sample's time; `active`, the process's track spans that do
    // (they may overlap in any way).
    const open: number[] = [];
    const active: number[] = [];
    let next = 0;
    let nextTrack = 0;
    for (let k = 0; k < ids.length; k++) {
      const s = ids[k];
      const ts = sTs[s];
      while (next < list.length && spans.startNs[list[next]] <= ts) {
        const sp = list[next++];
        while (open.length > 0 && spans.endNs[open[open.length - 1]] < spans.startNs[sp]) open.pop();
        open.push(sp);
      }
      while (open.length > 0 && spans.endNs[open[open.length - 1]] < ts) open.pop();
      while (nextTrack < tracks.length && spans.startNs[tracks[nextTrack]] <= ts) active.push(tracks[nextTrack++]);
      let kept = 0;
      for (const sp of active) if (spans.endNs[sp] >= ts) active[kept++] = sp;
      active.length = kept;
      const weight = k + 1 < ids.length ? Math.min(sTs[ids[k + 1]] - ts, 2 * median) : median;
      containing.length = 0;
      // A span that ended before ts under one that did not: not containing.
      for (const sp of open) if (spans.endNs[sp] >= ts) containing.push(sp);
      for (const sp of active) containing.push(sp);
      visit(s, weight, containing);
    }
  }
}

/**
 * Per span name id, its `top` hot functions: the top frames of the samples
 * inside spans of that name (sweepSamples; a name counted once per sample),
 * by self time.
 */
export function hotFunctions(samples: SampleColumns, spans: SpanColumns, top: number): Map<number, HotFunction[]> {
  const out = new Map<number, HotFunction[]>();
  const sFrame = samples.frameOf.view();
  // Per name id, per frame: [samples, weight ns].
  const acc = new Map<number, Map<number, [number, number]>>();
  const seen = new Set<number>();
  sweepSamples(samples, spans, (s, weight, containing) => {
    seen.clear();
    for (const sp of containing) {
      const name = spans.nameOf[sp];
      if (seen.has(name)) continue;
      seen.add(name);
      let byFrame = acc.get(name);
      if (byFrame === undefined) acc.set(name, (byFrame = new Map()));
      const cell = byFrame.get(sFrame[s]);
      if (cell === undefined) byFrame.set(sFrame[s], [1, weight]);
      else {
        cell[0]++;
        cell[1] += weight;
      }
    }
  });
  for (const [name, byFrame] of acc) {
    const rows = [...byFrame].map(([f, [n, w]]): HotFunction => {
      const fr = samples.frames[f];
      return { function: fr.function === '' ? '(anonymous)' : fr.function, url: fr.url, line: fr.line, selfMs: w / 1e6, samples: n };
    });
    rows.sort((a, b) => b.selfMs - a.selfMs || b.samples - a.samples || a.function.localeCompare(b.function));
    out.set(name, rows.slice(0, top));
  }
  return out;
}
