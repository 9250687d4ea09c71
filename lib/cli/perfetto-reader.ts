// Reads Perfetto protobuf traces (a Trace: repeated TracePacket, field 1)
// packet by packet, following the schema rather than one writer's layout:
// per-sequence interning (event and annotation names, string values) and
// incremental-state resets, trace_packet_defaults (clock id, default track),
// ClockSnapshot conversion to one reference clock (with scaled and
// incremental clocks), track descriptors (threads, named tracks, a track's
// lanes as child tracks, counters), TrackEvent slices matched per track and
// CPU samples (perf_sample, perfetto-samples.ts) on their thread's track.

import { P_PERF_SAMPLE, readInternedString, readPerfSample, SampleTables } from './perfetto-samples';
import { ProtoReader, WIRE_FIXED64, WIRE_LEN } from './proto';
import { processLists, recordingCounts, sumCounts, type Args, type AttrValue, type RecordingCounts, type TraceSink } from './trace-model';

// TracePacket
const P_CLOCK_SNAPSHOT = 6;
const P_TIMESTAMP = 8;
const P_SEQUENCE_ID = 10;
const P_TRACK_EVENT = 11;
const P_INTERNED = 12;
const P_SEQUENCE_FLAGS = 13;
const P_STATE_CLEARED = 41;
const P_CLOCK_ID = 58;
const P_DEFAULTS = 59;
const P_TRACK_DESCRIPTOR = 60;
const SEQ_INCREMENTAL_STATE_CLEARED = 1;
const SEQ_NEEDS_INCREMENTAL_STATE = 2;
/** The clock of packets that name none (Perfetto's default trace clock). */
const CLOCK_BOOTTIME = 6;
const CLOCK_REALTIME = 1;
const CLOCK_MONOTONIC = 3;
/**
 * hotspan's own clock (native/core/write/perfetto_writer.h): the first
 * sequence-scoped id, reading performance.now() ns plus this offset.
 */
const HOTSPAN_CLOCK = 64;
const HOTSPAN_CLOCK_OFFSET_NS = 1_000_000_000n;
/** Clock ids from here on are scoped to their sequence. */
const FIRST_SEQUENCE_CLOCK = 64;

// TrackEvent.Type
const SLICE_BEGIN = 1;
const SLICE_END = 2;
const COUNTER = 4;
/**
 * hotspan's recording counts: a track descriptor of this name (under the
 * process track, no events) whose description is a JSON object
 * {"produced": n, "kept": n, ...}, written when a file is finished (a file
 * cut off or killed has none). A trace joined from several processes' files
 * has one per process, each its own uuid (perfetto_writer.h): their sum.
 */
const COUNTS_TRACK_NAME = 'hotspan.counts';
/** `hotspan run`'s join: a descriptor whose description is {"missing": [pid...], "unfinished": [pid...]} (join-parts.ts). */
export const PROCESSES_TRACK_NAME = 'hotspan.processes';

interface Open {
  name: string;
  startNs: number;
  args: Args | undefined;
}

interface Track {
  /** The timeline this track's events belong to (its own uuid, or its parent's for a lane). */
  timeline: string;
  /** A lane's parent track, which is emitted as the timeline. */
  owner: Track | undefined;
  name: string;
  kind: 'thread' | 'track' | 'counter' | 'process';
  pid: number | undefined; // its own (thread, process descriptor) or its parent track's
  emitted: boolean;
  open: Open[];
}

interface ClockDef {
  multiplier: number;
  incremental: boolean;
  /** Incremental clocks: the last value, in the clock's units. */
  last: number;
}

/** Clock readings taken together, in ns, keyed by clockKey(). */
type Snapshot = Map<string, number>;
/** Snapshots kept for conversion (newest last); older ones are dropped, keeping memory bounded. */
const SNAPSHOTS_KEPT = 64;

