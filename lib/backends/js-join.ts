// Cross-thread joining for the js backend: tracer.share() on one thread,
// Tracer.join(token) in a worker_threads worker, with the native backend's
// semantics as far as plain JS allows.
//
// - The token is "hotspan-js:<pid>:<24 hex>". share() registers it as
//   worker_threads environment data holding a SharedArrayBuffer (word 0: the
//   owner closed). Environment data is copied into every Worker created
//   after that (and into their workers), so join() can check a token
//   synchronously, and the shared word tells a worker the owner closed.
//   Limit: a worker started before share() cannot join (clear error). The
//   entry stays after close() (so a late join says "closed tracer"): a few
//   bytes per shared tracer, copied into each new worker.
// - A joined thread records into its own columns, allocated on
//   SharedArrayBuffers, and ships them ("batches") to the owner over a
//   BroadcastChannel named by the token: when a batch fills, soon after the
//   first record of a batch (an unref'd timer), on flush()/close(), when the
//   owner asks (settle), and a last batch from process 'exit' (normal exit,
//   process.exit(), an uncaught exception), with its open spans ended
//   abandoned. A shipped SharedArrayBuffer is never touched again by the
//   worker, so the message costs a few microseconds, not a copy.
// - Back-pressure: the state buffer also holds the records in flight
//   (posted, not merged yet) and a lost-span counter. A worker that would
//   push the records in flight past MAX_IN_FLIGHT drops its batch's records
//   and counts them lost (names, timelines and flags still ship), so neither
//   the owner's message queue nor its memory grows without bound while
//   workers outrun it.
// - The owner's close() marks the state closed (one atomic OR, so no worker
//   can post uncounted after it), merges what is in flight (waiting at most
//   CLOSE_WAIT_MS for a post under way), and counts the rest lost. A worker
//   counts its unshipped records lost when it learns of the close (its next
//   ship, the 'closed' message, its exit).
// - A worker stopped by worker.terminate() runs no JS: what it had not
//   shipped yet (at most one batch, or ~SHIP_DELAY_MS of spans) is lost. The
//   worker keeps that number in a shared word, and a batch it reserved room
//   for and has not posted in a second one; it moves records between them
//   with no call in between, which terminate() cannot split. The owner counts
//   both lost when the Worker's 'exit' reaches it (workers the owner's thread
//   created) and gives the reserved room back.
// - The owner merges batches into its own store: a timeline per joined
//   thread and a track per name, under the tracer-wide ids the worker took
//   from the shared state (so its span ids, the parents naming them and the
//   W3C ids it derived with the owner's salt stay valid), names mapped by
//   string, worker groups onto the owner's group timeline. flush() drains the channel synchronously
//   (receiveMessageOnPort), so whatever a worker posted before it is seen.
// - Workers created by the owner's thread are watched ('worker' process
//   event): their exit marks the timeline exited and ends settle()'s wait.

import { randomBytes } from 'node:crypto';
import {
  BroadcastChannel,
  getEnvironmentData,
  receiveMessageOnPort,
  setEnvironmentData,
  threadId,
  type Worker,
} from 'node:worker_threads';

import { ChangeSignal } from '../common/change-signal';
import type { StoredContext } from '../binding/native-binding';
import type { TimelineKind } from '../read/records';

export const JS_TOKEN_PREFIX = 'hotspan-js:';
const TOKEN_RE = /^hotspan-js:(\d+):[0-9a-f]{24}$/;
/** A filled batch ships at once; a partial one this long after its first record. */
export const SHIP_DELAY_MS = 10;
/** Records posted to the owner and not merged yet, at most (16 full batches). */
export const MAX_IN_FLIGHT = 16 * 8192;
/** Batches the owner merges per event-loop turn outside flush()/settle()/close(). */
const MERGE_PER_TURN = 2;
/** close(): how long the owner waits for a batch a worker is posting right now. */
const CLOSE_WAIT_MS = 100;
/** collectAtExit(): how long the exiting owner waits for its joined threads' last batches. */
const EXIT_WAIT_MS = 2000;

