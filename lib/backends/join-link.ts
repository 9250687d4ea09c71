// A worker's end of one (thread, token) join to a js-backend tracer
// (./share-transport): it ships the joined backend's batches to the owner
// when a batch fills, soon after the first record of a batch (an unref'd
// timer), on flush()/close(), when the owner asks (settle), and a last batch
// from process 'exit' (normal exit, process.exit(), an uncaught exception),
// with its open spans ended abandoned.

import { randomBytes } from 'node:crypto';
import { threadId, type BroadcastChannel } from 'node:worker_threads';

import { openChannel, type Batch, type BatchMessage, type ClosedMessage, type FlushMessage, type SharedState } from './share-transport';

/** A filled batch ships at once; a partial one this long after its first record. */
export const SHIP_DELAY_MS = 10;

/** What a joined backend provides to its link. */
export interface JoinSource {
  /** What was recorded since the previous batch; starts a new batch (its unshipped word stays: the link clears it). */
  takeBatch(): Batch;
  /** `batch` as back-pressure refused it: its names and losses, without its records (counted lost). */
  refuse(batch: Batch): Batch;
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
    // The owner is behind: the records were counted lost; the batch still
    // goes for the names and losses it carries, without the records, so a
    // flood posts a few bytes per batch.
    if (room === 'full') batch = this.source.refuse(batch);
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
