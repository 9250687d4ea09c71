// The js backend's Perfetto protobuf writer: the bytes the core's writer
// (native/core/perfetto_writer.cc, whose header comment describes the
// layout) produces, from the columnar snapshot. Hand-encoded varints and
// length-delimited fields into a growable Uint8Array; no protobuf library.
//
// Timestamps: ns on the performance.now() axis + PERFETTO_TIMESTAMP_OFFSET_NS
// (1 s), clamped at 0. Track uuids: timeline id; lane k >= 1 of a
// concurrent track: k * 2^32 + id; the process: 0xFFFFFFFF00000000.

import { FIELDS_PER_RECORD, FLAG_ABANDONED, FLAG_ERROR, TIMELINE_SHIFT } from './flags';
import type { ClockReadings } from './clock';
import type { NativeSnapshot } from './native-binding';

/** Added to ns on the performance.now() axis: Perfetto timestamps are unsigned. */
export const PERFETTO_TIMESTAMP_OFFSET_NS = 1_000_000_000;
/** The process track's uuid (2^64 - 2^32). */
export const PERFETTO_PROCESS_UUID = 0xffffffff00000000n;
/** The sequence-scoped clock of every span timestamp: CLOCK_MONOTONIC - (origin - 1 s). */
export const PERFETTO_CLOCK_ID = 64;
/** Every packet's trusted_packet_sequence_id. */
export const PERFETTO_SEQUENCE_ID = 1;

const ANNOTATION_NAMES = ['span_id', 'parent_id', 'error', 'abandoned'];
const utf8 = new TextEncoder();

/** A growable byte buffer with protobuf primitives. */
class Bytes {
  buf: Uint8Array;
  pos = 0;
  private view: DataView | undefined;

