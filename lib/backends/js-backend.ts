// The pure-TypeScript backend: the same semantics as the core for one JS
// thread. Records live in growable typed-array columns laid out exactly like
// NativeSnapshot (2 times + 6 u32 fields per record), so recording allocates
// nothing per span and a snapshot is a copy. Every record commits at end():
// the only recording thread is the JS thread that owns the tracer.
//
// Workers: share() opens a ShareHub (./js-join) that merges batches from
// joined threads into these columns; JsBackend.join() makes the backend of a
// joined thread, whose columns live on SharedArrayBuffers and are shipped to
// the owner instead of being read here.

import { randomBytes } from 'node:crypto';

import { openIdsOf, type Backend, type Given, type OpenIds } from './backend';
import { calibrate, readClocks } from '../common/clock';
import { columnsView, type FrozenView } from '../read/frozen-view';
import { CounterColumns } from './counter-columns';
import { asyncRejectedError, closedError, depthError, MAX_DEPTH, noOpenSpanError, traceNestingError, unknownNameError } from '../common/errors';
import { JoinLink, openShared, ShareHub, type Batch, type JoinedThread, type SharedState, type TimelineDesc } from './js-join';
import {
  FIELD_DEPTH_FLAGS,
  FIELD_LOCAL,
  FIELD_NAME,
  FIELD_PARENT_LOCAL,
  FIELD_PARENT_TIMELINE,
  FIELD_TIMELINE,
  FIELDS_PER_RECORD,
  FLAG_ABANDONED,
  FLAG_ASYNC,
  FLAG_ATTRS,
  FLAG_CONTEXT,
  FLAG_ERROR,
  FLAG_PARENT_ELSEWHERE,
  STATUS_CLOSED,
  STATUS_INVALID,
  STATUS_OK,
  TIMELINE_SHIFT,
} from '../common/flags';
import type { NativeSnapshot, NativeTracer, StoredContext } from '../binding/native-binding';
import type { ExportSlice, JsExportInfo } from '../otlp/otlp-export-slice';
import { writeDocument, writeDocumentNow, type OutputFormat, type WrittenFile } from '../common/output';
import type { TimelineKind } from '../read/records';
import { totalCounts, type BackendCounts } from '../common/counts';
import type { OnFull } from '../tracer/options';
import { statsFromNative, type StatsRow } from '../read/stats';
import { SideEntries } from './side-entries';
import { FRAME_WORDS, openStackIds, rootIds, statsOfColumns, writeColumns } from '../binding/wasm-core';

interface Timeline {
  readonly id: number;
  name: string;
  readonly kind: TimelineKind;
  readonly serial: boolean;
  nextLocal: number;
  /** Serial tracks: end of the latest span on the track. */
  lastEnd: number;
  /** A joined thread's timeline whose thread exited. */
  exited: boolean;
  /** The budget's counts: records stored, and of those overwritten or released (read by the OTLP export); records dropped. */
  stored: number;
  overwritten: number;
  released: number;
  dropped: number;
}

interface OpenAsync {
  readonly track: Timeline;
  readonly name: number;
  readonly local: number;
  readonly start: number;
  readonly parentTimeline: number;
  readonly parentLocal: number;
  readonly attrs: string;
  readonly ctx: StoredContext | undefined;
}

/** The context an open span was begun under (beginContext), at its stack depth: the core's given_stack. */
interface GivenOpen {
  readonly depth: number;
  readonly ctx: StoredContext | undefined;
  /** Tracer-wide span id of the given parent; 0: none. */
  readonly parentSpan: number;
}

interface OpenGroup {
  readonly name: number;
  readonly local: number;
  readonly start: number;
  readonly attrs: string;
}

// Local copies: an imported constant is a property load on the module object
// in the CommonJS output, a local const is folded by the JIT.
const FPR = FIELDS_PER_RECORD;
const ATTRS = FLAG_ATTRS;
// Read once: globalThis.performance is an accessor in Node.
const perf = performance;
const TRACK_PREFIX = 'track: ';
/** push() never reaches it: no ship hook outside a joined thread. */
const NO_MARK = 0x7fffffff;
/** A joined thread's batch: records shipped at once when it fills. */
const JOIN_BATCH = 8192;
const JOIN_INITIAL = 1024;

/** What a record costs the budget: its times and fields. */
const RECORD_BYTES = 16 + 4 * FIELDS_PER_RECORD;
/** What an attribute text costs the budget (UTF-16 text and its entry). */
function attrCost(text: string): number {
  return 2 * text.length + 48;
}
/** What a stored context costs the budget (its ids, its tracestate and its entry). */
function contextCost(ctx: StoredContext): number {
  return 2 * ctx.tracestate.length + 80;
}
const NO_LIMIT = 2 ** 40;
/** W3C: at most 512 characters of tracestate are propagated (as the addon keeps them). */
const MAX_TRACESTATE = 512;

/** A span's given context as the core stores it: a context only for a valid trace id, a given parent apart. */
function storedOf(given: Given): { ctx: StoredContext | undefined; parentSpan: number } {
  const ids = given.ids;
  const valid = ids[0] !== 0n || ids[1] !== 0n;
  const tracestate = given.tracestate.length <= MAX_TRACESTATE ? given.tracestate : '';
  const ctx = valid ? { traceHi: ids[0], traceLo: ids[1], parentWire: ids[2], flags: given.flags & 0xff, tracestate } : undefined;
  return { ctx, parentSpan: Number(ids[3]) };
}