// The shared state buffer: Int32 word 0 = records in flight | CLOSED_BIT;
// BigInt64 at byte 8 = spans lost (ended on a joined thread, never merged);
// Uint32 at byte 16 = the last local id taken by an async span (any track, any thread);
// Uint32 at byte 20 = the last timeline id taken (any thread); BigUint64 at
// byte 24 = the owner's id salt; Int32 at byte 32 = the track table's lock,
// Uint32 at byte 36 = its bytes used; BigUint64 at byte 40 = the owner's head
// sampler word (native/core/record/sampler.h); the track table from TRACKS_AT: per
// track u32 id, u32 name length, the name's UTF-8 padded to 4 bytes.
// Timeline and track ids are tracer-wide, as async span locals are, so a
// joined thread's span ids (and the W3C ids derived from them with the salt)
// are the ones the owner's outputs show after the merge.
const TRACKS_AT = 48;
const TRACKS_BYTES = 16384;
const STATE_BYTES = TRACKS_AT + TRACKS_BYTES;
const CLOSED_BIT = 0x40000000;

/** The owner's and its workers' view of one shared tracer's state buffer. */
export class SharedState {
  private readonly words: Int32Array;
  private readonly lostCount: BigInt64Array;
  private readonly trackLocal: Uint32Array;
  private readonly timelineIds: Uint32Array;
  private readonly trackLock: Int32Array;
  private readonly trackBytes: Uint8Array;
  /** The owner's salt of W3C ids (js-backend randomSalt): a joined thread derives the ids its owner's outputs show. */
  readonly salt: bigint;
  /** The owner's head sampler word: a joined thread's inject() writes the owner's decision. */
  readonly sampler: bigint;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.words = new Int32Array(buffer, 0, 2);
    this.lostCount = new BigInt64Array(buffer, 8, 1);
    this.trackLocal = new Uint32Array(buffer, 16, 1);
    this.timelineIds = new Uint32Array(buffer, 20, 1);
    this.salt = new BigUint64Array(buffer, 24, 1)[0];
    this.sampler = new BigUint64Array(buffer, 40, 1)[0];
    this.trackLock = new Int32Array(buffer, 32, 2);
    this.trackBytes = new Uint8Array(buffer, TRACKS_AT, TRACKS_BYTES);
  }

  /**
   * The local id of a new async span. One counter for every track and thread
   * of the shared tracer: a joined thread's track spans keep their ids when
   * merged, so the spans naming them as parent (and their W3C ids) stay valid.
   */
  nextTrackLocal(): number {
    return (Atomics.add(this.trackLocal, 0, 1) + 1) >>> 0;
  }

  /** The id of a new timeline of any thread of the shared tracer. */
  nextTimeline(): number {
    return (Atomics.add(this.timelineIds, 0, 1) + 1) >>> 0;
  }

  /**
   * Owner, at share(): the local ids its tracks took before, the timeline
   * ids it gave out, and its tracks by name.
   */
  adopt(trackLocals: number, timelines: number, tracks: Iterable<[string, number]>): void {
    Atomics.store(this.trackLocal, 0, trackLocals);
    Atomics.store(this.timelineIds, 0, timelines);
    for (const [name, id] of tracks) this.trackId(name, () => id);
  }

  /**
   * The tracer-wide timeline id of track `name`: the one any thread gave it
   * first, else `make()`'s, entered for all. Throws an Error naming the
   * track when the table is full.
   */
  trackId(name: string, make: () => number = () => this.nextTimeline()): number {
    const key = Buffer.from(name, 'utf8');
    const bytes = this.trackBytes;
    const lock = this.trackLock;
    // Short critical sections (a scan of a few names): a spin with a 1 ms nap.
    while (Atomics.compareExchange(lock, 0, 0, 1) !== 0) Atomics.wait(lock, 0, 1, 1);
    try {
      const used = Atomics.load(lock, 1);
      const view = new DataView(bytes.buffer, bytes.byteOffset, TRACKS_BYTES);
      for (let at = 0; at < used; ) {
        const len = view.getUint32(at + 4, true);
        if (len === key.length && key.equals(bytes.subarray(at + 8, at + 8 + len))) return view.getUint32(at, true);
        at += 8 + ((len + 3) & ~3);
      }
      const size = 8 + ((key.length + 3) & ~3);
      if (used + size > TRACKS_BYTES) {
        throw new Error(`hotspan: no room for track '${name}' in a shared js tracer (its track names take at most ${String(TRACKS_BYTES)} bytes)`);
      }
      const id = make();
      view.setUint32(used, id, true);
      view.setUint32(used + 4, key.length, true);
      bytes.set(key, used + 8);
      Atomics.store(lock, 1, used + size);
      return id;
    } finally {
      Atomics.store(lock, 0, 0);
      Atomics.notify(lock, 0, 1);
    }
  }

  static create(salt: bigint, sampler = 0n): SharedState {
    const buffer = new SharedArrayBuffer(STATE_BYTES);
    new BigUint64Array(buffer, 24, 1)[0] = salt;
    new BigUint64Array(buffer, 40, 1)[0] = sampler;
    return new SharedState(buffer);
  }

  closed(): boolean {
    return (Atomics.load(this.words, 0) & CLOSED_BIT) !== 0;
  }

  /** Owner: no more posts from now on (a worker's next reserve() sees it). */
  close(): void {
    Atomics.or(this.words, 0, CLOSED_BIT);
  }

  inFlight(): number {
    return Atomics.load(this.words, 0) & ~CLOSED_BIT;
  }

  /**
   * Worker: reserves room in flight for the `n` records of its unshipped
   * word (`words[0]`, see JoinLink) before posting them: on 'ok' they move
   * to `words[1]` (reserved, not posted yet), on 'closed' or 'full' they are
   * counted lost. Each move is one run of stores with no call in it, which
   * worker.terminate() cannot split (it stops a thread at a call or a loop
   * edge), so a terminated thread's records are in exactly one place.
   */
  handOver(n: number, words: Int32Array): 'ok' | 'closed' | 'full' {
    if (n === 0) return this.closed() ? 'closed' : 'ok';
    const lost = BigInt(n);
    const prev = Atomics.add(this.words, 0, n);
    if ((prev & CLOSED_BIT) === 0 && (prev & ~CLOSED_BIT) + n <= MAX_IN_FLIGHT) {
      words[1] = n;
      words[0] = 0;
      return 'ok';
    }
    Atomics.sub(this.words, 0, n);
    Atomics.add(this.lostCount, 0, lost);
    words[0] = 0;
    return (prev & CLOSED_BIT) !== 0 ? 'closed' : 'full';
  }

  /** Owner: `n` records merged. */
  merged(n: number): void {
    if (n !== 0) Atomics.sub(this.words, 0, n);
  }

  addLost(n: number): void {
    if (n > 0) Atomics.add(this.lostCount, 0, BigInt(n));
  }

  lost(): number {
    return Number(Atomics.load(this.lostCount, 0));
  }
}