class Sequence {
  eventNames = new Map<number, string>();
  annotationNames = new Map<number, string>();
  stringValues = new Map<number, string>();
  /** Interned frames and callstacks of CPU samples. */
  readonly samples = new SampleTables();
  clockId: number | undefined;
  defaultTrack: bigint | undefined;
  /** Definitions of this sequence's own clocks (ids from 64). */
  clocks = new Map<number, ClockDef>();
  /** Its incremental state was cleared in this input: packets that need it can be read. */
  valid = false;

  constructor(readonly id: number) {}

  clear(): void {
    this.eventNames.clear();
    this.annotationNames.clear();
    this.stringValues.clear();
    this.samples.clear();
  }
}

/** hotspan's clock: id 64 in ns (not incremental), snapshotted with MONOTONIC. */
function isHotspanClock(id: number, def: ClockDef | undefined): boolean {
  return id === HOTSPAN_CLOCK && def !== undefined && !def.incremental && def.multiplier === 1;
}

/** Builtin clocks are global; ids from 64 belong to their sequence. */
function clockKey(seq: Sequence, id: number): string {
  return id >= FIRST_SEQUENCE_CLOCK ? `${String(seq.id)}/${String(id)}` : String(id);
}

export class PerfettoDecoder {
  private readonly sequences = new Map<number, Sequence>();
  private readonly tracks = new Map<bigint, Track>();
  /** Thread tracks by "pid:tid" (their descriptors'), the timeline a CPU sample of that thread lands on. */
  private readonly threadTracks = new Map<string, string>();
  private readonly snapshots: Snapshot[] = [];
  /**
   * The clock every emitted time is on: hotspan's own clock (its files' times
   * then read on the performance.now() axis, as their JSON has them), else
   * the first builtin clock a timestamp used, or snapshotted.
   */
  private refClock: string | undefined;
  /** Subtracted from times on the reference clock: hotspan's clock offset, or 0. */
  private refOffset = 0;
  /** The first clock snapshot's readings (clock id -> ns), exact, for TraceClocks. */
  private firstReadings: Map<number, bigint> | undefined;
  private clocksTold = false;
  packets = 0;
  /**
   * Packets that need their sequence's incremental state (interned names)
   * from before the input's start, skipped as Perfetto's trace processor
   * does: a file that begins mid-stream.
   */
  skipped = 0;
  /** The last recording counts each COUNTS_TRACK_NAME track carried, by its uuid. */
  private readonly countsByTrack = new Map<bigint, RecordingCounts>();

  constructor(private readonly sink: TraceSink) {}

  /** One TracePacket's bytes. Throws ProtoError on malformed bytes. */
  packet(buf: Uint8Array, start: number, end: number): void {
    this.packets++;
    const r = new ProtoReader(buf, start, end);
    let ts: number | undefined;
    let seqId = 0;
    let flags = 0;
    let cleared = false;
    let clockId: number | undefined;
    let event: ProtoReader | undefined;
    let interned: ProtoReader | undefined;
    let defaults: ProtoReader | undefined;
    let descriptor: ProtoReader | undefined;
    let snapshot: ProtoReader | undefined;
    let perfSample: ProtoReader | undefined;
    while (r.next()) {
      switch (r.field) {
        case P_TIMESTAMP:
          ts = r.varint();
          break;
        case P_SEQUENCE_ID:
          seqId = r.varint();
          break;
        case P_SEQUENCE_FLAGS:
          flags = r.varint();
          break;
        case P_STATE_CLEARED:
          cleared = r.varint() !== 0;
          break;
        case P_CLOCK_ID:
          clockId = r.varint();
          break;
        case P_TRACK_EVENT:
          event = r.sub();
          break;
        case P_INTERNED:
          interned = r.sub();
          break;
        case P_DEFAULTS:
          defaults = r.sub();
          break;
        case P_TRACK_DESCRIPTOR:
          descriptor = r.sub();
          break;
        case P_CLOCK_SNAPSHOT:
          snapshot = r.sub();
          break;
        case P_PERF_SAMPLE:
          perfSample = r.sub();
          break;
        default:
          r.skip();
      }
    }
    let seq = this.sequences.get(seqId);
    if (seq === undefined) {
      seq = new Sequence(seqId);
      this.sequences.set(seqId, seq);
    }
    if (cleared || (flags & SEQ_INCREMENTAL_STATE_CLEARED) !== 0) {
      seq.clear();
      seq.valid = true;
    } else if ((flags & SEQ_NEEDS_INCREMENTAL_STATE) !== 0 && !seq.valid) {
      this.skipped++;
      return;
    }
    if (interned !== undefined) this.interned(seq, interned);
    if (defaults !== undefined) this.defaults(seq, defaults);
    if (snapshot !== undefined) this.clockSnapshot(seq, snapshot);
    if (descriptor !== undefined) this.descriptor(descriptor);
    if (event !== undefined) this.trackEvent(seq, event, ts === undefined ? 0 : this.toRef(seq, clockId ?? seq.clockId ?? CLOCK_BOOTTIME, ts));
    if (perfSample !== undefined && ts !== undefined) this.perfSample(seq, perfSample, this.toRef(seq, clockId ?? seq.clockId ?? CLOCK_BOOTTIME, ts));
  }