  constructor(initial: number) {
    this.buf = new Uint8Array(Math.max(64, initial));
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = undefined;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** Unsigned varint of a non-negative integer below 2^53 (or a multiple of a power of two, exact). */
  varint(v: number): void {
    this.ensure(10);
    const b = this.buf;
    let p = this.pos;
    while (v >= 128) {
      b[p++] = (v % 128) | 128;
      v = Math.floor(v / 128);
    }
    b[p++] = v;
    this.pos = p;
  }

  varintBig(v: bigint): void {
    this.ensure(10);
    let x = BigInt.asUintN(64, v);
    while (x >= 128n) {
      this.buf[this.pos++] = Number(x & 127n) | 128;
      x >>= 7n;
    }
    this.buf[this.pos++] = Number(x);
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  double(d: number): void {
    this.ensure(8);
    this.view ??= new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    this.view.setFloat64(this.pos, d, true);
    this.pos += 8;
  }

  /** key + length + bytes. */
  field(key: number, bytes: Uint8Array): void {
    this.varint(key);
    this.varint(bytes.length);
    this.raw(bytes);
  }

  /** Reserves one length byte after `key`; returns where the body starts. */
  open(key: number): number {
    this.ensure(2);
    this.buf[this.pos++] = key;
    this.pos++;
    return this.pos;
  }

  /** Patches the length reserved by open(), widening it in place when it needs more than one byte. */
  close(body: number): void {
    const n = this.pos - body;
    if (n < 128) {
      this.buf[body - 1] = n;
      return;
    }
    let k = 1;
    for (let v = n; v >= 128; v = Math.floor(v / 128)) k++;
    this.ensure(k - 1);
    this.buf.copyWithin(body + k - 1, body, this.pos);
    this.pos += k - 1;
    const end = this.pos;
    this.pos = body - 1;
    this.varint(n);
    this.pos = end;
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

// ---- a strict JSON scanner over the attribute text (the core's grammar) ----

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

class Scan {
  constructor(
    readonly s: string,
    public p: number,
    readonly e: number,
  ) {}
  c(): number {
    return this.s.charCodeAt(this.p);
  }
  ws(): void {
    while (this.p < this.e && isWs(this.c())) this.p++;
  }
  /** At '"': the decoded string, or undefined when malformed. */
  string(): string | undefined {
    const start = this.p++;
    while (this.p < this.e) {
      const c = this.c();
      if (c === 0x22) {
        this.p++;
        try {
          return JSON.parse(this.s.slice(start, this.p)) as string;
        } catch {
          return undefined;
        }
      }
      if (c < 0x20) return undefined;
      this.p += c === 0x5c ? 2 : 1;
    }
    return undefined;
  }
  number(): boolean {
    if (this.p < this.e && this.c() === 0x2d) this.p++;
    if (this.p >= this.e) return false;
    if (this.c() === 0x30) {
      this.p++;
    } else if (isDigit(this.c())) {
      while (this.p < this.e && isDigit(this.c())) this.p++;
    } else {
      return false;
    }
    if (this.p < this.e && this.c() === 0x2e) {
      this.p++;
      if (this.p >= this.e || !isDigit(this.c())) return false;
      while (this.p < this.e && isDigit(this.c())) this.p++;
    }
    if (this.p < this.e && (this.c() === 0x65 || this.c() === 0x45)) {
      this.p++;
      if (this.p < this.e && (this.c() === 0x2b || this.c() === 0x2d)) this.p++;
      if (this.p >= this.e || !isDigit(this.c())) return false;
      while (this.p < this.e && isDigit(this.c())) this.p++;
    }
    return true;
  }
  literal(lit: string): boolean {
    if (this.e - this.p < lit.length || this.s.slice(this.p, this.p + lit.length) !== lit) return false;
    this.p += lit.length;
    return true;
  }
  container(depth: number, close: number): boolean {
    if (depth > 64) return false;
    this.p++;
    this.ws();
    if (this.p < this.e && this.c() === close) {
      this.p++;
      return true;
    }
    for (;;) {
      if (close === 0x7d) {
        if (this.p >= this.e || this.c() !== 0x22 || this.string() === undefined) return false;
        this.ws();
        if (this.p >= this.e || this.c() !== 0x3a) return false;
        this.p++;
        this.ws();
      }
      if (!this.value(depth + 1)) return false;
      this.ws();
      if (this.p >= this.e) return false;
      if (this.c() === close) {
        this.p++;
        return true;
      }
      if (this.c() !== 0x2c) return false;
      this.p++;
      this.ws();
    }
  }
  value(depth: number): boolean {
    if (this.p >= this.e) return false;
    switch (this.c()) {
      case 0x22:
        return this.string() !== undefined;
      case 0x7b:
        return this.container(depth, 0x7d);
      case 0x5b:
        return this.container(depth, 0x5d);
      case 0x74:
        return this.literal('true');
      case 0x66:
        return this.literal('false');
      case 0x6e:
        return this.literal('null');
      default:
        return this.number();
    }
  }
}

// DebugAnnotation keys.
const ANN = 0x22; // TrackEvent.debug_annotations = 4, LEN
const ANN_NAME = 0x52; // name = 10
const ANN_BOOL = 0x10; // bool_value = 2
const ANN_INT = 0x20; // int_value = 4
const ANN_DOUBLE = 0x29; // double_value = 5 (fixed64)
const ANN_STRING = 0x32; // string_value = 6
const ANN_JSON = 0x4a; // legacy_json_value = 9

/** The attribute members as DebugAnnotation fields (see the core's encode_attrs). */
function encodeAttrs(text: string, out: Bytes): void {
  let b = 0;
  let e = text.length;
  while (b < e && isWs(text.charCodeAt(b))) b++;
  while (e > b && isWs(text.charCodeAt(e - 1))) e--;
  if (b === e) return;
  const start = out.pos;
  const s = new Scan(text, b, e);
  let ok = s.c() === 0x7b;
  if (ok) {
    s.p++;
    s.ws();
    if (s.p < s.e && s.c() === 0x7d) {
      s.p++;
    } else {
      for (;;) {
        const body = out.open(ANN);
        const key = s.p < s.e && s.c() === 0x22 ? s.string() : undefined;
        if (key === undefined) {
          ok = false;
          break;
        }
        out.field(ANN_NAME, utf8.encode(key));
        s.ws();
        if (s.p >= s.e || s.c() !== 0x3a) {
          ok = false;
          break;
        }
        s.p++;
        s.ws();
        if (s.p >= s.e) {
          ok = false;
          break;
        }
        const v0 = s.p;
        const c = s.c();
        if (c === 0x22) {
          const v = s.string();
          if (v === undefined) {
            ok = false;
            break;
          }
          out.field(ANN_STRING, utf8.encode(v));
        } else if (c === 0x74 || c === 0x66) {
          if (!s.literal(c === 0x74 ? 'true' : 'false')) {
            ok = false;
            break;
          }
          out.byte(ANN_BOOL);
          out.byte(c === 0x74 ? 1 : 0);
        } else if (c === 0x2d || isDigit(c)) {
          if (!s.number()) {
            ok = false;
            break;
          }
          const d = Number(text.slice(v0, s.p));
          if (Number.isSafeInteger(d)) {
            out.byte(ANN_INT);
            if (d >= 0) out.varint(d);
            else out.varintBig(BigInt(d));
          } else {
            out.byte(ANN_DOUBLE);
            out.double(d);
          }
        } else {
          if (!s.value(0)) {
            ok = false;
            break;
          }
          out.field(ANN_JSON, utf8.encode(text.slice(v0, s.p)));
        }
        out.close(body);
        s.ws();
        if (s.p < s.e && s.c() === 0x2c) {
          s.p++;
          s.ws();
          continue;
        }
        if (s.p < s.e && s.c() === 0x7d) {
          s.p++;
          break;
        }
        ok = false;
        break;
      }
    }
    if (ok && s.p !== s.e) ok = false;
  }
  if (!ok) {
    out.pos = start;
    const body = out.open(ANN);
    out.field(ANN_NAME, utf8.encode('attrs'));
    out.field(ANN_STRING, utf8.encode(text.slice(b, e)));
    out.close(body);
  }
}

// ---- cold messages (descriptors, interned data) ----

/** A message under construction: its bytes, with nested messages appended whole. */
function msg(build: (m: Bytes) => void): Uint8Array {
  const m = new Bytes(64);
  build(m);
  return m.bytes();
}

function uuidOf(timeline: number, lane: number): number {
  return lane * TIMELINE_SHIFT + timeline;
}

/** Min-heap over a key order. */
class Heap<T> {
  private readonly a: T[] = [];
  constructor(private readonly less: (x: T, y: T) => boolean) {}
  get size(): number {
    return this.a.length;
  }
  top(): T {
    return this.a[0];
  }
  push(v: T): void {
    const a = this.a;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!this.less(a[i], a[up])) break;
      [a[i], a[up]] = [a[up], a[i]];
      i = up;
    }
  }
  pop(): T {
    const a = this.a;
    const top = a[0];
    const last = a.pop() as T;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l], a[m])) m = l;
        if (r < a.length && this.less(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }
}

/** Interned strings as repeated { iid = index + 1, name } entries under `key` (in InternedData). */
function internStrings(into: Bytes, key: number, strings: readonly string[]): void {
  strings.forEach((s, k) =>
    into.field(
      key,
      msg((e) => {
        e.byte(0x08);
        e.varint(k + 1);
        e.field(0x12, utf8.encode(s));
      }),
    ),
  );
}

/** The Perfetto trace of a snapshot: the same bytes as the core's write_perfetto. */
export function perfetto(snap: NativeSnapshot, clocks: ClockReadings, originNs: bigint): Uint8Array {
  const { times, fields, names } = snap;
  const out = new Bytes(256 + 64 * snap.count);
  const packet = (body: Uint8Array): void => out.field(0x0a, body);
  const descriptorPacket = (td: Uint8Array): void =>
    packet(
      msg((m) => {
        m.byte(0x50);
        m.varint(PERFETTO_SEQUENCE_ID);
        m.field(0x1e2, td); // track_descriptor = 60
      }),
    );

  // 1. Interned data, the timestamp clock (64) and its ClockSnapshot; the process track.
  const clock = (id: number, ns: bigint): Uint8Array =>
    msg((c) => {
      c.byte(0x08);
      c.varint(id);
      c.byte(0x10);
      c.varintBig(ns < 0n ? 0n : ns);
    });
  packet(
    msg((m) => {
      m.byte(0x50);
      m.varint(PERFETTO_SEQUENCE_ID);
      m.byte(0x68);
      m.varint(1); // SEQ_INCREMENTAL_STATE_CLEARED
      m.field(
        0x62, // interned_data = 12
        msg((i) => {
          internStrings(i, 0x12, names); // event_names
          internStrings(i, 0x1a, ANNOTATION_NAMES); // debug_annotation_names
        }),
      );
      m.field(
        0x1da, // trace_packet_defaults = 59
        msg((d) => {
          d.varint(0x1d0); // timestamp_clock_id = 58
          d.varint(PERFETTO_CLOCK_ID);
        }),
      );
      m.field(
        0x32, // clock_snapshot = 6
        msg((c) => {
          c.field(0x0a, clock(PERFETTO_CLOCK_ID, clocks.monotonicNs - originNs + BigInt(PERFETTO_TIMESTAMP_OFFSET_NS)));
          c.field(0x0a, clock(3, clocks.monotonicNs)); // MONOTONIC
          if (clocks.boottimeNs !== undefined) c.field(0x0a, clock(6, clocks.boottimeNs)); // BOOTTIME
          c.field(0x0a, clock(1, clocks.realtimeNs)); // REALTIME
          if (clocks.boottimeNs === undefined) {
            c.byte(0x10); // primary_trace_clock
            c.varint(3);
          }
        }),
      );
    }),
  );
  descriptorPacket(
    msg((td) => {
      td.byte(0x08);
      td.varintBig(PERFETTO_PROCESS_UUID);
      td.field(
        0x1a,
        msg((p) => {
          p.byte(0x08);
          p.varint(1);
          p.field(0x32, utf8.encode('hotspan'));
        }),
      );
    }),
  );

  // 2. A descriptor per timeline.
  for (const tl of snap.timelines) {
    descriptorPacket(
      msg((td) => {
        td.byte(0x08);
        td.varint(uuidOf(tl.id, 0));
        if (tl.kind === 'js' || tl.kind === 'native') {
          td.field(
            0x22,
            msg((th) => {
              th.byte(0x08);
              th.varint(1);
              th.byte(0x10);
              th.varint(tl.id);
              th.field(0x2a, utf8.encode(tl.name));
            }),
          );
        } else {
          td.byte(0x28);
          td.varintBig(PERFETTO_PROCESS_UUID);
          td.field(0x12, utf8.encode(tl.name));
        }
      }),
    );
  }

  // 3. Spans, per timeline.
  const byTimeline = new Map<number, number[]>();
  for (const tl of snap.timelines) byTimeline.set(tl.id, []);
  for (let i = 0; i < snap.count; i++) byTimeline.get(fields[i * FIELDS_PER_RECORD + 1])?.push(i);
  const attrs = new Map<number, string>();
  for (const [i, text] of snap.attrs) attrs.set(i, text);
  const nsOf = (ms: number): number => Math.round(ms * 1e6);
  const ts = (ns: number): number => Math.max(0, ns + PERFETTO_TIMESTAMP_OFFSET_NS);
  const startNs = (i: number): number => nsOf(times[2 * i]);
  const endNs = (i: number): number => nsOf(times[2 * i + 1]);
  const local = (i: number): number => fields[i * FIELDS_PER_RECORD + 2];

  // implicitParent: the enclosing slice on the track is the parent (no parent_id then).
  const begin = (i: number, uuid: number, implicitParent: boolean): void => {
    const f = i * FIELDS_PER_RECORD;
    const packetBody = out.open(0x0a);
    out.byte(0x40);
    out.varint(ts(startNs(i)));
    out.byte(0x50);
    out.varint(PERFETTO_SEQUENCE_ID);
    out.byte(0x68);
    out.byte(2); // SEQ_NEEDS_INCREMENTAL_STATE
    const event = out.open(0x5a);
    out.byte(0x48);
    out.byte(1); // TYPE_SLICE_BEGIN
    out.byte(0x58);
    out.varint(uuid);
    const name = fields[f];
    if (name < names.length) {
      out.byte(0x50);
      out.varint(name + 1);
    } else {
      out.varint(0xba); // name = 23 (string)
      out.byte(1);
      out.byte(0x3f); // '?'
    }
    const id = fields[f + 1] * TIMELINE_SHIFT + fields[f + 2];
    let body = out.open(ANN);
    out.byte(0x08);
    out.byte(1);
    out.byte(0x18);
    out.varint(id);
    out.close(body);
    if (fields[f + 4] !== 0 && !implicitParent) {
      body = out.open(ANN);
      out.byte(0x08);
      out.byte(2);
      out.byte(0x18);
      out.varint(fields[f + 3] * TIMELINE_SHIFT + fields[f + 4]);
      out.close(body);
    }
    const flags = fields[f + 5] & 0xffff;
    if (flags & FLAG_ERROR) out.raw(FLAG_ANNOTATIONS[0]);
    if (flags & FLAG_ABANDONED) out.raw(FLAG_ANNOTATIONS[1]);
    const text = attrs.get(i);
    if (text !== undefined) encodeAttrs(text, out);
    out.close(event);
    out.close(packetBody);
  };

  const end = (i: number, uuid: number): void => {
    const body = out.open(0x0a);
    out.byte(0x40);
    out.varint(ts(endNs(i)));
    out.byte(0x50);
    out.varint(PERFETTO_SEQUENCE_ID);
    const event = out.open(0x5a);
    out.byte(0x48);
    out.byte(2); // TYPE_SLICE_END
    out.byte(0x58);
    out.varint(uuid);
    out.close(event);
    out.close(body);
  };

  for (const tl of snap.timelines) {
    const recs = byTimeline.get(tl.id) ?? [];
    if (recs.length === 0) continue;
    // Begin (local id) order; a stable sort keeps duplicates in snapshot order.
    const order = recs.slice().sort((a, b) => local(a) - local(b));
    if (tl.kind !== 'track') {
      const uuid = uuidOf(tl.id, 0);
      const depth = (i: number): number => fields[i * FIELDS_PER_RECORD + 5] >>> 16;
      const open: number[] = [];
      for (const i of order) {
        while (open.length > 0 && depth(open[open.length - 1]) >= depth(i)) end(open.pop() as number, uuid);
        const f = i * FIELDS_PER_RECORD;
        const top = open[open.length - 1];
        begin(i, uuid, top !== undefined && fields[f + 3] === tl.id && fields[f + 4] === local(top));
        open.push(i);
      }
      while (open.length > 0) end(open.pop() as number, uuid);
      continue;
    }

    // Tracks: greedy lanes, as in the core.
    const before = (a: number, b: number): number =>
      startNs(a) - startNs(b) || endNs(b) - endNs(a) || local(a) - local(b);
    order.sort(before);
    const steps: Array<[number, number, boolean]> = []; // record, lane, is end
    const stacks: number[][] = [];
    const busy = new Heap<[number, number]>((x, y) => x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]));
    const free = new Heap<number>((x, y) => x < y);
    const laneOf = new Map<number, number>(); // local id -> lane
    const recOf = new Map<number, number>(); // local id -> record
    for (const i of order) if (!recOf.has(local(i))) recOf.set(local(i), i);
    const flushLane = (lane: number): void => {
      const st = stacks[lane];
      while (st.length > 0) steps.push([st.pop() as number, lane, true]);
    };
    for (const i of order) {
      const s = startNs(i);
      const e = endNs(i);
      while (busy.size > 0 && busy.top()[0] <= s) {
        const lane = busy.pop()[1];
        flushLane(lane);
        free.push(lane);
      }
      // Nest only under the real parent (a span of this track, innermost open on its lane, containing this one).
      const f = i * FIELDS_PER_RECORD;
      const parent = fields[f + 4] !== 0 && fields[f + 3] === tl.id ? recOf.get(fields[f + 4]) : undefined;
      let lane = 0;
      let placed = false;
      if (parent !== undefined) {
        lane = laneOf.get(local(parent)) ?? 0;
        const st = stacks[lane];
        while (st.length > 0 && st[st.length - 1] !== parent && endNs(st[st.length - 1]) <= s) {
          steps.push([st.pop() as number, lane, true]);
        }
        placed = st[st.length - 1] === parent && startNs(parent) <= s && e <= endNs(parent);
      }
      if (!placed) {
        if (free.size > 0) {
          lane = free.pop();
        } else {
          lane = stacks.length;
          stacks.push([]);
        }
        busy.push([e, lane]);
      }
      laneOf.set(local(i), lane);
      stacks[lane].push(i);
      steps.push([i, lane, false]);
    }
    for (let lane = 0; lane < stacks.length; lane++) flushLane(lane);
    for (let lane = 1; lane < stacks.length; lane++) {
      descriptorPacket(
        msg((td) => {
          td.byte(0x08);
          td.varint(uuidOf(tl.id, lane));
          td.byte(0x28);
          td.varint(uuidOf(tl.id, 0));
          td.field(0x12, utf8.encode(`${tl.name} #${String(lane + 1)}`));
        }),
      );
    }
    for (const [i, lane, isEnd] of steps) {
      if (isEnd) end(i, uuidOf(tl.id, lane));
      else begin(i, uuidOf(tl.id, lane), false);
    }
  }
  return out.bytes();
}

/** error / abandoned: bool_value true under interned names 3 / 4. */
const FLAG_ANNOTATIONS = [
  new Uint8Array([0x22, 4, 0x08, 3, 0x10, 1]),
  new Uint8Array([0x22, 4, 0x08, 4, 0x10, 1]),
];
