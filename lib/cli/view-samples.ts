// The CPU samples of `hotspan view`'s model: each sample's row (its thread's),
// time, stack and weight as base64 columns, in (row, time) order; the stacks
// as a tree of interned frames (hot-functions.ts's SampleColumns); and per
// span the samples that fell inside it, by the report's one rule
// (sweepSamples: its thread's samples, and for an async track's span its
// process's). A span's samples are usually a run of consecutive samples (one
// thread, in time order), stored as its first and count; the others (a track
// span over several sampled threads) as a list.

import type { Collected } from './collect';
import { sweepSamples } from './hot-functions';

export interface ViewSamples {
  /** Function names and script urls, interned; frame k: function fnNames[frameFn[k]], url urls[frameUrl[k]], 1-based line frameLine[k] (0: unknown). */
  fnNames: string[];
  urls: string[];
  frameFn: number[];
  frameUrl: number[];
  frameLine: number[];
  /** base64 Int32 columns: stack node k is frame stackFrame[k] called from node stackParent[k] (-1: outermost); parents come first. */
  stackParent: string;
  stackFrame: string;
  /** base64 columns, sample j in (row, time) order: Int32 row, stack (its top node); Float64 ts (the spans' zero), weight (ns, sweepSamples'). */
  row: string;
  ts: string;
  stack: string;
  weight: string;
  /**
   * Spans with samples inside, by span position ascending (Int32 columns):
   * span, first, count. first >= 0: samples first .. first + count - 1;
   * first < 0: list[-1 - first ..] holds its count sample positions.
   */
  span: string;
  first: string;
  count: string;
  list: string;
}

const b64 = (a: Int32Array | Float64Array): string => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');

/**
 * The model's samples, or undefined when the trace has none. rowOf: the row
 * of a sample's thread timeline key; posOf: a span's position in the model;
 * t0: the model's zero (ns).
 */
export function viewSamples(c: Collected, rowOf: (timelineKey: string) => number, posOf: Int32Array, t0: number): ViewSamples | undefined {
  const s = c.samples;
  const m = s.count;
  if (m === 0) return undefined;
  const sTl = s.timelineOf.view();
  const sTs = s.tsNs.view();
  const sStack = s.stackOf.view();
  const rowOfTl = s.timelineKeys.map(rowOf);
  const order = Array.from({ length: m }, (_, i) => i).sort((a, b) => rowOfTl[sTl[a]] - rowOfTl[sTl[b]] || sTs[a] - sTs[b] || a - b);
  const pos = new Int32Array(m);
  order.forEach((i, j) => (pos[i] = j));
  const row = Int32Array.from(order, (i) => rowOfTl[sTl[i]]);
  const ts = Float64Array.from(order, (i) => sTs[i] - t0);
  const stack = Int32Array.from(order, (i) => sStack[i]);
  const weight = new Float64Array(m);

  const n = c.count;
  const tl = c.timelineOf.view();
  const spans = {
    count: n,
    nameOf: c.nameOf.view(),
    timelineKeyOf: (i: number) => c.timelines[tl[i]]?.key ?? '',
    startNs: c.startNs.view(),
    endNs: c.endNs.view(),
  };
  // Per span (trace index): its samples' least and greatest position, and how many.
  const lo = new Int32Array(n).fill(-1);
  const hi = new Int32Array(n);
  const count = new Int32Array(n);
  sweepSamples(s, spans, (i, w, containing) => {
    const j = pos[i];
    weight[j] = w;
    for (const sp of containing) {
      if (lo[sp] < 0 || j < lo[sp]) lo[sp] = j;
      if (j > hi[sp]) hi[sp] = j;
      count[sp]++;
    }
  });
  // The spans whose samples are not one run: their lists, filled by a second sweep.
  const lists = new Map<number, number[]>();
  for (let i = 0; i < n; i++) if (count[i] > 0 && hi[i] - lo[i] + 1 !== count[i]) lists.set(i, []);
  if (lists.size > 0) {
    sweepSamples(s, spans, (i, _w, containing) => {
      for (const sp of containing) lists.get(sp)?.push(pos[i]);
    });
  }
  const withSamples: number[] = [];
  for (let i = 0; i < n; i++) if (count[i] > 0) withSamples.push(i);
  withSamples.sort((a, b) => posOf[a] - posOf[b]);
  const list: number[] = [];
  const first = Int32Array.from(withSamples, (i) => {
    const l = lists.get(i);
    if (l === undefined) return lo[i];
    l.sort((a, b) => a - b);
    const at = list.length;
    for (const j of l) list.push(j);
    return -1 - at;
  });

  const fnIndex = new Map<string, number>();
  const urlIndex = new Map<string, number>();
  const intern = (index: Map<string, number>, text: string): number => {
    let id = index.get(text);
    if (id === undefined) index.set(text, (id = index.size));
    return id;
  };
  const frameFn = s.frames.map((f) => intern(fnIndex, f.function === '' ? '(anonymous)' : f.function));
  const frameUrl = s.frames.map((f) => intern(urlIndex, f.url));
  return {
    fnNames: [...fnIndex.keys()],
    urls: [...urlIndex.keys()],
    frameFn,
    frameUrl,
    frameLine: s.frames.map((f) => f.line),
    stackParent: b64(Int32Array.from(s.stackParent)),
    stackFrame: b64(Int32Array.from(s.stackFrame)),
    row: b64(row),
    ts: b64(ts),
    stack: b64(stack),
    weight: b64(weight),
    span: b64(Int32Array.from(withSamples, (i) => posOf[i])),
    first: b64(first),
    count: b64(Int32Array.from(withSamples, (i) => count[i])),
    list: b64(Int32Array.from(list)),
  };
}