  /** A CPU sample: its stack, on the track of its thread (by pid and tid). */
  private perfSample(seq: Sequence, r: ProtoReader, tsNs: number): void {
    const s = readPerfSample(r);
    if (s.callstack === 0) return;
    const stack = seq.samples.stack(s.callstack);
    if (stack === undefined) return;
    const thread = `${String(s.pid)}:${String(s.tid)}`;
    this.sink.sample?.(this.threadTracks.get(thread) ?? `thread ${thread}`, tsNs, stack[stack.length - 1], Number(s.pid), stack);
  }

  /** Spans still open at the end of the input. */
  unclosed(): number {
    let n = 0;
    for (const t of this.tracks.values()) n += t.open.length;
    return n;
  }

  private interned(seq: Sequence, r: ProtoReader): void {
    while (r.next()) {
      if (r.wire !== WIRE_LEN) r.skip();
      else if (r.field === 2) readInternedString(seq.eventNames, r.sub());
      else if (r.field === 3) readInternedString(seq.annotationNames, r.sub());
      else if (r.field === 29) readInternedString(seq.stringValues, r.sub());
      else if (!seq.samples.interned(r.field, r)) r.skip();
    }
  }

  private defaults(seq: Sequence, r: ProtoReader): void {
    while (r.next()) {
      if (r.field === 58) {
        seq.clockId = r.varint();
      } else if (r.field === 11 && r.wire === WIRE_LEN) {
        const d = r.sub();
        while (d.next()) {
          if (d.field === 11) seq.defaultTrack = d.varintBig();
          else d.skip();
        }
      } else {
        r.skip();
      }
    }
  }

  private clockSnapshot(seq: Sequence, r: ProtoReader): void {
    const snap: Snapshot = new Map();
    const exact = this.firstReadings === undefined ? new Map<number, bigint>() : undefined;
    while (r.next()) {
      if (r.field !== 1 || r.wire !== WIRE_LEN) {
        r.skip();
        continue;
      }
      const c = r.sub();
      let id = 0;
      let value = 0;
      let incremental = false;
      let multiplier = 1;
      while (c.next()) {
        if (c.field === 1) id = c.varint();
        else if (c.field === 2) {
          const v = c.varintBig();
          value = Number(v);
          exact?.set(id, v);
        }
        else if (c.field === 3) incremental = c.varint() !== 0;
        else if (c.field === 4) multiplier = c.varint();
        else c.skip();
      }
      if (id >= FIRST_SEQUENCE_CLOCK) seq.clocks.set(id, { multiplier, incremental, last: value });
      if (multiplier !== 1) exact?.delete(id);
      snap.set(clockKey(seq, id), value * multiplier);
    }
    this.snapshots.push(snap);
    if (this.snapshots.length > SNAPSHOTS_KEPT) this.snapshots.shift();
    this.firstReadings ??= exact;
  }

