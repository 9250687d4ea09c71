// The pure-TypeScript backend: the same semantics as the core for one JS
// thread. Records live in growable typed-array columns laid out exactly like
// NativeSnapshot (2 times + 6 u32 fields per record), so recording allocates
// nothing per span and a snapshot is a copy. Every record commits at end():
// the only recording thread is the JS thread that owns the tracer.

import type { Backend } from './backend';
import { chromeJson } from './chrome-json';
import { asyncRejectedError, closedError, noOpenSpanError, unknownNameError } from './errors';
import {
  FIELDS_PER_RECORD,
  FLAG_ABANDONED,
  FLAG_ASYNC,
  FLAG_ATTRS,
  FLAG_ERROR,
  FLAG_PARENT_ELSEWHERE,
  STATUS_CLOSED,
  STATUS_INVALID,
  STATUS_OK,
  TIMELINE_SHIFT,
} from './flags';
import type { NativeSnapshot, NativeTracer } from './native-binding';
import type { TimelineKind } from './records';
import { statsFromSnapshot, type StatsRow } from './stats';

interface Timeline {
  readonly id: number;
  name: string;
  readonly kind: TimelineKind;
  readonly serial: boolean;
  nextLocal: number;
  /** Serial tracks: end of the latest span on the track. */
  lastEnd: number;
}

interface OpenAsync {
  readonly track: Timeline;
  readonly name: number;
  readonly local: number;
  readonly start: number;
  readonly parentTimeline: number;
  readonly parentLocal: number;
  readonly attrs: string;
}

interface OpenGroup {
  readonly name: number;
  readonly local: number;
  readonly start: number;
  readonly attrs: string;
}

const MAX_DEPTH = 0xffff;
// Local copies: an imported constant is a property load on the module object
// in the CommonJS output, a local const is folded by the JIT.
const FPR = FIELDS_PER_RECORD;
const ATTRS = FLAG_ATTRS;
// Read once: globalThis.performance is an accessor in Node.
const perf = performance;

export interface JsBackendOptions {
  threadName: string;
  /** Test hook: the clock, ms on the performance.now() axis. */
  clock?: () => number;
}

export class JsBackend implements Backend {
  readonly kind = 'js' as const;
  readonly clockBoundMs = 0;

  private readonly clock: (() => number) | undefined;
  private closedFlag = false;

  private readonly names: string[] = [];
  private readonly nameIds = new Map<string, number>();
  private readonly timelineList: Timeline[] = [];
  private readonly tracks = new Map<string, Timeline>();
  private readonly serialTracks = new Set<number>();
  private readonly mainTl: Timeline;
  private readonly mainId: number;
  private groupsTl: Timeline | undefined;

  // Committed records, NativeSnapshot layout.
  private times = new Float64Array(2 * 1024);
  private fields = new Uint32Array(FIELDS_PER_RECORD * 1024);
  private cap = 1024;
  private count = 0;
  private readonly attrs: Array<[number, string]> = [];

  // The thread's open-span stack.
  private depth = 0;
  private stackCap = 64;
  private sName = new Uint32Array(64);
  private sLocal = new Uint32Array(64);
  private sStart = new Float64Array(64);
  /** Attribute text per open span; '' for none. */
  private sAttrs: string[] = [];

  private readonly openAsyncSpans = new Map<number, OpenAsync>();
  private readonly groups: OpenGroup[] = [];

  constructor(options: JsBackendOptions) {
    this.clock = options.clock;
    this.mainTl = this.newTimeline(options.threadName, 'js', false);
    this.mainId = this.mainTl.id;
  }

  now(): number {
    return this.clock === undefined ? perf.now() : this.clock();
  }

  private newTimeline(name: string, kind: TimelineKind, serial: boolean): Timeline {
    const tl: Timeline = { id: this.timelineList.length + 1, name, kind, serial, nextLocal: 0, lastEnd: -Infinity };
    this.timelineList.push(tl);
    if (serial) this.serialTracks.add(tl.id);
    return tl;
  }

  private check(nameId: number): void {
    if (this.closedFlag) throw closedError();
    if (nameId >= this.names.length) throw unknownNameError(nameId);
  }