/** 64 random bits, never 0: a tracer's id salt (native/core/record/trace_id.cc random_salt). */
function randomSalt(): bigint {
  for (;;) {
    const v = randomBytes(8).readBigUInt64LE();
    if (v !== 0n) return v;
  }
}

/** Joined backends of this thread, by token: a second join reuses the timeline (as the addon does). */
const joinedByToken = new Map<string, JsBackend>();

function f64(n: number, shared: boolean): Float64Array {
  return shared ? new Float64Array(new SharedArrayBuffer(8 * n)) : new Float64Array(n);
}
function u32(n: number, shared: boolean): Uint32Array {
  return shared ? new Uint32Array(new SharedArrayBuffer(4 * n)) : new Uint32Array(n);
}

function joinedReadError(what: string, verb = 'read'): Error {
  return new Error(
    `hotspan: ${what} is not available on a tracer joined with the js backend: its records are shipped to ` +
      `the tracer that shared the token; ${verb} them there`,
  );
}

export interface JsBackendOptions {
  threadName: string;
  /** The budget in bytes (records at RECORD_BYTES each, attributes at attrCost) and its policy. */
  memoryLimit?: number;
  onFull?: OnFull;
  /** The salt of the W3C ids (a joined thread's is its owner's); default: random. */
  idSalt?: bigint;
  /** The head sampler word (native/core/record/sampler.h); default 0n, parentbased_always_on. */
  sampler?: bigint;
  /** The tail keep word of its OTLP export (native/core/record/tail_keep.h); default 0n, none. */
  keep?: bigint;
  /** Test hook: the clock, ms on the performance.now() axis. */
  clock?: () => number;
  /** Internal (JsBackend.join): record for the tracer that shared this token. */
  join?: { token: string; state: SharedState };
}

export class JsBackend implements Backend {
  readonly kind = 'js' as const;
  readonly clockBoundMs = 0;

  private readonly clock: (() => number) | undefined;
  private closedFlag = false;

  private readonly names: string[] = [];
  private readonly nameIds = new Map<string, number>();
  /** Timelines in id order. */
  private readonly timelineList: Timeline[] = [];
  /**
   * Timelines by id. Ids are dense (1, 2, ...) until share(); then every
   * thread takes them from the shared state, so a thread's list has gaps
   * (ids other threads took) and a timeline joined late may sort before one.
   */
  private readonly timelineAt: Array<Timeline | undefined> = [];
  private readonly tracks = new Map<string, Timeline>();
  private readonly serialTracks = new Set<number>();
  private readonly mainTl: Timeline;
  private readonly mainId: number;
  private groupsTl: Timeline | undefined;

  // Committed records, NativeSnapshot layout. Under the budget a ring: the
  // `count` records kept start at slot `head`; `seq` records were stored in
  // all, so the oldest kept one is number seq - count.
  private times: Float64Array = new Float64Array(2 * 1024);
  private fields: Uint32Array = new Uint32Array(FIELDS_PER_RECORD * 1024);
  private cap = 1024;
  private count = 0;
  private head = 0;
  private seq = 0;
  /** Attribute texts of the kept records. */
  private readonly attrs = new SideEntries<string>();
  /** Stored contexts of the kept FLAG_CONTEXT records. */
  private readonly ctxs = new SideEntries<StoredContext>();
  /** What the kept records' attributes and contexts cost the budget. */
  private sideBytes = 0;
  /** Salt of this tracer's W3C ids (native/core/record/trace_id.h); a joined thread's is its owner's. */
  private readonly salt: bigint;
  /** The head sampler word (native/core/record/sampler.h); a joined thread's is its owner's. */
  private readonly sampler: bigint;
  /** The tail keep word of its OTLP export (tail_keep.h); a joined thread exports nothing. */
  private readonly keep: bigint;
  /**
   * Once shared: the tracer-wide counters async span local ids and
   * timeline ids come from, and the track ids by name (every thread's, so a
   * joined thread's spans keep their ids when merged, and the parents naming
   * them and the W3C ids derived in the thread stay valid).
   */
  private sharedTracks: SharedState | undefined;
  private readonly limitBytes: number;
  private readonly onFull: OnFull;
  private lossSeen = false;
  private readonly counters = new CounterColumns();
  /** push() calls reachedMark() once it writes this index (joined threads only). */
  private shipMark = NO_MARK;

  /** Owner side, once share() was called. */
  private hub: ShareHub | undefined;
  /** Joined side: the link to the owner, and what was shipped already. */
  private readonly link: JoinLink | undefined;
  private readonly joinState: SharedState | undefined;
  /** Word 0 mirrors `count` on a joined thread (the owner reads it if this thread is terminated). */
  private readonly unshipped: Int32Array;
  private shippedNames = 0;
  private shippedTimelines = 0;

