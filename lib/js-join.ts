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
// - A worker stopped by worker.terminate() runs no JS: what it had not
//   shipped yet (at most one batch, or ~SHIP_DELAY_MS of spans) is lost.
// - The owner merges batches into its own store: a new timeline per joined
//   thread (span id = owner timeline << 32 | the worker's local id, so parents
//   stay valid), names mapped by string, tracks by name, worker groups onto
//   the owner's group timeline. flush() drains the channel synchronously
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

import { ChangeSignal } from './change-signal';
import type { TimelineKind } from './records';

export const JS_TOKEN_PREFIX = 'hotspan-js:';
const TOKEN_RE = /^hotspan-js:(\d+):[0-9a-f]{24}$/;
/** A filled batch ships at once; a partial one this long after its first record. */
export const SHIP_DELAY_MS = 10;

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
}

interface BatchMessage extends Batch {
  readonly t: 'batch';
  /** Random per (thread, token). */
  readonly k: string;
  readonly tid: number;
  /** The joined thread's timeline name. */
  readonly name: string;
  /** The flush request this batch answers (0: none). */
  readonly ack: number;
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
  readonly v: 1;
  readonly state: SharedArrayBuffer;
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
  acked: number;
  exited: boolean;
}

/** What the owner's backend provides to the hub. */
export interface ShareTarget {
  addJoinedTimeline(name: string): number;
  merge(thread: JoinedThread, batch: Batch): void;
  markExited(timeline: number): void;
}

const hubs = new Set<ShareHub>();

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
  private readonly state: Int32Array;
  private readonly channel: BroadcastChannel;
  private readonly threads = new Map<string, JoinedThread>();
  private seq = 0;
  private readonly changed = new ChangeSignal();
  private closed = false;

  constructor(private readonly target: ShareTarget) {
    this.token = `${JS_TOKEN_PREFIX}${String(process.pid)}:${randomBytes(12).toString('hex')}`;
    const state = new SharedArrayBuffer(4);
    this.state = new Int32Array(state);
    const data: ShareData = { v: 1, state };
    setEnvironmentData(this.token, data);
    this.channel = openChannel(this.token, (d) => {
      // Tracing must not turn into an uncaught exception in the user's thread.
      try {
        this.receive(d);
      } catch (e) {
        process.emitWarning(`hotspan: a batch from a joined thread was dropped: ${(e as Error).message}`, {
          type: 'HotspanWarning',
          code: 'HOTSPAN_JOIN_BATCH',
        });
      }
    });
    if (hubs.size === 0) process.on('worker', onWorker);
    hubs.add(this);
  }

  /** Merges every batch already posted to this thread. */
  drain(): void {
    if (this.closed) return;
    for (let m = receiveOn(this.channel); m !== undefined; m = receiveOn(this.channel)) this.receive(m.message);
  }

  private receive(data: unknown): void {
    if (this.closed) return;
    const m = data as Partial<BatchMessage> | null;
    // Flush requests (ours, seen by nobody here) and foreign traffic are skipped.
    if (m === null || typeof m !== 'object' || m.t !== 'batch' || typeof m.k !== 'string') return;
    const msg = m as BatchMessage;
    let thread = this.threads.get(msg.k);
    if (thread === undefined) {
      thread = {
        key: msg.k,
        threadId: msg.tid,
        name: msg.name,
        timeline: this.target.addJoinedTimeline(msg.name),
        names: [],
        timelines: new Map(),
        groupLocals: new Map(),
        acked: 0,
        exited: false,
      };
      this.threads.set(msg.k, thread);
    }
    if (!thread.exited) {
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
      if (thread.threadId === id && !thread.exited) this.exited(thread);
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

  /** Takes what was posted, then stops: later batches are dropped, later joins fail. */
  close(): void {
    if (this.closed) return;
    this.drain();
    this.closed = true;
    Atomics.store(this.state, 0, 1);
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
export function openShared(token: string): Int32Array {
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
  const state = new Int32Array(data.state);
  if (Atomics.load(state, 0) !== 0) throw new Error(`hotspan: tracer token '${token}' names a closed tracer`);
  return state;
}

export function ownerClosed(state: Int32Array): boolean {
  return Atomics.load(state, 0) !== 0;
}

/** What a joined backend provides to its link. */
export interface JoinSource {
  /** Records, names and timelines since the previous batch; starts a new batch. */
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
    private readonly state: Int32Array,
    private readonly threadName: string,
    private readonly source: JoinSource,
  ) {
    this.channel = openChannel(token, (d) => {
      const m = d as Partial<FlushMessage | ClosedMessage> | null;
      if (m === null || typeof m !== 'object') return;
      if (m.t === 'flush' && typeof m.seq === 'number') this.ship(m.seq);
      else if (m.t === 'closed') this.source.ownerClosed();
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
    const batch = this.source.takeBatch();
    if (this.done) return;
    if (ownerClosed(this.state)) {
      // Nobody listens any more: the records are dropped, as the core drops
      // records of a closed tracer, and recording calls throw from now on.
      this.source.ownerClosed();
      return;
    }
    if (batch.count === 0 && batch.names.length === 0 && batch.tls.length === 0 && ack === 0 && !exit) return;
    const msg: BatchMessage = { t: 'batch', k: this.key, tid: threadId, name: this.threadName, ack, exit, ...batch };
    this.channel.postMessage(msg);
  }

  /** Process 'exit' of this thread: abandon what is open, ship the last batch. */
  exit(): void {
    if (this.done) return;
    if (!ownerClosed(this.state)) this.source.abandonOpen();
    this.ship(0, true);
    this.done = true;
    links.delete(this);
    if (links.size === 0) process.off('exit', onExit);
    this.channel.close();
  }
}
