// A worker's thread joined (Tracer.join) to a tracer on the wasm engine: it
// records in a core instance of its own, through the same hot path as the
// owner's thread (./wasm-backend), and its link (./join-link's JoinLink) ships
// the finished records as the core encodes them (native/core/read/
// handover_batch.h) to the owner, whose core imports them (./wasm-join).
// This instance's budget only holds what waits for the next batch (a full
// batch ships at once, a partial one soon after its first record): what it
// cannot hold is dropped and counted by its core, and the count travels with
// the next batch to the owner's timeline of this thread.
// Its async tracks and groups ride in the same batches (one section per
// timeline): a track's id and each async span's local id come from the shared
// tracer's tables (./share-transport's SharedState), so the span ids and W3C ids this
// thread shows are the ones the owner stores; the owner renumbers groups.
// Counters are not carried (as on the TypeScript engine); records are read at
// the owner.

import { closedError, trackKindError } from '../common/errors';
import { FLAG_ABANDONED, STATUS_OK } from '../common/flags';
import type { BackendCounts } from '../common/counts';
import type { OutputFormat, WrittenFile } from '../common/output';
import type { NativeSnapshot } from '../binding/native-binding';
import type { FrozenView } from '../read/frozen-view';
import type { StatsRow } from '../read/stats';
import type { Given } from './backend';
import { JoinLink, type JoinSource } from './join-link';
import { openShared, type Batch, type SharedState } from './share-transport';
import { WasmBackend } from './wasm-backend';

/** Records per batch: a full batch ships at once (it fits this instance's budget several times over). */
const JOIN_BATCH = 8192;
/** The budget of a joined thread's own instance: what waits for the next batch. */
const JOINED_BUDGET = 4 << 20;
/** This thread's joined backends by token: a second join reuses the timeline (as the addon does). */
const joinedByToken = new Map<string, WasmJoinedBackend>();

function joinedReadError(what: string, verb = 'read'): Error {
  return new Error(
    `hotspan: ${what} is not available on a tracer joined with the js backend: its records are shipped to ` +
      `the tracer that shared the token; ${verb} them there`,
  );
}

export class WasmJoinedBackend extends WasmBackend implements JoinSource {
  private readonly link: JoinLink;
  private readonly source: number;
  /** JoinLink's two words: records not shipped yet, records reserved in flight. */
  private readonly unshipped = new Int32Array(new SharedArrayBuffer(8));
  private count = 0;
  private readonly state: SharedState;
  /** Tracks by name: their tracer-wide ids (SharedState.trackId). */
  private readonly tracks = new Map<string, number>();
  private groupsMade = false;

  /** The backend of this thread joined to the wasm-engine tracer that shared `token` (the caller checked the token's kind). */
  static join(token: string, threadName: string): WasmJoinedBackend {
    const state = openShared(token);
    const known = joinedByToken.get(token);
    if (known !== undefined) return known;
    const b = new WasmJoinedBackend(token, state, threadName, state.nextTimeline());
    joinedByToken.set(token, b);
    return b;
  }

  /** `timeline`: the tracer-wide id of this thread's timeline, the one its ids and the owner's import use. */
  private constructor(token: string, state: SharedState, threadName: string, timeline: number) {
    super({ threadName, memoryLimit: JOINED_BUDGET, onFull: 'drop', idSalt: state.salt, sampler: state.sampler, timeline });
    this.state = state;
    this.source = this.rec.handoverOpen();
    // Last: the link ships the hello (this thread's timeline) at once.
    this.link = new JoinLink(token, state, threadName, timeline, this, this.unshipped);
  }

  // ---- the hot path: the owner's, then one count ----

  override end(): void {
    super.end();
    this.ended();
  }

  override endFlags(flags: number): void {
    super.endFlags(flags);
    this.ended();
  }

  override endAt(depth: number, flags: number, name: number | string): void {
    super.endAt(depth, flags, name);
    this.ended();
  }

  private ended(): void {
    const n = ++this.count;
    this.unshipped[0] = n;
    if (n === 1) this.link.schedule();
    else if (n >= JOIN_BATCH) this.link.ship();
  }

  // ---- JoinSource ----

  /** @internal The records ended since the last batch, as the core encodes them. */
  takeBatch(): Batch {
    const core = this.rec.handoverTake(this.source);
    const count = new DataView(core.buffer, core.byteOffset, core.byteLength).getUint32(12, true);
    this.count = 0;
    return { count, core };
  }

