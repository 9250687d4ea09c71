// The converter's middle: what a trace reader hands over (processes,
// timelines, spans in end order, counter and CPU samples) turned into batches
// of the core's record columns (the NativeSnapshot shape
// lib/binding/wasm-core.ts encodes) for the incremental writers, one process
// per batch (the writers keep each process's pid, name and timelines apart).
// A thread's spans are held until their tree's root ends (a root: no
// parent_id, or a parent on another timeline, as hotspan's span ids tell),
// then given begin order and depth; so memory is bounded by the largest tree
// and one batch, not by the file. Spans without hotspan's ids are held to
// the end. Track spans pass straight through, and so do counter and CPU
// samples (held at most a batch's worth, like records).

import type { CounterSeries, NativeSnapshot } from '../binding/native-binding';
import { ProfileBatch } from './cpu-profile-batch';
import type { Args, TraceClocks, TraceFrame, TraceSink, TraceSpan, TraceTimeline } from './trace-model';

/** Records (or samples) per batch. */
const BATCH_RECORDS = 16384;
const TWO32 = 4294967296;
// span_record.h SpanFlags
const FLAG_ABANDONED = 1 << 1;
const FLAG_ERROR = 1 << 2;
/** The process of what the input gives no (usable) pid: the writers' default, as a WebAssembly write says. */
const DEFAULT_PID = 1;

interface Timeline {
  id: number;
  name: string;
  pid: number;
  /** A thread: its spans nest (stack); else a track (lanes). */
  stack: boolean;
  serial: boolean;
  /** Spans of a tree whose root has not ended yet. */
  pending: TraceSpan[];
  /** The next local id for a span without hotspan's id. */
  nextLocal: number;
}

/** A process's timeline ids (each process numbers its own, as its writer does). */
interface Process {
  readonly usedIds: Set<number>;
  nextId: number;
}

/** What one process has in the batch being made. */
interface Part {
  /** Its records' indexes in the batch's columns. */
  readonly records: number[];
  readonly timelines: Set<Timeline>;
  /** Counter samples, per counter name: [ms, value] pairs. */
  readonly counters: Map<string, number[]>;
  readonly profiles: Map<Timeline, ProfileBatch>;
}

/** A span id as hotspan makes it (timeline << 32 | local), else undefined. */
function spanId(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined;
}
const timelineOf = (id: number): number => Math.floor(id / TWO32);
const localOf = (id: number): number => id % TWO32;

/**
 * The timeline id a reader's key names, when it can be one: Chrome JSON's
 * "pid:tid" its tid; a Perfetto track uuid its low 32 bits (hotspan's uuids
 * are the timeline id, salted above them by the pid: perfetto_writer.h); a
 * sample's "thread pid:tid" its tid.
 */
function idInKey(key: string): number | undefined {
  const m = /^(?:thread )?(?:\d+:)?(\d+)$/.exec(key);
  if (m === null) return undefined;
  const n = Number(BigInt(m[1]) & 0xffffffffn);
  return n >= 1 ? n : undefined;
}

/** A pid the writers can carry (a u32), else the default. */
const pidOf = (pid: number | undefined): number => (pid !== undefined && Number.isInteger(pid) && pid >= 0 && pid < TWO32 ? pid : DEFAULT_PID);

export class SpanBatches implements TraceSink {
  /** The input's clocks, when it says them. */
  inputClocks: TraceClocks | undefined;
  /** Process names as the input gives them. */
  private readonly processNames = new Map<number, string>();
  private readonly processes = new Map<number, Process>();
  /** Counter tracks by the reader's key: their names and processes. */
  private readonly counterTracks = new Map<string, { name: string; pid: number }>();
  private readonly timelines = new Map<string, Timeline>();
  private readonly nameIds = new Map<string, number>();
  private newNames: string[] = [];
  private readonly times = new Float64Array(2 * BATCH_RECORDS);
  private readonly fields = new Uint32Array(6 * BATCH_RECORDS);
  private count = 0;
  /** Counter and CPU samples in the batch. */
  private sampleCount = 0;
  private attrs = new Map<number, string>();
  /** The batch by process, in the order they came into it. */
  private parts = new Map<number, Part>();
  /** Processes a batch was written for. */
  private readonly written = new Set<number>();

  /** `write` takes each batch of process `pid` (its names: those new since the previous batch) before the next is made. */
  constructor(private readonly write: (batch: NativeSnapshot, serial: ReadonlySet<number>, pid: number, processName: string | undefined) => void) {}

  clocks(c: TraceClocks): void {
    this.inputClocks = c;
  }

  process(pid: number, name: string): void {
    this.processNames.set(pidOf(pid), name);
  }

