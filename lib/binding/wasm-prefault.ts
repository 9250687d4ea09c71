// The wasm recorder's chunk reserve: the native core's reserve thread
// (native/core/record/chunk_reserve.h) touches fresh chunks before a writer
// takes them, so the writer takes no first-touch page fault (one per 4 KiB,
// 12-18 µs each on a paravirtualized guest). The wasm core has no thread, so
// here a worker does it: the module's memory is shared (scripts/build-wasm.sh),
// its sbrk tells the host each new end of the heap (native/wasm/sbrk.cc,
// the import hotspan.heap_end), and the worker touches one word per 4 KiB
// page up to `aheadBytes` above it, as a no-op atomic add (Atomics.add(x, 0)
// can lose no concurrent store). The fault is moved, not removed: the process
// spends the same CPU, on the worker.
//
// Started only once the heap passes `startBytes` (a short recording keeps its
// faults and costs no thread); the worker never keeps the process alive,
// stops with stop(), and touches nothing above heap end + aheadBytes, so the
// memory it makes resident stays within that of the recording.

import { Worker } from 'node:worker_threads';

/** When the worker starts, and how far ahead of the heap's end it touches. */
export interface PrefaultOptions {
  /** The heap end (bytes) past which the worker starts; below it the recorder faults its own pages. */
  startBytes: number;
  /** Bytes above the heap's end kept touched. */
  aheadBytes: number;
}

/** 2 MiB before a worker is worth its start; 1 MiB (about 37,000 spans) kept ahead. */
export const DEFAULT_PREFAULT: PrefaultOptions = { startBytes: 2 << 20, aheadBytes: 1 << 20 };

const PAGE = 4096;
/** settle() gives up when the worker touched no page for this long. */
const SETTLE_BOUND_MS = 30_000;
// The control words (Int32): the page the worker touches up to (exclusive),
// the page it has touched up to, the stop flag, and a sequence number bumped
// by every change (the word the worker sleeps on).
const TARGET = 0;
const DONE = 1;
const STOP = 2;
const SEQ = 3;

// The worker's whole program: touch pages [DONE, min(TARGET, memory end)),
// then sleep until SEQ moves; when it rests it wakes whoever waits on DONE.
const WORKER = `
const { workerData: { memory, ctl } } = require('node:worker_threads');
let words = new Int32Array(memory.buffer);
let page = Atomics.load(ctl, ${String(DONE)});
for (;;) {
  const seq = Atomics.load(ctl, ${String(SEQ)});
  if (Atomics.load(ctl, ${String(STOP)}) !== 0) break;
  const target = Atomics.load(ctl, ${String(TARGET)});
  if (page < target && page * ${String(PAGE / 4)} >= words.length) words = new Int32Array(memory.buffer);
  const end = Math.min(target, words.length / ${String(PAGE / 4)});
  while (page < end) {
    Atomics.add(words, page * ${String(PAGE / 4)}, 0);
    Atomics.store(ctl, ${String(DONE)}, ++page);
  }
  Atomics.notify(ctl, ${String(DONE)});
  Atomics.wait(ctl, ${String(SEQ)}, seq);
}
Atomics.notify(ctl, ${String(DONE)});
`;

export class Prefaulter {
  private readonly ctl = new Int32Array(new SharedArrayBuffer(16));
  private worker: Worker | undefined;
  private stopped = false;

  /** `memory`: the instance's shared WebAssembly.Memory. */
  constructor(
    private readonly memory: { buffer: ArrayBufferLike },
    private readonly options: PrefaultOptions,
  ) {}

  /** The module's heap now ends at `brk` (bytes): keep the pages above it touched. */
  heapEnd(brk: number): void {
    if (this.stopped || brk < this.options.startBytes) return;
    const ctl = this.ctl;
    Atomics.store(ctl, TARGET, Math.ceil((brk + this.options.aheadBytes) / PAGE));
    if (this.worker === undefined) {
      Atomics.store(ctl, DONE, Math.floor(brk / PAGE));
      this.start();
    } else {
      Atomics.add(ctl, SEQ, 1);
      Atomics.notify(ctl, SEQ);
    }
  }

  /** Whether a worker runs. */
  running(): boolean {
    return this.worker !== undefined && !this.stopped;
  }

  /**
   * Blocks until the worker has touched every page it was asked to that the
   * memory has now (at once when no worker runs).
   */
  settle(): void {
    if (!this.running()) return;
    const want = Math.min(Atomics.load(this.ctl, TARGET), this.memory.buffer.byteLength / PAGE);
    for (;;) {
      const done = Atomics.load(this.ctl, DONE);
      if (done >= want || this.stopped) return;
      // The bound only keeps a dead worker from blocking forever.
      if (Atomics.wait(this.ctl, DONE, done, SETTLE_BOUND_MS) === 'timed-out' && Atomics.load(this.ctl, DONE) === done) {
        throw new Error(`hotspan: the prefault worker touched no page in ${String(SETTLE_BOUND_MS)} ms (at page ${String(done)} of ${String(want)})`);
      }
    }
  }

  /** Stops the worker (its thread ends after the page it is on); heapEnd() does nothing after. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    Atomics.store(this.ctl, STOP, 1);
    Atomics.add(this.ctl, SEQ, 1);
    Atomics.notify(this.ctl, SEQ);
    this.worker = undefined;
  }

  private start(): void {
    let worker: Worker;
    try {
      worker = new Worker(WORKER, { eval: true, workerData: { memory: this.memory, ctl: this.ctl } });
    } catch {
      this.stopped = true; // no thread to be had: the recorder faults its own pages, as below startBytes
      return;
    }
    worker.unref();
    // A failed worker only means the recorder faults its own pages again.
    worker.on('error', () => this.stop());
    this.worker = worker;
  }
}