export function isJsToken(token: string): boolean {
  return token.startsWith(JS_TOKEN_PREFIX);
}

/** A timeline of the joined thread, sent once (in the first batch after it appeared). */
export interface TimelineDesc {
  readonly id: number;
  /** Display name; for a track, its bare track name. */
  readonly name: string;
  readonly kind: TimelineKind;
  readonly serial: boolean;
}

/** Records of one joined thread since its previous batch (NativeSnapshot field layout, its own ids). */
export interface Batch {
  /** Names interned since the previous batch: ids nameBase, nameBase + 1, ... */
  readonly names: string[];
  readonly nameBase: number;
  readonly tls: TimelineDesc[];
  readonly count: number;
  readonly times: Float64Array;
  readonly fields: Uint32Array;
  /** [index in this batch, attributes JSON], ascending. */
  readonly attrs: Array<[number, string]>;
  /** [index in this batch, stored context], ascending. */
  readonly contexts: Array<[number, StoredContext]>;
  /** The wasm engine: the batch as the core encodes it (native/core/read/handover_batch.h); the fields above are empty. */
  readonly core?: Uint8Array;
  /** Back-pressure refused the batch's `count` records (the core counts them dropped). */
  readonly refused?: boolean;
}

interface BatchMessage extends Batch {
  readonly t: 'batch';
  /** Random per (thread, token). */
  readonly k: string;
  readonly tid: number;
  /** The joined thread's timeline name, and its tracer-wide id. */
  readonly name: string;
  readonly tl: number;
  /** The flush request this batch answers (0: none). */
  readonly ack: number;
  /** Word 0: the sender's records not shipped yet (read by the owner if it is terminated). */
  readonly unshipped: Int32Array;
  /** The thread is exiting: nothing follows. */
  readonly exit: boolean;
}