  timeline(t: TraceTimeline): void {
    const pid = pidOf(t.pid);
    if (t.kind === 'counter') {
      this.counterTracks.set(t.key, { name: t.name, pid });
      return;
    }
    const known = this.timelines.get(t.key);
    if (known !== undefined) {
      // Made for a CPU sample that came first: the thread's own name and kind now.
      known.name = t.name;
      known.stack = t.kind === 'thread';
      known.serial = !t.concurrent;
      return;
    }
    this.timelines.set(t.key, this.newTimeline(t.key, t.name, pid, t.kind === 'thread', !t.concurrent));
  }

  private newTimeline(key: string, name: string, pid: number, stack: boolean, serial: boolean): Timeline {
    let p = this.processes.get(pid);
    if (p === undefined) this.processes.set(pid, (p = { usedIds: new Set(), nextId: 1 }));
    let id = idInKey(key);
    if (id === undefined || p.usedIds.has(id)) {
      while (p.usedIds.has(p.nextId)) p.nextId++;
      id = p.nextId;
    }
    p.usedIds.add(id);
    return { id, name, pid, stack, serial, pending: [], nextLocal: 1 };
  }

  private part(pid: number): Part {
    let p = this.parts.get(pid);
    if (p === undefined) this.parts.set(pid, (p = { records: [], timelines: new Set(), counters: new Map(), profiles: new Map() }));
    return p;
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
    const track = this.counterTracks.get(timeline) ?? { name: timeline, pid: DEFAULT_PID };
    const counters = this.part(track.pid).counters;
    let list = counters.get(track.name);
    if (list === undefined) counters.set(track.name, (list = []));
    list.push(tsNs / 1e6, value);
    if (++this.sampleCount === BATCH_RECORDS) this.flush();
  }

  sample(timeline: string, tsNs: number, frame: TraceFrame, pid: number | undefined, stack?: readonly TraceFrame[]): void {
    let tl = this.timelines.get(timeline);
    if (tl === undefined) {
      // A thread the input has no spans or descriptor for (yet): its samples' timeline.
      tl = this.newTimeline(timeline, '', pidOf(pid), true, true);
      tl.name = `thread ${String(tl.id)}`;
      this.timelines.set(timeline, tl);
    }
    const profiles = this.part(tl.pid).profiles;
    let p = profiles.get(tl);
    if (p === undefined) profiles.set(tl, (p = new ProfileBatch(tl.id)));
    p.add(tsNs / 1e6, stack ?? [frame]);
    if (++this.sampleCount === BATCH_RECORDS) this.flush();
  }

  /** Writes what is still held and the last batch. */
  end(): void {
    for (const tl of this.timelines.values()) if (tl.pending.length > 0) this.tree(tl);
    this.flush();
    // A process the input names and gives nothing else: named all the same, by an empty batch.
    for (const pid of this.processNames.keys()) if (!this.written.has(pid)) this.part(pid);
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
    if (attrs !== undefined) this.attrs.set(i, JSON.stringify(attrs));
    const part = this.part(tl.pid);
    part.records.push(i);
    part.timelines.add(tl);
    if (this.count === BATCH_RECORDS) this.flush();
  }

  /** The batch, a part per process (the first with the names new since the last batch). */
  private flush(): void {
    let names = this.newNames;
    for (const [pid, part] of this.parts) {
      const n = part.records.length;
      let times = this.times.subarray(0, 2 * n);
      let fields = this.fields.subarray(0, 6 * n);
      const attrs: Array<[number, string]> = [];
      if (n === this.count) {
        for (const [i, text] of this.attrs) attrs.push([i, text]);
      } else {
        // Several processes' records: this one's copied out, in their order.
        times = new Float64Array(2 * n);
        fields = new Uint32Array(6 * n);
        part.records.forEach((i, k) => {
          times.set(this.times.subarray(2 * i, 2 * i + 2), 2 * k);
          fields.set(this.fields.subarray(6 * i, 6 * i + 6), 6 * k);
          const text = this.attrs.get(i);
          if (text !== undefined) attrs.push([k, text]);
        });
      }
      const tls = [...part.timelines];
      this.write(
        {
          names,
          timelines: tls.map((t) => ({ id: t.id, name: t.name, kind: t.stack ? 'js' : 'track', exited: false })),
          count: n,
          times,
          fields,
          attrs,
          counters: [...part.counters].map(([name, list]) => counterSeries(name, list)),
          cpuProfiles: [...part.profiles.values()].map((p) => p.columns()),
        },
        new Set(tls.filter((t) => !t.stack && t.serial).map((t) => t.id)),
        pid,
        this.processNames.get(pid),
      );
      names = [];
      this.written.add(pid);
    }
    this.count = 0;
    this.sampleCount = 0;
    this.newNames = names;
    this.attrs = new Map();
    this.parts = new Map();
  }
}

/** [ms, value] pairs as the writers' counter series. */
function counterSeries(name: string, list: number[]): CounterSeries {
  const n = list.length / 2;
  const times = new Float64Array(n);
  const values = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    times[k] = list[2 * k];
    values[k] = list[2 * k + 1];
  }
  return { name, times, values, dropped: 0 };
}
