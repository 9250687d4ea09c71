// Streaming writers of the converter: a TraceSink that writes Chrome JSON or
// Perfetto protobuf as spans arrive, through a 1 MiB output buffer, so a
// conversion holds only what nesting needs (see PerfettoSink) in memory.

import { closeSync, openSync, writeSync } from 'node:fs';

import { ProtoWriter } from './proto';
import type { Args, AttrValue, TraceSink, TraceSpan, TraceTimeline } from './trace-model';
import { TraceFileError } from './trace-model';

const FLUSH_BYTES = 1 << 20;
const encoder = new TextEncoder();

/** A file written in blocks. */
export class OutFile {
  private readonly fd: number;
  private parts: Uint8Array[] = [];
  private pending = 0;
  written = 0;

  constructor(readonly path: string) {
    try {
      this.fd = openSync(path, 'w');
    } catch (e) {
      throw new TraceFileError(path, `cannot write: ${(e as Error).message}`);
    }
  }

  write(data: Uint8Array | string): void {
    const b = typeof data === 'string' ? encoder.encode(data) : data.slice();
    this.parts.push(b);
    this.pending += b.length;
    if (this.pending >= FLUSH_BYTES) this.flush();
  }

  flush(): void {
    if (this.pending === 0) return;
    const all = Buffer.concat(this.parts, this.pending);
    let off = 0;
    while (off < all.length) off += writeSync(this.fd, all, off);
    this.written += all.length;
    this.parts = [];
    this.pending = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

export interface TraceWriter extends TraceSink {
  finish(): void;
}

/** ns -> µs with three decimals, exact to the ns. */
function us(ns: number): string {
  const neg = ns < 0;
  const u = Math.abs(Math.round(ns));
  const whole = Math.floor(u / 1000);
  return `${neg ? '-' : ''}${String(whole)}.${String(u - whole * 1000).padStart(3, '0')}`;
}

/** Chrome JSON, one event per line, as hotspan writes it. */
export class ChromeJsonSink implements TraceWriter {
  private readonly tids = new Map<string, { tid: number; timeline: TraceTimeline }>();
  private asyncIds = 0;

  constructor(private readonly out: OutFile) {
    out.write('{"traceEvents":[\n{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"hotspan"}}');
  }

  timeline(t: TraceTimeline): void {
    const tid = this.tids.size + 1;
    this.tids.set(t.key, { tid, timeline: t });
    if (t.kind === 'counter') return;
    this.out.write(
      `,\n{"name":"thread_name","ph":"M","pid":1,"tid":${String(tid)},"args":{"name":${JSON.stringify(t.name)}}}` +
        `,\n{"name":"thread_sort_index","ph":"M","pid":1,"tid":${String(tid)},"args":{"sort_index":${String(tid)}}}`,
    );
  }

  span(s: TraceSpan): void {
    const tl = this.tids.get(s.timeline);
    if (tl === undefined) return;
    const name = JSON.stringify(s.name);
    const where = `"pid":1,"tid":${String(tl.tid)}`;
    const a: Args = { ...s.args };
    if (a.span_id !== undefined && a.parent_id === undefined) a.parent_id = 0;
    const args = JSON.stringify(a);
    if (tl.timeline.concurrent) {
      const id = typeof a.span_id === 'number' ? a.span_id : ++this.asyncIds;
      this.out.write(
        `,\n{"name":${name},"cat":"async","ph":"b","ts":${us(s.startNs)},${where},"id":"${String(id)}","args":${args}}` +
          `,\n{"name":${name},"cat":"async","ph":"e","ts":${us(s.endNs)},${where},"id":"${String(id)}"}`,
      );
    } else {
      const cat = tl.timeline.kind === 'thread' ? 'span' : 'async';
      this.out.write(
        `,\n{"name":${name},"cat":"${cat}","ph":"X","ts":${us(s.startNs)},"dur":${us(s.endNs - s.startNs)},${where},"args":${args}}`,
      );
    }
  }

  counter(timeline: string, tsNs: number, value: number): void {
    const tl = this.tids.get(timeline);
    if (tl === undefined) return;
    this.out.write(
      `,\n{"name":${JSON.stringify(tl.timeline.name)},"ph":"C","ts":${us(tsNs)},"pid":1,"tid":0,"args":{"value":${String(value)}}}`,
    );
  }

  finish(): void {
    this.out.write('\n],"displayTimeUnit":"ms"}\n');
  }
}

// Perfetto field numbers (perfetto_trace.proto).
const PACKET = 1;
const SEQ = 10;
const TS = 8;
const FLAGS = 13;
const INTERNED = 12;
const DESCRIPTOR = 60;
const EVENT = 11;
const SEQUENCE_ID = 1;
const PROCESS_UUID = 0xffffffff00000000n;
const TWO32 = 4294967296;

/** One timeline's spans waiting to be written in begin order. */
interface Pending {
  spans: TraceSpan[];
  /** Concurrent tracks: per lane, the end of its last span. */
  laneEnds: number[];
  uuid: number;
  concurrent: boolean;
}

/**
 * Perfetto protobuf. Slices on one track must be written as nested begin/end
 * pairs in time order, while readers hand spans over as they end (children
 * first). A thread's spans are held until a root span (no parent_id, or a
 * parent on another timeline, as hotspan's span ids tell) ends and are then
 * written as one nested tree; so memory is bounded by the largest tree, not the
 * file. Spans without hotspan's ids are held to the end. A concurrent track's
 * spans go on lanes (child tracks) as they come.
 */
export class PerfettoSink implements TraceWriter {
  private readonly pending = new Map<string, Pending>();
  private readonly names = new Map<string, number>();
  private readonly keys = new Map<string, number>();
  private readonly laneTracks = new Set<number>();
  private readonly w = new ProtoWriter();
  private readonly names0: string[] = [];

  constructor(private readonly out: OutFile) {
    this.packet((p) => {
      p.uint(SEQ, SEQUENCE_ID).uint(FLAGS, 1);
      p.message(DESCRIPTOR, (d) =>
        d.uint(1, PROCESS_UUID).message(3, (pr) => pr.uint(1, 1).string(6, 'hotspan')),
      );
    });
  }

  private packet(build: (p: ProtoWriter) => void): void {
    const w = this.w;
    w.reset();
    w.message(PACKET, build);
    this.out.write(w.finish());
  }

  timeline(t: TraceTimeline): void {
    const uuid = this.pending.size + 1;
    this.pending.set(t.key, { spans: [], laneEnds: [], uuid, concurrent: t.concurrent });
    this.packet((p) => {
      p.uint(SEQ, SEQUENCE_ID);
      p.message(DESCRIPTOR, (d) => {
        d.uint(1, uuid);
        if (t.kind === 'thread') {
          d.message(4, (th) => th.uint(1, 1).uint(2, uuid).string(5, t.name));
        } else {
          d.uint(5, PROCESS_UUID).string(2, t.name);
          if (t.kind === 'counter') d.message(8, () => undefined);
        }
      });
    });
    this.names0.push(t.name);
  }

  span(s: TraceSpan): void {
    const p = this.pending.get(s.timeline);
    if (p === undefined) return;
    if (p.concurrent) {
      let lane = p.laneEnds.findIndex((end) => end <= s.startNs);
      if (lane < 0) lane = p.laneEnds.push(s.endNs) - 1;
      else p.laneEnds[lane] = s.endNs;
      this.writeTree([s], this.laneUuid(p, lane));
      return;
    }
    p.spans.push(s);
    const id = s.args?.span_id;
    const parent = s.args?.parent_id;
    if (typeof id !== 'number') return;
    if (typeof parent !== 'number' || Math.floor(parent / TWO32) !== Math.floor(id / TWO32)) {
      this.writeTree(p.spans, p.uuid);
      p.spans = [];
    }
  }

  private laneUuid(p: Pending, lane: number): number {
    if (lane === 0) return p.uuid;
    const uuid = lane * TWO32 + p.uuid;
    if (!this.laneTracks.has(uuid)) {
      this.laneTracks.add(uuid);
      this.packet((w) => {
        w.uint(SEQ, SEQUENCE_ID);
        w.message(DESCRIPTOR, (d) => d.uint(1, uuid).uint(5, p.uuid).string(2, `${this.names0[p.uuid - 1]} #${String(lane + 1)}`));
      });
    }
    return uuid;
  }

  counter(timeline: string, tsNs: number, value: number): void {
    const p = this.pending.get(timeline);
    if (p === undefined) return;
    this.packet((w) => {
      w.uint(TS, Math.max(0, tsNs)).uint(SEQ, SEQUENCE_ID);
      w.message(EVENT, (e) => {
        e.uint(9, 4).uint(11, p.uuid);
        if (Number.isInteger(value)) e.uint(30, BigInt(value));
        else e.double(44, value);
      });
    });
  }

  /** Writes spans that form whole trees as nested begin/end packets. */
  private writeTree(spans: TraceSpan[], uuid: number): void {
    const order = spans.map((_, k) => k).sort((a, b) => spans[a].startNs - spans[b].startNs || spans[b].endNs - spans[a].endNs || a - b);
    const open: TraceSpan[] = [];
    for (const k of order) {
      const s = spans[k];
      while (open.length > 0 && (open[open.length - 1].endNs <= s.startNs || open[open.length - 1].endNs < s.endNs)) {
        this.end(open.pop() as TraceSpan, uuid);
      }
      this.begin(s, uuid);
      open.push(s);
    }
    while (open.length > 0) this.end(open.pop() as TraceSpan, uuid);
  }

  private iid(map: Map<string, number>, s: string, fresh: Array<[number, string]>): number {
    let id = map.get(s);
    if (id === undefined) {
      id = map.size + 1;
      map.set(s, id);
      fresh.push([id, s]);
    }
    return id;
  }

  private begin(s: TraceSpan, uuid: number): void {
    const newNames: Array<[number, string]> = [];
    const newKeys: Array<[number, string]> = [];
    const nameIid = this.iid(this.names, s.name, newNames);
    const args = Object.entries(s.args ?? {}).map(([k, v]) => [this.iid(this.keys, k, newKeys), k, v] as const);
    this.packet((p) => {
      p.uint(TS, Math.max(0, Math.round(s.startNs))).uint(SEQ, SEQUENCE_ID).uint(FLAGS, 2);
      if (newNames.length > 0 || newKeys.length > 0) {
        p.message(INTERNED, (i) => {
          for (const [id, n] of newNames) i.message(2, (e) => e.uint(1, id).string(2, n));
          for (const [id, n] of newKeys) i.message(3, (e) => e.uint(1, id).string(2, n));
        });
      }
      p.message(EVENT, (e) => {
        e.uint(9, 1).uint(11, uuid).uint(10, nameIid);
        for (const [iid, key, v] of args) e.message(4, (a) => annotation(a.uint(1, iid), key, v));
      });
    });
  }

  private end(s: TraceSpan, uuid: number): void {
    this.packet((p) => {
      p.uint(TS, Math.max(0, Math.round(s.endNs))).uint(SEQ, SEQUENCE_ID);
      p.message(EVENT, (e) => e.uint(9, 2).uint(11, uuid));
    });
  }

  finish(): void {
    for (const p of this.pending.values()) {
      if (p.spans.length > 0) this.writeTree(p.spans, p.uuid);
      p.spans = [];
    }
  }
}

/** A DebugAnnotation value: hotspan's ids as uint, other integers as int, JSON for what has no field. */
function annotation(a: ProtoWriter, key: string, v: AttrValue): void {
  if (typeof v === 'boolean') a.uint(2, v ? 1 : 0);
  else if (typeof v === 'number' && Number.isSafeInteger(v)) {
    if (v >= 0 && (key === 'span_id' || key === 'parent_id')) a.uint(3, v);
    else a.uint(4, BigInt(v));
  } else if (typeof v === 'number') a.double(5, v);
  else if (typeof v === 'string') a.string(6, v);
  else a.string(9, JSON.stringify(v));
}
