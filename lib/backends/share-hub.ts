// The owner's end of the js backend's joined workers (./share-transport):
// share() opens a hub, which takes each joined thread's batches, hands them
// to its target (../backends/wasm-join: the owner's core imports them), and
// counts what never arrives.
//
// - Batches are queued as they arrive and merged a few per event-loop turn;
//   flush() drains the channel synchronously (receiveMessageOnPort), so
//   whatever a worker posted before it is seen, up to DRAIN_LIMIT messages a
//   call (workers that flood an owner faster than it takes their batches
//   would otherwise hold flush() and close() for as long as they run).
// - The owner's close() marks the state closed (one atomic OR, so no worker
//   can post uncounted after it), merges what is in flight (waiting at most
//   CLOSE_WAIT_MS for a post under way), and counts the rest lost. A worker
//   counts its unshipped records lost when it learns of the close (its next
//   ship, the 'closed' message, its exit).
// - Workers created by the owner's thread are watched ('worker' process
//   event): their exit marks the timeline exited and ends settle()'s wait,
//   and what a terminated one had not shipped is counted lost.

import { randomBytes } from 'node:crypto';
import { setEnvironmentData, type BroadcastChannel, type Worker } from 'node:worker_threads';

import { ChangeSignal } from '../common/change-signal';
import {
  JS_TOKEN_PREFIX,
  openChannel,
  receiveOn,
  SharedState,
  type Batch,
  type BatchMessage,
  type ClosedMessage,
  type FlushMessage,
  type ShareData,
} from './share-transport';

/** Batches the owner merges per event-loop turn outside flush()/settle()/close(). */
const MERGE_PER_TURN = 2;
/** close(): how long the owner waits for a batch a worker is posting right now. */
const CLOSE_WAIT_MS = 100;
/** drain(): the messages one call takes (a batch in flight is at most MAX_IN_FLIGHT / 8192 = 16 of them). */
const DRAIN_LIMIT = 256;
/** collectAtExit(): how long the exiting owner waits for its joined threads' last batches. */
const EXIT_WAIT_MS = 2000;

/** A joined thread as the owner sees it. */
export interface JoinedThread {
  readonly key: string;
  readonly threadId: number;
  readonly name: string;
  /** The owner's timeline for the thread's spans. */
  readonly timeline: number;
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
  ) {
    this.token = `${JS_TOKEN_PREFIX}${String(process.pid)}:${randomBytes(12).toString('hex')}`;
    this.state = SharedState.create(salt, sampler);
    const data: ShareData = { v: 2, state: this.state.buffer };
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
  /**
   * Takes what the workers posted and merges it: at most `limit` messages.
   * Before close() workers post on while this runs (a refused batch is
   * posted too, for its names and losses), so an unbounded take could run
   * for as long as they flood; after close() they post at most one more
   * each, and close() takes everything.
   */
  drain(limit = DRAIN_LIMIT): void {
    if (this.closed) return;
    for (let taken = 0; taken < limit; taken++) {
      const m = receiveOn(this.channel);
      if (m === undefined) break;
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
      this.drain(Infinity);
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
