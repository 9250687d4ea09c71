// A TraceSink that keeps a trace as columns (name id, timeline index, start,
// end), with attributes either for every span (the view's tooltips) or for
// the slowest few only (the report), so a big trace costs 24 bytes a span.

import { Column, layOut, type Layout } from './layout';
import { SampleColumns } from './hot-functions';
import type { Args, TraceFrame, TraceSink, TraceSpan, TraceTimeline } from './trace-model';

export interface Counter {
  readonly timeline: number;
  /** Sample times (ns) and values, in file order. */
  readonly ts: Column<Float64Array>;
  readonly values: Column<Float64Array>;
}

export interface SlowSpan {
  readonly index: number;
  readonly durNs: number;
  readonly args: Args | undefined;
}

export class Collected implements TraceSink {
  readonly timelines: TraceTimeline[] = [];
  private readonly timelineIndex = new Map<string, number>();
  readonly names: string[] = [];
  private readonly nameIndex = new Map<string, number>();
  readonly nameOf = new Column(new Int32Array(1024));
  readonly timelineOf = new Column(new Int32Array(1024));
  readonly startNs = new Column(new Float64Array(1024));
  readonly endNs = new Column(new Float64Array(1024));
  /** Attribute JSON text per span index (keepArgs 'all'). */
  readonly argsText = new Map<number, string>();
  readonly counters = new Map<number, Counter>();
  /** Process names the trace gives, by pid. */
  readonly processNames = new Map<number, string>();
  /** CPU samples (their top frames and stacks), by thread timeline key, and the async tracks' processes. */
  readonly samples = new SampleColumns();
  /** keepArgs as a number: the slowest spans, a min-heap on duration. */
  private readonly slow: SlowSpan[] = [];

  constructor(private readonly keepArgs: 'all' | number) {}

  get count(): number {
    return this.startNs.length;
  }

  timeline(t: TraceTimeline): void {
    if (this.timelineIndex.has(t.key)) return;
    this.timelineIndex.set(t.key, this.timelines.length);
    this.timelines.push(t);
    this.samples.timeline(t);
  }

  process(pid: number, name: string): void {
    this.processNames.set(pid, name);
  }

  private nameId(name: string): number {
    let id = this.nameIndex.get(name);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(name);
      this.nameIndex.set(name, id);
    }
    return id;
  }

  span(s: TraceSpan): void {
    const index = this.count;
    this.nameOf.push(this.nameId(s.name));
    this.timelineOf.push(this.timelineIndex.get(s.timeline) ?? -1);
    this.startNs.push(s.startNs);
    this.endNs.push(s.endNs);
    if (this.keepArgs === 'all') {
      if (s.args !== undefined) this.argsText.set(index, JSON.stringify(s.args));
    } else if (this.keepArgs > 0) {
      this.keepSlow({ index, durNs: s.endNs - s.startNs, args: s.args });
    }
  }

  counter(timeline: string, tsNs: number, value: number): void {
    const tl = this.timelineIndex.get(timeline) ?? -1;
    let c = this.counters.get(tl);
    if (c === undefined) this.counters.set(tl, (c = { timeline: tl, ts: new Column(new Float64Array(64)), values: new Column(new Float64Array(64)) }));
    c.ts.push(tsNs);
    c.values.push(value);
  }

  sample(timeline: string, tsNs: number, frame: TraceFrame, pid: number | undefined, stack?: readonly TraceFrame[]): void {
    this.samples.add(timeline, tsNs, frame, pid, stack);
  }

  private keepSlow(s: SlowSpan): void {
    const h = this.slow;
    const k = this.keepArgs as number;
    // Ties go to the earlier span: a later one of equal duration does not displace it.
    const less = (a: SlowSpan, b: SlowSpan): boolean => a.durNs < b.durNs || (a.durNs === b.durNs && a.index > b.index);
    if (h.length === k) {
      if (!less(h[0], s)) return;
      h[0] = s;
    } else {
      h.push(s);
      for (let i = h.length - 1; i > 0; ) {
        const up = (i - 1) >> 1;
        if (!less(h[i], h[up])) break;
        [h[i], h[up]] = [h[up], h[i]];
        i = up;
      }
      return;
    }
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      let m = i;
      if (l < h.length && less(h[l], h[m])) m = l;
      if (l + 1 < h.length && less(h[l + 1], h[m])) m = l + 1;
      if (m === i) break;
      [h[i], h[m]] = [h[m], h[i]];
      i = m;
    }
  }

  /** The slowest spans kept, slowest first. */
  slowest(): SlowSpan[] {
    return [...this.slow].sort((a, b) => b.durNs - a.durNs || a.index - b.index);
  }

  /** Lanes, depths and parents of every span, timeline by timeline; lanes per timeline. */
  layout(): Layout & { lanesOf: Int32Array } {
    const n = this.count;
    const out = { lane: new Int32Array(n), depth: new Int32Array(n), parent: new Int32Array(n), lanes: 0 };
    const byTimeline: Column<Int32Array>[] = this.timelines.map(() => new Column(new Int32Array(16)));
    const tl = this.timelineOf.view();
    for (let i = 0; i < n; i++) byTimeline[tl[i]]?.push(i);
    const start = this.startNs.view();
    const end = this.endNs.view();
    const lanesOf = new Int32Array(this.timelines.length);
    byTimeline.forEach((ids, t) => {
      lanesOf[t] = layOut(ids.view(), start, end, !this.timelines[t].concurrent, out);
    });
    return { ...out, lanesOf };
  }
}