  /**
   * The clocks, once the reference clock is known: on hotspan's clock the
   * times are ns from its origin (where that clock puts the performance.now()
   * zero), on MONOTONIC ns from 0; the first snapshot must have MONOTONIC and
   * REALTIME.
   */
  private tellClocks(): void {
    this.clocksTold = true;
    const first = this.firstReadings;
    const mono = first?.get(CLOCK_MONOTONIC);
    const real = first?.get(CLOCK_REALTIME);
    if (mono === undefined || real === undefined) return;
    const ours = first?.get(HOTSPAN_CLOCK);
    let originNs: bigint;
    if (this.refOffset !== 0 && ours !== undefined) originNs = mono - (ours - HOTSPAN_CLOCK_OFFSET_NS);
    else if (this.refClock === String(CLOCK_MONOTONIC)) originNs = 0n;
    else return;
    this.sink.clocks?.({ originNs, monotonicNs: mono, realtimeNs: real, boottimeNs: first?.get(CLOCK_BOOTTIME) ?? -1n });
  }

  /** The snapshot the reference clock was chosen by: kept past SNAPSHOTS_KEPT for the other sequences of a joined trace. */
  private refSnapshot: Snapshot | undefined;

  private newestSnapshot(ok: (s: Snapshot) => boolean): Snapshot | undefined {
    for (let k = this.snapshots.length - 1; k >= 0; k--) if (ok(this.snapshots[k])) return this.snapshots[k];
    return undefined;
  }

  /** A timestamp on clock `id` as ns on the reference clock, through the newest snapshot that has both. */
  private toRef(seq: Sequence, id: number, ts: number): number {
    const def = id >= FIRST_SEQUENCE_CLOCK ? seq.clocks.get(id) : undefined;
    let ns = ts;
    if (def !== undefined) {
      if (def.incremental) def.last += ts;
      ns = (def.incremental ? def.last : ts) * def.multiplier;
    }
    const key = clockKey(seq, id);
    if (this.refClock === undefined) {
      const withIt = this.newestSnapshot((s) => s.has(key));
      this.refSnapshot = withIt;
      if (isHotspanClock(id, def) && withIt?.has(String(CLOCK_MONOTONIC)) === true) {
        this.refClock = key;
        this.refOffset = Number(HOTSPAN_CLOCK_OFFSET_NS);
      } else {
        // A sequence's own clock is a unit, not a time base: refer to a builtin clock it was snapshotted with.
        this.refClock = def === undefined ? key : [...(withIt?.keys() ?? [])].find((k) => !k.includes('/')) ?? key;
      }
    }
    if (key === this.refClock) return ns - this.refOffset;
    const ref = this.refClock;
    const snap = this.newestSnapshot((s) => s.has(key) && s.has(ref));
    if (snap !== undefined) return ns - (snap.get(key) as number) + (snap.get(ref) as number) - this.refOffset;
    // Another sequence's own clock (a trace joined from several processes' files): through a builtin clock
    // both sequences were snapshotted with, MONOTONIC first (its ns are exact as doubles).
    for (const b of [String(CLOCK_MONOTONIC), String(CLOCK_BOOTTIME), String(CLOCK_REALTIME)]) {
      const sk = this.newestSnapshot((s) => s.has(key) && s.has(b));
      const sr = this.newestSnapshot((s) => s.has(ref) && s.has(b)) ?? (this.refSnapshot?.has(b) === true ? this.refSnapshot : undefined);
      if (sk === undefined || sr === undefined) continue;
      const onB = ns - (sk.get(key) as number) + (sk.get(b) as number);
      return onB - (sr.get(b) as number) + (sr.get(ref) as number) - this.refOffset;
    }
    return ns;
  }