interface FlushMessage {
  readonly t: 'flush';
  readonly seq: number;
}

/** The owner closed: joined threads stop recording (as the addon's closed status does). */
interface ClosedMessage {
  readonly t: 'closed';
}

/** What share() stores as environment data under the token. */
interface ShareData {
  readonly v: 2;
  readonly state: SharedArrayBuffer;
  /** The owner's recording engine: a joined thread records on the same (absent: TypeScript). */
  readonly engine?: 'wasm';
}

// BroadcastChannel has ref()/unref() and receiveMessageOnPort accepts one
// (Node >= 15.4), but @types/node declares neither.
type Unrefable = { unref(): void };
const receiveOn = receiveMessageOnPort as unknown as (port: BroadcastChannel) => { message: unknown } | undefined;

function openChannel(name: string, onMessage: (data: unknown) => void): BroadcastChannel {
  const channel = new BroadcastChannel(name);
  channel.onmessage = (event) => onMessage((event as MessageEvent).data);
  // Unref after the listener is set: a channel must not keep a thread alive.
  (channel as unknown as Unrefable).unref();
  return channel;
}

// ---- owner side ----

/** A joined thread as the owner sees it. */
export interface JoinedThread {
  readonly key: string;
  readonly threadId: number;
  readonly name: string;
  /** The owner's timeline for the thread's spans. */
  readonly timeline: number;
  /** The thread's name id -> the owner's. */
  readonly names: number[];
  /** The thread's timeline id -> the owner's. */
  readonly timelines: Map<number, number>;
  /** The thread's group local id -> the owner's (parents end after children). */
  readonly groupLocals: Map<number, number>;
  /** The thread's records not shipped yet (word 0) and reserved but not posted (word 1): JoinLink. */
  unshipped: Int32Array;
  acked: number;
  exited: boolean;
}

/** What the owner's backend provides to the hub. */
export interface ShareTarget {
  /** The timeline of a joined thread, under the tracer-wide id it took at join. */
  addJoinedTimeline(name: string, id: number): number;
  merge(thread: JoinedThread, batch: Batch): void;
  markExited(timeline: number): void;
}

const hubs = new Set<ShareHub>();
const sleeper = new Int32Array(new SharedArrayBuffer(4));

// One 'worker' listener for every hub of this thread: a Worker this thread
// creates is watched, and its exit ends the wait for it.
function onWorker(worker: Worker): void {
  const id = worker.threadId;
  worker.once('exit', () => {
    for (const hub of hubs) hub.threadExited(id);
  });
}

export class ShareHub {
  readonly token: string;
  readonly state: SharedState;
  private readonly channel: BroadcastChannel;
  private readonly threads = new Map<string, JoinedThread>();
  private seq = 0;
  /** Batches received, not merged yet (at most MAX_IN_FLIGHT records). */
  private readonly queue: BatchMessage[] = [];
  private mergeScheduled = false;
  private readonly changed = new ChangeSignal();
  private closed = false;

