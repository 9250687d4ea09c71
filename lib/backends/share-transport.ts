// The transport between a js-backend tracer and the workers joined to it
// (tracer.share() on one thread, Tracer.join(token) in a worker_threads
// worker): the token, the state both sides share, the messages and the
// channel. The owner's end is ./share-hub, a worker's ./join-link; what the
// batches hold is the core's business (native/core/read/handover_batch.h).
//
// - The token is "hotspan-js:<pid>:<24 hex>". share() registers it as
//   worker_threads environment data holding a SharedArrayBuffer (the state
//   below). Environment data is copied into every Worker created after that
//   (and into their workers), so join() can check a token synchronously, and
//   the shared word tells a worker the owner closed. Limit: a worker started
//   before share() cannot join (clear error). The entry stays after close()
//   (so a late join says "closed tracer"): a few bytes per shared tracer,
//   copied into each new worker.
// - A joined thread records in a core instance of its own and ships what
//   the core encodes ("batches") to the owner over a BroadcastChannel named
//   by the token (./join-link says when). The owner's core imports them
//   (./share-hub, ../backends/wasm-join).
// - Back-pressure: the state also holds the records in flight (posted, not
//   merged yet) and a lost-span counter. A worker that would push the
//   records in flight past MAX_IN_FLIGHT refuses its batch's records and
//   counts them lost (its names and losses still ship), so neither the
//   owner's message queue nor its memory grows without bound while workers
//   outrun it.
// - A worker stopped by worker.terminate() runs no JS: what it had not
//   shipped yet is lost. The worker keeps that number in a shared word, and
//   a batch it reserved room for and has not posted in a second one; it
//   moves records between them with no call in between (SharedState.handOver),
//   which terminate() cannot split, so the owner counts each record once.

import {
  BroadcastChannel,
  getEnvironmentData,
  receiveMessageOnPort,
} from 'node:worker_threads';


export const JS_TOKEN_PREFIX = 'hotspan-js:';
const TOKEN_RE = /^hotspan-js:(\d+):[0-9a-f]{24}$/;
/** Records posted to the owner and not merged yet, at most (16 full batches). */
export const MAX_IN_FLIGHT = 16 * 8192;

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
  /** The owner's salt of W3C ids (wasm-backend randomSalt): a joined thread derives the ids its owner's outputs show. */
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

/** What one joined thread recorded since its previous batch. */
export interface Batch {
  /** Its records: what it reserves in flight (read from the encoding's header). */
  readonly count: number;
  /** The batch as the core encodes it (native/core/read/handover_batch.h): records, names, losses. */
  /** Where back-pressure refused the records, they were counted lost (SharedState.handOver) and cut out (JoinSource.refuse): `core` then holds its names and losses only. */
  readonly core: Uint8Array;
}

export interface BatchMessage extends Batch {
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

export interface FlushMessage {
  readonly t: 'flush';
  readonly seq: number;
}

/** The owner closed: joined threads stop recording (as the addon's closed status does). */
export interface ClosedMessage {
  readonly t: 'closed';
}

/** What share() stores as environment data under the token. */
export interface ShareData {
  readonly v: 2;
  readonly state: SharedArrayBuffer;
}

// BroadcastChannel has ref()/unref() and receiveMessageOnPort accepts one
// (Node >= 15.4), but @types/node declares neither.
type Unrefable = { unref(): void };
export const receiveOn = receiveMessageOnPort as unknown as (port: BroadcastChannel) => { message: unknown } | undefined;

export function openChannel(name: string, onMessage: (data: unknown) => void): BroadcastChannel {
  const channel = new BroadcastChannel(name);
  channel.onmessage = (event) => onMessage((event as MessageEvent).data);
  // Unref after the listener is set: a channel must not keep a thread alive.
  (channel as unknown as Unrefable).unref();
  return channel;
}

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