  /** @internal The batch as back-pressure refused it: its names and losses only. */
  refuse(batch: Batch): Batch {
    return { count: 0, core: this.rec.handoverStrip(batch.core) };
  }

  /**
   * @internal The thread exits: its open spans and async spans end, flagged
   * abandoned (an async span lives in this thread's core, so no other thread
   * could end it), and its timeline is marked exited.
   */
  abandonOpen(): void {
    if (this.closedFlag) return;
    for (const [token] of this.openAsync()) this.asyncEnd(token, FLAG_ABANDONED);
    this.rec.detach(this.thread, performance.now());
  }

  /** @internal The owner closed: recording calls throw from now on. */
  ownerClosed(): void {
    this.closedFlag = true;
    this.rec.close();
  }

  // ---- not on a joined thread ----

  // ---- tracks and groups: recorded here under the shared tracer's ids ----

  override track(name: string, serial: boolean): number {
    if (this.closedFlag) throw closedError();
    let id = this.tracks.get(name);
    if (id === undefined) {
      id = this.state.trackId(name);
      this.tracks.set(name, id);
    }
    const got = this.rec.trackAt(name, serial, id);
    if (got === 0) throw this.closedFlag ? closedError() : trackKindError(name, !serial);
    return got;
  }

  override asyncBegin(track: number, nameId: number, attrsJson: string): number {
    this.takeLocal(track);
    return super.asyncBegin(track, nameId, attrsJson);
  }

  override asyncBeginContext(track: number, nameId: number, attrsJson: string, given: Given): number {
    this.takeLocal(track);
    return super.asyncBeginContext(track, nameId, attrsJson, given);
  }

  /** The next async span on `track` takes the shared tracer's next local id. */
  private takeLocal(track: number): void {
    if (!this.closedFlag) this.rec.asyncNextLocal(track, this.state.nextTrackLocal());
  }

  override asyncEnd(token: number, flags: number): number {
    const s = super.asyncEnd(token, flags);
    if (s === STATUS_OK) this.ended();
    return s;
  }

  override asyncFinish(token: number, flags: number, startMs: number, endMs: number, nameId: number, attrsJson?: string): number {
    const s = super.asyncFinish(token, flags, startMs, endMs, nameId, attrsJson);
    if (s === STATUS_OK) this.ended();
    return s;
  }

  override groupBegin(nameId: number, attrsJson: string): void {
    // Its own ids stay clear of the tracer-wide track ids this instance also holds.
    if (!this.groupsMade && !this.closedFlag) this.groupsMade = this.rec.groupsAt(this.state.nextTimeline()) !== 0;
    super.groupBegin(nameId, attrsJson);
  }

  override groupEnd(): void {
    super.groupEnd();
    this.ended();
  }

  override counter(_name: string, _value: number): void {
    throw joinedReadError('counter()', 'record');
  }

  override flush(): void {
    this.link.ship();
  }

  override pending(): number {
    return this.count;
  }

  override lost(): number {
    return 0;
  }

  override snapshot(): NativeSnapshot {
    throw joinedReadError('reading records (snapshot, stats, query, write)');
  }

  override freeze(): FrozenView {
    return this.snapshot() as never;
  }

  override stats(): readonly StatsRow[] {
    return this.snapshot() as never;
  }

  /** A joined thread's records are counted where they are shipped: the owner. */
  override counts(): BackendCounts {
    return { lost: false, limit: JOINED_BUDGET, onFull: 'drop', timelines: [] };
  }

  override chromeJson(): Uint8Array {
    return this.snapshot() as never;
  }

  override perfetto(): Uint8Array {
    return this.snapshot() as never;
  }

  override writeFile(_path: string, _format: OutputFormat): Promise<WrittenFile> {
    return Promise.reject(joinedReadError('reading records (snapshot, stats, query, write)'));
  }

  override writeFileNow(_path: string, _format: OutputFormat): WrittenFile {
    return this.snapshot() as never;
  }

  /** A joined thread's records are exported by the tracer that shared the token. */
  override exportInfo(): never {
    throw joinedReadError('exportOtlp()', 'export');
  }

  override share(): string {
    if (this.closedFlag) throw closedError();
    return this.link.token; // passed on to workers this thread creates, as the addon does
  }

  override settleJoined(): Promise<string[]> {
    return Promise.resolve([]);
  }

  override collectJoined(): void {}

  /** A joined thread ships and keeps its link: a later join reuses the timeline; its exit still ships. */
  override close(): void {
    this.link.ship();
  }
}