  constructor(
    private readonly target: ShareTarget,
    salt: bigint,
    sampler = 0n,
    engine: 'ts' | 'wasm' = 'ts',
  ) {
    this.token = `${JS_TOKEN_PREFIX}${String(process.pid)}:${randomBytes(12).toString('hex')}`;
    this.state = SharedState.create(salt, sampler);
    const data: ShareData = engine === 'wasm' ? { v: 2, state: this.state.buffer, engine } : { v: 2, state: this.state.buffer };
    setEnvironmentData(this.token, data);
    this.channel = openChannel(this.token, (d) => {
      // Queued here, merged a few batches per event-loop turn (mergeSome):
      // credits return only when merged, so workers cannot keep this
      // thread's message loop busy and its timers late.
      if (this.closed) return;
      const m = d as Partial<BatchMessage> | null;
      // Flush requests (ours, seen by nobody here) and foreign traffic are skipped.
      if (m === null || typeof m !== 'object' || m.t !== 'batch' || typeof m.k !== 'string') return;
      this.queue.push(m as BatchMessage);
      if (!this.mergeScheduled) {
        this.mergeScheduled = true;
        setImmediate(this.mergeSome);
      }
    });
    if (hubs.size === 0) process.on('worker', onWorker);
    hubs.add(this);
  }

  /** Merges every batch already posted to this thread. */
  drain(): void {
    if (this.closed) return;
    for (let m = receiveOn(this.channel); m !== undefined; m = receiveOn(this.channel)) {
      const b = m.message as Partial<BatchMessage> | null;
      if (b !== null && typeof b === 'object' && b.t === 'batch' && typeof b.k === 'string') this.queue.push(b as BatchMessage);
    }
    this.mergeQueued(Infinity);
  }

  private readonly mergeSome = (): void => {
    this.mergeScheduled = false;
    if (this.closed) return;
    this.mergeQueued(MERGE_PER_TURN);
    if (this.queue.length > 0) {
      this.mergeScheduled = true;
      setImmediate(this.mergeSome);
    }
  };

  private mergeQueued(limit: number): void {
    let n = 0;
    while (n < limit && this.queue.length > 0) {
      const msg = this.queue.shift() as BatchMessage;
      n++;
      // Tracing must not turn into an uncaught exception in the user's thread.
      try {
        this.apply(msg);
      } catch (e) {
        this.state.addLost(msg.count);
        process.emitWarning(`hotspan: a batch from a joined thread was dropped: ${(e as Error).message}`, {
          type: 'HotspanWarning',
          code: 'HOTSPAN_JOIN_BATCH',
        });
      } finally {
        this.state.merged(msg.count);
      }
    }
  }

  private apply(msg: BatchMessage): void {
    let thread = this.threads.get(msg.k);
    if (thread === undefined) {
      thread = {
        key: msg.k,
        threadId: msg.tid,
        name: msg.name,
        timeline: this.target.addJoinedTimeline(msg.name, msg.tl),
        names: [],
        timelines: new Map(),
        groupLocals: new Map(),
        unshipped: msg.unshipped,
        acked: 0,
        exited: false,
      };
      this.threads.set(msg.k, thread);
    }
    if (thread.exited) {
      this.state.addLost(msg.count); // after its exit was seen: not merged, counted
    } else {
      this.target.merge(thread, msg);
      if (msg.ack > thread.acked) thread.acked = msg.ack;
      if (msg.exit) this.exited(thread);
    }
    this.wake();
  }

  private exited(thread: JoinedThread): void {
    thread.exited = true;
    this.target.markExited(thread.timeline);
  }

  /** A Worker created by this thread exited: whatever it posted is queued already. */
  threadExited(id: number): void {
    if (this.closed) return;
    this.drain();
    for (const thread of this.threads.values()) {
      if (thread.threadId === id && !thread.exited) {
        // No exit batch: terminated. Lost: what it had not shipped (word 0)
        // and a batch it had reserved room for but not posted (word 1; a
        // posted one was merged by the drain above), whose room is given back.
        const reserved = thread.unshipped[1] ?? 0;
        this.state.addLost(thread.unshipped[0] + reserved);
        this.state.merged(reserved);
        this.exited(thread);
      }
    }
    this.wake();
  }

