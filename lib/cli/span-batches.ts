// The converter's middle: what a trace reader hands over (timelines, spans in
// end order) turned into batches of the core's record columns (the
// NativeSnapshot shape lib/binding/wasm-core.ts encodes) for the incremental writers.
// A thread's spans are held until their tree's root ends (a root: no
// parent_id, or a parent on another timeline, as hotspan's span ids tell),
// then given begin order and depth; so memory is bounded by the largest tree
// and one batch, not by the file. Spans without hotspan's ids are held to
// the end. Track spans pass straight through, and so do counter samples
// (held at most a batch's worth, like records).

import type { CounterSeries, NativeSnapshot } from '../binding/native-binding';
import type { Args, TraceClocks, TraceSink, TraceSpan, TraceTimeline } from './trace-model';

/** Records per batch. */
const BATCH_RECORDS = 16384;
const TWO32 = 4294967296;
// span_record.h SpanFlags
const FLAG_ABANDONED = 1 << 1;
const FLAG_ERROR = 1 << 2;

interface Timeline {
  id: number;
  name: string;
  /** A thread: its spans nest (stack); else a track (lanes). */
  stack: boolean;
  serial: boolean;
  /** Spans of a tree whose root has not ended yet. */
  pending: TraceSpan[];
  /** The next local id for a span without hotspan's id. */
  nextLocal: number;
}

/** A span id as hotspan makes it (timeline << 32 | local), else undefined. */
function spanId(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined;
}
const timelineOf = (id: number): number => Math.floor(id / TWO32);
const localOf = (id: number): number => id % TWO32;

/** The number in a reader's timeline key (a Perfetto uuid, or "pid:tid"), when it can be a timeline id. */
function idInKey(key: string): number | undefined {
  const m = /^(?:\d+:)?(\d+)$/.exec(key);
  const n = m === null ? NaN : Number(m[1]);
  return n >= 1 && n < TWO32 ? n : undefined;
}

export class SpanBatches implements TraceSink {
  /** The input's clocks, when it says them. */
  inputClocks: TraceClocks | undefined;
  /** Counter tracks by the reader's key: their names. */
  private readonly counterNames = new Map<string, string>();
  /** Samples since the last batch, per counter name: [ms, value] pairs. */
  private samples = new Map<string, number[]>();
  private sampleCount = 0;
  private readonly timelines = new Map<string, Timeline>();
  private readonly usedIds = new Set<number>();
  private nextId = 1;
  private readonly nameIds = new Map<string, number>();
  private newNames: string[] = [];
  private readonly times = new Float64Array(2 * BATCH_RECORDS);
  private readonly fields = new Uint32Array(6 * BATCH_RECORDS);
  private count = 0;
  private attrs: Array<[number, string]> = [];
  private readonly inBatch = new Set<Timeline>();

  /** `write` takes each batch (its names: those new since the previous one) before the next is made. */
  constructor(private readonly write: (batch: NativeSnapshot, serial: ReadonlySet<number>) => void) {}

  clocks(c: TraceClocks): void {
    this.inputClocks = c;
  }

  timeline(t: TraceTimeline): void {
    if (t.kind === 'counter') {
      this.counterNames.set(t.key, t.name);
      return;
    }
    let id = idInKey(t.key);
    if (id === undefined || this.usedIds.has(id)) {
      while (this.usedIds.has(this.nextId)) this.nextId++;
      id = this.nextId;
    }
    this.usedIds.add(id);
    this.timelines.set(t.key, { id, name: t.name, stack: t.kind === 'thread', serial: !t.concurrent, pending: [], nextLocal: 1 });
  }

  span(s: TraceSpan): void {
    const tl = this.timelines.get(s.timeline);
    if (tl === undefined) return;
    const id = spanId(s.args?.span_id);
    if (!tl.stack) {
      this.record(tl, s, id !== undefined && timelineOf(id) === tl.id ? localOf(id) : tl.nextLocal++, 0, undefined);
      return;
    }
    tl.pending.push(s);
    if (id === undefined) return;
    const parent = spanId(s.args?.parent_id);
    if (parent === undefined || timelineOf(parent) !== timelineOf(id)) this.tree(tl);
  }

  counter(timeline: string, tsNs: number, value: number): void {
    const name = this.counterNames.get(timeline) ?? timeline;
    let list = this.samples.get(name);
    if (list === undefined) this.samples.set(name, (list = []));
    list.push(tsNs / 1e6, value);
    if (++this.sampleCount === BATCH_RECORDS) this.flush();
  }

  /** The samples since the last batch as the writers' counter series. */
  private takeCounters(): CounterSeries[] {
    const out: CounterSeries[] = [];
    for (const [name, list] of this.samples) {
      const n = list.length / 2;
      const times = new Float64Array(n);
      const values = new Float64Array(n);
      for (let k = 0; k < n; k++) {
        times[k] = list[2 * k];
        values[k] = list[2 * k + 1];
      }
      out.push({ name, times, values, dropped: 0 });
    }
    this.samples = new Map();
    this.sampleCount = 0;
    return out;
  }