  // The thread's open-span stack.
  private depth = 0;
  private stackCap = 64;
  private sName = new Uint32Array(64);
  private sLocal = new Uint32Array(64);
  private sStart = new Float64Array(64);
  /** Attribute text per open span; '' for none. */
  private sAttrs: string[] = [];
  /** Contexts of open spans begun under one, innermost last. */
  private readonly given: GivenOpen[] = [];
  /** The depth of the innermost of them, -1 for none: end() tests one number. */
  private givenTop = -1;
  /** openIds()'s frames (wasm-core FRAME_WORDS per open span), reused. */
  private frames = new BigUint64Array(0);
  /** openIds()'s answer as the addon's: 5 ids words, then the span id. */
  private readonly openOut = new BigUint64Array(6);

  private readonly openAsyncSpans = new Map<number, OpenAsync>();
  private readonly groups: OpenGroup[] = [];

  constructor(options: JsBackendOptions) {
    this.clock = options.clock;
    this.limitBytes = options.memoryLimit ?? NO_LIMIT;
    this.onFull = options.onFull ?? 'overwrite';
    // A joined thread's timeline takes a tracer-wide id: its ids are the owner's.
    this.sharedTracks = options.join?.state;
    this.mainTl = this.newTimeline(options.threadName, 'js', false);
    this.mainId = this.mainTl.id;
    this.salt = options.join === undefined ? (options.idSalt ?? randomSalt()) : options.join.state.salt;
    this.sampler = options.join === undefined ? (options.sampler ?? 0n) : options.join.state.sampler;
    this.keep = options.keep ?? 0n;
    if (options.join !== undefined) {
      this.cap = JOIN_INITIAL;
      this.times = f64(2 * JOIN_INITIAL, true);
      this.fields = u32(FIELDS_PER_RECORD * JOIN_INITIAL, true);
      this.shipMark = 0;
      this.joinState = options.join.state;
      this.unshipped = new Int32Array(new SharedArrayBuffer(8));  // JoinLink's two words
      // Last: the link ships the hello (this thread's timeline) at once.
      this.link = new JoinLink(options.join.token, options.join.state, options.threadName, this.mainId, this, this.unshipped);
    } else {
      this.unshipped = new Int32Array(2);
    }
  }

  /**
   * The backend of this thread joined to the tracer that shared `token`
   * (created in another thread of this process, js backend). Throws an Error
   * naming the token when it is not usable here.
   */
  static join(token: string, threadName: string): JsBackend {
    const state = openShared(token);
    const known = joinedByToken.get(token);
    if (known !== undefined) return known;
    const b = new JsBackend({ threadName, join: { token, state } });
    joinedByToken.set(token, b);
    return b;
  }

  now(): number {
    return this.clock === undefined ? perf.now() : this.clock();
  }

  private newTimeline(name: string, kind: TimelineKind, serial: boolean, id = this.sharedTracks?.nextTimeline() ?? this.timelineList.length + 1): Timeline {
    const tl: Timeline = {
      id,
      name,
      kind,
      serial,
      nextLocal: 0,
      lastEnd: -Infinity,
      exited: false,
      stored: 0,
      overwritten: 0,
      released: 0,
      dropped: 0,
    };
    const list = this.timelineList;
    list.push(tl);
    // An id taken before one made here, made after it (shared ids): back in
    // id order, what the readers expect. A joined thread reads none, and
    // ships its timelines in the order made (takeBatch).
    if (this.link === undefined && list.length > 1 && list[list.length - 2].id > id) list.sort((x, y) => x.id - y.id);
    this.timelineAt[id] = tl;
    if (serial) this.serialTracks.add(tl.id);
    return tl;
  }

  private groupsTimeline(): Timeline {
    if (this.groupsTl === undefined) this.groupsTl = this.newTimeline('groups', 'groups', false);
    return this.groupsTl;
  }

  private check(nameId: number): void {
    if (this.closedFlag) throw closedError();
    if (nameId >= this.names.length) throw unknownNameError(nameId);
  }