  private wake(): void {
    this.changed.notify();
  }

  /**
   * Asks every joined thread that has not exited to ship what it recorded and
   * waits for each answer (or its exit) until `deadline` (performance.now()).
   * Returns the names of the threads that did not answer in time.
   */
  async settle(deadline: number): Promise<string[]> {
    this.drain();
    const live = [...this.threads.values()].filter((t) => !t.exited);
    if (live.length === 0 || this.closed) return [];
    const seq = ++this.seq;
    const request: FlushMessage = { t: 'flush', seq };
    this.channel.postMessage(request);
    for (;;) {
      this.drain();
      const late = live.filter((t) => !t.exited && t.acked < seq);
      if (late.length === 0 || this.closed) return [];
      const left = deadline - performance.now();
      if (left <= 0) return late.map((t) => t.name);
      await this.changed.next(left);
    }
  }

  /**
   * At the owner's exit, where nothing asynchronous runs any more: asks every
   * joined thread that has not exited to ship what it holds, and waits
   * (blocking, at most EXIT_WAIT_MS) for each answer. Then stops merging:
   * what the threads hold or have in flight after that is counted lost,
   * since the process ends without it. Workers keep running meanwhile.
   */
  collectAtExit(): void {
    if (this.closed) return;
    this.drain();
    const live = [...this.threads.values()].filter((t) => !t.exited);
    if (live.length > 0) {
      const seq = ++this.seq;
      const request: FlushMessage = { t: 'flush', seq };
      this.channel.postMessage(request);
      const deadline = performance.now() + EXIT_WAIT_MS;
      for (;;) {
        this.drain();
        if (live.every((t) => t.exited || t.acked >= seq) || performance.now() >= deadline) break;
        Atomics.wait(sleeper, 0, 0, 1);
      }
    }
    this.closed = true; // nothing is merged after this: what follows is counted below
    let left = this.state.inFlight();
    for (const t of live) if (!t.exited) left += t.unshipped[0];
    this.state.addLost(left);
  }

  /**
   * Takes what was posted, then stops: later joins fail, and whatever a
   * worker had not posted is counted lost (by it, or here).
   */
  close(): void {
    if (this.closed) return;
    this.state.close();
    // In flight is bounded (MAX_IN_FLIGHT); a post under way arrives within
    // microseconds, unless its worker was stopped between reserving and posting.
    const deadline = performance.now() + CLOSE_WAIT_MS;
    for (;;) {
      this.drain();
      if (this.state.inFlight() === 0 || performance.now() >= deadline) break;
      Atomics.wait(sleeper, 0, 0, 1);
    }
    this.state.addLost(this.state.inFlight());
    this.closed = true;
    const notice: ClosedMessage = { t: 'closed' };
    this.channel.postMessage(notice);
    this.channel.close();
    hubs.delete(this);
    if (hubs.size === 0) process.off('worker', onWorker);
    this.wake();
  }
}

// ---- joined side ----

/**
 * Checks a js token in this thread: the owner's state word, or an Error
 * naming the token (the native addon's texts where they apply).
 */
export function openShared(token: string): SharedState {
  const m = TOKEN_RE.exec(token);
  if (m === null) {
    throw new Error(`hotspan: malformed tracer token '${token}' (pass the string tracer.share() returned)`);
  }
  if (Number(m[1]) !== process.pid) {
    throw new Error(
      `hotspan: tracer token '${token}' was shared by process ${m[1]}; a token works only inside the process that shared it`,
    );
  }
  const data = getEnvironmentData(token) as Partial<ShareData> | undefined;
  if (data === undefined || data === null || !(data.state instanceof SharedArrayBuffer)) {
    throw new Error(
      `hotspan: unknown tracer token '${token}' (never shared in this process, the tracer is gone, or this ` +
        'worker was started before share() was called: with the js backend, call share() before creating the worker)',
    );
  }
  const state = new SharedState(data.state);
  if (state.closed()) throw new Error(`hotspan: tracer token '${token}' names a closed tracer`);
  return state;
}

