// The converter's middle: what a trace reader hands over (timelines, spans in
// end order) turned into batches of the core's record columns (the
// NativeSnapshot shape lib/wasm-core.ts encodes) for the incremental writers.
// A thread's spans are held until their tree's root ends (a root: no
// parent_id, or a parent on another timeline, as hotspan's span ids tell),
// then given begin order and depth; so memory is bounded by the largest tree
// and one batch, not by the file. Spans without hotspan's ids are held to
// the end. Track spans pass straight through.

import type { NativeSnapshot } from '../native-binding';
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

/** A span's id split as hotspan makes it: timeline << 32 | local. */
function idOf(v: unknown): { timeline: number; local: number } | undefined {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) return undefined;
  return { timeline: Math.floor(v / TWO32), local: v % TWO32 };
}

/** The number in a reader's timeline key (a Perfetto uuid, or "pid:tid"), when it can be a timeline id. */
function idInKey(key: string): number | undefined {
  const m = /^(?:\d+:)?(\d+)$/.exec(key);
  const n = m === null ? NaN : Number(m[1]);
  return n >= 1 && n < TWO32 ? n : undefined;
}

export class SpanBatches implements TraceSink {
  /** The input's clocks, when it says them. */
  inputClocks: TraceClocks | undefined;
  /** Counter samples read and not converted (the writers have no counter tracks yet). */
  counterSamples = 0;
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
    if (t.kind === 'counter') return;
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
    if (!tl.stack) {
      const id = idOf(s.args?.span_id);
      this.record(tl, s, id?.timeline === tl.id ? id.local : tl.nextLocal++, 0, undefined);
      return;
    }
    tl.pending.push(s);
    const id = idOf(s.args?.span_id);
    if (id === undefined) return;
    const parent = idOf(s.args?.parent_id);
    if (parent === undefined || parent.timeline !== id.timeline) this.tree(tl);
  }

  counter(): void {
    this.counterSamples++;
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
      const id = idOf(s.args?.span_id);
      return id?.timeline === tl.id ? id.local : undefined;
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
      const parent = idOf(s.args?.parent_id);
      if (parent !== undefined) {
        // hotspan's ids: the parent is the innermost open span with its id, if any.
        while (open.length > 0 && locals[open[open.length - 1]] !== parent.local) open.pop();
      } else {
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
    for (const [k, v] of Object.entries(s.args ?? {})) {
      if (k === 'span_id' && idOf(v) !== undefined) continue;
      if (k === 'parent_id' && idOf(v) !== undefined) {
        const p = idOf(v) as { timeline: number; local: number };
        parentTimeline = p.timeline;
        parent = p.local;
        continue;
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
    this.fields.set([name, tl.id, local, parentTimeline, parent, (Math.min(depth, 0xffff) << 16) | flags], 6 * i);
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
      },
      new Set(tls.filter((t) => !t.stack && t.serial).map((t) => t.id)),
    );
    this.count = 0;
    this.newNames = [];
    this.attrs = [];
    this.inBatch.clear();
  }
}