  private growStack(): void {
    if (this.stackCap > MAX_DEPTH) {
      throw new RangeError(`hotspan: spans nest deeper than ${String(MAX_DEPTH)} on one thread`);
    }
    const cap = this.stackCap * 2;
    const n = new Uint32Array(cap);
    n.set(this.sName);
    this.sName = n;
    const l = new Uint32Array(cap);
    l.set(this.sLocal);
    this.sLocal = l;
    const s = new Float64Array(cap);
    s.set(this.sStart);
    this.sStart = s;
    this.stackCap = cap;
  }

  private grow(): void {
    const cap = this.cap * 2;
    const t = new Float64Array(2 * cap);
    t.set(this.times);
    this.times = t;
    const f = new Uint32Array(FIELDS_PER_RECORD * cap);
    f.set(this.fields);
    this.fields = f;
    this.cap = cap;
  }

  // ---- hot path ----

  /** The Tracer passes only interned ids and swaps this backend out at close: no checks here. */
  begin(nameId: number): void {
    const d = this.depth;
    if (d === this.stackCap) this.growStack();
    this.sName[d] = nameId;
    this.sLocal[d] = ++this.mainTl.nextLocal;
    this.sAttrs[d] = '';
    this.depth = d + 1;
    this.sStart[d] = this.clock === undefined ? perf.now() : this.clock();
  }

  beginAttrs(nameId: number, attrsJson: string): void {
    this.check(nameId);
    this.begin(nameId);
    this.sAttrs[this.depth - 1] = attrsJson;
  }

  end(): void {
    const t = this.clock === undefined ? perf.now() : this.clock();
    this.finish(t, 0, 'end()');
  }

  endFlags(flags: number): void {
    const t = this.clock === undefined ? perf.now() : this.clock();
    this.finish(t, flags & 0xffff, 'end()');
  }

  private finish(t: number, flags: number, what: string): void {
    if (this.closedFlag) throw closedError();
    const d = this.depth - 1;
    if (d < 0) throw noOpenSpanError(what);
    const a = this.sAttrs[d];
    if (a !== '') flags |= ATTRS;
    this.push(
      this.sName[d],
      this.mainId,
      this.sLocal[d],
      d > 0 ? this.mainId : 0,
      d > 0 ? this.sLocal[d - 1] : 0,
      d,
      flags,
      this.sStart[d],
      t,
      a,
    );
    this.depth = d;
  }

  private push(
    name: number,
    timeline: number,
    local: number,
    parentTimeline: number,
    parentLocal: number,
    depth: number,
    flags: number,
    start: number,
    end: number,
    attrs: string,
  ): void {
    const i = this.count;
    if (i === this.cap) this.grow();
    const f = i * FPR;
    const fields = this.fields;
    fields[f] = name;
    fields[f + 1] = timeline;
    fields[f + 2] = local;
    fields[f + 3] = parentTimeline;
    fields[f + 4] = parentLocal;
    fields[f + 5] = (depth << 16) | flags;
    this.times[2 * i] = start;
    this.times[2 * i + 1] = end;
    if (attrs !== '') this.attrs.push([i, attrs]);
    this.count = i + 1;
  }