  private growStack(): void {
    if (this.stackCap > MAX_DEPTH) throw depthError();
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

  /** Grows the buffers to `cap` records, the kept ones from slot 0 in order. */
  private grow(cap: number): void {
    const shared = this.link !== undefined;
    const t = f64(2 * cap, shared);
    const f = u32(FIELDS_PER_RECORD * cap, shared);
    this.copyKept(t, f);
    this.times = t;
    this.fields = f;
    this.head = 0;
    this.cap = cap;
  }

  /** Copies the kept records, oldest first, to the start of `t` and `f`. */
  private copyKept(t: Float64Array, f: Uint32Array): void {
    this.copyRecords(0, this.count, t, f);
  }

  /** Copies `n` kept records from the `from`-th oldest on to the start of `t` and `f`. */
  private copyRecords(from: number, n: number, t: Float64Array, f: Uint32Array): void {
    let at = this.head + from;
    if (at >= this.cap) at -= this.cap;
    const first = Math.min(n, this.cap - at);
    t.set(this.times.subarray(2 * at, 2 * (at + first)));
    f.set(this.fields.subarray(FPR * at, FPR * (at + first)));
    const rest = n - first;
    if (rest > 0) {
      t.set(this.times.subarray(0, 2 * rest), 2 * first);
      f.set(this.fields.subarray(0, FPR * rest), FPR * first);
    }
  }

  /**
   * push()'s slow path (a full buffer, or attributes): grows, or applies the
   * budget's policy. False when the record is dropped (and counted).
   */
  private makeRoom(timeline: number, attrs: string, ctx: StoredContext | undefined): boolean {
    if (this.link !== undefined) {
      // A joined thread ships its records; the owner's budget applies to them.
      if (this.count === this.cap) this.grow(this.cap * 2);
      return true;
    }
    const need = (attrs === '' ? 0 : attrCost(attrs)) + (ctx === undefined ? 0 : contextCost(ctx));
    while ((this.count + 1) * RECORD_BYTES + this.sideBytes + need > this.limitBytes) {
      // Records the OTLP export has read go first, under either policy (the core recycles released chunks).
      if (this.seq - this.count < this.exportFrom) {
        (this.timelineAt[this.removeOldest()] as Timeline).released++;
        continue;
      }
      if (this.onFull === 'drop' || this.count === 0) {
        (this.timelineAt[timeline] as Timeline).dropped++;
        this.lossSeen = true;
        return false;
      }
      this.overwriteOldest();
    }
    if (this.count === this.cap) {
      this.grow(Math.min(this.cap * 2, Math.floor((this.limitBytes - this.sideBytes - need) / RECORD_BYTES)));
    }
    this.sideBytes += need;
    return true;
  }

  private overwriteOldest(): void {
    (this.timelineAt[this.removeOldest()] as Timeline).overwritten++;
    this.lossSeen = true;
  }

  /** Takes the oldest kept record out of the ring, with its side entries; returns its timeline id. */
  private removeOldest(): number {
    const h = this.head;
    const timeline = this.fields[h * FPR + FIELD_TIMELINE];
    const oldest = this.seq - this.count;
    const text = this.attrs.dropOldest(oldest);
    if (text !== undefined) this.sideBytes -= attrCost(text);
    const ctx = this.ctxs.dropOldest(oldest);
    if (ctx !== undefined) this.sideBytes -= contextCost(ctx);
    this.head = h + 1 === this.cap ? 0 : h + 1;
    this.count--;
    return timeline;
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

  beginValues(_nameId: number, _attrs: unknown): boolean {
    return false;
  }

  beginAttrs(nameId: number, attrsJson: string): void {
    this.check(nameId);
    this.begin(nameId);
    this.sAttrs[this.depth - 1] = attrsJson;
  }

  beginDepth(nameId: number): number {
    this.begin(nameId);
    return this.depth;
  }

  endAt(depth: number, flags: number, name: number | string): void {
    const t = this.clock === undefined ? perf.now() : this.clock();
    if (this.depth !== depth && !this.closedFlag) throw traceNestingError(name, this.depth, depth);
    this.finish(t, flags & 0xffff, 'end()');
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
    let parentTl = d > 0 ? this.mainId : 0;
    let parentLocal = d > 0 ? this.sLocal[d - 1] : 0;
    let ctx: StoredContext | undefined;
    if (d === this.givenTop) {
      // Begun under a context: the given parent replaces the stack's (the core's begin_in_context).
      const g = this.given;
      const e = g.pop() as GivenOpen;
      this.givenTop = g.length === 0 ? -1 : g[g.length - 1].depth;
      ctx = e.ctx;
      if (ctx !== undefined) flags |= FLAG_CONTEXT;
      if (e.parentSpan !== 0) {
        flags |= FLAG_PARENT_ELSEWHERE;
        parentTl = Math.floor(e.parentSpan / TIMELINE_SHIFT);
        parentLocal = e.parentSpan % TIMELINE_SHIFT;
      }
    }
    this.push(this.sName[d], this.mainId, this.sLocal[d], parentTl, parentLocal, d, flags, this.sStart[d], t, a, ctx);
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
    ctx?: StoredContext,
  ): void {
    if ((this.count === this.cap || attrs !== '' || ctx !== undefined) && !this.makeRoom(timeline, attrs, ctx)) return;
    let i = this.head + this.count;
    if (i >= this.cap) i -= this.cap;
    const f = i * FPR;
    const fields = this.fields;
    fields[f + FIELD_NAME] = name;
    fields[f + FIELD_TIMELINE] = timeline;
    fields[f + FIELD_LOCAL] = local;
    fields[f + FIELD_PARENT_TIMELINE] = parentTimeline;
    fields[f + FIELD_PARENT_LOCAL] = parentLocal;
    fields[f + FIELD_DEPTH_FLAGS] = (depth << 16) | flags;
    this.times[2 * i] = start;
    this.times[2 * i + 1] = end;
    if (attrs !== '') this.attrs.push(this.seq, attrs);
    if (ctx !== undefined) this.ctxs.push(this.seq, ctx);
    this.seq++;
    (this.timelineAt[timeline] as Timeline).stored++;
    const n = ++this.count;
    this.unshipped[0] = n;
    if (i >= this.shipMark) this.reachedMark();
  }

  /** Joined thread: the first record of a batch schedules its shipping, a full batch ships now. */
  private reachedMark(): void {
    const link = this.link;
    if (link === undefined) return;
    if (this.count >= JOIN_BATCH) {
      link.ship();
    } else {
      this.shipMark = JOIN_BATCH - 1;
      link.schedule();
    }
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

  lastBegun(): number {
    return -1;
  }

  // ---- async spans and tracks ----

  track(name: string, serial: boolean): number {
    if (this.closedFlag) throw closedError();
    let tl = this.tracks.get(name);
    if (tl === undefined) {
      // Shared: the id every thread gives the track of that name.
      const id = this.sharedTracks?.trackId(name);
      tl = this.newTimeline(`${TRACK_PREFIX}${name}`, 'track', serial, id);
      this.tracks.set(name, tl);
    }
    return tl.id;
  }

  asyncBeginValues(_track: number, _nameId: number, _attrs: unknown): number {
    return 0;
  }

  asyncBegin(track: number, nameId: number, attrsJson: string): number {
    return this.beginAsync(track, nameId, attrsJson, 0, undefined);
  }

  private beginAsync(track: number, nameId: number, attrsJson: string, parentSpan: number, ctx: StoredContext | undefined): number {
    if (this.closedFlag) throw closedError();
    const tl = this.timelineAt[track];
    if (tl === undefined || tl.kind !== 'track' || nameId >= this.names.length) {
      // The core tells neither apart (token 0): the same text as the native backend.
      throw asyncRejectedError(track, nameId);
    }
    const shared = this.sharedTracks;
    const local = shared === undefined ? ++tl.nextLocal : shared.nextTrackLocal();
    const token = track * TIMELINE_SHIFT + local;
    // A parent only when given (asyncBeginContext), as the binding passes the core.
    this.openAsyncSpans.set(token, {
      track: tl,
      name: nameId,
      local,
      start: this.now(),
      parentTimeline: Math.floor(parentSpan / TIMELINE_SHIFT),
      parentLocal: parentSpan % TIMELINE_SHIFT,
      attrs: attrsJson,
      ctx,
    });
    return token;
  }

  asyncEnd(token: number, flags: number): number {
    return this.endAsync(token, flags, NaN, NaN, -1, undefined);
  }

  /** asyncEnd with the late changes of asyncFinish (the core's AsyncEndChanges). */
  private endAsync(token: number, flags: number, startMs: number, endMs: number, nameId: number, attrsJson: string | undefined): number {
    const now = this.now();
    if (this.closedFlag) return STATUS_CLOSED;
    if (nameId >= this.names.length) return STATUS_INVALID;
    const span = this.openAsyncSpans.get(token);
    if (span === undefined) return STATUS_INVALID;
    this.openAsyncSpans.delete(token);
    const tl = span.track;
    const t = Number.isFinite(endMs) ? endMs : now;
    let start = Number.isFinite(startMs) ? startMs : span.start;
    // tunix's device-span rule: a serial track runs one span at a time, so a
    // span starts no earlier than the previous one on the track ended.
    if (tl.serial) {
      if (tl.lastEnd > start) start = Math.min(tl.lastEnd, t);
      if (t > tl.lastEnd) tl.lastEnd = t;
    }
    const attrs = attrsJson ?? span.attrs;
    let f = FLAG_ASYNC | (flags & (FLAG_ERROR | FLAG_ABANDONED));
    if (span.parentLocal !== 0) f |= FLAG_PARENT_ELSEWHERE;
    if (attrs !== '') f |= FLAG_ATTRS;
    if (span.ctx !== undefined) f |= FLAG_CONTEXT;
    this.push(nameId >= 0 ? nameId : span.name, tl.id, span.local, span.parentTimeline, span.parentLocal, 0, f, start, t, attrs, span.ctx);
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
    const tl = this.groupsTimeline();
    this.groups.push({ name: nameId, local: ++tl.nextLocal, start: this.now(), attrs: attrsJson });
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

  // ---- counters ----

  counter(name: string, value: number): void {
    if (this.closedFlag) throw closedError();
    // Joined threads ship span batches only; a sample would be lost uncounted.
    if (this.link !== undefined) throw joinedReadError('counter()', 'record');
    this.counters.add(name, this.now(), value);
  }

  // ---- finalization and reading ----

  flush(): void {
    // Every record commits at end(). A joined thread ships its batch; an
    // owner merges the batches its joined threads posted.
    if (this.link !== undefined) this.link.ship();
    else this.hub?.drain();
  }

  lost(): number {
    return (this.hub?.state ?? this.joinState)?.lost() ?? 0;
  }

  pending(): number {
    // A joined thread's records not shipped yet.
    return this.link === undefined ? 0 : this.count;
  }

  /**
   * The kept records in commit order: what the writers and stats read. Not
   * copied until the budget first overwrote (then the ring is laid out in order).
   */
  private columns(): NativeSnapshot {
    if (this.link !== undefined) throw joinedReadError('reading records (snapshot, stats, query, write)');
    const n = this.count;
    if (this.seq === n) {
      return {
        names: this.names,
        timelines: this.timelineList,
        count: n,
        times: this.times,
        fields: this.fields,
        attrs: this.attrs.items,
        contexts: this.ctxs.items,
        counters: this.counters.series(false),
      };
    }
    const times = new Float64Array(2 * n);
    const fields = new Uint32Array(FPR * n);
    this.copyKept(times, fields);
    const first = this.seq - n;
    const attrs = this.attrs.from(first);
    const contexts = this.ctxs.from(first);
    return { names: this.names, timelines: this.timelineList, count: n, times, fields, attrs, contexts, counters: this.counters.series(false) };
  }

  /** The OTLP export's read: the first record not handed over, and the drops it has counted. */
  private exportFrom = 0;
  private exportDropped = 0;
  /** The end (ms) of the last record handed to the exporter: its read watermark while records are left. */
  private exportThroughMs = -Infinity;
  private exportNames = 0;

  /** @internal What the OTLP exporter's worker needs of this tracer: its id salt, and its time axis on the Unix epoch. */
  exportInfo(): JsExportInfo {
    if (this.link !== undefined) throw joinedReadError('exportOtlp()', 'export');
    const clocks = readClocks();
    return { salt: this.salt, sampler: this.sampler, keep: this.keep, unixOffsetNs: clocks.realtimeNs - clocks.monotonicNs + calibrate().originNs };
  }

  /**
   * @internal The OTLP exporter's read (lib/otlp/otlp-exporter.ts), as the core's
   * OtlpSource reads through its cursor: a copy of up to `max` committed
   * records not handed over yet (commit order; `names` only those new since
   * the last call), which the budget then takes back first (counted
   * released); the records the budget overwrote or dropped before they were
   * read, counted lost; the records left.
   */
  takeForExport(max: number): ExportSlice {
    const first = this.seq - this.count;
    let lost = 0;
    if (this.exportFrom < first) {
      lost += first - this.exportFrom;
      this.exportFrom = first;
    }
    let dropped = 0;
    for (const t of this.timelineList) dropped += t.dropped;
    lost += dropped - this.exportDropped;
    this.exportDropped = dropped;
    const from = this.exportFrom;
    const n = Math.min(max, this.seq - from);
    const times = new Float64Array(2 * n);
    const fields = new Uint32Array(FPR * n);
    this.copyRecords(from - first, n, times, fields);
    const attrs = this.attrs.between(from, from + n);
    const contexts = this.ctxs.between(from, from + n);
    this.exportFrom = from + n;
    const names = this.names.slice(this.exportNames);
    this.exportNames = this.names.length;
    const timelines = this.timelineList.map((t) => ({ id: t.id, name: t.name, kind: t.kind, exited: t.exited }));
    const left = this.seq - this.exportFrom;
    // One commit order for every timeline, in end order: the last end taken bounds what is left.
    const readThroughMs = left === 0 ? Infinity : n > 0 ? times[2 * n - 1] : this.exportThroughMs;
    this.exportThroughMs = readThroughMs === Infinity ? this.exportThroughMs : readThroughMs;
    return { snap: { names, timelines, count: n, times, fields, attrs, contexts }, lost, left, readThroughMs };
  }

  counts(): BackendCounts {
    // A joined thread's records are counted where they are shipped: the owner.
    if (this.link !== undefined) return { lost: false, limit: this.limitBytes, onFull: this.onFull, timelines: [] };
    return {
      lost: this.lossSeen,
      limit: this.limitBytes,
      onFull: this.onFull,
      timelines: this.timelineList.map((t) => ({
        id: t.id,
        name: t.name,
        produced: t.stored + t.dropped,
        kept: t.stored - t.overwritten - t.released,
        released: t.released,
        overwritten: t.overwritten,
        dropped: t.dropped,
      })),
    };
  }

  snapshot(): NativeSnapshot {
    // Records grouped by timeline (id order), commit order within one: the
    // order the core's snapshot has.
    const cols = this.columns();
    const n = cols.count;
    const offsets = new Uint32Array(this.timelineAt.length + 1);
    const src = cols.fields;
    for (let i = 0; i < n; i++) offsets[src[i * FIELDS_PER_RECORD + FIELD_TIMELINE] + 1]++;
    for (let k = 1; k < offsets.length; k++) offsets[k] += offsets[k - 1];
    const where = new Uint32Array(n);
    const times = new Float64Array(2 * n);
    const fields = new Uint32Array(FIELDS_PER_RECORD * n);
    for (let i = 0; i < n; i++) {
      const j = offsets[src[i * FIELDS_PER_RECORD + FIELD_TIMELINE]]++;
      where[i] = j;
      times[2 * j] = cols.times[2 * i];
      times[2 * j + 1] = cols.times[2 * i + 1];
      fields.set(src.subarray(i * FIELDS_PER_RECORD, (i + 1) * FIELDS_PER_RECORD), j * FIELDS_PER_RECORD);
    }
    const attrs: Array<[number, string]> = cols.attrs.map(([i, text]) => [where[i], text]);
    attrs.sort((a, b) => a[0] - b[0]);
    const contexts: Array<[number, StoredContext]> = (cols.contexts ?? []).map(([i, ctx]) => [where[i], ctx]);
    contexts.sort((a, b) => a[0] - b[0]);
    return {
      names: this.names.slice(),
      timelines: this.timelineList.map((t) => ({ id: t.id, name: t.name, kind: t.kind, exited: t.exited })),
      count: n,
      times,
      fields,
      attrs,
      contexts,
      counters: this.counters.series(true),
    };
  }

  freeze(): FrozenView {
    return columnsView(this.snapshot(), this.salt, this.sampler);
  }

  stats(): readonly StatsRow[] {
    return statsFromNative(statsOfColumns(this.columns()));
  }

  chromeJson(): Uint8Array {
    return writeColumns(this.columns(), this.serialTracks, 'json', readClocks(), calibrate().originNs, totalCounts(this.counts()));
  }

  perfetto(): Uint8Array {
    return writeColumns(this.columns(), this.serialTracks, 'perfetto', readClocks(), calibrate().originNs, totalCounts(this.counts()));
  }

  writeFile(path: string, format: OutputFormat): Promise<WrittenFile> {
    const c = this.columns();
    return writeDocument(this, path, format, { spans: c.count, timelines: c.timelines.length });
  }

  writeFileNow(path: string, format: OutputFormat): WrittenFile {
    const c = this.columns();
    return writeDocumentNow(this, path, format, { spans: c.count, timelines: c.timelines.length });
  }

  share(): string {
    if (this.closedFlag) throw closedError();
    // A joined thread passes the token on (to workers it creates), as the addon does.
    if (this.link !== undefined) return this.link.token;
    if (this.clock !== undefined) {
      throw new Error(
        'hotspan: share() is not supported on a js tracer with an injected clock: ' +
          "a worker's spans are stamped with performance.now() and could not be placed on that clock",
      );
    }
    if (this.hub === undefined) {
      this.hub = new ShareHub(this, this.salt, this.sampler);
      // From now on every thread's async spans and timelines number from
      // shared counters, above the ids taken so far, and tracks have one id by name.
      let taken = 0;
      for (const tl of this.tracks.values()) taken = Math.max(taken, tl.nextLocal);
      const tracks: Array<[string, number]> = [...this.tracks].map(([name, tl]) => [name, tl.id]);
      this.hub.state.adopt(taken, this.timelineAt.length - 1, tracks);
      this.sharedTracks = this.hub.state;
    }
    return this.hub.token;
  }

  /**
   * Owner: waits (until `deadline`, performance.now() ms) for every joined
   * thread to ship what it recorded; returns the names of those that did not.
   */
  settleJoined(deadline: number): Promise<string[]> {
    return this.hub === undefined ? Promise.resolve([]) : this.hub.settle(deadline);
  }

  /** Owner, at process exit: joined threads ship what they hold (see ShareHub.collectAtExit). */
  collectJoined(): void {
    this.hub?.collectAtExit();
  }

  // ---- ShareTarget (owner side, ./js-join) ----

  /** @internal */
  addJoinedTimeline(name: string, id: number): number {
    return (this.timelineAt[id] ?? this.newTimeline(name, 'js', false, id)).id;
  }

  /** @internal */
  markExited(timeline: number): void {
    const tl = this.timelineAt[timeline];
    if (tl !== undefined) tl.exited = true;
  }

  /** @internal Appends a joined thread's batch: its ids mapped onto this tracer's. */
  merge(thread: JoinedThread, batch: Batch): void {
    for (let j = 0; j < batch.names.length; j++) thread.names[batch.nameBase + j] = this.intern(batch.names[j]);
    for (const d of batch.tls) {
      let id: number;
      if (d.kind === 'groups') id = this.groupsTimeline().id;
      else if (d.kind === 'track') id = this.track(d.name, d.serial);
      else id = this.addJoinedTimeline(d.name, d.id);
      thread.timelines.set(d.id, id);
    }
    const { times, fields, attrs, contexts } = batch;
    let a = 0;
    let c = 0;
    for (let i = 0; i < batch.count; i++) {
      const f = i * FPR;
      const tl = this.timelineAt[thread.timelines.get(fields[f + FIELD_TIMELINE]) ?? 0];
      if (tl === undefined) continue; // a timeline never described: not ours
      let local = fields[f + FIELD_LOCAL];
      let parentTl = fields[f + FIELD_PARENT_TIMELINE] === 0 ? 0 : (thread.timelines.get(fields[f + FIELD_PARENT_TIMELINE]) ?? 0);
      let parentLocal = fields[f + FIELD_PARENT_LOCAL];
      if (tl.kind === 'groups') {
        // Group local ids are shared with this thread's own groups: renumber.
        local = this.groupLocal(thread, local);
        if (parentLocal !== 0) parentLocal = this.groupLocal(thread, parentLocal);
      }
      // Track locals come from the tracer-wide counter (sharedTracks): kept as they are.
      if (parentLocal === 0 || parentTl === 0) {
        parentTl = 0;
        parentLocal = 0;
      }
      const start = times[2 * i];
      const end = times[2 * i + 1];
      if (tl.serial && end > tl.lastEnd) tl.lastEnd = end;
      let text = '';
      if (a < attrs.length && attrs[a][0] === i) text = attrs[a++][1];
      // Ids are tracer-wide: the contexts a joined thread stored name spans as they are here.
      let ctx: StoredContext | undefined;
      if (c < contexts.length && contexts[c][0] === i) ctx = contexts[c++][1];
      const depthFlags = fields[f + FIELD_DEPTH_FLAGS];
      this.push(
        thread.names[fields[f + FIELD_NAME]] ?? this.intern('?'),
        tl.id,
        local,
        parentTl,
        parentLocal,
        depthFlags >>> 16,
        depthFlags & 0xffff,
        start,
        end,
        text,
        ctx,
      );
    }
  }

  private groupLocal(thread: JoinedThread, remote: number): number {
    let local = thread.groupLocals.get(remote);
    if (local === undefined) {
      local = ++this.groupsTimeline().nextLocal;
      thread.groupLocals.set(remote, local);
    }
    return local;
  }

  // ---- JoinSource (joined side, ./js-join) ----

  /** @internal */
  takeBatch(): Batch {
    const names = this.names.slice(this.shippedNames);
    const nameBase = this.shippedNames;
    this.shippedNames = this.names.length;
    const tls: TimelineDesc[] = this.timelineList.slice(this.shippedTimelines).map((t) => ({
      id: t.id,
      name: t.kind === 'track' ? t.name.slice(TRACK_PREFIX.length) : t.name,
      kind: t.kind,
      serial: t.serial,
    }));
    this.shippedTimelines = this.timelineList.length;
    const count = this.count;
    if (count === 0) {
      return { names, nameBase, tls, count, times: new Float64Array(0), fields: new Uint32Array(0), attrs: [], contexts: [] };
    }
    // The shipped buffers now belong to the owner: start on fresh ones.
    const batch: Batch = { names, nameBase, tls, count, times: this.times, fields: this.fields, attrs: this.attrs.take(), contexts: this.ctxs.take() };
    this.cap = JOIN_INITIAL;
    this.times = f64(2 * JOIN_INITIAL, true);
    this.fields = u32(FIELDS_PER_RECORD * JOIN_INITIAL, true);
    this.count = 0;
    this.seq = 0;
    this.shipMark = 0;
    return batch;
  }

  /** @internal */
  ownerClosed(): void {
    this.closedFlag = true;
    joinedByToken.delete(this.link?.token ?? '');
  }

  /** @internal */
  abandonOpen(): void {
    if (this.closedFlag) return;
    const t = this.now();
    while (this.depth > 0) this.finish(t, FLAG_ABANDONED, 'end()');
    for (const token of [...this.openAsyncSpans.keys()]) this.asyncEnd(token, FLAG_ABANDONED);
  }

  nativeApi(): unknown {
    throw new Error('hotspan: nativeApi() needs the native backend; this tracer runs the js backend');
  }

  // ---- trace context: the core's ids through the WebAssembly build (span_ids.h) ----

  beginContext(nameId: number, attrsJson: string, given: Given): void {
    this.check(nameId);
    this.begin(nameId);
    const d = this.depth - 1;
    this.sAttrs[d] = attrsJson;
    const { ctx, parentSpan } = storedOf(given);
    if (ctx !== undefined || parentSpan !== 0) {
      this.given.push({ depth: d, ctx, parentSpan });
      this.givenTop = d;
    }
  }

  asyncBeginContext(track: number, nameId: number, attrsJson: string, given: Given): number {
    const { ctx, parentSpan } = storedOf(given);
    return this.beginAsync(track, nameId, attrsJson, parentSpan, ctx);
  }

  asyncFinish(token: number, flags: number, startMs: number, endMs: number, nameId: number, attrsJson?: string): number {
    return this.endAsync(token, flags, startMs, endMs, nameId, attrsJson);
  }

  openIds(): OpenIds | undefined {
    const depth = this.depth;
    if (depth === 0) return undefined;
    const spanId = this.mainId * TIMELINE_SHIFT + this.sLocal[depth - 1];
    // The open stack's frames to the core's walk (open_stack_ids.h): what the addon's openIds answers.
    if (this.frames.length < FRAME_WORDS * depth) this.frames = new BigUint64Array(2 * FRAME_WORDS * depth);
    const f = this.frames;
    f.fill(0n, 0, FRAME_WORDS * depth);
    for (let k = 0; k < depth; k++) f[FRAME_WORDS * k] = BigInt(this.sLocal[k]);
    for (const e of this.given) {
      const w = FRAME_WORDS * e.depth;
      f[w + 1] = BigInt((e.ctx !== undefined ? FLAG_CONTEXT : 0) | (e.parentSpan !== 0 ? FLAG_PARENT_ELSEWHERE : 0));
      f[w + 2] = BigInt(e.parentSpan);
      if (e.ctx !== undefined) {
        f[w + 3] = e.ctx.traceHi;
        f[w + 4] = e.ctx.traceLo;
        f[w + 5] = e.ctx.parentWire;
        f[w + 6] = BigInt(e.ctx.flags);
      }
    }
    const ids = this.openOut;
    openStackIds(f, depth, this.mainId, this.salt, this.sampler, ids);
    ids[5] = BigInt(spanId);
    return openIdsOf(ids);
  }

  idsOf(span: number): BigUint64Array {
    if (!(span >= 1 && span <= Number.MAX_SAFE_INTEGER) || Math.floor(span) !== span) {
      throw new RangeError(`hotspan: span must be a span id, got ${String(span)}`);
    }
    return rootIds(span, this.salt, this.sampler);
  }

  native(): NativeTracer | undefined {
    return undefined;
  }

  close(): void {
    if (this.link !== undefined) {
      // A joined thread: ship, keep the link (a later join reuses the
      // timeline, the thread's exit still ships and marks it exited).
      this.link.ship();
      return;
    }
    this.hub?.close();
    this.closedFlag = true;
  }
}