  /** Writes what is still held and the last batch. */
  end(): void {
    for (const tl of this.timelines.values()) if (tl.pending.length > 0) this.tree(tl);
    this.flush();
  }

  /**
   * A thread's held spans, a whole tree (or what is left at the end): in
   * begin order (hotspan's local ids, else start time, outer first), each
   * with its depth, written in the order they came (end order).
   */
  private tree(tl: Timeline): void {
    const spans = tl.pending;
    tl.pending = [];
    const locals = spans.map((s) => {
      const id = spanId(s.args?.span_id);
      return id !== undefined && timelineOf(id) === tl.id ? localOf(id) : undefined;
    });
    const order = [...spans.keys()];
    if (locals.every((l) => l !== undefined)) {
      order.sort((a, b) => (locals[a] as number) - (locals[b] as number));
    } else {
      // Ties: the later-ending one (a parent comes after its children) first.
      order.sort((a, b) => spans[a].startNs - spans[b].startNs || spans[b].endNs - spans[a].endNs || b - a);
      for (const k of order) {
        const l = locals[k];
        if (l === undefined || l < tl.nextLocal) locals[k] = tl.nextLocal++;
        else tl.nextLocal = l + 1;
      }
    }
    const depth: number[] = new Array<number>(spans.length);
    const parentLocal: Array<number | undefined> = new Array<number | undefined>(spans.length);
    const open: number[] = []; // indexes of spans enclosing the current one
    for (const k of order) {
      const s = spans[k];
      const parent = spanId(s.args?.parent_id);
      if (parent !== undefined && timelineOf(parent) === tl.id) {
        // hotspan's ids: the parent is the innermost open span with its id, if any.
        while (open.length > 0 && locals[open[open.length - 1]] !== localOf(parent)) open.pop();
      } else {
        // No parent here (a root, or its parent is on another timeline): nesting by time.
        while (open.length > 0 && (spans[open[open.length - 1]].endNs <= s.startNs || spans[open[open.length - 1]].endNs < s.endNs)) open.pop();
        if (s.args?.span_id === undefined && open.length > 0) parentLocal[k] = locals[open[open.length - 1]];
      }
      depth[k] = open.length;
      open.push(k);
    }
    spans.forEach((s, k) => this.record(tl, s, locals[k] as number, depth[k], parentLocal[k]));
  }

  /** One record into the batch; `parentLocal` for a parent known from nesting alone. */
  private record(tl: Timeline, s: TraceSpan, local: number, depth: number, parentLocal: number | undefined): void {
    let flags = 0;
    let parentTimeline = parentLocal === undefined ? 0 : tl.id;
    let parent = parentLocal ?? 0;
    let attrs: Args | undefined;
    const args = s.args;
    for (const k in args) {
      const v = args[k];
      if (k === 'span_id' && spanId(v) !== undefined) continue;
      if (k === 'parent_id') {
        const p = spanId(v);
        if (p !== undefined) {
          parentTimeline = timelineOf(p);
          parent = localOf(p);
          continue;
        }
      }
      if (k === 'error' && v === true) flags |= FLAG_ERROR;
      else if (k === 'abandoned' && v === true) flags |= FLAG_ABANDONED;
      else (attrs ??= {})[k] = v;
    }
    let name = this.nameIds.get(s.name);
    if (name === undefined) {
      name = this.nameIds.size;
      this.nameIds.set(s.name, name);
      this.newNames.push(s.name);
    }
    const i = this.count++;
    // Columns' times: ms from the origin, as the readers' ns are (TraceClocks).
    this.times[2 * i] = s.startNs / 1e6;
    this.times[2 * i + 1] = s.endNs / 1e6;
    const f = this.fields;
    const at = 6 * i;
    f[at] = name;
    f[at + 1] = tl.id;
    f[at + 2] = local;
    f[at + 3] = parentTimeline;
    f[at + 4] = parent;
    f[at + 5] = (Math.min(depth, 0xffff) << 16) | flags;
    if (attrs !== undefined) this.attrs.push([i, JSON.stringify(attrs)]);
    this.inBatch.add(tl);
    if (this.count === BATCH_RECORDS) this.flush();
  }

  private flush(): void {
    const tls = [...this.inBatch];
    this.write(
      {
        names: this.newNames,
        timelines: tls.map((t) => ({ id: t.id, name: t.name, kind: t.stack ? 'js' : 'track', exited: false })),
        count: this.count,
        times: this.times.subarray(0, 2 * this.count),
        fields: this.fields.subarray(0, 6 * this.count),
        attrs: this.attrs,
        counters: this.takeCounters(),
      },
      new Set(tls.filter((t) => !t.stack && t.serial).map((t) => t.id)),
    );
    this.count = 0;
    this.newNames = [];
    this.attrs = [];
    this.inBatch.clear();
  }
}