  private descriptor(r: ProtoReader): void {
    let uuid = 0n;
    let parent: bigint | undefined;
    let name: string | undefined;
    let threadName: string | undefined;
    let tid: number | undefined;
    let pid: number | undefined;
    let kind: Track['kind'] = 'track';
    let processName: string | undefined;
    let description: string | undefined;
    while (r.next()) {
      switch (r.field) {
        case 14:
          description = r.string();
          break;
        case 1:
          uuid = r.varintBig();
          break;
        case 5:
          parent = r.varintBig();
          break;
        case 2:
        case 10:
        case 13:
          name = r.string();
          break;
        case 3: {
          kind = 'process';
          const p = r.sub();
          while (p.next()) {
            if (p.field === 6 && p.wire === WIRE_LEN) processName = p.string();
            else if (p.field === 1 && p.wire === 0) pid = p.int64();
            else p.skip();
          }
          break;
        }
        case 4: {
          kind = 'thread';
          const t = r.sub();
          while (t.next()) {
            if (t.field === 5 && t.wire === WIRE_LEN) threadName = t.string();
            else if (t.field === 2) tid = t.int64();
            else if (t.field === 1) pid = t.int64();
            else t.skip();
          }
          break;
        }
        case 8:
          kind = 'counter';
          r.skip();
          break;
        default:
          r.skip();
      }
    }
    if (name === COUNTS_TRACK_NAME && description !== undefined) this.readCounts(uuid, description);
    if (name === PROCESSES_TRACK_NAME && description !== undefined) this.readProcesses(description);
    if (kind === 'process' && pid !== undefined && processName !== undefined) this.sink.process?.(pid, processName);
    if (kind === 'thread' && tid !== undefined) this.threadTracks.set(`${String(pid ?? 0)}:${String(tid)}`, uuid.toString());
    const known = this.tracks.get(uuid);
    if (known !== undefined) return; // a repeated descriptor (for example after an incremental-state reset)
    const parentTrack = parent === undefined ? undefined : this.tracks.get(parent);
    // A child of a thread or named track is one of its lanes.
    const isLane = kind === 'track' && parentTrack !== undefined && (parentTrack.kind === 'thread' || parentTrack.kind === 'track');
    const timeline = isLane ? (parentTrack as Track).timeline : uuid.toString();
    const display =
      kind === 'thread'
        ? threadName ?? name ?? `thread ${String(tid ?? uuid)}`
        : kind === 'process'
          ? processName ?? name ?? `process ${uuid.toString()}`
          : name ?? `track ${uuid.toString()}`;
    const owner = kind === 'thread' || kind === 'process' ? pid : parentTrack?.pid;
    this.tracks.set(uuid, { timeline, owner: isLane ? parentTrack : undefined, name: display, kind, pid: owner, emitted: false, open: [] });
  }

  /** The traced processes a joined trace lacks, whole or in part (PROCESSES_TRACK_NAME); undefined when it says nothing. */
  processes: { missing: number[]; unfinished: number[] } | undefined;

  private readProcesses(description: string): void {
    try {
      const m = JSON.parse(description) as { missing?: unknown; unfinished?: unknown } | null;
      if (typeof m === 'object' && m !== null) this.processes = processLists(m.missing, m.unfinished);
    } catch {} // not hotspan's: says nothing
  }

  /** The recording counts the trace carried: the sum over its processes' (COUNTS_TRACK_NAME). */
  get counts(): RecordingCounts | undefined {
    return sumCounts([...this.countsByTrack.values()]);
  }

  private readCounts(uuid: bigint, description: string): void {
    let members: unknown;
    try {
      members = JSON.parse(description);
    } catch {
      return; // not hotspan's: no counts
    }
    const c = typeof members === 'object' && members !== null ? recordingCounts(members as Record<string, unknown>) : undefined;
    if (c !== undefined) this.countsByTrack.set(uuid, c);
  }