  intern(name: string): number {
    if (this.closedFlag) throw closedError();
    let id = this.nameIds.get(name);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(name);
      this.nameIds.set(name, id);
    }
    return id;
  }

  openDepth(): number {
    return this.depth;
  }

  innermost(): number {
    return this.depth === 0 ? 0 : this.sLocal[this.depth - 1];
  }

  // ---- async spans and tracks ----

  track(name: string, serial: boolean): number {
    if (this.closedFlag) throw closedError();
    let tl = this.tracks.get(name);
    if (tl === undefined) {
      tl = this.newTimeline(`track: ${name}`, 'track', serial);
      this.tracks.set(name, tl);
    }
    return tl.id;
  }

  asyncBegin(track: number, nameId: number, attrsJson: string): number {
    if (this.closedFlag) throw closedError();
    const tl = this.timelineList[track - 1];
    if (tl === undefined || tl.kind !== 'track' || nameId >= this.names.length) {
      // The core tells neither apart (token 0): the same text as the native backend.
      throw asyncRejectedError(track, nameId);
    }
    const local = ++tl.nextLocal;
    const token = track * TIMELINE_SHIFT + local;
    // No parent: the binding's asyncBegin passes none to the core either.
    this.openAsyncSpans.set(token, {
      track: tl,
      name: nameId,
      local,
      start: this.now(),
      parentTimeline: 0,
      parentLocal: 0,
      attrs: attrsJson,
    });
    return token;
  }

  asyncEnd(token: number, flags: number): number {
    const t = this.now();
    if (this.closedFlag) return STATUS_CLOSED;
    const span = this.openAsyncSpans.get(token);
    if (span === undefined) return STATUS_INVALID;
    this.openAsyncSpans.delete(token);
    const tl = span.track;
    let start = span.start;
    // tunix's device-span rule: a serial track runs one span at a time, so a
    // span starts no earlier than the previous one on the track ended.
    if (tl.serial) {
      if (tl.lastEnd > start) start = Math.min(tl.lastEnd, t);
      if (t > tl.lastEnd) tl.lastEnd = t;
    }
    let f = FLAG_ASYNC | (flags & (FLAG_ERROR | FLAG_ABANDONED));
    if (span.parentLocal !== 0) f |= FLAG_PARENT_ELSEWHERE;
    if (span.attrs !== '') f |= FLAG_ATTRS;
    this.push(span.name, tl.id, span.local, span.parentTimeline, span.parentLocal, 0, f, start, t, span.attrs);
    return STATUS_OK;
  }

  openAsync(): Array<[number, string]> {
    const out: Array<[number, string]> = [];
    for (const [token, span] of this.openAsyncSpans) out.push([token, this.names[span.name] ?? '?']);
    return out;
  }

  // ---- groups ----

  groupBegin(nameId: number, attrsJson: string): void {
    this.check(nameId);
    if (this.groupsTl === undefined) this.groupsTl = this.newTimeline('groups', 'groups', false);
    this.groups.push({ name: nameId, local: ++this.groupsTl.nextLocal, start: this.now(), attrs: attrsJson });
  }

  groupEnd(): void {
    const t = this.now();
    if (this.closedFlag) throw closedError();
    const g = this.groups.pop();
    const tl = this.groupsTl;
    if (g === undefined || tl === undefined) throw noOpenSpanError('groupEnd()', 'group');
    const d = this.groups.length;
    const parent = d > 0 ? this.groups[d - 1].local : 0;
    this.push(g.name, tl.id, g.local, parent === 0 ? 0 : tl.id, parent, d, g.attrs !== '' ? FLAG_ATTRS : 0, g.start, t, g.attrs);
  }

  openGroups(): number {
    return this.groups.length;
  }

  // ---- finalization and reading ----

  flush(): void {
    // Every record commits at end(); nothing is ever pending.
  }

  pending(): number {
    return 0;
  }

  snapshot(): NativeSnapshot {
    // Records grouped by timeline (id order), commit order within one: the
    // order the core's snapshot has.
    const n = this.count;
    const tls = this.timelineList.length;
    const offsets = new Uint32Array(tls + 2);
    const src = this.fields;
    for (let i = 0; i < n; i++) offsets[src[i * FIELDS_PER_RECORD + 1] + 1]++;
    for (let k = 1; k < offsets.length; k++) offsets[k] += offsets[k - 1];
    const where = new Uint32Array(n);
    const times = new Float64Array(2 * n);
    const fields = new Uint32Array(FIELDS_PER_RECORD * n);
    for (let i = 0; i < n; i++) {
      const j = offsets[src[i * FIELDS_PER_RECORD + 1]]++;
      where[i] = j;
      times[2 * j] = this.times[2 * i];
      times[2 * j + 1] = this.times[2 * i + 1];
      fields.set(src.subarray(i * FIELDS_PER_RECORD, (i + 1) * FIELDS_PER_RECORD), j * FIELDS_PER_RECORD);
    }
    const attrs: Array<[number, string]> = this.attrs.map(([i, text]) => [where[i], text]);
    attrs.sort((a, b) => a[0] - b[0]);
    return {
      names: this.names.slice(),
      timelines: this.timelineList.map((t) => ({ id: t.id, name: t.name, kind: t.kind, exited: false })),
      count: n,
      times,
      fields,
      attrs,
    };
  }

  stats(): readonly StatsRow[] {
    return statsFromSnapshot(this.snapshot());
  }

  chromeJson(): string {
    return chromeJson(this.snapshot(), this.serialTracks);
  }

  share(): string {
    throw new Error(
      'hotspan: share() needs the native backend (cross-worker joining); this tracer runs the js backend',
    );
  }

  nativeApi(): unknown {
    throw new Error('hotspan: nativeApi() needs the native backend; this tracer runs the js backend');
  }

  native(): NativeTracer | undefined {
    return undefined;
  }

  close(): void {
    this.closedFlag = true;
  }
}
