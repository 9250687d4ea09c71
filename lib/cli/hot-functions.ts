// CPU samples as a trace reader hands them over (the function on top of each
// sample's stack), and the report's hot functions per span name: the
// functions whose samples fell inside spans of that name, by self time.

import { Column } from './layout';
import type { TraceFrame } from './trace-model';

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

/** The samples of a trace: per sample its thread's timeline key, time (ns) and top frame. */
export class SampleColumns {
  readonly frames: TraceFrame[] = [];
  private readonly frameIndex = new Map<string, number>();
  readonly timelineKeys: string[] = [];
  private readonly timelineIndex = new Map<string, number>();
  readonly timelineOf = new Column(new Int32Array(256));
  readonly tsNs = new Column(new Float64Array(256));
  readonly frameOf = new Column(new Int32Array(256));

  get count(): number {
    return this.tsNs.length;
  }

  add(timeline: string, tsNs: number, frame: TraceFrame): void {
    const key = `${frame.function}\0${frame.url}\0${String(frame.line)}`;
    let f = this.frameIndex.get(key);
    if (f === undefined) {
      f = this.frames.length;
      this.frames.push(frame);
      this.frameIndex.set(key, f);
    }
    let t = this.timelineIndex.get(timeline);
    if (t === undefined) {
      t = this.timelineKeys.length;
      this.timelineKeys.push(timeline);
      this.timelineIndex.set(timeline, t);
    }
    this.timelineOf.push(t);
    this.tsNs.push(tsNs);
    this.frameOf.push(f);
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
 * Per span name id, its `top` hot functions. A sample belongs to every span
 * of its thread that contains its time (a name counted once per sample), and
 * weighs the time to its thread's next sample, at most twice the thread's
 * median interval (so the gap between two profiles counts nothing); the last
 * sample weighs the median interval.
 */
export function hotFunctions(samples: SampleColumns, spans: SpanColumns, top: number): Map<number, HotFunction[]> {
  const out = new Map<number, HotFunction[]>();
  if (samples.count === 0) return out;
  const sTl = samples.timelineOf.view();
  const sTs = samples.tsNs.view();
  const sFrame = samples.frameOf.view();
  // Spans and samples grouped by timeline key.
  const spansBy = new Map<string, number[]>();
  for (let i = 0; i < spans.count; i++) {
    const key = spans.timelineKeyOf(i);
    let list = spansBy.get(key);
    if (list === undefined) spansBy.set(key, (list = []));
    list.push(i);
  }
  const samplesBy = new Map<number, number[]>();
  for (let i = 0; i < samples.count; i++) {
    let list = samplesBy.get(sTl[i]);
    if (list === undefined) samplesBy.set(sTl[i], (list = []));
    list.push(i);
  }
  // Per name id, per frame: [samples, weight ns].
  const acc = new Map<number, Map<number, [number, number]>>();
  for (const [tl, ids] of samplesBy) {
    ids.sort((a, b) => sTs[a] - sTs[b] || a - b);
    const deltas: number[] = [];
    for (let k = 1; k < ids.length; k++) deltas.push(sTs[ids[k]] - sTs[ids[k - 1]]);
    deltas.sort((a, b) => a - b);
    const median = deltas.length === 0 ? 0 : deltas[deltas.length >> 1];
    const list = (spansBy.get(samples.timelineKeys[tl]) ?? []).sort(
      (a, b) => spans.startNs[a] - spans.startNs[b] || spans.endNs[b] - spans.endNs[a] || a - b,
    );
    // A sweep: `open` holds the spans (nested, innermost last) that contain the sample's time.
    const open: number[] = [];
    let next = 0;
    for (let k = 0; k < ids.length; k++) {
      const s = ids[k];
      const ts = sTs[s];
      while (next < list.length && spans.startNs[list[next]] <= ts) {
        const sp = list[next++];
        while (open.length > 0 && spans.endNs[open[open.length - 1]] < spans.startNs[sp]) open.pop();
        open.push(sp);
      }
      while (open.length > 0 && spans.endNs[open[open.length - 1]] < ts) open.pop();
      if (open.length === 0) continue;
      const weight = k + 1 < ids.length ? Math.min(sTs[ids[k + 1]] - ts, 2 * median) : median;
      const seen = new Set<number>();
      for (const sp of open) {
        // A span that ended before ts under one that did not: not containing.
        if (spans.endNs[sp] < ts) continue;
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
    }
  }
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