/** The recording engine of the tracer that shared js token `token` (openShared checks the token). */
export function sharedEngine(token: string): 'ts' | 'wasm' {
  const data = getEnvironmentData(token) as Partial<ShareData> | undefined;
  return data !== undefined && data !== null && data.engine === 'wasm' ? 'wasm' : 'ts';
}

/** What a joined backend provides to its link. */
export interface JoinSource {
  /** Records, names and timelines since the previous batch; starts a new batch (its unshipped word stays: the link clears it). */
  takeBatch(): Batch;
  /** Ends the thread's open spans (and async spans) flagged abandoned. */
  abandonOpen(): void;
  /** The owner closed: recording calls throw from now on. */
  ownerClosed(): void;
}

const links = new Set<JoinLink>();

function onExit(): void {
  for (const link of links) link.exit();
}

/** The worker end of one (thread, token) join. */
export class JoinLink {
  private readonly key = randomBytes(8).toString('hex');
  private readonly channel: BroadcastChannel;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private done = false;

  constructor(
    readonly token: string,
    private readonly state: SharedState,
    private readonly threadName: string,
    /** The thread's timeline id (tracer-wide, SharedState.nextTimeline). */
    private readonly timeline: number,
    private readonly source: JoinSource,
    /**
     * Word 0: the source's records not shipped yet, kept current by it
     * (takeBatch leaves it to this link, which clears it when they are handed
     * over); word 1: records reserved in flight and not posted yet.
     */
    private readonly unshipped: Int32Array,
  ) {
    this.channel = openChannel(token, (d) => {
      const m = d as Partial<FlushMessage | ClosedMessage> | null;
      if (m === null || typeof m !== 'object') return;
      if (m.t === 'flush' && typeof m.seq === 'number') this.ship(m.seq);
      else if (m.t === 'closed') this.ship(); // counts what it holds lost, then stops recording
    });
    if (links.size === 0) process.on('exit', onExit);
    links.add(this);
    // The hello: announces the thread (and its timeline) before any record.
    this.ship();
  }

  /** The first record of a batch: ship it soon even if it never fills. */
  schedule(): void {
    if (this.timer !== undefined || this.done) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.ship();
    }, SHIP_DELAY_MS);
    this.timer.unref();
  }

  /** Posts the current batch (and answers flush request `ack`). */
  ship(ack = 0, exit = false): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    let batch = this.source.takeBatch();
    if (this.done) {
      this.unshipped[0] = 0;
      return;
    }
    const room = this.state.handOver(batch.count, this.unshipped);
    if (room === 'closed') {
      // Nobody listens any more: the records were counted lost, and recording
      // calls throw from now on.
      this.source.ownerClosed();
      return;
    }
    if (room === 'full') {
      // The owner is behind: the records were dropped (counted), the rest ships.
      const refused = batch.core === undefined ? {} : { refused: true };
      batch = { ...batch, count: 0, times: new Float64Array(0), fields: new Uint32Array(0), attrs: [], ...refused };
    }
    // A core batch always goes: it may carry names and losses with no record.
    if (batch.count === 0 && batch.names.length === 0 && batch.tls.length === 0 && ack === 0 && !exit && batch.core === undefined) return;
    const msg: BatchMessage = {
      t: 'batch',
      k: this.key,
      tid: threadId,
      name: this.threadName,
      tl: this.timeline,
      ack,
      exit,
      unshipped: this.unshipped,
      ...batch,
    };
    // Posted (or refused by a throw, then still reserved for the owner to count).
    this.channel.postMessage(msg);
    this.unshipped[1] = 0;
  }

  /** Process 'exit' of this thread: abandon what is open, ship the last batch. */
  exit(): void {
    if (this.done) return;
    if (!this.state.closed()) this.source.abandonOpen();
    this.ship(0, true);
    this.done = true;
    links.delete(this);
    if (links.size === 0) process.off('exit', onExit);
    this.channel.close();
  }
}