  private track(uuid: bigint): Track {
    let t = this.tracks.get(uuid);
    if (t === undefined) {
      t = { timeline: uuid.toString(), owner: undefined, name: `track ${uuid.toString()}`, kind: 'track', pid: undefined, emitted: false, open: [] };
      this.tracks.set(uuid, t);
    }
    const tl = t.owner ?? t;
    if (!tl.emitted) {
      tl.emitted = true;
      if (!this.clocksTold) this.tellClocks();
      const kind = tl.kind === 'process' ? 'track' : tl.kind;
      this.sink.timeline({ key: tl.timeline, name: tl.name, kind, concurrent: kind === 'track', ...(tl.pid === undefined ? {} : { pid: tl.pid }) });
    }
    return t;
  }

  private trackEvent(seq: Sequence, r: ProtoReader, tsNs: number): void {
    let type = 0;
    let uuid = seq.defaultTrack;
    let nameIid: number | undefined;
    let name: string | undefined;
    let counter: number | undefined;
    let annotations: ProtoReader[] | undefined;
    while (r.next()) {
      switch (r.field) {
        case 9:
          type = r.varint();
          break;
        case 11:
          uuid = r.varintBig();
          break;
        case 10:
          nameIid = r.varint();
          break;
        case 23:
          name = r.string();
          break;
        case 4:
          (annotations ??= []).push(r.sub());
          break;
        case 30:
          counter = r.int64();
          break;
        case 44:
          counter = r.wire === WIRE_FIXED64 ? r.double() : (r.skip(), undefined);
          break;
        default:
          r.skip();
      }
    }
    if (uuid === undefined) uuid = 0n;
    if (type === SLICE_BEGIN) {
      const t = this.track(uuid);
      const label = name ?? (nameIid !== undefined ? seq.eventNames.get(nameIid) : undefined) ?? '?';
      const args = annotations && this.annotations(seq, annotations);
      // hotspan leaves out parent_id when the parent is the enclosing slice on the track: restore it.
      const up = t.open[t.open.length - 1]?.args?.span_id;
      if (args !== undefined && args.span_id !== undefined && args.parent_id === undefined && up !== undefined) {
        args.parent_id = up;
      }
      t.open.push({ name: label, startNs: tsNs, args });
    } else if (type === SLICE_END) {
      const t = this.track(uuid);
      const o = t.open.pop();
      if (o === undefined) return; // an end whose begin was before the file's start
      this.sink.span({ timeline: t.timeline, name: o.name, startNs: o.startNs, endNs: tsNs, args: o.args });
    } else if (type === COUNTER && counter !== undefined) {
      const t = this.track(uuid);
      this.sink.counter?.(t.timeline, tsNs, counter);
    }
  }

  private annotations(seq: Sequence, list: ProtoReader[]): Args {
    const args: Args = {};
    for (const r of list) {
      const [key, value] = this.annotation(seq, r);
      args[key] = value;
    }
    return args;
  }

  private annotation(seq: Sequence, r: ProtoReader): [string, AttrValue] {
    let key = '';
    let value: AttrValue = null;
    let dict: Args | undefined;
    let array: AttrValue[] | undefined;
    while (r.next()) {
      switch (r.field) {
        case 1:
          key = seq.annotationNames.get(r.varint()) ?? '?';
          break;
        case 10:
          key = r.string();
          break;
        case 2:
          value = r.varint() !== 0;
          break;
        case 3:
        case 7:
          value = r.varint();
          break;
        case 4:
          value = r.int64();
          break;
        case 5:
          value = r.double();
          break;
        case 6:
          value = r.string();
          break;
        case 17:
          value = seq.stringValues.get(r.varint()) ?? '?';
          break;
        case 9: {
          const text = r.string();
          try {
            value = JSON.parse(text) as AttrValue;
          } catch {
            value = text;
          }
          break;
        }
        case 11: {
          const [k, v] = this.annotation(seq, r.sub());
          (dict ??= {})[k] = v;
          break;
        }
        case 12:
          (array ??= []).push(this.annotation(seq, r.sub())[1]);
          break;
        default:
          r.skip();
      }
    }
    return [key, dict ?? array ?? value];
  }
}
