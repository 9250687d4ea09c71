// The owner's side of workers joined to a tracer on the wasm engine
// (the js backend): share() opens the js backend's hub (./share-hub:
// the token, the channel, settle(), back-pressure), and each joined thread's
// batches, encoded by the core in the worker's own instance
// (native/core/read/handover_batch.h), are imported by this instance's core
// as that thread's timeline (native/core/record/imported_thread.h). Every
// recording rule stays in the core: the owner's budget and policy apply to
// the imported records, and the timeline counts what the worker's instance
// dropped under its own budget. What back-pressure refused, what a closed
// owner never took and what a terminated worker never sent are counted once,
// in the hub's lostSpans, never also dropped.

import type { WasmRecorder } from '../binding/wasm-recorder';
import { trackKindError } from '../common/errors';
import { STATUS_CLOSED, STATUS_OK } from '../common/flags';
import type { Batch } from './share-transport';
import { ShareHub, type JoinedThread, type ShareTarget } from './share-hub';

/** A user's track's timeline name: this prefix, then its name (native/core/record/registry.h). */
const TRACK_PREFIX = 'track: ';
/**
 * Joined threads' async span local ids start above this: the owner's core
 * numbers its own per track from 1, and a track's span ids must be one set.
 */
const JOINED_LOCALS = 2 ** 31;

export class WasmShare implements ShareTarget {
  readonly hub: ShareHub;
  /** Tracks by name: their tracer-wide ids. */
  private readonly tracks = new Map<string, number>();

  constructor(
    private readonly rec: WasmRecorder,
    salt: bigint,
    /** The head sampler word: a joined thread's roots are decided as the owner's are. */
    sampler: bigint,
  ) {
    this.hub = new ShareHub(this, salt, sampler);
    // Joined threads take their timeline ids from the core's joined range, so
    // their span ids (the ones their own instances compute) never meet this
    // tracer's own timelines'.
    // Tracks have one id by name (this tracer's tracks so far keep theirs),
    // and joined threads number their async spans from JOINED_LOCALS up,
    // apart from this tracer's own, which its core numbers per track from 1.
    const first = rec.firstJoinedTimeline();
    const tracks: Array<[string, number]> = [];
    for (const tl of rec.timelines()) {
      if (tl.id < first && tl.name.startsWith(TRACK_PREFIX)) tracks.push([tl.name.slice(TRACK_PREFIX.length), tl.id]);
    }
    this.hub.state.adopt(JOINED_LOCALS, first - 1, tracks);
  }

  /** Track `name`, under the id every thread of the shared tracer gives it (0: a track of the other kind). */
  track(name: string, serial: boolean): number {
    let id = this.tracks.get(name);
    if (id === undefined) {
      id = this.hub.state.trackId(name, () => {
        const own = this.rec.track(name, serial);
        if (own === 0) throw trackKindError(name, !serial);
        return own;
      });
      this.tracks.set(name, id);
    }
    return this.rec.trackAt(name, serial, id);
  }

  /**
   * The imported thread's handle in the core, under the tracer-wide id `id`
   * its own instance numbers its spans with (0: the tracer closed, or the
   * core refused the id; its batches are then refused and counted).
   */
  addJoinedTimeline(name: string, id: number): number {
    return this.rec.importThread(name, id);
  }

  merge(thread: JoinedThread, batch: Batch): void {
    const s = this.rec.importBatch(thread.timeline, batch.core);
    if (s !== STATUS_OK && s !== STATUS_CLOSED) throw new Error(`hotspan: the core refused a batch from joined thread '${thread.name}' (status ${String(s)})`);
  }

  markExited(timeline: number): void {
    this.rec.importExited(timeline);
  }
}
